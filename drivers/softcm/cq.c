// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.  The completion path (softcm_cq_push(), called by QPs
 * and later by the data path in softirq) takes only the CQ's spinlock and
 * its channel's; the owner's POLL_CQ copies completions out under a mutex
 * of its own and retires them only once they reached userspace, so that
 * a faulting poller loses nothing.
 *
 * Notification follows IBTA 11.4.2: REQ_NOTIFY_CQ arms the CQ for the next
 * completion, or for the next solicited one (a solicited receive, or any
 * completion in error); the completion that matches disarms it and queues
 * one event on the CQ's channel.  An event already queued and not yet read
 * is not queued twice.
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "cq.h"
#include "evfd.h"
#include "file.h"
#include "limits.h"
#include "netns.h"
#include "uobj.h"

/* completions one POLL_CQ copies per round of its loop */
#define CQ_POLL_CHUNK	8

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
	atomic_dec(&softcm_net(cq->sf->net)->nr_cqs);
}

static void cq_free(struct softcm_uobj *obj)
{
	struct softcm_cq *cq = softcm_cq_of(obj);

	kvfree(cq->ring);
	mutex_destroy(&cq->poll_mutex);
	kfree_rcu(cq, rcu);
}

static const struct softcm_uobj_ops cq_ops = {
	.destroy = cq_destroy,
	.free = cq_free,
};

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
	cq->ring = kvcalloc(c->cqe, sizeof(*cq->ring), GFP_KERNEL_ACCOUNT);
	if (!cq->ring)
		goto err_free_cq;
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
		goto err_free_ring;
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

err_free_ring:
	kvfree(cq->ring);
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

/* Copy up to @n of the oldest completions, without retiring them. */
static u32 cq_peek(struct softcm_cq *cq, struct softcm_wc *wc, u32 n)
{
	u32 i;

	spin_lock_bh(&cq->lock);
	n = min(n, cq->count);
	for (i = 0; i < n; i++)
		wc[i] = cq->ring[(cq->head + i) % cq->cqe];
	spin_unlock_bh(&cq->lock);
	return n;
}

static void cq_retire(struct softcm_cq *cq, u32 n)
{
	spin_lock_bh(&cq->lock);
	cq->head = (cq->head + n) % cq->cqe;
	cq->count -= n;
	spin_unlock_bh(&cq->lock);
}

int softcm_cq_poll(struct softcm_file *sf, struct softcm_poll_cq *c)
{
	struct softcm_wc __user *uwc = u64_to_user_ptr(c->wc);
	struct softcm_wc wc[CQ_POLL_CHUNK];
	struct softcm_uobj *obj;
	struct softcm_cq *cq;
	u32 done = 0, n, ne;
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
	ne = min(c->ne, cq->cqe);
	while (done < ne) {
		n = cq_peek(cq, wc, min_t(u32, ne - done, CQ_POLL_CHUNK));
		if (!n)
			break;
		if (copy_to_user(uwc + done, wc, n * sizeof(*wc))) {
			ret = -EFAULT;
			break;
		}
		cq_retire(cq, n);
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
	int ret = 0;

	spin_lock_bh(&cq->lock);
	if (cq->dead || cq->error) {
		ret = -EIO;
		goto out_unlock;
	}
	if (cq->count == cq->cqe) {
		cq->error = true;
		softcm_evfd_queue_async(cq->sf, &cq->async_ev);
		ret = -ENOSPC;
		goto out_unlock;
	}
	cq->ring[(cq->head + cq->count) % cq->cqe] = *wc;
	cq->count++;
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
