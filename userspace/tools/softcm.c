// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm: look at and steer the softcm connection manager.
 *
 * Exit status: 0 on success, 1 when the operation failed (module missing,
 * ABI mismatch), 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/softcm.h>

#include "softcm.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: softcm COMMAND\n"
		"\n"
		"Commands:\n"
		"  version    print the tool's and the loaded module's versions;\n"
		"             fails when the module is missing or speaks another ABI\n"
		"  help       print this text\n");
}

static int cmd_version(void)
{
	int abi;

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
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "softcm: too many arguments\n");
		return 2;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version"))
		return cmd_version();

	fprintf(stderr, "softcm: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
