// SPDX-License-Identifier: GPL-2.0
/*
 * What the network's neighbour tables can do to softcm: devices whose
 * hardware address is not a MAC, and neighbour updates any host on the
 * link can cause; and the parts of an IPv6 address that name more than
 * a host (flow label, link).  Topology, built for each test:
 *
 *   +-- sc-nt (the ids) ---+        +-- sc-np (the peer) --+
 *   | t0 10.88.0.1/16      |--veth--| p0 10.88.0.2/16      |
 *   |    fd88::1/64        |        |    fd88::2/64        |
 *   +----------------------+        +----------------------+
 *
 * 10.88.0.99 is on the link but nobody answers there.
 */
#include <arpa/inet.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "neigh_helpers.h"

/* Made for every case, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "sc-nt", "t0", { "10.88.0.1/16", "fd88::1/64 nodad" } };
static const struct topo_end end2 = { "sc-np", "p0", { "10.88.0.2/16", "fd88::2/64 nodad" } };

static int resolve_to(int fd, __u32 h, const char *dst, __u32 timeout_ms)
{
	struct softcm_resolve_addr c = { .handle = h, .timeout_ms = timeout_ms };
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)c.dst;
	struct sockaddr_in *d4 = (struct sockaddr_in *)c.dst;

	if (strchr(dst, ':')) {
		d6->sin6_family = AF_INET6;
		d6->sin6_port = htons(7471);
		inet_pton(AF_INET6, dst, &d6->sin6_addr);
		c.dst_len = sizeof(*d6);
	} else {
		d4->sin_family = AF_INET;
		d4->sin_port = htons(7471);
		inet_pton(AF_INET, dst, &d4->sin_addr);
		c.dst_len = sizeof(*d4);
	}
	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c) ? -errno : 0;
}

static int resolve_route(int fd, __u32 h)
{
	struct softcm_resolve_route c = { .handle = h, .timeout_ms = 1000 };

	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ROUTE, &c) ? -errno : 0;
}

/*
 * Kernel log lines that report a problem (WARN, BUG, FORTIFY's
 * field-spanning write, UBSAN, KASAN) among those logged since @fd, an
 * fd of /dev/kmsg, was opened and moved to the end; -1 on error.
 */
static int kmsg_problems(int fd)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "field-spanning", "UBSAN", "KASAN",
	};
	char rec[2048];
	ssize_t len;
	int n = 0;

	while ((len = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (len < 0) {
			if (errno == EPIPE)
				continue;	/* overwritten records */
			if (errno == EAGAIN)
				break;
			return -1;
		}
		rec[len] = '\0';
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(rec, bad[i]))
				n++;
	}
	return n;
}

FIXTURE(nb) {
	int home;
	int nt, np;	/* the two namespaces */
	int fd;		/* /dev/softcm in sc-nt */
	int stats;	/* sc-nt's /proc/net/softcm_stats */
	int kmsg;	/* the kernel log from the test's start on */
};

FIXTURE_SETUP(nb)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, topo_pair(&end1, &end2));
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->nt = netns_open("sc-nt");
	ASSERT_LE(0, self->nt);
	self->np = netns_open("sc-np");
	ASSERT_LE(0, self->np);
	self->stats = stats_open(self->nt, self->home);
	ASSERT_LE(0, self->stats);
	ASSERT_EQ(0, netns_enter(self->nt));
	self->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->kmsg);
	ASSERT_LE(0, lseek(self->kmsg, 0, SEEK_END));
}

FIXTURE_TEARDOWN(nb)
{
	close(self->fd);
	/* no id, file or connection left in either namespace before they go */
	EXPECT_EQ(0, stats_wait_idle(self->stats, STATS_IDLE_MS)) TH_LOG("sc-nt not idle");
	EXPECT_EQ(0, netns_wait_idle("sc-np", STATS_IDLE_MS));
	close(self->stats);
	close(self->kmsg);
	netns_enter(self->home);
	close(self->home);
	close(self->nt);
	close(self->np);
	netns_del("sc-nt");
	netns_del("sc-np");
}

/*
 * An NBMA ip6gre device with ARP on has 16-byte link-layer addresses:
 * its neighbour's would overflow a MAC.  Refused, and nothing is logged
 * (Debian's FORTIFY_SOURCE warned of the field-spanning write before).
 */
TEST_F(nb, ip6gre_16_byte_neighbour_refused)
{
	__u32 h;

	system("modprobe ip6_gre 2>/dev/null");
	if (system("ip -n sc-nt link add g0 type ip6gre local fd88::1 remote any 2>/dev/null"))
		SKIP(return, "this kernel cannot make an ip6gre device");
	ASSERT_EQ(0, system("set -e; ip -n sc-nt link set g0 arp on up\n"
			    "ip -n sc-nt -6 addr add 2001:db8:1::1/64 dev g0 nodad\n"
			    "ip -n sc-nt -6 neigh add 2001:db8:1::2 dev g0 nud permanent"
			    " lladdr 20:01:0d:b8:00:00:00:00:00:00:00:00:00:00:00:02"));

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &h));
	EXPECT_EQ(-EPROTONOSUPPORT, resolve_to(self->fd, h, "2001:db8:1::2", 1000));
	/* Refused at once: the id is still bound and can go elsewhere. */
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, h));
	EXPECT_EQ(0, resolve_to(self->fd, h, "::1", 1000));
	EXPECT_EQ(0, kmsg_problems(self->kmsg));
}

/*
 * A sit tunnel (4-byte addresses, no ARP) is in both test kernels: the
 * same refusal for a device whose address is not a MAC.
 */
TEST_F(nb, sit_device_refused)
{
	__u32 h;

	system("modprobe sit 2>/dev/null");
	ASSERT_EQ(0, system("set -e\n"
			    "ip -n sc-nt link add s0 type sit local 10.88.0.1 remote 10.88.0.2\n"
			    "ip -n sc-nt link set s0 up\n"
			    "ip -n sc-nt -6 addr add fd89::1/64 dev s0 nodad"));

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &h));
	EXPECT_EQ(-EPROTONOSUPPORT, resolve_to(self->fd, h, "fd89::2", 1000));
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, h));
	EXPECT_EQ(0, kmsg_problems(self->kmsg));
}

#define RESOLVED_IDS	100
#define WAITING_IDS	100
#define UNRELATED	300

/*
 * A peer floods the link with ARP requests from addresses nobody uses
 * while the namespace holds ids resolved through the peer and ids waiting
 * for a silent neighbour: every update is seen, none wakes an id.  Then
 * the peer's MAC really changes: exactly the ids resolved through it hear
 * of it, once each.
 */
TEST_F_TIMEOUT(nb, unrelated_updates_wake_no_id, 600)
{
	__u32 resolved[RESOLVED_IDS], waiting[WAITING_IDS];
	long long updates, wakeups;
	struct softcm_event ev;
	int i, n, pfd;
	int ifindex = 0;

	/* The peer's MAC is known (resolution of one id makes it so). */
	for (i = 0; i < RESOLVED_IDS; i++) {
		ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &resolved[i]));
		ASSERT_EQ(0, resolve_to(self->fd, resolved[i], "10.88.0.2", 10000));
	}
	for (n = 0; n < RESOLVED_IDS; n++) {
		ASSERT_EQ(0, next_event(self->fd, &ev, 30000)) TH_LOG("resolved %d", n);
		ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	}
	for (i = 0; i < RESOLVED_IDS; i++)
		ASSERT_EQ(0, resolve_route(self->fd, resolved[i]));
	for (n = 0; n < RESOLVED_IDS; n++) {
		ASSERT_EQ(0, next_event(self->fd, &ev, 30000));
		ASSERT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, ev.event);
	}
	for (i = 0; i < WAITING_IDS; i++) {
		ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &waiting[i]));
		ASSERT_EQ(0, resolve_to(self->fd, waiting[i], "10.88.0.99", 300000));
	}

	/* The flood, from the peer's namespace. */
	updates = stats_get(self->stats, "neigh_updates");
	wakeups = stats_get(self->stats, "neigh_wakeups");
	ASSERT_NE(STATS_MISSING, updates);
	ASSERT_NE(STATS_MISSING, wakeups);
	ASSERT_EQ(0, netns_enter(self->np));
	pfd = arp_socket("p0", &ifindex);
	ASSERT_EQ(0, netns_enter(self->nt));
	ASSERT_LE(0, pfd);
	ASSERT_EQ(0, arp_flood(pfd, ifindex, "10.88.0.1", 0x0a580100, UNRELATED, 0));
	close(pfd);
	ASSERT_EQ(0, stats_wait_above(self->stats, "neigh_updates",
				      updates + UNRELATED - 1, 120000));
	EXPECT_EQ(wakeups, stats_get(self->stats, "neigh_wakeups"));
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, 0));
	for (i = 0; i < WAITING_IDS; i++)
		EXPECT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(self->fd, waiting[i]));

	/* A real change reaches the ids that use the neighbour, once each. */
	ASSERT_EQ(0, system("ip -n sc-nt neigh replace 10.88.0.2 lladdr 02:88:00:00:00:02 "
			    "dev t0 nud permanent"));
	for (n = 0; n < RESOLVED_IDS; n++) {
		ASSERT_EQ(0, next_event(self->fd, &ev, 30000)) TH_LOG("unreachable %d", n);
		ASSERT_EQ(SOFTCM_EVENT_UNREACHABLE, ev.event);
		EXPECT_EQ(-ETIMEDOUT, ev.status);
		for (i = 0; i < RESOLVED_IDS && resolved[i] != ev.handle; i++)
			;
		EXPECT_LT(i, RESOLVED_IDS) TH_LOG("handle %u", ev.handle);
	}
	EXPECT_EQ(wakeups + RESOLVED_IDS, stats_get(self->stats, "neigh_wakeups"));
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, 0));
	for (i = 0; i < WAITING_IDS; i++)
		EXPECT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(self->fd, waiting[i]));
}

/*
 * The neighbour a waiting id needs makes itself known (its ARP request
 * creates the entry): that wakes the id, and only it.
 */
TEST_F(nb, awaited_neighbour_wakes_its_id)
{
	struct softcm_event ev;
	long long wakeups;
	int pfd;
	int ifindex = 0;
	__u32 a, b;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &a));
	ASSERT_EQ(0, resolve_to(self->fd, a, "10.88.0.99", 300000));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &b));
	ASSERT_EQ(0, resolve_to(self->fd, b, "10.88.0.98", 300000));
	wakeups = stats_get(self->stats, "neigh_wakeups");
	ASSERT_NE(STATS_MISSING, wakeups);

	ASSERT_EQ(0, netns_enter(self->np));
	pfd = arp_socket("p0", &ifindex);
	ASSERT_EQ(0, netns_enter(self->nt));
	ASSERT_LE(0, pfd);
	ASSERT_EQ(0, arp_flood(pfd, ifindex, "10.88.0.1", 0x0a580063, 1, 0));	/* .99 */
	close(pfd);

	ASSERT_EQ(0, next_event(self->fd, &ev, 60000));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	EXPECT_EQ(a, ev.handle);
	EXPECT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(self->fd, b));
	EXPECT_LE(wakeups + 1, stats_get(self->stats, "neigh_wakeups"));
	EXPECT_EQ(-ETIME, next_event(self->fd, &ev, 0));
}

/* The flow label the application puts on the destination is the path's. */
TEST_F(nb, ipv6_flow_label_reaches_the_path)
{
	struct softcm_resolve_addr c = { .timeout_ms = 10000 };
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)c.dst;
	struct softcm_query_route q = { 0 };
	struct softcm_event ev;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &c.handle));
	d6->sin6_family = AF_INET6;
	d6->sin6_port = htons(7471);
	/* The traffic class bits above the label are not part of it. */
	d6->sin6_flowinfo = htonl(0x0a012345);
	inet_pton(AF_INET6, "fd88::2", &d6->sin6_addr);
	c.dst_len = sizeof(*d6);
	ASSERT_EQ(0, ioctl(self->fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c));
	ASSERT_EQ(0, next_event(self->fd, &ev, 30000));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	ASSERT_EQ(0, resolve_route(self->fd, c.handle));
	ASSERT_EQ(0, next_event(self->fd, &ev, 30000));
	ASSERT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, ev.event);
	q.handle = c.handle;
	ASSERT_EQ(0, ioctl(self->fd, SOFTCM_IOCTL_QUERY_ROUTE, &q));
	EXPECT_EQ(0x12345, q.flow_label);
}

static int bind_ll(int fd, __u32 h, const char *ip, int ifindex, __u16 port)
{
	struct softcm_bind b = { .handle = h, .addr_len = sizeof(struct sockaddr_in6) };
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)b.addr;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	s6->sin6_scope_id = ifindex;
	inet_pton(AF_INET6, ip, &s6->sin6_addr);
	return ioctl(fd, SOFTCM_IOCTL_BIND, &b) ? -errno : 0;
}

/*
 * One link-local address on two links is two addresses: both bind the
 * same port; the same link twice conflicts.
 */
TEST_F(nb, link_local_address_on_two_links)
{
	int t0, t1;
	__u32 a, b, c;

	ASSERT_EQ(0, system("set -e\n"
			    "ip link add t1 netns sc-nt type veth peer name p1 netns sc-np\n"
			    "ip -n sc-nt addr add fe80::88/64 dev t0 nodad\n"
			    "ip -n sc-nt addr add fe80::88/64 dev t1 nodad\n"
			    "ip -n sc-nt link set t1 up\n"));
	t0 = if_nametoindex("t0");
	t1 = if_nametoindex("t1");
	ASSERT_NE(0, t0);
	ASSERT_NE(0, t1);

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 1, &a));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 2, &b));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 3, &c));
	ASSERT_EQ(0, bind_ll(self->fd, a, "fe80::88", t0, 7300));
	EXPECT_EQ(0, bind_ll(self->fd, b, "fe80::88", t1, 7300));
	EXPECT_EQ(-EADDRINUSE, bind_ll(self->fd, c, "fe80::88", t0, 7300));
}

TEST_HARNESS_MAIN
