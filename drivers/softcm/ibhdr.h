/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IBTA transport headers of the RoCEv2 data path (IBTA Vol. 1
 * chapter 9.2-9.4): the BTH and the extension headers each opcode carries,
 * with the numbers of the specification, as rdma_rxe and RoCE NICs put
 * them on the wire.  Pure functions: a parser that checks a packet's
 * length against its opcode before it reads a field, and an encoder.
 */
#ifndef _SOFTCM_IBHDR_H
#define _SOFTCM_IBHDR_H

#include <linux/sizes.h>
#include <linux/types.h>

/* Header sizes in bytes (IBTA 9.2-9.4, 9.8.3.2). */
enum {
	SOFTCM_IB_BTH		= 12,
	SOFTCM_IB_RETH		= 16,
	SOFTCM_IB_AETH		= 4,
	SOFTCM_IB_ATOMICETH	= 28,
	SOFTCM_IB_ATOMICACKETH	= 8,
	SOFTCM_IB_IMMDT		= 4,
	SOFTCM_IB_IETH		= 4,
	SOFTCM_IB_DETH		= 8,
	SOFTCM_IB_ICRC		= 4,
	/* BTH + AtomicETH, the longest header the table knows */
	SOFTCM_IB_HDR_MAX	= SOFTCM_IB_BTH + SOFTCM_IB_ATOMICETH,
};

/* The IBTA's largest message, and so a RETH's largest DMA length. */
#define SOFTCM_IB_MAX_MSG	SZ_2G

/* Opcodes (IBTA Table 38): the transport in bits 7-5, the operation below. */
enum softcm_ib_opcode {
	SOFTCM_IB_RC			= 0x00,
	SOFTCM_IB_UC			= 0x20,
	SOFTCM_IB_UD			= 0x60,

	SOFTCM_IB_SEND_FIRST			= 0x00,
	SOFTCM_IB_SEND_MIDDLE			= 0x01,
	SOFTCM_IB_SEND_LAST			= 0x02,
	SOFTCM_IB_SEND_LAST_IMM			= 0x03,
	SOFTCM_IB_SEND_ONLY			= 0x04,
	SOFTCM_IB_SEND_ONLY_IMM			= 0x05,
	SOFTCM_IB_WRITE_FIRST			= 0x06,
	SOFTCM_IB_WRITE_MIDDLE			= 0x07,
	SOFTCM_IB_WRITE_LAST			= 0x08,
	SOFTCM_IB_WRITE_LAST_IMM		= 0x09,
	SOFTCM_IB_WRITE_ONLY			= 0x0a,
	SOFTCM_IB_WRITE_ONLY_IMM		= 0x0b,
	SOFTCM_IB_READ_REQUEST			= 0x0c,
	SOFTCM_IB_READ_RESPONSE_FIRST		= 0x0d,
	SOFTCM_IB_READ_RESPONSE_MIDDLE		= 0x0e,
	SOFTCM_IB_READ_RESPONSE_LAST		= 0x0f,
	SOFTCM_IB_READ_RESPONSE_ONLY		= 0x10,
	SOFTCM_IB_ACKNOWLEDGE			= 0x11,
	SOFTCM_IB_ATOMIC_ACKNOWLEDGE		= 0x12,
	SOFTCM_IB_COMPARE_SWAP			= 0x13,
	SOFTCM_IB_FETCH_ADD			= 0x14,
	SOFTCM_IB_SEND_LAST_INV			= 0x16,
	SOFTCM_IB_SEND_ONLY_INV			= 0x17,
};

/* What an opcode carries (struct softcm_ib_op.flags). */
enum {
	SOFTCM_IB_HAS_RETH	= 1 << 0,
	SOFTCM_IB_HAS_AETH	= 1 << 1,
	SOFTCM_IB_HAS_ATOMICETH	= 1 << 2,
	SOFTCM_IB_HAS_ATOMICACK	= 1 << 3,
	SOFTCM_IB_HAS_IMMDT	= 1 << 4,
	SOFTCM_IB_HAS_IETH	= 1 << 5,
	SOFTCM_IB_HAS_DETH	= 1 << 6,
	SOFTCM_IB_HAS_PAYLOAD	= 1 << 7,
	/* a request (requester to responder) rather than a response */
	SOFTCM_IB_REQUEST	= 1 << 8,
};

/* Where a packet sits in its message. */
enum softcm_ib_pos {
	SOFTCM_IB_ONLY,
	SOFTCM_IB_FIRST,
	SOFTCM_IB_MIDDLE,
	SOFTCM_IB_LAST,
};

struct softcm_ib_op {
	u16 flags;
	u8 pos;		/* enum softcm_ib_pos */
	u8 hdr_len;	/* BTH and extension headers */
};

/* BTH flags, byte 1, and the AckReq bit of byte 8 (IBTA 9.2). */
enum {
	SOFTCM_IB_BTH_SE	= 0x80,
	SOFTCM_IB_BTH_MIG	= 0x40,
	SOFTCM_IB_BTH_PAD	= 0x30,
	SOFTCM_IB_BTH_TVER	= 0x0f,
	SOFTCM_IB_BTH_ACKREQ	= 0x80,
};

/*
 * AETH syndrome (IBTA 9.7.5.2.1, Table 42): bit 7 reserved, bits 6-5 the
 * type, bits 4-0 the credit count, RNR timer code or NAK code.
 */
enum {
	SOFTCM_AETH_ACK			= 0x00,
	SOFTCM_AETH_RNR_NAK		= 0x20,
	SOFTCM_AETH_NAK			= 0x60,
	SOFTCM_AETH_TYPE_MASK		= 0x60,
	SOFTCM_AETH_VALUE_MASK		= 0x1f,
	/* an ACK with no end-to-end credits: what rxe always sends */
	SOFTCM_AETH_CREDITS_INVALID	= 0x1f,

	SOFTCM_NAK_PSN_SEQ_ERR		= 0,
	SOFTCM_NAK_INVALID_REQUEST	= 1,
	SOFTCM_NAK_REMOTE_ACCESS_ERR	= 2,
	SOFTCM_NAK_REMOTE_OP_ERR	= 3,
	SOFTCM_NAK_INVALID_RD_REQUEST	= 4,
};

static inline u8 softcm_aeth_ack(u8 credits)
{
	return SOFTCM_AETH_ACK | (credits & SOFTCM_AETH_VALUE_MASK);
}

static inline u8 softcm_aeth_rnr_nak(u8 timer)
{
	return SOFTCM_AETH_RNR_NAK | (timer & SOFTCM_AETH_VALUE_MASK);
}

static inline u8 softcm_aeth_nak(u8 code)
{
	return SOFTCM_AETH_NAK | (code & SOFTCM_AETH_VALUE_MASK);
}

static inline u8 softcm_aeth_type(u8 syndrome)
{
	return syndrome & SOFTCM_AETH_TYPE_MASK;
}

static inline u8 softcm_aeth_value(u8 syndrome)
{
	return syndrome & SOFTCM_AETH_VALUE_MASK;
}

/*
 * One packet's headers in host order.  Which extension members mean
 * something is said by op->flags; the others are zero after a parse.
 */
struct softcm_ib_hdr {
	const struct softcm_ib_op *op;	/* set by the parser */
	u8 opcode;
	bool se;
	bool mig;
	bool ackreq;
	u8 pad;				/* set by the parser */
	u16 pkey;
	u32 dqpn;
	u32 psn;
	unsigned int payload_len;	/* without the pad */

	struct {
		u64 va;
		u32 rkey;
		u32 len;
	} reth;
	struct {
		u8 syndrome;
		u32 msn;
	} aeth;
	struct {
		u64 va;
		u32 rkey;
		u64 swap_add;
		u64 compare;
	} atomic;
	u64 atomic_orig;		/* AtomicAckETH */
	__be32 imm;			/* ImmDt, as the wire has it */
	u32 ieth_rkey;
	struct {
		u32 qkey;
		u32 src_qpn;
	} deth;
};

const struct softcm_ib_op *softcm_ib_op(u8 opcode);
int softcm_ib_parse(const u8 *pkt, unsigned int avail, unsigned int len,
		    struct softcm_ib_hdr *h);
int softcm_ib_build(u8 *buf, unsigned int size, struct softcm_ib_hdr *h);
u32 softcm_rnr_timer_us(u8 code);

#endif /* _SOFTCM_IBHDR_H */
