// SPDX-License-Identifier: GPL-2.0
/*
 * Id objects: creation, lifetime, state transitions, and the namespace's
 * list of its ids.
 *
 * This is the object alone: what else an id is part of (a handle table,
 * an event queue, the port tables, a connection, a resolution) sets itself
 * up in its own layer, and file.c composes them: it creates ids for
 * CREATE_ID and tears every id down, in one function.  An id is
 * unpublished from its file's handle table exactly once, by whoever wins
 * the xarray compare-and-exchange (destroy, close or migration away); the
 * winner alone destroys it and drops the table's reference.  Commands
 * that found the id before it was unpublished still hold their own
 * reference and see DESTROYING once they take the mutex.
 *
 * Ids come from a cache of their own: at 800-odd bytes five fit in a page,
 * where kmalloc would round each up to 1 KiB.
 */

#include <linux/lockdep.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "netns.h"
#include "id.h"
#include "state.h"
#include "trace.h"

static struct kmem_cache *id_cache;

int softcm_id_init(void)
{
	/* Charged to the creator's memory cgroup, as GFP_KERNEL_ACCOUNT was. */
	id_cache = KMEM_CACHE(softcm_id, SLAB_ACCOUNT);
	return id_cache ? 0 : -ENOMEM;
}

/* After every id is gone: the last ones are still in RCU callbacks. */
void softcm_id_uninit(void)
{
	rcu_barrier();
	kmem_cache_destroy(id_cache);
}

/*
 * A new id in @net, in no handle table and not yet in the namespace's id
 * list: its creator sets up its CM side (cm.c's id init), adds it to
 * the list (softcm_id_register()) just before it can be found, and
 * publishes it, or gives it up with softcm_id_abort().
 */
struct softcm_id *softcm_id_create(struct net *net, u16 ps, u64 uid)
{
	struct softcm_id *id;

	if (ps != SOFTCM_PS_TCP && ps != SOFTCM_PS_UDP)
		return ERR_PTR(-EINVAL);

	id = kmem_cache_zalloc(id_cache, GFP_KERNEL);
	if (!id)
		return ERR_PTR(-ENOMEM);
	kref_init(&id->ref);
	mutex_init(&id->mutex);
	id->uid = uid;
	id->ps = ps;
	id->created = jiffies;
	id->state = SOFTCM_STATE_IDLE;
	id->net = get_net(net);
	/* The caller's, or the active one a worker set (passive.c). */
	id->memcg = get_mem_cgroup_from_mm(NULL);
	atomic_inc(&softcm_net(id->net)->nr_ids);
	id->afonly = true;
	/* rdma_cm's seq_num: the starting PSN a peer must not predict */
	id->psn = get_random_u32() & 0xffffff;
	atomic_set(&id->requests_pending, 0);
	INIT_LIST_HEAD(&id->held);
	atomic_set(&id->events_reported, 0);
	INIT_LIST_HEAD(&id->net_node);
	INIT_HLIST_NODE(&id->bind_node);
	pr_debug("id %p created\n", id);
	return id;
}

static void id_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(id_cache, container_of(head, struct softcm_id, rcu));
}

static void id_release(struct kref *ref)
{
	struct softcm_id *id = container_of(ref, struct softcm_id, ref);

	WARN_ON(id->bind_list || id->addr_req || !list_empty(&id->net_node) ||
		id->cm.local_id || id->cm.mad);
	pr_debug("id %p destroyed\n", id);
	atomic_dec(&softcm_net(id->net)->nr_ids);
	put_net(id->net);
	mem_cgroup_put(id->memcg);
	mutex_destroy(&id->mutex);
	/* Comm-ID lookups may still be looking at it (conntab.c). */
	call_rcu(&id->rcu, id_free_rcu);
}

void softcm_id_put(struct softcm_id *id)
{
	if (id)
		kref_put(&id->ref, id_release);
}

/* Undo softcm_id_create() for an id that was never published. */
void softcm_id_abort(struct softcm_id *id)
{
	softcm_id_unregister(id);
	softcm_id_put(id);
}

/*
 * The namespace's list of its ids (softcm_net.ids, under ids_lock): what
 * device notifications and the listing visit.  ids_lock is a leaf, taken
 * inside an id's mutex and never held while taking another lock.
 */
void softcm_id_register(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	mutex_lock(&sn->ids_lock);
	list_add_tail(&id->net_node, &sn->ids);
	mutex_unlock(&sn->ids_lock);
}

void softcm_id_unregister(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	mutex_lock(&sn->ids_lock);
	list_del_init(&id->net_node);
	mutex_unlock(&sn->ids_lock);
}

/*
 * A referenced snapshot of the namespace's ids, for a notification to
 * visit each under its own mutex (which ranks above ids_lock, so we cannot
 * take it while walking the list).  Release with softcm_id_put_snapshot().
 */
struct softcm_id **softcm_id_snapshot(struct net *net, unsigned int *count)
{
	struct softcm_net *sn = softcm_net(net);
	struct softcm_id **ids, *id;
	unsigned int n = 0, max = 0;

	mutex_lock(&sn->ids_lock);
	list_for_each_entry(id, &sn->ids, net_node)
		max++;
	ids = kvmalloc_array(max ?: 1, sizeof(*ids), GFP_KERNEL);
	if (ids) {
		list_for_each_entry(id, &sn->ids, net_node) {
			softcm_id_get(id);
			ids[n++] = id;
		}
	}
	mutex_unlock(&sn->ids_lock);
	*count = n;
	return ids;
}

void softcm_id_put_snapshot(struct softcm_id **ids, unsigned int count)
{
	while (count)
		softcm_id_put(ids[--count]);
	kvfree(ids);
}

/*
 * Up to @max referenced ids of @net that are not being destroyed, after
 * the first *@skip of them; *@skip keeps what is left to skip.  Returns
 * how many it stored in @batch.  For the listing, which takes one batch
 * at a time and pins nothing between reads.
 */
unsigned int softcm_id_get_batch(struct net *net, loff_t *skip,
				 struct softcm_id **batch, unsigned int max)
{
	struct softcm_net *sn = softcm_net(net);
	struct softcm_id *id;
	unsigned int n = 0;

	mutex_lock(&sn->ids_lock);
	list_for_each_entry(id, &sn->ids, net_node) {
		if (READ_ONCE(id->state) == SOFTCM_STATE_DESTROYING)
			continue;
		if (*skip) {
			(*skip)--;
			continue;
		}
		if (n == max)
			break;
		softcm_id_get(id);
		batch[n++] = id;
	}
	mutex_unlock(&sn->ids_lock);
	return n;
}

/*
 * Compare-and-exchange of the state, as rdma_cm's cma_comp_exch().  A
 * transition the table forbids is a bug in the caller, not bad input:
 * every command checks the state it expects through this same call.
 */
bool softcm_id_cas_state(struct softcm_id *id, enum softcm_state from,
			 enum softcm_state to)
{
	lockdep_assert_held(&id->mutex);

	if (id->state != from)
		return false;
	if (WARN_ONCE(!softcm_state_allowed(from, to), "softcm: %s -> %s\n",
		      softcm_state_name(from), softcm_state_name(to)))
		return false;
	WRITE_ONCE(id->state, to);
	trace_softcm_state(id->net->ns.inum, id->handle, softcm_state_name(from),
			   softcm_state_name(to));
	return true;
}

/*
 * An unconditional change, for what may happen in any state: destroy and
 * the removal of the id's device.  The table still has the last word.
 */
void softcm_id_force_state(struct softcm_id *id, enum softcm_state to)
{
	enum softcm_state from = id->state;

	lockdep_assert_held(&id->mutex);

	if (WARN_ONCE(!softcm_state_allowed(from, to), "softcm: %s -> %s\n",
		      softcm_state_name(from), softcm_state_name(to)))
		return;
	WRITE_ONCE(id->state, to);
	trace_softcm_state(id->net->ns.inum, id->handle, softcm_state_name(from),
			   softcm_state_name(to));
}

/*
 * A request's new id, not yet published, starts in CONNECT: rdma_cm
 * creates it there, where an application's id gets only by connecting,
 * so the table does not list IDLE -> CONNECT.
 */
void softcm_id_start_as_request(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	WARN_ON_ONCE(id->state != SOFTCM_STATE_IDLE);
	WRITE_ONCE(id->state, SOFTCM_STATE_CONNECT);
	trace_softcm_state(id->net->ns.inum, 0, softcm_state_name(SOFTCM_STATE_IDLE),
			   softcm_state_name(SOFTCM_STATE_CONNECT));
}
