// SPDX-License-Identifier: GPL-2.0
/*
 * A listener's hold queue: the connection requests that arrive while its
 * backlog is full.
 *
 * rdma_ucm drops them (ucma_event_handler() refuses the request, and the
 * CM resets the id without a REJ so that the peer retries), and a burst
 * of clients then costs every one beyond the backlog a whole response
 * timeout.  We hold them instead, up to net.softcm.max_held_requests per
 * listener: each is a new id already set up by passive.c, with its
 * CONNECT_REQUEST filled in, that has told its peer to wait with an MRA
 * (IBTA 12.6.6; the service timeout is net.softcm.mra_timeout, the
 * Linux CM's CMA_CM_MRA_SETTING).  When the application reads a
 * CONNECT_REQUEST and so frees a backlog slot, the oldest held request
 * is published in its place (softcm_backlog_promote()), and is answered
 * as any other when the application accepts or rejects it.  Beyond the
 * bound, requests are dropped and counted (drop_backlog) as before.
 *
 * A held request is in the namespace's comm-ID tables like any other, so
 * a retransmission of its REQ finds it (dup_req() in passive.c sends the
 * MRA again) and is never held twice; a REJ from a peer that gave up
 * ends its connection, and it is dropped rather than published.  Its
 * memory (the id and its event) was allocated under the listener's
 * memory cgroup, as for every request.
 *
 * The queue is the listener's @held list of event entries, oldest first,
 * each owning its new id (@child) as a queued CONNECT_REQUEST does; it is
 * protected by the listener's mutex.  Lock order: the listener's mutex,
 * then a held id's (nested, as in passive.c).  A destroyed listener
 * answers what it held with a REJ (softcm_cm_destroy() of each id).
 */

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>

#include "backlog.h"
#include "cmproto.h"
#include "event.h"
#include "file.h"
#include "id.h"
#include "netns.h"
#include "state.h"
#include "stats.h"

/* Must a new request wait?  Not before older ones, held or not. */
static bool backlog_full(struct softcm_id *listener)
{
	lockdep_assert_held(&listener->mutex);

	return atomic_read(&listener->requests_pending) >= listener->backlog ||
	       !list_empty(&listener->held);
}

/*
 * May @listener take one more request?  Yes with a free backlog slot; a
 * connection request (not a SIDR_REQ, which has no MRA) may also be held,
 * up to the bound.  A request refused here is dropped and counted.
 */
bool softcm_backlog_admit(struct softcm_id *listener)
{
	struct softcm_net *sn = softcm_net(listener->net);

	lockdep_assert_held(&listener->mutex);

	if (!backlog_full(listener))
		return true;
	if (listener->ps == SOFTCM_PS_TCP &&
	    listener->nr_held < READ_ONCE(sn->max_held_requests))
		return true;
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_BACKLOG);
	return false;
}

/*
 * Report the new, locked @id of an admitted request with its event @e,
 * or hold both and tell the peer to wait.  Unlocks @id; the caller's
 * reference on it is consumed.
 */
void softcm_backlog_queue(struct softcm_id *listener, struct softcm_id *id,
			  struct softcm_event_entry *e)
{
	struct softcm_net *sn = softcm_net(listener->net);

	lockdep_assert_held(&listener->mutex);
	lockdep_assert_held(&id->mutex);

	if (!backlog_full(listener)) {
		softcm_file_publish_request(listener, id, e);
		return;
	}
	softcm_cm_set_state(id, SOFTCM_CM_MRA_REQ_SENT);
	softcm_cm_send_mra(id, SOFTCM_MSG_REQ);
	e->child = id;
	list_add_tail(&e->node, &listener->held);
	listener->nr_held++;
	atomic_inc(&sn->nr_held);
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_REQ_HELD);
	mutex_unlock(&id->mutex);
}

static struct softcm_event_entry *unhold_first(struct softcm_id *listener)
{
	struct softcm_event_entry *e;

	lockdep_assert_held(&listener->mutex);

	e = list_first_entry_or_null(&listener->held, struct softcm_event_entry, node);
	if (e) {
		list_del_init(&e->node);
		listener->nr_held--;
		atomic_dec(&softcm_net(listener->net)->nr_held);
	}
	return e;
}

/* Entries taken off a hold queue: their ids are destroyed (REJ if still due). */
static void free_held(struct list_head *list)
{
	struct softcm_event_entry *e, *tmp;
	struct softcm_id *child;

	list_for_each_entry_safe(e, tmp, list, node) {
		list_del(&e->node);
		child = softcm_event_free(e);
		if (child)
			softcm_file_destroy_id(child, NULL);
	}
}

/*
 * A backlog slot of @listener was freed (its CONNECT_REQUEST read): the
 * oldest held requests take the free slots, in order.  One whose peer
 * gave up meanwhile (its connection ended: a REJ) is dropped instead.
 * Takes the listener's mutex; called with no id's mutex held.
 */
void softcm_backlog_promote(struct softcm_id *listener)
{
	struct softcm_net *sn = softcm_net(listener->net);
	struct softcm_event_entry *e;
	struct softcm_id *id;
	LIST_HEAD(dead);

	mutex_lock(&listener->mutex);
	while (listener->state == SOFTCM_STATE_LISTEN &&
	       atomic_read(&listener->requests_pending) < listener->backlog) {
		e = unhold_first(listener);
		if (!e)
			break;
		id = e->child;
		mutex_lock_nested(&id->mutex, SINGLE_DEPTH_NESTING);
		if (id->cm.state != SOFTCM_CM_MRA_REQ_SENT) {
			mutex_unlock(&id->mutex);
			list_add_tail(&e->node, &dead);
			continue;
		}
		e->child = NULL;
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_REQ_PROMOTED);
		softcm_file_publish_request(listener, id, e);
	}
	mutex_unlock(&listener->mutex);
	free_held(&dead);
}

/*
 * @listener is being destroyed (DESTROYING: nothing is held any more):
 * reject and free what it held.  Called with no id's mutex held.
 */
void softcm_backlog_flush(struct softcm_id *listener)
{
	struct softcm_event_entry *e;
	LIST_HEAD(dead);

	mutex_lock(&listener->mutex);
	while ((e = unhold_first(listener)))
		list_add_tail(&e->node, &dead);
	mutex_unlock(&listener->mutex);
	free_held(&dead);
}
