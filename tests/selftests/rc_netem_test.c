// SPDX-License-Identifier: GPL-2.0
/*
 * The RC data path over a bad link: netem on both ends of the veth
 * between two namespaces (loss, duplication, reordering, delay) while
 * SENDs and RDMA WRITEs of sizes from 0 bytes to 3 MiB (1 MiB + 1 on
 * the debug kernel) go both ways, all of a direction's messages in
 * flight at once.  Every message must arrive once, whole and in order:
 * the send completions come in posting order, every receive completes
 * once, in posting order, with its length and bytes; every WRITE
 * leaves exactly its bytes and nothing around them; a marker message
 * sent last is the very next receive to complete, so a duplicate
 * executed twice (a receive consumed twice) cannot hide.  And the
 * protocol, not luck, must have carried it: the retransmission counters
 * of /proc/net/softcm_stats moved.  Also a receiver that posts late over
 * that link: RNR NAKs, counted, then every message arrives as above.
 *
 *   rn-a: na 10.31.0.1/24 --veth, netem both ways-- rn-b: nb 10.31.0.2/24
 *
 * The QPs are connected by hand, as in rc_test.c.
 */

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "rc_ep.h"
#include "netlink_helpers.h"

TOPO_NAMESPACES("rn-a rn-b")

/*
 * 5% loss, 5% duplication, a quarter of the packets overtaking the
 * others (sent at once, the rest 1 ms late), on both ends.  The veth
 * carries at most a path MTU of 1024 (MTU 1500).
 */
/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "rn-a", "na", { "10.31.0.1/24" } };
static const struct topo_end end2 = { "rn-b", "nb", { "10.31.0.2/24" } };
static const char *const netem_cmds =
	"set -e\n"
	"for p in 'rn-a na' 'rn-b nb'; do set -- $p\n"
	"  tc -n $1 qdisc add dev $2 root netem loss 5% duplicate 5% delay 1ms reorder 25%\n"
	"done\n";

#define MTU		1024
#define MSGS_MAX	16
#define HALF		(9 << 19)	/* 4.5 MiB: what a direction sends, with gaps */
#define BUF		(2 * HALF)	/* first half sends, second half receives */
#define QP_WR		64

static const struct rc_ep_opts ep_opts = {
	.qp_wr = QP_WR, .len = BUF, .stats = true, .no_remote_read = true,
};
#define GUARD		16		/* untouched bytes between two messages */

/* What each direction sends: every size that matters to segmentation. */
static const unsigned int sizes[] = {
	0, 1, MTU - 1, MTU, MTU + 1, 65536, (1 << 20) + 1, 3 << 20,
};

#define NMSG		ARRAY_SIZE(sizes)

/*
 * How many of them a direction sends: all on the stock kernel; on the
 * debug kernel (KASAN, lockdep, kmemleak: 5 to 10 times slower) all but
 * the 3 MiB one, which would take most of its time and cover no path
 * the 1 MiB one does not.
 */
static unsigned int nmsg(void)
{
	return softcm_on_debug() ? NMSG - 1 : NMSG;
}

/* How long any one wait may take: a whole direction's traffic under loss. */
static long wait_ms(void)
{
	return 120000L << softcm_slow_shift();
}

/* Poll @cq until @n completions are in @wc, or the wait is over; how many came. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	return rc_poll_n(cq, wc, n, wait_ms());
}

/* @e to RTS, connected to @peer; @psn is @e's first send PSN, @ppsn the peer's. */
static int ep_connect(struct rc_ep *e, const struct rc_ep *peer, unsigned int psn,
		      unsigned int ppsn)
{
	/*
	 * An RNR timer of 0.01 ms: a late receiver costs little.  Retried
	 * for ever (7): the test bounds the time instead, and a give-up
	 * would be a failure that says less.  67 ms timeouts (8 times that
	 * on the debug kernel): a lost last packet or ACK costs one.
	 */
	const struct rc_path mine = { .sq_psn = psn, .min_rnr_timer = 1, .rnr_retry = 7,
				      .no_remote_read = true };
	const struct rc_path theirs = { .sq_psn = ppsn };

	return rc_ep_connect(e, peer, &mine, &theirs);
}

/* Where message @i of a direction lies, in the sender's half and the receiver's. */
static unsigned int msg_off(unsigned int i)
{
	unsigned int off = 0;

	for (unsigned int j = 0; j < i; j++)
		off += (sizes[j] + GUARD + 4095) & ~4095u;
	return off;
}

static void pattern(unsigned char *p, unsigned int len, unsigned int seed)
{
	for (unsigned int i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 13 + seed * 31 + (i >> 10));
}

static int post_recv(struct rc_ep *e, uint64_t wr_id, unsigned int off, unsigned int len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + off, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

/*
 * Post message @i from @s to @r: a SEND (with an immediate on odd @i),
 * or, with @write, an RDMA WRITE into @r's receive half at the same
 * offset (with an immediate on odd @i, which takes a receive).
 */
static int post_msg(struct rc_ep *s, struct rc_ep *r, unsigned int i, bool write)
{
	unsigned int off = msg_off(i);
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off, .length = sizes[i], .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0x5e000000 | i),
	}, *bad;

	if (write) {
		wr.opcode = i & 1 ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)r->buf + HALF + off;
		wr.wr.rdma.rkey = r->mr->rkey;
	} else {
		wr.opcode = i & 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	}
	return ibv_post_send(s->qp, &wr, &bad);
}

/* Whether message @i took a receive. */
static bool takes_recv(unsigned int i, bool write)
{
	return !write || (i & 1);
}

/* Fill @s's send half with the direction's patterns and @r's receive half with 0xee. */
static void prepare(struct rc_ep *s, struct rc_ep *r, unsigned int seed)
{
	for (unsigned int i = 0; i < nmsg(); i++)
		pattern(s->buf + msg_off(i), sizes[i], seed + i);
	memset(r->buf + HALF, 0xee, HALF);
}

/*
 * Post every message of a direction, and before them the receives it
 * needs, each at its message's offset in @r's receive half, and one
 * more for the marker; or none if @late (the test posts them).
 */
static void start(struct __test_metadata *_metadata, struct rc_ep *s, struct rc_ep *r,
		  bool write, bool late)
{
	unsigned int i, k = 0;

	for (i = 0; i < nmsg() && !late; i++)
		if (takes_recv(i, write))
			ASSERT_EQ(0, post_recv(r, 1000 + k++, HALF + msg_off(i), sizes[i]));
	for (i = 0; i < nmsg(); i++)
		ASSERT_EQ(0, post_msg(s, r, i, write));
}

/*
 * Each message arrived once, whole, in order: the send completions in
 * posting order, the receive completions in posting order with their
 * lengths and immediates, every byte, and the guard bytes after each
 * message untouched.  Then a marker SEND of 77 bytes from @s: the next
 * receive completion must be its, with the wr_id after the last.
 */
static void check(struct __test_metadata *_metadata, struct rc_ep *s, struct rc_ep *r,
		  bool write)
{
	struct ibv_wc wc[NMSG + 1];
	unsigned int i, k = 0, nrecv = 0;
	struct ibv_sge sge;
	struct ibv_send_wr mw = { 0 }, *bad;

	for (i = 0; i < nmsg(); i++)
		nrecv += takes_recv(i, write);
	ASSERT_EQ(nmsg(), poll_n(s->scq, wc, nmsg()));
	for (i = 0; i < nmsg(); i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("send %u: %s", i,
							       ibv_wc_status_str(wc[i].status));
		EXPECT_EQ(100 + i, wc[i].wr_id);
	}
	ASSERT_EQ(nrecv, poll_n(r->rcq, wc, nrecv));
	for (i = 0; i < nmsg(); i++) {
		const unsigned char *got = r->buf + HALF + msg_off(i);

		if (takes_recv(i, write)) {
			const struct ibv_wc *w = &wc[k];

			EXPECT_EQ(IBV_WC_SUCCESS, w->status) TH_LOG("receive %u", k);
			EXPECT_EQ(1000 + k, w->wr_id);
			EXPECT_EQ(sizes[i], w->byte_len) TH_LOG("message %u", i);
			EXPECT_EQ(s->qp->qp_num, w->src_qp);
			if (i & 1) {
				EXPECT_EQ(htonl(0x5e000000 | i), w->imm_data);
				EXPECT_EQ(IBV_WC_WITH_IMM, w->wc_flags & IBV_WC_WITH_IMM);
			}
			EXPECT_EQ(write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV, w->opcode);
			k++;
		}
		EXPECT_EQ(0, memcmp(s->buf + msg_off(i), got, sizes[i]))
			TH_LOG("message %u, %u bytes", i, sizes[i]);
		for (int g = 0; g < GUARD; g++)
			if (got[sizes[i] + g] != 0xee) {
				EXPECT_EQ(0xee, got[sizes[i] + g]) TH_LOG("message %u", i);
				break;
			}
	}

	/* the marker: nothing consumed a receive since */
	ASSERT_EQ(0, post_recv(r, 1000 + nrecv, HALF, 4096));
	sge = (struct ibv_sge){ .addr = (uintptr_t)s->buf, .length = 77, .lkey = s->mr->lkey };
	mw.wr_id = 999;
	mw.sg_list = &sge;
	mw.num_sge = 1;
	mw.opcode = IBV_WR_SEND;
	mw.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(0, ibv_post_send(s->qp, &mw, &bad));
	ASSERT_EQ(1, poll_n(s->scq, wc, 1));
	EXPECT_EQ(999, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(1, poll_n(r->rcq, wc, 1));
	EXPECT_EQ(1000 + nrecv, wc[0].wr_id);
	EXPECT_EQ(77, wc[0].byte_len);
}

FIXTURE(netem) {
	int home;
	struct rc_ep a, b;
	long long before[2][3];
};

static const char *const counters[] = { "rc_retransmits", "rc_timeouts", "rc_duplicates" };

FIXTURE_SETUP(netem)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/rn-a", F_OK)) {
		ASSERT_EQ(0, topo_pair(&end1, &end2));
		ASSERT_EQ(0, system(netem_cmds));
	}
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	ASSERT_EQ(0, rc_ep_make(&self->a, "rn-a", "10.31.0.1", self->home, &ep_opts));
	ASSERT_EQ(0, rc_ep_make(&self->b, "rn-b", "10.31.0.2", self->home, &ep_opts));
	/* a's PSNs wrap in the first message of 3 MiB's neighbourhood */
	ASSERT_EQ(0, ep_connect(&self->a, &self->b, 0xffff00, 0x1234));
	ASSERT_EQ(0, ep_connect(&self->b, &self->a, 0x1234, 0xffff00));
	for (int s = 0; s < 2; s++)
		for (int c = 0; c < 3; c++) {
			self->before[s][c] = stats_get(s ? self->b.stats : self->a.stats,
						       counters[c]);
			ASSERT_NE(STATS_MISSING, self->before[s][c]);
		}
}

FIXTURE_TEARDOWN(netem)
{
	EXPECT_EQ(0, rc_ep_free_pair(&self->a, &self->b, wait_ms()));
	close(self->home);
}

/*
 * What the link did was repaired by the protocol: each side retransmitted
 * (after a sequence NAK or a timeout) and each side's responder saw
 * duplicates; what the counters said goes to the log.
 */
static void counters_moved(struct __test_metadata *_metadata, const struct rc_ep *a,
			   const struct rc_ep *b, long long before[2][3])
{
	for (int s = 0; s < 2; s++) {
		long long d[3];

		for (int c = 0; c < 3; c++)
			d[c] = stats_get(s ? b->stats : a->stats, counters[c]) - before[s][c];
		TH_LOG("%s: %lld retransmits, %lld timeouts, %lld duplicates", s ? "rn-b" : "rn-a",
		       d[0], d[1], d[2]);
		EXPECT_LT(0, d[0]) TH_LOG("%s retransmitted nothing", s ? "rn-b" : "rn-a");
		EXPECT_LT(0, d[2]) TH_LOG("%s saw no duplicate", s ? "rn-b" : "rn-a");
	}
}

/* SENDs both ways at once, every message of a direction in flight. */
TEST_F_TIMEOUT(netem, sends_both_ways, 1800)
{
	prepare(&self->a, &self->b, 1);
	prepare(&self->b, &self->a, 50);
	start(_metadata, &self->a, &self->b, false, false);
	start(_metadata, &self->b, &self->a, false, false);
	check(_metadata, &self->a, &self->b, false);
	check(_metadata, &self->b, &self->a, false);
	counters_moved(_metadata, &self->a, &self->b, self->before);
}

/* RDMA WRITEs, every other one with an immediate, both ways at once. */
TEST_F_TIMEOUT(netem, writes_both_ways, 1800)
{
	prepare(&self->a, &self->b, 3);
	prepare(&self->b, &self->a, 70);
	start(_metadata, &self->a, &self->b, true, false);
	start(_metadata, &self->b, &self->a, true, false);
	check(_metadata, &self->a, &self->b, true);
	check(_metadata, &self->b, &self->a, true);
	counters_moved(_metadata, &self->a, &self->b, self->before);
}

/*
 * A receiver that posts late, over the same link: the SENDs are posted
 * first; each receive is posted only once the receiver's namespace has
 * sent another RNR NAK (the message before it taken, this one refused),
 * and every message arrives as above.
 */
TEST_F_TIMEOUT(netem, late_receiver, 1800)
{
	long long rnr = stats_get(self->b.stats, "rnr_naks_sent"), first = rnr;

	ASSERT_NE(STATS_MISSING, rnr);
	prepare(&self->a, &self->b, 9);
	start(_metadata, &self->a, &self->b, false, true);
	for (unsigned int i = 0; i < nmsg(); i++) {
		long end = topo_now_ms() + wait_ms();
		long long now;

		while ((now = stats_get(self->b.stats, "rnr_naks_sent")) == rnr &&
		       topo_now_ms() < end)
			usleep(1000);
		ASSERT_LT(rnr, now) TH_LOG("no RNR NAK before receive %u", i);
		rnr = now;
		ASSERT_EQ(0, post_recv(&self->b, 1000 + i, HALF + msg_off(i), sizes[i]));
	}
	check(_metadata, &self->a, &self->b, false);
	TH_LOG("%lld RNR NAKs", stats_get(self->b.stats, "rnr_naks_sent") - first);
}

TEST_HARNESS_MAIN
