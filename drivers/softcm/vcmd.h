/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_VCMD_H
#define _SOFTCM_VCMD_H

struct file;
struct softcm_evfd;
struct softcm_file;

/*
 * A file descriptor a command creates: reserved and its file made by the
 * command, installed by vcmd.c only once the reply reached userspace.
 * @async: the file's async event queue that the descriptor reads, which
 * the file gets only then too (softcm_evfd_async_done()).
 */
struct softcm_newfd {
	struct file *file;
	int fd;
	struct softcm_evfd *async;
};

long softcm_vcmd_ioctl(struct softcm_file *sf, unsigned int cmd, unsigned long arg);

#endif /* _SOFTCM_VCMD_H */
