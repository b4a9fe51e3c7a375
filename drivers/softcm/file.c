// SPDX-License-Identifier: GPL-2.0
/*
 * Per-open contexts, their handle tables, and the lives of ids there.
 *
 * Handles are allocated per file (xa_alloc, from 1), so a file can only
 * ever name its own ids.  The table holds a reference on each id it
 * publishes; unpublishing is a compare-and-exchange, so that exactly one
 * of destroy, close and migration takes an id out and owns that reference.
 *
 * This is the layer that knows every part of an id, so it creates ids for
 * CREATE_ID and destroys every id, in one sequence
 * (softcm_file_destroy_id()); the layers below only set up and tear down
 * their own part.
 */

#include <linux/cred.h>
#include <linux/lockdep.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#include "addr.h"
#include "bind.h"
#include "cm.h"
#include "backlog.h"
#include "event.h"
#include "file.h"
#include "id.h"
#include "netns.h"
#include "port.h"
#include "route.h"
#include "trace.h"
#include "uobj.h"

struct softcm_file *softcm_file_create(struct net *net)
{
	static atomic64_t cookies = ATOMIC64_INIT(0);
	struct softcm_file *sf;

	sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);
	if (!sf)
		return NULL;
	sf->cookie = atomic64_inc_return(&cookies);
	sf->net = get_net(net);
	atomic_inc(&softcm_net(net)->nr_files);
	sf->owner = get_pid(task_tgid(current));
	sf->uid = current_euid();
	xa_init_flags(&sf->ids, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	atomic_set(&sf->nr_ids, 0);
	softcm_evq_init(&sf->evq);
	softcm_uobjs_init(&sf->uobjs, softcm_net(net));
	xa_init_flags(&sf->rings, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	pr_debug("file %p created in netns %u\n", sf, net->ns.inum);
	return sf;
}

/* Reserve a handle in @sf, counted against the namespace's limit. */
static int reserve_handle(struct softcm_file *sf, u32 *handle)
{
	int max = READ_ONCE(softcm_net(sf->net)->max_ids_per_file);
	int ret;

	if (atomic_inc_return(&sf->nr_ids) > max) {
		atomic_dec(&sf->nr_ids);
		return -EMFILE;
	}
	ret = xa_alloc(&sf->ids, handle, NULL, xa_limit_31b, GFP_KERNEL_ACCOUNT);
	if (ret) {
		atomic_dec(&sf->nr_ids);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	return 0;
}

static void cancel_handle(struct softcm_file *sf, u32 handle)
{
	xa_release(&sf->ids, handle);
	atomic_dec(&sf->nr_ids);
}

/*
 * Publish @id under its reserved @handle; the table takes over the
 * caller's reference.  The caller has made @sf the id's owner
 * (set_owner()); id->handle is set first: from the store on, another
 * thread may find the id by guessing its handle, and even destroy it.
 */
static void commit_handle(struct softcm_file *sf, struct softcm_id *id, u32 handle)
{
	WRITE_ONCE(id->handle, handle);
	xa_store(&sf->ids, handle, id, 0);
}

/*
 * Take @expected out of the table if it is still there under @handle; the
 * caller then owns the table's reference.  Returns what was there.
 */
static struct softcm_id *unpublish(struct softcm_file *sf, u32 handle,
				   struct softcm_id *expected)
{
	return xa_cmpxchg(&sf->ids, handle, expected, NULL, 0);
}

/* A new reference on this file's id @handle, or ERR_PTR(-ENOENT). */
static struct softcm_id *get_id(struct softcm_file *sf, u32 handle)
{
	struct softcm_id *id;

	xa_lock(&sf->ids);
	id = xa_load(&sf->ids, handle);
	if (id)
		softcm_id_get(id);
	xa_unlock(&sf->ids);
	return id ?: ERR_PTR(-ENOENT);
}

/*
 * Last close: nobody else can reach this file any more, but a concurrent
 * MIGRATE_ID issued on another file may still be taking an id out of it;
 * the compare-and-exchange decides which of us destroys or keeps it.
 * Only this file's own read() and ioctls publish into it (a request's new
 * id gets its handle when its CONNECT_REQUEST is read), so one sweep
 * empties it; the loop is a guard.  Destroying a listener frees its unread
 * requests, and their new ids with them.
 */
void softcm_file_release(struct softcm_file *sf)
{
	struct softcm_id *id;
	unsigned long handle;

	do {
		xa_for_each(&sf->ids, handle, id) {
			if (unpublish(sf, handle, id) == id)
				softcm_file_destroy_id(id, NULL);
		}
	} while (!xa_empty(&sf->ids));
	softcm_uobjs_release(&sf->uobjs);
	/* each object unpublished its rings as it was destroyed */
	WARN_ON(!xa_empty(&sf->rings));
	xa_destroy(&sf->rings);
	softcm_evq_uninit(&sf->evq);
	kfree(sf->read_scratch);
	xa_destroy(&sf->ids);
	pr_debug("file %p destroyed\n", sf);
	atomic_dec(&softcm_net(sf->net)->nr_files);
	put_pid(sf->owner);
	put_net(sf->net);
	kfree(sf);
}

/*
 * The id @handle of @sf, referenced and locked, unless it is being
 * destroyed or has left @sf.  Release with softcm_id_unlock_put().
 */
struct softcm_id *softcm_file_get_locked(struct softcm_file *sf, u32 handle)
{
	struct softcm_id *id = get_id(sf, handle);

	if (IS_ERR(id))
		return id;
	mutex_lock(&id->mutex);
	if (id->state == SOFTCM_STATE_DESTROYING || id->file != sf) {
		softcm_id_unlock_put(id);
		return ERR_PTR(-ENOENT);
	}
	return id;
}

/* @id belongs to @sf from now on: under its mutex, or before it is found. */
static void set_owner(struct softcm_id *id, struct softcm_file *sf)
{
	WRITE_ONCE(id->file, sf);
	WRITE_ONCE(id->evq, &sf->evq);
}

/*
 * CREATE_ID: a new id of @sf, published under *@handle.  From the commit
 * on, another thread may guess the handle and destroy the id: only the
 * handle is the caller's.
 */
int softcm_file_create_id(struct softcm_file *sf, u16 ps, u64 uid, u32 *handle)
{
	struct softcm_id *id;
	int ret;

	id = softcm_id_create(sf->net, ps, uid);
	if (IS_ERR(id))
		return PTR_ERR(id);
	softcm_cm_id_init(id);

	ret = reserve_handle(sf, handle);
	if (ret) {
		softcm_id_abort(id);
		return ret;
	}
	/* Nothing fails from here: only now may the namespace list it. */
	WRITE_ONCE(id->handle, *handle);
	set_owner(id, sf);
	softcm_id_register(id);
	commit_handle(sf, id, *handle);
	return 0;
}

/*
 * The CM's one way into user context (cmproto.h): @child, the new, locked
 * id of a connection request to @listener, announced by @e, the
 * CONNECT_REQUEST the CM filled in.  The entry owns the child until it is
 * read, when it gets a handle in the reader's file (deliver()); until
 * then it is in no handle table, so it can be neither guessed nor
 * migrated.  Unlocks @child; the caller's reference on it is consumed.
 */
void softcm_file_publish_request(struct softcm_id *listener, struct softcm_id *child,
				 struct softcm_event_entry *e)
{
	lockdep_assert_held(&listener->mutex);
	lockdep_assert_held(&child->mutex);

	mutex_unlock(&child->mutex);
	softcm_event_queue_request(listener, child, e);
}

/*
 * Free the entries a destroy unlinked from its id's queue.  An unread
 * CONNECT_REQUEST takes its new id with it: that id was in no handle
 * table, and the entry's reference was its last owner.
 */
static void free_dead(struct softcm_id *id, struct list_head *dead)
{
	struct softcm_event_entry *e, *tmp;
	struct softcm_id *child;

	list_for_each_entry_safe(e, tmp, dead, node) {
		if (e->child)
			atomic_dec(&id->requests_pending);
		child = softcm_event_free(e);
		if (child)
			softcm_file_destroy_id(child, NULL);
	}
}

/*
 * Called once, by the context that owns the id's last handle: the one that
 * unpublished it, or, for a request's new id never read, whoever freed its
 * CONNECT_REQUEST.  Returns through @events_reported how many of the id's
 * events userspace has read, for the library's wait for their
 * acknowledgment.
 *
 * Each layer lets go of the id under its mutex, in this order: state
 * DESTROYING (a command that found the id earlier fails with ENOENT), its
 * resolution, its connection, its port, its queued events, the
 * namespace's list.  The unread requests of a listener die with it after
 * its mutex is released; their new ids have no events of their own (they
 * are unaccepted and unpublished), so this recurses exactly one level.
 */
void softcm_file_destroy_id(struct softcm_id *id, u32 *events_reported)
{
	LIST_HEAD(dead);

	mutex_lock(&id->mutex);
	softcm_id_force_state(id, SOFTCM_STATE_DESTROYING);
	softcm_addr_cancel(id);
	softcm_cm_destroy(id);
	softcm_port_release(id);
	softcm_event_purge(id, &dead);
	softcm_id_unregister(id);
	if (events_reported)
		*events_reported = atomic_read(&id->events_reported);
	if (id->file)
		atomic_dec(&id->file->nr_ids);
	mutex_unlock(&id->mutex);
	softcm_backlog_flush(id);
	free_dead(id, &dead);
	softcm_id_put(id);
}

/*
 * DESTROY_ID: take the id @handle out of @sf and destroy it.  -ENOENT if
 * it is not there, or if a concurrent destroy, close or migration took it
 * out first: that winner destroys or keeps it.
 */
int softcm_file_destroy_handle(struct softcm_file *sf, u32 handle,
			       u32 *events_reported)
{
	struct softcm_id *id = get_id(sf, handle);
	int ret = 0;

	if (IS_ERR(id))
		return PTR_ERR(id);
	if (unpublish(sf, handle, id) == id)
		softcm_file_destroy_id(id, events_reported);
	else
		ret = -ENOENT;
	softcm_id_put(id);
	return ret;
}

/*
 * SET_OPTION level SOFTCM_OPTION_FILE.  The format is read once at the
 * start of each read(), so a read() already under way keeps the one it
 * started with, and its records are all of one size.
 */
int softcm_file_set_option(struct softcm_file *sf, u32 optname, u32 value)
{
	switch (optname) {
	case SOFTCM_OPTION_FILE_EVENT_FORMAT:
		if (value != SOFTCM_EVENT_FORMAT_BASIC && value != SOFTCM_EVENT_FORMAT_FULL)
			return -EINVAL;
		WRITE_ONCE(sf->event_format, value);
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

static size_t record_size(u32 format)
{
	return format == SOFTCM_EVENT_FORMAT_FULL ? sizeof(struct softcm_event_full) :
						    sizeof(struct softcm_event);
}

/*
 * The rest of a full record of @e: what QUERY_ADDR and QUERY_ROUTE would
 * answer now about its id (a CONNECT_REQUEST's new id), asked of the same
 * functions under the same lock, the id's mutex, which the reader takes
 * inside its read_mutex as softcm_event_requeue() does.  Absent parts
 * stay zero; so does all of it for an id being destroyed, whose record
 * its revocation will discard anyway.
 */
static void fill_full(struct softcm_event_full *rec, struct softcm_event_entry *e)
{
	struct softcm_id *id = e->child ?: e->id;
	struct sockaddr_storage ss;

	memset(rec, 0, sizeof(*rec));
	rec->ev = e->ev;

	mutex_lock(&id->mutex);
	if (id->state == SOFTCM_STATE_DESTROYING)
		goto out;
	if (!softcm_id_query_addr(id, SOFTCM_QUERY_LOCAL, &ss)) {
		rec->local_len = softcm_addr_size(&ss);
		memcpy(&rec->local, &ss, rec->local_len);
		rec->flags |= SOFTCM_EVENT_HAS_LOCAL;
	}
	if (!softcm_id_query_addr(id, SOFTCM_QUERY_PEER, &ss)) {
		rec->peer_len = softcm_addr_size(&ss);
		memcpy(&rec->peer, &ss, rec->peer_len);
		rec->flags |= SOFTCM_EVENT_HAS_PEER;
	}
	if (!softcm_id_query_route(id, &rec->route)) {
		rec->route.handle = e->ev.handle;
		rec->flags |= SOFTCM_EVENT_HAS_ROUTE;
	} else {
		memset(&rec->route, 0, sizeof(rec->route));
	}
out:
	mutex_unlock(&id->mutex);
}

/*
 * Deliver @e, which @sf's reader took, to @ubuf, as a record of @full's
 * format: @full is the reader's scratch for a full record, NULL for a
 * basic one.  A CONNECT_REQUEST's new id is published in @sf under the
 * handle the record names: reserved before the copy, committed only once
 * the record is out.  On failure, or when a destroy or a migration of its
 * id revoked it meanwhile (-EAGAIN), @e is given back; on success it is
 * consumed.
 */
static int deliver(struct softcm_file *sf, struct softcm_event_entry *e,
		   char __user *ubuf, struct softcm_event_full *full)
{
	struct softcm_id *child = e->child;
	/* the connection's comm ID, for the trace: read before the id is public */
	u32 comm_id = READ_ONCE((child ?: e->id)->cm.local_id);
	bool reserved = false;
	u32 handle = 0;
	int ret = 0;

	if (child) {
		/* A full file refuses the request as accept(2) does: EMFILE, queued. */
		ret = reserve_handle(sf, &handle);
		reserved = !ret;
		e->ev.handle = handle;
	}
	if (!ret && full) {
		fill_full(full, e);
		if (copy_to_user(ubuf, full, sizeof(*full)))
			ret = -EFAULT;
	} else if (!ret && copy_to_user(ubuf, &e->ev, sizeof(e->ev))) {
		ret = -EFAULT;
	}
	ret = softcm_event_end_read(&sf->evq, e, ret);
	if (ret) {
		if (reserved)
			cancel_handle(sf, handle);
		/* Its id was destroyed meanwhile: a request's new id goes too. */
		child = softcm_event_requeue(&sf->evq, e);
		if (child)
			softcm_file_destroy_id(child, NULL);
		return ret;
	}
	if (child) {
		e->child = NULL;
		mutex_lock(&child->mutex);
		set_owner(child, sf);
		WRITE_ONCE(child->handle, handle);
		mutex_unlock(&child->mutex);
		/* The table takes over the entry's reference. */
		commit_handle(sf, child, handle);
		atomic_dec(&e->id->requests_pending);
		/* A backlog slot is free: the oldest held request takes it. */
		softcm_backlog_promote(e->id);
	}
	trace_softcm_event(sf->net->ns.inum, e->ev.handle, comm_id, e->ev.event, true);
	softcm_event_free(e);
	return 0;
}

/*
 * read(): whole records of the file's format, as many as fit; waits for
 * the first unless @nonblock.  Readers of one file go one at a time (the
 * queue's read_mutex), and copy with no lock that anyone else takes.
 */
ssize_t softcm_file_read(struct softcm_file *sf, char __user *buf,
			 size_t count, bool nonblock)
{
	struct softcm_evq *q = &sf->evq;
	struct softcm_event_full *full = NULL;
	struct softcm_event_entry *e;
	size_t done = 0, size;
	int ret = 0;

	if (mutex_lock_interruptible(&q->read_mutex))
		return -ERESTARTSYS;
	size = record_size(READ_ONCE(sf->event_format));
	if (count < size) {
		ret = -EINVAL;
		goto out;
	}
	if (size == sizeof(*full)) {
		/* Too big for the stack: the file's, kept for its next reads. */
		if (!sf->read_scratch)
			sf->read_scratch = kmalloc(sizeof(*full), GFP_KERNEL_ACCOUNT);
		full = sf->read_scratch;
		if (!full) {
			ret = -ENOMEM;
			goto out;
		}
	}
	while (count - done >= size) {
		e = softcm_event_take(q);
		if (!e) {
			if (done)
				break;
			if (nonblock) {
				ret = -EAGAIN;
				break;
			}
			mutex_unlock(&q->read_mutex);
			ret = softcm_event_wait(q);
			if (!ret && mutex_lock_interruptible(&q->read_mutex))
				ret = -ERESTARTSYS;
			if (ret)
				return ret;
			continue;
		}
		ret = deliver(sf, e, buf + done, full);
		if (ret == -EAGAIN)
			continue;	/* revoked: as if it had never been queued */
		if (ret)
			break;
		done += size;
	}
out:
	mutex_unlock(&q->read_mutex);
	return done ? done : ret;
}

/*
 * MIGRATE_ID, issued on @to: @from's id @handle moves to @to, under
 * *@new_handle, with its queued events.  The id keeps its identity and
 * state; it gets a handle in @to before it leaves @from, so that a
 * failure leaves it where it was.  *@events_reported is how many of its
 * events userspace has read, final for @from once they moved.
 */
int softcm_file_migrate(struct softcm_file *to, struct softcm_file *from,
			u32 handle, u32 *new_handle, u32 *events_reported)
{
	struct softcm_id *id;
	u32 new;
	int ret;

	id = softcm_file_get_locked(from, handle);
	if (IS_ERR(id))
		return PTR_ERR(id);

	if (from == to) {
		new = handle;
		ret = 0;
		goto out;
	}
	/*
	 * Reserve here, take the id out of @from, then publish it here: the
	 * id is in exactly one table at any time, so exactly one context can
	 * ever own a table's reference and destroy it.
	 */
	ret = reserve_handle(to, &new);
	if (ret)
		goto out;
	if (unpublish(from, handle, id) != id) {
		/* Destroyed or closed under us; the winner waits for us. */
		cancel_handle(to, new);
		ret = -ENOENT;
		goto out;
	}
	atomic_dec(&from->nr_ids);
	set_owner(id, to);
	commit_handle(to, id, new);	/* takes the old table's reference */
	softcm_event_move(id, &from->evq, &to->evq);
out:
	if (!ret) {
		*new_handle = new;
		*events_reported = atomic_read(&id->events_reported);
	}
	softcm_id_unlock_put(id);
	return ret;
}
