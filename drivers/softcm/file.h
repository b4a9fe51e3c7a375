/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_FILE_H
#define _SOFTCM_FILE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>

struct net;
struct pid;
struct softcm_event_entry;
struct softcm_id;

/*
 * One open of /dev/softcm: its ids, named by handles, and its event queue.
 * Lives from open() to the last close(), in the opener's namespace.
 */
struct softcm_file {
	struct net *net;		/* referenced */
	struct pid *owner;		/* the opener's thread group, referenced */
	kuid_t uid;			/* the opener's: who may see comm IDs */
	struct xarray ids;		/* handle -> id, holding a reference */
	atomic_t nr_ids;

	/* event queue: see event.c */
	struct mutex read_mutex;	/* readers only, one at a time */
	spinlock_t events_lock;		/* @events */
	struct list_head events;
	struct softcm_event_entry *reading;	/* unlinked, being copied */
	bool reading_revoked;		/* its id was purged or moved */
	wait_queue_head_t wait;
};

struct softcm_file *softcm_file_create(struct net *net);
void softcm_file_release(struct softcm_file *sf);

int softcm_file_create_id(struct softcm_file *sf, u16 ps, u64 uid, u32 *handle);
void softcm_file_destroy_id(struct softcm_id *id, u32 *events_reported);

int softcm_file_reserve(struct softcm_file *sf, u32 *handle);
void softcm_file_cancel(struct softcm_file *sf, u32 handle);
void softcm_file_commit(struct softcm_file *sf, struct softcm_id *id, u32 handle);
struct softcm_id *softcm_file_unpublish(struct softcm_file *sf, u32 handle,
					struct softcm_id *expected);
struct softcm_id *softcm_file_get_id(struct softcm_file *sf, u32 handle);

#endif /* _SOFTCM_FILE_H */
