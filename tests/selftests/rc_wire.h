/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RC packets crafted in userspace, for tests that play a QP's peer with
 * a raw socket: a BTH and the extension headers an opcode carries
 * (RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), the payload, the
 * pad and the ICRC, as rxe puts them on the wire, in a struct wire of
 * wire_helpers.h.  Nothing here checks what it is asked to build: a
 * test may make any field wrong on purpose.
 *
 * Include after wire_helpers.h.
 */
#ifndef _SOFTCM_RC_WIRE_H
#define _SOFTCM_RC_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Opcodes (IBTA Table 38, RC) and header sizes (IBTA 9.2-9.4). */
enum {
	RC_SEND_FIRST = 0x00, RC_SEND_MIDDLE, RC_SEND_LAST, RC_SEND_LAST_IMM,
	RC_SEND_ONLY, RC_SEND_ONLY_IMM, RC_WRITE_FIRST, RC_WRITE_MIDDLE,
	RC_WRITE_LAST, RC_WRITE_LAST_IMM, RC_WRITE_ONLY, RC_WRITE_ONLY_IMM,
	RC_READ_REQUEST, RC_READ_RESPONSE_FIRST, RC_READ_RESPONSE_MIDDLE,
	RC_READ_RESPONSE_LAST, RC_READ_RESPONSE_ONLY, RC_ACKNOWLEDGE,
	RC_ATOMIC_ACKNOWLEDGE, RC_COMPARE_SWAP, RC_FETCH_ADD,
	RC_SEND_LAST_INV = 0x16, RC_SEND_ONLY_INV = 0x17,
};

enum {
	RC_BTH = 12, RC_RETH = 16, RC_AETH = 4, RC_ATOMICETH = 28, RC_ATOMICACKETH = 8,
	RC_IMMDT = 4, RC_IETH = 4, RC_ICRC = 4,
};

static inline uint8_t *rc_bth(struct wire *w)
{
	return w->pkt + 28;
}

static inline void rc_put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

/*
 * A packet from @src to QP @qpn at @dst: its BTH (opcode @op, @psn,
 * AckReq if @ackreq, the default P_Key) and nothing after it yet.
 * Returns where the extension headers go.
 */
static inline uint8_t *rc_init(struct wire *w, const char *src, const char *dst, uint8_t op,
			       uint32_t qpn, uint32_t psn, bool ackreq)
{
	uint8_t *bth = rc_bth(w);

	wire_init(w, src, dst, 0);
	memset(bth, 0, WIRE_MAX);
	bth[0] = op;
	bth[2] = 0xff;			/* P_Key 0xffff */
	bth[3] = 0xff;
	put32(bth + 4, qpn & 0xffffff);
	put32(bth + 8, psn & 0xffffff);
	if (ackreq)
		bth[8] |= 0x80;
	w->paylen = RC_BTH + RC_ICRC;
	return bth + RC_BTH;
}

/* @hdr bytes of BTH and extension headers, @pay of payload: the pad count and length. */
static inline void rc_set_len(struct wire *w, size_t hdr, size_t pay)
{
	uint8_t *bth = rc_bth(w);

	bth[1] = (bth[1] & ~0x30) | (-pay & 3) << 4;
	w->paylen = hdr + ((pay + 3) & ~(size_t)3) + RC_ICRC;
}

static inline void rc_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len)
{
	rc_put64(p, va);
	put32(p + 8, rkey);
	put32(p + 12, len);
}

static inline void rc_atomiceth(uint8_t *p, uint64_t va, uint32_t rkey, uint64_t swap_add,
				uint64_t compare)
{
	rc_put64(p, va);
	put32(p + 8, rkey);
	rc_put64(p + 12, swap_add);
	rc_put64(p + 20, compare);
}

/* An AETH: @syndrome (IBTA Table 42) and @msn. */
static inline void rc_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn)
{
	put32(p, (uint32_t)syndrome << 24 | (msn & 0xffffff));
}

/*
 * The IP and UDP lengths and, unless @keep_icrc, the ICRC over what the
 * packet holds now (any packet of at least a BTH and an ICRC).  Send it
 * with wire_send_on(fd, w, true) then, which leaves the ICRC alone.
 */
static inline void rc_finish(struct wire *w, bool keep_icrc)
{
	size_t len = 28 + w->paylen;
	uint32_t crc;

	wire_finish(w, true);
	if (!keep_icrc && w->paylen >= RC_BTH + RC_ICRC) {
		crc = icrc(w->pkt, len);
		memcpy(w->pkt + len - RC_ICRC, &crc, RC_ICRC);	/* host order, as rxe */
	}
}

#endif /* _SOFTCM_RC_WIRE_H */
