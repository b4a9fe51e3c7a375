/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_EVENT_H
#define _SOFTCM_EVENT_H

#include <linux/poll.h>
#include <linux/types.h>
#include <uapi/linux/softcm.h>

struct file;
struct softcm_file;
struct softcm_id;

/*
 * A queued event: its record and a reference on the id it is counted for.
 * A CONNECT_REQUEST is the listener's event and also owns the new id it
 * announces (@child): that id is in no handle table until the event is
 * read, when it gets a handle in the reader's file; an entry freed unread
 * hands its child to the caller, who destroys it.
 */
struct softcm_event_entry {
	struct list_head node;
	struct softcm_id *id;
	struct softcm_id *child;
	struct softcm_event ev;
};

struct softcm_event_entry *softcm_event_alloc(enum softcm_event_type type,
					      int status, gfp_t gfp);
void softcm_event_queue(struct softcm_id *id, struct softcm_event_entry *e);
void softcm_event_queue_request(struct softcm_id *listener, struct softcm_id *child,
				struct softcm_event_entry *e);
void softcm_event_purge(struct softcm_id *id, struct list_head *dead);
struct softcm_id *softcm_event_free(struct softcm_event_entry *e);
void softcm_event_move(struct softcm_id *id, struct softcm_file *from,
		       struct softcm_file *to);

ssize_t softcm_event_read(struct softcm_file *sf, char __user *buf,
			  size_t count, bool nonblock);
__poll_t softcm_event_poll(struct softcm_file *sf, struct file *filp,
			   poll_table *wait);

#endif /* _SOFTCM_EVENT_H */
