/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_EVENT_H
#define _SOFTCM_EVENT_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <uapi/linux/softcm.h>

struct file;
struct softcm_id;

/*
 * A queue of events, what read() and poll() of one open file serve: each
 * file embeds one, and each of its ids points to it (id->evq).
 */
struct softcm_evq {
	struct mutex read_mutex;	/* readers only, one at a time */
	spinlock_t lock;		/* @list, @reading, @reading_revoked */
	struct list_head list;
	struct softcm_event_entry *reading;	/* unlinked, being copied */
	bool reading_revoked;		/* its id was purged or moved */
	wait_queue_head_t wait;
};

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

void softcm_evq_init(struct softcm_evq *q);
void softcm_evq_uninit(struct softcm_evq *q);

struct softcm_event_entry *softcm_event_alloc(enum softcm_event_type type,
					      int status, gfp_t gfp);
struct softcm_id *softcm_event_free(struct softcm_event_entry *e);
void softcm_event_queue(struct softcm_id *id, struct softcm_event_entry *e);
void softcm_event_queue_request(struct softcm_id *listener, struct softcm_id *child,
				struct softcm_event_entry *e);
void softcm_event_purge(struct softcm_id *id, struct list_head *dead);
void softcm_event_move(struct softcm_id *id, struct softcm_evq *from,
		       struct softcm_evq *to);
void softcm_event_wake(struct softcm_evq *q);

/* The reader's side, under @q->read_mutex. */
struct softcm_event_entry *softcm_event_take(struct softcm_evq *q);
int softcm_event_end_read(struct softcm_evq *q, struct softcm_event_entry *e,
			  int ret);
struct softcm_id *softcm_event_requeue(struct softcm_evq *q,
				       struct softcm_event_entry *e);
int softcm_event_wait(struct softcm_evq *q);
__poll_t softcm_event_poll(struct softcm_evq *q, struct file *filp,
			   poll_table *wait);

#endif /* _SOFTCM_EVENT_H */
