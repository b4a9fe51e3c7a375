// SPDX-License-Identifier: GPL-2.0
/*
 * CM MAD encoding and decoding.  The REQ vector below is written byte by
 * byte from IBTA's REQ layout (offsets and MSB-first bit positions), not
 * produced by the code under test, so a wrong field table fails it.
 */

#include <kunit/test.h>
#include <linux/random.h>
#include <softcm/wire.h>

static void field_accessors(struct kunit *test)
{
	u8 mad[SOFTCM_MAD_SIZE];
	const struct softcm_field mid = { 67, 5, 2 };	/* REQ transport type */
	const struct softcm_field span = { 112, 0, 20 };/* REQ flow label */
	const struct softcm_field wide = { 8, 0, 64 };	/* TID */

	memset(mad, 0xff, sizeof(mad));
	softcm_wire_set(mad, &mid, 0);
	KUNIT_EXPECT_EQ(test, 0xf9, mad[67]);		/* 1111 1001 */
	KUNIT_EXPECT_EQ(test, 0, softcm_wire_get(mad, &mid));
	softcm_wire_set(mad, &mid, 2);
	KUNIT_EXPECT_EQ(test, 0xfd, mad[67]);
	KUNIT_EXPECT_EQ(test, 2, softcm_wire_get(mad, &mid));

	softcm_wire_set(mad, &span, 0x12345);
	KUNIT_EXPECT_EQ(test, 0x12, mad[112]);
	KUNIT_EXPECT_EQ(test, 0x34, mad[113]);
	KUNIT_EXPECT_EQ(test, 0x5f, mad[114]);		/* low nibble untouched */
	KUNIT_EXPECT_EQ(test, 0x12345, softcm_wire_get(mad, &span));
	/* Values wider than the field are cut to it. */
	softcm_wire_set(mad, &mid, 0xff);
	KUNIT_EXPECT_EQ(test, 0xff, mad[67]);

	softcm_wire_set(mad, &wide, 0x0102030405060708ULL);
	KUNIT_EXPECT_EQ(test, 0x01, mad[8]);
	KUNIT_EXPECT_EQ(test, 0x08, mad[15]);
	KUNIT_EXPECT_EQ(test, 0x0102030405060708ULL, softcm_wire_get(mad, &wide));
}

static void fill_req(struct softcm_cm_msg *m)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->attr = SOFTCM_CM_REQ;
	m->hdr.tid = 0x00000002f202c561ULL;
	m->local_comm_id = 0x61c502f2;
	m->vendor_id = 0xabcdef;
	m->service_id = 0x0000000001061d2fULL;	/* TCP port 7471 */
	m->ca_guid = 0x0011223344556677ULL;
	m->qpn = 0x123456;
	m->responder_resources = 1;
	m->initiator_depth = 2;
	m->remote_cm_timeout = 20;
	m->transport_type = 0;
	m->flow_control = 1;
	m->starting_psn = 0xabcdef;
	m->local_cm_timeout = 20;
	m->retry_count = 7;
	m->pkey = 0xffff;
	m->path_mtu = 3;
	m->rnr_retry_count = 6;
	m->max_cm_retries = 15;
	m->srq = 1;
	m->local_lid = 0xffff;
	m->remote_lid = 0xffff;
	for (i = 0; i < 16; i++) {
		m->local_gid[i] = i;
		m->remote_gid[i] = 0x80 + i;
	}
	m->flow_label = 0x12345;
	m->packet_rate = 0x2a;
	m->traffic_class = 0x20;
	m->hop_limit = 64;
	m->sl = 5;
	m->subnet_local = 0;
	m->local_ack_timeout = 19;
	m->pdata_len = 3;
	m->pdata[0] = 0xde;
	m->pdata[1] = 0xad;
	m->pdata[2] = 0xbe;
}

static void req_matches_ibta_layout(struct kunit *test)
{
	u8 want[SOFTCM_MAD_SIZE] = { }, *mad;
	struct softcm_cm_msg *m;
	unsigned int i;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	mad = kunit_kzalloc(test, SOFTCM_MAD_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	fill_req(m);

	/* MAD header */
	want[0] = 1; want[1] = 0x07; want[2] = 2; want[3] = 0x03;
	memcpy(&want[8], "\x00\x00\x00\x02\xf2\x02\xc5\x61", 8);
	want[17] = 0x10;
	/* REQ */
	memcpy(&want[24], "\x61\xc5\x02\xf2", 4);		/* local comm id */
	memcpy(&want[29], "\xab\xcd\xef", 3);			/* vendor id */
	memcpy(&want[32], "\x00\x00\x00\x00\x01\x06\x1d\x2f", 8);
	memcpy(&want[40], "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	memcpy(&want[56], "\x12\x34\x56", 3);			/* QPN */
	want[59] = 1;						/* responder resources */
	want[63] = 2;						/* initiator depth */
	want[67] = 20 << 3 | 0 << 1 | 1;			/* timeout, RC, flow ctl */
	memcpy(&want[68], "\xab\xcd\xef", 3);			/* starting PSN */
	want[71] = 20 << 3 | 7;					/* timeout, retries */
	want[72] = 0xff; want[73] = 0xff;			/* P_Key */
	want[74] = 3 << 4 | 0 << 3 | 6;				/* MTU, RDC, RNR retry */
	want[75] = 15 << 4 | 1 << 3;				/* max retries, SRQ */
	want[76] = 0xff; want[77] = 0xff; want[78] = 0xff; want[79] = 0xff;
	for (i = 0; i < 16; i++) {
		want[80 + i] = i;
		want[96 + i] = 0x80 + i;
	}
	want[112] = 0x12; want[113] = 0x34; want[114] = 0x50;	/* flow label */
	want[115] = 0x2a;					/* packet rate */
	want[116] = 0x20;					/* traffic class */
	want[117] = 64;						/* hop limit */
	want[118] = 5 << 4;					/* SL, subnet local 0 */
	want[119] = 19 << 3;					/* local ACK timeout */
	want[164] = 0xde; want[165] = 0xad; want[166] = 0xbe;	/* private data */

	KUNIT_ASSERT_EQ(test, 0, softcm_wire_encode(m, mad));
	for (i = 0; i < SOFTCM_MAD_SIZE; i++)
		KUNIT_EXPECT_EQ_MSG(test, want[i], mad[i], "byte %u", i);
}

/*
 * Every other message against bytes written from IBTA's tables (the
 * reference's section 4.2), one distinct value per field, decoded back
 * from those bytes too: encode and decode both meet the layout.
 */
struct vector {
	const char *name;
	void (*fill)(struct softcm_cm_msg *m);
	void (*want)(u8 *w);
};

static void hdr_want(u8 *w, u8 attr)
{
	w[0] = 1; w[1] = 0x07; w[2] = 2; w[3] = 0x03;
	memcpy(&w[8], "\x10\x20\x30\x40\x50\x60\x70\x80", 8);
	w[17] = attr;
}

static void ids(struct softcm_cm_msg *m, u8 attr)
{
	m->attr = attr;
	m->hdr.tid = 0x1020304050607080ULL;
	m->local_comm_id = 0x01020304;
	m->remote_comm_id = 0x05060708;
}

static void ids_want(u8 *w, u8 attr)
{
	hdr_want(w, attr);
	memcpy(&w[24], "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
}

static void pdata(struct softcm_cm_msg *m)
{
	memcpy(m->pdata, "\xde\xad\xbe", 3);
	m->pdata_len = 3;
}

static void pdata_want(u8 *w, unsigned int off)
{
	memcpy(&w[off], "\xde\xad\xbe", 3);
}

static void mra_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_MRA);
	m->msg_type = 1;
	m->service_timeout = 24;
	pdata(m);
}

static void mra_want(u8 *w)
{
	ids_want(w, SOFTCM_CM_MRA);
	w[32] = 1 << 6;			/* message MRAed: REP */
	w[33] = 24 << 3;		/* service timeout */
	pdata_want(w, 34);
}

static void rej_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_REJ);
	m->msg_type = 2;
	m->info_len = 8;
	m->reason = 28;
	memcpy(m->info, "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	pdata(m);
}

static void rej_want(u8 *w)
{
	ids_want(w, SOFTCM_CM_REJ);
	w[32] = 2 << 6;			/* message rejected: other */
	w[33] = 8 << 1;			/* ARI length */
	w[34] = 0; w[35] = 28;		/* reason */
	memcpy(&w[36], "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	pdata_want(w, 108);
}

static void rep_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_REP);
	m->qkey = 0x21222324;
	m->qpn = 0x313233;
	m->vendor_id = 0x414243;
	m->starting_psn = 0x515253;
	m->responder_resources = 0x61;
	m->initiator_depth = 0x62;
	m->target_ack_delay = 15;
	m->failover_accepted = 1;
	m->flow_control = 1;
	m->rnr_retry_count = 6;
	m->srq = 1;
	m->ca_guid = 0x0011223344556677ULL;
	pdata(m);
}

static void rep_want(u8 *w)
{
	ids_want(w, SOFTCM_CM_REP);
	memcpy(&w[32], "\x21\x22\x23\x24\x31\x32\x33\x41", 8);	/* Q_Key, QPN, VID hi */
	w[43] = 0x42;						/* vendor id mid */
	memcpy(&w[44], "\x51\x52\x53\x43", 4);			/* PSN, VID lo */
	w[48] = 0x61;
	w[49] = 0x62;
	w[50] = 15 << 3 | 1 << 1 | 1;		/* ACK delay, failover, flow control */
	w[51] = 6 << 5 | 1 << 4;		/* RNR retry, SRQ */
	memcpy(&w[52], "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	pdata_want(w, 60);
}

static void rtu_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_RTU);
	pdata(m);
}

static void rtu_want(u8 *w)
{
	ids_want(w, SOFTCM_CM_RTU);
	pdata_want(w, 32);
}

static void dreq_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_DREQ);
	m->qpn = 0x717273;
	pdata(m);
}

static void dreq_want(u8 *w)
{
	ids_want(w, SOFTCM_CM_DREQ);
	memcpy(&w[32], "\x71\x72\x73", 3);	/* remote QPN */
	pdata_want(w, 36);
}

static void drep_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_DREP);
	pdata(m);
}

static void drep_want(u8 *w)
{
	ids_want(w, SOFTCM_CM_DREP);
	pdata_want(w, 32);
}

static void sidr_req_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_SIDR_REQ);
	m->remote_comm_id = 0;
	m->pkey = 0xffff;
	m->service_id = 0x0000000001111d2fULL;
	pdata(m);
}

static void sidr_req_want(u8 *w)
{
	hdr_want(w, SOFTCM_CM_SIDR_REQ);
	memcpy(&w[24], "\x01\x02\x03\x04\xff\xff", 6);		/* request id, P_Key */
	memcpy(&w[32], "\x00\x00\x00\x00\x01\x11\x1d\x2f", 8);
	pdata_want(w, 40);
}

static void sidr_rep_fill(struct softcm_cm_msg *m)
{
	ids(m, SOFTCM_CM_SIDR_REP);
	m->remote_comm_id = 0;
	m->status = 2;
	m->info_len = 4;
	m->vendor_id = 0xa1a2a3;
	m->qpn = 0x818283;
	m->service_id = 0x0000000001111d2fULL;
	m->qkey = 0x01234567;
	memcpy(m->info, "\x91\x92\x93\x94", 4);
	pdata(m);
}

static void sidr_rep_want(u8 *w)
{
	hdr_want(w, SOFTCM_CM_SIDR_REP);
	memcpy(&w[24], "\x01\x02\x03\x04\x02\x04\x00\xa2", 8);	/* id, status, len, VID */
	memcpy(&w[32], "\x81\x82\x83\xa3", 4);			/* QPN, VID lo */
	memcpy(&w[36], "\x00\x00\x00\x00\x01\x11\x1d\x2f", 8);
	memcpy(&w[44], "\x01\x23\x45\x67\x91\x92\x93\x94", 8);	/* Q_Key, info */
	pdata_want(w, 120);
}

static const struct vector vectors[] = {
	{ "MRA", mra_fill, mra_want },
	{ "REJ", rej_fill, rej_want },
	{ "REP", rep_fill, rep_want },
	{ "RTU", rtu_fill, rtu_want },
	{ "DREQ", dreq_fill, dreq_want },
	{ "DREP", drep_fill, drep_want },
	{ "SIDR_REQ", sidr_req_fill, sidr_req_want },
	{ "SIDR_REP", sidr_rep_fill, sidr_rep_want },
};

static void every_message_matches_ibta_layout(struct kunit *test)
{
	struct softcm_cm_msg *m, *back;
	unsigned int v, i;
	u8 *want, *mad;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	back = kunit_kzalloc(test, sizeof(*back), GFP_KERNEL);
	want = kunit_kzalloc(test, SOFTCM_MAD_SIZE, GFP_KERNEL);
	mad = kunit_kzalloc(test, SOFTCM_MAD_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, back);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, mad);

	for (v = 0; v < ARRAY_SIZE(vectors); v++) {
		memset(m, 0, sizeof(*m));
		memset(want, 0, SOFTCM_MAD_SIZE);
		vectors[v].fill(m);
		vectors[v].want(want);
		KUNIT_ASSERT_EQ(test, 0, softcm_wire_encode(m, mad));
		for (i = 0; i < SOFTCM_MAD_SIZE; i++)
			KUNIT_EXPECT_EQ_MSG(test, want[i], mad[i], "%s byte %u",
					    vectors[v].name, i);
		/* and the same bytes decode to the same fields */
		KUNIT_ASSERT_EQ(test, 0, softcm_wire_decode(want, SOFTCM_MAD_SIZE, back));
		KUNIT_EXPECT_EQ_MSG(test, m->local_comm_id, back->local_comm_id, "%s",
				    vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->remote_comm_id, back->remote_comm_id, "%s",
				    vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->qpn, back->qpn, "%s", vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->qkey, back->qkey, "%s", vectors[v].name);
		/* SIDR_REP carries the vendor ID's low 16 bits only */
		KUNIT_EXPECT_EQ_MSG(test, m->attr == SOFTCM_CM_SIDR_REP ?
				    m->vendor_id & 0xffff : m->vendor_id,
				    back->vendor_id, "%s", vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->service_id, back->service_id, "%s",
				    vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->reason, back->reason, "%s", vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->status, back->status, "%s", vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->msg_type, back->msg_type, "%s", vectors[v].name);
		KUNIT_EXPECT_EQ_MSG(test, m->srq, back->srq, "%s", vectors[v].name);
		KUNIT_EXPECT_EQ(test, 0, memcmp(m->pdata, back->pdata, m->pdata_len));
	}
}

static void rep_and_sidr_rep_vendor_ids(struct kunit *test)
{
	struct softcm_cm_msg *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	u8 *mad = kunit_kzalloc(test, SOFTCM_MAD_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	m->attr = SOFTCM_CM_REP;
	m->vendor_id = 0x123456;
	m->qpn = 0xabcdef;
	m->starting_psn = 0x654321;
	KUNIT_ASSERT_EQ(test, 0, softcm_wire_encode(m, mad));
	KUNIT_EXPECT_EQ(test, 0x12, mad[39]);
	KUNIT_EXPECT_EQ(test, 0x34, mad[43]);
	KUNIT_EXPECT_EQ(test, 0x56, mad[47]);
	KUNIT_EXPECT_EQ(test, 0xab, mad[36]);
	KUNIT_EXPECT_EQ(test, 0x65, mad[44]);

	memset(m, 0, sizeof(*m));
	m->attr = SOFTCM_CM_SIDR_REP;
	m->vendor_id = 0x123456;
	KUNIT_ASSERT_EQ(test, 0, softcm_wire_encode(m, mad));
	KUNIT_EXPECT_EQ(test, 0x00, mad[30]);	/* as Linux: (vid >> 8) & 0xff */
	KUNIT_EXPECT_EQ(test, 0x34, mad[31]);
	KUNIT_EXPECT_EQ(test, 0x56, mad[35]);
}

/* Every message type survives encode then decode with random contents. */
static void every_message_round_trips(struct kunit *test)
{
	static const u8 attrs[] = {
		SOFTCM_CM_REQ, SOFTCM_CM_MRA, SOFTCM_CM_REJ, SOFTCM_CM_REP, SOFTCM_CM_RTU,
		SOFTCM_CM_DREQ, SOFTCM_CM_DREP, SOFTCM_CM_SIDR_REQ, SOFTCM_CM_SIDR_REP,
	};
	struct softcm_cm_msg *in = kunit_kzalloc(test, sizeof(*in), GFP_KERNEL);
	struct softcm_cm_msg *out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	u8 *mad = kunit_kzalloc(test, SOFTCM_MAD_SIZE, GFP_KERNEL);
	unsigned int i, room;

	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		room = softcm_wire_pdata_size(attrs[i]);
		KUNIT_ASSERT_NE(test, 0, room);
		fill_req(in);
		in->attr = attrs[i];
		in->hdr.attr_mod = 0x11223344;
		in->local_comm_id = get_random_u32();
		in->remote_comm_id = get_random_u32();
		in->info_len = 8;
		get_random_bytes(in->info, sizeof(in->info));
		in->pdata_len = room;
		get_random_bytes(in->pdata, room);

		KUNIT_ASSERT_EQ(test, 0, softcm_wire_encode(in, mad));
		KUNIT_ASSERT_EQ(test, 0, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, out));
		KUNIT_EXPECT_EQ(test, attrs[i], out->attr);
		KUNIT_EXPECT_EQ(test, in->hdr.tid, out->hdr.tid);
		KUNIT_EXPECT_EQ(test, in->hdr.attr_mod, out->hdr.attr_mod);
		KUNIT_EXPECT_EQ(test, in->local_comm_id, out->local_comm_id);
		KUNIT_EXPECT_EQ(test, room, out->pdata_len);
		KUNIT_EXPECT_EQ(test, 0, memcmp(in->pdata, out->pdata, room));
		/* REQ and SIDR have no remote comm id: only the others carry it. */
		if (attrs[i] != SOFTCM_CM_REQ && attrs[i] != SOFTCM_CM_SIDR_REQ &&
		    attrs[i] != SOFTCM_CM_SIDR_REP)
			KUNIT_EXPECT_EQ(test, in->remote_comm_id, out->remote_comm_id);
		if (attrs[i] == SOFTCM_CM_REQ) {
			KUNIT_EXPECT_EQ(test, 0, memcmp(in->local_gid, out->local_gid, 16));
			KUNIT_EXPECT_EQ(test, in->flow_label, out->flow_label);
			KUNIT_EXPECT_EQ(test, in->vendor_id, out->vendor_id);
			KUNIT_EXPECT_EQ(test, in->service_id, out->service_id);
		}
		if (attrs[i] == SOFTCM_CM_REJ)
			KUNIT_EXPECT_EQ(test, 0, memcmp(in->info, out->info, sizeof(in->info)));
		if (attrs[i] == SOFTCM_CM_REP)
			KUNIT_EXPECT_EQ(test, in->vendor_id, out->vendor_id);
	}
}

static void pdata_sizes_match_rdma_cm(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SOFTCM_REQ_PDATA, softcm_wire_pdata_size(SOFTCM_CM_REQ));
	KUNIT_EXPECT_EQ(test, SOFTCM_MRA_PDATA, softcm_wire_pdata_size(SOFTCM_CM_MRA));
	KUNIT_EXPECT_EQ(test, SOFTCM_REJ_PDATA, softcm_wire_pdata_size(SOFTCM_CM_REJ));
	KUNIT_EXPECT_EQ(test, SOFTCM_REP_PDATA, softcm_wire_pdata_size(SOFTCM_CM_REP));
	KUNIT_EXPECT_EQ(test, SOFTCM_RTU_PDATA, softcm_wire_pdata_size(SOFTCM_CM_RTU));
	KUNIT_EXPECT_EQ(test, SOFTCM_DREQ_PDATA, softcm_wire_pdata_size(SOFTCM_CM_DREQ));
	KUNIT_EXPECT_EQ(test, SOFTCM_DREP_PDATA, softcm_wire_pdata_size(SOFTCM_CM_DREP));
	KUNIT_EXPECT_EQ(test, SOFTCM_SIDR_REQ_PDATA, softcm_wire_pdata_size(SOFTCM_CM_SIDR_REQ));
	KUNIT_EXPECT_EQ(test, SOFTCM_SIDR_REP_PDATA, softcm_wire_pdata_size(SOFTCM_CM_SIDR_REP));
	KUNIT_EXPECT_EQ(test, 0, softcm_wire_pdata_size(0x19));	/* LAP: not used */
}

static void bad_mads_refused(struct kunit *test)
{
	struct softcm_cm_msg *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	u8 *mad = kunit_kzalloc(test, SOFTCM_MAD_SIZE + 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	fill_req(m);
	KUNIT_ASSERT_EQ(test, 0, softcm_wire_encode(m, mad));
	KUNIT_EXPECT_EQ(test, 0, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));

	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_wire_decode(mad, SOFTCM_MAD_SIZE - 1, m));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_wire_decode(mad, SOFTCM_MAD_SIZE + 1, m));
	mad[0] = 2;
	KUNIT_EXPECT_EQ(test, -EPROTO, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));
	mad[0] = 1;
	mad[1] = 0x04;
	KUNIT_EXPECT_EQ(test, -EPROTO, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));
	mad[1] = 0x07;
	mad[2] = 1;
	KUNIT_EXPECT_EQ(test, -EPROTONOSUPPORT, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));
	mad[2] = 2;
	mad[3] = 0x01;
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));
	mad[3] = 0x03;
	mad[17] = 0x19;						/* LAP */
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));
	mad[16] = 0x01;
	mad[17] = 0x10;						/* 0x0110 */
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));
	mad[16] = 0;
	mad[17] = SOFTCM_CM_REJ;
	mad[33] = 73 << 1;					/* ARI longer than 72 */
	KUNIT_EXPECT_EQ(test, -EINVAL, softcm_wire_decode(mad, SOFTCM_MAD_SIZE, m));

	fill_req(m);
	m->pdata_len = SOFTCM_REQ_PDATA + 1;
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_wire_encode(m, mad));
	m->attr = 0x19;
	m->pdata_len = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, softcm_wire_encode(m, mad));
}

static struct kunit_case wire_cases[] = {
	KUNIT_CASE(field_accessors),
	KUNIT_CASE(req_matches_ibta_layout),
	KUNIT_CASE(every_message_matches_ibta_layout),
	KUNIT_CASE(rep_and_sidr_rep_vendor_ids),
	KUNIT_CASE(every_message_round_trips),
	KUNIT_CASE(pdata_sizes_match_rdma_cm),
	KUNIT_CASE(bad_mads_refused),
	{}
};

static struct kunit_suite wire_suite = {
	.name = "softcm_wire",
	.test_cases = wire_cases,
};

kunit_test_suite(wire_suite);
