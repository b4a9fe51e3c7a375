// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs device and its simplest objects, with raw ioctls on
 * /dev/softcm: QUERY_DEVICE, QUERY_PORT and QUERY_GID, the GID table
 * against the namespace's addresses as they come and go, PDs, MRs
 * (pinning, RLIMIT_MEMLOCK, access flags, keys) and AHs, handles that are
 * bad, foreign, stale or of another type, and what closing a file frees.
 *
 * Each test runs in a network namespace of its own (unshare() in the
 * fixture, gone with the test's process): loopback up, and a veth pair
 * va/vb with 10.9.0.1/24, fd09::1/64 and fe80::9/64 on va.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "verbs_helpers.h"

/* libibverbs' values, which the ABI uses. */
#define PORT_DOWN		1
#define PORT_ACTIVE		4
#define MTU_1024		3
#define MTU_4096		5

/* How long an address change may take to reach the GID table. */
#define GID_WAIT_MS		(10000 << softcm_slow_shift())

/*
 * No address appears behind the test's back: the kernel's own link-local
 * addresses come when the carrier does, from linkwatch, asynchronously;
 * va gets one of ours instead.
 */
/*
 * The namespace's links, over rtnetlink (netlink_helpers.h says why):
 * lo up and a veth pair va/vb, va with an IPv4, a global and a link-local
 * IPv6 address, both up.  No address of the kernel's own making
 * (addrgenmode none, as the namespace's default before the pair exists):
 * the GID table must hold what the test added and nothing else.
 */
static int setup_links(void)
{
	int ns = netns_self(), ret;

	if (ns < 0)
		return ns;
	ret = write_text("/proc/sys/net/ipv6/conf/default/addr_gen_mode", "1");
	ret = ret ?: link_up(ns, "lo");
	ret = ret ?: veth_add(ns, "va", ns, "vb");
	ret = ret ?: addr_add(ns, "va", "10.9.0.1/24", false, false);
	ret = ret ?: addr_add(ns, "va", "fd09::1/64", true, false);
	ret = ret ?: addr_add(ns, "va", "fe80::9/64", true, false);
	ret = ret ?: link_up(ns, "va");
	ret = ret ?: link_up(ns, "vb");
	close(ns);
	return ret;
}

static int query_device(int fd, struct softcm_device_attr *a)
{
	struct softcm_query_device c;

	memset(&c, 0xa5, sizeof(c));
	if (ioctl(fd, SOFTCM_IOCTL_QUERY_DEVICE, &c))
		return -errno;
	*a = c.attr;
	return 0;
}

static int query_port(int fd, __u8 port, struct softcm_port_attr *a)
{
	struct softcm_query_port c = { .port_num = port };

	if (ioctl(fd, SOFTCM_IOCTL_QUERY_PORT, &c))
		return -errno;
	*a = c.attr;
	return 0;
}

static int query_gid(int fd, __u32 index, struct softcm_query_gid *g)
{
	memset(g, 0, sizeof(*g));
	g->port_num = SOFTCM_PORT_NUM;
	g->index = index;
	return ioctl(fd, SOFTCM_IOCTL_QUERY_GID, g) ? -errno : 0;
}

static void mapped4(const char *ip, struct in6_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = 0xff;
	a->s6_addr[11] = 0xff;
	inet_pton(AF_INET, ip, &a->s6_addr[12]);
}

static void addr6(const char *ip, struct in6_addr *a)
{
	inet_pton(AF_INET6, ip, a);
}

/* The index of (@a, @ifindex) in the GID table, or -1. */
static int gid_index(int fd, const struct in6_addr *a, int ifindex)
{
	struct softcm_query_gid g;

	for (__u32 i = 0; i < SOFTCM_GID_TABLE_LEN; i++) {
		if (query_gid(fd, i, &g))
			return -1;
		if (g.gid_type == SOFTCM_GID_TYPE_ROCE_V2 && !memcmp(g.gid, a, 16) &&
		    (int)g.ifindex == ifindex)
			return i;
	}
	return -1;
}

static int gid_used(int fd)
{
	struct softcm_query_gid g;
	int n = 0;

	for (__u32 i = 0; i < SOFTCM_GID_TABLE_LEN; i++)
		if (!query_gid(fd, i, &g) && g.gid_type != SOFTCM_GID_TYPE_NONE)
			n++;
	return n;
}

/* Poll until (@a, @ifindex) is in the table (@present) or not: its index. */
static int gid_wait(int fd, const struct in6_addr *a, int ifindex, bool present)
{
	long deadline = topo_now_ms() + GID_WAIT_MS;
	int i;

	for (;;) {
		i = gid_index(fd, a, ifindex);
		if ((i >= 0) == present)
			return present ? i : 0;
		if (topo_now_ms() > deadline)
			return -ETIME;
		usleep(2000);
	}
}

/*
 * How many of the namespace's addresses (getifaddrs) are missing from the
 * table, and the number of addresses.
 */
static int missing_addresses(int fd, int *n)
{
	struct ifaddrs *ifs, *i;
	struct in6_addr a;
	int missing = 0;

	*n = 0;
	if (getifaddrs(&ifs))
		return -1;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			memset(&a, 0, sizeof(a));
			a.s6_addr[10] = a.s6_addr[11] = 0xff;
			memcpy(&a.s6_addr[12], &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			a = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		} else {
			continue;
		}
		(*n)++;
		if (gid_index(fd, &a, if_nametoindex(i->ifa_name)) < 0) {
			char text[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, &a, text, sizeof(text));
			fprintf(stderr, "# %s on %s is not in the GID table\n", text, i->ifa_name);
			missing++;
		}
	}
	freeifaddrs(ifs);
	return missing;
}

static int dereg_mr(int fd, __u32 h) { return destroy_obj(fd, SOFTCM_IOCTL_DEREG_MR, h); }
static int destroy_ah(int fd, __u32 h) { return destroy_obj(fd, SOFTCM_IOCTL_DESTROY_AH, h); }

static int reg_mr(int fd, __u32 pd, const void *addr, __u64 len, __u32 access,
		  struct softcm_reg_mr *c)
{
	memset(c, 0, sizeof(*c));
	c->addr = (__u64)(uintptr_t)addr;
	c->iova = c->addr;
	c->length = len;
	c->pd_handle = pd;
	c->access = access;
	return ioctl(fd, SOFTCM_IOCTL_REG_MR, c) ? -errno : 0;
}

static int create_ah(int fd, __u32 pd, __u8 sgid_index, __u32 *handle)
{
	struct softcm_create_ah c = {
		.pd_handle = pd,
		.attr = { .sgid_index = sgid_index, .is_global = 1, .hop_limit = 64,
			  .port_num = SOFTCM_PORT_NUM },
	};

	mapped4("10.9.0.2", (struct in6_addr *)c.attr.dgid);
	*handle = 0;
	if (ioctl(fd, SOFTCM_IOCTL_CREATE_AH, &c))
		return -errno;
	*handle = c.handle;
	return 0;
}

static void *map_pages(size_t n, int prot)
{
	void *p = mmap(NULL, n * getpagesize(), prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(verbs) {
	int fd;
	int stats;
	int ns;		/* the test's namespace */
	int va;		/* ifindex */
	__u32 pd;
};

FIXTURE_SETUP(verbs)
{
	self->fd = self->stats = self->ns = -1;
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, setup_links());
	self->ns = netns_self();
	ASSERT_LE(0, self->ns);
	self->va = if_nametoindex("va");
	ASSERT_LT(0, self->va);
	self->stats = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->stats);
	self->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, alloc_pd(self->fd, &self->pd));
}

FIXTURE_TEARDOWN(verbs)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->ns >= 0)
		close(self->ns);
	if (self->stats >= 0) {
		/* closing the file destroyed every object it had */
		EXPECT_EQ(0, stats_wait_eq(self->stats, "uobjs", 0, STATS_IDLE_MS));
		EXPECT_EQ(0, stats_wait_idle(self->stats, STATS_IDLE_MS));
		close(self->stats);
	}
}

TEST_F(verbs, query_device)
{
	struct softcm_device_attr a, b;
	int fd2;

	ASSERT_EQ(0, query_device(self->fd, &a));
	EXPECT_NE(0, a.node_guid);
	EXPECT_EQ(a.node_guid, a.sys_image_guid);
	EXPECT_EQ(1ull << 32, a.max_mr_size);
	EXPECT_EQ((__u64)getpagesize(), a.page_size_cap);
	/* SYS_IMAGE_GUID and RC_RNR_NAK_GEN only */
	EXPECT_EQ(1u << 11 | 1u << 12, a.device_cap_flags);
	EXPECT_EQ(0, a.vendor_id);
	EXPECT_EQ(16384, a.max_qp);
	EXPECT_EQ(16384, a.max_qp_wr);
	EXPECT_EQ(32, a.max_sge);
	EXPECT_EQ(16384, a.max_cq);
	EXPECT_EQ(65535, a.max_cqe);
	EXPECT_EQ(65536, a.max_mr);
	EXPECT_EQ(16384, a.max_pd);
	EXPECT_EQ(128, a.max_qp_rd_atom);
	EXPECT_EQ(128, a.max_qp_init_rd_atom);
	EXPECT_EQ(16384, a.max_ah);
	EXPECT_EQ(512, a.max_inline_data);
	EXPECT_EQ(1, a.max_pkeys);
	EXPECT_EQ(15, a.local_ca_ack_delay);
	EXPECT_EQ(1, a.phys_port_cnt);
	EXPECT_EQ(0, a.reserved0);

	/* One device per namespace: another file sees the same one. */
	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, query_device(fd2, &b));
	EXPECT_EQ(a.node_guid, b.node_guid);
	close(fd2);
}

TEST_F(verbs, query_port)
{
	struct softcm_query_port c = { .port_num = 1 };
	static struct softcm_port_attr a;	/* static: -Wclobbered and setjmp */

	ASSERT_EQ(0, query_port(self->fd, 1, &a));
	EXPECT_EQ(PORT_ACTIVE, a.state);
	EXPECT_EQ(5, a.phys_state);		/* LINK_UP */
	EXPECT_EQ(MTU_4096, a.max_mtu);
	EXPECT_EQ(MTU_1024, a.active_mtu);	/* 1500 - RoCEv2 headers */
	EXPECT_EQ(SOFTCM_GID_TABLE_LEN, a.gid_tbl_len);
	EXPECT_EQ(1, a.pkey_tbl_len);
	EXPECT_EQ(2, a.link_layer);		/* ETHERNET */
	EXPECT_EQ((1u << 16) | (1u << 26), a.port_cap_flags);	/* CM, IP GIDs */
	EXPECT_EQ(1u << 31, a.max_msg_sz);
	EXPECT_EQ(1, a.active_width);
	EXPECT_EQ(1, a.active_speed);

	/* The MTU follows the largest running device. */
	ASSERT_EQ(0, link_change(self->ns, "va", -1, 9000, false));
	ASSERT_EQ(0, link_change(self->ns, "vb", -1, 9000, false));
	ASSERT_EQ(0, query_port(self->fd, 1, &a));
	EXPECT_EQ(MTU_4096, a.active_mtu);
	ASSERT_EQ(0, link_change(self->ns, "va", -1, 2200, false));
	ASSERT_EQ(0, link_change(self->ns, "vb", -1, 2200, false));
	ASSERT_EQ(0, query_port(self->fd, 1, &a));
	EXPECT_EQ(4, a.active_mtu);		/* 2048 */

	EXPECT_EQ(-EINVAL, query_port(self->fd, 0, &a));
	EXPECT_EQ(-EINVAL, query_port(self->fd, 2, &a));
	c.reserved0[3] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_QUERY_PORT, &c));
	EXPECT_EQ(EINVAL, errno);
}

/* Poll until the port's state is @state: 0, or -ETIME. */
static int port_wait(int fd, __u8 state, struct softcm_port_attr *a)
{
	long deadline = topo_now_ms() + GID_WAIT_MS;

	for (;;) {
		if (query_port(fd, 1, a))
			return -EIO;
		if (a->state == state)
			return 0;
		if (topo_now_ms() > deadline)
			return -ETIME;
		usleep(2000);
	}
}

/*
 * DOWN without an address on a running device with carrier, ACTIVE once
 * there is one; a veth has carrier while its peer is up.
 */
TEST_F(verbs, port_state_follows_addresses)
{
	static struct softcm_port_attr a;	/* static: -Wclobbered and setjmp */

	ASSERT_EQ(0, link_down(self->ns, "va"));
	ASSERT_EQ(0, link_down(self->ns, "lo"));
	EXPECT_EQ(0, port_wait(self->fd, PORT_DOWN, &a));
	EXPECT_EQ(3, a.phys_state);		/* DISABLED */
	EXPECT_EQ(MTU_1024, a.active_mtu);	/* no running device */

	/* vb has no address: its being up is not enough */
	ASSERT_EQ(0, link_up(self->ns, "va"));
	ASSERT_EQ(0, link_down(self->ns, "vb"));
	EXPECT_EQ(0, port_wait(self->fd, PORT_DOWN, &a));
	ASSERT_EQ(0, link_up(self->ns, "vb"));
	EXPECT_EQ(0, port_wait(self->fd, PORT_ACTIVE, &a));
	EXPECT_EQ(5, a.phys_state);		/* LINK_UP */
}

TEST_F(verbs, gid_table_holds_the_addresses)
{
	struct softcm_query_gid g;
	struct in6_addr a;
	int n, lo = if_nametoindex("lo");

	/* every address of the namespace, and nothing else */
	EXPECT_EQ(0, missing_addresses(self->fd, &n));
	EXPECT_EQ(n, gid_used(self->fd));
	EXPECT_EQ(5, n);	/* lo's two, va's three */

	mapped4("10.9.0.1", &a);
	EXPECT_LE(0, gid_index(self->fd, &a, self->va));
	addr6("fd09::1", &a);
	EXPECT_LE(0, gid_index(self->fd, &a, self->va));
	addr6("fe80::9", &a);		/* link-local too */
	EXPECT_LE(0, gid_index(self->fd, &a, self->va));
	mapped4("127.0.0.1", &a);
	EXPECT_LE(0, gid_index(self->fd, &a, lo));
	addr6("::1", &a);
	EXPECT_LE(0, gid_index(self->fd, &a, lo));

	/* an empty slot: zeros; beyond the table or another port: EINVAL */
	ASSERT_EQ(0, query_gid(self->fd, SOFTCM_GID_TABLE_LEN - 1, &g));
	EXPECT_EQ(SOFTCM_GID_TYPE_NONE, g.gid_type);
	EXPECT_EQ(0, g.ifindex);
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(0, memcmp(g.gid, &a, 16));
	EXPECT_EQ(-EINVAL, query_gid(self->fd, SOFTCM_GID_TABLE_LEN, &g));
	EXPECT_EQ(-EINVAL, query_gid(self->fd, ~0u, &g));
	g.port_num = 2;
	g.index = 0;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_QUERY_GID, &g));
	EXPECT_EQ(EINVAL, errno);
}

/* Entries come and go with their addresses, and keep their index meanwhile. */
TEST_F(verbs, gid_table_follows_addresses)
{
	struct in6_addr a7, a8, a9, b6;
	int i7, i8, i6, n;

	mapped4("10.9.0.7", &a7);
	mapped4("10.9.0.8", &a8);
	mapped4("10.9.0.9", &a9);
	addr6("fd09::6", &b6);

	ASSERT_EQ(0, addr_add(self->ns, "va", "10.9.0.7/24", false, false));
	i7 = gid_wait(self->fd, &a7, self->va, true);
	ASSERT_LE(0, i7);
	ASSERT_EQ(0, addr_add(self->ns, "va", "10.9.0.8/24", false, false));
	ASSERT_EQ(0, addr_add(self->ns, "va", "fd09::6/64", true, false));
	i8 = gid_wait(self->fd, &a8, self->va, true);
	i6 = gid_wait(self->fd, &b6, self->va, true);
	ASSERT_LE(0, i8);
	ASSERT_LE(0, i6);

	ASSERT_EQ(0, addr_del(self->ns, "va", "10.9.0.7/24"));
	EXPECT_EQ(0, gid_wait(self->fd, &a7, self->va, false));
	EXPECT_EQ(i8, gid_index(self->fd, &a8, self->va));
	EXPECT_EQ(i6, gid_index(self->fd, &b6, self->va));
	/* the freed slot is the first free one: the next address gets it */
	ASSERT_EQ(0, addr_add(self->ns, "va", "10.9.0.9/24", false, false));
	EXPECT_EQ(i7, gid_wait(self->fd, &a9, self->va, true));

	ASSERT_EQ(0, addr_del(self->ns, "va", "fd09::6/64"));
	EXPECT_EQ(0, gid_wait(self->fd, &b6, self->va, false));
	/* A device's removal takes its addresses. */
	ASSERT_EQ(0, link_change(self->ns, "va", -1, 0, true));
	EXPECT_EQ(0, gid_wait(self->fd, &a8, self->va, false));
	EXPECT_EQ(0, missing_addresses(self->fd, &n));
	EXPECT_EQ(n, gid_used(self->fd));
}

/* A full table drops what does not fit, counts it, and takes the next after a removal. */
TEST_F(verbs, gid_table_full)
{
	char cmd[256];
	struct in6_addr a;
	long long full0;
	FILE *p;
	int used, n = SOFTCM_GID_TABLE_LEN + 4;

	full0 = stats_get(self->stats, "gid_table_full");
	ASSERT_NE(STATS_MISSING, full0);
	used = gid_used(self->fd);
	p = popen("ip -batch -", "w");
	ASSERT_NE(NULL, p);
	for (int i = 0; i < n; i++)
		fprintf(p, "addr add 10.10.%d.%d/32 dev vb\n", i / 200, 1 + i % 200);
	ASSERT_EQ(0, pclose(p));

	EXPECT_EQ(0, stats_wait_eq(self->stats, "gid_table_full", full0 + used + n -
				   SOFTCM_GID_TABLE_LEN, GID_WAIT_MS));
	EXPECT_EQ(SOFTCM_GID_TABLE_LEN, gid_used(self->fd));
	/* the last ones were dropped */
	snprintf(cmd, sizeof(cmd), "10.10.%d.%d", (n - 1) / 200, 1 + (n - 1) % 200);
	mapped4(cmd, &a);
	EXPECT_EQ(-1, gid_index(self->fd, &a, if_nametoindex("vb")));

	ASSERT_EQ(0, addr_del(self->ns, "vb", "10.10.0.1/32"));
	ASSERT_EQ(0, addr_add(self->ns, "vb", "10.11.0.1/32", false, false));
	mapped4("10.11.0.1", &a);
	EXPECT_LE(0, gid_wait(self->fd, &a, if_nametoindex("vb"), true));

	/* A left-out address gets a freed slot when its device comes up. */
	ASSERT_EQ(0, addr_del(self->ns, "vb", "10.10.0.2/32"));
	EXPECT_EQ(SOFTCM_GID_TABLE_LEN - 1, gid_used(self->fd));
	ASSERT_EQ(0, link_down(self->ns, "vb"));
	ASSERT_EQ(0, link_up(self->ns, "vb"));
	EXPECT_EQ(SOFTCM_GID_TABLE_LEN, gid_used(self->fd));
}

/*
 * A namespace that has its addresses when the module loads finds them in
 * its table at once (the other tests make theirs after the load).
 */
TEST(gid_table_filled_at_load)
{
	int fd, n;

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, setup_links());
	ASSERT_EQ(0, softcm_ensure_unloaded());
	ASSERT_EQ(0, softcm_load(NULL));
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, missing_addresses(fd, &n));
	EXPECT_EQ(5, n);
	EXPECT_EQ(n, gid_used(fd));
	close(fd);
}

TEST_F(verbs, pd_alloc_dealloc)
{
	struct softcm_destroy_obj d = { .handle = self->pd, .reserved0 = 1 };
	struct softcm_alloc_pd c = { .reserved0 = 1 };
	__u32 a, b;

	ASSERT_EQ(0, alloc_pd(self->fd, &a));
	ASSERT_EQ(0, alloc_pd(self->fd, &b));
	EXPECT_NE(a, b);
	EXPECT_NE(0, a);
	EXPECT_EQ(3, stats_get(self->stats, "uobjs"));
	EXPECT_EQ(0, dealloc_pd(self->fd, a));
	EXPECT_EQ(-ENOENT, dealloc_pd(self->fd, a));	/* stale */
	EXPECT_EQ(0, dealloc_pd(self->fd, b));
	EXPECT_EQ(1, stats_get(self->stats, "uobjs"));

	/* reserved members must be zero */
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_ALLOC_PD, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_DEALLOC_PD, &d));
	EXPECT_EQ(EINVAL, errno);
}

/* What is created in a PD keeps it: DEALLOC_PD is EBUSY until it is gone. */
TEST_F(verbs, pd_busy_while_used)
{
	struct softcm_reg_mr mr;
	struct in6_addr a;
	void *buf = map_pages(1, PROT_READ | PROT_WRITE);
	__u32 ah;
	int sgid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf, 64, ACCESS_LOCAL_WRITE, &mr));
	EXPECT_EQ(-EBUSY, dealloc_pd(self->fd, self->pd));
	EXPECT_EQ(0, dereg_mr(self->fd, mr.handle));

	mapped4("10.9.0.1", &a);
	sgid = gid_index(self->fd, &a, self->va);
	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, create_ah(self->fd, self->pd, sgid, &ah));
	EXPECT_EQ(-EBUSY, dealloc_pd(self->fd, self->pd));
	EXPECT_EQ(0, destroy_ah(self->fd, ah));

	EXPECT_EQ(0, dealloc_pd(self->fd, self->pd));
	EXPECT_EQ(-ENOENT, reg_mr(self->fd, self->pd, buf, 64, 0, &mr));
}

/* Handles: zero, never given, another file's, stale, of another type: ENOENT. */
TEST_F(verbs, bad_handles)
{
	struct softcm_reg_mr mr, scratch;
	void *buf = map_pages(1, PROT_READ | PROT_WRITE);
	__u32 other_pd, pd2, ah;
	struct in6_addr a;
	int fd2, sgid;

	ASSERT_NE(NULL, buf);
	mapped4("10.9.0.1", &a);
	sgid = gid_index(self->fd, &a, self->va);
	ASSERT_LE(0, sgid);
	EXPECT_EQ(-ENOENT, dealloc_pd(self->fd, 0));
	EXPECT_EQ(-ENOENT, dealloc_pd(self->fd, 12345));
	EXPECT_EQ(-ENOENT, dereg_mr(self->fd, 0));
	EXPECT_EQ(-ENOENT, destroy_ah(self->fd, 77));
	EXPECT_EQ(-ENOENT, reg_mr(self->fd, 0, buf, 64, 0, &mr));

	/* another file's PD, with a handle that does not exist here */
	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, alloc_pd(fd2, &pd2));
	ASSERT_EQ(0, alloc_pd(fd2, &other_pd));
	EXPECT_EQ(-ENOENT, reg_mr(self->fd, other_pd, buf, 64, 0, &mr));
	EXPECT_EQ(-ENOENT, create_ah(self->fd, other_pd, sgid, &ah));
	EXPECT_EQ(-ENOENT, dealloc_pd(self->fd, other_pd));
	EXPECT_EQ(0, dealloc_pd(fd2, other_pd));

	/* another type */
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf, 64, 0, &mr));
	EXPECT_EQ(-ENOENT, dealloc_pd(self->fd, mr.handle));
	EXPECT_EQ(-ENOENT, destroy_ah(self->fd, mr.handle));
	EXPECT_EQ(-ENOENT, dereg_mr(self->fd, self->pd));
	EXPECT_EQ(-ENOENT, reg_mr(self->fd, mr.handle, buf, 64, 0, &scratch));
	/* and the other file cannot destroy ours */
	EXPECT_EQ(-ENOENT, dereg_mr(fd2, mr.handle));
	EXPECT_EQ(0, dereg_mr(self->fd, mr.handle));
	EXPECT_EQ(-ENOENT, dereg_mr(self->fd, mr.handle));	/* stale */
	close(fd2);
}

TEST_F(verbs, mr_reg_dereg)
{
	long page = getpagesize(), pin0 = vm_pin_kb();
	struct softcm_reg_mr m1, m2, m3;
	char *buf = map_pages(4, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, buf);
	ASSERT_LE(0, pin0);
	/* an unaligned range covers every page it touches: 3 of them */
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf + 100, 2 * page,
			    ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ, &m1));
	EXPECT_EQ(pin0 + 3 * page / 1024, vm_pin_kb());
	EXPECT_NE(0, m1.handle);
	EXPECT_NE(m1.lkey, m1.rkey);
	/* the same memory again, read-only; and with only a hint */
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf, 4 * page, 0, &m2));
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf, page,
			    ACCESS_LOCAL_WRITE | ACCESS_RELAXED_ORDERING, &m3));
	EXPECT_EQ(pin0 + 8 * page / 1024, vm_pin_kb());
	EXPECT_EQ(4, stats_get(self->stats, "uobjs"));
	/* every key differs from every other */
	EXPECT_NE(m1.lkey, m2.lkey);
	EXPECT_NE(m1.rkey, m2.rkey);
	EXPECT_NE(m1.lkey, m2.rkey);
	EXPECT_NE(m1.rkey, m2.lkey);
	EXPECT_NE(m2.lkey, m2.rkey);
	EXPECT_NE(m3.lkey, m1.lkey);
	EXPECT_NE(m3.rkey, m2.rkey);

	EXPECT_EQ(0, dereg_mr(self->fd, m1.handle));
	EXPECT_EQ(pin0 + 5 * page / 1024, vm_pin_kb());
	EXPECT_EQ(0, dereg_mr(self->fd, m2.handle));
	EXPECT_EQ(0, dereg_mr(self->fd, m3.handle));
	EXPECT_EQ(pin0, vm_pin_kb());
	EXPECT_EQ(-ENOENT, dereg_mr(self->fd, m1.handle));
	EXPECT_EQ(1, stats_get(self->stats, "uobjs"));
}

TEST_F(verbs, mr_access_flags)
{
	struct softcm_reg_mr mr;
	char *buf = map_pages(1, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, buf);
	/* a peer may not write what we may not */
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, buf, 64, ACCESS_REMOTE_WRITE, &mr));
	/* REMOTE_ATOMIC as ib_check_mr_access(): only with LOCAL_WRITE */
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, buf, 64, ACCESS_REMOTE_ATOMIC, &mr));
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf, 64,
			    ACCESS_LOCAL_WRITE | ACCESS_REMOTE_ATOMIC, &mr));
	EXPECT_EQ(0, dereg_mr(self->fd, mr.handle));
	/* not supported */
	EXPECT_EQ(-EOPNOTSUPP, reg_mr(self->fd, self->pd, buf, 64, ACCESS_MW_BIND, &mr));
	EXPECT_EQ(-EOPNOTSUPP, reg_mr(self->fd, self->pd, buf, 64, ACCESS_ZERO_BASED, &mr));
	EXPECT_EQ(-EOPNOTSUPP, reg_mr(self->fd, self->pd, buf, 64, ACCESS_ON_DEMAND, &mr));
	/* unknown bits */
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, buf, 64, 1u << 8, &mr));
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, buf, 64, 1u << 31, &mr));
	EXPECT_EQ(1, stats_get(self->stats, "uobjs"));
}

TEST_F(verbs, mr_bad_range)
{
	long page = getpagesize(), pin0 = vm_pin_kb();
	struct softcm_reg_mr mr;
	char *buf = map_pages(2, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, buf, 0, 0, &mr));
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, buf, (1ull << 32) + 1, 0, &mr));
	EXPECT_EQ(-EINVAL, reg_mr(self->fd, self->pd, (void *)-4096L, 8192, 0, &mr));
	/* iova and address must share their offset in the page */
	memset(&mr, 0, sizeof(mr));
	mr.addr = (__u64)(uintptr_t)buf;
	mr.iova = mr.addr + 8;
	mr.length = 64;
	mr.pd_handle = self->pd;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_REG_MR, &mr));
	EXPECT_EQ(EINVAL, errno);
	/* iova wrapping around */
	mr.iova = ~0ull & ~(__u64)(page - 1);
	mr.length = page + 64;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_REG_MR, &mr));
	EXPECT_EQ(EINVAL, errno);
	mr.iova = mr.addr;
	mr.length = 64;
	mr.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_REG_MR, &mr));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(pin0, vm_pin_kb());
}

/* Memory that is not there, or not writable for a writable MR: EFAULT. */
TEST_F(verbs, mr_unmapped_memory)
{
	long page = getpagesize(), pin0 = vm_pin_kb();
	struct softcm_reg_mr mr;
	char *buf = map_pages(4, PROT_READ | PROT_WRITE);
	char *ro = map_pages(2, PROT_READ);

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ro);
	ASSERT_EQ(0, munmap(buf + 2 * page, 2 * page));
	/* the last two pages are gone: nothing stays pinned or charged */
	EXPECT_EQ(-EFAULT, reg_mr(self->fd, self->pd, buf, 4 * page, 0, &mr));
	EXPECT_EQ(pin0, vm_pin_kb());
	ASSERT_EQ(0, munmap(buf, 2 * page));
	EXPECT_EQ(-EFAULT, reg_mr(self->fd, self->pd, buf, page, 0, &mr));

	/* read-only memory: a read-only MR, but no writable one */
	EXPECT_EQ(-EFAULT, reg_mr(self->fd, self->pd, ro, 2 * page, ACCESS_LOCAL_WRITE, &mr));
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, ro, 2 * page, ACCESS_REMOTE_READ, &mr));
	EXPECT_EQ(0, dereg_mr(self->fd, mr.handle));
	EXPECT_EQ(pin0, vm_pin_kb());
	EXPECT_EQ(1, stats_get(self->stats, "uobjs"));
}

/* The page frame behind @p (/proc/self/pagemap, root only), 0 if none. */
static __u64 pfn_of(const void *p)
{
	__u64 e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)p / getpagesize() * sizeof(e)) != sizeof(e))
		e = 0;
	close(fd);
	return (e >> 63) ? (e & ((1ull << 55) - 1)) : 0;
}

/*
 * A read-only MR over memory not yet written holds the page the program
 * then writes, not the zero page it would have read: a peer's RDMA READ
 * must see what the program wrote after registering.
 */
TEST_F(verbs, mr_read_only_pins_the_written_page)
{
	long page = getpagesize();
	struct softcm_reg_mr mr;
	char *buf = map_pages(2, PROT_READ | PROT_WRITE);
	volatile char c = buf[page];	/* the zero page, read */
	__u64 pfn;

	(void)c;
	ASSERT_EQ(0, reg_mr(self->fd, self->pd, buf, 2 * page, ACCESS_REMOTE_READ, &mr));
	pfn = pfn_of(buf + page);
	ASSERT_NE(0, pfn);
	ASSERT_NE(0, pfn_of(buf));
	memset(buf, 7, 2 * page);
	EXPECT_EQ(pfn, pfn_of(buf + page));
	EXPECT_EQ(0, dereg_mr(self->fd, mr.handle));
}

static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &hdr, data);
}

/*
 * In a child with RLIMIT_MEMLOCK of 16 pages: an exit code saying which
 * step failed, 0 when all behaved.  Without CAP_IPC_LOCK the limit holds,
 * and DEREG_MR gives the budget back at once; with it, it does not apply.
 */
static int memlock_child(bool drop)
{
	struct rlimit rl = { 16 * getpagesize(), 16 * getpagesize() };
	long page = getpagesize();
	struct softcm_reg_mr a, b;
	char *buf = map_pages(32, PROT_READ | PROT_WRITE);
	__u32 pd;
	int fd;

	if (!buf || (drop && drop_ipc_lock()) || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 10;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || alloc_pd(fd, &pd))
		return 11;
	if (reg_mr(fd, pd, buf, 8 * page, ACCESS_LOCAL_WRITE, &a))
		return 12;
	if (!drop)
		return reg_mr(fd, pd, buf, 32 * page, ACCESS_LOCAL_WRITE, &b) ? 13 : 0;
	if (reg_mr(fd, pd, buf + 8 * page, 16 * page, ACCESS_LOCAL_WRITE, &b) != -ENOMEM)
		return 14;
	if (dereg_mr(fd, a.handle))
		return 15;
	if (reg_mr(fd, pd, buf + 8 * page, 16 * page, ACCESS_LOCAL_WRITE, &b))
		return 16;
	/* one page more than the limit, in one MR */
	if (dereg_mr(fd, b.handle) ||
	    reg_mr(fd, pd, buf, 17 * page, ACCESS_LOCAL_WRITE, &b) != -ENOMEM)
		return 17;
	return 0;
}

TEST_F(verbs, mr_memlock_limit)
{
	int status;
	pid_t pid;

	for (int drop = 1; drop >= 0; drop--) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(memlock_child(drop));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("without CAP_IPC_LOCK: %d", drop);
	}
}

/*
 * RLIMIT_MEMLOCK holds for a user, not for each of its processes (review
 * 2026-11-28, MEDIUM 1): as an unprivileged user with a limit of 16
 * pages, children that register 12 pages each on the one inherited
 * descriptor and exit get the pages of one child, not one child's worth
 * each.  Exit codes: 0 registered, 1 ENOMEM, 2 anything else.
 */
static int memlock_fork_child(int fd, __u32 pd, char *buf, long page)
{
	struct softcm_reg_mr mr;
	int ret = reg_mr(fd, pd, buf, 12 * page, ACCESS_LOCAL_WRITE, &mr);

	return !ret ? 0 : ret == -ENOMEM ? 1 : 2;
}

/* Run as the unprivileged user: 0, or the step that failed. */
static int memlock_fork_user(void)
{
	struct rlimit rl = { 16 * getpagesize(), 16 * getpagesize() };
	long page = getpagesize();
	char *buf = map_pages(12, PROT_READ | PROT_WRITE);
	int fd, st, got = 0, refused = 0;
	struct softcm_reg_mr mr;
	__u32 pd;
	pid_t pid;

	if (!buf || setrlimit(RLIMIT_MEMLOCK, &rl) ||
	    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 20;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || alloc_pd(fd, &pd))
		return 21;
	for (int i = 0; i < 4; i++) {
		pid = fork();
		if (pid < 0)
			return 22;
		if (!pid)
			_exit(memlock_fork_child(fd, pd, buf, page));
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 1)
			return 23;
		if (WEXITSTATUS(st))
			refused++;
		else
			got++;
	}
	if (got != 1 || refused != 3)
		return 24;
	/* the parent's own budget is the same one */
	if (reg_mr(fd, pd, buf, 12 * page, ACCESS_LOCAL_WRITE, &mr) != -ENOMEM)
		return 25;
	/* closed, the file's MRs are unpinned and uncharged (right after) */
	close(fd);
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || alloc_pd(fd, &pd))
		return 26;
	for (int i = 0; reg_mr(fd, pd, buf, 12 * page, ACCESS_LOCAL_WRITE, &mr); i++) {
		if (i > 1000)
			return 27;
		usleep(10000);
	}
	/* and DEREG_MR gives it back before it returns */
	if (dereg_mr(fd, mr.handle) ||
	    reg_mr(fd, pd, buf, 12 * page, ACCESS_LOCAL_WRITE, &mr))
		return 28;
	close(fd);
	return 0;
}

TEST_F(verbs, mr_memlock_per_user_across_fork)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_fork_user());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A command whose reply cannot be copied out undoes the object it made,
 * and only that one (review 2026-11-28 #7), for each type a file makes:
 * the reply of an ALLOC_PD, CREATE_CQ, REG_MR or CREATE_QP stalls in a
 * userfaultfd write-protect fault; meanwhile the new object cannot be
 * named by its handle (destroyed, and another of its type created in
 * its place) by another thread of the file; then the reply faults, and
 * the undo leaves that other thread's object alone and takes everything
 * of its own: the file holds what it held before, and closing it (the
 * fixture) leaves nothing.  The CQ's and QP's undo unmaps rings never
 * mapped, the QP's frees a QP number, the MR's unpins its page: on the
 * debug kernel KASAN and kmemleak watch those.
 */
struct stalled_create {
	int fd;
	unsigned long cmd;
	void *arg;
	int ret;
};

static void *stalled_create(void *p)
{
	struct stalled_create *a = p;

	a->ret = ioctl(a->fd, a->cmd, a->arg) ? -errno : 0;
	return NULL;
}

enum { UNDO_PD, UNDO_CQ, UNDO_MR, UNDO_QP, UNDO_TYPES };

/* The command and arguments that make one object of @type; its size. */
static size_t undo_args(int type, __u32 pd, __u32 cq, const void *mem, void *arg,
			unsigned long *cmd)
{
	long page = getpagesize();

	switch (type) {
	case UNDO_PD:
		*cmd = SOFTCM_IOCTL_ALLOC_PD;
		memset(arg, 0, sizeof(struct softcm_alloc_pd));
		return sizeof(struct softcm_alloc_pd);
	case UNDO_CQ:
		*cmd = SOFTCM_IOCTL_CREATE_CQ;
		*(struct softcm_create_cq *)arg = (struct softcm_create_cq){
			.cqe = 16, .channel_fd = -1 };
		return sizeof(struct softcm_create_cq);
	case UNDO_MR:
		*cmd = SOFTCM_IOCTL_REG_MR;
		*(struct softcm_reg_mr *)arg = (struct softcm_reg_mr){
			.addr = (uintptr_t)mem, .iova = (uintptr_t)mem, .length = page,
			.pd_handle = pd, .access = ACCESS_LOCAL_WRITE };
		return sizeof(struct softcm_reg_mr);
	default:
		*cmd = SOFTCM_IOCTL_CREATE_QP;
		*(struct softcm_create_qp *)arg = (struct softcm_create_qp){
			.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
			.qp_type = QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		return sizeof(struct softcm_create_qp);
	}
}

/* The handle a reply of @type's command gives. */
static __u32 undo_handle(int type, const void *arg)
{
	switch (type) {
	case UNDO_PD:
		return ((const struct softcm_alloc_pd *)arg)->handle;
	case UNDO_CQ:
		return ((const struct softcm_create_cq *)arg)->handle;
	case UNDO_MR:
		return ((const struct softcm_reg_mr *)arg)->handle;
	default:
		return ((const struct softcm_create_qp *)arg)->handle;
	}
}

static int undo_destroy(int fd, int type, __u32 h)
{
	switch (type) {
	case UNDO_PD:
		return dealloc_pd(fd, h);
	case UNDO_CQ:
		return destroy_cq(fd, h, NULL, NULL);
	case UNDO_MR:
		return dereg_mr(fd, h);
	default:
		return destroy_qp(fd, h, NULL);
	}
}

/* One object of @type, made the plain way: its handle, or -errno. */
static long undo_make(int fd, int type, __u32 pd, __u32 cq, const void *mem)
{
	union {
		struct softcm_alloc_pd pd;
		struct softcm_create_cq cq;
		struct softcm_reg_mr mr;
		struct softcm_create_qp qp;
	} arg;
	unsigned long cmd;

	undo_args(type, pd, cq, mem, &arg, &cmd);
	if (ioctl(fd, cmd, &arg))
		return -errno;
	return undo_handle(type, &arg);
}

TEST_F(verbs, undo_removes_only_its_object)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	long page = getpagesize();
	__u32 cq, next, mine;
	long long uobjs;
	char *buf, *mem;
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "no userfaultfd in this kernel (%s)", strerror(errno));
	ASSERT_LE(0, uffd);
	if (ioctl(uffd, UFFDIO_API, &api))
		SKIP(close(uffd); return, "no write-protect userfaultfd (%s)", strerror(errno));
	close(uffd);
	mem = map_pages(1, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, mem);
	memset(mem, 0x5a, page);
	ASSERT_EQ(0, create_cq(self->fd, 16, -1, 0, &cq));
	uobjs = stats_get(self->stats, "uobjs");

	for (int type = 0; type < UNDO_TYPES; type++) {
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
		struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
		struct stalled_create a = { .fd = self->fd, .ret = 1 };
		struct uffdio_range wake;
		struct uffd_msg msg;
		struct pollfd pfd;
		long made;
		pthread_t t;

		uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
		ASSERT_LE(0, uffd);
		/* asked anew: UFFDIO_API wrote every feature it has into api */
		api = (struct uffdio_api){ .api = UFFD_API,
					   .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
		ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
		buf = map_pages(1, PROT_READ | PROT_WRITE);
		ASSERT_NE(NULL, buf);
		undo_args(type, self->pd, cq, mem, buf, &a.cmd);
		a.arg = buf;
		reg.range.start = (unsigned long)buf;
		reg.range.len = page;
		ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
		wp.range = reg.range;
		ASSERT_EQ(0, ioctl(uffd, UFFDIO_WRITEPROTECT, &wp));

		/* the next object's handle is the lowest free */
		made = undo_make(self->fd, type, self->pd, cq, mem);
		ASSERT_LT(0, made) TH_LOG("type %d", type);
		next = made;
		ASSERT_EQ(0, undo_destroy(self->fd, type, next));
		ASSERT_EQ(0, pthread_create(&t, NULL, stalled_create, &a));
		pfd.fd = uffd;
		pfd.events = POLLIN;
		ASSERT_EQ(1, poll(&pfd, 1, 20000 << softcm_slow_shift())) TH_LOG("type %d", type);
		ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
		ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
		EXPECT_TRUE(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP);

		/* the stalled object has handle next, which names nothing yet */
		EXPECT_EQ(-ENOENT, undo_destroy(self->fd, type, next)) TH_LOG("type %d", type);
		made = undo_make(self->fd, type, self->pd, cq, mem);
		ASSERT_LT(0, made) TH_LOG("type %d", type);
		mine = made;
		EXPECT_NE(next, mine);

		/* the reply faults: the page is read-only when the copy retries */
		ASSERT_EQ(0, mprotect(buf, page, PROT_READ));
		wake.start = (unsigned long)buf;
		wake.len = page;
		ASSERT_EQ(0, ioctl(uffd, UFFDIO_WAKE, &wake));
		pthread_join(t, NULL);
		EXPECT_EQ(-EFAULT, a.ret) TH_LOG("type %d", type);
		/* ours is intact, the stalled one is gone */
		EXPECT_EQ(0, undo_destroy(self->fd, type, mine)) TH_LOG("type %d", type);
		EXPECT_EQ(-ENOENT, undo_destroy(self->fd, type, next)) TH_LOG("type %d", type);
		EXPECT_EQ(uobjs, stats_get(self->stats, "uobjs")) TH_LOG("type %d", type);
		close(uffd);
		munmap(buf, page);
	}
	EXPECT_EQ(0, destroy_cq(self->fd, cq, NULL, NULL));
	munmap(mem, page);
}

TEST_F(verbs, ah_create_destroy)
{
	struct softcm_create_ah c;
	struct softcm_query_gid g;
	struct in6_addr a;
	__u32 ah, ah2, scratch;
	int sgid, empty = -1;

	mapped4("10.9.0.1", &a);
	sgid = gid_index(self->fd, &a, self->va);
	ASSERT_LE(0, sgid);
	for (int i = SOFTCM_GID_TABLE_LEN - 1; i >= 0 && empty < 0; i--)
		if (!query_gid(self->fd, i, &g) && g.gid_type == SOFTCM_GID_TYPE_NONE)
			empty = i;
	ASSERT_LE(0, empty);

	ASSERT_EQ(0, create_ah(self->fd, self->pd, sgid, &ah));
	ASSERT_EQ(0, create_ah(self->fd, self->pd, sgid, &ah2));
	EXPECT_NE(ah, ah2);
	EXPECT_EQ(3, stats_get(self->stats, "uobjs"));
	EXPECT_EQ(-EINVAL, create_ah(self->fd, self->pd, empty, &scratch));
	EXPECT_EQ(-EINVAL, create_ah(self->fd, self->pd, 200, &scratch));

	memset(&c, 0, sizeof(c));
	c.pd_handle = self->pd;
	c.attr.sgid_index = sgid;
	c.attr.port_num = 1;
	c.attr.is_global = 1;
	/* a destination of another family than the source GID's, or none */
	inet_pton(AF_INET6, "fd00::2", c.attr.dgid);
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);
	memset(c.attr.dgid, 0, sizeof(c.attr.dgid));
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);
	mapped4("10.9.0.2", (struct in6_addr *)c.attr.dgid);
	c.attr.is_global = 0;		/* RoCE has no LIDs */
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);
	c.attr.is_global = 1;
	c.attr.port_num = 2;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);
	c.attr.port_num = 1;
	c.attr.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);
	/* fields wider than the headers they go into, as for a QP's path */
	c.attr.reserved0 = 0;
	c.attr.flow_label = 0x100000;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);
	c.attr.flow_label = 0;
	c.attr.sl = 16;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_AH, &c));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(0, destroy_ah(self->fd, ah));
	EXPECT_EQ(-ENOENT, destroy_ah(self->fd, ah));
	EXPECT_EQ(0, destroy_ah(self->fd, ah2));
	EXPECT_EQ(1, stats_get(self->stats, "uobjs"));
}

/* A file's limit of PDs (max_pd): one more is ENOMEM, and close frees them all. */
TEST_F(verbs, pd_limit_per_file)
{
	struct softcm_device_attr attr;
	__u32 h;
	int fd2;

	ASSERT_EQ(0, query_device(self->fd, &attr));
	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	for (__u32 i = 0; i < attr.max_pd; i++) {
		ASSERT_EQ(0, alloc_pd(fd2, &h)) {
			TH_LOG("PD %u", i);
		}
	}
	EXPECT_EQ(-ENOMEM, alloc_pd(fd2, &h));
	/* the limit is the file's, not the namespace's */
	ASSERT_EQ(0, alloc_pd(self->fd, &h));
	close(fd2);
	EXPECT_EQ(0, stats_wait_eq(self->stats, "uobjs", 2, STATS_IDLE_MS));
}

/* Closing a file destroys its objects, unpins its pages and frees its keys. */
TEST_F(verbs, close_frees_everything)
{
	long page = getpagesize(), pin0 = vm_pin_kb();
	struct softcm_reg_mr mr;
	char *buf = map_pages(64, PROT_READ | PROT_WRITE);
	struct in6_addr a;
	__u32 pd, ah;
	int fd2, sgid;

	ASSERT_NE(NULL, buf);
	mapped4("10.9.0.1", &a);
	sgid = gid_index(self->fd, &a, self->va);
	ASSERT_LE(0, sgid);
	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, alloc_pd(fd2, &pd));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, reg_mr(fd2, pd, buf + i * 16 * page, 16 * page,
				    ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ, &mr));
	ASSERT_EQ(0, create_ah(fd2, pd, sgid, &ah));
	ASSERT_EQ(0, create_ah(fd2, pd, sgid, &ah));
	EXPECT_EQ(pin0 + 64 * page / 1024, vm_pin_kb());
	EXPECT_EQ(8, stats_get(self->stats, "uobjs"));
	close(fd2);
	EXPECT_EQ(0, stats_wait_eq(self->stats, "uobjs", 1, STATS_IDLE_MS));
	/* unpinned and uncharged together, right after the close */
	for (long deadline = topo_now_ms() + STATS_IDLE_MS;
	     vm_pin_kb() != pin0 && topo_now_ms() < deadline;)
		usleep(5000);
	EXPECT_EQ(pin0, vm_pin_kb());
	/* the memory is ours again, and writable */
	memset(buf, 1, 64 * page);
}

TEST_HARNESS_MAIN
