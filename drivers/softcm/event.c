// SPDX-License-Identifier: GPL-2.0
/*
 * Events: the per-file queue that read() and poll() serve.
 *
 * @events_lock protects the list, and is all that queueing, purging and
 * migration take.  A reader unlinks the entry it delivers (@reading) and
 * copies it with no lock that anyone else needs: @read_mutex only keeps
 * readers of one file in order.  A purge or migration of that entry's id
 * meanwhile revokes it rather than waiting for the copy, so a reader whose
 * buffer faults for ever stalls nobody but itself; a revoked entry, or one
 * whose copy faulted, goes back where its id now is (requeue()), and is
 * not counted as read: an id's events_reported, read after its purge or
 * move, counts every event of it that read() ever returns from that file.
 *
 * A CONNECT_REQUEST owns its new id (@child) until it is read: the id is
 * in no handle table before, so it can be neither guessed nor migrated,
 * and it moves with the listener's entries.  Reading gives it a handle in
 * the reader's file, reserved before the copy and published only once the
 * copy succeeded.
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

/*
 * Free an entry that will not be read (or was); returns the new id of an
 * unread CONNECT_REQUEST, whose reference the caller now owns and must
 * dispose of with softcm_file_destroy_id() once it holds no id's mutex.
 */
struct softcm_id *softcm_event_free(struct softcm_event_entry *e)
{
	struct softcm_id *child = e->child;

	softcm_id_put(e->id);
	kfree(e);
	return child;
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

	/* Not published (a request not read yet): nobody to tell. */
	if (id->quiet || WARN_ON_ONCE(!id->file)) {
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
 * A CONNECT_REQUEST: the listener's uid; the new id's handle is given when
 * it is read.  Counts against the listener's backlog until then.  Consumes
 * the caller's reference on @child, which is in no handle table: the entry
 * owns it.
 */
void softcm_event_queue_request(struct softcm_id *listener, struct softcm_id *child,
				struct softcm_event_entry *e)
{
	lockdep_assert_held(&listener->mutex);

	softcm_id_get(listener);
	e->id = listener;
	e->child = child;
	e->ev.uid = listener->uid;
	atomic_inc(&listener->requests_pending);
	enqueue(listener->file, e);
}

/*
 * Unlink @id's entries from @sf onto @out, in order.  An entry of @id that
 * @sf's reader is copying is revoked: the reader will not count it as
 * read, and gives it back through requeue(), which finds the id destroyed
 * or moved.  So no event of @id is reported from @sf after this returns,
 * and @id's events_reported is final for @sf.
 */
static void take_entries(struct softcm_file *sf, struct softcm_id *id,
			 struct list_head *out)
{
	struct softcm_event_entry *e, *tmp;

	spin_lock_bh(&sf->events_lock);
	list_for_each_entry_safe(e, tmp, &sf->events, node) {
		if (e->id == id)
			list_move_tail(&e->node, out);
	}
	if (sf->reading && sf->reading->id == id)
		sf->reading_revoked = true;
	spin_unlock_bh(&sf->events_lock);
}

/*
 * Take every queued event of a dying id onto @dead; the caller frees them
 * with softcm_event_free() once the id's mutex is released, destroying the
 * new ids of unread requests.  An entry a reader is copying is revoked
 * (take_entries()): its reader frees it, without waiting for it here.
 */
void softcm_event_purge(struct softcm_id *id, struct list_head *dead)
{
	lockdep_assert_held(&id->mutex);

	if (id->file)
		take_entries(id->file, id, dead);
}

/*
 * Move @id's queued events from @from to the end of @to's queue, keeping
 * their order; an id's events are renamed with its new handle, but a
 * CONNECT_REQUEST names its new id, which gets a handle only when read.
 * The two files' locks are taken one after the other, never nested.
 */
void softcm_event_move(struct softcm_id *id, struct softcm_file *from,
		       struct softcm_file *to)
{
	struct softcm_event_entry *e;
	LIST_HEAD(moving);

	lockdep_assert_held(&id->mutex);

	take_entries(from, id, &moving);
	if (list_empty(&moving))
		return;
	list_for_each_entry(e, &moving, node)
		if (!e->child)
			e->ev.handle = id->handle;
	spin_lock_bh(&to->events_lock);
	list_splice_tail(&moving, &to->events);
	spin_unlock_bh(&to->events_lock);
	wake_up_interruptible(&to->wait);
}

/* Unlink the oldest entry, for @sf's reader (read_mutex) to deliver. */
static struct softcm_event_entry *take_first(struct softcm_file *sf)
{
	struct softcm_event_entry *e;

	lockdep_assert_held(&sf->read_mutex);

	spin_lock_bh(&sf->events_lock);
	e = list_first_entry_or_null(&sf->events, struct softcm_event_entry, node);
	if (e) {
		list_del_init(&e->node);
		sf->reading = e;
		sf->reading_revoked = false;
	}
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

/*
 * An entry @sf's reader took and could not deliver goes back where its id
 * is now: the head of @sf's queue, or the tail of the file the id was
 * migrated to meanwhile; or it is freed if the id was destroyed meanwhile
 * (its purge could not see it).  Under the id's mutex, which orders this
 * against migration and destroy, and guarantees that the id's file is
 * alive while the id is not DESTROYING.
 */
static void requeue(struct softcm_file *sf, struct softcm_event_entry *e)
{
	struct softcm_id *id = e->id, *child = NULL;
	struct softcm_file *to;

	mutex_lock(&id->mutex);
	to = id->state == SOFTCM_STATE_DESTROYING ? NULL : id->file;
	if (to) {
		spin_lock_bh(&to->events_lock);
		if (to == sf) {
			list_add(&e->node, &to->events);
		} else {
			if (!e->child)
				e->ev.handle = id->handle;
			list_add_tail(&e->node, &to->events);
		}
		spin_unlock_bh(&to->events_lock);
		wake_up_interruptible(&to->wait);
	}
	mutex_unlock(&id->mutex);
	if (!to) {
		if (e->child)
			atomic_dec(&id->requests_pending);
		child = softcm_event_free(e);
		if (child)
			softcm_file_destroy_id(child, NULL);
	}
}

/*
 * Copy @e to @ubuf; a CONNECT_REQUEST's new id is published in @sf under
 * the handle the record names, once the record is out.  On failure, or
 * when a destroy or a migration of its id revoked it meanwhile (-EAGAIN:
 * the record in @ubuf does not count, the next one overwrites it), @e is
 * given back (requeue()); on success it is consumed.
 */
static int deliver(struct softcm_file *sf, struct softcm_event_entry *e,
		   char __user *ubuf)
{
	struct softcm_id *child = e->child;
	bool revoked, reserved = false;
	u32 handle = 0;
	int ret = 0;

	if (child) {
		/* A full file refuses the request as accept(2) does: EMFILE, queued. */
		ret = softcm_file_reserve(sf, &handle);
		reserved = !ret;
		e->ev.handle = handle;
	}
	if (!ret && copy_to_user(ubuf, &e->ev, sizeof(e->ev)))
		ret = -EFAULT;

	/* Read, unless revoked: then it is the id's destroyer's or mover's. */
	spin_lock_bh(&sf->events_lock);
	revoked = sf->reading_revoked;
	sf->reading = NULL;
	if (!ret && revoked)
		ret = -EAGAIN;
	if (!ret)
		atomic_inc(&e->id->events_reported);
	spin_unlock_bh(&sf->events_lock);

	if (ret) {
		if (reserved)
			softcm_file_cancel(sf, handle);
		requeue(sf, e);
		return ret;
	}
	if (child) {
		e->child = NULL;
		mutex_lock(&child->mutex);
		WRITE_ONCE(child->file, sf);
		WRITE_ONCE(child->handle, handle);
		mutex_unlock(&child->mutex);
		/* The table takes over the entry's reference. */
		softcm_file_commit(sf, child, handle);
		atomic_dec(&e->id->requests_pending);
	}
	softcm_event_free(e);
	return 0;
}

ssize_t softcm_event_read(struct softcm_file *sf, char __user *buf,
			  size_t count, bool nonblock)
{
	struct softcm_event_entry *e;
	size_t done = 0;
	int ret = 0;

	if (count < sizeof(e->ev))
		return -EINVAL;

	if (mutex_lock_interruptible(&sf->read_mutex))
		return -ERESTARTSYS;
	while (count - done >= sizeof(e->ev)) {
		e = take_first(sf);
		if (!e) {
			if (done)
				break;
			if (nonblock) {
				ret = -EAGAIN;
				break;
			}
			mutex_unlock(&sf->read_mutex);
			ret = wait_event_interruptible(sf->wait, queue_nonempty(sf));
			if (ret)
				return ret;
			if (mutex_lock_interruptible(&sf->read_mutex))
				return -ERESTARTSYS;
			continue;
		}
		ret = deliver(sf, e, buf + done);
		if (ret == -EAGAIN)
			continue;	/* revoked: as if it had never been queued */
		if (ret)
			break;
		done += sizeof(e->ev);
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
