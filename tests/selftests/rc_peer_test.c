// SPDX-License-Identifier: GPL-2.0
/*
 * softcm's RC requester against a scripted responder: a namespace
 * without softcm reads the requests on UDP 4791 and answers with ACKs
 * and NAKs built here (a raw socket, the ICRC computed as rxe does), in
 * orders that a lossy, duplicating link produces only by chance.
 *
 *   rp-a: pa 10.33.0.1/24 (softcm QP) --veth-- rp-f: pf 10.33.0.2/24 (this program)
 */

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "wire_helpers.h"
#include "rc_wire.h"
#include "rc_ep.h"

TOPO_NAMESPACES("rp-a rp-f")

/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "rp-a", "pa", { "10.33.0.1/24" } };
static const struct topo_end end2 = { "rp-f", "pf", { "10.33.0.2/24" } };

#define PEER_QPN	0x4242
#define SQ_PSN		0x10
#define BUF		65536

/* RC opcodes and AETH syndromes as the IBTA numbers them. */
#define OP_SEND_ONLY	0x04
#define OP_ACK		0x11
#define OP_ATOMIC_ACK	0x12
#define OP_CMP_SWAP	0x13
#define OP_FETCH_ADD	0x14
#define AETH_ACK	0x1f	/* ACK, no credits (as rxe) */
#define AETH_RNR	0x20	/* RNR NAK; the low 5 bits: the timer, 0 = 655.36 ms */

FIXTURE(peer) {
	int home;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	int udp;	/* the scripted responder's requests, in rp-f */
	int raw;	/* its responses, in rp-f */
};

/* The QP in rp-a to RTS, its peer the scripted responder. */
static int connect_qp(struct ibv_qp *qp, int sgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = PEER_QPN;
	a.rq_psn = 0x500;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = sgid;
	a.ah_attr.grh.dgid.raw[10] = 0xff;
	a.ah_attr.grh.dgid.raw[11] = 0xff;
	inet_pton(AF_INET, "10.33.0.2", &a.ah_attr.grh.dgid.raw[12]);
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = SQ_PSN;
	/* 1.07 s, 8.6 s on the debug kernel: no retransmission of its own */
	a.timeout = 18 + softcm_slow_shift();
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 2;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* In rp-f: a UDP socket on 4791 (the requests) and a raw one (the answers). */
static int open_peer(FIXTURE_DATA(peer) * self)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(4791) };
	int ns = netns_open("rp-f"), one = 1, ret = -1;

	if (ns < 0 || netns_enter(ns))
		goto out;
	self->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	self->raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (self->udp >= 0 && self->raw >= 0 &&
	    !bind(self->udp, (struct sockaddr *)&sin, sizeof(sin)) &&
	    !setsockopt(self->raw, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)))
		ret = 0;
out:
	if (netns_enter(self->home))
		ret = -1;
	if (ns >= 0)
		close(ns);
	return ret;
}

/*
 * The next request within @ms, its UDP payload (BTH first, ICRC last) in
 * @b of @size: its length, or -ETIME.
 */
static int next_request_raw(FIXTURE_DATA(peer) * self, int ms, unsigned char *b, size_t size)
{
	struct pollfd p = { .fd = self->udp, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -ETIME;
	n = recv(self->udp, b, size, 0);
	return n < 12 ? -EIO : n;
}

/* The next request within @ms: its opcode and PSN; 0, or -ETIME. */
static int next_request(FIXTURE_DATA(peer) * self, int ms, unsigned int *opcode,
			unsigned int *psn)
{
	unsigned char b[2048];
	int n = next_request_raw(self, ms, b, sizeof(b));

	if (n < 0)
		return n;
	*opcode = b[0];
	*psn = get32(b + 8) & 0xffffff;
	return 0;
}

/* An ACK or NAK (@syndrome) of @psn, MSN @msn, from the scripted responder. */
static int respond(FIXTURE_DATA(peer) * self, unsigned int psn, unsigned int syndrome,
		   unsigned int msn)
{
	struct wire w;

	rc_aeth(rc_init(&w, "10.33.0.2", "10.33.0.1", OP_ACK, self->qp->qp_num, psn, false),
		syndrome, msn);
	rc_set_len(&w, RC_BTH + RC_AETH, 0);
	rc_finish(&w, false);
	return wire_send_on(self->raw, &w, true);
}

/* An ATOMIC ACKNOWLEDGE of @psn, MSN @msn, with @orig, from the scripted responder. */
static int respond_atomic(FIXTURE_DATA(peer) * self, unsigned int psn, unsigned int msn,
			  uint64_t orig)
{
	struct wire w;
	unsigned char *bth = w.pkt + 28;
	unsigned int crc;

	wire_init(&w, "10.33.0.2", "10.33.0.1", 0);
	memset(bth, 0, 28);
	w.paylen = 12 + 4 + 8 + 4;	/* BTH, AETH, AtomicAckETH, ICRC */
	bth[0] = OP_ATOMIC_ACK;
	bth[2] = 0xff;
	bth[3] = 0xff;
	put32(bth + 4, self->qp->qp_num);
	put32(bth + 8, psn);
	put32(bth + 12, AETH_ACK << 24 | msn);
	put32(bth + 16, orig >> 32);
	put32(bth + 20, orig);
	wire_finish(&w, true);
	crc = icrc(w.pkt, 28 + w.paylen);
	memcpy(bth + 24, &crc, 4);
	return wire_send_on(self->raw, &w, true);
}

/* An atomic whose original value lands at byte 8 of the buffer. */
static int post_atomic(FIXTURE_DATA(peer) * self, unsigned long wr_id, bool cas,
		       uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf + 8, .length = 8,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr, .compare_add = cmp_add, .swap = swap,
			       .rkey = rkey },
	}, *bad;

	return ibv_post_send(self->qp, &wr, &bad);
}

static int post_send(FIXTURE_DATA(peer) * self, unsigned long wr_id, unsigned int len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = len,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(self->qp, &wr, &bad);
}

/* One completion within @ms; 1, or 0 if none came. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long end = topo_now_ms() + ms;
	int r;

	do {
		r = ibv_poll_cq(cq, 1, wc);
		if (r)
			return r;
		usleep(200);
	} while (topo_now_ms() < end);
	return 0;
}

FIXTURE_SETUP(peer)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int sgid;

	self->udp = -1;
	self->raw = -1;
	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/rp-a", F_OK))
		ASSERT_EQ(0, topo_pair(&end1, &end2));
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->ctx = rc_open_dev_in("rp-a", self->home);
	ASSERT_NE(NULL, self->ctx);
	sgid = rc_gid_index_of(self->ctx, "10.33.0.1");
	ASSERT_LE(0, sgid);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	qa.send_cq = self->cq;
	qa.recv_cq = self->cq;
	self->qp = ibv_create_qp(self->pd, &qa);
	ASSERT_NE(NULL, self->qp);
	self->buf = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	ASSERT_EQ(0, open_peer(self));
	ASSERT_EQ(0, connect_qp(self->qp, sgid));
}

FIXTURE_TEARDOWN(peer)
{
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->qp)
		ibv_destroy_qp(self->qp);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, BUF);
	if (self->udp >= 0)
		close(self->udp);
	if (self->raw >= 0)
		close(self->raw);
	/* nothing of the QP's left in its namespace (rc_ep.h) */
	if (self->ctx)
		EXPECT_EQ(0, rc_ns_empty("rp-a", 30000 << softcm_slow_shift()));
	close(self->home);
}

/*
 * An RNR NAK, then an ACK of the same PSN, the last one sent: the
 * responder refused the SEND's first copy and took a duplicate of it
 * (the link duplicated it, the receive was posted in between).  The ACK
 * completes the SEND and leaves nothing outstanding, in the middle of
 * the RNR wait that went back to that PSN.  The next SEND must still
 * leave, with the next PSN, once the wait is over; it used to stay
 * behind for ever (the send position was left behind the acknowledged
 * PSN, where the window refuses every packet).
 */
TEST_F(peer, ack_of_everything_during_an_rnr_wait)
{
	unsigned int op, psn;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_send(self, 1, 100));
	ASSERT_EQ(0, next_request(self, 10000, &op, &psn));
	EXPECT_EQ(OP_SEND_ONLY, op);
	EXPECT_EQ(SQ_PSN, psn);
	/* the RNR NAK asks for the longest wait, 655.36 ms: the ACK comes in it */
	ASSERT_EQ(0, respond(self, SQ_PSN, AETH_RNR | 0, 0));
	ASSERT_EQ(0, respond(self, SQ_PSN, AETH_ACK, 1));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	ASSERT_EQ(0, post_send(self, 2, 200));
	ASSERT_EQ(0, next_request(self, 10000 << softcm_slow_shift(), &op, &psn))
		TH_LOG("the second SEND never left");
	EXPECT_EQ(OP_SEND_ONLY, op);
	EXPECT_EQ(SQ_PSN + 1, psn);
	ASSERT_EQ(0, respond(self, SQ_PSN + 1, AETH_ACK, 2));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

/*
 * A stream's AckReq on the wire (req.c, "AckReq"): three unsignalled
 * SENDs posted in one call leave in one tick, the first asking (no
 * message before it) and the others not; nothing answers them, and the
 * third comes again with AckReq a few ticks later, alone, at its own
 * PSN (the ACK probe), long before the retransmission timeout (1.07 s)
 * would send all three again.  Its ACK retires the three (the send
 * queue of 16 takes 16 more).  A try whose stream crossed a tick asks
 * on its last and needs no probe: it is acknowledged and made again, up
 * to 20 tries (three were all crossed by a tick once on a loaded debug
 * guest; a guest slow enough to take two ticks between two of them
 * probes for the earlier one in between).
 */
TEST_F(peer, stream_tail_asked_for_by_a_probe)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = 64,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr[16], *bad;
	unsigned int psn = SQ_PSN, msn = 0, got;
	unsigned char b[2048];
	bool probed = false;
	int n, i, tries;

	for (tries = 0; tries < 20 && !probed; tries++) {
		bool ask[3];

		for (i = 0; i < 3; i++)
			wr[i] = (struct ibv_send_wr){ .wr_id = 10 + i, .sg_list = &sge, .num_sge = 1,
						      .opcode = IBV_WR_SEND,
						      .next = i < 2 ? &wr[i + 1] : NULL };
		ASSERT_EQ(0, ibv_post_send(self->qp, wr, &bad));
		for (i = 0; i < 3;) {
			n = next_request_raw(self, 10000, b, sizeof(b));
			ASSERT_LT(0, n);
			EXPECT_EQ(OP_SEND_ONLY, b[0]);
			got = get32(b + 8) & 0xffffff;
			if (got == psn + i) {
				ask[i++] = b[8] & 0x80;
				continue;
			}
			/*
			 * A slow guest that took 2 ticks between two of them
			 * probed for the one before: that one again, asking.
			 */
			ASSERT_LT(0, i);
			ASSERT_EQ(psn + i - 1, got);
			EXPECT_TRUE(b[8] & 0x80);
		}
		/* the first after RTS or after the previous try's ACK: no stream */
		if (!tries)
			EXPECT_TRUE(ask[0]);
		if (!ask[2]) {
			/* a probe, not the timeout's go-back from the first */
			n = next_request_raw(self, 500, b, sizeof(b));
			ASSERT_LT(0, n) TH_LOG("no ACK probe within 500 ms");
			got = get32(b + 8) & 0xffffff;
			EXPECT_EQ(OP_SEND_ONLY, b[0]);
			EXPECT_EQ(psn + 2, got);
			EXPECT_TRUE(b[8] & 0x80);
			probed = true;
		}
		msn += 3;
		psn += 3;
		ASSERT_EQ(0, respond(self, psn - 1, AETH_ACK, msn));
	}
	ASSERT_TRUE(probed) TH_LOG("every try's stream crossed a tick");
	/* nothing more: the probe's ACK retired them; a full queue posts */
	EXPECT_EQ(-ETIME, next_request_raw(self, 200, b, sizeof(b)));
	for (i = 0; i < 16; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = 20 + i, .sg_list = &sge, .num_sge = 1,
					      .opcode = IBV_WR_SEND,
					      .next = i < 15 ? &wr[i + 1] : NULL };
	EXPECT_EQ(0, ibv_post_send(self->qp, wr, &bad));
}

/* The 64-bit big-endian value at @p. */
static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/*
 * A COMPARE SWAP as rxe puts it on the wire (one packet, AckReq, the
 * AtomicETH: address, rkey, swap value, compare value), answered first
 * with a plain ACK of its PSN: an ACK past an atomic without its answer
 * says the answer was lost, and the requester sends the atomic again,
 * the same bytes at the same PSN, which a responder answers from its
 * resource without executing it again.  Its ATOMIC ACKNOWLEDGE then
 * completes it, the value it carries in the SGE (host order).  Then a
 * FETCH ADD at the next PSN: the addend where the swap value was, a
 * compare value of 0.
 */
TEST_F(peer, atomic_sent_again_with_its_psn)
{
	unsigned char b[2048], first[40];
	struct ibv_wc wc;
	uint64_t got;

	memset(self->buf, 0xee, 32);
	ASSERT_EQ(0, post_atomic(self, 1, true, 0x7f0000001008ULL, 0xabcd1234,
				 0x1111222233334444ULL, 0x5555666677778888ULL));
	ASSERT_EQ(12 + 28 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	EXPECT_EQ(OP_CMP_SWAP, b[0]);
	EXPECT_EQ(PEER_QPN, get32(b + 4) & 0xffffff);
	EXPECT_EQ(SQ_PSN, get32(b + 8) & 0xffffff);
	EXPECT_EQ(0x80, b[8] & 0x80);
	EXPECT_EQ(0x7f0000001008ULL, get64(b + 12));
	EXPECT_EQ(0xabcd1234, get32(b + 20));
	EXPECT_EQ(0x5555666677778888ULL, get64(b + 24));
	EXPECT_EQ(0x1111222233334444ULL, get64(b + 32));
	memcpy(first, b, sizeof(first));
	/* the answer lost: an ACK of the atomic's PSN without it */
	ASSERT_EQ(0, respond(self, SQ_PSN, AETH_ACK, 1));
	ASSERT_EQ(12 + 28 + 4, next_request_raw(self, 10000, b, sizeof(b)))
		TH_LOG("the atomic was not sent again");
	EXPECT_EQ(0, memcmp(first, b, sizeof(first)));
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 1, &wc));
	ASSERT_EQ(0, respond_atomic(self, SQ_PSN, 1, 0x0123456789abcdefULL));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc.opcode);
	EXPECT_EQ(8, wc.byte_len);
	memcpy(&got, self->buf + 8, 8);
	EXPECT_EQ(0x0123456789abcdefULL, got);
	EXPECT_EQ(0xee, self->buf[7]);
	EXPECT_EQ(0xee, self->buf[16]);

	ASSERT_EQ(0, post_atomic(self, 2, false, 0x7f0000002000ULL, 0x77,
				 0xfedcba9876543210ULL, 0x99));
	ASSERT_EQ(12 + 28 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	EXPECT_EQ(OP_FETCH_ADD, b[0]);
	EXPECT_EQ(SQ_PSN + 1, get32(b + 8) & 0xffffff);
	EXPECT_EQ(0x7f0000002000ULL, get64(b + 12));
	EXPECT_EQ(0x77, get32(b + 20));
	EXPECT_EQ(0xfedcba9876543210ULL, get64(b + 24));
	EXPECT_EQ(0, get64(b + 32));
	ASSERT_EQ(0, respond_atomic(self, SQ_PSN + 1, 2, 5));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
	EXPECT_EQ(8, wc.byte_len);
	memcpy(&got, self->buf + 8, 8);
	EXPECT_EQ(5, got);
}

/*
 * SEND with invalidate on the wire, as rxe sends it: one packet is a
 * SEND ONLY WITH INVALIDATE (0x17) whose IETH, after the BTH, is the
 * WR's rkey, then the payload; a longer one is SEND FIRST, then SEND
 * LAST WITH INVALIDATE (0x16) with the IETH.  A responder that can
 * invalidate the rkey acknowledges them, and they complete as SENDs.
 */
TEST_F(peer, send_with_invalidate_on_the_wire)
{
	unsigned char b[2048];
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .lkey = self->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	for (int i = 0; i < 1500; i++)
		self->buf[i] = i * 13 + 1;
	sge.length = 100;
	wr.wr_id = 1;
	wr.invalidate_rkey = 0x11223344;
	ASSERT_EQ(0, ibv_post_send(self->qp, &wr, &bad));
	ASSERT_EQ(12 + 4 + 100 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	EXPECT_EQ(0x17, b[0]);
	EXPECT_EQ(0, b[1] & 0x30);	/* no pad */
	EXPECT_EQ(SQ_PSN, get32(b + 8) & 0xffffff);
	EXPECT_EQ(0x11223344, get32(b + 12));
	EXPECT_EQ(0, memcmp(self->buf, b + 16, 100));
	ASSERT_EQ(0, respond(self, SQ_PSN, AETH_ACK, 1));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);

	sge.length = 1024 + 10;
	wr.wr_id = 2;
	wr.invalidate_rkey = 0xa5a5f00d;
	ASSERT_EQ(0, ibv_post_send(self->qp, &wr, &bad));
	ASSERT_EQ(12 + 1024 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	EXPECT_EQ(0x00, b[0]);
	EXPECT_EQ(SQ_PSN + 1, get32(b + 8) & 0xffffff);
	EXPECT_EQ(0, memcmp(self->buf, b + 12, 1024));
	ASSERT_EQ(12 + 4 + 12 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	EXPECT_EQ(0x16, b[0]);
	EXPECT_EQ(2 << 4, b[1] & 0x30);	/* 10 bytes, 2 of pad */
	EXPECT_EQ(SQ_PSN + 2, get32(b + 8) & 0xffffff);
	EXPECT_EQ(0xa5a5f00d, get32(b + 12));
	EXPECT_EQ(0, memcmp(self->buf + 1024, b + 16, 10));
	ASSERT_EQ(0, respond(self, SQ_PSN + 2, AETH_ACK, 2));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
}

/*
 * An RC packet from the scripted peer to the QP, @hdr bytes of BTH and
 * extension headers at @hdrs then @plen bytes of @pay, its pad and ICRC,
 * in one datagram or, if @fragmented, as two IP fragments: rp-a's stack
 * reassembles it into an skb whose payload is partly in a fragment
 * list, not in its linear part.  The ICRC covers the header the
 * receiver sees after reassembly (no DF, the whole length): both forms
 * carry the same one.
 */
static int send_packet(FIXTURE_DATA(peer) * self, const uint8_t *hdrs, size_t hdr,
		       const uint8_t *pay, size_t plen, bool fragmented)
{
	static uint8_t pkt[28 + 64 + 1024 + 8], frag[20 + sizeof(pkt)];
	struct iphdr *ip = (struct iphdr *)pkt;
	struct udphdr *udp = (struct udphdr *)(pkt + 20);
	size_t pad = -plen & 3, len = 28 + hdr + plen + pad + RC_ICRC, first, n;
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint32_t crc;

	if (len > sizeof(pkt))
		return -EMSGSIZE;
	memset(pkt, 0, sizeof(pkt));
	ip->version = 4;
	ip->ihl = 5;
	ip->id = htons(0x4321);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(len);
	inet_pton(AF_INET, "10.33.0.2", &ip->saddr);
	inet_pton(AF_INET, "10.33.0.1", &ip->daddr);
	to.sin_addr.s_addr = ip->daddr;
	udp->source = htons(0xc0de);
	udp->dest = htons(4791);
	udp->len = htons(len - 20);
	memcpy(pkt + 28, hdrs, hdr);
	pkt[28 + 1] = (pkt[28 + 1] & ~0x30) | pad << 4;
	memcpy(pkt + 28 + hdr, pay, plen);
	crc = icrc(pkt, len);
	memcpy(pkt + len - RC_ICRC, &crc, RC_ICRC);	/* host order, as rxe */
	if (!fragmented)
		return sendto(self->raw, pkt, len, 0, (struct sockaddr *)&to, sizeof(to)) ==
		       (ssize_t)len ? 0 : -errno;

	/* the first half of the IP payload, a multiple of 8 bytes, then the rest */
	first = ((len - 20) / 2) & ~(size_t)7;
	for (int k = 0; k < 2; k++) {
		size_t from = k ? 20 + first : 20;
		struct iphdr *f = (struct iphdr *)frag;

		n = k ? len - 20 - first : first;
		memcpy(frag, pkt, 20);
		memcpy(frag + 20, pkt + from, n);
		f->tot_len = htons(20 + n);
		f->frag_off = htons(k ? first / 8 : IP_MF);
		if (sendto(self->raw, frag, 20 + n, 0, (struct sockaddr *)&to, sizeof(to)) !=
		    (ssize_t)(20 + n))
			return -errno;
	}
	return 0;
}

/*
 * Packets that reach softcm as reassembled IP datagrams, their payload
 * in the skb's fragment list: READ responses (FIRST, MIDDLE, LAST) land
 * in the READ's buffer and a SEND ONLY in the posted receive, byte for
 * byte, the bytes around them untouched.  softcm copies a payload from
 * where the stack left it, without linearising the skb (rcrecv.c); the
 * ICRC is computed over the fragments as they are.
 */
TEST_F(peer, fragmented_datagrams_land_byte_for_byte)
{
	static const unsigned int sizes[] = { 1024, 1024, 452 };
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf + 8, .length = 2500,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = 0x10000, .rkey = 0x77 },
	}, *bad;
	struct ibv_sge rsge = { .addr = (uintptr_t)self->buf + 4096 + 8, .length = 2048,
				.lkey = self->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 8, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	uint8_t pay[2500], hdrs[RC_BTH + RC_AETH];
	unsigned int op, psn, off = 0;
	struct ibv_wc wc;

	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = i * 29 + 3;
	memset(self->buf, 0xee, 8192);

	ASSERT_EQ(0, ibv_post_send(self->qp, &wr, &bad));
	ASSERT_EQ(0, next_request(self, 10000, &op, &psn));
	ASSERT_EQ(RC_READ_REQUEST, op);
	ASSERT_EQ(SQ_PSN, psn);
	for (int i = 0; i < 3; i++) {
		uint8_t opc = i == 0 ? RC_READ_RESPONSE_FIRST :
			      i == 1 ? RC_READ_RESPONSE_MIDDLE : RC_READ_RESPONSE_LAST;
		size_t hdr = i == 1 ? RC_BTH : RC_BTH + RC_AETH;

		memset(hdrs, 0, sizeof(hdrs));
		hdrs[0] = opc;
		hdrs[2] = hdrs[3] = 0xff;
		put32(hdrs + 4, self->qp->qp_num);
		put32(hdrs + 8, SQ_PSN + i);
		if (hdr > RC_BTH)
			rc_aeth(hdrs + RC_BTH, AETH_ACK, 1);
		ASSERT_EQ(0, send_packet(self, hdrs, hdr, pay + off, sizes[i], true));
		off += sizes[i];
	}
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(2500, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + 8, pay, 2500));
	EXPECT_EQ(0xee, self->buf[7]);
	EXPECT_EQ(0xee, self->buf[8 + 2500]);

	/* a SEND ONLY of 1000 bytes, into the posted receive */
	ASSERT_EQ(0, ibv_post_recv(self->qp, &rwr, &rbad));
	memset(hdrs, 0, sizeof(hdrs));
	hdrs[0] = RC_SEND_ONLY;
	hdrs[2] = hdrs[3] = 0xff;
	put32(hdrs + 4, self->qp->qp_num);
	put32(hdrs + 8, 0x500);
	hdrs[8] |= 0x80;			/* AckReq */
	ASSERT_EQ(0, send_packet(self, hdrs, RC_BTH, pay + 100, 1000, true));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(8, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(1000, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + 4096 + 8, pay + 100, 1000));
	EXPECT_EQ(0xee, self->buf[4096 + 7]);
	EXPECT_EQ(0xee, self->buf[4096 + 8 + 1000]);
	/*
	 * and its ACK came back: after the READ's request again, if a
	 * slow kernel's timer sent it before the responses arrived
	 */
	do {
		ASSERT_EQ(0, next_request(self, 10000, &op, &psn));
	} while (op == RC_READ_REQUEST && psn == SQ_PSN);
	EXPECT_EQ(RC_ACKNOWLEDGE, op);
	EXPECT_EQ(0x500, psn);
}

/*
 * rp-a's softcm_stats, open, and its rc_timeouts and read_retries now;
 * the fd, or -1.
 */
static int stats_of(FIXTURE_DATA(peer) * self, long long *tmo, long long *rr)
{
	int ns = netns_open("rp-a"), st = -1;

	if (ns >= 0) {
		st = stats_open(ns, self->home);
		close(ns);
	}
	if (st < 0)
		return -1;
	*tmo = stats_get(st, "rc_timeouts");
	*rr = stats_get(st, "read_retries");
	if (*tmo < 0 || *rr < 0) {
		close(st);
		return -1;
	}
	return st;
}

/* The READ response @op at @psn with @plen bytes of @pay, an AETH unless a MIDDLE. */
static int respond_read(FIXTURE_DATA(peer) * self, uint8_t op, unsigned int psn,
			const uint8_t *pay, size_t plen)
{
	size_t hdr = op == RC_READ_RESPONSE_MIDDLE ? RC_BTH : RC_BTH + RC_AETH;
	uint8_t hdrs[RC_BTH + RC_AETH] = { op, 0, 0xff, 0xff };

	put32(hdrs + 4, self->qp->qp_num);
	put32(hdrs + 8, psn);
	if (hdr > RC_BTH)
		rc_aeth(hdrs + RC_BTH, AETH_ACK, 1);
	return send_packet(self, hdrs, hdr, pay, plen, false);
}

/*
 * A READ of three responses whose last is lost (what a responder that
 * sends a long READ's responses back to back loses at the end of the
 * burst, where a receiving CPU's backlog overflows): no later response
 * shows the gap.  The requester does not wait for its timeout (1.07 s,
 * 8.6 s on the debug kernel): soon after the responses stop it asks for
 * the rest of the READ, the LAST's PSN, address and length, counted in
 * read_retries and not in rc_timeouts.  The LAST then completes the
 * READ, every byte in place.  Should the MIDDLE reach softcm late, the
 * FIRST alone asks from the MIDDLE's PSN first: every request is
 * checked for the rest from its PSN, and the test waits for the LAST's.
 */
TEST_F(peer, read_asked_again_when_its_responses_stop)
{
	const uint64_t raddr = 0x7f0000010000ULL;
	const unsigned int len = 2500, sizes[] = { 1024, 1024, 452 };
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf + 8, .length = len,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = 0x99 },
	}, *bad;
	int st, n, asks = 0;
	long long tmo, rr;
	unsigned char b[2048];
	uint8_t pay[2500];
	unsigned int psn;
	struct ibv_wc wc;

	st = stats_of(self, &tmo, &rr);
	ASSERT_LE(0, st);
	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = i * 31 + 7;
	memset(self->buf, 0xee, 4096);

	ASSERT_EQ(0, ibv_post_send(self->qp, &wr, &bad));
	ASSERT_EQ(12 + 16 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	ASSERT_EQ(RC_READ_REQUEST, b[0]);
	ASSERT_EQ(SQ_PSN, get32(b + 8) & 0xffffff);
	EXPECT_EQ(len, get32(b + 24));
	ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_FIRST, SQ_PSN, pay, sizes[0]));
	ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_MIDDLE, SQ_PSN + 1, pay + 1024,
				  sizes[1]));
	/* the LAST lost: the next request asks for it */
	do {
		n = next_request_raw(self, 10000 << softcm_slow_shift(), b, sizeof(b));
		ASSERT_EQ(12 + 16 + 4, n) TH_LOG("the READ was not asked again (%d)", n);
		ASSERT_EQ(RC_READ_REQUEST, b[0]);
		psn = get32(b + 8) & 0xffffff;
		ASSERT_LE(SQ_PSN + 1, psn);
		ASSERT_GE(SQ_PSN + 2, psn);
		EXPECT_EQ(raddr + (psn - SQ_PSN) * 1024, get64(b + 12));
		EXPECT_EQ(0x99, get32(b + 20));
		EXPECT_EQ(len - (psn - SQ_PSN) * 1024, get32(b + 24));
		if (psn == SQ_PSN + 1)
			ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_MIDDLE, psn,
						  pay + 1024, sizes[1]));
	} while (psn != SQ_PSN + 2 && ++asks < 3);
	ASSERT_EQ(SQ_PSN + 2, psn);
	EXPECT_EQ(tmo, stats_get(st, "rc_timeouts"))
		TH_LOG("the rest was asked for only when the timer expired");
	EXPECT_LE(rr + 1, stats_get(st, "read_retries"));
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 1, &wc));

	ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_LAST, SQ_PSN + 2, pay + 2048, sizes[2]));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(len, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + 8, pay, len));
	EXPECT_EQ(0xee, self->buf[7]);
	EXPECT_EQ(0xee, self->buf[8 + len]);
	close(st);
}

/*
 * Two READs asked for at once (max_rd_atomic 2): the first answered,
 * FIRST and LAST, the second's request never answered, as rxe 6.1's
 * responder does when it had to stop a READ's responses (a full
 * backlog): it resumes that READ on the next request and discards the
 * request.  The requester does not wait for its timeout: soon after the
 * first READ completes it asks for the second again, the same request
 * at the same PSN, counted in read_retries and not in rc_timeouts; its
 * answer then completes it.
 */
TEST_F(peer, next_read_asked_again_when_its_request_goes_unanswered)
{
	const uint64_t raddr = 0x7f0000020000ULL;
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)self->buf + 8, .length = 1500, .lkey = self->mr->lkey },
		{ .addr = (uintptr_t)self->buf + 2048, .length = 100, .lkey = self->mr->lkey },
	};
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .sg_list = &sge[0], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		  .send_flags = IBV_SEND_SIGNALED, .next = &wr[1],
		  .wr.rdma = { .remote_addr = raddr, .rkey = 0x55 } },
		{ .wr_id = 2, .sg_list = &sge[1], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		  .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = raddr + 4096, .rkey = 0x55 } },
	}, *bad;
	int st;
	unsigned char b[2048], second[28];	/* BTH, RETH: not the ICRC (the IP ID) */
	long long tmo, rr;
	uint8_t pay[1600];
	struct ibv_wc wc;

	st = stats_of(self, &tmo, &rr);
	ASSERT_LE(0, st);
	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = i * 17 + 5;
	memset(self->buf, 0xee, 4096);

	ASSERT_EQ(0, ibv_post_send(self->qp, wr, &bad));
	ASSERT_EQ(12 + 16 + 4, next_request_raw(self, 10000, b, sizeof(b)));
	ASSERT_EQ(RC_READ_REQUEST, b[0]);
	ASSERT_EQ(SQ_PSN, get32(b + 8) & 0xffffff);
	ASSERT_EQ(12 + 16 + 4, next_request_raw(self, 10000, b, sizeof(b)))
		TH_LOG("the second READ did not leave beside the first");
	ASSERT_EQ(RC_READ_REQUEST, b[0]);
	ASSERT_EQ(SQ_PSN + 2, get32(b + 8) & 0xffffff);
	EXPECT_EQ(raddr + 4096, get64(b + 12));
	EXPECT_EQ(100, get32(b + 24));
	memcpy(second, b, sizeof(second));
	/* the first READ answered; the second's request dropped */
	ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_FIRST, SQ_PSN, pay, 1024));
	ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_LAST, SQ_PSN + 1, pay + 1024, 476));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(0, memcmp(self->buf + 8, pay, 1500));

	ASSERT_EQ(12 + 16 + 4, next_request_raw(self, 10000 << softcm_slow_shift(), b, sizeof(b)))
		TH_LOG("the second READ was not asked again");
	EXPECT_EQ(0, memcmp(second, b, sizeof(second)));
	EXPECT_EQ(tmo, stats_get(st, "rc_timeouts"))
		TH_LOG("it was asked again only when the timer expired");
	EXPECT_EQ(rr + 1, stats_get(st, "read_retries"));
	ASSERT_EQ(0, respond_read(self, RC_READ_RESPONSE_ONLY, SQ_PSN + 2, pay + 1500, 100));
	ASSERT_EQ(1, poll_one(self->cq, &wc, 10000));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(100, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + 2048, pay + 1500, 100));
	EXPECT_EQ(0xee, self->buf[8 + 1500]);
	EXPECT_EQ(0xee, self->buf[2048 + 100]);
	close(st);
}

TEST_HARNESS_MAIN
