// SPDX-License-Identifier: GPL-2.0
/*
 * INIT_QP_ATTR with raw ioctls: the attributes and masks that move an
 * id's QP to INIT, RTR and RTS, as rdma_init_qp_attr() gives them over
 * the Linux CM for RoCE, on ids in every stage of a connection between
 * two namespaces:
 *
 *   +-- sc-a1 (active) ------+          +-- sc-a2 (passive) -----+
 *   | a1 10.92.0.1/24        |--veth----| a2 10.92.0.2/24        |
 *   |    fd92::1/64          |          |    fd92::2/64          |
 *   +------------------------+          +------------------------+
 *
 * The masks expected are the Linux CM's (cm.c, cma.c), in libibverbs'
 * bits: INIT STATE|PKEY_INDEX|PORT|ACCESS_FLAGS (UD: QKEY for
 * ACCESS_FLAGS), RTR STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|
 * MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER, RTS STATE|SQ_PSN|RETRY_CNT|
 * RNR_RETRY|MAX_QP_RD_ATOMIC|TIMEOUT.  The PSNs are the Linux CM's: each
 * side's rq_psn is its own starting PSN, and the other side's sq_psn.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "wire_helpers.h"

TOPO_NAMESPACES("sc-a1 sc-a2")

/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "sc-a1", "a1", { "10.92.0.1/24", "fd92::1/64 nodad" } };
static const struct topo_end end2 = { "sc-a2", "a2", { "10.92.0.2/24", "fd92::2/64 nodad" } };

static const struct softcm_timers fast = { .response = 14, .life = 10, .mra = 14, .retries = 3 };

#define WAIT_MS 20000

#define INIT_MASK	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UD_INIT_MASK	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define RTR_MASK	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK	(IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
			 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT)

/* The parameters both sides give (the active side's are the REQ's). */
#define A_QPN		0x123456
#define P_QPN		0x654321
#define A_RESP_RES	3
#define A_INIT_DEPTH	5
#define P_RESP_RES	2
#define P_INIT_DEPTH	4
#define A_RETRY		7
#define A_RNR_RETRY	6
#define P_RNR_RETRY	5

static void set_sa(struct sockaddr_storage *ss, const char *ip, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, ip, &s4->sin_addr);
	}
}

static __u32 sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sizeof(struct sockaddr_in);
}

/* INIT_QP_ATTR of @h for @state into @c; 0 or -errno. */
static int init_qp_attr(int fd, __u32 h, __u32 state, struct softcm_init_qp_attr *c)
{
	memset(c, 0, sizeof(*c));
	c->handle = h;
	c->qp_state = state;
	return ioctl(fd, SOFTCM_IOCTL_INIT_QP_ATTR, c) ? -errno : 0;
}

static int bind_id(int fd, __u32 h, const char *ip, int port)
{
	struct softcm_bind b = { .handle = h };
	struct sockaddr_storage ss;

	set_sa(&ss, ip, port);
	b.addr_len = sa_len(&ss);
	memcpy(b.addr, &ss, b.addr_len);
	return ioctl(fd, SOFTCM_IOCTL_BIND, &b) ? -errno : 0;
}

static int do_listen(int fd, __u16 ps, const char *ip, int port, __u32 *h)
{
	struct softcm_listen l = { .backlog = 4 };
	int ret = create_id(fd, ps, 0x1000 + port, h);

	ret = ret ?: bind_id(fd, *h, ip, port);
	if (ret)
		return ret;
	l.handle = *h;
	return ioctl(fd, SOFTCM_IOCTL_LISTEN, &l) ? -errno : 0;
}

static int resolve_addr(int fd, __u32 h, const char *ip, int port)
{
	struct softcm_resolve_addr r = { .handle = h, .timeout_ms = 5000 };
	struct sockaddr_storage ss;
	struct softcm_event ev;
	int ret;

	set_sa(&ss, ip, port);
	r.dst_len = sa_len(&ss);
	memcpy(r.dst, &ss, r.dst_len);
	if (ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &r))
		return -errno;
	ret = next_event(fd, &ev, WAIT_MS);
	return ret ?: ev.event == SOFTCM_EVENT_ADDR_RESOLVED ? 0 : -EPROTO;
}

static int resolve_route(int fd, __u32 h)
{
	struct softcm_resolve_route rr = { .handle = h, .timeout_ms = 5000 };
	struct softcm_event ev;
	int ret;

	if (ioctl(fd, SOFTCM_IOCTL_RESOLVE_ROUTE, &rr))
		return -errno;
	ret = next_event(fd, &ev, WAIT_MS);
	return ret ?: ev.event == SOFTCM_EVENT_ROUTE_RESOLVED ? 0 : -EPROTO;
}

/* CONNECT of id @h, the REQ announcing QP number @qpn. */
static int connect_qpn(int fd, __u32 h, __u32 qpn)
{
	struct softcm_connect c = { .handle = h };

	c.param.qp_num = qpn;
	c.param.responder_resources = A_RESP_RES;
	c.param.initiator_depth = A_INIT_DEPTH;
	c.param.retry_count = A_RETRY;
	c.param.rnr_retry_count = A_RNR_RETRY;
	return ioctl(fd, SOFTCM_IOCTL_CONNECT, &c) ? -errno : 0;
}

static int connect_id(int fd, __u32 h)
{
	return connect_qpn(fd, h, A_QPN);
}

static int accept_id(int fd, __u32 h)
{
	struct softcm_accept c = { .uid = 0x77, .handle = h };

	c.param.qp_num = P_QPN;
	c.param.responder_resources = P_RESP_RES;
	c.param.initiator_depth = P_INIT_DEPTH;
	c.param.rnr_retry_count = P_RNR_RETRY;
	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &c) ? -errno : 0;
}

static int establish_id(int fd, __u32 h)
{
	struct softcm_accept c = { .handle = h, .flags = SOFTCM_ACCEPT_ESTABLISH };

	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &c) ? -errno : 0;
}

static int query_route(int fd, __u32 h, struct softcm_query_route *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = h;
	return ioctl(fd, SOFTCM_IOCTL_QUERY_ROUTE, q) ? -errno : 0;
}

/* GID table entry @index of the file's namespace. */
static int query_gid(int fd, __u32 index, __u8 gid[16])
{
	struct softcm_query_gid q = { .port_num = 1, .index = index };

	if (ioctl(fd, SOFTCM_IOCTL_QUERY_GID, &q))
		return -errno;
	memcpy(gid, q.gid, 16);
	return 0;
}

/* A QP of @type on a new PD and CQ of @fd: its handle and number. */
static int create_qp(int fd, __u8 type, __u32 *h, __u32 *qpn)
{
	struct softcm_create_qp q = { .qp_type = type };
	struct softcm_create_cq cq = { .cqe = 16, .channel_fd = -1 };
	struct softcm_alloc_pd pd = { 0 };

	if (ioctl(fd, SOFTCM_IOCTL_ALLOC_PD, &pd) || ioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &cq))
		return -errno;
	q.pd_handle = pd.handle;
	q.send_cq_handle = cq.handle;
	q.recv_cq_handle = cq.handle;
	q.cap.max_send_wr = 4;
	q.cap.max_recv_wr = 4;
	q.cap.max_send_sge = 1;
	q.cap.max_recv_sge = 1;
	if (ioctl(fd, SOFTCM_IOCTL_CREATE_QP, &q))
		return -errno;
	*h = q.handle;
	*qpn = q.qp_num;
	return 0;
}

/* MODIFY_QP of QP @qp with what INIT_QP_ATTR gives id @id for @state. */
static int drive_qp(int fd, __u32 id, __u32 qp, __u32 state)
{
	struct softcm_init_qp_attr c;
	struct softcm_modify_qp m = { .handle = qp };
	int ret = init_qp_attr(fd, id, state, &c);

	if (ret)
		return ret;
	m.attr_mask = c.attr_mask;
	m.attr = c.attr;
	return ioctl(fd, SOFTCM_IOCTL_MODIFY_QP, &m) ? -errno : 0;
}

static int query_qp(int fd, __u32 qp, struct softcm_query_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = qp;
	q->attr_mask = ~0U;
	return ioctl(fd, SOFTCM_IOCTL_QUERY_QP, q) ? -errno : 0;
}

/* MODIFY_QP of QP @qp (file @fd) to @state, nothing else. */
static int set_qp_state(int fd, __u32 qp, __u32 state)
{
	struct softcm_modify_qp m = { .handle = qp, .attr_mask = IBV_QP_STATE };

	m.attr.qp_state = state;
	return ioctl(fd, SOFTCM_IOCTL_MODIFY_QP, &m) ? -errno : 0;
}

/*
 * QP @qp (file @fd, in RESET) to ERR: through INIT, as RESET -> ERR is
 * refused (verbs.rst).
 */
static int qp_to_err(int fd, __u32 qp)
{
	struct softcm_modify_qp m = { .handle = qp, .attr_mask = INIT_MASK };

	m.attr.qp_state = IBV_QPS_INIT;
	m.attr.port_num = 1;
	if (ioctl(fd, SOFTCM_IOCTL_MODIFY_QP, &m))
		return -errno;
	return set_qp_state(fd, qp, IBV_QPS_ERR);
}

/* The state of QP @qp of file @fd, or -errno. */
static int qp_state(int fd, __u32 qp)
{
	struct softcm_query_qp q;
	int ret = query_qp(fd, qp, &q);

	return ret ?: q.attr.qp_state;
}

/* The next event of @fd, which must be @type; -errno or -EPROTO. */
static int expect_event(int fd, __u32 type, struct softcm_event *ev)
{
	int ret = next_event(fd, ev, WAIT_MS);

	return ret ?: ev->event == type ? 0 : -EPROTO;
}

/* The Linux CM's cm_ack_timeout(): the QP's local ACK timeout. */
static int ack_timeout(int ca_ack_delay, int packet_life_time)
{
	int t = packet_life_time + 1;

	if (t >= ca_ack_delay)
		t += ca_ack_delay >= t - 1;
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return t < 31 ? t : 31;
}

static int open_in(int nsfd, int home)
{
	int fd;

	if (netns_enter(nsfd))
		return -errno;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	netns_enter(home);
	return fd;
}

FIXTURE(qpattr) {
	int home, ns[2], st[2];
	int a;		/* a file in sc-a1: active ids */
	int p;		/* a file in sc-a2: passive ids */
};

FIXTURE_SETUP(qpattr)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/sc-a1", F_OK)) {
		ASSERT_EQ(0, topo_pair(&end1, &end2));
		ASSERT_EQ(0, netns_set_timers_named("sc-a1 sc-a2", &fast));
	}
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	for (int i = 0; i < 2; i++) {
		self->ns[i] = netns_open(i ? "sc-a2" : "sc-a1");
		ASSERT_LE(0, self->ns[i]);
		self->st[i] = stats_open(self->ns[i], self->home);
		ASSERT_LE(0, self->st[i]);
	}
	self->a = open_in(self->ns[0], self->home);
	ASSERT_LE(0, self->a);
	self->p = open_in(self->ns[1], self->home);
	ASSERT_LE(0, self->p);
}

FIXTURE_TEARDOWN(qpattr)
{
	close(self->a);
	close(self->p);
	/* no connection, id or file left behind in either namespace */
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(0, stats_wait_idle(self->st[i], STATS_IDLE_MS));
		close(self->st[i]);
		close(self->ns[i]);
	}
	close(self->home);
}

/*
 * Without a device there is nothing to answer, as rdma_ucm says EINVAL
 * for an id without one: an idle id, one bound to a wildcard address, a
 * listener on one.  RTR and RTS need a connection in any case.
 */
TEST_F(qpattr, no_device_is_einval)
{
	struct softcm_init_qp_attr c;
	__u32 h, l;

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 1, &h));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
	ASSERT_EQ(0, bind_id(self->a, h, "0.0.0.0", 0));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));

	ASSERT_EQ(0, do_listen(self->a, SOFTCM_PS_TCP, "::", 7501, &l));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, l, IBV_QPS_INIT, &c));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_UDP, 2, &h));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
}

/*
 * With a device and no connection: INIT is the port, P_Key index 0 and
 * no remote access (cma_ib_init_qp_attr()), after a bind to an address,
 * on a listener bound to one, after address and route resolution; RTR
 * and RTS are EINVAL.
 */
TEST_F(qpattr, init_before_connection)
{
	struct softcm_init_qp_attr c;
	__u32 h, l;

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 1, &h));
	ASSERT_EQ(0, bind_id(self->a, h, "10.92.0.1", 0));
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(INIT_MASK, c.attr_mask);
	EXPECT_EQ(IBV_QPS_INIT, c.attr.qp_state);
	EXPECT_EQ(1, c.attr.port_num);
	EXPECT_EQ(0, c.attr.pkey_index);
	EXPECT_EQ(0, c.attr.qp_access_flags);
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));

	ASSERT_EQ(0, do_listen(self->a, SOFTCM_PS_TCP, "fd92::1", 7502, &l));
	ASSERT_EQ(0, init_qp_attr(self->a, l, IBV_QPS_INIT, &c));
	EXPECT_EQ(INIT_MASK, c.attr_mask);

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 3, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7503));
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(INIT_MASK, c.attr_mask);
	EXPECT_EQ(1, c.attr.port_num);
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(INIT_MASK, c.attr_mask);
	EXPECT_EQ(0, c.attr.qp_access_flags);
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
}

/* A QP state that no rdma_init_qp_attr() answers, or a reserved member. */
TEST_F(qpattr, bad_state_or_reserved_is_einval)
{
	static const __u32 states[] = {
		IBV_QPS_RESET, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR, 7, 0xffffffff,
	};
	struct softcm_init_qp_attr c;
	__u32 h;

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 1, &h));
	ASSERT_EQ(0, bind_id(self->a, h, "10.92.0.1", 0));
	for (unsigned int i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, states[i], &c));
	memset(&c, 0, sizeof(c));
	c.handle = h;
	c.qp_state = IBV_QPS_INIT;
	c.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->a, SOFTCM_IOCTL_INIT_QP_ATTR, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, c.attr_mask);
	c.reserved0 = 0;
	EXPECT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_INIT_QP_ATTR, &c));
}

/*
 * A handle of another file, a destroyed one, 0: ENOENT.  Handles count
 * from 1 in each file, so the other files (one of the same namespace, one
 * of the other) each make two ids, and their second handle is one this
 * file has never given out.
 */
TEST_F(qpattr, foreign_and_stale_handles)
{
	struct softcm_init_qp_attr c;
	__u32 h, first, other, near;
	int o;

	o = open_in(self->ns[0], self->home);
	ASSERT_LE(0, o);
	ASSERT_EQ(0, create_id(self->p, SOFTCM_PS_TCP, 1, &first));
	ASSERT_EQ(0, create_id(self->p, SOFTCM_PS_TCP, 1, &other));
	ASSERT_EQ(0, bind_id(self->p, other, "10.92.0.2", 0));
	ASSERT_EQ(0, create_id(o, SOFTCM_PS_TCP, 1, &first));
	ASSERT_EQ(0, create_id(o, SOFTCM_PS_TCP, 1, &near));
	ASSERT_EQ(0, bind_id(o, near, "10.92.0.1", 0));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 1, &h));
	ASSERT_EQ(0, bind_id(self->a, h, "10.92.0.1", 0));
	/* live where they were made, and never given out by this file */
	ASSERT_EQ(0, init_qp_attr(self->p, other, IBV_QPS_INIT, &c));
	ASSERT_EQ(0, init_qp_attr(o, near, IBV_QPS_INIT, &c));
	ASSERT_NE(h, other);
	ASSERT_NE(h, near);
	EXPECT_EQ(-ENOENT, init_qp_attr(self->a, other, IBV_QPS_INIT, &c));
	EXPECT_EQ(-ENOENT, init_qp_attr(self->a, near, IBV_QPS_INIT, &c));
	EXPECT_EQ(-ENOENT, init_qp_attr(self->a, h + 100, IBV_QPS_INIT, &c));
	EXPECT_EQ(-ENOENT, init_qp_attr(self->a, 0, IBV_QPS_INIT, &c));
	ASSERT_EQ(0, destroy_id(self->a, h, NULL));
	EXPECT_EQ(-ENOENT, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(-ENOENT, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
	close(o);
}

/* What both sides' RTR and RTS must say of one connection. */
static void check_connected(struct __test_metadata *_metadata, int a, __u32 ah,
			    int p, __u32 ph)
{
	struct softcm_init_qp_attr ar, as, pr, ps, ai, pi;
	struct softcm_query_route aq, pq;
	int timeout = ack_timeout(15, fast.life + softcm_slow_shift());
	__u8 gid[16];

	ASSERT_EQ(0, init_qp_attr(a, ah, IBV_QPS_INIT, &ai));
	ASSERT_EQ(0, init_qp_attr(a, ah, IBV_QPS_RTR, &ar));
	ASSERT_EQ(0, init_qp_attr(a, ah, IBV_QPS_RTS, &as));
	ASSERT_EQ(0, init_qp_attr(p, ph, IBV_QPS_INIT, &pi));
	ASSERT_EQ(0, init_qp_attr(p, ph, IBV_QPS_RTR, &pr));
	ASSERT_EQ(0, init_qp_attr(p, ph, IBV_QPS_RTS, &ps));
	ASSERT_EQ(0, query_route(a, ah, &aq));
	ASSERT_EQ(0, query_route(p, ph, &pq));

	/* INIT: remote writes, reads and atomics: both have responder resources */
	EXPECT_EQ(INIT_MASK, ai.attr_mask);
	EXPECT_EQ(INIT_MASK, pi.attr_mask);
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, ai.attr.qp_access_flags);
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, pi.attr.qp_access_flags);
	EXPECT_EQ(1, ai.attr.port_num);
	EXPECT_EQ(1, pi.attr.port_num);

	/* RTR: each side's peer QP, and the PSNs cross */
	EXPECT_EQ(RTR_MASK, ar.attr_mask);
	EXPECT_EQ(RTR_MASK, pr.attr_mask);
	EXPECT_EQ(IBV_QPS_RTR, ar.attr.qp_state);
	EXPECT_EQ(P_QPN, ar.attr.dest_qp_num);
	EXPECT_EQ(A_QPN, pr.attr.dest_qp_num);
	EXPECT_EQ(ps.attr.sq_psn, ar.attr.rq_psn);
	EXPECT_EQ(as.attr.sq_psn, pr.attr.rq_psn);
	EXPECT_NE(ar.attr.rq_psn, pr.attr.rq_psn);	/* 1 in 2^24 */
	EXPECT_EQ(0, ar.attr.rq_psn >> 24);
	EXPECT_EQ(0, pr.attr.rq_psn >> 24);
	EXPECT_EQ(IBV_MTU_1024, ar.attr.path_mtu);	/* veth, MTU 1500 */
	EXPECT_EQ(IBV_MTU_1024, pr.attr.path_mtu);
	/* the REP's initiator depth and the accept's responder resources */
	EXPECT_EQ(P_INIT_DEPTH, ar.attr.max_dest_rd_atomic);
	EXPECT_EQ(P_RESP_RES, pr.attr.max_dest_rd_atomic);
	EXPECT_EQ(0, ar.attr.min_rnr_timer);
	EXPECT_EQ(0, pr.attr.min_rnr_timer);
	/* the address vectors: towards each other, on the same path */
	EXPECT_EQ(0, memcmp(ar.attr.ah_attr.dgid, aq.dgid, 16));
	EXPECT_EQ(0, memcmp(pr.attr.ah_attr.dgid, aq.sgid, 16));
	EXPECT_EQ(0, memcmp(pr.attr.ah_attr.dgid, pq.dgid, 16));
	EXPECT_EQ(1, ar.attr.ah_attr.is_global);
	EXPECT_EQ(1, pr.attr.ah_attr.is_global);
	EXPECT_EQ(1, ar.attr.ah_attr.port_num);
	EXPECT_EQ(1, pr.attr.ah_attr.port_num);
	EXPECT_EQ(aq.hop_limit, ar.attr.ah_attr.hop_limit);
	EXPECT_EQ(pq.hop_limit, pr.attr.ah_attr.hop_limit);
	EXPECT_EQ(aq.flow_label, ar.attr.ah_attr.flow_label);
	EXPECT_EQ(aq.flow_label, pr.attr.ah_attr.flow_label);
	EXPECT_EQ(aq.traffic_class, ar.attr.ah_attr.traffic_class);
	EXPECT_EQ(aq.traffic_class, pr.attr.ah_attr.traffic_class);
	/* the source GID's index in each side's table */
	ASSERT_EQ(0, query_gid(a, ar.attr.ah_attr.sgid_index, gid));
	EXPECT_EQ(0, memcmp(gid, aq.sgid, 16));
	ASSERT_EQ(0, query_gid(p, pr.attr.ah_attr.sgid_index, gid));
	EXPECT_EQ(0, memcmp(gid, pq.sgid, 16));
	EXPECT_EQ(0, memcmp(gid, ar.attr.ah_attr.dgid, 16));

	/* RTS: the depths the other side answers for, the retry counts */
	EXPECT_EQ(RTS_MASK, as.attr_mask);
	EXPECT_EQ(RTS_MASK, ps.attr_mask);
	EXPECT_EQ(IBV_QPS_RTS, as.attr.qp_state);
	EXPECT_EQ(P_RESP_RES, as.attr.max_rd_atomic);
	EXPECT_EQ(P_INIT_DEPTH, ps.attr.max_rd_atomic);
	EXPECT_EQ(A_RETRY, as.attr.retry_cnt);
	EXPECT_EQ(A_RETRY, ps.attr.retry_cnt);
	EXPECT_EQ(P_RNR_RETRY, as.attr.rnr_retry);	/* the REP's */
	EXPECT_EQ(A_RNR_RETRY, ps.attr.rnr_retry);	/* the REQ's */
	EXPECT_EQ(timeout, as.attr.timeout);
	EXPECT_EQ(timeout, ps.attr.timeout);
}

/*
 * One connection from request to disconnect: what each side may ask for
 * at each step, and the two sides' attributes, which must fit together
 * (the peer's QP number, the PSNs crossing, the depths), with the Linux
 * CM's masks.
 */
TEST_F(qpattr, connection_sides_agree)
{
	struct softcm_init_qp_attr c;
	struct softcm_event ev;
	__u32 l, h, ph;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7510, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 5, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7510));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, connect_id(self->a, h));

	/* REQ sent: INIT with the REQ's responder resources, no RTR yet */
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(INIT_MASK, c.attr_mask);
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, c.attr.qp_access_flags);
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));

	/* REQ received: all three, before the answer (cm.c allows RTS) */
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	ASSERT_EQ(0, init_qp_attr(self->p, ph, IBV_QPS_RTR, &c));
	EXPECT_EQ(RTR_MASK, c.attr_mask);
	EXPECT_EQ(A_QPN, c.attr.dest_qp_num);
	EXPECT_EQ(A_INIT_DEPTH, c.attr.max_dest_rd_atomic);	/* the REQ's, turned */
	ASSERT_EQ(0, init_qp_attr(self->p, ph, IBV_QPS_RTS, &c));
	EXPECT_EQ(RTS_MASK, c.attr_mask);
	EXPECT_EQ(A_RESP_RES, c.attr.max_rd_atomic);

	/* REP received (CONNECT_RESPONSE), then established on both sides */
	ASSERT_EQ(0, accept_id(self->p, ph));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	check_connected(_metadata, self->a, h, self->p, ph);
	ASSERT_EQ(0, establish_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));
	check_connected(_metadata, self->a, h, self->p, ph);

	/* over: nothing more to move a QP to */
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = h }));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_DISCONNECTED, &ev));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_DISCONNECTED, &ev));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->p, ph, IBV_QPS_RTS, &c));
}

/*
 * The same over IPv6, with ACK_TIMEOUT set on the active id: its RTS
 * timeout is the option's (rdma_set_ack_timeout()), the passive side's
 * the one the REQ implies.  A REJ ends it: EINVAL after.
 */
TEST_F(qpattr, ipv6_ack_timeout_and_reject)
{
	struct softcm_set_option o = { .level = SOFTCM_OPTION_ID,
				       .optname = SOFTCM_OPTION_ID_ACK_TIMEOUT };
	struct softcm_reject rej = { 0 };
	struct softcm_init_qp_attr c, s;
	struct softcm_query_route q;
	struct softcm_event ev;
	__u8 want[16];
	__u32 l, h;
	int ack = 12 + softcm_slow_shift();

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "::", 7511, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 6, &h));
	o.handle = h;
	o.value = ack;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_SET_OPTION, &o));
	ASSERT_EQ(0, resolve_addr(self->a, h, "fd92::2", 7511));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, connect_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ASSERT_EQ(0, init_qp_attr(self->p, ev.handle, IBV_QPS_RTR, &c));
	inet_pton(AF_INET6, "fd92::1", want);
	EXPECT_EQ(0, memcmp(want, c.attr.ah_attr.dgid, 16));
	ASSERT_EQ(0, init_qp_attr(self->p, ev.handle, IBV_QPS_RTS, &s));
	/*
	 * The REQ's local ACK timeout, from the option's packet life time;
	 * the passive QP's is that life time plus one, as the Linux CM's.
	 */
	EXPECT_EQ(ack_timeout(15, ack - 1), s.attr.timeout);
	ASSERT_EQ(0, accept_id(self->p, ev.handle));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTS, &s));
	EXPECT_EQ(ack, s.attr.timeout);
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	ASSERT_EQ(0, query_route(self->a, h, &q));
	inet_pton(AF_INET6, "fd92::2", want);
	EXPECT_EQ(0, memcmp(want, c.attr.ah_attr.dgid, 16));
	EXPECT_EQ(0, memcmp(q.dgid, c.attr.ah_attr.dgid, 16));
	EXPECT_EQ(P_QPN, c.attr.dest_qp_num);

	/* the active side rejects the REP: the connection is over */
	rej.handle = h;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_REJECT, &rej));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(-EINVAL, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
}

/*
 * UD ids: INIT with rdma_cm's Q_Key, RTR the state alone, RTS the state
 * and a send PSN of 0 (what librdmacm and cma_init_ud_qp() apply), on
 * both sides of a SIDR exchange and before it.
 */
TEST_F(qpattr, ud_ids_get_the_qkey)
{
	struct softcm_init_qp_attr c;
	struct softcm_event ev;
	__u32 l, h;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_UDP, "10.92.0.2", 7520, &l));
	ASSERT_EQ(0, init_qp_attr(self->p, l, IBV_QPS_INIT, &c));
	EXPECT_EQ(UD_INIT_MASK, c.attr_mask);
	EXPECT_EQ(SOFTCM_UDP_QKEY, c.attr.qkey);
	EXPECT_EQ(1, c.attr.port_num);
	EXPECT_EQ(0, c.attr.pkey_index);
	EXPECT_EQ(0, c.attr.qp_access_flags);

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_UDP, 7, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7520));
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(UD_INIT_MASK, c.attr_mask);
	EXPECT_EQ(SOFTCM_UDP_QKEY, c.attr.qkey);
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(IBV_QP_STATE, c.attr_mask);
	EXPECT_EQ(IBV_QPS_RTR, c.attr.qp_state);
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
	EXPECT_EQ(IBV_QP_STATE | IBV_QP_SQ_PSN, c.attr_mask);
	EXPECT_EQ(IBV_QPS_RTS, c.attr.qp_state);
	EXPECT_EQ(0, c.attr.sq_psn);

	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, connect_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ASSERT_EQ(0, init_qp_attr(self->p, ev.handle, IBV_QPS_INIT, &c));
	EXPECT_EQ(UD_INIT_MASK, c.attr_mask);
	EXPECT_EQ(SOFTCM_UDP_QKEY, c.attr.qkey);
	ASSERT_EQ(0, accept_id(self->p, ev.handle));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_ESTABLISHED, &ev));
	EXPECT_EQ(P_QPN, ev.param.qp_num);
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_INIT, &c));
	EXPECT_EQ(UD_INIT_MASK, c.attr_mask);
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
	EXPECT_EQ(IBV_QP_STATE | IBV_QP_SQ_PSN, c.attr_mask);
}

/*
 * What INIT_QP_ATTR gives is what the QPs take, as rdma_cm drives them:
 * INIT at creation, INIT again with the connection's access flags, RTR
 * and RTS on the REP (active) and on the accept (passive), the QP numbers
 * in the REQ and REP those of the QPs; then each QP sends from the PSN
 * the other receives from.  A UD QP goes to RTS on its id's attributes.
 */
TEST_F(qpattr, cm_attributes_drive_qps)
{
	struct softcm_query_qp aq, pq;
	struct softcm_connect conn = { 0 };
	struct softcm_accept acc = { .uid = 9 };
	struct softcm_event ev;
	__u32 l, h, ph, aqp, aqpn, pqp, pqpn, uqp, uqpn;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7530, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 8, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7530));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, create_qp(self->a, IBV_QPT_RC, &aqp, &aqpn));
	ASSERT_EQ(0, drive_qp(self->a, h, aqp, IBV_QPS_INIT));	/* rdma_create_qp() */

	conn.handle = h;
	conn.param.qp_num = aqpn;
	conn.param.responder_resources = 1;
	conn.param.initiator_depth = 1;
	conn.param.retry_count = 7;
	conn.param.rnr_retry_count = 7;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_CONNECT, &conn));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	EXPECT_EQ(aqpn, ev.param.qp_num);

	/* the passive side: its QP to RTS before it accepts, as rdma_accept() */
	ASSERT_EQ(0, create_qp(self->p, IBV_QPT_RC, &pqp, &pqpn));
	ASSERT_EQ(0, drive_qp(self->p, ph, pqp, IBV_QPS_INIT));
	ASSERT_EQ(0, drive_qp(self->p, ph, pqp, IBV_QPS_RTR));
	ASSERT_EQ(0, drive_qp(self->p, ph, pqp, IBV_QPS_RTS));
	acc.handle = ph;
	acc.param.qp_num = pqpn;
	acc.param.responder_resources = 1;
	acc.param.initiator_depth = 1;
	acc.param.rnr_retry_count = 7;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &acc));

	/* the active side on the REP: INIT again, RTR, RTS, then the RTU */
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	EXPECT_EQ(pqpn, ev.param.qp_num);
	ASSERT_EQ(0, drive_qp(self->a, h, aqp, IBV_QPS_INIT));
	ASSERT_EQ(0, drive_qp(self->a, h, aqp, IBV_QPS_RTR));
	ASSERT_EQ(0, drive_qp(self->a, h, aqp, IBV_QPS_RTS));
	ASSERT_EQ(0, establish_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));

	ASSERT_EQ(0, query_qp(self->a, aqp, &aq));
	ASSERT_EQ(0, query_qp(self->p, pqp, &pq));
	EXPECT_EQ(IBV_QPS_RTS, aq.attr.qp_state);
	EXPECT_EQ(IBV_QPS_RTS, pq.attr.qp_state);
	EXPECT_EQ(pqpn, aq.attr.dest_qp_num);
	EXPECT_EQ(aqpn, pq.attr.dest_qp_num);
	EXPECT_EQ(pq.attr.rq_psn, aq.attr.sq_psn);
	EXPECT_EQ(aq.attr.rq_psn, pq.attr.sq_psn);
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, aq.attr.qp_access_flags);

	/* a UD id's attributes take a UD QP to RTS */
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_UDP, 10, &h));
	ASSERT_EQ(0, bind_id(self->a, h, "10.92.0.1", 0));
	ASSERT_EQ(0, create_qp(self->a, IBV_QPT_UD, &uqp, &uqpn));
	ASSERT_EQ(0, drive_qp(self->a, h, uqp, IBV_QPS_INIT));
	ASSERT_EQ(0, drive_qp(self->a, h, uqp, IBV_QPS_RTR));
	ASSERT_EQ(0, drive_qp(self->a, h, uqp, IBV_QPS_RTS));
	ASSERT_EQ(0, query_qp(self->a, uqp, &aq));
	EXPECT_EQ(IBV_QPS_RTS, aq.attr.qp_state);
	EXPECT_EQ(SOFTCM_UDP_QKEY, aq.attr.qkey);
}

/*
 * The source address a connection was made from goes away: RTR has no
 * GID to send from (EADDRNOTAVAIL); RTS, which names none, still answers.
 */
TEST_F(qpattr, source_address_gone_is_eaddrnotavail)
{
	struct softcm_resolve_addr r = { .timeout_ms = 5000 };
	struct softcm_init_qp_attr c;
	struct sockaddr_storage ss;
	struct softcm_event ev;
	__u32 l, h;

	ASSERT_EQ(0, system("ip -n sc-a1 addr add 10.92.0.11/24 dev a1"));
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7531, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 11, &h));
	r.handle = h;
	set_sa(&ss, "10.92.0.11", 0);
	r.src_len = sa_len(&ss);
	memcpy(r.src, &ss, r.src_len);
	set_sa(&ss, "10.92.0.2", 7531);
	r.dst_len = sa_len(&ss);
	memcpy(r.dst, &ss, r.dst_len);
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_RESOLVE_ADDR, &r));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_ADDR_RESOLVED, &ev));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, connect_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ASSERT_EQ(0, accept_id(self->p, ev.handle));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	ASSERT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));

	ASSERT_EQ(0, system("ip -n sc-a1 addr del 10.92.0.11/24 dev a1"));
	EXPECT_EQ(-EADDRNOTAVAIL, init_qp_attr(self->a, h, IBV_QPS_RTR, &c));
	EXPECT_EQ(0, init_qp_attr(self->a, h, IBV_QPS_RTS, &c));
}

/*
 * ACCEPT of id @h with @flags, naming QP @qh of file @qfd; a REP names
 * QP number @qpn and the passive side's depths.
 */
static int do_accept(int fd, __u32 h, __u32 flags, int qfd, __u32 qh, __u32 qpn)
{
	struct softcm_accept c = { .uid = 0x78, .handle = h, .flags = flags };

	c.qp_fd = qfd;
	c.qp_handle = qh;
	if (!(flags & SOFTCM_ACCEPT_ESTABLISH)) {
		c.param.qp_num = qpn;
		c.param.responder_resources = P_RESP_RES;
		c.param.initiator_depth = P_INIT_DEPTH;
		c.param.rnr_retry_count = P_RNR_RETRY;
	}
	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &c) ? -errno : 0;
}

/* ACCEPT's first ABI version: the struct up to qp_fd. */
#define ACCEPT_V1_SIZE	offsetof(struct softcm_accept, qp_fd)
#define IOCTL_ACCEPT_SIZED(size) \
	_IOC(_IOC_READ | _IOC_WRITE, SOFTCM_IOCTL_TYPE, SOFTCM_CMD_ACCEPT, size)

/* With SOFTCM_ACCEPT_QP: the QP @qh of file @qfd moves, then the REP or RTU. */
static int accept_qp(int fd, __u32 h, __u32 flags, int qfd, __u32 qh, __u32 qpn)
{
	return do_accept(fd, h, SOFTCM_ACCEPT_QP | flags, qfd, qh, qpn);
}

/*
 * MODIFY_QP of QP @qp (file @qfd) with what INIT_QP_ATTR gives id @id
 * (file @fd) for @state, with librdmacm's depths: @depth replaces the
 * kernel's (RTR's max_dest_rd_atomic, RTS's max_rd_atomic) unless 0xff.
 */
static int drive_qp_at(int fd, __u32 id, int qfd, __u32 qp, __u32 state, __u8 depth)
{
	struct softcm_init_qp_attr c;
	struct softcm_modify_qp m = { .handle = qp };
	int ret = init_qp_attr(fd, id, state, &c);

	if (ret)
		return ret;
	if (depth != 0xff && state == IBV_QPS_RTR)
		c.attr.max_dest_rd_atomic = depth;
	if (depth != 0xff && state == IBV_QPS_RTS)
		c.attr.max_rd_atomic = depth;
	m.attr_mask = c.attr_mask;
	m.attr = c.attr;
	return ioctl(qfd, SOFTCM_IOCTL_MODIFY_QP, &m) ? -errno : 0;
}

/* One connection's ids and QPs: the QPs in files of their own (aq, pq). */
struct qconn {
	__u32 h, ph, aqp, aqpn, pqp, pqpn;
};

/*
 * A connection on @port whose QPs move the old way (INIT_QP_ATTR and
 * MODIFY_QP, three times a side, as libsoftcm did) or with ACCEPT's
 * SOFTCM_ACCEPT_QP, established on both sides.  The old way's REP is
 * sent with ACCEPT's first struct (288 bytes), as an older library would.
 */
static void qconnect(struct __test_metadata *_metadata, FIXTURE_DATA(qpattr) *self,
		     int aq, int pq, int port, bool with_accept_qp, struct qconn *k)
{
	struct softcm_connect conn = { 0 };
	struct softcm_event ev;
	__u32 l;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", port, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, port, &k->h));
	ASSERT_EQ(0, resolve_addr(self->a, k->h, "10.92.0.2", port));
	ASSERT_EQ(0, resolve_route(self->a, k->h));
	ASSERT_EQ(0, create_qp(aq, IBV_QPT_RC, &k->aqp, &k->aqpn));
	ASSERT_EQ(0, drive_qp_at(self->a, k->h, aq, k->aqp, IBV_QPS_INIT, 0xff));
	conn.handle = k->h;
	conn.param.qp_num = k->aqpn;
	conn.param.responder_resources = A_RESP_RES;
	conn.param.initiator_depth = A_INIT_DEPTH;
	conn.param.retry_count = A_RETRY;
	conn.param.rnr_retry_count = A_RNR_RETRY;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_CONNECT, &conn));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	k->ph = ev.handle;
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &k->pqp, &k->pqpn));
	ASSERT_EQ(0, drive_qp_at(self->p, k->ph, pq, k->pqp, IBV_QPS_INIT, 0xff));
	if (with_accept_qp) {
		ASSERT_EQ(0, accept_qp(self->p, k->ph, 0, pq, k->pqp, k->pqpn));
	} else {
		ASSERT_EQ(0, drive_qp_at(self->p, k->ph, pq, k->pqp, IBV_QPS_INIT, 0xff));
		ASSERT_EQ(0, drive_qp_at(self->p, k->ph, pq, k->pqp, IBV_QPS_RTR, P_RESP_RES));
		ASSERT_EQ(0, drive_qp_at(self->p, k->ph, pq, k->pqp, IBV_QPS_RTS, P_INIT_DEPTH));
		/* as a library built before SOFTCM_ACCEPT_QP: 288 bytes */
		struct softcm_accept c = { .uid = 0x78, .handle = k->ph };

		c.param.qp_num = k->pqpn;
		c.param.responder_resources = P_RESP_RES;
		c.param.initiator_depth = P_INIT_DEPTH;
		c.param.rnr_retry_count = P_RNR_RETRY;
		ASSERT_EQ(288, ACCEPT_V1_SIZE);
		EXPECT_EQ(-1, ioctl(self->p, IOCTL_ACCEPT_SIZED(ACCEPT_V1_SIZE - 4), &c));
		EXPECT_EQ(EINVAL, errno);
		ASSERT_EQ(0, ioctl(self->p, IOCTL_ACCEPT_SIZED(ACCEPT_V1_SIZE), &c));
	}
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	if (with_accept_qp) {
		ASSERT_EQ(0, accept_qp(self->a, k->h, SOFTCM_ACCEPT_ESTABLISH, aq, k->aqp, 0));
	} else {
		ASSERT_EQ(0, drive_qp_at(self->a, k->h, aq, k->aqp, IBV_QPS_INIT, 0xff));
		ASSERT_EQ(0, drive_qp_at(self->a, k->h, aq, k->aqp, IBV_QPS_RTR, 0xff));
		ASSERT_EQ(0, drive_qp_at(self->a, k->h, aq, k->aqp, IBV_QPS_RTS, 0xff));
		ASSERT_EQ(0, establish_id(self->a, k->h));
	}
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));
	ASSERT_EQ(0, destroy_id(self->p, l, NULL));
}

static int first_diff(const void *a, const void *b, size_t len)
{
	const __u8 *x = a, *y = b;

	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return i;
	return -1;
}

/*
 * What is particular to one connection: the peer's QP number, the PSNs
 * (checked to cross) and the flow label (the path's, from the ports);
 * zeroed, so that two connections' QPs compare whole.
 */
static void strip_conn(struct __test_metadata *_metadata, struct softcm_query_qp *q,
		       int fd, __u32 h, __u32 peer_qpn, __u32 peer_rq_psn)
{
	struct softcm_query_route r;

	ASSERT_EQ(0, query_route(fd, h, &r));
	EXPECT_EQ(peer_qpn, q->attr.dest_qp_num);
	EXPECT_EQ(peer_rq_psn, q->attr.sq_psn);
	EXPECT_EQ(r.flow_label, q->attr.ah_attr.flow_label);
	q->attr.dest_qp_num = 0;
	q->attr.sq_psn = 0;
	q->attr.rq_psn = 0;
	q->attr.ah_attr.flow_label = 0;
}

/*
 * ACCEPT with SOFTCM_ACCEPT_QP, on the REP (passive) and on the RTU
 * (active), leaves each QP in RTS with exactly what the six INIT_QP_ATTR
 * and MODIFY_QP calls of librdmacm's path give, the REP's depths
 * included: two connections, one each way, compared attribute by
 * attribute.  The QPs are in files of their own, as a verbs context's.
 * The old way's REP goes with ACCEPT's first struct size, still accepted.
 */
TEST_F(qpattr, accept_qp_moves_as_six_calls)
{
	struct softcm_query_qp oa, op, na, np;
	struct qconn o, n;
	__u32 psn[4];
	int aq, pq;

	aq = open_in(self->ns[0], self->home);
	ASSERT_LE(0, aq);
	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	qconnect(_metadata, self, aq, pq, 7540, false, &o);
	qconnect(_metadata, self, aq, pq, 7541, true, &n);

	ASSERT_EQ(0, query_qp(aq, o.aqp, &oa));
	ASSERT_EQ(0, query_qp(pq, o.pqp, &op));
	ASSERT_EQ(0, query_qp(aq, n.aqp, &na));
	ASSERT_EQ(0, query_qp(pq, n.pqp, &np));
	EXPECT_EQ(IBV_QPS_RTS, na.attr.qp_state);
	EXPECT_EQ(IBV_QPS_RTS, np.attr.qp_state);
	/* the depths the REP announced, turned on the active side */
	EXPECT_EQ(P_RESP_RES, np.attr.max_dest_rd_atomic);
	EXPECT_EQ(P_INIT_DEPTH, np.attr.max_rd_atomic);
	EXPECT_EQ(P_INIT_DEPTH, na.attr.max_dest_rd_atomic);
	EXPECT_EQ(P_RESP_RES, na.attr.max_rd_atomic);

	psn[0] = oa.attr.rq_psn;
	psn[1] = op.attr.rq_psn;
	psn[2] = na.attr.rq_psn;
	psn[3] = np.attr.rq_psn;
	strip_conn(_metadata, &oa, self->a, o.h, o.pqpn, psn[1]);
	strip_conn(_metadata, &op, self->p, o.ph, o.aqpn, psn[0]);
	strip_conn(_metadata, &na, self->a, n.h, n.pqpn, psn[3]);
	strip_conn(_metadata, &np, self->p, n.ph, n.aqpn, psn[2]);
	/* the first byte of the attributes that differs, if one does */
	EXPECT_EQ(-1, first_diff(&oa.attr, &na.attr, sizeof(oa.attr)));
	EXPECT_EQ(-1, first_diff(&op.attr, &np.attr, sizeof(op.attr)));
	close(aq);
	close(pq);
}

/*
 * What ACCEPT refuses before it touches the QP or the connection: no
 * descriptor (EBADF), one that is not /dev/softcm (EINVAL), no such QP
 * (ENOENT, a destroyed one too), a UD QP (EINVAL), a QP of another
 * namespace's file (EINVAL), qp_fd or qp_handle without the flag
 * (EINVAL).  The QP stays in INIT, the request unanswered: the same
 * ACCEPT, right, then works.
 */
TEST_F(qpattr, accept_qp_bad_qp_refused)
{
	struct softcm_accept c = { .handle = 0 };
	struct softcm_query_qp q;
	struct softcm_event ev;
	__u32 l, h, ph, qp, qpn, ud, udn, fqp, fqpn, gone, gonen;
	int pq, nul;

	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nul);
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7542, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 12, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7542));
	ASSERT_EQ(0, resolve_route(self->a, h));
	/* an RC QP of the active namespace's file, which the REQ announces */
	ASSERT_EQ(0, create_qp(self->a, IBV_QPT_RC, &fqp, &fqpn));
	ASSERT_EQ(0, connect_qpn(self->a, h, fqpn));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &qp, &qpn));
	ASSERT_EQ(0, drive_qp_at(self->p, ph, pq, qp, IBV_QPS_INIT, 0xff));
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_UD, &ud, &udn));

	EXPECT_EQ(-EBADF, accept_qp(self->p, ph, 0, -1, qp, qpn));
	EXPECT_EQ(-EBADF, accept_qp(self->p, ph, 0, 1000000, qp, qpn));
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, nul, qp, qpn));
	EXPECT_EQ(-ENOENT, accept_qp(self->p, ph, 0, pq, qp + 1000, qpn));
	EXPECT_EQ(-ENOENT, accept_qp(self->p, ph, 0, pq, 0, qpn));
	/* destroyed: its handle names nothing */
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &gone, &gonen));
	ASSERT_EQ(0, ioctl(pq, SOFTCM_IOCTL_DESTROY_QP, &(struct softcm_destroy_qp){ .handle = gone }));
	EXPECT_EQ(-ENOENT, accept_qp(self->p, ph, 0, pq, gone, gonen));
	/*
	 * Each REP announces the QP named, so that only the QP's type or
	 * namespace refuses it; neither QP was moved (or put in ERR).
	 */
	ASSERT_EQ(IBV_QPS_RESET, qp_state(pq, ud));
	ASSERT_EQ(IBV_QPS_RESET, qp_state(self->a, fqp));
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, pq, ud, udn));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(pq, ud));
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, self->a, fqp, fqpn));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(self->a, fqp));
	c.handle = ph;
	c.qp_handle = qp;
	EXPECT_EQ(-1, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	EXPECT_EQ(EINVAL, errno);
	c.qp_handle = 0;
	c.qp_fd = pq;
	EXPECT_EQ(-1, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	EXPECT_EQ(EINVAL, errno);

	/* nothing moved, nothing sent: the request is still to be answered */
	ASSERT_EQ(0, query_qp(pq, qp, &q));
	EXPECT_EQ(IBV_QPS_INIT, q.attr.qp_state);
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, ph));
	ASSERT_EQ(0, accept_qp(self->p, ph, 0, pq, qp, qpn));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	ASSERT_EQ(0, query_qp(pq, qp, &q));
	EXPECT_EQ(IBV_QPS_RTS, q.attr.qp_state);

	/* the RTU's checks are the same: the active side's QP of the wrong file */
	EXPECT_EQ(-EINVAL, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, pq, qp, 0));
	EXPECT_EQ(-EBADF, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, -1, fqp, 0));
	ASSERT_EQ(0, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, self->a, fqp, 0));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));
	ASSERT_EQ(0, query_qp(self->a, fqp, &q));
	EXPECT_EQ(IBV_QPS_RTS, q.attr.qp_state);
	EXPECT_EQ(qpn, q.attr.dest_qp_num);
	close(nul);
	close(pq);
}

/*
 * A REP is checked whole before the QP moves: one announcing another QP
 * than the one that moves (or none, 0), one with too much private data,
 * one with reserved0 set: EINVAL, the QP still in INIT, the request
 * unanswered.  The REP then sent announces the QP that moved, with srq 0
 * whatever param.srq says (no QP of ours has an SRQ).  A second ACCEPT,
 * in REP_SENT and once established, is EINVAL and leaves the QP in RTS.
 */
TEST_F(qpattr, accept_qp_rep_checked_before_move)
{
	struct softcm_accept c = { .uid = 1, .flags = SOFTCM_ACCEPT_QP };
	struct softcm_event ev;
	__u32 l, h, ph, q1, q1n, q2, q2n;
	int pq;

	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7545, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 15, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7545));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, connect_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &q1, &q1n));
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &q2, &q2n));
	ASSERT_EQ(0, drive_qp_at(self->p, ph, pq, q1, IBV_QPS_INIT, 0xff));

	/* q1 moves, q2 (or nothing) announced */
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, pq, q1, q2n));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(pq, q1));
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, pq, q1, 0));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(pq, q1));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(pq, q2));

	c.handle = ph;
	c.qp_fd = pq;
	c.qp_handle = q1;
	c.param.qp_num = q1n;
	c.param.private_data_len = SOFTCM_REP_PRIVATE_DATA + 1;
	EXPECT_EQ(-1, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_QPS_INIT, qp_state(pq, q1));
	c.param.private_data_len = 0;
	c.param.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_QPS_INIT, qp_state(pq, q1));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, ph));

	/* right: the one REP the active side gets names q1, without an SRQ */
	c.param.reserved0 = 0;
	c.param.srq = 1;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	EXPECT_EQ(q1n, ev.param.qp_num);
	EXPECT_EQ(0, ev.param.srq);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(pq, q1));

	/* answered (REP_SENT), then established: a second ACCEPT changes nothing */
	c.param.srq = 0;
	EXPECT_EQ(-1, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(pq, q1));
	ASSERT_EQ(0, establish_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));
	EXPECT_EQ(-1, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(pq, q1));
	close(pq);
}

/*
 * An RTU is checked before the QP moves: for another QP than the one the
 * REQ announced, or a REP (no SOFTCM_ACCEPT_ESTABLISH) on the active side:
 * EINVAL, the QP as it was, and no RTU sent (the passive side is not
 * established).  The announced QP then goes to RTS with the RTU, and a
 * second ACCEPT on the established connection is EINVAL, the QP in RTS.
 */
TEST_F(qpattr, accept_qp_rtu_checked_before_move)
{
	struct softcm_query_qp q;
	struct softcm_event ev;
	__u32 l, h, ph, aqp, aqpn, oqp, oqpn;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7546, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 16, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7546));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, create_qp(self->a, IBV_QPT_RC, &aqp, &aqpn));
	ASSERT_EQ(0, create_qp(self->a, IBV_QPT_RC, &oqp, &oqpn));
	ASSERT_EQ(0, drive_qp_at(self->a, h, self->a, aqp, IBV_QPS_INIT, 0xff));
	ASSERT_EQ(0, drive_qp_at(self->a, h, self->a, oqp, IBV_QPS_INIT, 0xff));
	ASSERT_EQ(0, connect_qpn(self->a, h, aqpn));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, ph));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));

	EXPECT_EQ(-EINVAL, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, self->a, oqp, 0));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(self->a, oqp));
	EXPECT_EQ(-EINVAL, accept_qp(self->a, h, 0, self->a, aqp, aqpn));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(self->a, aqp));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, ph));

	ASSERT_EQ(0, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, self->a, aqp, 0));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));
	ASSERT_EQ(0, query_qp(self->a, aqp, &q));
	EXPECT_EQ(IBV_QPS_RTS, q.attr.qp_state);
	EXPECT_EQ(P_QPN, q.attr.dest_qp_num);

	EXPECT_EQ(-EINVAL, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, self->a, aqp, 0));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(self->a, aqp));
	EXPECT_EQ(-EINVAL, accept_qp(self->a, h, 0, self->a, aqp, aqpn));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(self->a, aqp));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(self->a, oqp));
}

/*
 * Refused before the moves, the QP unchanged: an RTU before the REP.  A
 * move that fails (the QP is in RTS already: no way back to INIT, as
 * from ERR) leaves the QP in ERR, the command fails, and nothing was
 * sent: the request is still unanswered, and the REP the active side
 * then gets is the one of another QP, accepted right.  (The other way to
 * ERR, a REP or RTU that cannot be sent, fails only on ENOMEM: no test.)
 */
TEST_F(qpattr, accept_qp_failure_errs_qp_sends_nothing)
{
	struct softcm_accept c = { .uid = 1, .flags = SOFTCM_ACCEPT_QP };
	struct softcm_event ev;
	__u32 l, h, ph, q1, q1n, q2, q2n, q3, q3n, aqp, aqpn;
	int pq;

	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7543, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 13, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7543));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, create_qp(self->a, IBV_QPT_RC, &aqp, &aqpn));
	ASSERT_EQ(0, connect_qpn(self->a, h, aqpn));
	/* before the REP there is no RTU to send: EINVAL, the QP untouched */
	EXPECT_EQ(-EINVAL, accept_qp(self->a, h, SOFTCM_ACCEPT_ESTABLISH, self->a, aqp, 0));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(self->a, aqp));

	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &q1, &q1n));
	ASSERT_EQ(0, drive_qp_at(self->p, ph, pq, q1, IBV_QPS_INIT, 0xff));
	ASSERT_EQ(0, drive_qp_at(self->p, ph, pq, q1, IBV_QPS_RTR, 0xff));
	ASSERT_EQ(0, drive_qp_at(self->p, ph, pq, q1, IBV_QPS_RTS, 0xff));
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, pq, q1, q1n));
	EXPECT_EQ(IBV_QPS_ERR, qp_state(pq, q1));
	/* from ERR either: the move fails, the QP stays there */
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &q2, &q2n));
	ASSERT_EQ(0, qp_to_err(pq, q2));
	EXPECT_EQ(-EINVAL, accept_qp(self->p, ph, 0, pq, q2, q2n));
	EXPECT_EQ(IBV_QPS_ERR, qp_state(pq, q2));

	/* still unanswered: the first REP the active side sees is q3's */
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, ph));
	ASSERT_EQ(0, create_qp(pq, IBV_QPT_RC, &q3, &q3n));
	c.handle = ph;
	c.qp_fd = pq;
	c.qp_handle = q3;
	c.param.qp_num = q3n;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &c));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	EXPECT_EQ(q3n, ev.param.qp_num);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(pq, q3));
	close(pq);
}

/* The QP file and handle a racing ACCEPT names, changing under it. */
struct qp_race {
	int nsfd, qfd;
	__u32 ph;
	_Atomic __u64 qp;	/* a QP's handle, its number in the high half */
	atomic_int done;
	int rounds;
	int failed;		/* the line of the first failure, 0 if none */
	__u32 live[4];		/* the QPs of the file at the end (0: none) */
	int accepts, bad, first_bad, errs[2];
};

/*
 * Create and destroy QPs in the QP file (each lives four rounds), moving
 * each to ERR (no ACCEPT can move it out) and storing its handle and
 * number for the other thread, and now and then replace the file
 * itself (dup2 of a new
 * /dev/softcm over its descriptor: the old file is released while an
 * ACCEPT may hold it).
 */
static void *qp_churn(void *p)
{
	struct qp_race *r = p;
	__u32 *live = r->live, h, qpn;

	/* this thread only: its new files are the passive namespace's */
	if (netns_enter(r->nsfd))
		r->failed = __LINE__;
	for (int i = 0; i < r->rounds && !r->failed; i++) {
		if (i % 16 == 15) {
			int fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);

			if (fd < 0 || dup2(fd, r->qfd) < 0)
				r->failed = __LINE__;
			close(fd);
			/* the old file's QPs went with it; its handles mean nothing here */
			memset(live, 0, sizeof(r->live));
			continue;
		}
		if (create_qp(r->qfd, IBV_QPT_RC, &h, &qpn) ||
		    qp_to_err(r->qfd, h)) {
			r->failed = __LINE__;
			break;
		}
		atomic_store(&r->qp, (__u64)qpn << 32 | h);
		/* the QP made four rounds ago goes */
		if (live[i % 4] && ioctl(r->qfd, SOFTCM_IOCTL_DESTROY_QP,
					 &(struct softcm_destroy_qp){ .handle = live[i % 4] })) {
			r->failed = __LINE__;
			break;
		}
		live[i % 4] = h;
	}
	atomic_store(&r->done, 1);
	return NULL;
}

/*
 * ACCEPT naming a QP that another thread destroys meanwhile, in a file it
 * replaces meanwhile: each ACCEPT (a REP announcing the QP, which is in
 * ERR: the checks pass, the move to INIT fails under the QP's lock)
 * fails with EINVAL, or ENOENT when the QP is gone; none succeeds.  How
 * many end each way is the scheduler's business, not asserted.  After:
 * the QPs left are in ERR, nothing was sent (the request is unanswered,
 * the active side has no event), and the QP file's close frees every
 * QP, CQ and PD.  The debug kernel's KASAN and lockdep watch the QP's
 * and the file's lifetimes and the id's mutex taken before the QP's lock.
 */
TEST_F(qpattr, accept_qp_races_destroy_and_file_replace)
{
	struct qp_race r = { .rounds = 404 };	/* the last 4 make QPs */
	struct softcm_event ev;
	pthread_t t;
	__u32 l, h, qp, qpn;
	int live = 0;

	/*
	 * The request waits out the race unanswered: the fast timers' REQ
	 * gives up after about 2.4 s on the debug kernel, less than 404 QPs
	 * created and destroyed take there, so this one is retransmitted
	 * every 4.3 s (34 s there) instead.
	 */
	ASSERT_EQ(0, netns_softcm_sysctl(self->ns[0], self->home, "cm_response_timeout",
					 20 + softcm_slow_shift()));
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7544, &l));
	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 14, &h));
	ASSERT_EQ(0, resolve_addr(self->a, h, "10.92.0.2", 7544));
	ASSERT_EQ(0, resolve_route(self->a, h));
	ASSERT_EQ(0, connect_id(self->a, h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	r.ph = ev.handle;
	r.qfd = open_in(self->ns[1], self->home);
	ASSERT_LE(0, r.qfd);
	r.nsfd = self->ns[1];

	ASSERT_EQ(0, pthread_create(&t, NULL, qp_churn, &r));
	do {
		__u64 qp = atomic_load(&r.qp);
		int ret = accept_qp(self->p, r.ph, 0, r.qfd, (__u32)qp, qp >> 32);

		r.accepts++;
		if (ret == -EINVAL) {
			r.errs[0]++;
		} else if (ret == -ENOENT) {
			r.errs[1]++;
		} else if (!r.bad++) {
			r.first_bad = ret;	/* 0 too: an ACCEPT that went through */
		}
	} while (!atomic_load(&r.done));
	pthread_join(t, NULL);
	TH_LOG("%d ACCEPTs: %d EINVAL, %d ENOENT", r.accepts, r.errs[0], r.errs[1]);
	EXPECT_EQ(0, r.failed);
	EXPECT_EQ(0, r.bad) TH_LOG("%d ACCEPTs ended otherwise, the first with %d",
				  r.bad, r.first_bad);
	EXPECT_EQ(r.accepts, r.errs[0] + r.errs[1]);

	/* the QPs left were never moved out of ERR; nothing was sent */
	for (int i = 0; i < 4; i++) {
		if (!r.live[i])
			continue;
		live++;
		EXPECT_EQ(IBV_QPS_ERR, qp_state(r.qfd, r.live[i])) TH_LOG("QP %u", r.live[i]);
	}
	EXPECT_EQ(4, live);
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, r.ph));
	EXPECT_EQ(-ETIME, next_event(self->a, &ev, 0));

	/* the request is answered now, with a QP of the file */
	ASSERT_EQ(0, create_qp(r.qfd, IBV_QPT_RC, &qp, &qpn));
	ASSERT_EQ(0, accept_qp(self->p, r.ph, 0, r.qfd, qp, qpn));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
	EXPECT_EQ(qpn, ev.param.qp_num);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(r.qfd, qp));
	/* the last file's close frees every verbs object the race left */
	close(r.qfd);
	EXPECT_EQ(0, stats_wait_eq(self->st[1], "qps", 0, STATS_IDLE_MS));
	EXPECT_EQ(0, stats_wait_eq(self->st[1], "cqs", 0, STATS_IDLE_MS));
	EXPECT_EQ(0, stats_wait_eq(self->st[1], "uobjs", 0, STATS_IDLE_MS));
}

/*
 * QPs destroyed while their ids stay connected (issue 27's lifetimes),
 * then their CQs and PDs: the CM holds no QP (an id knows its QP's number
 * only), so every destroy answers 0 at once, and the ids then disconnect,
 * with the DREQ and DREP and timewait's timer, as if the QPs were there
 * (the DREP answered at once: an earlier case leaves the active side's
 * response timeout long, so an unanswered DREQ would take long to end);
 * INIT_QP_ATTR still answers for the id.  A fresh file's first PD, CQ and
 * QP (create_qp()) are handles 1, 2 and 3.  On the debug kernel KASAN must
 * stay silent through the disconnection.
 */
TEST_F(qpattr, qps_destroyed_while_connected)
{
	struct softcm_destroy_cq dc = { .handle = 2 };
	struct softcm_destroy_obj dp = { .handle = 1 };
	struct softcm_destroy_qp dq;
	struct softcm_init_qp_attr c;
	struct softcm_event ev;
	struct qconn k;
	int aq, pq, i;

	aq = open_in(self->ns[0], self->home);
	ASSERT_LE(0, aq);
	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	qconnect(_metadata, self, aq, pq, 7545, true, &k);
	ASSERT_EQ(3, k.aqp);
	ASSERT_EQ(3, k.pqp);
	for (i = 0; i < 2; i++) {
		int qfd = i ? pq : aq;

		EXPECT_EQ(-EBUSY, ioctl(qfd, SOFTCM_IOCTL_DESTROY_CQ, &dc) ? -errno : 0);
		dq = (struct softcm_destroy_qp){ .handle = 3 };
		EXPECT_EQ(0, ioctl(qfd, SOFTCM_IOCTL_DESTROY_QP, &dq));
		EXPECT_EQ(0, ioctl(qfd, SOFTCM_IOCTL_DESTROY_CQ, &dc));
		EXPECT_EQ(0, ioctl(qfd, SOFTCM_IOCTL_DEALLOC_PD, &dp));
	}
	EXPECT_EQ(0, stats_wait_eq(self->st[0], "qps", 0, STATS_IDLE_MS));
	EXPECT_EQ(0, stats_wait_eq(self->st[1], "qps", 0, STATS_IDLE_MS));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, k.h));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, k.ph));
	EXPECT_EQ(0, init_qp_attr(self->p, k.ph, IBV_QPS_RTS, &c));

	/* DREQ, then the passive side's DREP, as librdmacm programs answer */
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = k.h }));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_DISCONNECTED, &ev));
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = k.ph }));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_DISCONNECTED, &ev));
	EXPECT_EQ(0, destroy_id(self->a, k.h, NULL));
	EXPECT_EQ(0, destroy_id(self->p, k.ph, NULL));
	close(aq);
	close(pq);
}

/*
 * The next two events of @fd, one of @t1 for id @h1 and one of @t2 for id
 * @h2, in either order; their statuses in @s1 and @s2.
 */
static int two_events(int fd, __u32 t1, __u32 h1, int *s1, __u32 t2, __u32 h2, int *s2)
{
	bool got1 = false, got2 = false;
	struct softcm_event ev;

	for (int i = 0; i < 2; i++) {
		int ret = next_event(fd, &ev, WAIT_MS);

		if (ret)
			return ret;
		if (!got1 && ev.event == t1 && ev.handle == h1) {
			got1 = true;
			*s1 = ev.status;
		} else if (!got2 && ev.event == t2 && ev.handle == h2) {
			got2 = true;
			*s2 = ev.status;
		} else {
			return -EPROTO;
		}
	}
	return 0;
}

/* REJs sent with @reason: a line that appears with the first one. */
static long long rej_sent(int st, int reason)
{
	char name[32];
	long long v;

	snprintf(name, sizeof(name), "tx_rej_reason_%d", reason);
	v = stats_get(st, name);
	return v == STATS_MISSING ? 0 : v;
}

static long long rej10_sent(int st)
{
	return rej_sent(st, 10);
}

/* An id of @fd connecting to 10.92.0.2 @port, its REQ announcing @qpn. */
static int connect_to(int fd, int port, __u32 qpn, __u32 *h)
{
	int ret = create_id(fd, SOFTCM_PS_TCP, port, h);

	ret = ret ?: resolve_addr(fd, *h, "10.92.0.2", port);
	ret = ret ?: resolve_route(fd, *h);
	return ret ?: connect_qpn(fd, *h, qpn);
}

/*
 * The Linux CM's stale-QPN check (cm_match_req()), on the passive side: a
 * connection between two QPs is established; a new REQ from the peer's
 * namespace announcing the same QP number means the peer reused that
 * QP, so the REQ gets REJ 10 (stale connection) and reaches no listener,
 * and the old connection gets a DREQ, which its active side sees as
 * DISCONNECTED.  Connections whose end here is no QP (the CM alone, the
 * number naming nothing) are not checked: two of them from one number
 * at once are both established.
 */
TEST_F(qpattr, stale_qpn_req_rejected_old_connection_ends)
{
	long long rej10 = rej10_sent(self->st[1]);
	struct softcm_event ev;
	__u32 l, h, ph, h2, ph2;
	struct qconn k;
	int aq, pq, st, st2;

	aq = open_in(self->ns[0], self->home);
	ASSERT_LE(0, aq);
	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	qconnect(_metadata, self, aq, pq, 7550, true, &k);

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7551, &l));
	ASSERT_EQ(0, connect_to(self->a, 7551, k.aqpn, &h));
	ASSERT_EQ(0, two_events(self->a, SOFTCM_EVENT_REJECTED, h, &st,
				SOFTCM_EVENT_DISCONNECTED, k.h, &st2));
	EXPECT_EQ(10, st);
	EXPECT_EQ(rej10 + 1, rej10_sent(self->st[1]));
	/* the DREP the DREQ waits for, then the old connection is over there too */
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = k.h }));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_DISCONNECTED, &ev));
	EXPECT_EQ(k.ph, ev.handle);
	EXPECT_EQ(0, destroy_id(self->a, h, NULL));
	EXPECT_EQ(0, destroy_id(self->a, k.h, NULL));
	EXPECT_EQ(0, destroy_id(self->p, k.ph, NULL));

	/* the CM alone: one number twice, both connections established */
	for (int i = 0; i < 2; i++) {
		__u32 *ah = i ? &h2 : &h, *pph = i ? &ph2 : &ph;

		ASSERT_EQ(0, connect_to(self->a, 7551, A_QPN, ah));
		ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
		*pph = ev.handle;
		ASSERT_EQ(0, accept_id(self->p, *pph));
		ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_CONNECT_RESPONSE, &ev));
		ASSERT_EQ(0, establish_id(self->a, *ah));
		ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_ESTABLISHED, &ev));
	}
	EXPECT_EQ(rej10 + 1, rej10_sent(self->st[1]));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, h));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, h2));
	EXPECT_EQ(0, destroy_id(self->a, h, NULL));
	EXPECT_EQ(0, destroy_id(self->a, h2, NULL));
	EXPECT_EQ(0, destroy_id(self->p, ph, NULL));
	EXPECT_EQ(0, destroy_id(self->p, ph2, NULL));
	EXPECT_EQ(0, destroy_id(self->p, l, NULL));
	close(aq);
	close(pq);
}

/*
 * The same check on the active side (cm_rep_handler()): a connection
 * between two QPs is established; a new connection's REP announcing the
 * peer QP of the old one gets REJ 10, which the passive side sees as
 * REJECTED with status 10, and the old connection gets a DREQ.  The new
 * id is not told of the REP (no CONNECT_RESPONSE): it waits as the Linux
 * CM's does, and its REQ comes again (to a passive side in timewait,
 * which answers REJ 10, or out of it, which takes it as new: which one
 * depends on the timers, so the case ends the id before).
 */
TEST_F(qpattr, stale_qpn_rep_rejected_old_connection_ends)
{
	long long rej10 = rej10_sent(self->st[0]);
	struct softcm_event ev;
	__u32 l, h, ph;
	struct qconn k;
	int aq, pq, st, st2, ret;

	aq = open_in(self->ns[0], self->home);
	ASSERT_LE(0, aq);
	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	qconnect(_metadata, self, aq, pq, 7552, true, &k);

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.92.0.2", 7553, &l));
	ASSERT_EQ(0, connect_to(self->a, 7553, A_QPN, &h));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_CONNECT_REQUEST, &ev));
	ph = ev.handle;
	/* the passive side answers from the old connection's QP */
	ASSERT_EQ(0, do_accept(self->p, ph, 0, 0, 0, k.pqpn));
	ASSERT_EQ(0, two_events(self->p, SOFTCM_EVENT_REJECTED, ph, &st,
				SOFTCM_EVENT_DISCONNECTED, k.ph, &st2));
	EXPECT_EQ(10, st);
	EXPECT_EQ(rej10 + 1, rej10_sent(self->st[0]));
	/* nothing for the new id, unless its REQ came again already */
	ret = next_event(self->a, &ev, softcm_quiet_ms(50));
	if (!ret) {
		EXPECT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
		EXPECT_EQ(h, ev.handle);
		EXPECT_EQ(10, ev.status);
	} else {
		EXPECT_EQ(-ETIME, ret);
	}
	EXPECT_EQ(0, destroy_id(self->a, h, NULL));
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = k.ph }));
	ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_DISCONNECTED, &ev));
	EXPECT_EQ(k.h, ev.handle);
	EXPECT_EQ(0, destroy_id(self->a, k.h, NULL));
	EXPECT_EQ(0, destroy_id(self->p, ph, NULL));
	EXPECT_EQ(0, destroy_id(self->p, k.ph, NULL));
	EXPECT_EQ(0, destroy_id(self->p, l, NULL));
	close(aq);
	close(pq);
}

/*
 * The stale-QPN check believes only the old connection's peer address: a
 * REQ crafted with the active side's CA GUID and the old connection's QP
 * number (and a comm ID of its own), sent from another address of the
 * link, leaves the connection alone and is answered as any request that
 * names no service (REJ 8); the same REQ from the peer's address ends
 * the connection as stale (REJ 10, a DREQ).
 */
TEST_F(qpattr, stale_qpn_believes_only_the_peer_address)
{
	struct softcm_query_device qd = { 0 };
	long long rej8, rej10;
	struct softcm_event ev;
	struct qconn k;
	struct wire w;
	int aq, pq, ret;

	aq = open_in(self->ns[0], self->home);
	ASSERT_LE(0, aq);
	pq = open_in(self->ns[1], self->home);
	ASSERT_LE(0, pq);
	qconnect(_metadata, self, aq, pq, 7554, true, &k);
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_QUERY_DEVICE, &qd));

	for (int i = 0; i < 2; i++) {
		uint8_t *mad;

		rej8 = rej_sent(self->st[1], 8);
		rej10 = rej10_sent(self->st[1]);
		wire_init(&w, i ? "10.92.0.1" : "10.92.0.3", "10.92.0.2", 0x10);
		mad = wire_mad(&w);
		put32(mad + 24, 0x5eed0000 + i);		/* its own comm ID */
		memcpy(mad + 40, &qd.attr.node_guid, 8);	/* big endian */
		put32(mad + 56, k.aqpn << 8);
		ASSERT_EQ(0, netns_enter(self->ns[0]));
		ret = wire_send(&w, false);
		ASSERT_EQ(0, netns_enter(self->home));
		ASSERT_EQ(0, ret);
		if (!i) {
			for (int t = 0; t < WAIT_MS / 10 && rej_sent(self->st[1], 8) == rej8; t++)
				usleep(10000);
			EXPECT_EQ(rej8 + 1, rej_sent(self->st[1], 8));
			EXPECT_EQ(rej10, rej10_sent(self->st[1]));
			EXPECT_EQ(-ETIME, next_event(self->a, &ev, softcm_quiet_ms(100)));
			EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, k.ph));
		} else {
			ASSERT_EQ(0, expect_event(self->a, SOFTCM_EVENT_DISCONNECTED, &ev));
			EXPECT_EQ(k.h, ev.handle);
			EXPECT_EQ(rej10 + 1, rej10_sent(self->st[1]));
			EXPECT_EQ(rej8, rej_sent(self->st[1], 8));
		}
	}
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = k.h }));
	ASSERT_EQ(0, expect_event(self->p, SOFTCM_EVENT_DISCONNECTED, &ev));
	EXPECT_EQ(k.ph, ev.handle);
	EXPECT_EQ(0, destroy_id(self->a, k.h, NULL));
	EXPECT_EQ(0, destroy_id(self->p, k.ph, NULL));
	close(aq);
	close(pq);
}

TEST_HARNESS_MAIN
