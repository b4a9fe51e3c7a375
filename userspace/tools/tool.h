/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
#ifndef _SOFTCM_TOOL_H
#define _SOFTCM_TOOL_H

#include <stdio.h>

/*
 * A command of the softcm tool (softcm.c's table).  @fn gets the command's
 * arguments with its name as argv[0], and returns the exit status: 0, 1
 * when the operation failed, 2 on a usage error.  @help is its text in the
 * usage, NULL for an alias.
 */
struct tool_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* softcm.c: the whole usage text, every command's */
void usage(FILE *f);

/* ping.c */
extern const char ping_help[];
int cmd_ping(int argc, char **argv);

/* show.c */
int cmd_show(int argc, char **argv);
int cmd_qps(int argc, char **argv);
int cmd_stats(int argc, char **argv);

/* exec.c */
extern const char exec_help[];
int cmd_exec(int argc, char **argv);

#endif /* _SOFTCM_TOOL_H */
