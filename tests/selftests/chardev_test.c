// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/softcm itself: the node, its mode, the abi_version attribute, and
 * opening and closing from many threads at once.
 */
#include <pthread.h>
#include <sys/sysmacros.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

FIXTURE(dev) {};
FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
}
FIXTURE_TEARDOWN(dev)
{
	/* every file a test opened is closed, and freed */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST_F(dev, node_and_mode)
{
	unsigned int major, minor;
	struct stat st;
	char buf[32];

	ASSERT_EQ(0, stat("/dev/softcm", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666, st.st_mode & 07777);
	EXPECT_EQ(10, major(st.st_rdev));	/* a misc device */

	ASSERT_LT(0, read_text("/sys/class/misc/softcm/dev", buf, sizeof(buf)));
	ASSERT_EQ(2, sscanf(buf, "%u:%u", &major, &minor));
	EXPECT_EQ(major, major(st.st_rdev));
	EXPECT_EQ(minor, minor(st.st_rdev));
}

TEST_F(dev, abi_version)
{
	struct stat st;
	char buf[32], want[32];

	ASSERT_EQ(0, stat(SOFTCM_ABI_VERSION_PATH, &st));
	EXPECT_EQ(0444, st.st_mode & 0777);
	ASSERT_LT(0, read_text(SOFTCM_ABI_VERSION_PATH, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d\n", SOFTCM_ABI_VERSION);
	EXPECT_STREQ(want, buf);
	EXPECT_NE(0, write_text(SOFTCM_ABI_VERSION_PATH, "2"));
}

TEST_F(dev, not_seekable)
{
	int fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	close(fd);
}

TEST_F(dev, open_flags)
{
	static const int flags[] = {
		O_RDONLY, O_WRONLY, O_RDWR, O_RDWR | O_NONBLOCK | O_CLOEXEC,
	};
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		int fd = open("/dev/softcm", flags[i]);

		EXPECT_LE(0, fd) TH_LOG("flags %#x: %s", flags[i], strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

#define THREADS 8
#define ROUNDS 500

static void *open_close(void *arg)
{
	long failures = 0;
	int i, fd;

	for (i = 0; i < ROUNDS; i++) {
		fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			failures++;
			continue;
		}
		if (close(fd))
			failures++;
	}
	return (void *)failures;
}

TEST_F(dev, open_close_many_threads)
{
	pthread_t th[THREADS];
	char buf[32];
	void *res;
	int i;

	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, open_close, NULL));
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], &res));
		EXPECT_EQ(0, (long)res);
	}
	/* Every open took a module reference; every close must give it back. */
	ASSERT_LT(0, read_text("/sys/module/softcm/refcnt", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	EXPECT_EQ(0, softcm_unload());
	EXPECT_EQ(0, softcm_load(NULL));
}

TEST_HARNESS_MAIN
