// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Discovering the module and agreeing on the ABI, as librdmacm does with
 * rdma_cm's abi_version: we read the version from sysfs, which exists
 * exactly while the module is loaded.  Then opening the device: each
 * open is an event channel, whose records the library reads in full
 * (addresses and route included) and whose shared page it maps,
 * so that poll() sees the records it holds (evbuf.c).  The bottom of the library: it calls nothing of the
 * library's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
static void warn_once(int err, int old)
{
	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		goto out;
	if (err == ENODEV)
		fprintf(stderr, "libsoftcm: the softcm kernel module is not loaded (modprobe softcm)\n");
	else if (old)
		fprintf(stderr, "libsoftcm: the softcm module is older than this library\n");
	else if (err == EPROTONOSUPPORT)
		fprintf(stderr, "libsoftcm: the softcm module speaks ABI %d, this library ABI %d\n",
			softcm_get_abi_version(), SOFTCM_ABI_VERSION);
out:
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
			warn_once(errno, 0);
			return -1;
		}
		__atomic_store_n(&abi_ok, 1, __ATOMIC_RELEASE);
	}
	fd = open("/dev/" SOFTCM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return softcm_err(errno == ENOENT ? ENODEV : errno);
	return fd;
}

/*
 * The file's records are full ones from the first read(): a module that
 * refuses the option (ENOPROTOOPT, EINVAL) or the page (EINVAL, ENODEV)
 * predates this library, which fails as for another ABI.
 */
static int set_up_file(struct softcm_channel *sch)
{
	struct softcm_set_option c = {
		.level = SOFTCM_OPTION_FILE,
		.optname = SOFTCM_OPTION_FILE_EVENT_FORMAT,
		.value = SOFTCM_EVENT_FORMAT_FULL,
	};
	void *p;

	if (ioctl(sch->channel.fd, SOFTCM_IOCTL_SET_OPTION, &c)) {
		if (errno != ENOPROTOOPT && errno != EINVAL)
			return -1;
		goto too_old;
	}
	p = mmap(NULL, SOFTCM_EVENT_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 sch->channel.fd, SOFTCM_MMAP_EVENT_PAGE);
	if (p == MAP_FAILED) {
		if (errno != EINVAL && errno != ENODEV)
			return -1;
		goto too_old;
	}
	/*
	 * A forked child would pin the file through the mapping even after
	 * it closed the fd, and could not use the page: the buffered state
	 * it mirrors is the parent's.  A failure costs only that.
	 */
	madvise(p, SOFTCM_EVENT_PAGE_SIZE, MADV_DONTFORK);
	sch->page = p;
	return 0;

too_old:
	warn_once(EPROTONOSUPPORT, 1);
	return -1;
}

/*
 * fork(): a child inherits the parent's channels, their files and the
 * library's state of them (buffered records, waiters, counts), but not
 * their pages (MADV_DONTFORK).  Their records and counts are the
 * parent's: a child that read one would take it from the parent, whose
 * rdma_destroy_id() would then wait for it for ever.  So a channel works
 * in the process that opened it only, and elsewhere its calls fail with
 * EACCES, as rdma_ucm refuses a file used with other credentials than its
 * opener's (ib_safe_file_access()).  A process generation, bumped in
 * every child, tells the two apart without a system call.
 */
static unsigned int fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void in_child(void)
{
	__atomic_add_fetch(&fork_gen, 1, __ATOMIC_RELAXED);
}

static void watch_fork(void)
{
	pthread_atfork(NULL, NULL, in_child);
}

int softcm_channel_check(const struct softcm_channel *sch)
{
	if (sch->fork_gen != __atomic_load_n(&fork_gen, __ATOMIC_RELAXED))
		return softcm_err(EACCES);
	return 0;
}

/*
 * A new channel with one user, its namespace noted: the verbs device of
 * its ids must be that one's.  Every channel has its page, a synchronous
 * id's own too: the application may poll() id->channel->fd, and sees
 * there the records the library holds for it.
 */
struct softcm_channel *softcm_channel_open(void)
{
	struct softcm_channel *sch;
	struct stat st;
	int err;

	pthread_once(&fork_once, watch_fork);
	sch = calloc(1, sizeof(*sch));
	if (!sch) {
		errno = ENOMEM;
		return NULL;
	}
	sch->fork_gen = __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
	sch->channel.fd = open_device();
	if (sch->channel.fd < 0)
		goto err_free;
	if (set_up_file(sch))
		goto err_close;
	if (!stat("/proc/thread-self/ns/net", &st)) {
		sch->ns_dev = st.st_dev;
		sch->ns_ino = st.st_ino;
	}
	sch->users = 1;
	sch->tail = &sch->head;
	pthread_mutex_init(&sch->lock, NULL);
	pthread_cond_init(&sch->cond, NULL);
	return sch;

err_close:
	err = errno;
	close(sch->channel.fd);
	errno = err;
err_free:
	free(sch);
	return NULL;
}

void softcm_channel_get(struct softcm_channel *sch)
{
	__atomic_add_fetch(&sch->users, 1, __ATOMIC_RELAXED);
}

/*
 * The last user closes the file.  Its ids are gone (destroyed, taking
 * their records) or go with it: records of none, or of ids the
 * application never destroyed, are freed unread.
 */
void softcm_channel_put(struct softcm_channel *sch)
{
	struct softcm_evrec *rec;

	if (__atomic_sub_fetch(&sch->users, 1, __ATOMIC_ACQ_REL))
		return;
	while ((rec = sch->head)) {
		sch->head = rec->next;
		if (rec->holds_from)
			softcm_channel_put(rec->from);
		free(rec);
	}
	while ((rec = sch->spare)) {
		sch->spare = rec->next;
		free(rec);
	}
	/* A child has no page: the address may be another mapping's now. */
	if (sch->page && !softcm_channel_check(sch))
		munmap(sch->page, SOFTCM_EVENT_PAGE_SIZE);
	close(sch->channel.fd);
	free(sch->rbuf);
	pthread_cond_destroy(&sch->cond);
	pthread_mutex_destroy(&sch->lock);
	free(sch);
}

SOFTCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct softcm_channel *sch = softcm_channel_open();

	return sch ? &sch->channel : NULL;
}

SOFTCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel)
		softcm_channel_put(to_schannel(channel));
}

SOFTCM_EXPORT const char *softcm_version(void)
{
	return SOFTCM_LIB_VERSION;
}
