// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl ABI of /dev/softcm: every command, each malformed input with its
 * documented errno, bind and port rules, listen and its backlog, the
 * getpeername-style queries, options, id limits, migration and the event
 * queue's read/poll contract.
 */
#include <arpa/inet.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

static int bind_sa(int fd, __u32 handle, const void *sa, size_t len)
{
	struct softcm_bind c = { .handle = handle, .addr_len = len };

	memcpy(c.addr, sa, len < sizeof(c.addr) ? len : sizeof(c.addr));
	return ioctl(fd, SOFTCM_IOCTL_BIND, &c) ? -errno : 0;
}

static int bind4(int fd, __u32 handle, const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return bind_sa(fd, handle, &sin, sizeof(sin));
}

static int bind6(int fd, __u32 handle, const char *ip, int port, int scope)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_scope_id = scope,
	};

	inet_pton(AF_INET6, ip, &sin6.sin6_addr);
	return bind_sa(fd, handle, &sin6, sizeof(sin6));
}

static int listen_id(int fd, __u32 handle, int backlog)
{
	struct softcm_listen c = { .handle = handle, .backlog = backlog };

	return ioctl(fd, SOFTCM_IOCTL_LISTEN, &c) ? -errno : 0;
}

static int set_opt(int fd, __u32 handle, __u32 level, __u32 name, __u32 value)
{
	struct softcm_set_option c = {
		.handle = handle, .level = level, .optname = name, .value = value,
	};

	return ioctl(fd, SOFTCM_IOCTL_SET_OPTION, &c) ? -errno : 0;
}

static int local_port(int fd, __u32 handle)
{
	struct sockaddr_storage ss;
	__u32 len = sizeof(ss);

	if (query_addr(fd, handle, SOFTCM_QUERY_LOCAL, &ss, &len))
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

FIXTURE(uapi) {
	int fd;
};

FIXTURE_SETUP(uapi)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	self->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(uapi)
{
	close(self->fd);
	/*
	 * Every test but netns_has_own_ports (whose child's namespace dies
	 * with it) works in this namespace: with the files closed nothing of
	 * softcm's may be left in it.
	 */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
	write_text("/proc/sys/net/softcm/max_backlog", "1024");
	write_text("/proc/sys/net/softcm/max_ids_per_file", "65536");
}

TEST_F(uapi, create_query_destroy)
{
	struct softcm_query_id q;
	__u32 h, h2, reported = 99;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 7, &h));
	EXPECT_NE(0, h);
	ASSERT_EQ(0, query_id(self->fd, h, &q));
	EXPECT_EQ(SOFTCM_STATE_IDLE, q.state);
	EXPECT_EQ(SOFTCM_PS_TCP, q.ps);
	EXPECT_EQ(0, q.bound_ifindex);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_UDP, 8, &h2));
	EXPECT_NE(h, h2);
	ASSERT_EQ(0, query_id(self->fd, h2, &q));
	EXPECT_EQ(SOFTCM_PS_UDP, q.ps);

	EXPECT_EQ(0, destroy_id(self->fd, h, &reported));
	EXPECT_EQ(0, reported);
	EXPECT_EQ(-ENOENT, destroy_id(self->fd, h, NULL));
	EXPECT_EQ(-ENOENT, query_id(self->fd, h, &q));
	EXPECT_EQ(0, destroy_id(self->fd, h2, NULL));
}

TEST_F(uapi, create_refuses_bad_port_space_and_reserved)
{
	static const __u16 bad[] = { 0, 0x0002, 0x013F, 0xffff };
	struct softcm_create_id c = { .ps = SOFTCM_PS_TCP, .reserved0 = 1 };
	__u32 h;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, create_id(self->fd, bad[i], 0, &h)) TH_LOG("ps %#x", bad[i]);
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_ID, &c));
	EXPECT_EQ(EINVAL, errno);
}

/* Struct sizes: shorter than the first ABI's is refused, longer must be 0. */
TEST_F(uapi, struct_size_rules)
{
	struct {
		struct softcm_create_id c;
		__u64 tail;
	} big = { .c = { .ps = SOFTCM_PS_TCP } };
	unsigned long small = _IOC(_IOC_READ | _IOC_WRITE, SOFTCM_IOCTL_TYPE,
				   SOFTCM_CMD_CREATE_ID, sizeof(struct softcm_create_id) - 4);
	unsigned long longer = _IOC(_IOC_READ | _IOC_WRITE, SOFTCM_IOCTL_TYPE,
				    SOFTCM_CMD_CREATE_ID, sizeof(big));

	EXPECT_EQ(-1, ioctl(self->fd, small, &big));
	EXPECT_EQ(EINVAL, errno);

	big.tail = 1;
	EXPECT_EQ(-1, ioctl(self->fd, longer, &big));
	EXPECT_EQ(E2BIG, errno);

	big.tail = 0;
	ASSERT_EQ(0, ioctl(self->fd, longer, &big));
	EXPECT_NE(0, big.c.handle);
	EXPECT_EQ(0, big.tail);		/* the kernel writes back only its size */
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(self->fd, big.c.handle));
}

TEST_F(uapi, unknown_commands_are_enotty)
{
	struct softcm_create_id c = { .ps = SOFTCM_PS_TCP };

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(SOFTCM_IOCTL_TYPE, SOFTCM_CMD_COUNT, c), &c));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(SOFTCM_IOCTL_TYPE, 0xff, c), &c));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(0x1b, SOFTCM_CMD_CREATE_ID, c), &c));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOW(SOFTCM_IOCTL_TYPE, SOFTCM_CMD_CREATE_ID, c), &c));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(uapi, bad_pointers_are_efault)
{
	__u32 h, len;
	char *bad = (char *)1;

	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_CREATE_ID, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_BIND, bad));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind4(self->fd, h, "127.0.0.1", 0));
	len = 128;
	EXPECT_EQ(-EFAULT, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, bad, &len));
}

/* Every command on a handle this file does not own. */
TEST_F(uapi, foreign_and_unknown_handles_are_enoent)
{
	struct softcm_query_id q;
	__u32 h, mine, len = 16;
	char buf[16];
	int fd2;

	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, create_id(fd2, SOFTCM_PS_TCP, 0, &h));
	/* This file's own ids are numbered independently of fd2's. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &mine));
	if (mine == h)
		ASSERT_EQ(0, destroy_id(self->fd, mine, NULL));
	EXPECT_EQ(-ENOENT, query_id(self->fd, h, &q));
	EXPECT_EQ(-ENOENT, bind4(self->fd, h, "127.0.0.1", 0));
	EXPECT_EQ(-ENOENT, listen_id(self->fd, h, 1));
	EXPECT_EQ(-ENOENT, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, buf, &len));
	EXPECT_EQ(-ENOENT, set_opt(self->fd, h, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_TOS, 1));
	EXPECT_EQ(-ENOENT, destroy_id(self->fd, h, NULL));
	EXPECT_EQ(-ENOENT, query_id(self->fd, 0, &q));
	EXPECT_EQ(-ENOENT, query_id(self->fd, 0x7fffffff, &q));
	/* ... and fd2's id is untouched. */
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(fd2, h));
	close(fd2);
}

TEST_F(uapi, bind_ipv4)
{
	struct sockaddr_in sin;
	__u32 h, len = sizeof(sin);
	char buf[64];
	int low, high, port;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind4(self->fd, h, "0.0.0.0", 0));
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, h));
	ASSERT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, &sin, &len));
	EXPECT_EQ(sizeof(sin), len);
	EXPECT_EQ(AF_INET, sin.sin_family);
	EXPECT_EQ(htonl(INADDR_ANY), sin.sin_addr.s_addr);
	ASSERT_LT(0, read_text("/proc/sys/net/ipv4/ip_local_port_range", buf, sizeof(buf)));
	ASSERT_EQ(2, sscanf(buf, "%d %d", &low, &high));
	port = ntohs(sin.sin_port);
	EXPECT_LE(low, port);
	EXPECT_GE(high, port);
	/* Only from IDLE. */
	EXPECT_EQ(-EINVAL, bind4(self->fd, h, "127.0.0.1", 0));

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind4(self->fd, h, "127.0.0.1", 18515));
	EXPECT_EQ(18515, local_port(self->fd, h));
	/* Any address of the loopback net is local. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	EXPECT_EQ(0, bind4(self->fd, h, "127.0.0.2", 18515));
}

TEST_F(uapi, bind_refuses_bad_addresses)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr sa = { .sa_family = AF_UNIX };
	struct softcm_bind c;
	__u32 h;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	EXPECT_EQ(-EADDRNOTAVAIL, bind4(self->fd, h, "192.0.2.1", 0));
	EXPECT_EQ(-EADDRNOTAVAIL, bind4(self->fd, h, "224.0.0.1", 0));
	EXPECT_EQ(-EAFNOSUPPORT, bind_sa(self->fd, h, &sa, sizeof(sa)));
	EXPECT_EQ(-EINVAL, bind_sa(self->fd, h, &sin, sizeof(sin) - 1));
	EXPECT_EQ(-EINVAL, bind_sa(self->fd, h, &sin, 1));
	memset(&c, 0, sizeof(c));
	c.handle = h;
	c.addr_len = sizeof(c.addr) + 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_BIND, &c));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing changed. */
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(self->fd, h));
	EXPECT_EQ(0, bind4(self->fd, h, "127.0.0.1", 0));
}

TEST_F(uapi, bind_ipv6_and_link_local_scope)
{
	struct sockaddr_in6 sin6;
	struct softcm_query_id q;
	__u32 h, len = sizeof(sin6);
	char buf[16];
	int ifindex;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind6(self->fd, h, "::1", 0, 0));
	ASSERT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, &sin6, &len));
	EXPECT_EQ(sizeof(sin6), len);
	EXPECT_EQ(AF_INET6, sin6.sin6_family);
	EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&sin6.sin6_addr));

	ASSERT_EQ(0, system("ip link add sc-ll0 type veth peer name sc-ll1 && "
			    "ip link set sc-ll0 up && "
			    "ip addr add fe80::5c:1/64 dev sc-ll0 nodad"));
	ASSERT_LT(0, read_text("/sys/class/net/sc-ll0/ifindex", buf, sizeof(buf)));
	ifindex = atoi(buf);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	EXPECT_EQ(-EINVAL, bind6(self->fd, h, "fe80::5c:1", 0, 0));
	EXPECT_EQ(-ENODEV, bind6(self->fd, h, "fe80::5c:1", 0, 999999));
	EXPECT_EQ(-EADDRNOTAVAIL, bind6(self->fd, h, "fe80::5c:2", 0, ifindex));
	EXPECT_EQ(-EADDRNOTAVAIL, bind6(self->fd, h, "2001:db8::1", 0, 0));
	ASSERT_EQ(0, bind6(self->fd, h, "fe80::5c:1", 0, ifindex));
	ASSERT_EQ(0, query_id(self->fd, h, &q));
	EXPECT_EQ(ifindex, q.bound_ifindex);
	len = sizeof(sin6);
	ASSERT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, &sin6, &len));
	EXPECT_EQ(ifindex, sin6.sin6_scope_id);
	system("ip link del sc-ll0");
}

TEST_F(uapi, port_conflicts)
{
	__u32 a, b, c, d;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &a));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &b));
	ASSERT_EQ(0, bind4(self->fd, a, "127.0.0.1", 20001));
	EXPECT_EQ(-EADDRINUSE, bind4(self->fd, b, "127.0.0.1", 20001));
	EXPECT_EQ(-EADDRNOTAVAIL, bind4(self->fd, b, "0.0.0.0", 20001));
	EXPECT_EQ(0, bind4(self->fd, b, "127.0.0.2", 20001));

	/* Another port space is another table. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_UDP, 0, &c));
	EXPECT_EQ(0, bind4(self->fd, c, "127.0.0.1", 20001));

	/* The port is free again once its owners are gone. */
	ASSERT_EQ(0, destroy_id(self->fd, a, NULL));
	ASSERT_EQ(0, destroy_id(self->fd, b, NULL));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &d));
	EXPECT_EQ(0, bind4(self->fd, d, "0.0.0.0", 20001));
}

TEST_F(uapi, reuseaddr_and_afonly)
{
	__u32 a, b, v4, v6;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &a));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &b));
	ASSERT_EQ(0, set_opt(self->fd, a, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_REUSEADDR, 1));
	ASSERT_EQ(0, set_opt(self->fd, b, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_REUSEADDR, 1));
	ASSERT_EQ(0, bind4(self->fd, a, "127.0.0.1", 20002));
	EXPECT_EQ(0, bind4(self->fd, b, "127.0.0.1", 20002));
	/* A listener must own its port alone. */
	EXPECT_EQ(-EADDRINUSE, listen_id(self->fd, a, 1));
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(self->fd, a));
	ASSERT_EQ(0, destroy_id(self->fd, b, NULL));
	EXPECT_EQ(0, listen_id(self->fd, a, 1));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, a, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_REUSEADDR, 1));

	/* v4 and v6 wildcards share a port only when both are family-only. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &v4));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &v6));
	ASSERT_EQ(0, bind4(self->fd, v4, "0.0.0.0", 20003));
	ASSERT_EQ(0, set_opt(self->fd, v6, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_AFONLY, 0));
	EXPECT_EQ(-EADDRNOTAVAIL, bind6(self->fd, v6, "::", 20003, 0));
	ASSERT_EQ(0, set_opt(self->fd, v6, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_AFONLY, 1));
	EXPECT_EQ(0, bind6(self->fd, v6, "::", 20003, 0));
	EXPECT_EQ(0, listen_id(self->fd, v6, 1));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, v6, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_AFONLY, 0));
}

static void drop_net_bind_service(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	syscall(SYS_capget, &hdr, data);
	data[CAP_NET_BIND_SERVICE / 32].effective &= ~(1u << (CAP_NET_BIND_SERVICE % 32));
	syscall(SYS_capset, &hdr, data);
}

TEST_F(uapi, low_ports_need_net_bind_service)
{
	int status;
	__u32 h;
	pid_t pid;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	EXPECT_EQ(0, bind4(self->fd, h, "127.0.0.1", 80));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		drop_net_bind_service();
		if (create_id(self->fd, SOFTCM_PS_TCP, 0, &h))
			_exit(1);
		if (bind4(self->fd, h, "127.0.0.1", 81) != -EACCES)
			_exit(2);
		_exit(bind4(self->fd, h, "127.0.0.1", 1024) ? 3 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(uapi, listen_and_backlog)
{
	struct sockaddr_in sin;
	struct softcm_query_id q;
	__u32 h, len = sizeof(sin);

	/* From IDLE: bound to 0.0.0.0 and a free port first. */
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, listen_id(self->fd, h, 0));
	ASSERT_EQ(0, query_id(self->fd, h, &q));
	EXPECT_EQ(SOFTCM_STATE_LISTEN, q.state);
	EXPECT_EQ(SOFTCM_MAX_BACKLOG_DEFAULT, q.backlog);
	ASSERT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, &sin, &len));
	EXPECT_EQ(AF_INET, sin.sin_family);
	EXPECT_EQ(htonl(INADDR_ANY), sin.sin_addr.s_addr);
	EXPECT_NE(0, sin.sin_port);
	EXPECT_EQ(-EINVAL, listen_id(self->fd, h, 5));

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind4(self->fd, h, "127.0.0.1", 0));
	ASSERT_EQ(0, listen_id(self->fd, h, 5));
	ASSERT_EQ(0, query_id(self->fd, h, &q));
	EXPECT_EQ(5, q.backlog);

	/* Capped by the namespace's max_backlog. */
	ASSERT_EQ(0, write_text("/proc/sys/net/softcm/max_backlog", "10"));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_UDP, 0, &h));
	ASSERT_EQ(0, listen_id(self->fd, h, 100000));
	ASSERT_EQ(0, query_id(self->fd, h, &q));
	EXPECT_EQ(10, q.backlog);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_UDP, 0, &h));
	ASSERT_EQ(0, listen_id(self->fd, h, -1));
	ASSERT_EQ(0, query_id(self->fd, h, &q));
	EXPECT_EQ(10, q.backlog);
}

TEST_F(uapi, query_addr_getpeername_semantics)
{
	unsigned char buf[64];
	struct sockaddr sa;
	__u32 h, len;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	/* Unbound: AF_UNSPEC, all zero. */
	memset(&sa, 0xaa, sizeof(sa));
	len = sizeof(sa);
	ASSERT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, &sa, &len));
	EXPECT_EQ(sizeof(sa), len);
	EXPECT_EQ(AF_UNSPEC, sa.sa_family);
	/* No peer. */
	len = sizeof(buf);
	EXPECT_EQ(-ENOTCONN, query_addr(self->fd, h, SOFTCM_QUERY_PEER, buf, &len));

	/* Truncation: only len bytes written, full size reported. */
	ASSERT_EQ(0, bind6(self->fd, h, "::1", 0, 0));
	memset(buf, 0xaa, sizeof(buf));
	len = 4;
	ASSERT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, buf, &len));
	EXPECT_EQ(sizeof(struct sockaddr_in6), len);
	EXPECT_EQ(AF_INET6, *(sa_family_t *)buf);
	EXPECT_EQ(0xaa, buf[4]);

	len = 0;
	EXPECT_EQ(0, query_addr(self->fd, h, SOFTCM_QUERY_LOCAL, NULL, &len));
	EXPECT_EQ(sizeof(struct sockaddr_in6), len);
	EXPECT_EQ(-EINVAL, query_addr(self->fd, h, SOFTCM_QUERY_CONNECTED_PEER + 1, buf, &len));
}

TEST_F(uapi, options)
{
	__u32 tcp, udp;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &tcp));
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_UDP, 0, &udp));
	EXPECT_EQ(0, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_TOS, 255));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_TOS, 256));
	EXPECT_EQ(0, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_ACK_TIMEOUT, 31));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_ACK_TIMEOUT, 32));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, udp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_ACK_TIMEOUT, 1));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_REUSEADDR, 2));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_AFONLY, 2));
	/* Level 1 is SOFTCM_OPTION_FILE since issue 20: an unknown one is 2. */
	EXPECT_EQ(-ENOPROTOOPT, set_opt(self->fd, tcp, 2, SOFTCM_OPTION_ID_TOS, 1));
	EXPECT_EQ(-ENOPROTOOPT, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, 99, 1));
	/* REUSEADDR may be cleared only in IDLE. */
	ASSERT_EQ(0, bind4(self->fd, tcp, "127.0.0.1", 0));
	EXPECT_EQ(-EINVAL, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_REUSEADDR, 0));
	EXPECT_EQ(0, set_opt(self->fd, tcp, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_REUSEADDR, 1));
}

TEST_F(uapi, max_ids_per_file)
{
	__u32 h[11];
	int i;

	ASSERT_EQ(0, write_text("/proc/sys/net/softcm/max_ids_per_file", "10"));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h[i]));
	EXPECT_EQ(-EMFILE, create_id(self->fd, SOFTCM_PS_TCP, 0, &h[10]));
	ASSERT_EQ(0, destroy_id(self->fd, h[3], NULL));
	EXPECT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h[10]));
	EXPECT_EQ(-EINVAL, write_text("/proc/sys/net/softcm/max_ids_per_file", "0"));
	EXPECT_EQ(-EINVAL, write_text("/proc/sys/net/softcm/max_ids_per_file", "16777217"));
}

static void on_alarm(int sig)
{
}

TEST_F(uapi, event_queue_read_and_poll)
{
	struct softcm_event ev[2];
	struct sigaction sa = { .sa_handler = on_alarm };
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	int nb;

	/* Shorter than one record. */
	EXPECT_EQ(-1, read(self->fd, ev, sizeof(ev[0]) - 1));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing queued: poll says so, O_NONBLOCK says EAGAIN. */
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	nb = open("/dev/softcm", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, nb);
	EXPECT_EQ(-1, read(nb, ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	close(nb);
	/* A blocking read waits, and a signal interrupts it. */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_EQ(-1, read(self->fd, ev, sizeof(ev)));
	EXPECT_EQ(EINTR, errno);
}

TEST_F(uapi, migrate_moves_id_between_files)
{
	struct softcm_migrate_id m = { 0 };
	__u32 h, other;
	int fd2, devnull;

	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind4(self->fd, h, "127.0.0.1", 20004));

	m.fd = self->fd;
	m.handle = h;
	ASSERT_EQ(0, ioctl(fd2, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(0, m.events_reported);
	EXPECT_EQ(-ENOENT, state_of(self->fd, h));
	EXPECT_EQ(SOFTCM_STATE_ADDR_BOUND, state_of(fd2, m.handle));
	EXPECT_EQ(20004, local_port(fd2, m.handle));

	/* The old file's close no longer reaches it: the port stays taken. */
	close(self->fd);
	self->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &other));
	EXPECT_EQ(-EADDRINUSE, bind4(self->fd, other, "127.0.0.1", 20004));

	/* Same file: nothing moves. */
	h = m.handle;
	m.fd = fd2;
	ASSERT_EQ(0, ioctl(fd2, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(h, m.handle);

	m.fd = 12345;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(EBADF, errno);
	devnull = open("/dev/null", O_RDONLY);
	m.fd = devnull;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(EINVAL, errno);
	close(devnull);
	m.fd = fd2;
	m.handle = 0x7ffffff0;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(ENOENT, errno);
	m.handle = h;
	m.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SOFTCM_IOCTL_MIGRATE_ID, &m));
	EXPECT_EQ(EINVAL, errno);

	close(fd2);
	EXPECT_EQ(0, bind4(self->fd, other, "127.0.0.1", 20004));
}

/* Closing a file destroys its ids in every state and frees their ports. */
TEST_F(uapi, close_destroys_every_id)
{
	__u32 h;
	int i, fd2;

	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(0, create_id(fd2, i % 2 ? SOFTCM_PS_TCP : SOFTCM_PS_UDP, i, &h));
		if (i % 3 == 0)
			continue;	/* IDLE */
		ASSERT_EQ(0, bind4(fd2, h, "127.0.0.1", 30000 + i));
		if (i % 3 == 2)
			ASSERT_EQ(0, listen_id(fd2, h, 1));
	}
	close(fd2);
	for (i = 1; i < 300; i++) {
		if (i % 3 == 0)
			continue;
		ASSERT_EQ(0, create_id(self->fd, i % 2 ? SOFTCM_PS_TCP : SOFTCM_PS_UDP, 0, &h));
		ASSERT_EQ(0, bind4(self->fd, h, "127.0.0.1", 30000 + i)) TH_LOG("port %d", 30000 + i);
	}
}

static int child_binds(int port)
{
	__u32 h;
	int fd;

	if (unshare(CLONE_NEWNET))
		return 1;
	lo_up();
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || create_id(fd, SOFTCM_PS_TCP, 0, &h))
		return 2;
	return bind4(fd, h, "127.0.0.1", port) ? 3 : 0;
}

/* Port tables are per namespace. */
TEST_F(uapi, netns_has_own_ports)
{
	int status;
	__u32 h;
	pid_t pid;

	ASSERT_EQ(0, create_id(self->fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, bind4(self->fd, h, "127.0.0.1", 20005));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_binds(20005));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

struct churn_arg {
	int fd;
	int created;
	int destroyed;	/* destroys that returned 0, of its own ids or others' */
	int errors;	/* results other than 0 and -ENOENT */
	int last_error;
};

/*
 * 0 is success; -ENOENT means another thread destroyed the id first.  A
 * destroyed id's handle is given to the next id created, so a bind or a
 * listen may land on another thread's id in a state that refuses it:
 * -EINVAL (@state_race) is then the right answer, too.
 */
static void churn_result(struct churn_arg *a, int ret, bool state_race)
{
	if (ret && ret != -ENOENT && !(state_race && ret == -EINVAL)) {
		a->errors++;
		a->last_error = ret;
	}
}

static void *churn(void *p)
{
	struct churn_arg *a = p;
	__u32 h;
	int i, ret;

	for (i = 0; i < 500; i++) {
		ret = create_id(a->fd, SOFTCM_PS_TCP, i, &h);
		if (ret) {
			a->errors++;
			a->last_error = ret;
			continue;
		}
		a->created++;
		churn_result(a, bind4(a->fd, h, "127.0.0.1", 0), true);
		churn_result(a, listen_id(a->fd, h, 1), true);
		/* Another thread may guess and destroy it first. */
		ret = destroy_id(a->fd, h ^ 1, NULL);
		churn_result(a, ret, false);
		a->destroyed += !ret;
		ret = destroy_id(a->fd, h, NULL);
		churn_result(a, ret, false);
		a->destroyed += !ret;
	}
	return NULL;
}

/*
 * Concurrent commands and destroys on one file: no error but the ENOENT
 * of an id another thread destroyed, every id destroyed exactly once, no
 * leftovers.
 */
TEST_F(uapi, concurrent_churn)
{
	struct churn_arg args[4] = { 0 };
	int i, created = 0, destroyed = 0;
	pthread_t th[4];

	for (i = 0; i < 4; i++) {
		args[i].fd = self->fd;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churn, &args[i]));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, args[i].errors) TH_LOG("thread %d: last error %d", i,
						    args[i].last_error);
		created += args[i].created;
		destroyed += args[i].destroyed;
	}
	EXPECT_EQ(2000, created);
	EXPECT_EQ(created, destroyed);
	/* the file is still open: its ids, not it, must be gone */
	EXPECT_EQ(0, stats_wait_eq_here("ids", 0, STATS_IDLE_MS));
}

TEST_HARNESS_MAIN
