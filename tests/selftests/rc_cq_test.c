// SPDX-License-Identifier: GPL-2.0
/*
 * Completions of the RC data path as applications wait for them: a
 * completion channel armed for the next completion wakes once, armed
 * for solicited ones only wakes for a SEND that asked for it (or for an
 * error completion) and not for the others; and CQ overflow under
 * traffic.  A receive CQ that overflows raises IBV_EVENT_CQ_ERR and takes
 * the responder's QP to ERR, as rdma_rxe's responder does (the message
 * whose completion was lost is not acknowledged, so the requester ends
 * in RETRY_EXC_ERR rather than believing it delivered); a send CQ that
 * overflows raises IBV_EVENT_CQ_ERR while the messages still arrive, as
 * rxe's completer goes on.  And the QP listing keeps the numbers a
 * forged packet needs from other users.
 *
 *   rq-a: qa 10.35.0.1/24 --veth-- rq-b: qb 10.35.0.2/24
 */

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rc_ep.h"
#include "netlink_helpers.h"

TOPO_NAMESPACES("rq-a rq-b")

/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "rq-a", "qa", { "10.35.0.1/24" } };
static const struct topo_end end2 = { "rq-b", "qb", { "10.35.0.2/24" } };

#define WAIT_MS		30000

FIXTURE(cq) {
	int home;
	struct rc_ep a, b;
};

FIXTURE_SETUP(cq)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/rq-a", F_OK))
		ASSERT_EQ(0, topo_pair(&end1, &end2));
	self->home = netns_self();
	ASSERT_LE(0, self->home);
}

FIXTURE_TEARDOWN(cq)
{
	EXPECT_EQ(0, rc_ep_free_pair(&self->a, &self->b, WAIT_MS));
	close(self->home);
}

/* @a in rq-a and @b in rq-b, made with @oa and @ob, connected. */
static void pair(struct __test_metadata *_metadata, FIXTURE_DATA(cq) *self,
		 const struct rc_ep_opts *oa, const struct rc_ep_opts *ob,
		 const struct rc_path *pa, const struct rc_path *pb)
{
	ASSERT_EQ(0, rc_ep_make(&self->a, "rq-a", "10.35.0.1", self->home, oa));
	ASSERT_EQ(0, rc_ep_make(&self->b, "rq-b", "10.35.0.2", self->home, ob));
	ASSERT_EQ(0, rc_ep_connect(&self->a, &self->b, pa, pb));
	ASSERT_EQ(0, rc_ep_connect(&self->b, &self->a, pb, pa));
}

static int post_recv(struct rc_ep *e, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + off, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

/* A signalled SEND of @len bytes at @off of @e's buffer. */
static int post_send(struct rc_ep *e, uint64_t wr_id, uint32_t off, uint32_t len,
		     unsigned int flags)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + off, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED | flags,
	}, *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/* 1 if @fd is readable within @ms, 0 if not, -1 on error. */
static int readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, ms);

	return ret < 0 ? -1 : ret;
}

/* The channel's event is for @cq: taken and acknowledged. */
static void take_cq_event(struct __test_metadata *_metadata, struct rc_ep *e)
{
	struct ibv_cq *cq;
	void *ctx;

	ASSERT_EQ(0, ibv_get_cq_event(e->chan, &cq, &ctx));
	EXPECT_EQ(e->rcq, cq);
	ibv_ack_cq_events(cq, 1);
}

/* The next async event of @e is IBV_EVENT_CQ_ERR for @cq. */
static void expect_cq_err(struct __test_metadata *_metadata, struct rc_ep *e, struct ibv_cq *cq)
{
	struct ibv_async_event ev;

	ASSERT_EQ(1, readable(e->ctx->async_fd, WAIT_MS));
	ASSERT_EQ(0, ibv_get_async_event(e->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);
	EXPECT_EQ(cq, ev.element.cq);
	ibv_ack_async_event(&ev);
}

/*
 * Armed for the next completion, the channel wakes once for two SENDs;
 * armed again, once more.
 */
TEST_F(cq, next_completion_wakes_once)
{
	const struct rc_ep_opts oa = { 0 }, ob = { .channel = true };
	const struct rc_path pa = { .sq_psn = 0x10 }, pb = { .sq_psn = 0x20 };
	struct ibv_wc wc[3];

	pair(_metadata, self, &oa, &ob, &pa, &pb);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv(&self->b, 100 + i, 0, 4096));
	ASSERT_EQ(0, ibv_req_notify_cq(self->b.rcq, 0));
	EXPECT_EQ(0, readable(self->b.chan->fd, 0));
	ASSERT_EQ(0, post_send(&self->a, 1, 0, 100, 0));
	ASSERT_EQ(0, post_send(&self->a, 2, 0, 100, 0));
	ASSERT_EQ(2, rc_poll_n(self->b.rcq, wc, 2, WAIT_MS));
	EXPECT_EQ(100, wc[0].wr_id);
	EXPECT_EQ(101, wc[1].wr_id);
	ASSERT_EQ(1, readable(self->b.chan->fd, WAIT_MS));
	take_cq_event(_metadata, &self->b);
	/* the second completion found the CQ disarmed: no second event */
	EXPECT_EQ(0, readable(self->b.chan->fd, 0));

	ASSERT_EQ(0, ibv_req_notify_cq(self->b.rcq, 0));
	ASSERT_EQ(0, post_send(&self->a, 3, 0, 100, 0));
	ASSERT_EQ(1, rc_poll_n(self->b.rcq, wc, 1, WAIT_MS));
	ASSERT_EQ(1, readable(self->b.chan->fd, WAIT_MS));
	take_cq_event(_metadata, &self->b);
	ASSERT_EQ(3, rc_poll_n(self->a.scq, wc, 3, WAIT_MS));
}

/*
 * Armed for solicited completions only: a SEND without
 * IBV_SEND_SOLICITED completes on the CQ and wakes nobody; the next one
 * with it wakes the channel, as does an error completion (IBTA
 * 11.4.2.2): a SEND longer than its receive.
 */
TEST_F(cq, solicited_only_wakes_for_solicited_and_errors)
{
	const struct rc_ep_opts oa = { 0 }, ob = { .channel = true };
	const struct rc_path pa = { .sq_psn = 0xfffff0 }, pb = { .sq_psn = 0x20 };
	struct ibv_wc wc[3];

	pair(_metadata, self, &oa, &ob, &pa, &pb);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, post_recv(&self->b, 100 + i, 0, 4096));
	ASSERT_EQ(0, ibv_req_notify_cq(self->b.rcq, 1));
	ASSERT_EQ(0, post_send(&self->a, 1, 0, 3000, 0));
	ASSERT_EQ(1, rc_poll_n(self->b.rcq, wc, 1, WAIT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(0, readable(self->b.chan->fd, softcm_quiet_ms(200)));

	ASSERT_EQ(0, post_send(&self->a, 2, 0, 3000, IBV_SEND_SOLICITED));
	ASSERT_EQ(1, rc_poll_n(self->b.rcq, wc, 1, WAIT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(101, wc[0].wr_id);
	ASSERT_EQ(1, readable(self->b.chan->fd, WAIT_MS));
	take_cq_event(_metadata, &self->b);
	ASSERT_EQ(2, rc_poll_n(self->a.scq, wc, 2, WAIT_MS));

	/* an unsolicited SEND the receive cannot hold */
	ASSERT_EQ(0, post_recv(&self->b, 102, 0, 16));
	ASSERT_EQ(0, ibv_req_notify_cq(self->b.rcq, 1));
	ASSERT_EQ(0, post_send(&self->a, 3, 0, 3000, 0));
	ASSERT_EQ(1, rc_poll_n(self->b.rcq, wc, 1, WAIT_MS));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc[0].status);
	EXPECT_EQ(102, wc[0].wr_id);
	ASSERT_EQ(1, readable(self->b.chan->fd, WAIT_MS));
	take_cq_event(_metadata, &self->b);
}

/*
 * A receive CQ of n entries that nobody polls, and n + 2 SENDs: the
 * first n complete there; the next one's completion finds the CQ full:
 * IBV_EVENT_CQ_ERR, and the responder's QP goes to ERR without
 * acknowledging that message.  The requester sees n successes, then
 * RETRY_EXC_ERR for the message that was not acknowledged and a flush
 * for the last.
 */
TEST_F(cq, recv_cq_overflow_ends_the_responder)
{
	const struct rc_ep_opts oa = { 0 }, ob = { .rcq_cqe = 4 };
	const struct rc_path pa = { .sq_psn = 0x10, .retry_cnt = 1 }, pb = { .sq_psn = 0x20 };
	struct ibv_wc wc[16];
	int n, i;

	pair(_metadata, self, &oa, &ob, &pa, &pb);
	n = self->b.rcq->cqe;
	ASSERT_LE(4, n);
	ASSERT_GE(12, n);
	for (i = 0; i < n + 2; i++)
		ASSERT_EQ(0, post_recv(&self->b, 100 + i, 0, 4096));
	for (i = 0; i < n + 2; i++)
		ASSERT_EQ(0, post_send(&self->a, 1 + i, 0, 64, 0));

	ASSERT_EQ(n + 2, rc_poll_n(self->a.scq, wc, n + 2, WAIT_MS));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(1 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("send %d: %s", i,
							       ibv_wc_status_str(wc[i].status));
	}
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc[n].status) TH_LOG("%s", ibv_wc_status_str(wc[n].status));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[n + 1].status);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->a.qp));

	expect_cq_err(_metadata, &self->b, self->b.rcq);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->b.qp));
	/* what did fit is there, in order */
	ASSERT_EQ(n, ibv_poll_cq(self->b.rcq, n + 2, wc));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(100 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(64, wc[i].byte_len);
	}
}

/*
 * A send CQ of n entries that nobody polls, and n + 2 signalled SENDs:
 * IBV_EVENT_CQ_ERR on the requester, whose first n completions are
 * there, and every message still arrives (the requester goes on, as
 * rxe's completer does).
 */
TEST_F(cq, send_cq_overflow_raises_cq_err)
{
	const struct rc_ep_opts oa = { .scq_cqe = 4 }, ob = { 0 };
	const struct rc_path pa = { .sq_psn = 0x10 }, pb = { .sq_psn = 0x20 };
	struct ibv_wc wc[16];
	int n, i;

	pair(_metadata, self, &oa, &ob, &pa, &pb);
	n = self->a.scq->cqe;
	ASSERT_LE(4, n);
	ASSERT_GE(12, n);
	for (i = 0; i < n + 2; i++)
		ASSERT_EQ(0, post_recv(&self->b, 100 + i, 64 * i, 64));
	for (i = 0; i < n + 2; i++) {
		memset(self->a.buf + 64 * i, 'a' + i, 64);
		ASSERT_EQ(0, post_send(&self->a, 1 + i, 64 * i, 64, 0));
	}
	ASSERT_EQ(n + 2, rc_poll_n(self->b.rcq, wc, n + 2, WAIT_MS));
	for (i = 0; i < n + 2; i++) {
		EXPECT_EQ(100 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ('a' + i, self->b.buf[64 * i]);
		EXPECT_EQ('a' + i, self->b.buf[64 * i + 63]);
	}
	expect_cq_err(_metadata, &self->a, self->a.scq);
	ASSERT_EQ(n, ibv_poll_cq(self->a.scq, n + 2, wc));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(1 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
	}
}

/*
 * The whole of /proc/net/softcm_qps in namespace @ns, read as @uid (the
 * file opened with that uid's credentials, which are what it checks), in
 * @buf; 0 or -1.  A child does it: it drops its uid for good.
 */
static int read_qps_as(const char *ns, uid_t uid, char *buf, size_t size)
{
	int pfd[2], status;
	ssize_t n, used = 0;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int nsfd = netns_open(ns), fd;
		char b[4096];

		close(pfd[0]);
		if (nsfd < 0 || netns_enter(nsfd) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid))
			_exit(1);
		fd = open("/proc/thread-self/net/softcm_qps", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(2);
		while ((n = read(fd, b, sizeof(b))) > 0)
			if (write(pfd[1], b, n) != n)
				_exit(3);
		_exit(n < 0 ? 4 : 0);
	}
	close(pfd[1]);
	while (used < (ssize_t)size - 1 && (n = read(pfd[0], buf + used, size - 1 - used)) > 0)
		used += n;
	buf[used] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

/*
 * A forged RC packet must name the QP's number and a PSN in its window:
 * /proc/net/softcm_qps shows them only to the QP's owner (root here, who
 * opened the device) and CAP_NET_ADMIN; uid 65534 sees the QP, its state
 * and counters, and "-" for the numbers.
 */
TEST_F(cq, qp_listing_hides_numbers_from_others)
{
	const struct rc_ep_opts o = { 0 };
	const struct rc_path pa = { .sq_psn = 0x123456 }, pb = { .sq_psn = 0x654321 };
	static char root[1 << 14], nobody[1 << 14];
	char qpn[16], psn[16];

	pair(_metadata, self, &o, &o, &pa, &pb);
	snprintf(qpn, sizeof(qpn), "0x%06x", self->a.qp->qp_num);
	snprintf(psn, sizeof(psn), "0x%06x", pa.sq_psn);
	ASSERT_EQ(0, read_qps_as("rq-a", 0, root, sizeof(root)));
	ASSERT_EQ(0, read_qps_as("rq-a", 65534, nobody, sizeof(nobody)));
	EXPECT_NE(NULL, strstr(root, qpn)) TH_LOG("%s", root);
	EXPECT_NE(NULL, strstr(root, psn)) TH_LOG("%s", root);
	EXPECT_NE(NULL, strstr(nobody, "\n - RC RTS - - - ")) TH_LOG("%s", nobody);
	EXPECT_EQ(NULL, strstr(nobody, qpn)) TH_LOG("%s", nobody);
	EXPECT_EQ(NULL, strstr(nobody, psn)) TH_LOG("%s", nobody);
	EXPECT_EQ(NULL, strstr(nobody, "0x")) TH_LOG("%s", nobody);
}

TEST_HARNESS_MAIN
