// SPDX-License-Identifier: GPL-2.0
/*
 * The data path's transport headers: every opcode's layout round-trips
 * through the encoder and the parser, the byte offsets are the IBTA's
 * (checked against packets written out by hand, as rxe sends them), and
 * every malformed length, opcode, pad and version is refused with its
 * reason.  Then the AETH syndromes, the RNR timer table and 24-bit PSN
 * comparisons across the wrap.
 */

#include <kunit/test.h>
#include <linux/string.h>

#include "compat.h"
#include "ibhdr.h"
#include "psn.h"

/* Every field set to a distinct value, so that a misplaced one shows. */
static void fill(struct softcm_ib_hdr *h, u8 opcode, unsigned int payload)
{
	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->se = true;
	h->ackreq = true;
	h->pkey = 0xffff;
	h->dqpn = 0xabcdef;
	h->psn = 0xfedcba;
	h->payload_len = payload;
	h->reth.va = 0x0123456789abcdefull;
	h->reth.rkey = 0x11223344;
	h->reth.len = payload;
	h->aeth.syndrome = softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID);
	h->aeth.msn = 0x654321;
	h->atomic.va = 0x1122334455667788ull;
	h->atomic.rkey = 0x99aabbcc;
	h->atomic.swap_add = 0xa1a2a3a4a5a6a7a8ull;
	h->atomic.compare = 0xb1b2b3b4b5b6b7b8ull;
	h->atomic_orig = 0xc1c2c3c4c5c6c7c8ull;
	h->imm = cpu_to_be32(0xdeadbeef);
	h->ieth_rkey = 0x55667788;
	h->deth.qkey = 0x80010000;
	h->deth.src_qpn = 0x123456;
}

/* Clear what an opcode does not carry, as the parser leaves it. */
static void expect_same(struct kunit *test, const struct softcm_ib_hdr *in,
			const struct softcm_ib_hdr *out)
{
	u16 f = out->op->flags;

	KUNIT_EXPECT_EQ(test, in->opcode, out->opcode);
	KUNIT_EXPECT_EQ(test, in->se, out->se);
	KUNIT_EXPECT_EQ(test, in->ackreq, out->ackreq);
	KUNIT_EXPECT_EQ(test, in->pad, out->pad);
	KUNIT_EXPECT_EQ(test, in->pkey, out->pkey);
	KUNIT_EXPECT_EQ(test, in->dqpn, out->dqpn);
	KUNIT_EXPECT_EQ(test, in->psn, out->psn);
	KUNIT_EXPECT_EQ(test, in->payload_len, out->payload_len);
	if (f & SOFTCM_IB_HAS_RETH) {
		KUNIT_EXPECT_EQ(test, in->reth.va, out->reth.va);
		KUNIT_EXPECT_EQ(test, in->reth.rkey, out->reth.rkey);
		KUNIT_EXPECT_EQ(test, in->reth.len, out->reth.len);
	} else {
		KUNIT_EXPECT_EQ(test, 0, out->reth.rkey);
	}
	if (f & SOFTCM_IB_HAS_AETH) {
		KUNIT_EXPECT_EQ(test, in->aeth.syndrome, out->aeth.syndrome);
		KUNIT_EXPECT_EQ(test, in->aeth.msn, out->aeth.msn);
	} else {
		KUNIT_EXPECT_EQ(test, 0, out->aeth.msn);
	}
	if (f & SOFTCM_IB_HAS_ATOMICETH) {
		KUNIT_EXPECT_EQ(test, in->atomic.va, out->atomic.va);
		KUNIT_EXPECT_EQ(test, in->atomic.rkey, out->atomic.rkey);
		KUNIT_EXPECT_EQ(test, in->atomic.swap_add, out->atomic.swap_add);
		KUNIT_EXPECT_EQ(test, in->atomic.compare, out->atomic.compare);
	} else {
		KUNIT_EXPECT_EQ(test, 0, out->atomic.va);
	}
	KUNIT_EXPECT_EQ(test, f & SOFTCM_IB_HAS_ATOMICACK ? in->atomic_orig : 0,
			out->atomic_orig);
	KUNIT_EXPECT_EQ(test, f & SOFTCM_IB_HAS_IMMDT ? in->imm : 0, out->imm);
	KUNIT_EXPECT_EQ(test, f & SOFTCM_IB_HAS_IETH ? in->ieth_rkey : 0,
			out->ieth_rkey);
	if (f & SOFTCM_IB_HAS_DETH) {
		KUNIT_EXPECT_EQ(test, in->deth.qkey, out->deth.qkey);
		KUNIT_EXPECT_EQ(test, in->deth.src_qpn, out->deth.src_qpn);
	} else {
		KUNIT_EXPECT_EQ(test, 0, out->deth.qkey);
	}
}

/* What the table must say for the opcodes rxe sends on RC, UC and UD. */
static const struct {
	u8 opcode;
	u8 hdr_len;
	u8 pos;
	bool payload;
} layout[] = {
	{ 0x00, 12, SOFTCM_IB_FIRST, true },	/* SEND FIRST */
	{ 0x01, 12, SOFTCM_IB_MIDDLE, true },
	{ 0x02, 12, SOFTCM_IB_LAST, true },
	{ 0x03, 16, SOFTCM_IB_LAST, true },	/* + ImmDt */
	{ 0x04, 12, SOFTCM_IB_ONLY, true },
	{ 0x05, 16, SOFTCM_IB_ONLY, true },
	{ 0x06, 28, SOFTCM_IB_FIRST, true },	/* WRITE FIRST: RETH */
	{ 0x07, 12, SOFTCM_IB_MIDDLE, true },
	{ 0x08, 12, SOFTCM_IB_LAST, true },
	{ 0x09, 16, SOFTCM_IB_LAST, true },
	{ 0x0a, 28, SOFTCM_IB_ONLY, true },
	{ 0x0b, 32, SOFTCM_IB_ONLY, true },	/* RETH + ImmDt */
	{ 0x0c, 28, SOFTCM_IB_ONLY, false },	/* READ REQUEST */
	{ 0x0d, 16, SOFTCM_IB_FIRST, true },	/* READ RESPONSE FIRST: AETH */
	{ 0x0e, 12, SOFTCM_IB_MIDDLE, true },
	{ 0x0f, 16, SOFTCM_IB_LAST, true },
	{ 0x10, 16, SOFTCM_IB_ONLY, true },
	{ 0x11, 16, SOFTCM_IB_ONLY, false },	/* ACK */
	{ 0x12, 24, SOFTCM_IB_ONLY, false },	/* AETH + AtomicAckETH */
	{ 0x13, 40, SOFTCM_IB_ONLY, false },	/* CMP_SWAP: AtomicETH */
	{ 0x14, 40, SOFTCM_IB_ONLY, false },
	{ 0x16, 16, SOFTCM_IB_LAST, true },	/* + IETH */
	{ 0x17, 16, SOFTCM_IB_ONLY, true },
	{ 0x20, 12, SOFTCM_IB_FIRST, true },	/* UC */
	{ 0x21, 12, SOFTCM_IB_MIDDLE, true },
	{ 0x22, 12, SOFTCM_IB_LAST, true },
	{ 0x23, 16, SOFTCM_IB_LAST, true },
	{ 0x24, 12, SOFTCM_IB_ONLY, true },
	{ 0x25, 16, SOFTCM_IB_ONLY, true },
	{ 0x26, 28, SOFTCM_IB_FIRST, true },
	{ 0x27, 12, SOFTCM_IB_MIDDLE, true },
	{ 0x28, 12, SOFTCM_IB_LAST, true },
	{ 0x29, 16, SOFTCM_IB_LAST, true },
	{ 0x2a, 28, SOFTCM_IB_ONLY, true },
	{ 0x2b, 32, SOFTCM_IB_ONLY, true },
	{ 0x64, 20, SOFTCM_IB_ONLY, true },	/* UD SEND ONLY: DETH */
	{ 0x65, 24, SOFTCM_IB_ONLY, true },
};

/* The headers' length the flags say. */
static unsigned int flags_len(u16 f)
{
	return SOFTCM_IB_BTH +
	       (f & SOFTCM_IB_HAS_DETH ? SOFTCM_IB_DETH : 0) +
	       (f & SOFTCM_IB_HAS_RETH ? SOFTCM_IB_RETH : 0) +
	       (f & SOFTCM_IB_HAS_ATOMICETH ? SOFTCM_IB_ATOMICETH : 0) +
	       (f & SOFTCM_IB_HAS_AETH ? SOFTCM_IB_AETH : 0) +
	       (f & SOFTCM_IB_HAS_ATOMICACK ? SOFTCM_IB_ATOMICACKETH : 0) +
	       (f & SOFTCM_IB_HAS_IMMDT ? SOFTCM_IB_IMMDT : 0) +
	       (f & SOFTCM_IB_HAS_IETH ? SOFTCM_IB_IETH : 0);
}

static void table_is_the_ibtas(struct kunit *test)
{
	unsigned int i, known = 0, op;

	for (i = 0; i < ARRAY_SIZE(layout); i++) {
		const struct softcm_ib_op *o = softcm_ib_op(layout[i].opcode);

		KUNIT_ASSERT_NOT_NULL_MSG(test, o, "opcode %#x", layout[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, flags_len(o->flags), o->hdr_len,
				    "opcode %#x", layout[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, layout[i].hdr_len, o->hdr_len,
				    "opcode %#x", layout[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, layout[i].pos, o->pos,
				    "opcode %#x", layout[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, layout[i].payload,
				    !!(o->flags & SOFTCM_IB_HAS_PAYLOAD),
				    "opcode %#x", layout[i].opcode);
		/* the responses are READ RESPONSE to ATOMIC ACKNOWLEDGE */
		KUNIT_EXPECT_EQ_MSG(test,
				    layout[i].opcode < 0x0d || layout[i].opcode > 0x12,
				    !!(o->flags & SOFTCM_IB_REQUEST),
				    "opcode %#x", layout[i].opcode);
	}
	/* ...and knows nothing else: RD, CNP, FLUSH, ATOMIC WRITE. */
	for (op = 0; op < 256; op++)
		if (softcm_ib_op(op))
			known++;
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(layout), known);
	KUNIT_EXPECT_NULL(test, softcm_ib_op(0x15));
	KUNIT_EXPECT_NULL(test, softcm_ib_op(0x1c));
	KUNIT_EXPECT_NULL(test, softcm_ib_op(0x40));
	KUNIT_EXPECT_NULL(test, softcm_ib_op(0x81));
}

/* Every known opcode, with payloads of every pad count: build, parse back. */
static void every_opcode_round_trips(struct kunit *test)
{
	static const unsigned int sizes[] = { 0, 1, 2, 3, 4, 255, 256, 1024 };
	u8 *buf = kunit_kzalloc(test, 2048, GFP_KERNEL);
	struct softcm_ib_hdr in, out;
	unsigned int i, s;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(layout); i++) {
		for (s = 0; s < ARRAY_SIZE(sizes); s++) {
			unsigned int pay = layout[i].payload ? sizes[s] : 0;
			u8 pos = layout[i].pos;
			int hlen, ret;

			if ((pos == SOFTCM_IB_FIRST || pos == SOFTCM_IB_MIDDLE) &&
			    (pay % 4 || !pay))
				continue;
			/* an empty request LAST is refused: below */
			if (pos == SOFTCM_IB_LAST && layout[i].opcode != 0x0f && !pay)
				continue;
			fill(&in, layout[i].opcode, pay);
			if (layout[i].opcode == 0x11 || layout[i].opcode == 0x12)
				in.se = false;
			memset(buf, 0xee, 2048);
			hlen = softcm_ib_build(buf, 2048, &in);
			KUNIT_ASSERT_EQ_MSG(test, layout[i].hdr_len, hlen,
					    "opcode %#x", in.opcode);
			KUNIT_EXPECT_EQ(test, -pay & 3, in.pad);
			/* rxe's TVer 0 and the BECN/FECN byte 0 */
			KUNIT_EXPECT_EQ(test, 0, buf[1] & 0x0f);
			KUNIT_EXPECT_EQ(test, 0, buf[4]);
			memset(buf + hlen, 0, pay + in.pad);
			ret = softcm_ib_parse(buf, hlen, hlen + pay + in.pad + 4, &out);
			KUNIT_ASSERT_EQ_MSG(test, 0, ret, "opcode %#x payload %u",
					    in.opcode, pay);
			KUNIT_EXPECT_PTR_EQ(test, in.op, out.op);
			expect_same(test, &in, &out);
		}
	}
}

/*
 * The IBTA's byte positions, written out: an RC WRITE ONLY with immediate
 * of 5 bytes (pad 3), a COMPARE SWAP at the top PSN, and a NAK.
 */
static void offsets_are_the_wires(struct kunit *test)
{
	static const u8 write_imm[32] = {
		0x0b, 0xb0, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0x01, 0x02, 0x03,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x10, 0x00, 0x00,	/* VA */
		0x00, 0x00, 0x12, 0x34,				/* rkey */
		0x00, 0x00, 0x00, 0x05,				/* DMA len */
		0xca, 0xfe, 0xf0, 0x0d,				/* ImmDt */
	};
	static const u8 cswap[40] = {
		0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0xff, 0xff, 0xff,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x10, 0x00, 0x08,
		0x00, 0x00, 0x12, 0x34,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,	/* swap */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,	/* compare */
	};
	static const u8 nak[16] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x00, 0x00, 0x00, 0x07,
		0x62, 0x00, 0x00, 0x2a,				/* NAK rem. access */
	};
	u8 pkt[48] = {};
	struct softcm_ib_hdr h;

	memcpy(pkt, write_imm, sizeof(write_imm));
	KUNIT_ASSERT_EQ(test, 0, softcm_ib_parse(pkt, sizeof(pkt), 32 + 8 + 4, &h));
	KUNIT_EXPECT_TRUE(test, h.se);
	KUNIT_EXPECT_EQ(test, 3, h.pad);
	KUNIT_EXPECT_EQ(test, 5, h.payload_len);
	KUNIT_EXPECT_EQ(test, 0x11, h.dqpn);
	KUNIT_EXPECT_TRUE(test, h.ackreq);
	KUNIT_EXPECT_EQ(test, 0x010203, h.psn);
	KUNIT_EXPECT_EQ(test, 0x7f0000100000ull, h.reth.va);
	KUNIT_EXPECT_EQ(test, 0x1234, h.reth.rkey);
	KUNIT_EXPECT_EQ(test, 5, h.reth.len);
	KUNIT_EXPECT_EQ(test, cpu_to_be32(0xcafef00d), h.imm);

	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt, cswap, sizeof(cswap));
	KUNIT_ASSERT_EQ(test, 0, softcm_ib_parse(pkt, sizeof(pkt), 44, &h));
	KUNIT_EXPECT_EQ(test, 0xffffff, h.psn);
	KUNIT_EXPECT_EQ(test, 0x7f0000100008ull, h.atomic.va);
	KUNIT_EXPECT_EQ(test, 0x1234, h.atomic.rkey);
	KUNIT_EXPECT_EQ(test, 2, h.atomic.swap_add);
	KUNIT_EXPECT_EQ(test, 1, h.atomic.compare);

	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt, nak, sizeof(nak));
	KUNIT_ASSERT_EQ(test, 0, softcm_ib_parse(pkt, sizeof(pkt), 20, &h));
	KUNIT_EXPECT_FALSE(test, h.ackreq);
	KUNIT_EXPECT_EQ(test, SOFTCM_AETH_NAK, softcm_aeth_type(h.aeth.syndrome));
	KUNIT_EXPECT_EQ(test, SOFTCM_NAK_REMOTE_ACCESS_ERR,
			softcm_aeth_value(h.aeth.syndrome));
	KUNIT_EXPECT_EQ(test, 42, h.aeth.msn);
}

/*
 * The atomics' and SEND with invalidate's headers, byte by byte both
 * ways: a FETCH ADD as softcm's requester builds it (the addend in the
 * swap/add field, compare 0: rxe's), an ATOMIC ACKNOWLEDGE with its
 * original value after the AETH, and a SEND ONLY WITH INVALIDATE whose
 * IETH follows the BTH.
 */
static void atomics_and_ieth_on_the_wire(struct kunit *test)
{
	static const u8 fadd[40] = {
		0x14, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22,
		0x80, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x7f, 0xff, 0x12, 0x34, 0x56, 0x78,	/* VA */
		0xab, 0xcd, 0xef, 0x01,				/* rkey */
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,	/* add */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* compare */
	};
	static const u8 aack[24] = {
		0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x33,
		0x00, 0x00, 0x00, 0x05,
		0x1f, 0x00, 0x00, 0x09,				/* ACK, MSN 9 */
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,	/* original */
	};
	static const u8 sinv[16] = {
		0x17, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x44,
		0x80, 0x00, 0x00, 0x06,
		0x11, 0x22, 0x33, 0x44,				/* IETH */
	};
	struct softcm_ib_hdr h = {
		.opcode = SOFTCM_IB_FETCH_ADD, .pkey = 0xffff, .dqpn = 0x22, .psn = 5,
		.ackreq = true,
		.atomic = { .va = 0x7fff12345678ull, .rkey = 0xabcdef01,
			    .swap_add = 0x8000000000000001ull },
	};
	u8 buf[64] = {}, pkt[64] = {};

	KUNIT_ASSERT_EQ(test, 40, softcm_ib_build(buf, sizeof(buf), &h));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, fadd, sizeof(fadd)));

	memcpy(pkt, aack, sizeof(aack));
	KUNIT_ASSERT_EQ(test, 0, softcm_ib_parse(pkt, sizeof(pkt), 28, &h));
	KUNIT_EXPECT_EQ(test, SOFTCM_IB_ATOMIC_ACKNOWLEDGE, h.opcode);
	KUNIT_EXPECT_EQ(test, 5, h.psn);
	KUNIT_EXPECT_EQ(test, 0x1f, h.aeth.syndrome);
	KUNIT_EXPECT_EQ(test, 9, h.aeth.msn);
	KUNIT_EXPECT_EQ(test, 0x0123456789abcdefull, h.atomic_orig);
	KUNIT_EXPECT_EQ(test, 0, h.payload_len);
	/* and built back to the same bytes */
	memset(buf, 0, sizeof(buf));
	KUNIT_ASSERT_EQ(test, 24, softcm_ib_build(buf, sizeof(buf), &h));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, aack, sizeof(aack)));

	/* a SEND ONLY WITH INVALIDATE of 1 byte: pad 3 */
	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt, sinv, sizeof(sinv));
	KUNIT_ASSERT_EQ(test, 0, softcm_ib_parse(pkt, sizeof(pkt), 16 + 4 + 4, &h));
	KUNIT_EXPECT_EQ(test, 0x11223344, h.ieth_rkey);
	KUNIT_EXPECT_EQ(test, 1, h.payload_len);
	KUNIT_EXPECT_EQ(test, 6, h.psn);
	memset(buf, 0, sizeof(buf));
	KUNIT_ASSERT_EQ(test, 16, softcm_ib_build(buf, sizeof(buf), &h));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, sinv, sizeof(sinv)));
}

/* A valid RC SEND ONLY of 8 bytes and a WRITE ONLY of 8, to break. */
static const u8 send8[12] = {
	0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x01,
};

static int parse_modified(unsigned int off, u8 val, unsigned int len)
{
	struct softcm_ib_hdr h;
	u8 pkt[64] = {};

	memcpy(pkt, send8, sizeof(send8));
	pkt[off] = val;
	return softcm_ib_parse(pkt, sizeof(pkt), len, &h);
}

static void malformed_is_refused(struct kunit *test)
{
	static const struct {
		unsigned int off;
		u8 val;
		unsigned int len;
		int err;
	} cases[] = {
		{ 0, 0x04, 12 + 8 + 4, 0 },		/* the valid one */
		{ 0, 0x04, 12 + 0 + 4, 0 },		/* an empty SEND */
		{ 0, 0x04, 0, -EMSGSIZE },
		{ 0, 0x04, 12, -EMSGSIZE },		/* no ICRC */
		{ 0, 0x04, 15, -EMSGSIZE },
		{ 0, 0x04, 12 + 8 + 4 + 2, -EMSGSIZE },	/* not whole words */
		{ 0, 0x15, 12 + 8 + 4, -EOPNOTSUPP },	/* reserved RC opcode */
		{ 0, 0x1c, 12 + 8 + 4, -EOPNOTSUPP },	/* FLUSH */
		{ 0, 0x44, 12 + 8 + 4, -EOPNOTSUPP },	/* RD */
		{ 0, 0x81, 12 + 8 + 4, -EOPNOTSUPP },	/* CNP */
		{ 0, 0xff, 12 + 8 + 4, -EOPNOTSUPP },
		{ 1, 0x01, 12 + 8 + 4, -EPROTO },	/* TVer 1 */
		{ 1, 0x0f, 12 + 8 + 4, -EPROTO },
		{ 1, 0x30, 12 + 0 + 4, -EMSGSIZE },	/* pad 3 of nothing */
		{ 1, 0x30, 12 + 4 + 4, 0 },		/* one byte, pad 3 */
		{ 1, 0x40, 12 + 8 + 4, 0 },		/* MigReq: ignored */
		{ 4, 0xc0, 12 + 8 + 4, 0 },		/* BECN/FECN: ignored */
		{ 0, 0x00, 12 + 0 + 4, -EMSGSIZE },	/* empty FIRST */
		{ 0, 0x01, 12 + 0 + 4, -EMSGSIZE },	/* empty MIDDLE */
		{ 7, 0x00, 12 + 8 + 4, -ENOENT },	/* QP 0 */
		{ 0, 0x0c, 12 + 8 + 4, -EMSGSIZE },	/* READ REQUEST short */
		{ 0, 0x13, 12 + 28 + 4 + 4, -EMSGSIZE }, /* atomic with data */
		{ 0, 0x11, 12 + 4 + 4 + 4, -EMSGSIZE },	/* ACK with data */
		{ 0, 0x0b, 12 + 16 + 4, -EMSGSIZE },	/* no ImmDt */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, cases[i].err,
				    parse_modified(cases[i].off, cases[i].val,
						   cases[i].len),
				    "case %u", i);
}

/* Pad counts where the opcode allows none, and a short contiguous part. */
static void pad_and_contiguity(struct kunit *test)
{
	struct softcm_ib_hdr h;
	u8 pkt[64] = {};

	memcpy(pkt, send8, sizeof(send8));
	pkt[0] = 0x00;			/* SEND FIRST, pad 1 */
	pkt[1] = 0x10;
	KUNIT_EXPECT_EQ(test, -EPROTO, softcm_ib_parse(pkt, 64, 12 + 8 + 4, &h));
	pkt[0] = 0x07;			/* WRITE MIDDLE, pad 1 */
	KUNIT_EXPECT_EQ(test, -EPROTO, softcm_ib_parse(pkt, 64, 12 + 8 + 4, &h));
	pkt[0] = 0x11;			/* ACK, pad 1 */
	KUNIT_EXPECT_EQ(test, -EPROTO, softcm_ib_parse(pkt, 64, 12 + 4 + 4, &h));
	pkt[1] = 0;
	KUNIT_EXPECT_EQ(test, 0, softcm_ib_parse(pkt, 64, 12 + 4 + 4, &h));

	/* The headers must be contiguous: 16 for an ACK, not 15. */
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_ib_parse(pkt, 15, 12 + 4 + 4, &h));
	KUNIT_EXPECT_EQ(test, 0, softcm_ib_parse(pkt, 16, 12 + 4 + 4, &h));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_ib_parse(pkt, 11, 64, &h));

	/* A WRITE ONLY carries exactly the RETH's length. */
	pkt[0] = 0x0a;
	put_unaligned_be32(8, pkt + 12 + 12);
	KUNIT_EXPECT_EQ(test, 0, softcm_ib_parse(pkt, 64, 28 + 8 + 4, &h));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_ib_parse(pkt, 64, 28 + 12 + 4, &h));
	/* A WRITE FIRST's RETH covers the whole message: no such check. */
	pkt[0] = 0x06;
	KUNIT_EXPECT_EQ(test, 0, softcm_ib_parse(pkt, 64, 28 + 4 + 4, &h));
}

/*
 * A LAST request carries at least one byte, as rxe's responder requires;
 * an empty READ RESPONSE LAST passes, as rxe's requester takes it.
 */
static void empty_last_request_is_refused(struct kunit *test)
{
	static const struct {
		u8 opcode;
		unsigned int hdr_len;
	} last[] = {
		{ 0x02, 12 }, { 0x03, 16 }, { 0x08, 12 }, { 0x09, 16 },
		{ 0x16, 16 }, { 0x22, 12 }, { 0x23, 16 }, { 0x28, 12 },
		{ 0x29, 16 },
	};
	struct softcm_ib_hdr h;
	unsigned int i;
	u8 pkt[64];

	for (i = 0; i < ARRAY_SIZE(last); i++) {
		unsigned int len = last[i].hdr_len + 4;

		memset(pkt, 0, sizeof(pkt));
		memcpy(pkt, send8, sizeof(send8));
		pkt[0] = last[i].opcode;
		KUNIT_EXPECT_EQ_MSG(test, -EMSGSIZE,
				    softcm_ib_parse(pkt, sizeof(pkt), len, &h),
				    "opcode %#x", last[i].opcode);
		/* one byte and pad 3 is a LAST */
		pkt[1] = 0x30;
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    softcm_ib_parse(pkt, sizeof(pkt), len + 4, &h),
				    "opcode %#x", last[i].opcode);
		KUNIT_EXPECT_EQ(test, 1, h.payload_len);
	}
	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt, send8, sizeof(send8));
	pkt[0] = 0x0f;			/* READ RESPONSE LAST: AETH */
	KUNIT_EXPECT_EQ(test, 0, softcm_ib_parse(pkt, sizeof(pkt), 16 + 4, &h));
	KUNIT_EXPECT_EQ(test, 0, h.payload_len);
}

/* A RETH's DMA length is at most 2^31, the largest message. */
static void dma_length_beyond_2g_is_refused(struct kunit *test)
{
	static const struct {
		u8 opcode;
		unsigned int len;	/* BTH + RETH + payload + ICRC */
	} reth[] = {
		{ 0x06, 28 + 4 + 4 },	/* RC WRITE FIRST */
		{ 0x26, 28 + 4 + 4 },	/* UC WRITE FIRST */
		{ 0x0c, 28 + 4 },	/* READ REQUEST */
	};
	static const struct {
		u32 dma_len;
		int err;
	} lens[] = {
		{ 0x80000000, 0 },
		{ 0x80000001, -EMSGSIZE },
		{ 0xffffffff, -EMSGSIZE },
	};
	struct softcm_ib_hdr h;
	unsigned int i, l;
	u8 pkt[64];

	for (i = 0; i < ARRAY_SIZE(reth); i++) {
		for (l = 0; l < ARRAY_SIZE(lens); l++) {
			memset(pkt, 0, sizeof(pkt));
			memcpy(pkt, send8, sizeof(send8));
			pkt[0] = reth[i].opcode;
			put_unaligned_be32(lens[l].dma_len, pkt + 12 + 12);
			KUNIT_EXPECT_EQ_MSG(test, lens[l].err,
					    softcm_ib_parse(pkt, sizeof(pkt),
							    reth[i].len, &h),
					    "opcode %#x DMA length %#x",
					    reth[i].opcode, lens[l].dma_len);
		}
	}
}

static void aeth_syndromes(struct kunit *test)
{
	struct softcm_ib_hdr h;
	u8 pkt[16] = {};
	unsigned int s;
	int ret;

	KUNIT_EXPECT_EQ(test, 0x1f, softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
	KUNIT_EXPECT_EQ(test, 0x05, softcm_aeth_ack(5));
	KUNIT_EXPECT_EQ(test, 0x20, softcm_aeth_rnr_nak(0));
	KUNIT_EXPECT_EQ(test, 0x32, softcm_aeth_rnr_nak(18));
	KUNIT_EXPECT_EQ(test, 0x60, softcm_aeth_nak(SOFTCM_NAK_PSN_SEQ_ERR));
	KUNIT_EXPECT_EQ(test, 0x61, softcm_aeth_nak(SOFTCM_NAK_INVALID_REQUEST));
	KUNIT_EXPECT_EQ(test, 0x62, softcm_aeth_nak(SOFTCM_NAK_REMOTE_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, 0x63, softcm_aeth_nak(SOFTCM_NAK_REMOTE_OP_ERR));
	KUNIT_EXPECT_EQ(test, SOFTCM_AETH_RNR_NAK, softcm_aeth_type(0x3f));
	KUNIT_EXPECT_EQ(test, 31, softcm_aeth_value(0x3f));

	/* Every syndrome through the parser: the reserved ones refused. */
	memcpy(pkt, send8, sizeof(send8));
	pkt[0] = 0x11;
	for (s = 0; s < 256; s++) {
		bool valid = s < 0x40 || (s >= 0x60 && s <= 0x64);

		pkt[12] = s;
		ret = softcm_ib_parse(pkt, sizeof(pkt), 20, &h);
		KUNIT_EXPECT_EQ_MSG(test, valid ? 0 : -EPROTO, ret,
				    "syndrome %#x", s);
		if (!ret)
			KUNIT_EXPECT_EQ(test, s, h.aeth.syndrome);
	}
}

static void rnr_timer_codes(struct kunit *test)
{
	/* IBTA Table 45: 0 is the longest, 655.36 ms; 25 is 61.44 ms. */
	KUNIT_EXPECT_EQ(test, 655360, softcm_rnr_timer_us(0));
	KUNIT_EXPECT_EQ(test, 10, softcm_rnr_timer_us(1));
	KUNIT_EXPECT_EQ(test, 60, softcm_rnr_timer_us(5));
	KUNIT_EXPECT_EQ(test, 640, softcm_rnr_timer_us(12));
	KUNIT_EXPECT_EQ(test, 10240, softcm_rnr_timer_us(20));
	KUNIT_EXPECT_EQ(test, 61440, softcm_rnr_timer_us(25));
	KUNIT_EXPECT_EQ(test, 491520, softcm_rnr_timer_us(31));
	/* Only the low five bits are the code, as in the syndrome. */
	KUNIT_EXPECT_EQ(test, 655360, softcm_rnr_timer_us(0x20));
	/* From code 2 on, each is 1.5 or 4/3 times the one before. */
	{
		unsigned int c;

		for (c = 2; c < 32; c++)
			KUNIT_EXPECT_GT_MSG(test, softcm_rnr_timer_us(c),
					    softcm_rnr_timer_us(c - 1), "code %u", c);
	}
}

static void psn_wraps(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 0, softcm_psn_cmp(5, 5));
	KUNIT_EXPECT_LT(test, softcm_psn_cmp(4, 5), 0);
	KUNIT_EXPECT_GT(test, softcm_psn_cmp(5, 4), 0);
	/* Across the wrap: 0 follows 0xffffff. */
	KUNIT_EXPECT_GT(test, softcm_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_LT(test, softcm_psn_cmp(0xffffff, 0), 0);
	KUNIT_EXPECT_GT(test, softcm_psn_cmp(0x7f, 0xffff80), 0);
	KUNIT_EXPECT_LT(test, softcm_psn_cmp(0xffff80, 0x7f), 0);
	/* Half the space apart is the edge; one less is still "after". */
	KUNIT_EXPECT_GT(test, softcm_psn_cmp(0x7fffff, 0), 0);
	KUNIT_EXPECT_LT(test, softcm_psn_cmp(0x800000, 0), 0);
	KUNIT_EXPECT_LT(test, softcm_psn_cmp(0, 0x800000), 0);
	/* Bits above 24 do not count. */
	KUNIT_EXPECT_EQ(test, 0, softcm_psn_cmp(0x1000005, 5));
	KUNIT_EXPECT_EQ(test, 0, softcm_psn_add(0xffffff, 1));
	KUNIT_EXPECT_EQ(test, 0x7f, softcm_psn_add(0xffff80, 0xff));
	KUNIT_EXPECT_EQ(test, 0xff, softcm_psn_diff(0x7f, 0xffff80));
	KUNIT_EXPECT_EQ(test, 1, softcm_psn_diff(0, 0xffffff));
}

static struct kunit_case ibhdr_cases[] = {
	KUNIT_CASE(table_is_the_ibtas),
	KUNIT_CASE(every_opcode_round_trips),
	KUNIT_CASE(offsets_are_the_wires),
	KUNIT_CASE(atomics_and_ieth_on_the_wire),
	KUNIT_CASE(malformed_is_refused),
	KUNIT_CASE(pad_and_contiguity),
	KUNIT_CASE(empty_last_request_is_refused),
	KUNIT_CASE(dma_length_beyond_2g_is_refused),
	KUNIT_CASE(aeth_syndromes),
	KUNIT_CASE(rnr_timer_codes),
	KUNIT_CASE(psn_wraps),
	{}
};

static struct kunit_suite ibhdr_suite = {
	.name = "softcm_ibhdr",
	.test_cases = ibhdr_cases,
};

kunit_test_suite(ibhdr_suite);
