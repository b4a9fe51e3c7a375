// SPDX-License-Identifier: GPL-2.0
/*
 * Per-network-namespace state: the net/softcm sysctl directory exists in
 * every namespace, including those created before the module was loaded,
 * its values are private to each namespace and bad values are refused.
 */
#include <sched.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#define MAX_BACKLOG "/proc/sys/net/softcm/max_backlog"

static int read_int(const char *path)
{
	char buf[32];

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

/* Run fn in a child process inside a new network namespace. */
static int in_new_netns(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (unshare(CLONE_NEWNET))
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(netns) {};
FIXTURE_SETUP(netns)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
}
FIXTURE_TEARDOWN(netns)
{
	write_text(MAX_BACKLOG, "1024");
}

TEST_F(netns, max_backlog_default)
{
	struct stat st;

	ASSERT_EQ(0, stat(MAX_BACKLOG, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	EXPECT_EQ(SOFTCM_MAX_BACKLOG_DEFAULT, read_int(MAX_BACKLOG));
}

TEST_F(netns, max_backlog_range)
{
	static const char *const bad[] = { "0", "-1", "65536", "abc", "99999999999" };
	size_t i;

	ASSERT_EQ(0, write_text(MAX_BACKLOG, "777"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, write_text(MAX_BACKLOG, bad[i])) TH_LOG("%s", bad[i]);
		EXPECT_EQ(777, read_int(MAX_BACKLOG)) TH_LOG("%s", bad[i]);
	}
	EXPECT_EQ(0, write_text(MAX_BACKLOG, "1"));
	EXPECT_EQ(1, read_int(MAX_BACKLOG));
	EXPECT_EQ(0, write_text(MAX_BACKLOG, "65535"));
	EXPECT_EQ(SOFTCM_MAX_BACKLOG_LIMIT, read_int(MAX_BACKLOG));
}

static int child_sees_default_then_sets(void *arg)
{
	if (read_int(MAX_BACKLOG) != SOFTCM_MAX_BACKLOG_DEFAULT)
		return 1;
	if (write_text(MAX_BACKLOG, "77") || read_int(MAX_BACKLOG) != 77)
		return 2;
	return 0;
}

TEST_F(netns, max_backlog_is_per_netns)
{
	ASSERT_EQ(0, write_text(MAX_BACKLOG, "2000"));
	EXPECT_EQ(0, in_new_netns(child_sees_default_then_sets, NULL));
	EXPECT_EQ(2000, read_int(MAX_BACKLOG));
}

/* A namespace that existed before the module was loaded gets its state. */
TEST_F(netns, existing_netns_initialised_on_load)
{
	int go[2], done[2], status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, softcm_unload());
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (unshare(CLONE_NEWNET) || write(done[1], "x", 1) != 1)
			_exit(1);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(read_int(MAX_BACKLOG) == SOFTCM_MAX_BACKLOG_DEFAULT ? 0 : 3);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	ASSERT_EQ(0, softcm_load(NULL));
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static int noop(void *arg)
{
	return access(MAX_BACKLOG, R_OK) ? 1 : 0;
}

/*
 * Namespaces come and go; the module must still unload cleanly after.
 * The rounds take one path after another (no two at once), so a leak
 * shows in the first: a quarter of them on the debug kernel.
 */
TEST_F(netns, churn_then_unload)
{
	int i, n = softcm_rounds(100);

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, in_new_netns(noop, NULL)) TH_LOG("round %d", i);
	EXPECT_EQ(0, softcm_unload());
	EXPECT_EQ(0, softcm_load(NULL));
}

TEST_HARNESS_MAIN
