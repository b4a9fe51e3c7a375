/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the selftests that build network-namespace topologies with
 * `ip netns add` and look at softcm from inside them: entering a
 * namespace from one thread, writing its net.softcm sysctls, and reading
 * its /proc/net/softcm_stats counters.
 *
 * The calling thread's namespace matters: a /dev/softcm file, a sysctl
 * file and a /proc/net file each belong to the namespace of the thread
 * that opened it.  Every helper that enters a namespace goes back to the
 * one given as @home before it returns.
 */
#ifndef _SOFTCM_TOPO_HELPERS_H
#define _SOFTCM_TOPO_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "vm_helpers.h"	/* write_text(); include after kselftest_harness.h */

static inline long topo_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Whether thread @tid of process @pid (a thread of this process, or a
 * child's main thread with @tid == @pid) sleeps in system call @nr:
 * /proc/PID/task/TID/syscall begins with the call's number only while
 * the thread is in it (else "running"), and stat's state is S or D only
 * while it sleeps.
 */
static inline bool task_asleep_in(pid_t pid, pid_t tid, long nr)
{
	char path[96], text[512], *p, state = 0;
	long got = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &got) != 1)
		got = -1;
	fclose(f);
	if (got != nr)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(text, sizeof(text), f)) {
		p = strrchr(text, ')');
		if (p && p[1] == ' ')
			state = p[2];
	}
	fclose(f);
	return state == 'S' || state == 'D';
}

/*
 * Wait (polling, at most @timeout_ms) until thread @tid of process @pid
 * sleeps in system call @nr; 0, or -ETIME if it was never seen there.
 */
static inline int task_wait_asleep_in(pid_t pid, pid_t tid, long nr, int timeout_ms)
{
	long deadline = topo_now_ms() + timeout_ms;

	while (!task_asleep_in(pid, tid, nr)) {
		if (topo_now_ms() > deadline)
			return -ETIME;
		usleep(1000);
	}
	return 0;
}

/* The calling thread's own network namespace, to come back to; -errno. */
static inline int netns_self(void)
{
	int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * The calling thread's namespace's loopback up, as `ip link set lo up`
 * does, without starting a program (about half a second of CPU each on
 * the debug kernel); 0 or -errno.
 */
static inline int lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		ret = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!ret && ioctl(fd, SIOCSIFFLAGS, &ifr))
		ret = -errno;
	close(fd);
	return ret;
}

/* A namespace made by `ip netns add NAME`; -errno. */
static inline int netns_open(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Move the calling thread into @nsfd; 0 or -errno. */
static inline int netns_enter(int nsfd)
{
	return setns(nsfd, CLONE_NEWNET) ? -errno : 0;
}

/*
 * Write net.@key ("ipv4/ip_forward") of namespace @nsfd (a sysctl file is
 * that of the namespace it is opened in); 0 or -errno.
 */
static inline int netns_net_sysctl(int nsfd, int home, const char *key, long value)
{
	char path[128], text[32];
	int ret;

	ret = netns_enter(nsfd);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/sys/net/%s", key);
	snprintf(text, sizeof(text), "%ld\n", value);
	ret = write_text(path, text);
	if (netns_enter(home) && !ret)
		ret = -EIO;
	return ret;
}

/* Write net.softcm.@name of namespace @nsfd; 0 or -errno. */
static inline int netns_softcm_sysctl(int nsfd, int home, const char *name, long value)
{
	char key[96];

	snprintf(key, sizeof(key), "softcm/%s", name);
	return netns_net_sysctl(nsfd, home, key, value);
}

/*
 * The CM timers a test runs with, as IBTA time exponents (4.096 us * 2^n)
 * before softcm_slow_shift() scales them for a slower kernel, and the
 * number of retries.
 */
struct softcm_timers {
	int response;		/* cm_response_timeout */
	int life;		/* packet_life_time */
	int mra;		/* mra_timeout */
	int retries;		/* cm_retries */
};

/* Set @t in namespace @nsfd; 0 or -errno. */
static inline int netns_set_timers(int nsfd, int home, const struct softcm_timers *t)
{
	int shift = softcm_slow_shift(), ret;

	ret = netns_softcm_sysctl(nsfd, home, "cm_response_timeout", t->response + shift);
	ret = ret ?: netns_softcm_sysctl(nsfd, home, "packet_life_time", t->life + shift);
	ret = ret ?: netns_softcm_sysctl(nsfd, home, "mra_timeout", t->mra + shift);
	return ret ?: netns_softcm_sysctl(nsfd, home, "cm_retries", t->retries);
}

/* Set @t in each namespace named in @names (space-separated); 0 or -errno. */
static inline int netns_set_timers_named(const char *names, const struct softcm_timers *t)
{
	char list[256], *name, *save = NULL;
	int home = netns_self(), ret = 0;

	if (home < 0)
		return home;
	snprintf(list, sizeof(list), "%s", names);
	for (name = strtok_r(list, " ", &save); name && !ret;
	     name = strtok_r(NULL, " ", &save)) {
		int ns = netns_open(name);

		ret = ns < 0 ? ns : netns_set_timers(ns, home, t);
		if (ns >= 0)
			close(ns);
	}
	close(home);
	return ret;
}

/*
 * An fd of namespace @nsfd's /proc/net/softcm_stats, to read with
 * stats_get() for as long as the test runs; -errno.
 */
static inline int stats_open(int nsfd, int home)
{
	int fd, ret;

	ret = netns_enter(nsfd);
	if (ret)
		return ret;
	fd = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	if (netns_enter(home)) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	return fd;
}

#define STATS_MISSING LLONG_MIN

/*
 * The value of counter or gauge @name ("name value" lines), read afresh;
 * STATS_MISSING when the file cannot be read or has no such line.
 */
static inline long long stats_get(int fd, const char *name)
{
	char buf[8192], *p;
	size_t len = strlen(name), used = 0;
	ssize_t n;

	while (used < sizeof(buf) - 1) {
		n = pread(fd, buf + used, sizeof(buf) - 1 - used, used);
		if (n < 0)
			return STATS_MISSING;
		if (!n)
			break;
		used += n;
	}
	buf[used] = '\0';
	p = buf;
	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ' ' || p[len] == '\t'))
			return strtoll(p + len + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return STATS_MISSING;
}

/*
 * @name is a line of @fd (a stats file): for a "did not move" check, whose
 * both sides would be STATS_MISSING (or a caller's 0) if the counter were
 * renamed.  Needs the kselftest harness.
 */
#define ASSERT_COUNTER(fd, name) \
	ASSERT_NE(STATS_MISSING, stats_get(fd, name)) TH_LOG("no counter \"%s\"", name)

/* Poll until @name == @want; 0, or -ETIME after @timeout_ms. */
static inline int stats_wait_eq(int fd, const char *name, long long want, int timeout_ms)
{
	long deadline = topo_now_ms() + timeout_ms;

	while (stats_get(fd, name) != want) {
		if (topo_now_ms() > deadline)
			return -ETIME;
		usleep(5000);
	}
	return 0;
}

/* Poll until @name > @than; 0, or -ETIME after @timeout_ms. */
static inline int stats_wait_above(int fd, const char *name, long long than, int timeout_ms)
{
	long deadline = topo_now_ms() + timeout_ms;
	long long v;

	for (;;) {
		v = stats_get(fd, name);
		if (v != STATS_MISSING && v > than)
			return 0;
		if (topo_now_ms() > deadline)
			return -ETIME;
		usleep(5000);
	}
}

/*
 * Poll until the namespace holds nothing of softcm's: no connection (in
 * timewait or not), no id and no open file (the ids and files gauges
 * count objects until they are freed).  0, or -ETIME after @timeout_ms.
 */
static inline int stats_wait_idle(int fd, int timeout_ms)
{
	static const char *const gauges[] = { "connections", "ids", "files" };
	long deadline = topo_now_ms() + timeout_ms;
	int ret = 0;

	for (unsigned int i = 0; i < sizeof(gauges) / sizeof(gauges[0]) && !ret; i++)
		ret = stats_wait_eq(fd, gauges[i], 0,
				    (int)(deadline > topo_now_ms() ? deadline - topo_now_ms() : 0));
	if (ret)	/* say which gauge stayed up, for the test's log */
		fprintf(stderr, "# not idle: connections %lld, ids %lld, files %lld\n",
			stats_get(fd, "connections"), stats_get(fd, "ids"),
			stats_get(fd, "files"));
	return ret;
}

/*
 * The bound for a namespace to become idle once a test has closed its
 * files: the longest timewait of the default timers (4 s; the tests'
 * fast timers are shorter) and a DREQ's retransmissions, with room for a
 * loaded debug kernel.
 */
#define STATS_IDLE_MS 60000

/* stats_wait_idle() for the calling thread's own namespace. */
static inline int stats_wait_idle_here(int timeout_ms)
{
	int fd = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = stats_wait_idle(fd, timeout_ms);
	close(fd);
	return ret;
}

/* stats_wait_eq() for the calling thread's own namespace. */
static inline int stats_wait_eq_here(const char *name, long long want, int timeout_ms)
{
	int fd = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = stats_wait_eq(fd, name, want, timeout_ms);
	close(fd);
	return ret;
}

/*
 * stats_open() for the namespace `ip netns add` named @name, from a thread
 * in any namespace (it comes back to its own); -errno.
 */
static inline int netns_stats_open(const char *name)
{
	int nsfd = netns_open(name), home = netns_self(), fd;

	if (nsfd < 0 || home < 0)
		fd = nsfd < 0 ? nsfd : home;
	else
		fd = stats_open(nsfd, home);
	if (nsfd >= 0)
		close(nsfd);
	if (home >= 0)
		close(home);
	return fd;
}

/* stats_wait_idle() for the namespace named @name; 0, -errno, -ETIME. */
static inline int netns_wait_idle(const char *name, int timeout_ms)
{
	int fd = netns_stats_open(name), ret;

	if (fd < 0)
		return fd;
	ret = stats_wait_idle(fd, timeout_ms);
	if (ret)
		fprintf(stderr, "# (that was namespace %s)\n", name);
	close(fd);
	return ret;
}

/*
 * Packets the network stack dropped below any socket, at the per-CPU
 * backlogs (/proc/net/softnet_stat's second column, summed over the
 * CPUs; global: nothing else runs in the guest); -1 if unreadable.
 */
static inline long long softnet_dropped(void)
{
	unsigned int processed, dropped;
	long long sum = 0;
	char line[256];
	FILE *f = fopen("/proc/net/softnet_stat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%x %x", &processed, &dropped) == 2)
			sum += dropped;
	fclose(f);
	return sum;
}

/*
 * TOPO_NAMESPACES("a b c"): the namespaces a program builds once and keeps
 * across its tests are deleted when the harness's parent process exits
 * (the tests run in forked children, which leave through _exit() and
 * never run destructors; the pid check covers a child that calls exit()).
 * init.sh fails a program that leaves a namespace behind.
 */
#define TOPO_NAMESPACES(names)							\
static pid_t topo_parent;							\
static void __attribute__((constructor)) topo_note_parent(void)		\
{										\
	topo_parent = getpid();							\
}										\
static void __attribute__((destructor)) topo_delete_namespaces(void)		\
{										\
	if (getpid() == topo_parent &&						\
	    system("for n in " names "; do echo netns del $n; done |"	\
		   " ip -force -batch - >/dev/null 2>&1; true"))			\
		fprintf(stderr, "# could not delete the namespaces " names "\n");	\
}

#endif /* _SOFTCM_TOPO_HELPERS_H */
