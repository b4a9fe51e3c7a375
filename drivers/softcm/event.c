// SPDX-License-Identifier: GPL-2.0
/*
 * Event queues (struct softcm_evq): what read() and poll() serve.
 *
 * A queue is a passive structure: it links, unlinks, moves and frees
 * entries, and never destroys an id or touches a handle table.  Its
 * reader, the file layer (file.c), decides what becomes of a request's
 * new id, and whoever destroys an id disposes of the entries its purge
 * unlinked.
 *
 * @lock protects the list, and is all that queueing, purging and
 * migration take.  A reader unlinks the entry it delivers (@reading) and
 * copies it with no lock that anyone else needs: @read_mutex only keeps
 * readers of one queue in order.  A purge or migration of that entry's id
 * meanwhile revokes it rather than waiting for the copy, so a reader whose
 * buffer faults for ever stalls nobody but itself; a revoked entry, or one
 * whose copy faulted, goes back where its id now is
 * (softcm_event_requeue()), and is not counted as read: an id's
 * events_reported, read after its purge or move, counts every event of it
 * that read() ever returns from that queue.
 *
 * A CONNECT_REQUEST owns its new id (@child) until it is read: the id is
 * in no handle table before, so it can be neither guessed nor migrated,
 * and it moves with the listener's entries.
 */

#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "event.h"
#include "id.h"
#include "trace.h"

void softcm_evq_init(struct softcm_evq *q)
{
	mutex_init(&q->read_mutex);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->list);
	q->reading = NULL;
	q->reading_revoked = false;
	init_waitqueue_head(&q->wait);
}

/* Every id that queued here was destroyed or moved, and took its entries. */
void softcm_evq_uninit(struct softcm_evq *q)
{
	WARN_ON(!list_empty(&q->list));
	mutex_destroy(&q->read_mutex);
}

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
 * destroy (file.c does) once it holds no id's mutex.
 */
struct softcm_id *softcm_event_free(struct softcm_event_entry *e)
{
	struct softcm_id *child = e->child;

	softcm_id_put(e->id);
	kfree(e);
	return child;
}

static void enqueue(struct softcm_evq *q, struct softcm_event_entry *e)
{
	spin_lock_bh(&q->lock);
	list_add_tail(&e->node, &q->list);
	spin_unlock_bh(&q->lock);
	wake_up_interruptible(&q->wait);
}

/*
 * Queue @e on the queue of @id's file; the entry takes its own reference.
 * The id of a request that was not accepted yet reports nothing (its
 * uid would mean nothing to userspace), as with rdma_ucm.
 */
void softcm_event_queue(struct softcm_id *id, struct softcm_event_entry *e)
{
	lockdep_assert_held(&id->mutex);

	/* Not published (a request not read yet): nobody to tell. */
	if (id->unaccepted || WARN_ON_ONCE(!id->evq)) {
		kfree(e);
		return;
	}
	softcm_id_get(id);
	e->id = id;
	e->ev.handle = id->handle;
	e->ev.uid = id->uid;
	trace_softcm_event(id->net->ns.inum, id->handle, id->cm.local_id,
			   e->ev.event, false);
	enqueue(id->evq, e);
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
	trace_softcm_event(listener->net->ns.inum, listener->handle,
			   child->cm.local_id, e->ev.event, false);
	enqueue(listener->evq, e);
}

/*
 * Unlink @id's entries from @q onto @out, in order.  An entry of @id that
 * @q's reader is copying is revoked: the reader will not count it as
 * read, and gives it back through softcm_event_requeue(), which finds the
 * id destroyed or moved.  So no event of @id is reported from @q after
 * this returns, and @id's events_reported is final for @q.
 */
static void take_entries(struct softcm_evq *q, struct softcm_id *id,
			 struct list_head *out)
{
	struct softcm_event_entry *e, *tmp;

	spin_lock_bh(&q->lock);
	list_for_each_entry_safe(e, tmp, &q->list, node) {
		if (e->id == id)
			list_move_tail(&e->node, out);
	}
	if (q->reading && q->reading->id == id)
		q->reading_revoked = true;
	spin_unlock_bh(&q->lock);
}

/*
 * Unlink every queued event of a dying id onto @dead, for its destroyer
 * to free with softcm_event_free() once the id's mutex is released.  An
 * entry a reader is copying is revoked (take_entries()): its reader frees
 * it, without waiting for it here.
 */
void softcm_event_purge(struct softcm_id *id, struct list_head *dead)
{
	lockdep_assert_held(&id->mutex);

	if (id->evq)
		take_entries(id->evq, id, dead);
}

/*
 * Move @id's queued events from @from to the end of @to, keeping their
 * order; an id's events are renamed with its new handle, but a
 * CONNECT_REQUEST names its new id, which gets a handle only when read.
 * The two queues' locks are taken one after the other, never nested.
 */
void softcm_event_move(struct softcm_id *id, struct softcm_evq *from,
		       struct softcm_evq *to)
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
	spin_lock_bh(&to->lock);
	list_splice_tail(&moving, &to->list);
	spin_unlock_bh(&to->lock);
	wake_up_interruptible(&to->wait);
}

/*
 * Wake @q's readers and pollers with nothing queued: MIGRATE_ID does, so
 * that a poller sees records its user moved along with an id and counts
 * in its shared page (evpage.c), even when no queued event moved.
 */
void softcm_event_wake(struct softcm_evq *q)
{
	wake_up_interruptible(&q->wait);
}

/* Unlink the oldest entry, for @q's reader to deliver. */
struct softcm_event_entry *softcm_event_take(struct softcm_evq *q)
{
	struct softcm_event_entry *e;

	lockdep_assert_held(&q->read_mutex);

	spin_lock_bh(&q->lock);
	e = list_first_entry_or_null(&q->list, struct softcm_event_entry, node);
	if (e) {
		list_del_init(&e->node);
		q->reading = e;
		q->reading_revoked = false;
	}
	spin_unlock_bh(&q->lock);
	return e;
}

/*
 * End the read of @e, which @q's reader took; @ret says how its copy
 * went.  It counts as read unless that failed or a destroy or migration
 * of its id revoked it meanwhile (-EAGAIN: the record copied does not
 * count, the next one overwrites it): then the reader gives it back with
 * softcm_event_requeue().
 */
int softcm_event_end_read(struct softcm_evq *q, struct softcm_event_entry *e,
			  int ret)
{
	lockdep_assert_held(&q->read_mutex);

	/* Read, unless revoked: then it is the id's destroyer's or mover's. */
	spin_lock_bh(&q->lock);
	q->reading = NULL;
	if (!ret && q->reading_revoked)
		ret = -EAGAIN;
	if (!ret)
		atomic_inc(&e->id->events_reported);
	spin_unlock_bh(&q->lock);
	return ret;
}

/*
 * Put @e back into @to, where @e's id was migrated while @e was being
 * read elsewhere: before the id's first entry there, since every event of
 * the id that @to holds (moved with the id, or queued after) is newer.
 */
static void requeue_moved(struct softcm_evq *to, struct softcm_event_entry *e)
{
	struct softcm_event_entry *pos;

	lockdep_assert_held(&to->lock);

	list_for_each_entry(pos, &to->list, node) {
		if (pos->id == e->id) {
			list_add_tail(&e->node, &pos->node);
			return;
		}
	}
	list_add_tail(&e->node, &to->list);
}

/*
 * An entry @q's reader took and could not deliver goes back where its id
 * is now: the head of @q, or before the id's other events in the queue of
 * the file the id was migrated to meanwhile; or it is freed if the id was
 * destroyed meanwhile
 * (its purge could not see it), and then the new id of a CONNECT_REQUEST
 * is returned for the caller to destroy, as after a purge.  Under the
 * id's mutex, which orders this against migration and destroy, and
 * guarantees that the id's queue is alive while the id is not DESTROYING.
 */
struct softcm_id *softcm_event_requeue(struct softcm_evq *q,
				       struct softcm_event_entry *e)
{
	struct softcm_id *id = e->id;
	struct softcm_evq *to;

	lockdep_assert_held(&q->read_mutex);

	mutex_lock(&id->mutex);
	to = id->state == SOFTCM_STATE_DESTROYING ? NULL : id->evq;
	if (to) {
		spin_lock_bh(&to->lock);
		if (to == q) {
			list_add(&e->node, &to->list);
		} else {
			if (!e->child)
				e->ev.handle = id->handle;
			requeue_moved(to, e);
		}
		spin_unlock_bh(&to->lock);
		wake_up_interruptible(&to->wait);
	}
	mutex_unlock(&id->mutex);
	if (to)
		return NULL;
	if (e->child)
		atomic_dec(&id->requests_pending);
	return softcm_event_free(e);
}

static bool queue_nonempty(struct softcm_evq *q)
{
	bool ret;

	spin_lock_bh(&q->lock);
	ret = !list_empty(&q->list);
	spin_unlock_bh(&q->lock);
	return ret;
}

/* For a reader that found @q empty, without @q->read_mutex. */
int softcm_event_wait(struct softcm_evq *q)
{
	return wait_event_interruptible(q->wait, queue_nonempty(q));
}

__poll_t softcm_event_poll(struct softcm_evq *q, struct file *filp,
			   poll_table *wait)
{
	poll_wait(filp, &q->wait, wait);
	return queue_nonempty(q) ? EPOLLIN | EPOLLRDNORM : 0;
}
