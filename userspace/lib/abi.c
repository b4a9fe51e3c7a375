// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Discovering the module and agreeing on the ABI, as librdmacm does with
 * rdma_cm's abi_version: we read the version from sysfs, which exists
 * exactly while the module is loaded.  Then opening the device: each
 * open is an event channel.  The bottom of the library: it calls nothing
 * of the library's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/softcm.h>

#include "internal.h"
#include "softcm.h"

#ifndef SOFTCM_LIB_VERSION
#error "the Makefile passes SOFTCM_LIB_VERSION"
#endif

SOFTCM_EXPORT int softcm_get_abi_version(void)
{
	char buf[16], *end;
	ssize_t len;
	long ver;
	int fd;

	fd = open(SOFTCM_ABI_VERSION_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return softcm_err(errno == ENOENT ? ENODEV : errno);
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return softcm_err(EPROTO);
	buf[len] = '\0';

	errno = 0;
	ver = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || ver < 0 ||
	    ver > 0xffff)
		return softcm_err(EPROTO);
	return ver;
}

SOFTCM_EXPORT int softcm_check_abi(void)
{
	int ver = softcm_get_abi_version();

	if (ver < 0)
		return -1;
	if (ver != SOFTCM_ABI_VERSION)
		return softcm_err(EPROTONOSUPPORT);
	return 0;
}

static int abi_ok;
static int warned;

/*
 * Said once per process on stderr: a program that only reports ENODEV from
 * rdma_create_event_channel() would otherwise leave its user guessing.
 */
static void warn_once(int err)
{
	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	if (err == ENODEV)
		fprintf(stderr, "libsoftcm: the softcm kernel module is not loaded (modprobe softcm)\n");
	else if (err == EPROTONOSUPPORT)
		fprintf(stderr, "libsoftcm: the softcm module speaks ABI %d, this library ABI %d\n",
			softcm_get_abi_version(), SOFTCM_ABI_VERSION);
	errno = err;
}

/*
 * A new open of /dev/softcm: one event channel, one kernel context.  The
 * ABI is checked until it has matched once; a module loaded later is found.
 */
static int open_device(void)
{
	int fd;

	if (!__atomic_load_n(&abi_ok, __ATOMIC_ACQUIRE)) {
		if (softcm_check_abi()) {
			warn_once(errno);
			return -1;
		}
		__atomic_store_n(&abi_ok, 1, __ATOMIC_RELEASE);
	}
	fd = open("/dev/" SOFTCM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return softcm_err(errno == ENOENT ? ENODEV : errno);
	return fd;
}

/* Its namespace is noted: the verbs device of its ids must be that one's. */
SOFTCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct softcm_channel *sch;
	struct stat st;

	sch = calloc(1, sizeof(*sch));
	if (!sch) {
		errno = ENOMEM;
		return NULL;
	}
	sch->channel.fd = open_device();
	if (sch->channel.fd < 0) {
		free(sch);
		return NULL;
	}
	if (!stat("/proc/thread-self/ns/net", &st)) {
		sch->ns_dev = st.st_dev;
		sch->ns_ino = st.st_ino;
	}
	return &sch->channel;
}

SOFTCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (!channel)
		return;
	close(channel->fd);
	free(to_schannel(channel));
}

SOFTCM_EXPORT const char *softcm_version(void)
{
	return SOFTCM_LIB_VERSION;
}
