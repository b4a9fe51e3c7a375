/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thin wrappers around the /dev/softcm ioctls shared by the selftests:
 * each returns 0 or -errno, so that tests can assert on the errno.
 */
#ifndef _SOFTCM_IOCTL_HELPERS_H
#define _SOFTCM_IOCTL_HELPERS_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/softcm.h>

static inline int create_id(int fd, __u16 ps, __u64 uid, __u32 *handle)
{
	struct softcm_create_id c = { .uid = uid, .ps = ps };

	*handle = 0;
	if (ioctl(fd, SOFTCM_IOCTL_CREATE_ID, &c))
		return -errno;
	*handle = c.handle;
	return 0;
}

static inline int destroy_id(int fd, __u32 handle, __u32 *reported)
{
	struct softcm_destroy_id c = { .handle = handle };

	if (ioctl(fd, SOFTCM_IOCTL_DESTROY_ID, &c))
		return -errno;
	if (reported)
		*reported = c.events_reported;
	return 0;
}

static inline int query_id(int fd, __u32 handle, struct softcm_query_id *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = handle;
	return ioctl(fd, SOFTCM_IOCTL_QUERY_ID, q) ? -errno : 0;
}

/* The id's state, or -errno. */
static inline int state_of(int fd, __u32 handle)
{
	struct softcm_query_id q;
	int ret = query_id(fd, handle, &q);

	return ret ? ret : (int)q.state;
}

static inline int query_addr(int fd, __u32 handle, int which, void *buf, __u32 *len)
{
	struct softcm_query_addr c = {
		.handle = handle, .which = which, .addr_len = *len,
		.addr = (__u64)(uintptr_t)buf,
	};

	if (ioctl(fd, SOFTCM_IOCTL_QUERY_ADDR, &c))
		return -errno;
	*len = c.addr_len;
	return 0;
}

/* The next event, waiting at most timeout_ms for it; -ETIME if none. */
static inline int next_event(int fd, struct softcm_event *ev, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, timeout_ms);

	if (ret < 0)
		return -errno;
	if (!ret)
		return -ETIME;
	return read(fd, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -errno;
}

#endif /* _SOFTCM_IOCTL_HELPERS_H */
