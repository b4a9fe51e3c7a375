/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_FILE_H
#define _SOFTCM_FILE_H

#include <linux/atomic.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "event.h"
#include "uobj.h"

struct net;
struct page;
struct pid;
struct softcm_evfd;
struct softcm_id;

/*
 * One open of /dev/softcm: its ids, named by handles, and its event queue.
 * Lives from open() to the last close(), in the opener's namespace.
 */
struct softcm_event_full;

struct softcm_file {
	/*
	 * Unique for the module's life, never reused: what outlives the
	 * file (a completion channel) names its file by this, not by a
	 * pointer that a later file may take.
	 */
	u64 cookie;
	struct net *net;		/* referenced */
	struct pid *owner;		/* the opener's thread group, referenced */
	kuid_t uid;			/* the opener's: who may see comm IDs */
	struct xarray ids;		/* handle -> id, holding a reference */
	atomic_t nr_ids;
	struct softcm_evq evq;		/* its ids' events, for read() */
	/* SOFTCM_EVENT_FORMAT_*: read once by each read(), under evq.read_mutex */
	u32 event_format;
	/* a full record's scratch, made by the first full read(); evq.read_mutex */
	struct softcm_event_full *read_scratch;
	/* the page mmap() shares (evpage.c), referenced; NULL before */
	struct page *evpage;
	struct softcm_uobjs uobjs;	/* its verbs objects */
	/* mmap() offset (pages) -> the verbs rings published (ring.c) */
	struct xarray rings;
	/* its async event descriptor's queue (evfd.c), referenced */
	struct softcm_evfd __rcu *async;
	/* a CREATE_ASYNC_FD is copying its reply out; uobjs.lock */
	bool async_reserved;
};

struct softcm_file *softcm_file_create(struct net *net);
void softcm_file_release(struct softcm_file *sf);
ssize_t softcm_file_read(struct softcm_file *sf, char __user *buf,
			 size_t count, bool nonblock);
int softcm_file_set_option(struct softcm_file *sf, u32 optname, u32 value);

/* The commands on ids, by handle. */
int softcm_file_create_id(struct softcm_file *sf, u16 ps, u64 uid, u32 *handle);
int softcm_file_destroy_handle(struct softcm_file *sf, u32 handle,
			       u32 *events_reported);
struct softcm_id *softcm_file_get_locked(struct softcm_file *sf, u32 handle);
int softcm_file_migrate(struct softcm_file *to, struct softcm_file *from,
			u32 handle, u32 *new_handle, u32 *events_reported);

/* For the layers below: a request's new id, and the end of any id. */
void softcm_file_publish_request(struct softcm_id *listener, struct softcm_id *child,
				 struct softcm_event_entry *e);
void softcm_file_destroy_id(struct softcm_id *id, u32 *events_reported);

#endif /* _SOFTCM_FILE_H */
