// SPDX-License-Identifier: GPL-2.0
/*
 * Address and route resolution through the kernel's route and neighbour
 * tables, in a topology the fixture builds:
 *
 *   +-- sc-a --------+        +-- sc-r ---------+        +-- sc-c --------+
 *   | a0 10.77.1.1   |--veth--| r0 10.77.1.254  |        |                |
 *   |    fd77:1::1   |        |    fd77:1::fe   |        |                |
 *   |    fe80::a     |        |    fe80::fe     |        |                |
 *   | 10.77.2.0/24   |        | r1 10.77.2.254  |--veth--| c0 10.77.2.2   |
 *   |  via .1.254    |        |  (forwarding)   |        |                |
 *   +----------------+        +-----------------+        +----------------+
 *
 * The test process runs in sc-a.  10.77.1.99 is on a0's subnet but nobody
 * answers there; 10.99.0.1 has no route.  Also: the event queue seen
 * through real events (read, poll, destroy and migrate with events
 * queued).
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"

TOPO_NAMESPACES("sc-a sc-r sc-c")

/* Made over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end a0 = { "sc-a", "a0",
				    { "10.77.1.1/24", "fd77:1::1/64 nodad", "fe80::a/64 nodad" } };
static const struct topo_end r0 = { "sc-r", "r0",
				    { "10.77.1.254/24", "fd77:1::fe/64 nodad", "fe80::fe/64 nodad" } };
static const struct topo_end r1 = { "sc-r", "r1", { "10.77.2.254/24" } };
static const struct topo_end c0 = { "sc-c", "c0", { "10.77.2.2/24" } };

/* sc-a, the router sc-r and sc-c beyond it, as the picture above; 0 or -errno. */
static int topology_make(void)
{
	int nr = -1, nc = -1, na = -1, home = netns_self(), ret;

	ret = home < 0 ? home : topo_pair(&a0, &r0);
	ret = ret ?: netns_fresh("sc-c");
	ret = ret ?: topo_link(&r1, &c0);
	if (!ret) {
		na = netns_open("sc-a");
		nr = netns_open("sc-r");
		nc = netns_open("sc-c");
		ret = na < 0 ? na : nr < 0 ? nr : nc < 0 ? nc : 0;
	}
	ret = ret ?: netns_net_sysctl(nr, home, "ipv4/ip_forward", 1);
	ret = ret ?: route_add(na, "10.77.2.0/24", "10.77.1.254");
	ret = ret ?: route_add(nc, "0.0.0.0/0", "10.77.2.254");
	if (na >= 0)
		close(na);
	if (nr >= 0)
		close(nr);
	if (nc >= 0)
		close(nc);
	if (home >= 0)
		close(home);
	return ret;
}

static int query_ss(int fd, __u32 h, int which, struct sockaddr_storage *ss)
{
	__u32 len = sizeof(*ss);

	return query_addr(fd, h, which, ss, &len);
}

static int resolve(int fd, __u32 h, const char *src, const char *dst, int scope,
		   __u32 timeout_ms)
{
	struct softcm_resolve_addr c = { .handle = h, .timeout_ms = timeout_ms };
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)c.dst;
	struct sockaddr_in *d4 = (struct sockaddr_in *)c.dst;

	if (strchr(dst, ':')) {
		d6->sin6_family = AF_INET6;
		d6->sin6_port = htons(7471);
		d6->sin6_scope_id = scope;
		inet_pton(AF_INET6, dst, &d6->sin6_addr);
		c.dst_len = sizeof(*d6);
	} else {
		d4->sin_family = AF_INET;
		d4->sin_port = htons(7471);
		inet_pton(AF_INET, dst, &d4->sin_addr);
		c.dst_len = sizeof(*d4);
	}
	if (src && strchr(src, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)c.src;

		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, src, &s6->sin6_addr);
		c.src_len = sizeof(*s6);
	} else if (src) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)c.src;

		s4->sin_family = AF_INET;
		inet_pton(AF_INET, src, &s4->sin_addr);
		c.src_len = sizeof(*s4);
	}
	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c) ? -errno : 0;
}

static int resolve_route(int fd, __u32 h, __u32 timeout_ms)
{
	struct softcm_resolve_route c = { .handle = h, .timeout_ms = timeout_ms };

	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ROUTE, &c) ? -errno : 0;
}

static int query_route(int fd, __u32 h, struct softcm_query_route *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = h;
	return ioctl(fd, SOFTCM_IOCTL_QUERY_ROUTE, q) ? -errno : 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A line of output of a command, e.g. a MAC from another namespace. */
static void run_read(const char *cmd, char *out, size_t size)
{
	FILE *f = popen(cmd, "r");

	out[0] = '\0';
	if (f) {
		if (!fgets(out, size, f))
			out[0] = '\0';
		pclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
}

static void mac_str(const __u8 *mac, char *out)
{
	sprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x",
		mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

static int ifindex_of(const char *ns, const char *dev)
{
	char cmd[128], out[32];

	snprintf(cmd, sizeof(cmd), "ip netns exec %s cat /sys/class/net/%s/ifindex", ns, dev);
	run_read(cmd, out, sizeof(out));
	return atoi(out);
}

static int bind_link_local(int fd, __u32 h, const char *ip, int ifindex)
{
	struct softcm_bind b = { .handle = h, .addr_len = sizeof(struct sockaddr_in6) };
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)b.addr;

	s6->sin6_family = AF_INET6;
	s6->sin6_scope_id = ifindex;
	inet_pton(AF_INET6, ip, &s6->sin6_addr);
	return ioctl(fd, SOFTCM_IOCTL_BIND, &b) ? -errno : 0;
}

FIXTURE(net) {
	int fd;
	int home;	/* the namespace we came from */
};

/*
 * Building the topology costs seconds (tens of them on the debug kernel),
 * so tests share it; a test that changes it marks it dirty for the next
 * one to rebuild.  Each test runs in its own process: the mark is a file.
 */
#define TOPOLOGY_DIRTY "/run/softcm-resolve-topology-dirty"

static void topology_changed(void)
{
	close(open(TOPOLOGY_DIRTY, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

FIXTURE_SETUP(net)
{
	int nsfd;

	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/sc-a", F_OK) || !access(TOPOLOGY_DIRTY, F_OK)) {
		ASSERT_EQ(0, topology_make());
		unlink(TOPOLOGY_DIRTY);
	}
	self->home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->home);
	nsfd = open("/run/netns/sc-a", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, nsfd);
	ASSERT_EQ(0, setns(nsfd, CLONE_NEWNET));
	close(nsfd);
	self->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(net)
{
	close(self->fd);
	/*
	 * The test ran in sc-a (sc-r and sc-c never use softcm): with its
	 * files closed, no id, file or connection may be left there.
	 */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
	setns(self->home, CLONE_NEWNET);
	close(self->home);
}

TEST_F(net, reachable_neighbour_and_route)
{
	struct sockaddr_storage ss;
	struct softcm_query_route q;
	struct softcm_event ev;
	char want[32], got[32];
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.1.254", 0, 5000));
	/* Asynchronous, even when the neighbour is known. */
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(0x5c, ev.uid);
	EXPECT_EQ(SOFTCM_STATE_ADDR_RESOLVED, state_of(self->fd, h));

	/* The wildcard implicitly bound became the selected source. */
	ASSERT_EQ(0, query_ss(self->fd, h, SOFTCM_QUERY_LOCAL, &ss));
	EXPECT_EQ(htonl(0x0a4d0101), ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	EXPECT_NE(0, ((struct sockaddr_in *)&ss)->sin_port);
	ASSERT_EQ(0, query_ss(self->fd, h, SOFTCM_QUERY_PEER, &ss));
	EXPECT_EQ(htonl(0x0a4d01fe), ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	EXPECT_EQ(htons(7471), ((struct sockaddr_in *)&ss)->sin_port);

	EXPECT_EQ(-EINVAL, query_route(self->fd, h, &q));
	EXPECT_EQ(-EINVAL, resolve_route(self->fd, h, 0));
	ASSERT_EQ(0, resolve_route(self->fd, h, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, ev.event);
	EXPECT_EQ(SOFTCM_STATE_ROUTE_RESOLVED, state_of(self->fd, h));
	ASSERT_EQ(0, query_route(self->fd, h, &q));
	EXPECT_EQ(ifindex_of("sc-a", "a0"), q.ifindex);
	run_read("ip netns exec sc-r cat /sys/class/net/r0/address", want, sizeof(want));
	mac_str(q.dmac, got);
	EXPECT_STREQ(want, got);
	run_read("ip netns exec sc-a cat /sys/class/net/a0/address", want, sizeof(want));
	mac_str(q.smac, got);
	EXPECT_STREQ(want, got);
	/* ::ffff:10.77.1.1 and ::ffff:10.77.1.254 */
	EXPECT_EQ(0xff, q.sgid[10]);
	EXPECT_EQ(0xff, q.sgid[11]);
	EXPECT_EQ(0, memcmp(&q.sgid[12], "\x0a\x4d\x01\x01", 4));
	EXPECT_EQ(0, memcmp(&q.dgid[12], "\x0a\x4d\x01\xfe", 4));
	EXPECT_EQ(3, q.mtu);		/* 1500-byte Ethernet: IB MTU 1024 */
	EXPECT_EQ(64, q.hop_limit);
	EXPECT_EQ(0, q.gateway);
	EXPECT_EQ(0xffff, q.pkey);
	EXPECT_EQ(18, q.packet_life_time);
	EXPECT_EQ(-EINVAL, resolve_route(self->fd, h, 1000));
}

TEST_F(net, gateway_mac_is_used)
{
	struct softcm_query_route q;
	struct softcm_event ev;
	char want[32], got[32];
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.2.2", 0, 5000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, resolve_route(self->fd, h, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(0, query_route(self->fd, h, &q));
	EXPECT_EQ(1, q.gateway);
	run_read("ip netns exec sc-r cat /sys/class/net/r0/address", want, sizeof(want));
	mac_str(q.dmac, got);
	EXPECT_STREQ(want, got);
	EXPECT_EQ(0, memcmp(&q.dgid[12], "\x0a\x4d\x02\x02", 4));
}

TEST_F(net, silent_neighbour_times_out)
{
	struct sockaddr_storage ss;
	struct softcm_event ev;
	long start, elapsed;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	start = now_ms();
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.1.99", 0, 600));
	EXPECT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(self->fd, h));
	ASSERT_EQ(0, next_event(self->fd, &ev, 30000));
	elapsed = now_ms() - start;
	EXPECT_EQ(SOFTCM_EVENT_ADDR_ERROR, ev.event);
	EXPECT_EQ(-ETIMEDOUT, ev.status);
	/* Not before the deadline the caller gave. */
	EXPECT_LE(550, elapsed);
	/* Back to ADDR_BOUND with the address it was bound to. */
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, h));
	ASSERT_EQ(0, query_ss(self->fd, h, SOFTCM_QUERY_LOCAL, &ss));
	EXPECT_EQ(htonl(INADDR_ANY), ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	EXPECT_EQ(-ENOTCONN, query_ss(self->fd, h, SOFTCM_QUERY_PEER, &ss));
	/* ... and it may try again. */
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.1.254", 0, 5000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
}

TEST_F(net, no_route_fails_at_once)
{
	struct softcm_event ev;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	EXPECT_EQ(-ENETUNREACH, resolve(self->fd, h, NULL, "10.99.0.1", 0, 1000));
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, h));
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, 0));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	EXPECT_EQ(-ENETUNREACH, resolve(self->fd, h, NULL, "2001:db8::1", 0, 1000));
}

TEST_F(net, bad_input)
{
	struct softcm_resolve_addr c = { 0 };
	__u32 h, h6;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	c.handle = h;
	c.dst_len = 2;
	((struct sockaddr *)c.dst)->sa_family = AF_UNIX;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	((struct sockaddr *)c.dst)->sa_family = AF_INET;
	c.dst_len = sizeof(struct sockaddr_in) - 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c));
	EXPECT_EQ(EINVAL, errno);
	c.dst_len = sizeof(c.dst) + 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c));
	EXPECT_EQ(EINVAL, errno);
	/* Source and destination families must agree. */
	EXPECT_EQ(-EINVAL, resolve(self->fd, h, "fd77:1::1", "10.77.1.254", 0, 1000));
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(self->fd, h));
	/* A v6-bound id cannot resolve a v4 destination. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h6));
	ASSERT_EQ(0, resolve(self->fd, h6, "fd77:1::1", "fd77:1::fe", 0, 5000));
	EXPECT_EQ(-EINVAL, resolve(self->fd, h6, NULL, "10.77.1.254", 0, 1000));
	EXPECT_EQ(-ENOENT, resolve(self->fd, 0x7fff0000, NULL, "10.77.1.254", 0, 1000));
}

TEST_F(net, ipv6_global_and_link_local)
{
	struct softcm_query_route q;
	struct softcm_event ev;
	struct in6_addr a;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "fd77:1::fe", 0, 5000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, resolve_route(self->fd, h, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(0, query_route(self->fd, h, &q));
	inet_pton(AF_INET6, "fd77:1::1", &a);
	EXPECT_EQ(0, memcmp(q.sgid, &a, 16));
	inet_pton(AF_INET6, "fd77:1::fe", &a);
	EXPECT_EQ(0, memcmp(q.dgid, &a, 16));

	/* Link-local without a scope, or with another link's: no. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	EXPECT_EQ(-EINVAL, resolve(self->fd, h, NULL, "fe80::fe", 0, 5000));
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(self->fd, h));

	/* Bound to a device (a link-local source with its scope): that link. */
	ASSERT_EQ(0, bind_link_local(self->fd, h, "fe80::a", ifindex_of("sc-a", "a0")));
	EXPECT_EQ(-EINVAL, resolve(self->fd, h, NULL, "fe80::fe", 1, 5000));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "fe80::fe", 0, 5000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	EXPECT_EQ(0, ev.status);

	/* Link-local with its scope: resolved over that link. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "fe80::fe", ifindex_of("sc-a", "a0"), 5000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	EXPECT_EQ(0, ev.status);
}

TEST_F(net, loopback_and_own_address)
{
	struct softcm_query_route q;
	struct softcm_event ev;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "127.0.0.1", 0, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, resolve_route(self->fd, h, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(0, query_route(self->fd, h, &q));
	EXPECT_EQ(1, q.ifindex);	/* lo */

	/* Our own address on a0: reported on a0, no ARP, our MAC both ways. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.1.1", 0, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, resolve_route(self->fd, h, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(0, query_route(self->fd, h, &q));
	EXPECT_EQ(ifindex_of("sc-a", "a0"), q.ifindex);
	EXPECT_EQ(0, memcmp(q.smac, q.dmac, 6));
}

TEST_F(net, bound_source_is_kept)
{
	struct sockaddr_storage ss;
	struct softcm_event ev;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, "10.77.1.1", "10.77.2.2", 0, 5000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, query_ss(self->fd, h, SOFTCM_QUERY_LOCAL, &ss));
	EXPECT_EQ(htonl(0x0a4d0101), ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	/* A bound source that cannot reach the destination: no route. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	EXPECT_EQ(-EADDRNOTAVAIL, resolve(self->fd, h, "10.77.1.7", "10.77.2.2", 0, 1000));
}

/* Destroy, close and re-resolve while a resolution waits: nothing left. */
TEST_F(net, cancel_in_flight)
{
	struct softcm_event ev;
	__u32 h, reported = 99;
	int i, fd2, st;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.1.99", 0, 5000));
	EXPECT_EQ(-EINVAL, resolve(self->fd, h, NULL, "10.77.1.98", 0, 5000));
	ASSERT_EQ(0, destroy_id(self->fd, h, &reported));
	EXPECT_EQ(0, reported);

	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	st = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, st);
	/* only the destroyed id's memory may still be on its way out */
	ASSERT_EQ(0, stats_wait_eq(st, "ids", 0, STATS_IDLE_MS));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, create_id(fd2, SOFTCM_PS_TCP, 0x5c, &h));
		ASSERT_EQ(0, resolve(fd2, h, NULL, i % 2 ? "10.77.1.99" : "10.77.1.254", 0, 5000));
	}
	EXPECT_EQ(100, stats_get(st, "ids"));
	EXPECT_EQ(2, stats_get(st, "files"));
	close(fd2);
	/*
	 * Nothing left: the 100 ids, half of them still waiting for a
	 * neighbour that never answers, are freed with their file while
	 * this one stays open and hears nothing from them.
	 */
	EXPECT_EQ(0, stats_wait_eq(st, "ids", 0, STATS_IDLE_MS));
	EXPECT_EQ(0, stats_wait_eq(st, "files", 1, STATS_IDLE_MS));
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, softcm_quiet_ms(200)));
	close(st);
}

/*
 * Many ids resolving the same neighbours: all complete, none polls.  The
 * debug kernel needs minutes for this, hence the harness timeout.
 */
TEST_F_TIMEOUT(net, thousand_concurrent_resolutions, 600)
{
	struct epoll_event ee = { .events = EPOLLIN };
	struct softcm_event evs[64];
	int i, n, resolved = 0, ep;
	ssize_t len;
	__u32 h;

	ASSERT_EQ(0, system("ip -n sc-a neigh flush dev a0"));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
		ASSERT_EQ(0, resolve(self->fd, h, NULL, i % 2 ? "10.77.1.254" : "10.77.2.2",
				     0, 20000)) TH_LOG("id %d", i);
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ee));
	while (resolved < 1000) {
		n = epoll_wait(ep, &ee, 1, 60000);
		ASSERT_EQ(1, n) TH_LOG("%d resolved", resolved);
		/* Several records per read. */
		len = read(self->fd, evs, sizeof(evs));
		ASSERT_LT(0, len);
		ASSERT_EQ(0, len % sizeof(evs[0]));
		for (i = 0; i < len / (ssize_t)sizeof(evs[0]); i++) {
			ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, evs[i].event);
			resolved++;
		}
	}
	close(ep);
}

TEST_F(net, destroy_reports_events_read)
{
	struct softcm_event ev;
	__u32 h, reported = 99;

	/* Queued but never read: it goes with the id, reported 0. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "127.0.0.1", 0, 1000));
	ASSERT_EQ(0, poll(&(struct pollfd){ .fd = self->fd, .events = POLLIN }, 1, 10000) - 1);
	ASSERT_EQ(0, destroy_id(self->fd, h, &reported));
	EXPECT_EQ(0, reported);
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, 0));

	/* Two read: reported 2. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "127.0.0.1", 0, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(0, resolve_route(self->fd, h, 1000));
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	ASSERT_EQ(0, destroy_id(self->fd, h, &reported));
	EXPECT_EQ(2, reported);
}

TEST_F(net, migrate_carries_queued_events)
{
	struct softcm_migrate_id m = { 0 };
	struct softcm_event ev;
	__u32 h;
	int fd2;

	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "127.0.0.1", 0, 1000));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = self->fd, .events = POLLIN }, 1, 10000));
	m.fd = self->fd;
	m.handle = h;
	ASSERT_EQ(0, ioctl(fd2, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(0, m.events_reported);
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, 0));
	ASSERT_EQ(0, next_event(fd2, &ev, 1000));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	EXPECT_EQ(m.handle, ev.handle);
	close(fd2);
}

/* A copy to userspace that faults leaves the event queued. */
TEST_F(net, faulting_read_keeps_event)
{
	struct softcm_event ev;
	void *ro;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(self->fd, h, NULL, "127.0.0.1", 0, 1000));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = self->fd, .events = POLLIN }, 1, 10000));
	/* A read-only page: the copy faults. */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-1, read(self->fd, ro, sizeof(ev)));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, 4096);
	ASSERT_EQ(0, next_event(self->fd, &ev, 0));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
}

/* The next event of type @type, skipping others; -ETIME if none. */
static int wait_for(int fd, __u32 type, struct softcm_event *ev, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	int ret;

	do {
		ret = next_event(fd, ev, deadline - now_ms() > 0 ? deadline - now_ms() : 0);
		if (ret)
			return ret;
	} while (ev->event != type);
	return 0;
}

static __u32 resolved_id(struct __test_metadata *_metadata, int fd, const char *dst,
			 bool route)
{
	struct softcm_event ev;
	__u32 h;

	ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, 0x5c, &h));
	ASSERT_EQ(0, resolve(fd, h, NULL, dst, 0, 5000));
	ASSERT_EQ(0, next_event(fd, &ev, 10000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	if (route) {
		ASSERT_EQ(0, resolve_route(fd, h, 1000));
		ASSERT_EQ(0, next_event(fd, &ev, 10000));
		ASSERT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, ev.event);
	}
	return h;
}

TEST_F(net, device_removal)
{
	struct softcm_event ev;
	__u32 h, idle, reported;

	topology_changed();

	h = resolved_id(_metadata, self->fd, "10.77.1.254", true);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &idle));
	ASSERT_EQ(0, system("ip -n sc-a link del a0"));
	ASSERT_EQ(0, wait_for(self->fd, SOFTCM_EVENT_DEVICE_REMOVAL, &ev, 10000));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(SOFTCM_STATE_DEVICE_REMOVAL, state_of(self->fd, h));
	/* Nothing more can be done with it but destroy it. */
	EXPECT_EQ(-EINVAL, resolve_route(self->fd, h, 1000));
	EXPECT_EQ(0, destroy_id(self->fd, h, &reported));
	/* An id that never used the device heard nothing. */
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(self->fd, idle));
	while (!next_event(self->fd, &ev, 0))
		EXPECT_NE(idle, ev.handle);
}

TEST_F(net, device_down_and_address_removal)
{
	struct softcm_event ev;
	__u32 a, b;

	topology_changed();

	b = resolved_id(_metadata, self->fd, "fd77:1::fe", false);
	ASSERT_EQ(0, system("ip -n sc-a addr del fd77:1::1/64 dev a0"));
	ASSERT_EQ(0, wait_for(self->fd, SOFTCM_EVENT_ADDR_CHANGE, &ev, 10000));
	EXPECT_EQ(b, ev.handle);

	/* Down: every id resolved over a0 hears of it, b as well as a. */
	a = resolved_id(_metadata, self->fd, "10.77.1.254", false);
	ASSERT_EQ(0, system("ip -n sc-a link set a0 down"));
	do {
		ASSERT_EQ(0, wait_for(self->fd, SOFTCM_EVENT_ADDR_CHANGE, &ev, 10000));
	} while (ev.handle != a);
	EXPECT_EQ(SOFTCM_STATE_ADDR_RESOLVED, state_of(self->fd, a));
}

/*
 * A device that goes away under a resolution: it fails with the route's
 * error (there is none left), not a timeout, and nothing leaks.
 *
 * A resolution waiting for a silent neighbour looks again at its deadline
 * (addr.c: nothing but a neighbour update or the deadline runs it), so
 * what the deletion changes is that last look: no route, ENETUNREACH.
 * That holds only if the device is gone before the deadline, which no
 * timeout guarantees on a host that may stall the guest for seconds.  So
 * the precondition is observed instead of assumed: the id is still in
 * ADDR_QUERY (read under its mutex) once "ip link del" has returned, that
 * is once the device and its routes are gone, so its last look is still
 * to come.  A deadline that passed first (ADDR_ERROR -ETIMEDOUT, not what
 * is tested here) is a try that proves nothing: the test tries again
 * with twice the timeout, on a fresh device.  The device is a veth pair
 * of sc-a's own, d0 (10.77.9.1/24) and d1, on which nobody owns
 * 10.77.9.99, so the shared topology is left alone.
 */
/* A pair within sc-a, made and removed by device_removed_during_resolution */
static const struct topo_end d0 = { "sc-a", "d0", { "10.77.9.1/24" } };
static const struct topo_end d1 = { "sc-a", "d1", { NULL } };

TEST_F(net, device_removed_during_resolution)
{
	struct softcm_event ev;
	int try, state = -1, ns = netns_open("sc-a");
	__u32 h, timeout_ms;

	ASSERT_LE(0, ns);
	/*
	 * Over rtnetlink, not ip(8): a program started costs a loaded
	 * debug guest more than the first deadline, which then passed
	 * before the device went, try after try.
	 */
	for (try = 0; try < 6; try++) {
		timeout_ms = 1000 << try;
		link_change(ns, "d0", -1, 0, true);
		ASSERT_EQ(0, topo_link(&d0, &d1));
		ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0x5c, &h));
		ASSERT_EQ(0, resolve(self->fd, h, NULL, "10.77.9.99", 0, timeout_ms));
		ASSERT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(self->fd, h));
		ASSERT_EQ(0, link_change(ns, "d0", -1, 0, true));
		/*
		 * The removal may end the resolution before the deletion
		 * returns, and the last look comes at the deadline at the
		 * latest: either way one ADDR_ERROR.  ETIMEDOUT says the
		 * deadline came before the device went (a slow guest): try
		 * again with a longer one.
		 */
		ASSERT_EQ(0, wait_for(self->fd, SOFTCM_EVENT_ADDR_ERROR, &ev, 30000 + timeout_ms));
		state = ev.status;
		if (state != -ETIMEDOUT)
			break;
		TH_LOG("try %d: the %u ms deadline passed before the device went", try,
		       timeout_ms);
		EXPECT_EQ(0, destroy_id(self->fd, h, NULL));
	}
	EXPECT_EQ(h, ev.handle);
	ASSERT_EQ(-ENETUNREACH, state)
		TH_LOG("every deadline passed before the device was gone");
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, h));
	EXPECT_EQ(0, destroy_id(self->fd, h, NULL));
	close(ns);
}

/* The peer moved to another MAC: the id learns it, as rdma_cm. */
TEST_F(net, neighbour_mac_change)
{
	struct softcm_query_route q;
	struct softcm_event ev;
	char got[32];
	__u32 h;

	topology_changed();

	h = resolved_id(_metadata, self->fd, "10.77.2.2", true);
	ASSERT_EQ(0, system("ip -n sc-a neigh replace 10.77.1.254 lladdr 02:5c:00:00:00:fe "
			    "dev a0 nud reachable"));
	ASSERT_EQ(0, wait_for(self->fd, SOFTCM_EVENT_UNREACHABLE, &ev, 10000));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(-ETIMEDOUT, ev.status);
	ASSERT_EQ(0, query_route(self->fd, h, &q));
	mac_str(q.dmac, got);
	EXPECT_STREQ("02:5c:00:00:00:fe", got);
}

/* A blocking read() returns when an event arrives from another thread's call. */
struct reader {
	int fd;
	pid_t tid;		/* the thread that blocks in read() */
	bool was_blocked;	/* seen asleep in read() before the event */
};

/* Whether thread @tid sleeps in read(2) (x86-64 system call 0). */
static bool blocked_in_read(pid_t tid)
{
	char path[64], text[256], state = 0;
	FILE *f;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (f && fgets(text, sizeof(text), f) && strrchr(text, ')'))
		state = strrchr(text, ')')[2];
	if (f)
		fclose(f);
	return nr == 0 && state == 'S';
}

/* Once the reader sleeps in read(), resolve an id: its event wakes it. */
static void *resolve_later(void *p)
{
	struct reader *r = p;
	__u32 h;

	for (long end = topo_now_ms() + 10000; topo_now_ms() < end; usleep(1000))
		if (blocked_in_read(r->tid)) {
			r->was_blocked = true;
			break;
		}
	if (!create_id(r->fd, SOFTCM_PS_TCP, 0x5c, &h))
		resolve(r->fd, h, NULL, "127.0.0.1", 0, 1000);
	return NULL;
}

TEST_F(net, blocking_read_wakes_up)
{
	struct reader r = { .fd = self->fd, .tid = gettid() };
	struct softcm_event ev;
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, resolve_later, &r));
	ASSERT_EQ(sizeof(ev), read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, pthread_join(th, NULL));
	/* the event came to a read that was already asleep */
	EXPECT_TRUE(r.was_blocked);
}

/* The next event for @h on @fd, skipping other ids'; 0 or -errno. */
static int event_for(int fd, __u32 h, struct softcm_event *ev, int timeout_ms)
{
	int ret;

	do {
		ret = next_event(fd, ev, timeout_ms);
	} while (!ret && ev->handle != h);
	return ret;
}

/*
 * The child of killed_process_leaves_nothing: 60 ids in sc-a, ten in each
 * state it can reach, each checked; 0, or 100 + the id that failed.
 */
static int hold_ids_in_every_state(int ready)
{
	static const int want[6] = {
		SOFTCM_STATE_IDLE, SOFTCM_STATE_ADDR_BOUND, SOFTCM_STATE_LISTEN,
		SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_RESOLVED,
		SOFTCM_STATE_ROUTE_RESOLVED,
	};
	struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
	struct sockaddr_in *sin = (struct sockaddr_in *)b.addr;
	int fd = open("/dev/softcm", O_RDWR | O_CLOEXEC), i;
	struct softcm_event ev;
	__u32 h;

	if (fd < 0)
		return 99;
	for (i = 0; i < 60; i++) {
		if (create_id(fd, i % 2 ? SOFTCM_PS_TCP : SOFTCM_PS_UDP, 0x5c, &h))
			return 100 + i;
		switch (i % 6) {
		case 0:		/* IDLE */
			break;
		case 1:		/* ADDR_BOUND */
		case 2:		/* LISTEN */
			b.handle = h;
			sin->sin_family = AF_INET;
			sin->sin_port = htons(31000 + i);
			if (ioctl(fd, SOFTCM_IOCTL_BIND, &b))
				return 100 + i;
			if (i % 6 == 2) {
				struct softcm_listen l = { .handle = h };

				if (ioctl(fd, SOFTCM_IOCTL_LISTEN, &l))
					return 100 + i;
			}
			break;
		case 3:		/* ADDR_QUERY, waiting for a silent neighbour */
			if (resolve(fd, h, NULL, "10.77.1.99", 0, 60000))
				return 100 + i;
			break;
		default:	/* ADDR_RESOLVED, then ROUTE_RESOLVED */
			if (resolve(fd, h, NULL, "10.77.1.254", 0, 5000) ||
			    event_for(fd, h, &ev, 10000) || ev.event != SOFTCM_EVENT_ADDR_RESOLVED)
				return 100 + i;
			if (i % 6 == 5 &&
			    (resolve_route(fd, h, 1000) || event_for(fd, h, &ev, 10000) ||
			     ev.event != SOFTCM_EVENT_ROUTE_RESOLVED))
				return 100 + i;
			break;
		}
		if (state_of(fd, h) != want[i % 6])
			return 100 + i;
	}
	if (write(ready, "x", 1) != 1)
		return 2;
	pause();
	return 0;
}

/*
 * A process killed while holding ids in every state it can reach: the
 * kernel cleans up; no id is left, and the ports are free again.
 */
TEST_F(net, killed_process_leaves_nothing)
{
	int status, ready[2], i, st;
	char c;
	pid_t pid;
	__u32 h;

	st = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, st);
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ready[0]);
		_exit(hold_ids_in_every_state(ready[1]));
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		/* the child gave up: say where */
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("child failed at id %d",
							 WEXITSTATUS(status) - 100);
	}
	EXPECT_EQ(60, stats_get(st, "ids"));
	EXPECT_EQ(2, stats_get(st, "files"));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, stats_wait_eq(st, "ids", 0, STATS_IDLE_MS))
		TH_LOG("%lld ids left", stats_get(st, "ids"));
	EXPECT_EQ(0, stats_wait_eq(st, "files", 1, STATS_IDLE_MS));

	for (i = 0; i < 60; i++) {
		if (i % 6 != 1 && i % 6 != 2)
			continue;
		struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
		struct sockaddr_in *sin = (struct sockaddr_in *)b.addr;

		ASSERT_EQ(0, create_id(self->fd, i % 2 ? SOFTCM_PS_TCP : SOFTCM_PS_UDP, 0x5c, &h));
		b.handle = h;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(31000 + i);
		EXPECT_EQ(0, ioctl(self->fd, SOFTCM_IOCTL_BIND, &b)) TH_LOG("port %d", 31000 + i);
	}
	close(st);
}

TEST_HARNESS_MAIN
