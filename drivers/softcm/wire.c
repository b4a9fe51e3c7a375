// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding and decoding CM MADs.  Each message is a table binding wire
 * fields (include/softcm/wire.h) to members of struct softcm_cm_msg, so
 * that the layouts read like IBTA's tables and every field is converted
 * by the same two functions.  Byte-array fields (GIDs, ARI, additional
 * info) and the private data are copied whole.
 */

#include <linux/kernel.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <kunit/visibility.h>
#include <softcm/wire.h>

/* The bytes a field spans, read as one big-endian number. */
u64 softcm_wire_get(const u8 *mad, const struct softcm_field *f)
{
	unsigned int nbytes = DIV_ROUND_UP(f->bit + f->width, 8), i;
	u64 acc = 0;

	for (i = 0; i < nbytes; i++)
		acc = (acc << 8) | mad[f->off + i];
	acc >>= nbytes * 8 - f->bit - f->width;
	return f->width == 64 ? acc : acc & (BIT_ULL(f->width) - 1);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_wire_get);

void softcm_wire_set(u8 *mad, const struct softcm_field *f, u64 val)
{
	unsigned int nbytes = DIV_ROUND_UP(f->bit + f->width, 8), i;
	unsigned int shift = nbytes * 8 - f->bit - f->width;
	u64 mask = f->width == 64 ? ~0ULL : BIT_ULL(f->width) - 1;
	u64 acc = 0;

	for (i = 0; i < nbytes; i++)
		acc = (acc << 8) | mad[f->off + i];
	acc &= ~(mask << shift);
	acc |= (val & mask) << shift;
	for (i = nbytes; i-- > 0; acc >>= 8)
		mad[f->off + i] = acc & 0xff;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_wire_set);

/*
 * A field and the member of struct softcm_cm_msg it lives in.  Members
 * are sized by their field's width: u8 up to 8 bits, u16 up to 16, u32 up
 * to 32, else u64 (wire.h follows this rule).
 */
struct binding {
	struct softcm_field f;
	u16 member;	/* offset in struct softcm_cm_msg */
};

struct raw {
	u16 off;
	u16 member;
	u8 len;
};

struct layout {
	const struct binding *fields;
	unsigned int nfields;
	const struct raw *raws;
	unsigned int nraws;
	u16 pdata_off;
};

#define F(o, b, w, m) {							\
	.f = { .off = (o), .bit = (b), .width = (w) },			\
	.member = offsetof(struct softcm_cm_msg, m),			\
}

#define RAW(o, m, l) {							\
	.off = (o), .member = offsetof(struct softcm_cm_msg, m), .len = (l), \
}

static const struct binding hdr_fields[] = {
	F(0, 0, 8, hdr.base_version),
	F(1, 0, 8, hdr.mgmt_class),
	F(2, 0, 8, hdr.class_version),
	F(3, 0, 8, hdr.method),
	F(4, 0, 16, hdr.status),
	F(SOFTCM_MAD_TID_OFF, 0, 64, hdr.tid),
	F(SOFTCM_MAD_ATTR_ID_OFF, 0, 16, hdr.attr_id),
	F(20, 0, 32, hdr.attr_mod),
};

static const struct binding req_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(29, 0, 24, vendor_id),
	F(32, 0, 64, service_id),
	F(40, 0, 64, ca_guid),
	F(52, 0, 32, qkey),
	F(56, 0, 24, qpn),
	F(59, 0, 8, responder_resources),
	F(63, 0, 8, initiator_depth),
	F(67, 0, 5, remote_cm_timeout),
	F(67, 5, 2, transport_type),
	F(67, 7, 1, flow_control),
	F(68, 0, 24, starting_psn),
	F(71, 0, 5, local_cm_timeout),
	F(71, 5, 3, retry_count),
	F(72, 0, 16, pkey),
	F(74, 0, 4, path_mtu),
	F(74, 5, 3, rnr_retry_count),
	F(75, 0, 4, max_cm_retries),
	F(75, 4, 1, srq),
	F(76, 0, 16, local_lid),
	F(78, 0, 16, remote_lid),
	F(112, 0, 20, flow_label),
	F(115, 2, 6, packet_rate),
	F(116, 0, 8, traffic_class),
	F(117, 0, 8, hop_limit),
	F(118, 0, 4, sl),
	F(118, 4, 1, subnet_local),
	F(119, 0, 5, local_ack_timeout),
};

static const struct raw req_raws[] = {
	RAW(80, local_gid, 16),
	RAW(96, remote_gid, 16),
};

static const struct binding mra_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 32, remote_comm_id),
	F(32, 0, 2, msg_type),
	F(33, 0, 5, service_timeout),
};

static const struct binding rej_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 32, remote_comm_id),
	F(32, 0, 2, msg_type),
	F(33, 0, 7, info_len),
	F(34, 0, 16, reason),
};

static const struct raw rej_raws[] = {
	RAW(36, info, SOFTCM_REJ_ARI),
};

/* REP's vendor id is spread over three bytes: see encode_vendor_id(). */
static const struct binding rep_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 32, remote_comm_id),
	F(32, 0, 32, qkey),
	F(36, 0, 24, qpn),
	F(44, 0, 24, starting_psn),
	F(48, 0, 8, responder_resources),
	F(49, 0, 8, initiator_depth),
	F(50, 0, 5, target_ack_delay),
	F(50, 5, 2, failover_accepted),
	F(50, 7, 1, flow_control),
	F(51, 0, 3, rnr_retry_count),
	F(51, 3, 1, srq),
	F(52, 0, 64, ca_guid),
};

static const struct binding comm_id_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 32, remote_comm_id),
};

static const struct binding dreq_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 32, remote_comm_id),
	F(32, 0, 24, qpn),
};

static const struct binding sidr_req_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 16, pkey),
	F(32, 0, 64, service_id),
};

static const struct binding sidr_rep_fields[] = {
	F(24, 0, 32, local_comm_id),
	F(28, 0, 8, status),
	F(29, 0, 8, info_len),
	F(32, 0, 24, qpn),
	F(36, 0, 64, service_id),
	F(44, 0, 32, qkey),
};

static const struct raw sidr_rep_raws[] = {
	RAW(48, info, SOFTCM_SIDR_REP_INFO),
};

static const struct layout layouts[] = {
	[SOFTCM_CM_REQ - SOFTCM_CM_REQ] = {
		req_fields, ARRAY_SIZE(req_fields), req_raws, ARRAY_SIZE(req_raws), 164
	},
	[SOFTCM_CM_MRA - SOFTCM_CM_REQ] = { mra_fields, ARRAY_SIZE(mra_fields), NULL, 0, 34 },
	[SOFTCM_CM_REJ - SOFTCM_CM_REQ] = {
		rej_fields, ARRAY_SIZE(rej_fields), rej_raws, ARRAY_SIZE(rej_raws), 108
	},
	[SOFTCM_CM_REP - SOFTCM_CM_REQ] = { rep_fields, ARRAY_SIZE(rep_fields), NULL, 0, 60 },
	[SOFTCM_CM_RTU - SOFTCM_CM_REQ] = {
		comm_id_fields, ARRAY_SIZE(comm_id_fields), NULL, 0, 32
	},
	[SOFTCM_CM_DREQ - SOFTCM_CM_REQ] = { dreq_fields, ARRAY_SIZE(dreq_fields), NULL, 0, 36 },
	[SOFTCM_CM_DREP - SOFTCM_CM_REQ] = {
		comm_id_fields, ARRAY_SIZE(comm_id_fields), NULL, 0, 32
	},
	[SOFTCM_CM_SIDR_REQ - SOFTCM_CM_REQ] = {
		sidr_req_fields, ARRAY_SIZE(sidr_req_fields), NULL, 0, 40
	},
	[SOFTCM_CM_SIDR_REP - SOFTCM_CM_REQ] = {
		sidr_rep_fields, ARRAY_SIZE(sidr_rep_fields),
		sidr_rep_raws, ARRAY_SIZE(sidr_rep_raws), 120
	},
};

static const struct layout *layout_of(u8 attr)
{
	if (attr < SOFTCM_CM_REQ || attr > SOFTCM_CM_SIDR_REP)
		return NULL;
	return &layouts[attr - SOFTCM_CM_REQ];
}

/* Bytes of private data a message carries: the rest of the MAD. */
unsigned int softcm_wire_pdata_size(u8 attr)
{
	const struct layout *l = layout_of(attr);

	return l ? SOFTCM_MAD_SIZE - l->pdata_off : 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_wire_pdata_size);

static u64 member_get(const struct softcm_cm_msg *msg, const struct binding *b)
{
	const void *p = (const u8 *)msg + b->member;

	if (b->f.width <= 8)
		return *(const u8 *)p;
	if (b->f.width <= 16)
		return *(const u16 *)p;
	if (b->f.width <= 32)
		return *(const u32 *)p;
	return *(const u64 *)p;
}

static void member_set(struct softcm_cm_msg *msg, const struct binding *b, u64 val)
{
	void *p = (u8 *)msg + b->member;

	if (b->f.width <= 8)
		*(u8 *)p = val;
	else if (b->f.width <= 16)
		*(u16 *)p = val;
	else if (b->f.width <= 32)
		*(u32 *)p = val;
	else
		*(u64 *)p = val;
}

static void put_fields(u8 *mad, const struct softcm_cm_msg *msg,
		       const struct binding *b, unsigned int n)
{
	while (n--) {
		softcm_wire_set(mad, &b->f, member_get(msg, b));
		b++;
	}
}

static void get_fields(const u8 *mad, struct softcm_cm_msg *msg,
		       const struct binding *b, unsigned int n)
{
	while (n--) {
		member_set(msg, b, softcm_wire_get(mad, &b->f));
		b++;
	}
}

/*
 * Vendor ids are not in one field: REP spreads its 24 bits over bytes 39,
 * 43 and 47; SIDR_REP has the middle byte in a 16-bit field at 30 (as
 * Linux writes it) and the low byte at 35.
 */
static const struct softcm_field rep_vid[3] = {
	{ 39, 0, 8 }, { 43, 0, 8 }, { 47, 0, 8 },
};

static const struct softcm_field sidr_vid_hi = { 30, 0, 16 };
static const struct softcm_field sidr_vid_lo = { 35, 0, 8 };

static void encode_vendor_id(u8 *mad, const struct softcm_cm_msg *msg)
{
	if (msg->attr == SOFTCM_CM_REP) {
		softcm_wire_set(mad, &rep_vid[0], msg->vendor_id >> 16);
		softcm_wire_set(mad, &rep_vid[1], msg->vendor_id >> 8);
		softcm_wire_set(mad, &rep_vid[2], msg->vendor_id);
	} else if (msg->attr == SOFTCM_CM_SIDR_REP) {
		softcm_wire_set(mad, &sidr_vid_hi, (msg->vendor_id >> 8) & 0xff);
		softcm_wire_set(mad, &sidr_vid_lo, msg->vendor_id);
	}
}

static void decode_vendor_id(const u8 *mad, struct softcm_cm_msg *msg)
{
	if (msg->attr == SOFTCM_CM_REP)
		msg->vendor_id = softcm_wire_get(mad, &rep_vid[0]) << 16 |
				 softcm_wire_get(mad, &rep_vid[1]) << 8 |
				 softcm_wire_get(mad, &rep_vid[2]);
	else if (msg->attr == SOFTCM_CM_SIDR_REP)
		msg->vendor_id = softcm_wire_get(mad, &sidr_vid_hi) << 8 |
				 softcm_wire_get(mad, &sidr_vid_lo);
}

/*
 * The header's constant fields are ours to set; tid and attr_mod come
 * from @msg.  Private data shorter than the message's room is zero-padded.
 */
int softcm_wire_encode(const struct softcm_cm_msg *msg, u8 mad[SOFTCM_MAD_SIZE])
{
	const struct layout *l = layout_of(msg->attr);
	struct softcm_cm_msg hdr = { };
	unsigned int i;

	if (!l)
		return -EINVAL;
	if (msg->pdata_len > SOFTCM_MAD_SIZE - l->pdata_off)
		return -EMSGSIZE;

	memset(mad, 0, SOFTCM_MAD_SIZE);
	hdr.hdr.base_version = SOFTCM_MAD_BASE_VERSION;
	hdr.hdr.mgmt_class = SOFTCM_MAD_CLASS_CM;
	hdr.hdr.class_version = SOFTCM_MAD_CM_VERSION;
	hdr.hdr.method = SOFTCM_MAD_METHOD_SEND;
	hdr.hdr.attr_id = msg->attr;
	hdr.hdr.tid = msg->hdr.tid;
	hdr.hdr.attr_mod = msg->hdr.attr_mod;
	put_fields(mad, &hdr, hdr_fields, ARRAY_SIZE(hdr_fields));

	put_fields(mad, msg, l->fields, l->nfields);
	for (i = 0; i < l->nraws; i++)
		memcpy(mad + l->raws[i].off, (const u8 *)msg + l->raws[i].member,
		       l->raws[i].len);
	encode_vendor_id(mad, msg);
	memcpy(mad + l->pdata_off, msg->pdata, msg->pdata_len);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_wire_encode);

/*
 * Every field is checked before use: a MAD that is not exactly one CM MAD
 * of a kind we know, or whose lengths do not fit, is refused.
 */
int softcm_wire_decode(const u8 *mad, size_t len, struct softcm_cm_msg *msg)
{
	const struct layout *l;
	unsigned int i;

	if (len != SOFTCM_MAD_SIZE)
		return -EMSGSIZE;
	memset(msg, 0, sizeof(*msg));
	get_fields(mad, msg, hdr_fields, ARRAY_SIZE(hdr_fields));
	if (msg->hdr.base_version != SOFTCM_MAD_BASE_VERSION ||
	    msg->hdr.mgmt_class != SOFTCM_MAD_CLASS_CM)
		return -EPROTO;
	if (msg->hdr.class_version != SOFTCM_MAD_CM_VERSION)
		return -EPROTONOSUPPORT;
	if (msg->hdr.method != SOFTCM_MAD_METHOD_SEND || msg->hdr.attr_id > 0xff)
		return -EOPNOTSUPP;
	l = layout_of(msg->hdr.attr_id);
	if (!l)
		return -EOPNOTSUPP;

	msg->attr = msg->hdr.attr_id;
	get_fields(mad, msg, l->fields, l->nfields);
	for (i = 0; i < l->nraws; i++)
		memcpy((u8 *)msg + l->raws[i].member, mad + l->raws[i].off,
		       l->raws[i].len);
	decode_vendor_id(mad, msg);
	if ((msg->attr == SOFTCM_CM_REJ || msg->attr == SOFTCM_CM_SIDR_REP) &&
	    msg->info_len > sizeof(msg->info))
		return -EINVAL;
	msg->pdata_len = SOFTCM_MAD_SIZE - l->pdata_off;
	memcpy(msg->pdata, mad + l->pdata_off, msg->pdata_len);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_wire_decode);
