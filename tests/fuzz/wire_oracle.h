/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wire fuzzer's oracles: which counter of /proc/net/softcm_stats a
 * crafted packet must move, predicted from its bytes alone with the
 * checks softcm makes in the order it makes them; and snapshots of every
 * counter, so that a case can assert that what it expected moved, by
 * exactly that much, and that nothing else did.
 *
 * And the same for RC data packets (rc_predict()).
 *
 * Include after wire_helpers.h.
 */
#ifndef _SOFTCM_WIRE_ORACLE_H
#define _SOFTCM_WIRE_ORACLE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const rx_names[] = {
	"rx_req", "rx_mra", "rx_rej", "rx_rep", "rx_rtu",
	"rx_dreq", "rx_drep", "rx_sidr_req", "rx_sidr_rep",
};

#define SNAP_MAX	192
#define SNAP_ANY	LLONG_MIN	/* an expected delta: not checked */

/* Every counter of one softcm_stats file at one moment. */
struct snap {
	int n;
	char name[SNAP_MAX][40];
	long long v[SNAP_MAX];
};

/*
 * Gauges and settings, not counters: they are not compared.  Nor are the
 * neighbour counters: the kernel's neighbour updates (ARP refreshes of the
 * veth's peer) come when they come, not from the packets sent here.
 */
static inline bool snap_is_gauge(const char *name)
{
	static const char *const g[] = {
		"connections", "ids", "files", "socket_v4", "socket_v6", "udp_port",
		"neigh_updates", "neigh_wakeups", "held_requests",
	};

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		if (!strcmp(name, g[i]))
			return true;
	return false;
}

static inline int snap_take(int fd, struct snap *s)
{
	char buf[16384], *p, *nl;
	size_t used = 0;
	ssize_t n;

	while (used < sizeof(buf) - 1) {
		n = pread(fd, buf + used, sizeof(buf) - 1 - used, used);
		if (n < 0)
			return -1;
		if (!n)
			break;
		used += n;
	}
	buf[used] = '\0';
	s->n = 0;
	for (p = buf; *p && s->n < SNAP_MAX; p = nl + 1) {
		char *sp = strchr(p, ' ');

		nl = strchr(p, '\n');
		if (!nl || !sp || sp > nl || sp - p >= 40)
			break;
		memcpy(s->name[s->n], p, sp - p);
		s->name[s->n][sp - p] = '\0';
		s->v[s->n++] = strtoll(sp + 1, NULL, 10);
	}
	return 0;
}

/* A counter's value; 0 when absent (REJ reasons are listed once seen). */
static inline long long snap_get(const struct snap *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->v[i];
	return 0;
}

/* What one case must move, counter by counter; 0 for any other. */
struct expect {
	int n;
	const char *name[32];
	long long delta[32];
};

static inline void expect_add(struct expect *e, const char *name, long long delta)
{
	for (int i = 0; i < e->n; i++) {
		if (!strcmp(e->name[i], name)) {
			if (delta == SNAP_ANY || e->delta[i] == SNAP_ANY)
				e->delta[i] = SNAP_ANY;
			else
				e->delta[i] += delta;
			return;
		}
	}
	if (e->n < 32) {
		e->name[e->n] = name;
		e->delta[e->n++] = delta;
	}
}

static inline long long expect_get(const struct expect *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return e->delta[i];
	return 0;
}

static inline void expect_one(const struct expect *e, const char *name,
			      const struct snap *a, const struct snap *b,
			      char *out, size_t size, int *bad)
{
	long long want = expect_get(e, name), got;
	size_t used = strlen(out);

	if (want == SNAP_ANY)
		return;
	got = snap_get(b, name) - snap_get(a, name);
	if (got == want)
		return;
	(*bad)++;
	if (used < size)
		snprintf(out + used, size - used, " %s %+lld (want %+lld)", name, got, want);
}

/*
 * Compare two snapshots with the expectation: every counter in either,
 * and every expected one, must have moved by exactly what @e says.
 * Returns the number of counters that did not; @out lists them.
 */
static inline int expect_check(const struct expect *e, const struct snap *a,
			       const struct snap *b, char *out, size_t size)
{
	int bad = 0, i;

	out[0] = '\0';
	for (i = 0; i < b->n; i++)
		if (!snap_is_gauge(b->name[i]))
			expect_one(e, b->name[i], a, b, out, size, &bad);
	for (i = 0; i < a->n; i++) {
		bool seen = false;

		for (int j = 0; j < b->n && !seen; j++)
			seen = !strcmp(a->name[i], b->name[j]);
		if (!seen && !snap_is_gauge(a->name[i]))
			expect_one(e, a->name[i], a, b, out, size, &bad);
	}
	for (i = 0; i < e->n; i++) {
		bool seen = false;

		for (int j = 0; j < b->n && !seen; j++)
			seen = !strcmp(e->name[i], b->name[j]);
		for (int j = 0; j < a->n && !seen; j++)
			seen = !strcmp(e->name[i], a->name[j]);
		if (!seen)
			expect_one(e, e->name[i], a, b, out, size, &bad);
	}
	return bad;
}

/*
 * The data path's oracle: what softcm must count a crafted RC packet
 * under, predicted from its bytes alone with the checks transport.c,
 * rcrecv.c and ibhdr.c make, in their order.  A UDP payload shorter than
 * a BTH is drop_length; one the parser refuses (length against opcode,
 * pad, transport version, QPN 0, reserved AETH syndrome, RETH length
 * beyond 2^31 or not an ONLY's payload), an opcode that is not RC's, or
 * a P_Key that is not the default is drop_header; then a wrong ICRC is
 * drop_icrc; then a QPN that names no QP is drop_qpn.  Sent from the
 * QP's peer, every other packet reaches the QP: rc_rx_packets, its
 * payload (without the pad) in rc_rx_bytes, and a response's AETH
 * counted by its kind.  None of this depends on the QP's state, its
 * PSNs or the timing: the counts are exact.
 */
enum { RCP_REQ = 1, RCP_PAY = 2, RCP_RETH = 4, RCP_AETH = 8 };
enum { RCP_ONLY, RCP_FIRST, RCP_MIDDLE, RCP_LAST };

struct rc_op_info {
	uint8_t hdr;		/* BTH and extension headers; 0: not an RC opcode */
	uint8_t pos;
	uint8_t flags;
};

static const struct rc_op_info rc_ops[0x18] = {
	[0x00] = { 12, RCP_FIRST, RCP_REQ | RCP_PAY },
	[0x01] = { 12, RCP_MIDDLE, RCP_REQ | RCP_PAY },
	[0x02] = { 12, RCP_LAST, RCP_REQ | RCP_PAY },
	[0x03] = { 16, RCP_LAST, RCP_REQ | RCP_PAY },
	[0x04] = { 12, RCP_ONLY, RCP_REQ | RCP_PAY },
	[0x05] = { 16, RCP_ONLY, RCP_REQ | RCP_PAY },
	[0x06] = { 28, RCP_FIRST, RCP_REQ | RCP_PAY | RCP_RETH },
	[0x07] = { 12, RCP_MIDDLE, RCP_REQ | RCP_PAY },
	[0x08] = { 12, RCP_LAST, RCP_REQ | RCP_PAY },
	[0x09] = { 16, RCP_LAST, RCP_REQ | RCP_PAY },
	[0x0a] = { 28, RCP_ONLY, RCP_REQ | RCP_PAY | RCP_RETH },
	[0x0b] = { 32, RCP_ONLY, RCP_REQ | RCP_PAY | RCP_RETH },
	[0x0c] = { 28, RCP_ONLY, RCP_REQ | RCP_RETH },
	[0x0d] = { 16, RCP_FIRST, RCP_PAY | RCP_AETH },
	[0x0e] = { 12, RCP_MIDDLE, RCP_PAY },
	[0x0f] = { 16, RCP_LAST, RCP_PAY | RCP_AETH },
	[0x10] = { 16, RCP_ONLY, RCP_PAY | RCP_AETH },
	[0x11] = { 16, RCP_ONLY, RCP_AETH },
	[0x12] = { 24, RCP_ONLY, RCP_AETH },		/* AETH, AtomicAckETH */
	[0x13] = { 40, RCP_ONLY, RCP_REQ },		/* AtomicETH */
	[0x14] = { 40, RCP_ONLY, RCP_REQ },
	[0x16] = { 16, RCP_LAST, RCP_REQ | RCP_PAY },	/* IETH */
	[0x17] = { 16, RCP_ONLY, RCP_REQ | RCP_PAY },
};

struct rc_pred {
	/* drop_length, drop_header, drop_icrc, drop_qpn, rc_rx_packets */
	const char *counter;
	const char *aeth;	/* rc_acks_received, ..., or NULL */
	unsigned int payload;	/* what rc_rx_bytes adds */
	bool request;		/* a request that reached the QP */
	bool trusted;		/* its ICRC wrong, not checked (partial) */
};

/* A syndrome the IBTA defines (ibhdr.c's aeth_valid()). */
static inline bool rc_aeth_valid(uint8_t syn)
{
	if (syn & 0x80)
		return false;
	switch (syn & 0x60) {
	case 0x00:
	case 0x20:
		return true;
	case 0x60:
		return (syn & 0x1f) <= 4;
	}
	return false;
}

/*
 * What a packet finished by rc_finish() must move, sent to QP @qpn from its
 * peer.  @partial: it comes from a UDP socket of the peer's host over a
 * veth, its checksum still partial, so its ICRC is trusted (rcrecv.c's
 * icrc_ok()) and only its headers, QPN and PSN decide.
 */
static inline void rc_predict(const struct wire *w, uint32_t qpn, bool partial,
			      struct rc_pred *p)
{
	const uint8_t *bth = w->pkt + 28;
	const struct rc_op_info *op;
	size_t len = w->paylen, room;
	unsigned int pad, payload;
	uint32_t crc;
	uint8_t syn = 0;

	memset(p, 0, sizeof(*p));
	p->counter = "drop_length";
	if (len < 12)
		return;
	p->counter = "drop_header";
	if (len < 16 || len % 4 || bth[0] >= 0x18 || !rc_ops[bth[0]].hdr)
		return;
	op = &rc_ops[bth[0]];
	if (len < op->hdr + 4u || (bth[1] & 0x0f))
		return;
	pad = (bth[1] >> 4) & 3;
	room = len - op->hdr - 4;
	if (!(op->flags & RCP_PAY)) {
		if (pad || room)
			return;
	} else if (op->pos == RCP_FIRST || op->pos == RCP_MIDDLE) {
		if (pad || !room)
			return;
	} else if (pad > room) {
		return;
	}
	payload = room - pad;
	if (op->pos == RCP_LAST && (op->flags & RCP_REQ) && !payload)
		return;
	if (!(get32(bth + 4) & 0xffffff))
		return;
	if (op->flags & RCP_AETH) {
		syn = bth[12];		/* no opcode with an AETH has a RETH */
		if (!rc_aeth_valid(syn))
			return;
	}
	if (op->flags & RCP_RETH) {
		uint32_t dma = get32(bth + 12 + 12);

		if (dma > 0x80000000u)
			return;
		if (op->pos == RCP_ONLY && (op->flags & RCP_PAY) && payload != dma)
			return;
	}
	if ((((bth[2] << 8) | bth[3]) & 0x7fff) != 0x7fff)
		return;
	p->counter = "drop_icrc";
	memcpy(&crc, bth + len - 4, 4);
	p->trusted = partial && crc != icrc(w->pkt, 28 + len);
	if (!partial && crc != icrc(w->pkt, 28 + len))
		return;
	p->counter = "drop_qpn";
	if ((get32(bth + 4) & 0xffffff) != qpn)
		return;
	p->counter = "rc_rx_packets";
	p->payload = payload;
	p->request = op->flags & RCP_REQ;
	if (p->request || !(op->flags & RCP_AETH))
		return;
	if ((syn & 0x60) == 0x00)
		p->aeth = bth[0] == 0x11 ? "rc_acks_received" : NULL;
	else if ((syn & 0x60) == 0x20)
		p->aeth = "rc_rnr_naks_received";
	else if (!(syn & 0x1f))
		p->aeth = "rc_seq_naks_received";
}

/*
 * The counter sc-w2's softcm must count a finished packet under (after
 * wire_finish()): a drop before decoding, or rx_<attribute>.  The order
 * is the module's: UDP length, BTH (opcode, version and pad, QPN), P_Key,
 * Q_Key, ICRC, then the MAD decoder (versions, class, method, attribute,
 * a REJ's or SIDR_REP's additional-information length).  A packet to
 * another QP than QP1 is the data path's, as rc_predict() says for a
 * namespace with no QP behind its QPN.
 */
static inline const char *wire_predict(const struct wire *w)
{
	const uint8_t *bth = w->pkt + 28, *mad = bth + MAD_OFF;
	size_t len = 28 + w->paylen;
	uint16_t attr;
	uint32_t crc;

	if (w->paylen >= 12 && (get32(bth + 4) & 0xffffff) != 1) {
		struct rc_pred p;

		rc_predict(w, 0, false, &p);
		return p.counter;
	}
	if (w->paylen != ROCE_LEN)
		return "drop_length";
	if (bth[0] != 0x64 || (bth[1] & 0x3f))
		return "drop_header";
	if ((((bth[2] << 8) | bth[3]) & 0x7fff) != 0x7fff)
		return "drop_pkey";
	if (get32(bth + 12) != 0x80010000)
		return "drop_qkey";
	memcpy(&crc, w->pkt + len - 4, 4);
	if (crc != icrc(w->pkt, len))
		return "drop_icrc";
	attr = mad[16] << 8 | mad[17];
	if (mad[0] != 1 || mad[1] != 7 || mad[2] != 2 || mad[3] != 3 ||
	    attr < 0x10 || attr > 0x18)
		return "drop_mad";
	if ((attr == 0x12 && (mad[33] >> 1) > 72) || (attr == 0x18 && mad[29] > 72))
		return "drop_mad";
	return rx_names[attr - 0x10];
}

#endif /* _SOFTCM_WIRE_ORACLE_H */
