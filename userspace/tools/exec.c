// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm exec: run a program built for rdma-core's librdmacm.so.1 and
 * libibverbs.so.1 on softcm, unchanged.  We put the directory of softcm's
 * compat libraries (libraries with those sonames and rdma-core's symbol
 * versions, made of libsoftcm's objects: softcm(8)) first on
 * LD_LIBRARY_PATH and exec the program, so the dynamic linker loads them
 * instead of rdma-core's.
 *
 * The directory is found next to the libsoftcm.so.1 this tool runs on,
 * as make install puts them both in $(LIBDIR): $(LIBDIR)/softcm/compat,
 * and build/lib/softcm/compat in the build tree.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#define COMPAT_SUBDIR	"softcm/compat"
#define LIBSOFTCM	"libsoftcm.so.1"

const char exec_help[] =
	"  exec [--] PROGRAM [ARGS]\n"
	"             run PROGRAM, built for rdma-core's librdmacm and\n"
	"             libibverbs, on softcm: with softcm's compat libraries\n"
	"             first on LD_LIBRARY_PATH (exit status: PROGRAM's; 126 or\n"
	"             127 when it cannot be run)\n";

/* dl_iterate_phdr() callback: the real path of the loaded libsoftcm.so.1 */
static int find_libsoftcm(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name, *base;

	if (!name || !*name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strcmp(base, LIBSOFTCM))
		return 0;
	return realpath(name, data) ? 1 : 0;
}

/* The compat directory into @dir; -1 with a message when there is none. */
static int compat_dir(char *dir, size_t size)
{
	static const char * const names[] = { "librdmacm.so.1", "libibverbs.so.1" };
	char lib[PATH_MAX], path[PATH_MAX + 32];
	size_t i;

	if (dl_iterate_phdr(find_libsoftcm, lib) != 1) {
		fprintf(stderr, "softcm: cannot find the %s this tool runs on\n", LIBSOFTCM);
		return -1;
	}
	if ((size_t)snprintf(dir, size, "%s/" COMPAT_SUBDIR, dirname(lib)) >= size) {
		fprintf(stderr, "softcm: path too long\n");
		return -1;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path)) {
			fprintf(stderr, "softcm: path too long\n");
			return -1;
		}
		if (access(path, R_OK)) {
			fprintf(stderr, "softcm: no compat library %s: %s\n",
				path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * librspreload.so turns a program's sockets into rsockets, which softcm
 * does not have yet: refuse it with one message rather than run every
 * process it is preloaded into without what it was asked for.
 */
static int preloads_rsockets(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload && strstr(preload, "librspreload");
}

int cmd_exec(int argc, char **argv)
{
	char dir[PATH_MAX], *path;
	const char *old;
	int i = 1;

	if (i < argc && !strcmp(argv[i], "--")) {
		i++;
	} else if (i < argc && argv[i][0] == '-') {
		fprintf(stderr, "softcm: exec: unknown option '%s'\n", argv[i]);
		return 2;
	}
	if (i >= argc) {
		fprintf(stderr, "softcm: exec: no program given\n");
		usage(stderr);
		return 2;
	}
	if (preloads_rsockets()) {
		fprintf(stderr, "softcm: exec: LD_PRELOAD names librspreload: rsockets are not "
			"supported yet (softcm(8))\n");
		return 126;
	}
	if (compat_dir(dir, sizeof(dir)))
		return 1;

	/* Ours first; what the caller had stays after it. */
	old = getenv("LD_LIBRARY_PATH");
	if (asprintf(&path, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "") < 0 ||
	    setenv("LD_LIBRARY_PATH", path, 1)) {
		fprintf(stderr, "softcm: exec: %s\n", strerror(errno));
		return 1;
	}
	free(path);

	execvp(argv[i], argv + i);
	/* As env(1) and the shells: 127 when not found, 126 when not runnable. */
	fprintf(stderr, "softcm: exec: %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
