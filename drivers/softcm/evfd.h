/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_EVFD_H
#define _SOFTCM_EVFD_H

#include <linux/list.h>
#include <linux/types.h>
#include <uapi/linux/softcm.h>

struct softcm_evfd;
struct softcm_file;
struct softcm_newfd;

/*
 * One event about one object, embedded in the object (a CQ has one for
 * its completion event and one for its async event): an object has at
 * most one event of each kind queued, which bounds every queue by the
 * number of objects.  @q is set the first time the entry is queued and
 * holds a reference on the queue until softcm_evfd_entry_purge(), so
 * that the object can always find, and unlink, what it queued.
 * @reported counts the times a reader took the entry.
 */
struct softcm_evfd_entry {
	struct list_head node;		/* in q->events, under q->lock */
	struct softcm_evfd *q;
	u32 reported;			/* under q->lock */
	union {
		struct softcm_comp_event comp;
		struct softcm_async_event async;
	};
};

int softcm_evfd_create_comp_channel(struct softcm_file *sf,
				    struct softcm_create_comp_channel *c,
				    struct softcm_newfd *nf);
int softcm_evfd_create_async(struct softcm_file *sf,
			     struct softcm_create_async_fd *c,
			     struct softcm_newfd *nf);
void softcm_evfd_async_done(struct softcm_file *sf, struct softcm_evfd *q, bool ok);
void softcm_evfd_file_release(struct softcm_file *sf);

struct softcm_evfd *softcm_evfd_get_channel(struct softcm_file *sf, int fd);
void softcm_evfd_put(struct softcm_evfd *q);

void softcm_evfd_entry_init(struct softcm_evfd_entry *e);
bool softcm_evfd_queue(struct softcm_evfd *q, struct softcm_evfd_entry *e);
bool softcm_evfd_queue_async(struct softcm_file *sf, struct softcm_evfd_entry *e);
u32 softcm_evfd_entry_purge(struct softcm_evfd_entry *e);

#endif /* _SOFTCM_EVFD_H */
