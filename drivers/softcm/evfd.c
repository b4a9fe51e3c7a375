// SPDX-License-Identifier: GPL-2.0
/*
 * Event descriptors, as uverbs' completion channels and async event file:
 * anonymous files whose read() returns fixed-size records, one per
 * reported event, blocking unless O_NONBLOCK, and whose poll() says
 * EPOLLIN while one is queued.
 *
 * A queue (struct softcm_evfd) is kref-counted: its descriptor holds one
 * reference, each CQ attached to a completion channel one, the file one
 * on its async descriptor, and each event entry one from the first time
 * it is queued until its object purges it.  Entries are embedded in the
 * objects they are about, one per object and kind, so that no event is
 * allocated in the completion path and every queue is bounded by the
 * objects of its file; the async queue is bounded again by
 * SOFTCM_MAX_ASYNC_EVENTS, beyond which events are dropped and counted.
 *
 * Closing a descriptor detaches its queue: what is queued is unlinked and
 * later events are dropped.  Closing the file orphans its async queue: a
 * reader that finds it empty gets EIO, as from a disassociated uverbs
 * context.
 */

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "compat.h"
#include "evfd.h"
#include "file.h"
#include "vcmd.h"

#define SOFTCM_MAX_ASYNC_EVENTS	1024
/* records one read() returns at most: the caller reads again for more */
#define EVFD_READ_BATCH		32

struct softcm_evfd {
	struct kref ref;
	spinlock_t lock;		/* the fields below; BH: completions */
	wait_queue_head_t wait;
	struct list_head events;	/* struct softcm_evfd_entry */
	unsigned int nr;
	u32 dropped;			/* events refused: detached or full */
	bool async;
	bool detached;			/* its descriptor is closed */
	bool orphaned;			/* async: its file is closed */
	/*
	 * The cookie of the file it belongs to: the queue may outlive the
	 * file, whose address a later file may then have.
	 */
	u64 owner;
	struct rcu_head rcu;
};

static_assert(sizeof(struct softcm_comp_event) == sizeof(struct softcm_async_event));

static void evfd_release_ref(struct kref *ref)
{
	struct softcm_evfd *q = container_of(ref, struct softcm_evfd, ref);

	WARN_ON_ONCE(!list_empty(&q->events));
	/* softcm_evfd_queue_async() finds the async queue under RCU */
	kfree_rcu(q, rcu);
}

void softcm_evfd_put(struct softcm_evfd *q)
{
	kref_put(&q->ref, evfd_release_ref);
}

static struct softcm_evfd *evfd_alloc(const struct softcm_file *sf, bool async)
{
	struct softcm_evfd *q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);

	if (!q)
		return NULL;
	kref_init(&q->ref);
	spin_lock_init(&q->lock);
	init_waitqueue_head(&q->wait);
	INIT_LIST_HEAD(&q->events);
	q->async = async;
	q->owner = sf->cookie;
	return q;
}

static ssize_t evfd_read(struct file *filp, char __user *buf, size_t count,
			 loff_t *pos)
{
	struct softcm_evfd *q = filp->private_data;
	u8 records[EVFD_READ_BATCH * sizeof(struct softcm_comp_event)];
	const size_t rec = sizeof(struct softcm_comp_event);
	size_t n = min_t(size_t, count / rec, EVFD_READ_BATCH);
	struct softcm_evfd_entry *e;
	size_t i;
	int ret;

	if (!n)
		return -EINVAL;
	spin_lock_bh(&q->lock);
	while (list_empty(&q->events)) {
		bool orphaned = q->orphaned;

		spin_unlock_bh(&q->lock);
		if (orphaned)
			return -EIO;
		if (filp->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(q->wait, !list_empty_careful(&q->events) ||
					       READ_ONCE(q->orphaned));
		if (ret)
			return ret;
		spin_lock_bh(&q->lock);
	}
	for (i = 0; i < n && !list_empty(&q->events); i++) {
		e = list_first_entry(&q->events, struct softcm_evfd_entry, node);
		list_del_init(&e->node);
		q->nr--;
		e->reported++;
		memcpy(records + i * rec, &e->comp, rec);
	}
	spin_unlock_bh(&q->lock);
	/* taken is reported: a reader that faults loses them, as in uverbs */
	if (copy_to_user(buf, records, i * rec))
		return -EFAULT;
	return i * rec;
}

static __poll_t evfd_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct softcm_evfd *q = filp->private_data;
	__poll_t mask = 0;

	poll_wait(filp, &q->wait, wait);
	spin_lock_bh(&q->lock);
	if (!list_empty(&q->events))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (q->orphaned)
		mask |= EPOLLERR;
	spin_unlock_bh(&q->lock);
	return mask;
}

/* The descriptor is closed: nobody can read what is queued, or will be. */
static int evfd_release(struct inode *inode, struct file *filp)
{
	struct softcm_evfd *q = filp->private_data;
	struct softcm_evfd_entry *e, *tmp;

	spin_lock_bh(&q->lock);
	q->detached = true;
	list_for_each_entry_safe(e, tmp, &q->events, node)
		list_del_init(&e->node);
	q->nr = 0;
	spin_unlock_bh(&q->lock);
	softcm_evfd_put(q);
	return 0;
}

static const struct file_operations comp_fops = {
	.owner		= THIS_MODULE,
	.read		= evfd_read,
	.poll		= evfd_poll,
	.release	= evfd_release,
};

static const struct file_operations async_fops = {
	.owner		= THIS_MODULE,
	.read		= evfd_read,
	.poll		= evfd_poll,
	.release	= evfd_release,
};

/*
 * A descriptor for @q in @nf, for vcmd.c to install after the copy-out.
 * The file takes over the caller's reference on @q.
 */
static int evfd_make_fd(struct softcm_evfd *q, const struct file_operations *fops,
			const char *name, struct softcm_newfd *nf)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_getfile(name, fops, q, O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	nf->file = file;
	nf->fd = fd;
	return fd;
}

int softcm_evfd_create_comp_channel(struct softcm_file *sf,
				    struct softcm_create_comp_channel *c,
				    struct softcm_newfd *nf)
{
	struct softcm_evfd *q;
	int fd;

	if (c->reserved0)
		return -EINVAL;
	q = evfd_alloc(sf, false);
	if (!q)
		return -ENOMEM;
	fd = evfd_make_fd(q, &comp_fops, "[softcm-comp]", nf);
	if (fd < 0) {
		softcm_evfd_put(q);
		return fd;
	}
	c->fd = fd;
	return 0;
}

int softcm_evfd_create_async(struct softcm_file *sf,
			     struct softcm_create_async_fd *c,
			     struct softcm_newfd *nf)
{
	struct softcm_evfd *q;
	int fd;

	if (c->reserved0)
		return -EINVAL;
	q = evfd_alloc(sf, true);
	if (!q)
		return -ENOMEM;
	/*
	 * The table's lock makes "one per file" one check-and-set.  The slot
	 * is only reserved here: the file gets its queue once the reply is
	 * out (softcm_evfd_async_done()), so that a reply that faults leaves
	 * the slot free, as it leaves no descriptor.
	 */
	mutex_lock(&sf->uobjs.lock);
	if (rcu_access_pointer(sf->async) || sf->async_reserved) {
		fd = -EEXIST;
		goto err_unlock;
	}
	fd = evfd_make_fd(q, &async_fops, "[softcm-async]", nf);
	if (fd < 0)
		goto err_unlock;
	sf->async_reserved = true;
	mutex_unlock(&sf->uobjs.lock);
	nf->async = q;
	c->fd = fd;
	return 0;

err_unlock:
	mutex_unlock(&sf->uobjs.lock);
	softcm_evfd_put(q);
	return fd;
}

/*
 * The reply of the CREATE_ASYNC_FD that made @q reached userspace (@ok),
 * and its descriptor is about to be installed: @q becomes @sf's async
 * queue.  Or it did not, and the descriptor goes: the slot is free again.
 */
void softcm_evfd_async_done(struct softcm_file *sf, struct softcm_evfd *q, bool ok)
{
	mutex_lock(&sf->uobjs.lock);
	WARN_ON_ONCE(!sf->async_reserved);
	sf->async_reserved = false;
	if (ok) {
		/* the file's reference, beside the descriptor's */
		kref_get(&q->ref);
		rcu_assign_pointer(sf->async, q);
	}
	mutex_unlock(&sf->uobjs.lock);
}

/* @sf is closing: its async queue gets no more events. */
void softcm_evfd_file_release(struct softcm_file *sf)
{
	struct softcm_evfd *q = rcu_replace_pointer(sf->async, NULL, true);

	if (!q)
		return;
	spin_lock_bh(&q->lock);
	q->orphaned = true;
	spin_unlock_bh(&q->lock);
	wake_up_interruptible(&q->wait);
	softcm_evfd_put(q);
}

/*
 * The completion channel @fd of @sf, referenced, or ERR_PTR(-EINVAL) for
 * a descriptor that is not one of @sf's channels.
 */
struct softcm_evfd *softcm_evfd_get_channel(struct softcm_file *sf, int fd)
{
	struct softcm_evfd *q = ERR_PTR(-EINVAL);
	struct fd f = fdget(fd);

	if (fd_empty(f))
		return q;
	if (fd_file(f)->f_op == &comp_fops) {
		struct softcm_evfd *c = fd_file(f)->private_data;

		if (c->owner == sf->cookie) {
			kref_get(&c->ref);
			q = c;
		}
	}
	fdput(f);
	return q;
}

void softcm_evfd_entry_init(struct softcm_evfd_entry *e)
{
	INIT_LIST_HEAD(&e->node);
	e->q = NULL;
	e->reported = 0;
}

/*
 * Queue @e on @q unless it is queued already; @ref is a reference on @q
 * that the entry keeps if it has none yet, else drops.  The caller holds
 * the lock of the object @e belongs to, which serialises its entries.
 */
static bool evfd_queue(struct softcm_evfd *q, struct softcm_evfd_entry *e, bool ref)
{
	bool queued = false;

	spin_lock_bh(&q->lock);
	if (q->detached || (q->async && q->nr >= SOFTCM_MAX_ASYNC_EVENTS)) {
		q->dropped++;
	} else if (list_empty(&e->node)) {
		list_add_tail(&e->node, &q->events);
		q->nr++;
		queued = true;
	}
	spin_unlock_bh(&q->lock);
	if (!e->q) {
		if (!ref)
			kref_get(&q->ref);
		e->q = q;
	} else if (ref) {
		softcm_evfd_put(q);
	}
	if (queued)
		wake_up_interruptible(&q->wait);
	return queued;
}

bool softcm_evfd_queue(struct softcm_evfd *q, struct softcm_evfd_entry *e)
{
	if (WARN_ON_ONCE(e->q && e->q != q))
		return false;
	return evfd_queue(q, e, false);
}

/* Queue @e on @sf's async descriptor, if it has one. */
bool softcm_evfd_queue_async(struct softcm_file *sf, struct softcm_evfd_entry *e)
{
	struct softcm_evfd *q;

	if (e->q)
		return evfd_queue(e->q, e, false);
	rcu_read_lock();
	q = rcu_dereference(sf->async);
	if (q && !kref_get_unless_zero(&q->ref))
		q = NULL;
	rcu_read_unlock();
	return q ? evfd_queue(q, e, true) : false;
}

/*
 * @e's object is being destroyed: unlink @e and drop its reference.
 * Returns how many times @e was reported (read).
 */
u32 softcm_evfd_entry_purge(struct softcm_evfd_entry *e)
{
	struct softcm_evfd *q = e->q;
	u32 reported;

	if (!q)
		return 0;
	spin_lock_bh(&q->lock);
	if (!list_empty(&e->node)) {
		list_del_init(&e->node);
		q->nr--;
	}
	reported = e->reported;
	spin_unlock_bh(&q->lock);
	e->q = NULL;
	softcm_evfd_put(q);
	return reported;
}
