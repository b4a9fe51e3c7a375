// SPDX-License-Identifier: GPL-2.0
/*
 * libsoftcm's module discovery and the softcm tool built on it.
 */
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "softcm.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

/* Run "softcm <args>", capture stdout+stderr; returns the exit status. */
static int run_tool(const char *args, char *out, size_t size)
{
	const char *tool = getenv("SOFTCM_TOOL");
	char cmd[256];
	size_t len = 0;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", tool ? tool : "softcm", args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (len < size - 1 && fgets(out + len, size - len, f))
		len += strlen(out + len);
	out[len] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(abi_matches_loaded_module)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	EXPECT_EQ(SOFTCM_ABI_VERSION, softcm_get_abi_version());
	EXPECT_EQ(0, softcm_check_abi());
	/* the checks open the device; they leave no file behind */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST(module_missing_is_enodev)
{
	ASSERT_EQ(0, softcm_ensure_unloaded());
	errno = 0;
	EXPECT_EQ(-1, softcm_get_abi_version());
	EXPECT_EQ(ENODEV, errno);
	errno = 0;
	EXPECT_EQ(-1, softcm_check_abi());
	EXPECT_EQ(ENODEV, errno);
	ASSERT_EQ(0, softcm_load(NULL));
}

TEST(tool_version)
{
	char out[512], want[64];

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, run_tool("version", out, sizeof(out))) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "module ABI %d\n", SOFTCM_ABI_VERSION);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, softcm_version())) TH_LOG("%s", out);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST(tool_module_missing)
{
	char out[512];

	ASSERT_EQ(0, softcm_ensure_unloaded());
	EXPECT_EQ(1, run_tool("version", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "not loaded")) TH_LOG("%s", out);
	/* One line, the tool's, not the library's as well. */
	EXPECT_EQ(1, run_tool("ping 127.0.0.1", out, sizeof(out)));
	EXPECT_STREQ("softcm ping: the softcm module is not loaded\n", out);
	ASSERT_EQ(0, softcm_load(NULL));
}

TEST(tool_usage_errors)
{
	char out[512];

	EXPECT_EQ(2, run_tool("", out, sizeof(out)));
	EXPECT_EQ(2, run_tool("no-such-command", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "unknown command")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_tool("version extra", out, sizeof(out)));
	EXPECT_EQ(2, run_tool("ping", out, sizeof(out)));
	EXPECT_EQ(2, run_tool("ping -l 127.0.0.1", out, sizeof(out)));
	EXPECT_EQ(2, run_tool("ping -n 0 -l", out, sizeof(out)));
	EXPECT_EQ(2, run_tool("ping -d 012345678901234567890123456789012345678901234567890123456 "
			      "127.0.0.1", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "at most 56 bytes")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_tool("ping --help", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "ping -l")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_tool("--help", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Usage: softcm")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
