// SPDX-License-Identifier: GPL-2.0
/*
 * The connection commands at the ABI (CONNECT, ACCEPT, REJECT, DISCONNECT)
 * and what goes on the wire for them, with raw ioctls on two files, each
 * opened in its own namespace:
 *
 *   +-- sc-k1 ------------+         +-- sc-k2 -----------+
 *   | k1 10.81.0.1        |--veth---| k2 10.81.0.2       |
 *   |    fd81::1          |         |    fd81::2         |
 *   | q1 10.81.1.1        |--veth---| sc-k3: 10.81.1.3,  |
 *   +---------------------+         |  never uses softcm |
 *                                   +--------------------+
 *
 * Active ids live in sc-k1 (self->a), passive ones in sc-k2 (self->p).
 * Both namespaces run fast CM timers (sysctls), so that timeouts take
 * tenths of seconds (8 times as long on the debug kernel: every time
 * exponent has softcm_slow_shift() added, the retry count stays); no test
 * sleeps to synchronise: each waits for the event it expects, with a
 * bound.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "wire_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"

TOPO_NAMESPACES("sc-k1 sc-k2 sc-k3")

static const struct topo_end k1 = { "sc-k1", "k1", { "10.81.0.1/24", "fd81::1/64" } };
static const struct topo_end k2 = { "sc-k2", "k2", { "10.81.0.2/24", "fd81::2/64" } };
static const struct topo_end q1 = { "sc-k1", "q1", { "10.81.1.1/24" } };
static const struct topo_end q3 = { "sc-k3", "q3", { "10.81.1.3/24" } };

/*
 * sc-k1 joined to sc-k2 (k1-k2, IPv4 and IPv6) and to sc-k3 (q1-q3, IPv4),
 * over rtnetlink (netlink_helpers.h says why); 0 or -errno.
 */
static int make_topology(void)
{
	int ret;

	ret = netns_fresh("sc-k1");
	ret = ret ?: netns_fresh("sc-k2");
	ret = ret ?: netns_fresh("sc-k3");
	ret = ret ?: topo_link(&k1, &k2);
	return ret ?: topo_link(&q1, &q3);
}

/*
 * The fast timers of sc-k1 and sc-k2: responses and MRAs of 64 ms, a
 * packet life time of 4 ms (REQs 72 ms apart), 3 retries.
 */
static const struct softcm_timers fast = { .response = 14, .life = 10, .mra = 14, .retries = 3 };

#define WAIT_MS 20000

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sizeof(struct sockaddr_in);
}

static int do_listen(int fd, __u16 ps, const char *ip, int port, int backlog, __u32 *h)
{
	struct softcm_bind b = { 0 };
	struct softcm_listen l = { 0 };
	struct sockaddr_storage ss;
	int ret = create_id(fd, ps, 0x1000 + port, h);

	if (ret)
		return ret;
	set_sa(&ss, ip, port);
	b.handle = *h;
	b.addr_len = sa_len(&ss);
	memcpy(b.addr, &ss, b.addr_len);
	if (ioctl(fd, SOFTCM_IOCTL_BIND, &b))
		return -errno;
	l.handle = *h;
	l.backlog = backlog;
	return ioctl(fd, SOFTCM_IOCTL_LISTEN, &l) ? -errno : 0;
}

/* A new id resolved (address and route) to ip:port; events consumed. */
static int resolved(int fd, __u16 ps, const char *ip, int port, __u32 *h)
{
	struct softcm_resolve_addr r = { .timeout_ms = 5000 };
	struct softcm_resolve_route rr = { .timeout_ms = 5000 };
	struct sockaddr_storage ss;
	struct softcm_event ev;
	int ret = create_id(fd, ps, 0x2000 + port, h);

	if (ret)
		return ret;
	set_sa(&ss, ip, port);
	r.handle = *h;
	r.dst_len = sa_len(&ss);
	memcpy(r.dst, &ss, r.dst_len);
	if (ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &r))
		return -errno;
	ret = next_event(fd, &ev, WAIT_MS);
	if (ret || ev.event != SOFTCM_EVENT_ADDR_RESOLVED)
		return ret ?: -EPROTO;
	rr.handle = *h;
	if (ioctl(fd, SOFTCM_IOCTL_RESOLVE_ROUTE, &rr))
		return -errno;
	ret = next_event(fd, &ev, WAIT_MS);
	if (ret || ev.event != SOFTCM_EVENT_ROUTE_RESOLVED)
		return ret ?: -EPROTO;
	return 0;
}

static int connect_id(int fd, __u32 h, __u32 flags, const void *pd, int len, __u32 qpn)
{
	struct softcm_connect c = { .handle = h, .flags = flags };

	c.param.qp_num = qpn;
	c.param.responder_resources = 3;
	c.param.initiator_depth = 5;
	c.param.retry_count = 7;
	c.param.rnr_retry_count = 6;
	c.param.private_data_len = len;
	if (len)
		memcpy(c.param.private_data, pd, len);
	return ioctl(fd, SOFTCM_IOCTL_CONNECT, &c) ? -errno : 0;
}

static int accept_id(int fd, __u32 h, __u64 uid, const void *pd, int len, __u32 qpn)
{
	struct softcm_accept c = { .uid = uid, .handle = h };

	c.param.qp_num = qpn;
	c.param.responder_resources = 2;
	c.param.initiator_depth = 4;
	c.param.private_data_len = len;
	if (len)
		memcpy(c.param.private_data, pd, len);
	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &c) ? -errno : 0;
}

/* rdma_establish(): the RTU after CONNECT_RESPONSE. */
static int establish_id(int fd, __u32 h)
{
	struct softcm_accept c = { .handle = h, .flags = SOFTCM_ACCEPT_ESTABLISH };

	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &c) ? -errno : 0;
}

static int reject_id(int fd, __u32 h, __u8 reason, const void *pd, int len)
{
	struct softcm_reject c = { .handle = h, .reason = reason, .private_data_len = len };

	if (len)
		memcpy(c.private_data, pd, len);
	return ioctl(fd, SOFTCM_IOCTL_REJECT, &c) ? -errno : 0;
}

static int disconnect_id(int fd, __u32 h)
{
	struct softcm_disconnect c = { .handle = h };

	return ioctl(fd, SOFTCM_IOCTL_DISCONNECT, &c) ? -errno : 0;
}

/*
 * /proc/net/softcm_stats of sc-k1 and sc-k2, opened from inside each: the
 * file stays bound to the namespace it was opened in, and rereading it is
 * cheap enough to poll.
 */
static int stats_fd[2] = { -1, -1 };

/* A counter of namespace ns ("sc-k1" or "sc-k2"), or -1. */
static long stat_of(const char *ns, const char *name)
{
	int fd = stats_fd[!strcmp(ns, "sc-k2")];
	char buf[4096], *line, *save;
	ssize_t len;

	len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64];
		long val;

		if (sscanf(line, "%63s %ld", key, &val) == 2 && !strcmp(key, name))
			return val;
	}
	return -1;
}

/* Poll a counter until it reaches want (bounded); returns the last value. */
static long wait_stat(const char *ns, const char *name, long want, int timeout_ms)
{
	long end = now_ms() + timeout_ms, v;

	while ((v = stat_of(ns, name)) != want && now_ms() < end)
		usleep(5000);
	return v;
}

/* Poll until a counter is at least want; returns the last value. */
static long wait_stat_min(const char *ns, const char *name, long want, int timeout_ms)
{
	long end = now_ms() + timeout_ms, v;

	while ((v = stat_of(ns, name)) < want && now_ms() < end)
		usleep(2000);
	return v;
}

static int open_in(const char *ns)
{
	char path[64];
	int nsfd, fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return -errno;
	if (setns(nsfd, CLONE_NEWNET)) {
		close(nsfd);
		return -errno;
	}
	close(nsfd);
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(stats_fd[!strcmp(ns, "sc-k2")]);
		stats_fd[!strcmp(ns, "sc-k2")] = open("/proc/self/net/softcm_stats",
						      O_RDONLY | O_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

/*
 * Move the calling thread into @ns and point @ns's slot of stats_fd at
 * it, without keeping a file there (a file left open would be counted by
 * the files gauge the teardown waits on); 0 or -errno.
 */
static int enter_ns(const char *ns)
{
	int fd = open_in(ns);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

FIXTURE(cm) {
	int a;		/* a file in sc-k1: active ids */
	int p;		/* a file in sc-k2: passive ids */
	int home;
};

FIXTURE_SETUP(cm)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/sc-k1", F_OK)) {
		ASSERT_EQ(0, make_topology());
		ASSERT_EQ(0, netns_set_timers_named("sc-k1 sc-k2", &fast));
	}
	self->home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->home);
	self->p = open_in("sc-k2");
	ASSERT_LE(0, self->p);
	self->a = open_in("sc-k1");
	ASSERT_LE(0, self->a);
}

FIXTURE_TEARDOWN(cm)
{
	close(self->a);
	close(self->p);
	/*
	 * Everything these files held is over once its timewait ends: no
	 * connection, no id and no file left in either namespace (sc-k3
	 * never uses softcm; sc-k4 is checked by its test).
	 */
	EXPECT_EQ(0, stats_wait_idle(stats_fd[0], STATS_IDLE_MS));
	EXPECT_EQ(0, stats_wait_idle(stats_fd[1], STATS_IDLE_MS));
	setns(self->home, CLONE_NEWNET);
	close(self->home);
}

static void pattern(unsigned char *buf, int len, int seed)
{
	int i;

	for (i = 0; i < len; i++)
		buf[i] = seed + i * 7;
}

/*
 * The whole life of a connection: request with private data, accept with
 * private data, the peer addresses both sides see, disconnect from the
 * active side, the passive side's DREP, timewait on both.
 */
TEST_F(cm, connect_accept_disconnect)
{
	unsigned char req_pd[SOFTCM_REQ_PRIVATE_DATA], rep_pd[SOFTCM_REP_PRIVATE_DATA];
	struct sockaddr_storage ss, local;
	struct softcm_event ev;
	__u32 l, a, n, len;

	pattern(req_pd, sizeof(req_pd), 1);
	pattern(rep_pd, sizeof(rep_pd), 2);
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7001, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7001, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, req_pd, sizeof(req_pd), 0x123456));
	ASSERT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, a));

	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	EXPECT_EQ(0x1000 + 7001, ev.uid);	/* the listener's */
	n = ev.handle;
	EXPECT_NE(l, n);
	EXPECT_EQ(SOFTCM_REQ_PRIVATE_DATA, ev.param.private_data_len);
	EXPECT_EQ(0, memcmp(req_pd, ev.param.private_data, sizeof(req_pd)));
	EXPECT_EQ(0x123456, ev.param.qp_num);
	/* the requester's resources and depth, seen from here */
	EXPECT_EQ(5, ev.param.responder_resources);
	EXPECT_EQ(3, ev.param.initiator_depth);
	EXPECT_EQ(7, ev.param.retry_count);
	EXPECT_EQ(6, ev.param.rnr_retry_count);
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, n));

	/* the new id's peer is the requester, local the listener's port */
	len = sizeof(ss);
	ASSERT_EQ(0, query_addr(self->p, n, SOFTCM_QUERY_PEER, &ss, &len));
	len = sizeof(local);
	ASSERT_EQ(0, query_addr(self->a, a, SOFTCM_QUERY_LOCAL, &local, &len));
	EXPECT_EQ(sizeof(struct sockaddr_in), len);
	EXPECT_EQ(0, memcmp(&ss, &local, sizeof(struct sockaddr_in)));
	len = sizeof(ss);
	ASSERT_EQ(0, query_addr(self->p, n, SOFTCM_QUERY_LOCAL, &ss, &len));
	EXPECT_EQ(htons(7001), ((struct sockaddr_in *)&ss)->sin_port);
	EXPECT_EQ(htonl(0x0a510002), ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	/* getpeername(2)'s view: no connection yet on either side */
	len = sizeof(ss);
	EXPECT_EQ(-ENOTCONN, query_addr(self->p, n, SOFTCM_QUERY_CONNECTED_PEER, &ss, &len));
	len = sizeof(ss);
	EXPECT_EQ(-ENOTCONN, query_addr(self->a, a, SOFTCM_QUERY_CONNECTED_PEER, &ss, &len));

	ASSERT_EQ(0, accept_id(self->p, n, 0x77, rep_pd, sizeof(rep_pd), 0xabcdef));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	ASSERT_EQ(0, establish_id(self->a, a));
	EXPECT_EQ(a, ev.handle);
	EXPECT_EQ(SOFTCM_REP_PRIVATE_DATA, ev.param.private_data_len);
	EXPECT_EQ(0, memcmp(rep_pd, ev.param.private_data, sizeof(rep_pd)));
	EXPECT_EQ(0xabcdef, ev.param.qp_num);
	EXPECT_EQ(4, ev.param.responder_resources);
	EXPECT_EQ(2, ev.param.initiator_depth);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	EXPECT_EQ(0x77, ev.uid);	/* the accept gave the id its uid */
	EXPECT_EQ(n, ev.handle);
	EXPECT_EQ(1, stat_of("sc-k1", "connections"));
	EXPECT_EQ(1, stat_of("sc-k2", "connections"));
	/* established: both sides have their peer, the active one's the listener */
	len = sizeof(ss);
	ASSERT_EQ(0, query_addr(self->p, n, SOFTCM_QUERY_CONNECTED_PEER, &ss, &len));
	EXPECT_EQ(0, memcmp(&ss, &local, sizeof(struct sockaddr_in)));
	len = sizeof(ss);
	ASSERT_EQ(0, query_addr(self->a, a, SOFTCM_QUERY_CONNECTED_PEER, &ss, &len));
	EXPECT_EQ(htons(7001), ((struct sockaddr_in *)&ss)->sin_port);

	ASSERT_EQ(0, disconnect_id(self->a, a));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(SOFTCM_STATE_DISCONNECT, state_of(self->p, n));
	/* over: no peer any more */
	len = sizeof(ss);
	EXPECT_EQ(-ENOTCONN, query_addr(self->p, n, SOFTCM_QUERY_PEER, &ss, &len));
	len = sizeof(ss);
	EXPECT_EQ(-ENOTCONN, query_addr(self->p, n, SOFTCM_QUERY_CONNECTED_PEER, &ss, &len));
	ASSERT_EQ(0, disconnect_id(self->p, n));	/* the DREP */
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_TIMEWAIT_EXIT, ev.event);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_TIMEWAIT_EXIT, ev.event);
	EXPECT_EQ(0, stat_of("sc-k1", "connections"));
	EXPECT_EQ(0, stat_of("sc-k2", "connections"));
	/* a disconnect after the end sends nothing and is no error */
	EXPECT_EQ(0, disconnect_id(self->a, a));
	EXPECT_EQ(0, destroy_id(self->a, a, NULL));
	EXPECT_EQ(0, destroy_id(self->p, n, NULL));
	EXPECT_EQ(0, destroy_id(self->p, l, NULL));
}

TEST_F(cm, bad_input_changes_nothing)
{
	unsigned char pd[SOFTCM_PRIVATE_DATA_MAX] = { 0 };
	struct softcm_connect c = { 0 };
	struct softcm_event ev;
	__u32 l, a, n;

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 1, &a));
	/* not resolved */
	EXPECT_EQ(-EINVAL, connect_id(self->a, a, 0, NULL, 0, 1));
	EXPECT_EQ(-EINVAL, disconnect_id(self->a, a));
	EXPECT_EQ(-EINVAL, accept_id(self->a, a, 1, NULL, 0, 1));
	EXPECT_EQ(-EINVAL, reject_id(self->a, a, 0, NULL, 0));
	EXPECT_EQ(0, destroy_id(self->a, a, NULL));
	EXPECT_EQ(-ENOENT, connect_id(self->a, a, 0, NULL, 0, 1));

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "10.81.0.2", 7002, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7002, &a));
	/* too much private data, unknown flags */
	EXPECT_EQ(-EINVAL, connect_id(self->a, a, 0, pd, SOFTCM_REQ_PRIVATE_DATA + 1, 1));
	c.handle = a;
	c.flags = 0x80;
	EXPECT_EQ(-1, ioctl(self->a, SOFTCM_IOCTL_CONNECT, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SOFTCM_STATE_ROUTE_RESOLVED, state_of(self->a, a));
	/* a listener is not a request */
	EXPECT_EQ(-EINVAL, accept_id(self->p, l, 1, NULL, 0, 1));
	EXPECT_EQ(-EINVAL, reject_id(self->p, l, 0, NULL, 0));

	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	EXPECT_EQ(-EINVAL, connect_id(self->a, a, 0, NULL, 0, 1));	/* twice */
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	n = ev.handle;
	EXPECT_EQ(-EINVAL, accept_id(self->p, n, 1, pd, SOFTCM_REP_PRIVATE_DATA + 1, 1));
	EXPECT_EQ(-EINVAL, reject_id(self->p, n, 0, pd, SOFTCM_REJ_PRIVATE_DATA + 1));
	EXPECT_EQ(-EINVAL, reject_id(self->p, n, 5, NULL, 0));	/* not 28 or 35 */
	EXPECT_EQ(-EINVAL, disconnect_id(self->p, l));
	/* the request is still answerable */
	EXPECT_EQ(0, reject_id(self->p, n, 0, NULL, 0));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
	EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev.status);
	EXPECT_EQ(-EINVAL, reject_id(self->p, n, 0, NULL, 0));	/* answered */
}

TEST_F(cm, no_listener_is_rejected_with_reason_8)
{
	struct softcm_event ev;
	__u32 l, a;

	/*
	 * The peer's socket must be open for anything to answer: a listener
	 * on another port opens it (a namespace that never used softcm has
	 * no socket, and the request would go unanswered).
	 */
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7103, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7003, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
	EXPECT_EQ(8, ev.status);
	EXPECT_EQ(SOFTCM_REJ_PRIVATE_DATA, ev.param.private_data_len);
	/* rejected is over: the id keeps its state, the peer is gone */
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, a));
}

TEST_F(cm, reject_carries_private_data)
{
	unsigned char pd[SOFTCM_REJ_PRIVATE_DATA];
	struct softcm_event ev;
	__u32 l, a;

	pattern(pd, sizeof(pd), 9);
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7004, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7004, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	ASSERT_EQ(0, reject_id(self->p, ev.handle, SOFTCM_REJ_CONSUMER_DEFINED, pd, 100));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
	EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev.status);
	EXPECT_EQ(SOFTCM_REJ_PRIVATE_DATA, ev.param.private_data_len);
	EXPECT_EQ(0, memcmp(pd, ev.param.private_data, 100));
}

/*
 * librdmacm's no-QP flow, and the only one: CONNECT_RESPONSE without being
 * asked for, then rdma_establish().
 */
TEST_F(cm, connect_response_then_establish)
{
	struct softcm_accept est = { .flags = SOFTCM_ACCEPT_ESTABLISH };
	struct softcm_event ev;
	__u32 l, a, n;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7005, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7005, &a));
	est.handle = a;
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	EXPECT_EQ(-1, ioctl(self->a, SOFTCM_IOCTL_ACCEPT, &est));	/* no REP yet */
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	n = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, n, 5, NULL, 0, 2));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_ACCEPT, &est));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	/* established: a second rdma_establish() is refused */
	EXPECT_EQ(-1, ioctl(self->a, SOFTCM_IOCTL_ACCEPT, &est));
	EXPECT_EQ(EINVAL, errno);
	/* and nothing more for the active side, not even a retransmission */
	EXPECT_EQ(-ETIME, next_event(self->a, &ev, softcm_quiet_ms(200)));
}

/*
 * SOFTCM_CONNECT_RESPONSE is kept for the ABI and means nothing now: the
 * flag is accepted and the handshake is the same as without it.
 */
TEST_F(cm, connect_response_flag_is_a_no_op)
{
	struct softcm_event ev;
	__u32 l, a, n;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7015, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7015, &a));
	ASSERT_EQ(0, connect_id(self->a, a, SOFTCM_CONNECT_RESPONSE, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	n = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, n, 5, NULL, 0, 2));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	ASSERT_EQ(0, establish_id(self->a, a));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	EXPECT_EQ(-ETIME, next_event(self->a, &ev, softcm_quiet_ms(200)));
}

/*
 * Parameters as cma_connect_ib()/cma_accept_ib() and the IB CM take them:
 * retry counts above 7 are clamped, srq is "nonzero", flow_control is a
 * one-bit field (its low bit).  The peer sees what went on the wire.
 */
TEST_F(cm, parameters_are_clamped_as_linux)
{
	struct softcm_connect c = { 0 };
	struct softcm_accept acc = { 0 };
	struct softcm_event ev;
	__u32 l, a, n;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7016, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7016, &a));
	c.handle = a;
	c.param.qp_num = 1;
	c.param.responder_resources = 200;
	c.param.initiator_depth = 255;
	c.param.retry_count = 9;
	c.param.rnr_retry_count = 255;
	c.param.srq = 2;
	c.param.flow_control = 3;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_CONNECT, &c));
	/* in-only: the caller's copy is not rewritten */
	EXPECT_EQ(9, c.param.retry_count);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	n = ev.handle;
	EXPECT_EQ(7, ev.param.retry_count);
	EXPECT_EQ(7, ev.param.rnr_retry_count);
	EXPECT_EQ(1, ev.param.srq);
	EXPECT_EQ(1, ev.param.flow_control);
	EXPECT_EQ(255, ev.param.responder_resources);
	EXPECT_EQ(200, ev.param.initiator_depth);

	acc.uid = 5;
	acc.handle = n;
	acc.param.qp_num = 2;
	acc.param.rnr_retry_count = 8;
	acc.param.srq = 255;
	acc.param.flow_control = 2;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &acc));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	EXPECT_EQ(7, ev.param.rnr_retry_count);
	EXPECT_EQ(1, ev.param.srq);
	EXPECT_EQ(0, ev.param.flow_control);
	ASSERT_EQ(0, establish_id(self->a, a));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
}

/* Nobody answers: the REQ is sent 1 + cm_retries times, then UNREACHABLE. */
TEST_F(cm, silent_peer_is_unreachable)
{
	long before = stat_of("sc-k1", "retransmits");
	struct softcm_event ev;
	__u32 a;

	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.1.3", 7006, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_UNREACHABLE, ev.event);
	EXPECT_EQ(-ETIMEDOUT, ev.status);
	EXPECT_EQ(before + 3, stat_of("sc-k1", "retransmits"));
}

/*
 * Requests beyond the backlog, with nothing to be held (max_held_requests
 * 0), are dropped without a REJ until one is read.
 */
TEST_F(cm, backlog_drops_and_peer_retries)
{
	struct pollfd pfd = { .fd = self->p, .events = POLLIN };
	struct softcm_event ev;
	__u32 l, a1, a2;
	long drops;

	/* Enough retransmissions for the second request to outlast the first. */
	ASSERT_EQ(0, system("ip netns exec sc-k1 sh -c 'echo 15 >/proc/sys/net/softcm/cm_retries'"));
	ASSERT_EQ(0, system("ip netns exec sc-k2 sh -c "
			    "'echo 0 >/proc/sys/net/softcm/max_held_requests'"));
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7007, 1, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7007, &a1));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7007, &a2));
	drops = stat_of("sc-k2", "drop_backlog");
	ASSERT_EQ(0, connect_id(self->a, a1, 0, NULL, 0, 1));
	/* wait until the first request is queued, unread */
	ASSERT_EQ(1, poll(&pfd, 1, WAIT_MS));
	ASSERT_EQ(0, connect_id(self->a, a2, 0, NULL, 0, 2));
	EXPECT_LE(drops + 1, wait_stat_min("sc-k2", "drop_backlog", drops + 1, WAIT_MS));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	EXPECT_EQ(1, ev.param.qp_num);
	/* a credit is back: the retransmitted second request gets in */
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	EXPECT_EQ(2, ev.param.qp_num);
	EXPECT_EQ(0, system("ip netns exec sc-k1 sh -c 'echo 3 >/proc/sys/net/softcm/cm_retries'"));
	EXPECT_EQ(0, system("ip netns exec sc-k2 sh -c "
			    "'echo 1024 >/proc/sys/net/softcm/max_held_requests'"));
}

/* A request never read dies with its listener, and the requester hears so. */
TEST_F(cm, listener_destroyed_with_unread_request)
{
	struct pollfd pfd = { .fd = self->p, .events = POLLIN };
	struct softcm_event ev;
	__u32 l, a;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7008, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7008, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(1, poll(&pfd, 1, WAIT_MS));
	ASSERT_EQ(0, destroy_id(self->p, l, NULL));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
	EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev.status);
	EXPECT_EQ(-ETIME, next_event(self->p, &ev, softcm_quiet_ms(100)));
}

/* Destroying an established id sends a DREQ: the peer is disconnected. */
TEST_F(cm, destroy_established_disconnects_peer)
{
	struct softcm_event ev;
	__u32 l, a, n;
	long dreqs;

	/* An AF_INET wildcard is AF-only, as in rdma_cm: IPv6 needs "::". */
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "::", 7009, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "fd81::2", 7009, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	n = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, n, 9, NULL, 0, 2));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	ASSERT_EQ(0, establish_id(self->a, a));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	dreqs = stat_of("sc-k2", "rx_dreq");
	ASSERT_EQ(0, destroy_id(self->a, a, NULL));
	EXPECT_EQ(dreqs + 1, wait_stat("sc-k2", "rx_dreq", dreqs + 1, WAIT_MS));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	ASSERT_EQ(0, disconnect_id(self->p, n));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_TIMEWAIT_EXIT, ev.event);
}

/* Both sides disconnect at once: each DREQ answers the other. */
TEST_F(cm, crossing_dreqs)
{
	struct softcm_event ev;
	__u32 l, a, n;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7010, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7010, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	n = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, n, 9, NULL, 0, 2));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(0, establish_id(self->a, a));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(0, disconnect_id(self->a, a));
	ASSERT_EQ(0, disconnect_id(self->p, n));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	/*
	 * Each got the other's DREQ; the DREPs follow their disconnects, and
	 * a disconnect of a connection that is over is no error.
	 */
	ASSERT_EQ(0, disconnect_id(self->a, a));
	ASSERT_EQ(0, disconnect_id(self->p, n));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_TIMEWAIT_EXIT, ev.event);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_TIMEWAIT_EXIT, ev.event);
}

/* udaddy's flow: SIDR_REQ, then SIDR_REP with the QPN and rdma_cm's Q_Key. */
TEST_F(cm, sidr_accept_and_reject)
{
	unsigned char pd[SOFTCM_SIDR_REQ_PRIVATE_DATA];
	struct softcm_event ev;
	__u32 l, a;

	pattern(pd, sizeof(pd), 4);
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_UDP, "0.0.0.0", 7011, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_UDP, "10.81.0.2", 7011, &a));
	EXPECT_EQ(-EINVAL, connect_id(self->a, a, 0, pd, sizeof(pd) + 1, 1));
	ASSERT_EQ(0, connect_id(self->a, a, 0, pd, sizeof(pd), 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	EXPECT_EQ(SOFTCM_SIDR_REQ_PRIVATE_DATA, ev.param.private_data_len);
	EXPECT_EQ(0, memcmp(pd, ev.param.private_data, sizeof(pd)));
	ASSERT_EQ(0, accept_id(self->p, ev.handle, 3, pd, 10, 0x1234));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	EXPECT_EQ(0x1234, ev.param.qp_num);
	EXPECT_EQ(SOFTCM_UDP_QKEY, ev.param.qkey);
	EXPECT_EQ(0, memcmp(pd, ev.param.private_data, 10));

	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_UDP, "10.81.0.2", 7011, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(0, reject_id(self->p, ev.handle, 0, NULL, 0));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_UNREACHABLE, ev.event);
	EXPECT_EQ(2, ev.status);	/* IB_SIDR_REJECT */
}

/* Send one broken packet and wait for the counter that must take it. */
static long sent_and_counted(struct wire *w, bool keep_icrc, const char *counter)
{
	long before = stat_of("sc-k2", counter);

	if (wire_send(w, keep_icrc))
		return -1;
	return wait_stat("sc-k2", counter, before + 1, WAIT_MS) - before;
}

TEST_F(cm, malformed_packets_dropped_and_counted)
{
	struct softcm_event ev;
	struct wire w;
	__u32 l;

	/* the peer's socket is open */
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7012, 0, &l));

	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	w.paylen = 100;					/* truncated */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_length"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	w.paylen = 400;					/* oversized */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_length"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	w.pkt[28] = 0x04;				/* RC SEND_ONLY */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_header"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	w.pkt[28 + 7] = 2;				/* not QP1 */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_header"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	w.pkt[28 + 3] = 0x00;				/* P_Key 0xff00 */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_pkey"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	w.pkt[28 + 13] = 0x02;				/* another Q_Key */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_qkey"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	EXPECT_EQ(0, wire_send(&w, false));		/* computes the ICRC */
	wire_mad(&w)[40] ^= 1;				/* one bit after it */
	EXPECT_EQ(1, sent_and_counted(&w, true, "drop_icrc"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);
	wire_mad(&w)[1] = 4;				/* not the CM class */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_mad"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x30);	/* no such message */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_mad"));
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x14);	/* RTU for nobody */
	put32(wire_mad(&w) + 24, 0x11111111);
	put32(wire_mad(&w) + 28, 0x22222222);
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_unknown"));
	/* and none of it reached the listener */
	EXPECT_EQ(-ETIME, next_event(self->p, &ev, softcm_quiet_ms(100)));
}

/* Learn a connection's comm IDs from its RTU as it crosses sc-k2's link. */
static int sniff_rtu(int pfd, uint32_t *active_id, uint32_t *passive_id)
{
	uint8_t mad[256];
	int ret = wire_sniff(pfd, 0x14, mad, WAIT_MS);

	if (ret)
		return ret;
	*active_id = get32(mad + 24);
	*passive_id = get32(mad + 28);
	return 0;
}

/*
 * Only the peer may end a connection: a DREQ with the right comm IDs and
 * QPN from another address is dropped, the same from the peer's address
 * disconnects.
 */
TEST_F(cm, spoofed_dreq_leaves_connection_alone)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	uint32_t aid = 0, pid = 0;
	struct softcm_event ev;
	struct wire w;
	__u32 l, a, n;
	int pfd;

	/* a packet socket in sc-k2 (the passive file was opened there) */
	ASSERT_EQ(0, enter_ns("sc-k2"));
	pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	ASSERT_LE(0, pfd);
	sll.sll_ifindex = if_nametoindex("k2");
	ASSERT_EQ(0, bind(pfd, (struct sockaddr *)&sll, sizeof(sll)));
	ASSERT_EQ(0, enter_ns("sc-k1"));

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7013, 0, &l));
	ASSERT_EQ(0, resolved(self->a, SOFTCM_PS_TCP, "10.81.0.2", 7013, &a));
	ASSERT_EQ(0, connect_id(self->a, a, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	n = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, n, 9, NULL, 0, 0x55));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	ASSERT_EQ(0, establish_id(self->a, a));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	ASSERT_EQ(0, sniff_rtu(pfd, &aid, &pid));
	close(pfd);

	wire_init(&w, "10.81.0.99", "10.81.0.2", 0x15);	/* spoofed */
	put32(wire_mad(&w) + 24, aid);
	put32(wire_mad(&w) + 28, pid);
	put32(wire_mad(&w) + 32, 0x55 << 8);		/* remote QPN, 24 bits */
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_peer"));
	EXPECT_EQ(-ETIME, next_event(self->p, &ev, softcm_quiet_ms(200)));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, n));

	/* wrong QPN from the right peer: not this connection's either */
	wire_init(&w, "10.81.0.1", "10.81.0.2", 0x15);
	put32(wire_mad(&w) + 24, aid);
	put32(wire_mad(&w) + 28, pid);
	put32(wire_mad(&w) + 32, 0x56 << 8);
	EXPECT_EQ(1, sent_and_counted(&w, false, "drop_unknown"));
	EXPECT_EQ(-ETIME, next_event(self->p, &ev, softcm_quiet_ms(200)));

	/* the real thing works */
	put32(wire_mad(&w) + 32, 0x55 << 8);
	ASSERT_EQ(0, wire_send(&w, false));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
}

/* Where the CM port is taken, listen and connect say so; the rest works. */
TEST_F(cm, port_taken_reports_eaddrinuse)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(4791) };
	struct softcm_event ev;
	int ufd, fd;
	__u32 h;

	ASSERT_EQ(0, netns_fresh("sc-k4"));
	fd = open_in("sc-k4");
	ASSERT_LE(0, fd);
	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, ufd);
	ASSERT_EQ(0, bind(ufd, (struct sockaddr *)&sin, sizeof(sin)));

	ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, 1, &h));
	EXPECT_EQ(-EADDRINUSE, ioctl(fd, SOFTCM_IOCTL_LISTEN, &(struct softcm_listen){ .handle = h }) ?
		  -errno : 0);
	ASSERT_EQ(0, destroy_id(fd, h, NULL));
	/* resolution does not need the port */
	ASSERT_EQ(0, resolved(fd, SOFTCM_PS_TCP, "127.0.0.1", 7014, &h));
	EXPECT_EQ(-EADDRINUSE, connect_id(fd, h, 0, NULL, 0, 1));
	EXPECT_EQ(SOFTCM_STATE_ROUTE_RESOLVED, state_of(fd, h));
	EXPECT_EQ(-ETIME, next_event(fd, &ev, softcm_quiet_ms(100)));
	close(ufd);
	/* the port is free again: the next connect opens it */
	ASSERT_EQ(0, connect_id(fd, h, 0, NULL, 0, 1));
	ASSERT_EQ(0, next_event(fd, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
	EXPECT_EQ(8, ev.status);
	close(fd);
	/* open_in() pointed sc-k1's stats at sc-k4: this is sc-k4's */
	EXPECT_EQ(0, stats_wait_idle(stats_fd[0], STATS_IDLE_MS));
	ASSERT_EQ(0, enter_ns("sc-k1"));
	netns_del("sc-k4");
}

TEST_HARNESS_MAIN
