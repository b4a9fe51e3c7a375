/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
#ifndef _SOFTCM_TOOL_H
#define _SOFTCM_TOOL_H

/* The softcm command's subcommands outside softcm.c: exit status 0/1/2. */
int cmd_show(int argc, char **argv);
int cmd_stats(int argc, char **argv);

#endif /* _SOFTCM_TOOL_H */
