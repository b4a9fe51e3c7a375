/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
#ifndef _SOFTCM_INTERNAL_H
#define _SOFTCM_INTERNAL_H

#include <errno.h>

#define SOFTCM_EXPORT __attribute__((visibility("default")))

/* Set errno and return -1, the way every public call fails. */
static inline int softcm_err(int err)
{
	errno = err;
	return -1;
}

#endif /* _SOFTCM_INTERNAL_H */
