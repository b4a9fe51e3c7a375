// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.  The completions are a ring the owner maps
 * (uapi/linux/softcm.h, "Rings"): the kernel writes the completion slots
 * and its producer index, which the user maps read-only, and reads the
 * user's consumer index only as a count bounded by the ring.  The
 * completion path (softcm_cq_push(), called by QPs and later by the data
 * path in softirq) takes only the CQ's spinlock and its channel's.
 * POLL_CQ reads the same ring under a mutex of its own and retires
 * completions only once they reached userspace, so that a faulting
 * poller loses nothing.
 *
 * Notification follows IBTA 11.4.2: REQ_NOTIFY_CQ arms the CQ for the next
 * completion, or for the next solicited one (a solicited receive, or any
 * completion in error); the completion that matches disarms it and queues
 * one event on the CQ's channel.  An event already queued and not yet read
 * is not queued twice.
 */

#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "cq.h"
#include "evfd.h"
#include "file.h"
#include "limits.h"
#include "netns.h"
#include "ring.h"
#include "uobj.h"

/* completions one POLL_CQ copies per round of its loop */
#define CQ_POLL_CHUNK	8
/* a completion slot: a struct softcm_wc, on a cache line of its own */
#define CQE_STRIDE	64
#define CQE_OFFSET	sizeof(struct softcm_cq_kpage)

static_assert(sizeof(struct softcm_wc) <= CQE_STRIDE);
static_assert(sizeof(struct softcm_cq_kpage) == 64);
static_assert(sizeof(struct softcm_cq_upage) == 64);

static struct softcm_wc *cqe_slot(struct softcm_cq *cq, u32 i)
{
	return (struct softcm_wc *)(cq->cqes + (size_t)(i & (cq->entries - 1)) * CQE_STRIDE);
}

static void cq_destroy(struct softcm_uobj *obj)
{
	struct softcm_cq *cq = softcm_cq_of(obj);

	spin_lock_bh(&cq->lock);
	cq->dead = true;
	spin_unlock_bh(&cq->lock);
	/* nothing queues an entry of a dead CQ: these are final */
	cq->comp_reported = softcm_evfd_entry_purge(&cq->comp_ev);
	cq->async_reported = softcm_evfd_entry_purge(&cq->async_ev);
	if (cq->channel) {
		softcm_evfd_put(cq->channel);
		cq->channel = NULL;
	}
	softcm_ring_unpublish(cq->sf, cq->kring);
	softcm_ring_unpublish(cq->sf, cq->uring);
	atomic_dec(&softcm_net(cq->sf->net)->nr_cqs);
}

static void cq_free(struct softcm_uobj *obj)
{
	struct softcm_cq *cq = softcm_cq_of(obj);

	/* mappings keep the memory they hold */
	softcm_ring_put(cq->uring);
	softcm_ring_put(cq->kring);
	mutex_destroy(&cq->poll_mutex);
	kfree_rcu(cq, rcu);
}

static const struct softcm_uobj_ops cq_ops = {
	.destroy = cq_destroy,
	.free = cq_free,
};

/* The two rings of @cq, holding @c->cqe completions, described in @c. */
static int cq_alloc_rings(struct softcm_file *sf, struct softcm_cq *cq,
			  struct softcm_create_cq *c)
{
	cq->entries = roundup_pow_of_two(c->cqe);
	cq->kring = softcm_ring_alloc(sf, CQE_OFFSET + (size_t)cq->entries * CQE_STRIDE, true);
	if (IS_ERR(cq->kring))
		return PTR_ERR(cq->kring);
	cq->uring = softcm_ring_alloc(sf, sizeof(*cq->upage), false);
	if (IS_ERR(cq->uring)) {
		softcm_ring_put(cq->kring);
		return PTR_ERR(cq->uring);
	}
	cq->kpage = cq->kring->vaddr;
	cq->cqes = (u8 *)cq->kring->vaddr + CQE_OFFSET;
	cq->upage = cq->uring->vaddr;
	c->ring.offset = CQE_OFFSET;
	c->ring.entries = cq->entries;
	c->ring.stride = CQE_STRIDE;
	c->ring.reserved0 = 0;
	return 0;
}

static void cq_unpublish(struct softcm_file *sf, struct softcm_cq *cq)
{
	softcm_ring_unpublish(sf, cq->uring);
	softcm_ring_unpublish(sf, cq->kring);
}

static int cq_publish(struct softcm_file *sf, struct softcm_cq *cq, struct softcm_create_cq *c)
{
	int ret;

	ret = softcm_ring_publish(sf, cq->kring, &c->kmap);
	if (ret)
		return ret;
	ret = softcm_ring_publish(sf, cq->uring, &c->umap);
	if (ret)
		softcm_ring_unpublish(sf, cq->kring);
	return ret;
}

int softcm_cq_create(struct softcm_file *sf, struct softcm_create_cq *c)
{
	struct softcm_evfd *channel = NULL;
	struct softcm_cq *cq;
	int ret;

	if (c->cqe < 1 || c->cqe > SOFTCM_MAX_CQE || c->comp_vector)
		return -EINVAL;
	if (c->channel_fd != -1) {
		channel = softcm_evfd_get_channel(sf, c->channel_fd);
		if (IS_ERR(channel))
			return PTR_ERR(channel);
	}
	ret = -ENOMEM;
	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq)
		goto err_put_channel;
	ret = cq_alloc_rings(sf, cq, c);
	if (ret)
		goto err_free_cq;
	ret = cq_publish(sf, cq, c);
	if (ret)
		goto err_put_rings;
	softcm_uobj_init(&cq->uobj, SOFTCM_UOBJ_CQ, &cq_ops);
	spin_lock_init(&cq->lock);
	mutex_init(&cq->poll_mutex);
	cq->cqe = c->cqe;
	cq->sf = sf;
	cq->channel = channel;
	cq->uid = c->uid;
	softcm_evfd_entry_init(&cq->comp_ev);
	softcm_evfd_entry_init(&cq->async_ev);

	mutex_lock(&sf->uobjs.lock);
	ret = softcm_uobj_add(&sf->uobjs, &cq->uobj);
	if (ret) {
		mutex_unlock(&sf->uobjs.lock);
		goto err_unpublish;
	}
	/* no QP can complete to it before it can be named under this lock */
	cq->comp_ev.comp.cq_uid = cq->uid;
	cq->comp_ev.comp.cq_handle = cq->uobj.handle;
	cq->async_ev.async.uid = cq->uid;
	cq->async_ev.async.event_type = IB_EVENT_CQ_ERR;
	cq->async_ev.async.handle = cq->uobj.handle;
	atomic_inc(&softcm_net(sf->net)->nr_cqs);
	mutex_unlock(&sf->uobjs.lock);

	c->handle = cq->uobj.handle;
	return 0;

err_unpublish:
	mutex_destroy(&cq->poll_mutex);
	cq_unpublish(sf, cq);
err_put_rings:
	softcm_ring_put(cq->uring);
	softcm_ring_put(cq->kring);
err_free_cq:
	kfree(cq);
err_put_channel:
	if (channel)
		softcm_evfd_put(channel);
	return ret;
}

int softcm_cq_destroy(struct softcm_file *sf, struct softcm_destroy_cq *c)
{
	struct softcm_uobj *obj;
	struct softcm_cq *cq;

	if (c->reserved0)
		return -EINVAL;
	obj = softcm_uobj_remove(&sf->uobjs, SOFTCM_UOBJ_CQ, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	cq = softcm_cq_of(obj);
	c->comp_events_reported = cq->comp_reported;
	c->async_events_reported = cq->async_reported;
	softcm_uobj_put(obj);
	return 0;
}

int softcm_cq_req_notify(struct softcm_file *sf, struct softcm_req_notify_cq *c)
{
	struct softcm_uobj *obj;
	struct softcm_cq *cq;

	if (c->solicited_only > 1)
		return -EINVAL;
	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_CQ, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	cq = softcm_cq_of(obj);
	spin_lock_bh(&cq->lock);
	/* armed for the next completion stays so: it covers solicited ones */
	if (!c->solicited_only)
		cq->armed = SOFTCM_CQ_ARMED_NEXT;
	else if (cq->armed == SOFTCM_CQ_DISARMED)
		cq->armed = SOFTCM_CQ_ARMED_SOLICITED;
	spin_unlock_bh(&cq->lock);
	softcm_uobj_put(obj);
	return 0;
}

/*
 * The completions between the user's consumer index and ours: at most
 * the ring's worth, whatever the user wrote there.
 */
static u32 cq_count(struct softcm_cq *cq, u32 *cons)
{
	lockdep_assert_held(&cq->lock);
	/* Pairs with the user's release of cons: its reads of the slots first. */
	*cons = smp_load_acquire(&cq->upage->cons);
	return min(cq->prod - *cons, cq->entries);
}

/* Copy up to @n of the oldest completions, without retiring them. */
static u32 cq_peek(struct softcm_cq *cq, struct softcm_wc *wc, u32 n, u32 *cons)
{
	u32 i;

	spin_lock_bh(&cq->lock);
	n = min(n, cq_count(cq, cons));
	for (i = 0; i < n; i++)
		wc[i] = *cqe_slot(cq, *cons + i);
	spin_unlock_bh(&cq->lock);
	return n;
}

/* The user's index, as a poller of the ring would move it. */
static void cq_retire(struct softcm_cq *cq, u32 cons, u32 n)
{
	/* Pairs with cq_count()'s acquire, as the user's own release would. */
	smp_store_release(&cq->upage->cons, cons + n);
}

int softcm_cq_poll(struct softcm_file *sf, struct softcm_poll_cq *c)
{
	struct softcm_wc __user *uwc = u64_to_user_ptr(c->wc);
	struct softcm_wc wc[CQ_POLL_CHUNK];
	struct softcm_uobj *obj;
	struct softcm_cq *cq;
	u32 done = 0, n, ne, cons;
	int ret = 0;

	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_CQ, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	cq = softcm_cq_of(obj);
	mutex_lock(&cq->poll_mutex);
	/*
	 * At most the ring's size, whatever ne says: completions that arrive
	 * while we copy must not keep this loop going.
	 */
	ne = min(c->ne, cq->entries);
	while (done < ne) {
		n = cq_peek(cq, wc, min_t(u32, ne - done, CQ_POLL_CHUNK), &cons);
		if (!n)
			break;
		if (copy_to_user(uwc + done, wc, n * sizeof(*wc))) {
			ret = -EFAULT;
			break;
		}
		cq_retire(cq, cons, n);
		done += n;
	}
	mutex_unlock(&cq->poll_mutex);
	softcm_uobj_put(obj);
	if (ret && !done)
		return ret;
	c->ne = done;
	return 0;
}

/*
 * Append @wc to @cq; @solicited says whether it may end a solicited-only
 * arming.  -EIO when the CQ is destroyed or in error, -ENOSPC when this
 * completion finds it full: then it is lost, the CQ is in error from now
 * on and IBV_EVENT_CQ_ERR goes to the file's async descriptor.
 */
int softcm_cq_push(struct softcm_cq *cq, const struct softcm_wc *wc, bool solicited)
{
	u32 cons;
	int ret = 0;

	spin_lock_bh(&cq->lock);
	if (cq->dead || cq->error) {
		ret = -EIO;
		goto out_unlock;
	}
	/* a consumer index the user moved past ours reads as a full CQ */
	if (cq_count(cq, &cons) >= cq->cqe || cq->prod - cons > cq->entries) {
		cq->error = true;
		softcm_evfd_queue_async(cq->sf, &cq->async_ev);
		ret = -ENOSPC;
		goto out_unlock;
	}
	*cqe_slot(cq, cq->prod) = *wc;
	cq->prod++;
	/* Pairs with the user's acquire of prod: the slot first. */
	smp_store_release(&cq->kpage->prod, cq->prod);
	if (cq->armed == SOFTCM_CQ_ARMED_NEXT ||
	    (cq->armed == SOFTCM_CQ_ARMED_SOLICITED && solicited)) {
		cq->armed = SOFTCM_CQ_DISARMED;
		if (cq->channel)
			softcm_evfd_queue(cq->channel, &cq->comp_ev);
	}
out_unlock:
	spin_unlock_bh(&cq->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cq_push);
