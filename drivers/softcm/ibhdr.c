// SPDX-License-Identifier: GPL-2.0
/*
 * The IBTA transport headers of the data path: the opcode table, the
 * parser and the encoder.  The parser is the first thing a data packet
 * meets after the UDP socket: it looks up the opcode, checks the length
 * the UDP header claims against what that opcode carries, and only then
 * reads the headers, so that no field is read past the packet and no
 * length computed from a field underflows.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "ibhdr.h"

#define REQ		SOFTCM_IB_REQUEST
#define PAY		SOFTCM_IB_HAS_PAYLOAD
#define RETH		SOFTCM_IB_HAS_RETH
#define AETH		SOFTCM_IB_HAS_AETH
#define IMM		SOFTCM_IB_HAS_IMMDT
#define IETH		SOFTCM_IB_HAS_IETH
#define DETH		SOFTCM_IB_HAS_DETH
#define ATOMIC		SOFTCM_IB_HAS_ATOMICETH
#define ATOMICACK	SOFTCM_IB_HAS_ATOMICACK

#define RC(op)		(SOFTCM_IB_RC | SOFTCM_IB_##op)
#define UC(op)		(SOFTCM_IB_UC | SOFTCM_IB_##op)
#define UD(op)		(SOFTCM_IB_UD | SOFTCM_IB_##op)

#define ONLY		SOFTCM_IB_ONLY
#define FIRST		SOFTCM_IB_FIRST
#define MIDDLE		SOFTCM_IB_MIDDLE
#define LAST		SOFTCM_IB_LAST

#define BTH_LEN		SOFTCM_IB_BTH
#define RETH_LEN	SOFTCM_IB_RETH
#define AETH_LEN	SOFTCM_IB_AETH
#define ATOMIC_LEN	SOFTCM_IB_ATOMICETH
#define ACK_LEN		SOFTCM_IB_ATOMICACKETH
#define IMM_LEN		SOFTCM_IB_IMMDT
#define IETH_LEN	SOFTCM_IB_IETH
#define DETH_LEN	SOFTCM_IB_DETH

/*
 * IBTA Table 38 with the headers of 9.2-9.4 in the order they follow the
 * BTH (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH): flags,
 * place in the message, and the headers' length, which KUnit checks
 * against the flags and against the IBTA's byte counts.  An
 * opcode left out has flags 0 and is refused: RD, CNP, and the FLUSH and
 * ATOMIC WRITE of the 2020 memory placement extensions, which rxe of 6.12
 * knows but RoCE peers do not send unasked.
 */
static const struct softcm_ib_op ops[256] = {
	[RC(SEND_FIRST)] = { REQ | PAY, FIRST, BTH_LEN },
	[RC(SEND_MIDDLE)] = { REQ | PAY, MIDDLE, BTH_LEN },
	[RC(SEND_LAST)] = { REQ | PAY, LAST, BTH_LEN },
	[RC(SEND_LAST_IMM)] = { REQ | PAY | IMM, LAST, BTH_LEN + IMM_LEN },
	[RC(SEND_ONLY)] = { REQ | PAY, ONLY, BTH_LEN },
	[RC(SEND_ONLY_IMM)] = { REQ | PAY | IMM, ONLY, BTH_LEN + IMM_LEN },
	[RC(WRITE_FIRST)] = { REQ | PAY | RETH, FIRST, BTH_LEN + RETH_LEN },
	[RC(WRITE_MIDDLE)] = { REQ | PAY, MIDDLE, BTH_LEN },
	[RC(WRITE_LAST)] = { REQ | PAY, LAST, BTH_LEN },
	[RC(WRITE_LAST_IMM)] = { REQ | PAY | IMM, LAST, BTH_LEN + IMM_LEN },
	[RC(WRITE_ONLY)] = { REQ | PAY | RETH, ONLY, BTH_LEN + RETH_LEN },
	[RC(WRITE_ONLY_IMM)] = { REQ | PAY | RETH | IMM, ONLY, BTH_LEN + RETH_LEN + IMM_LEN },
	[RC(READ_REQUEST)] = { REQ | RETH, ONLY, BTH_LEN + RETH_LEN },
	[RC(READ_RESPONSE_FIRST)] = { PAY | AETH, FIRST, BTH_LEN + AETH_LEN },
	[RC(READ_RESPONSE_MIDDLE)] = { PAY, MIDDLE, BTH_LEN },
	[RC(READ_RESPONSE_LAST)] = { PAY | AETH, LAST, BTH_LEN + AETH_LEN },
	[RC(READ_RESPONSE_ONLY)] = { PAY | AETH, ONLY, BTH_LEN + AETH_LEN },
	[RC(ACKNOWLEDGE)] = { AETH, ONLY, BTH_LEN + AETH_LEN },
	[RC(ATOMIC_ACKNOWLEDGE)] = { AETH | ATOMICACK, ONLY, BTH_LEN + AETH_LEN + ACK_LEN },
	[RC(COMPARE_SWAP)] = { REQ | ATOMIC, ONLY, BTH_LEN + ATOMIC_LEN },
	[RC(FETCH_ADD)] = { REQ | ATOMIC, ONLY, BTH_LEN + ATOMIC_LEN },
	[RC(SEND_LAST_INV)] = { REQ | PAY | IETH, LAST, BTH_LEN + IETH_LEN },
	[RC(SEND_ONLY_INV)] = { REQ | PAY | IETH, ONLY, BTH_LEN + IETH_LEN },

	[UC(SEND_FIRST)] = { REQ | PAY, FIRST, BTH_LEN },
	[UC(SEND_MIDDLE)] = { REQ | PAY, MIDDLE, BTH_LEN },
	[UC(SEND_LAST)] = { REQ | PAY, LAST, BTH_LEN },
	[UC(SEND_LAST_IMM)] = { REQ | PAY | IMM, LAST, BTH_LEN + IMM_LEN },
	[UC(SEND_ONLY)] = { REQ | PAY, ONLY, BTH_LEN },
	[UC(SEND_ONLY_IMM)] = { REQ | PAY | IMM, ONLY, BTH_LEN + IMM_LEN },
	[UC(WRITE_FIRST)] = { REQ | PAY | RETH, FIRST, BTH_LEN + RETH_LEN },
	[UC(WRITE_MIDDLE)] = { REQ | PAY, MIDDLE, BTH_LEN },
	[UC(WRITE_LAST)] = { REQ | PAY, LAST, BTH_LEN },
	[UC(WRITE_LAST_IMM)] = { REQ | PAY | IMM, LAST, BTH_LEN + IMM_LEN },
	[UC(WRITE_ONLY)] = { REQ | PAY | RETH, ONLY, BTH_LEN + RETH_LEN },
	[UC(WRITE_ONLY_IMM)] = { REQ | PAY | RETH | IMM, ONLY, BTH_LEN + RETH_LEN + IMM_LEN },

	[UD(SEND_ONLY)] = { REQ | PAY | DETH, ONLY, BTH_LEN + DETH_LEN },
	[UD(SEND_ONLY_IMM)] = { REQ | PAY | DETH | IMM, ONLY, BTH_LEN + DETH_LEN + IMM_LEN },
};

/* The table's entry for @opcode, or NULL for one softcm does not know. */
const struct softcm_ib_op *softcm_ib_op(u8 opcode)
{
	const struct softcm_ib_op *op = &ops[opcode];

	return op->hdr_len ? op : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_ib_op);

/*
 * IBTA Table 45: the RNR NAK timer codes in microseconds.  Code 0 is the
 * longest, 655.36 ms, and is what the Linux CM negotiates.  rxe's copy has
 * 61410 for code 25; the IBTA and this table say 61440.
 */
static const u32 rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

u32 softcm_rnr_timer_us(u8 code)
{
	return rnr_us[code & SOFTCM_AETH_VALUE_MASK];
}
EXPORT_SYMBOL_IF_KUNIT(softcm_rnr_timer_us);

/*
 * A syndrome the IBTA defines: bit 7 is reserved, type 10b is reserved,
 * and NAK codes above 4 are reserved (Table 42).  An ACK may carry any
 * credit count, an RNR NAK any timer code.
 */
static bool aeth_valid(u8 syndrome)
{
	if (syndrome & 0x80)
		return false;
	switch (softcm_aeth_type(syndrome)) {
	case SOFTCM_AETH_ACK:
	case SOFTCM_AETH_RNR_NAK:
		return true;
	case SOFTCM_AETH_NAK:
		return softcm_aeth_value(syndrome) <= SOFTCM_NAK_INVALID_RD_REQUEST;
	}
	return false;
}

/* The extension headers of @h->op, from @p on, in their wire order. */
static void get_ext(const u8 *p, struct softcm_ib_hdr *h)
{
	u16 f = h->op->flags;

	if (f & SOFTCM_IB_HAS_DETH) {
		h->deth.qkey = get_unaligned_be32(p);
		h->deth.src_qpn = get_unaligned_be32(p + 4) & 0xffffff;
		p += SOFTCM_IB_DETH;
	}
	if (f & SOFTCM_IB_HAS_RETH) {
		h->reth.va = get_unaligned_be64(p);
		h->reth.rkey = get_unaligned_be32(p + 8);
		h->reth.len = get_unaligned_be32(p + 12);
		p += SOFTCM_IB_RETH;
	}
	if (f & SOFTCM_IB_HAS_ATOMICETH) {
		h->atomic.va = get_unaligned_be64(p);
		h->atomic.rkey = get_unaligned_be32(p + 8);
		h->atomic.swap_add = get_unaligned_be64(p + 12);
		h->atomic.compare = get_unaligned_be64(p + 20);
		p += SOFTCM_IB_ATOMICETH;
	}
	if (f & SOFTCM_IB_HAS_AETH) {
		h->aeth.syndrome = p[0];
		h->aeth.msn = get_unaligned_be32(p) & 0xffffff;
		p += SOFTCM_IB_AETH;
	}
	if (f & SOFTCM_IB_HAS_ATOMICACK) {
		h->atomic_orig = get_unaligned_be64(p);
		p += SOFTCM_IB_ATOMICACKETH;
	}
	if (f & SOFTCM_IB_HAS_IMMDT) {
		memcpy(&h->imm, p, sizeof(h->imm));
		p += SOFTCM_IB_IMMDT;
	}
	if (f & SOFTCM_IB_HAS_IETH)
		h->ieth_rkey = get_unaligned_be32(p);
}

/*
 * Parse one packet: @len is the UDP payload, BTH through ICRC, and @avail
 * how many of its bytes at @pkt are contiguous (at least the headers:
 * SOFTCM_IB_HDR_MAX, or @len if shorter, covers every opcode).  Each
 * check names its reason for the drop counters:
 *
 * -EMSGSIZE	the length does not fit the opcode: shorter than its
 *		headers and ICRC, not whole 4-byte words (IBTA 9.2: packets
 *		are padded to them), a payload on an opcode without one, an
 *		empty FIRST or MIDDLE (which carry a whole PMTU), an empty
 *		request LAST, more pad than payload, a WRITE ONLY whose
 *		payload is not the RETH's length, or a RETH whose DMA length
 *		is beyond the largest message (2^31 bytes);
 * -EOPNOTSUPP	an opcode the table does not know;
 * -EPROTO	a transport version other than 0, a pad count on a FIRST or
 *		MIDDLE packet or an opcode without payload, a reserved AETH
 *		syndrome;
 * -ENOENT	destination QP 0, which RoCE has not.
 *
 * The BECN/FECN byte, MigReq and the reserved bits are not checked:
 * rxe sends them as 0 and ignores them, and NICs may set MigReq.  The
 * P_Key, the QPs' numbers and the PSN are the QP's to judge.
 */
int softcm_ib_parse(const u8 *pkt, unsigned int avail, unsigned int len,
		    struct softcm_ib_hdr *h)
{
	const struct softcm_ib_op *op;
	unsigned int room;

	memset(h, 0, sizeof(*h));
	if (len < SOFTCM_IB_BTH + SOFTCM_IB_ICRC || avail < SOFTCM_IB_BTH ||
	    len % 4)
		return -EMSGSIZE;
	op = softcm_ib_op(pkt[0]);
	if (!op)
		return -EOPNOTSUPP;
	if (len < op->hdr_len + SOFTCM_IB_ICRC || avail < op->hdr_len)
		return -EMSGSIZE;
	if (pkt[1] & SOFTCM_IB_BTH_TVER)
		return -EPROTO;

	h->op = op;
	h->opcode = pkt[0];
	h->se = pkt[1] & SOFTCM_IB_BTH_SE;
	h->mig = pkt[1] & SOFTCM_IB_BTH_MIG;
	h->pad = (pkt[1] & SOFTCM_IB_BTH_PAD) >> 4;
	h->pkey = get_unaligned_be16(pkt + 2);
	h->dqpn = get_unaligned_be32(pkt + 4) & 0xffffff;
	h->ackreq = pkt[8] & SOFTCM_IB_BTH_ACKREQ;
	h->psn = get_unaligned_be32(pkt + 8) & 0xffffff;

	/* Payload and pad: a multiple of 4, since len and hdr_len are. */
	room = len - op->hdr_len - SOFTCM_IB_ICRC;
	if (!(op->flags & SOFTCM_IB_HAS_PAYLOAD)) {
		if (h->pad)
			return -EPROTO;
		if (room)
			return -EMSGSIZE;
	} else if (op->pos == SOFTCM_IB_FIRST || op->pos == SOFTCM_IB_MIDDLE) {
		if (h->pad)
			return -EPROTO;
		if (!room)
			return -EMSGSIZE;
	} else if (h->pad > room) {
		return -EMSGSIZE;
	}
	h->payload_len = room - h->pad;
	/*
	 * A LAST carries 1 to PMTU bytes: an empty message is one ONLY
	 * packet.  rxe's responder refuses an empty request LAST
	 * (rxe_resp_check_length(), after IBA C9-92), which is what we
	 * check.  The IBTA's rule covers an empty READ RESPONSE LAST too,
	 * but rxe's requester takes one (do_read() copies nothing, and the
	 * read completes once no byte remains), and we follow rxe: what an
	 * rxe requester accepts from a responder we accept, and a read's
	 * lengths are for the requester to check against what it asked.
	 */
	if (op->pos == SOFTCM_IB_LAST && (op->flags & SOFTCM_IB_REQUEST) &&
	    !h->payload_len)
		return -EMSGSIZE;
	if (!h->dqpn)
		return -ENOENT;

	get_ext(pkt + SOFTCM_IB_BTH, h);
	if ((op->flags & SOFTCM_IB_HAS_AETH) && !aeth_valid(h->aeth.syndrome))
		return -EPROTO;
	/*
	 * A RETH's DMA length is a whole message's, at most 2^31 bytes, the
	 * IBTA's largest (rxe_resp_check_length() after IBA C9-94, and
	 * rxe's RXE_PORT_MAX_MSG_SZ): 2^31 itself is allowed.
	 */
	if ((op->flags & SOFTCM_IB_HAS_RETH) && h->reth.len > SOFTCM_IB_MAX_MSG)
		return -EMSGSIZE;
	if ((op->flags & SOFTCM_IB_HAS_RETH) && op->pos == SOFTCM_IB_ONLY &&
	    (op->flags & SOFTCM_IB_HAS_PAYLOAD) && h->payload_len != h->reth.len)
		return -EMSGSIZE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_ib_parse);

static void put_ext(u8 *p, const struct softcm_ib_hdr *h)
{
	u16 f = h->op->flags;

	if (f & SOFTCM_IB_HAS_DETH) {
		put_unaligned_be32(h->deth.qkey, p);
		put_unaligned_be32(h->deth.src_qpn & 0xffffff, p + 4);
		p += SOFTCM_IB_DETH;
	}
	if (f & SOFTCM_IB_HAS_RETH) {
		put_unaligned_be64(h->reth.va, p);
		put_unaligned_be32(h->reth.rkey, p + 8);
		put_unaligned_be32(h->reth.len, p + 12);
		p += SOFTCM_IB_RETH;
	}
	if (f & SOFTCM_IB_HAS_ATOMICETH) {
		put_unaligned_be64(h->atomic.va, p);
		put_unaligned_be32(h->atomic.rkey, p + 8);
		put_unaligned_be64(h->atomic.swap_add, p + 12);
		put_unaligned_be64(h->atomic.compare, p + 20);
		p += SOFTCM_IB_ATOMICETH;
	}
	if (f & SOFTCM_IB_HAS_AETH) {
		put_unaligned_be32(h->aeth.msn & 0xffffff, p);
		p[0] = h->aeth.syndrome;
		p += SOFTCM_IB_AETH;
	}
	if (f & SOFTCM_IB_HAS_ATOMICACK) {
		put_unaligned_be64(h->atomic_orig, p);
		p += SOFTCM_IB_ATOMICACKETH;
	}
	if (f & SOFTCM_IB_HAS_IMMDT) {
		memcpy(p, &h->imm, sizeof(h->imm));
		p += SOFTCM_IB_IMMDT;
	}
	if (f & SOFTCM_IB_HAS_IETH)
		put_unaligned_be32(h->ieth_rkey, p);
}

/*
 * Write @h's BTH and extension headers to @buf (@size bytes) as rxe does:
 * TVer 0, the BECN/FECN byte and the reserved bits 0, the pad count that
 * brings @h->payload_len to 4 bytes.  Sets @h->op and @h->pad; returns
 * the headers' length.  The caller appends the payload, the pad bytes
 * (zero, as rxe sends them) and the ICRC.
 */
int softcm_ib_build(u8 *buf, unsigned int size, struct softcm_ib_hdr *h)
{
	const struct softcm_ib_op *op = softcm_ib_op(h->opcode);
	u8 pad;

	if (!op)
		return -EOPNOTSUPP;
	if (size < op->hdr_len)
		return -ENOSPC;
	pad = -h->payload_len & 3;
	if (!(op->flags & SOFTCM_IB_HAS_PAYLOAD) && h->payload_len)
		return -EINVAL;
	if ((op->pos == SOFTCM_IB_FIRST || op->pos == SOFTCM_IB_MIDDLE) && pad)
		return -EINVAL;
	h->op = op;
	h->pad = pad;

	memset(buf, 0, op->hdr_len);
	buf[0] = h->opcode;
	buf[1] = (h->se ? SOFTCM_IB_BTH_SE : 0) |
		 (h->mig ? SOFTCM_IB_BTH_MIG : 0) | pad << 4;
	put_unaligned_be16(h->pkey, buf + 2);
	put_unaligned_be32(h->dqpn & 0xffffff, buf + 4);
	put_unaligned_be32(h->psn & 0xffffff, buf + 8);
	buf[8] = h->ackreq ? SOFTCM_IB_BTH_ACKREQ : 0;
	put_ext(buf + SOFTCM_IB_BTH, h);
	return op->hdr_len;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_ib_build);
