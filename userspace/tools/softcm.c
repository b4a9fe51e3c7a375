// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm: look at and steer the softcm connection manager.  The commands
 * are in a table, as iproute2's: version and help here, ping in ping.c,
 * show and stats in show.c, exec in exec.c.
 *
 * Exit status: 0 on success, 1 when the operation failed (module missing,
 * ABI mismatch, a connection that did not work), 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/softcm.h>

#include "softcm.h"
#include "tool.h"

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

/* In the order of the usage text; entries without help are aliases. */
static const struct tool_cmd cmds[] = {
	{ "version", cmd_version,
	  "  version    print the tool's and the loaded module's versions;\n"
	  "             fails when the module is missing or speaks another ABI\n" },
	{ "ping", cmd_ping, ping_help },
	{ "show", cmd_show,
	  "  show [-s STATE] [-p PORT] [-a ADDR] [-j]\n"
	  "             list this network namespace's ids (/proc/net/softcm):\n"
	  "             owner, state, addresses, device, CM state, comm IDs,\n"
	  "             QPNs, age; only those in STATE (id or CM state), with\n"
	  "             PORT or ADDR at either end; -j: as JSON\n" },
	{ "qps", cmd_qps,
	  "  qps [-j]   list this network namespace's QPs (/proc/net/softcm_qps):\n"
	  "             state, PSNs, path, and the RC counters; -j: as JSON\n" },
	{ "stats", cmd_stats,
	  "  stats [-z] [-j]\n"
	  "             this namespace's counters (/proc/net/softcm_stats);\n"
	  "             -z: only those not zero; -j: as JSON\n" },
	{ "exec", cmd_exec, exec_help },
	{ "help", cmd_help,
	  "  help       print this text\n" },
	{ "--version", cmd_version, NULL },
	{ "--help", cmd_help, NULL },
	{ "-h", cmd_help, NULL },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

/*
 * Composed first and written at once, as one printf() always wrote it: on
 * unbuffered stderr, a write per command would let a reader that stops
 * after the first lines (a test's popen() into a small buffer) kill us
 * with SIGPIPE halfway, instead of our exit status 2.
 */
void usage(FILE *f)
{
	char text[4096];
	size_t i, n;

	n = snprintf(text, sizeof(text), "Usage: softcm COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < NCMDS && n < sizeof(text); i++)
		if (cmds[i].help)
			n += snprintf(text + n, sizeof(text) - n, "%s", cmds[i].help);
	fputs(text, f);
}

static int too_many_arguments(void)
{
	fprintf(stderr, "softcm: too many arguments\n");
	return 2;
}

static int cmd_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	int abi;

	if (argc > 1)
		return too_many_arguments();
	printf("softcm %s (ABI %d)\n", softcm_version(), SOFTCM_ABI_VERSION);
	abi = softcm_get_abi_version();
	if (abi < 0) {
		if (errno == ENODEV)
			fprintf(stderr, "softcm: the softcm module is not loaded (try: modprobe softcm)\n");
		else
			fprintf(stderr, "softcm: cannot read %s: %s\n",
				SOFTCM_ABI_VERSION_PATH, strerror(errno));
		return 1;
	}
	printf("module ABI %d\n", abi);
	if (softcm_check_abi()) {
		fprintf(stderr, "softcm: the module speaks ABI %d, this tool ABI %d\n",
			abi, SOFTCM_ABI_VERSION);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);

	/* What the tool has always said of an unknown word with more after it. */
	if (argc > 2)
		return too_many_arguments();
	fprintf(stderr, "softcm: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
