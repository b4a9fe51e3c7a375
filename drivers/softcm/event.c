// SPDX-License-Identifier: GPL-2.0
/*
 * Events: the per-file queue that read() and poll() serve.
 *
 * An entry is copied to userspace before it is unlinked, so a copy that
 * faults leaves it queued.  @read_mutex keeps one reader (and purge or
 * migration) at a time on the queue, which is what lets a reader copy an
 * entry without holding the spinlock; @events_lock protects the list and
 * the ids' events_reported counts, and is all that queueing needs.
 */

#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "event.h"
#include "file.h"
#include "id.h"

struct softcm_event_entry *softcm_event_alloc(enum softcm_event_type type,
					      int status, gfp_t gfp)
{
	struct softcm_event_entry *e;

	e = kzalloc(sizeof(*e), gfp | __GFP_ACCOUNT);
	if (!e)
		return NULL;
	e->ev.event = type;
	e->ev.status = status;
	return e;
}

static void entry_free(struct softcm_event_entry *e)
{
	softcm_id_put(e->id);
	softcm_id_put(e->child);
	kfree(e);
}

static void enqueue(struct softcm_file *sf, struct softcm_event_entry *e)
{
	spin_lock_bh(&sf->events_lock);
	list_add_tail(&e->node, &sf->events);
	spin_unlock_bh(&sf->events_lock);
	wake_up_interruptible(&sf->wait);
}

/*
 * Queue @e on the file that owns @id; the entry takes its own reference.
 * The id of a request that was not accepted yet reports nothing (its
 * uid would mean nothing to userspace), as with rdma_ucm.
 */
void softcm_event_queue(struct softcm_id *id, struct softcm_event_entry *e)
{
	lockdep_assert_held(&id->mutex);

	if (id->quiet) {
		kfree(e);
		return;
	}
	softcm_id_get(id);
	e->id = id;
	e->ev.handle = id->handle;
	e->ev.uid = id->uid;
	enqueue(id->file, e);
}

/*
 * A CONNECT_REQUEST: the listener's uid, the new id's handle.  Counts
 * against the listener's backlog until it is read.  Consumes a reference
 * on @child, which the caller has published in the listener's file.
 */
void softcm_event_queue_request(struct softcm_id *listener, struct softcm_id *child,
				struct softcm_event_entry *e)
{
	lockdep_assert_held(&listener->mutex);

	softcm_id_get(listener);
	e->id = listener;
	e->child = child;
	e->ev.handle = READ_ONCE(child->handle);
	e->ev.uid = listener->uid;
	atomic_inc(&listener->requests_pending);
	enqueue(listener->file, e);
}

/* Unlink @id's entries from @sf onto @out, in order. */
static void take_entries(struct softcm_file *sf, struct softcm_id *id,
			 struct list_head *out)
{
	struct softcm_event_entry *e, *tmp;

	lockdep_assert_held(&sf->read_mutex);

	spin_lock_bh(&sf->events_lock);
	list_for_each_entry_safe(e, tmp, &sf->events, node) {
		if (e->id == id)
			list_move_tail(&e->node, out);
	}
	spin_unlock_bh(&sf->events_lock);
}

/*
 * Take every queued event of a dying id onto @dead, to be freed with
 * softcm_event_free_list() once the id's mutex is released: an unread
 * request's new id is destroyed with it, and that takes its own mutex.
 */
void softcm_event_purge(struct softcm_id *id, struct list_head *dead)
{
	struct softcm_file *sf = id->file;

	lockdep_assert_held(&id->mutex);

	mutex_lock(&sf->read_mutex);
	take_entries(sf, id, dead);
	mutex_unlock(&sf->read_mutex);
}

void softcm_event_free_list(struct list_head *dead)
{
	struct softcm_event_entry *e, *tmp;
	struct softcm_id *child;
	struct softcm_file *sf;

	list_for_each_entry_safe(e, tmp, dead, node) {
		child = e->child;
		if (child) {
			sf = READ_ONCE(child->file);
			if (softcm_file_unpublish(sf, READ_ONCE(child->handle), child) == child)
				softcm_id_destroy(child, NULL);
		}
		entry_free(e);
	}
}

/*
 * Move @id's queued events from @from to the end of @to's queue, keeping
 * their order, renamed with the id's new handle.  The two files' locks are
 * taken one after the other, never nested.
 */
void softcm_event_move(struct softcm_id *id, struct softcm_file *from,
		       struct softcm_file *to)
{
	struct softcm_event_entry *e;
	LIST_HEAD(moving);

	lockdep_assert_held(&id->mutex);

	mutex_lock(&from->read_mutex);
	take_entries(from, id, &moving);
	mutex_unlock(&from->read_mutex);

	if (list_empty(&moving))
		return;
	list_for_each_entry(e, &moving, node)
		e->ev.handle = id->handle;
	spin_lock_bh(&to->events_lock);
	list_splice_tail(&moving, &to->events);
	spin_unlock_bh(&to->events_lock);
	wake_up_interruptible(&to->wait);
}

static struct softcm_event_entry *first_entry(struct softcm_file *sf)
{
	struct softcm_event_entry *e;

	spin_lock_bh(&sf->events_lock);
	e = list_first_entry_or_null(&sf->events, struct softcm_event_entry, node);
	spin_unlock_bh(&sf->events_lock);
	return e;
}

static bool queue_nonempty(struct softcm_file *sf)
{
	bool ret;

	spin_lock_bh(&sf->events_lock);
	ret = !list_empty(&sf->events);
	spin_unlock_bh(&sf->events_lock);
	return ret;
}

ssize_t softcm_event_read(struct softcm_file *sf, char __user *buf,
			  size_t count, bool nonblock)
{
	struct softcm_event_entry *e;
	size_t done = 0;
	int ret = 0;

	if (count < sizeof(e->ev))
		return -EINVAL;

	for (;;) {
		if (mutex_lock_interruptible(&sf->read_mutex))
			return -ERESTARTSYS;
		e = first_entry(sf);
		if (e)
			break;
		mutex_unlock(&sf->read_mutex);
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(sf->wait, queue_nonempty(sf));
		if (ret)
			return ret;
	}

	/* Only read_mutex holders unlink entries: @e stays valid. */
	while (e && count - done >= sizeof(e->ev)) {
		if (copy_to_user(buf + done, &e->ev, sizeof(e->ev))) {
			ret = -EFAULT;
			break;
		}
		done += sizeof(e->ev);
		spin_lock_bh(&sf->events_lock);
		list_del(&e->node);
		e->id->events_reported++;
		spin_unlock_bh(&sf->events_lock);
		if (e->child)
			atomic_dec(&e->id->requests_pending);
		entry_free(e);
		e = first_entry(sf);
	}
	mutex_unlock(&sf->read_mutex);
	return done ? done : ret;
}

__poll_t softcm_event_poll(struct softcm_file *sf, struct file *filp,
			   poll_table *wait)
{
	poll_wait(filp, &sf->wait, wait);
	return queue_nonempty(sf) ? EPOLLIN | EPOLLRDNORM : 0;
}
