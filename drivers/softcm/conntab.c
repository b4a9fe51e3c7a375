// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace's connections, found in O(1) by the comm IDs in a
 * message: ours (every message but REQ and SIDR_REQ names it) and the
 * peer's with its CA GUID (duplicate requests, REJ(TIMEOUT)); and, for
 * the stale-QPN check, by the peer's QP number with its CA GUID.
 *
 * Our comm IDs are random and unique in the namespace, so that a sender
 * that is not the peer cannot guess them.  Lookups run under RCU and take
 * a reference that the id can still give (ids are freed after a grace
 * period); the local table holds one reference on each id it contains,
 * and an id is in the remote tables only while it is in the local one.
 * Insertion and removal happen under the id's mutex.
 */

#include <linux/lockdep.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>

#include "conntab.h"
#include "id.h"
#include "netns.h"

static const struct rhashtable_params local_params = {
	.key_len = sizeof(u32),
	.key_offset = offsetof(struct softcm_id, cm.local_id),
	.head_offset = offsetof(struct softcm_id, cm.local_node),
	.automatic_shrinking = true,
};

static const struct rhashtable_params remote_params = {
	.key_len = sizeof(struct softcm_remote_key),
	.key_offset = offsetof(struct softcm_id, cm.remote),
	.head_offset = offsetof(struct softcm_id, cm.remote_node),
	.automatic_shrinking = true,
};

static const struct rhashtable_params remote_qp_params = {
	.key_len = sizeof(struct softcm_remote_key),
	.key_offset = offsetof(struct softcm_id, cm.remote_qp),
	.head_offset = offsetof(struct softcm_id, cm.remote_qp_node),
	.automatic_shrinking = true,
};

int softcm_conntab_init(struct softcm_net *sn)
{
	struct softcm_conntab *ct = &sn->conntab;
	int ret;

	ret = rhashtable_init(&ct->local_ids, &local_params);
	if (ret)
		return ret;
	ret = rhashtable_init(&ct->remote_ids, &remote_params);
	if (ret)
		goto err_destroy_local;
	ret = rhashtable_init(&ct->remote_qps, &remote_qp_params);
	if (ret)
		goto err_destroy_remote;
	/*
	 * A CA GUID of our own per namespace, as each rxe device derives one
	 * from its MAC: peers key duplicate detection on it.
	 */
	ct->guid = get_random_u64();
	ct->tid_hi = get_random_u32();
	atomic_set(&ct->tid_lo, 0);
	atomic_set(&ct->nr_conns, 0);
	return 0;

err_destroy_remote:
	rhashtable_destroy(&ct->remote_ids);
err_destroy_local:
	rhashtable_destroy(&ct->local_ids);
	return ret;
}

/*
 * A walk over the namespace's connections whose caller may sleep between
 * steps (the walk is stopped, and out of RCU, while the caller holds the
 * id it took): each softcm_conn_take_one() gives the next connection,
 * referenced, or NULL at the end.  A walk restarted from the beginning
 * for each connection would be quadratic; this one goes on from where it
 * was.  Connections removed meanwhile (the one taken included) may make
 * it miss others, and a resize may show some twice: a caller that must
 * see them all walks again until a walk finds none.
 */
void softcm_conn_iter_enter(struct softcm_net *sn, struct softcm_conn_iter *iter)
{
	rhashtable_walk_enter(&sn->conntab.local_ids, &iter->walk);
}

struct softcm_id *softcm_conn_take_one(struct softcm_conn_iter *iter)
{
	struct softcm_id *id;

	rhashtable_walk_start(&iter->walk);
	while ((id = rhashtable_walk_next(&iter->walk))) {
		if (IS_ERR(id))
			continue;	/* -EAGAIN: a resize; the walk goes on */
		if (kref_get_unless_zero(&id->ref))
			break;
	}
	rhashtable_walk_stop(&iter->walk);
	return id;
}

void softcm_conn_iter_exit(struct softcm_conn_iter *iter)
{
	rhashtable_walk_exit(&iter->walk);
}

/* After the CM ended every connection (softcm_cm_net_uninit()). */
void softcm_conntab_uninit(struct softcm_net *sn)
{
	rhashtable_destroy(&sn->conntab.remote_qps);
	rhashtable_destroy(&sn->conntab.remote_ids);
	rhashtable_destroy(&sn->conntab.local_ids);
}

/*
 * Referenced connections whose ids userspace destroyed (timewait, or a
 * DREQ still out), up to @max of them after the first @skip into @ids,
 * for the listing: a
 * snapshot, so a connection orphaned during the walk may be missed, and
 * one seen twice across a resize is shown twice.
 */
unsigned int softcm_conn_get_orphans(struct softcm_net *sn, unsigned int skip,
				     struct softcm_id **ids, unsigned int max)
{
	struct rhashtable_iter iter;
	struct softcm_id *id;
	unsigned int n = 0;

	rhashtable_walk_enter(&sn->conntab.local_ids, &iter);
	rhashtable_walk_start(&iter);
	while (n < max && (id = rhashtable_walk_next(&iter))) {
		if (IS_ERR(id))
			continue;	/* -EAGAIN: a resize; the walk goes on */
		if (READ_ONCE(id->state) != SOFTCM_STATE_DESTROYING)
			continue;
		if (skip)
			skip--;
		else if (kref_get_unless_zero(&id->ref))
			ids[n++] = id;
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
	return n;
}

/* Give @id a fresh comm ID and make it findable by it. */
int softcm_conn_insert(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);
	int tries, ret = -EBUSY;

	lockdep_assert_held(&id->mutex);

	/* Collisions are rare; a few tries make a failure vanishingly so. */
	for (tries = 0; tries < 8 && ret == -EBUSY; tries++) {
		id->cm.local_id = get_random_u32() ?: 1;
		ret = rhashtable_lookup_insert_fast(&sn->conntab.local_ids, &id->cm.local_node,
						    local_params);
		if (ret == -EEXIST)
			ret = -EBUSY;
	}
	if (ret) {
		id->cm.local_id = 0;
		return ret;
	}
	softcm_id_get(id);
	atomic_inc(&sn->conntab.nr_conns);
	return 0;
}

/* Also findable by the peer's comm ID; -EEXIST if another id has it. */
int softcm_conn_insert_remote(struct softcm_id *id, u64 guid, u32 comm_id)
{
	struct softcm_net *sn = softcm_net(id->net);
	int ret;

	lockdep_assert_held(&id->mutex);

	if (WARN_ON(!id->cm.local_id || id->cm.in_remote))
		return -EINVAL;
	id->cm.remote.guid = guid;
	id->cm.remote.comm_id = comm_id;
	id->cm.remote.zero = 0;
	ret = rhashtable_lookup_insert_fast(&sn->conntab.remote_ids, &id->cm.remote_node,
					    remote_params);
	if (!ret)
		id->cm.in_remote = true;
	return ret;
}

/*
 * Also findable by the peer's QP number (id->cm.remote_qpn) and CA GUID,
 * for the stale-QPN check.  A connection that another holds them for
 * (two REQs from one QP, neither answered when the other came) or that
 * finds no memory for its entry goes unchecked: the check spares a
 * stale connection, it never refuses a good one.
 */
void softcm_conn_insert_remote_qp(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	lockdep_assert_held(&id->mutex);

	if (WARN_ON(!id->cm.in_remote || id->cm.in_remote_qp))
		return;
	id->cm.remote_qp.guid = id->cm.remote.guid;
	id->cm.remote_qp.comm_id = id->cm.remote_qpn;
	id->cm.remote_qp.zero = 0;
	if (!rhashtable_lookup_insert_fast(&sn->conntab.remote_qps, &id->cm.remote_qp_node,
					   remote_qp_params))
		id->cm.in_remote_qp = true;
}

/* No longer a live connection's: timewait, or its end. */
void softcm_conn_remove_remote_qp(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	lockdep_assert_held(&id->mutex);

	if (!id->cm.in_remote_qp)
		return;
	rhashtable_remove_fast(&sn->conntab.remote_qps, &id->cm.remote_qp_node,
			       remote_qp_params);
	id->cm.in_remote_qp = false;
}

/* The caller holds its own reference: the table's is dropped here. */
void softcm_conn_remove(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	lockdep_assert_held(&id->mutex);

	softcm_conn_remove_remote_qp(id);
	if (id->cm.in_remote) {
		rhashtable_remove_fast(&sn->conntab.remote_ids, &id->cm.remote_node,
				       remote_params);
		id->cm.in_remote = false;
	}
	if (!id->cm.local_id)
		return;
	rhashtable_remove_fast(&sn->conntab.local_ids, &id->cm.local_node, local_params);
	id->cm.local_id = 0;
	atomic_dec(&sn->conntab.nr_conns);
	softcm_id_put(id);
}

static struct softcm_id *get_rcu(struct softcm_id *id)
{
	return id && kref_get_unless_zero(&id->ref) ? id : NULL;
}

struct softcm_id *softcm_conn_find(struct softcm_net *sn, u32 local_id)
{
	struct softcm_id *id;

	if (!local_id)
		return NULL;
	rcu_read_lock();
	id = get_rcu(rhashtable_lookup(&sn->conntab.local_ids, &local_id, local_params));
	rcu_read_unlock();
	return id;
}

struct softcm_id *softcm_conn_find_remote(struct softcm_net *sn, u64 guid, u32 comm_id)
{
	struct softcm_remote_key key = { .guid = guid, .comm_id = comm_id };
	struct softcm_id *id;

	rcu_read_lock();
	id = get_rcu(rhashtable_lookup(&sn->conntab.remote_ids, &key, remote_params));
	rcu_read_unlock();
	return id;
}

struct softcm_id *softcm_conn_find_remote_qp(struct softcm_net *sn, u64 guid, u32 qpn)
{
	struct softcm_remote_key key = { .guid = guid, .comm_id = qpn };
	struct softcm_id *id;

	rcu_read_lock();
	id = get_rcu(rhashtable_lookup(&sn->conntab.remote_qps, &key, remote_qp_params));
	rcu_read_unlock();
	return id;
}

/* Transaction IDs as the Linux MAD layer makes them: agent's high half. */
u64 softcm_conn_new_tid(struct softcm_net *sn)
{
	return (u64)sn->conntab.tid_hi << 32 | (u32)atomic_inc_return(&sn->conntab.tid_lo);
}
