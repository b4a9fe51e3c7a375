/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the selftests that run inside the test VM: loading and
 * unloading softcm.ko with the raw syscalls, so that every failure comes
 * back as an errno we can assert on.  The module's path is $SOFTCM_KO.
 */
#ifndef _SOFTCM_VM_HELPERS_H
#define _SOFTCM_VM_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The harness gives each test 30 s; on the debug kernel under TCG, with a
 * namespace topology to build, a correct test can need several times
 * that.  A hang is still caught: here, by the program's and the guest's
 * own time limits.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#endif

static inline const char *softcm_ko(void)
{
	const char *p = getenv("SOFTCM_KO");

	return p ? p : "/lib/softcm/softcm.ko";
}

/*
 * Whether the guest runs our debug kernel (tests/vm/run.sh writes
 * SOFTCM_KERNEL=stock or debug, its --kernel, into run.conf and
 * tests/vm/init.sh exports it; unset or anything else counts as stock).
 * Loops and fuzzers do less work there: each round costs several times
 * more CPU.  How long the tests wait is softcm_slow_shift()'s, apart.
 */
static inline bool softcm_on_debug(void)
{
	const char *k = getenv("SOFTCM_KERNEL");

	return k && !strcmp(k, "debug");
}

/*
 * How much slower the running kernel is than Debian's, as a power of two:
 * 0 on the stock kernel, 3 (8x) on our debug kernel (KASAN, lockdep and
 * kmemleak under TCG).  tests/vm/run.sh writes SOFTCM_KERNEL=stock or
 * debug (its --kernel) into run.conf and tests/vm/init.sh exports it;
 * unset or anything else counts as stock.  The tests add it to every IBTA
 * time exponent they set (4.096 us * 2^n: +3 is 8x), so that their CM
 * timers scale with the kernel's speed while retry counts stay as they
 * are.
 */
static inline int softcm_slow_shift(void)
{
	const char *s = getenv("SOFTCM_SLOW_SHIFT");

	/* a run may choose another factor (run.sh passes it through) */
	if (s && *s >= '0' && *s <= '4' && !s[1])
		return *s - '0';
	return softcm_on_debug() ? 3 : 0;
}

/*
 * softcm_slow_shift() for a CM timer that waits out loss or a timewait
 * rather than a slow guest's answer: 1 (2x) on a slower kernel, 0 on the
 * stock one.  Such a wait costs no CPU, so the full factor only
 * stretched it (Documentation/testing.rst, "Wall times").
 */
static inline int softcm_wait_shift(void)
{
	return softcm_slow_shift() ? 1 : 0;
}

/*
 * A window in which a test expects nothing to happen ("no event within
 * @ms"), scaled like the CM timers: it then covers as many retransmission
 * periods on the debug kernel as on the stock one.
 */
static inline int softcm_quiet_ms(int ms)
{
	return ms << softcm_slow_shift();
}

/*
 * How many rounds to run of a loop whose rounds all take the same paths:
 * @n on the stock kernel, a quarter of it on the debug kernel.  There each
 * round costs several times more CPU, and what the rounds look for (a
 * leak, a report from KASAN or lockdep) shows in the first of them; the
 * stock kernel keeps the full count for what only repetition shows.
 */
static inline int softcm_rounds(int n)
{
	return softcm_on_debug() ? (n + 3) / 4 : n;
}

static inline bool softcm_loaded(void)
{
	return access("/sys/module/softcm", F_OK) == 0;
}

/* Returns 0 or -errno. */
static inline int softcm_load(const char *params)
{
	int fd, ret;

	fd = open(softcm_ko(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

/* Returns 0 or -errno; never waits for the module to become unused. */
static inline int softcm_unload(void)
{
	return syscall(SYS_delete_module, "softcm", O_NONBLOCK) ? -errno : 0;
}

static inline int softcm_ensure_loaded(void)
{
	int ret;

	if (softcm_loaded())
		return 0;
	ret = softcm_load(NULL);
	return ret == -EEXIST ? 0 : ret;
}

static inline int softcm_ensure_unloaded(void)
{
	if (!softcm_loaded())
		return 0;
	return softcm_unload();
}

/* Read a small text file into buf; returns its length or -errno. */
static inline int read_text(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0)
		len = -errno;
	close(fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* The output of a shell command, at most @size - 1 bytes; its exit status. */
static inline int run_output(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	return pclose(p);
}

/* Write a string to a file (sysctl, sysfs); returns 0 or -errno. */
static inline int write_text(const char *path, const char *text)
{
	ssize_t len;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = write(fd, text, strlen(text));
	if (len < 0)
		len = -errno;
	close(fd);
	return len < 0 ? len : 0;
}

#define SOFTCM_PARAMS	"/sys/module/softcm/parameters/"

/* Module parameter @name's value as /sys shows it, or -1 (not loaded, no such one). */
static inline long softcm_param(const char *name)
{
	char path[128], buf[32], *end;
	long v;

	snprintf(path, sizeof(path), SOFTCM_PARAMS "%s", name);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	v = strtol(buf, &end, 10);
	return end == buf || *end != '\n' ? -1 : v;
}

#endif /* _SOFTCM_VM_HELPERS_H */
