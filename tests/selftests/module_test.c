// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and unloading softcm.ko: repeated cycles, refusal while a file is
 * open, module parameter validation and the created/destroyed balance of
 * every object the module logs.
 */
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

/* 0 when UDP port @port of the calling namespace is free, else -errno. */
static int udp_port_free(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	ret = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * In a new namespace: the udp_port gauge says @port, and the first listen
 * opens the CM's socket on @port and not on the other one; 0, or the
 * step that failed.
 */
static int child_listens_on(int port, int other)
{
	struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
	struct sockaddr_in *sin = (struct sockaddr_in *)b.addr;
	struct softcm_listen l = { 0 };
	int fd, st;
	__u32 h;

	if (unshare(CLONE_NEWNET))
		return 1;
	st = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	if (st < 0 || stats_get(st, "udp_port") != port)
		return 2;
	if (stats_get(st, "socket_v4") != 0)	/* not opened before the listen */
		return 3;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || create_id(fd, SOFTCM_PS_TCP, 0, &h))
		return 4;
	b.handle = h;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(7000);
	l.handle = h;
	if (ioctl(fd, SOFTCM_IOCTL_BIND, &b) || ioctl(fd, SOFTCM_IOCTL_LISTEN, &l))
		return 5;
	if (stats_get(st, "socket_v4") != 1)
		return 6;
	if (udp_port_free(port) != -EADDRINUSE)
		return 7;
	if (udp_port_free(other))
		return 8;
	return 0;
}

static int listens_on(int port, int other)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(child_listens_on(port, other));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(load_unload_repeated)
{
	int i, n = softcm_rounds(40);
	struct stat st;

	ASSERT_EQ(0, softcm_ensure_unloaded());
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, softcm_load(NULL)) TH_LOG("load %d", i);
		ASSERT_EQ(0, stat("/dev/softcm", &st)) TH_LOG("load %d", i);
		ASSERT_EQ(0, softcm_unload()) TH_LOG("unload %d", i);
		ASSERT_EQ(-1, stat("/dev/softcm", &st));
		ASSERT_EQ(ENOENT, errno);
	}
	ASSERT_EQ(0, softcm_load(NULL));
}

TEST(unload_refused_while_open)
{
	int fd;

	ASSERT_EQ(0, softcm_ensure_loaded());
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EWOULDBLOCK, softcm_unload());
	EXPECT_TRUE(softcm_loaded());
	close(fd);
	EXPECT_EQ(0, softcm_unload());
	EXPECT_FALSE(softcm_loaded());
	ASSERT_EQ(0, softcm_load(NULL));
}

/* Each load with a value of @bad is refused with EINVAL and leaves nothing loaded. */
static void loads_refused(struct __test_metadata *_metadata, const char *const *bad, size_t n)
{
	ASSERT_EQ(0, softcm_ensure_unloaded());
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(-EINVAL, softcm_load(bad[i])) TH_LOG("%s", bad[i]);
		EXPECT_FALSE(softcm_loaded()) TH_LOG("%s", bad[i]);
	}
}

/* Read-only once loaded: 0 if a write of @value to @name is refused. */
static int param_write_refused(const char *name, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), SOFTCM_PARAMS "%s", name);
	return write_text(path, value) ? 0 : -1;
}

TEST(udp_port_param)
{
	static const char *const bad[] = {
		"udp_port=0", "udp_port=65536", "udp_port=-1", "udp_port=abc",
		"udp_port=",
	};

	loads_refused(_metadata, bad, sizeof(bad) / sizeof(bad[0]));
	ASSERT_EQ(0, softcm_load("udp_port=5000"));
	EXPECT_EQ(5000, softcm_param("udp_port"));
	/* Read-only after load: the transport binds it once per namespace. */
	EXPECT_EQ(0, param_write_refused("udp_port", "6000"));
	/* the namespace's gauge and the socket the transport opens agree */
	EXPECT_EQ(0, listens_on(5000, 4791));
	ASSERT_EQ(0, softcm_unload());

	ASSERT_EQ(0, softcm_load(NULL));
	EXPECT_EQ(4791, softcm_param("udp_port"));
	EXPECT_EQ(0, listens_on(4791, 5000));
}

/* The receive queues' bound: 4096 unless loaded otherwise, 64..65536, fixed once loaded. */
TEST(rx_queue_max_param)
{
	static const char *const bad[] = {
		"rx_queue_max=0", "rx_queue_max=63", "rx_queue_max=65537", "rx_queue_max=-1",
		"rx_queue_max=",
	};

	loads_refused(_metadata, bad, sizeof(bad) / sizeof(bad[0]));
	ASSERT_EQ(0, softcm_load("rx_queue_max=64"));
	EXPECT_EQ(64, softcm_param("rx_queue_max"));
	EXPECT_EQ(0, param_write_refused("rx_queue_max", "128"));
	ASSERT_EQ(0, softcm_unload());

	ASSERT_EQ(0, softcm_load(NULL));
	EXPECT_EQ(4096, softcm_param("rx_queue_max"));
}

/*
 * Count "<what> ... created" and "<what> ... destroyed" lines logged by
 * softcm after the marker; returns created - destroyed and stores the
 * number created.
 */
static int kmsg_balance(const char *marker, const char *what, int *created)
{
	char rec[1024], pat[64];
	bool seen = false;
	int fd, bal = 0;
	ssize_t len;

	*created = 0;
	snprintf(pat, sizeof(pat), "softcm: %s ", what);
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return INT32_MIN;
	while ((len = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (len < 0) {
			if (errno == EPIPE)
				continue;	/* overwritten records */
			break;
		}
		rec[len] = '\0';
		if (strstr(rec, marker))
			seen = true;
		if (!seen || !strstr(rec, pat))
			continue;
		if (strstr(rec, " created")) {
			bal++;
			(*created)++;
		} else if (strstr(rec, " destroyed")) {
			bal--;
		}
	}
	close(fd);
	return seen ? bal : INT32_MIN;
}

TEST(created_destroyed_balance)
{
	char marker[64];
	int i, fd, created;
	pid_t pid;

	if (access("/proc/dynamic_debug/control", F_OK) &&
	    access("/sys/kernel/debug/dynamic_debug/control", F_OK))
		SKIP(return, "kernel without dynamic debug");

	ASSERT_EQ(0, softcm_ensure_unloaded());
	snprintf(marker, sizeof(marker), "softcm-balance-marker-%d", getpid());
	ASSERT_EQ(0, write_text("/dev/kmsg", marker));
	ASSERT_EQ(0, softcm_load("dyndbg=+p"));

	for (i = 0; i < 10; i++) {
		fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		close(fd);
	}
	for (i = 0; i < 5; i++) {
		int status;

		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			if (unshare(CLONE_NEWNET))
				_exit(1);
			fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
			_exit(fd < 0 ? 2 : 0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);
	}
	ASSERT_EQ(0, softcm_unload());

	EXPECT_EQ(0, kmsg_balance(marker, "file", &created));
	EXPECT_EQ(15, created);
	EXPECT_EQ(0, kmsg_balance(marker, "netns", &created));
	EXPECT_LE(6, created);
	ASSERT_EQ(0, softcm_load(NULL));
}

TEST_HARNESS_MAIN
