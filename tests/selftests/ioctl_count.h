/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The softcm ioctls of this thread, counted per command number in
 * ncalls[]: a program that includes this defines ioctl(), which is found
 * before libc's for libsoftcm's calls too (the executable comes first in
 * the lookup scope), and passes each call on unchanged (after
 * ioctl_before(), if a test set it).  Include it once per program.
 */
#ifndef SOFTCM_TEST_IOCTL_COUNT_H
#define SOFTCM_TEST_IOCTL_COUNT_H

#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/softcm.h>

static __thread unsigned int ncalls[256];
/* If set, called with the command number before each softcm ioctl runs. */
static __thread void (*ioctl_before)(unsigned int nr);

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) == SOFTCM_IOCTL_TYPE) {
		ncalls[_IOC_NR(req)]++;
		if (ioctl_before)
			ioctl_before(_IOC_NR(req));
	}
	return syscall(SYS_ioctl, fd, req, arg);
}

#endif
