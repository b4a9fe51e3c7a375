/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CONNTAB_H
#define _SOFTCM_CONNTAB_H

#include <linux/atomic.h>
#include <linux/rhashtable-types.h>
#include <linux/types.h>

struct softcm_id;
struct softcm_net;

/* A namespace's connections: our CA GUID here, transaction IDs, comm IDs. */
struct softcm_conntab {
	u64 guid;
	u32 tid_hi;
	atomic_t tid_lo;
	struct rhashtable local_ids;	/* our comm ID -> id */
	struct rhashtable remote_ids;	/* peer's (GUID, comm ID) -> id */
	struct rhashtable remote_qps;	/* peer's (GUID, QPN) -> id */
	atomic_t nr_conns;		/* ids in local_ids */
};

/* A walk over the connections that may sleep between steps. */
struct softcm_conn_iter {
	struct rhashtable_iter walk;
};

int softcm_conntab_init(struct softcm_net *sn);
void softcm_conntab_uninit(struct softcm_net *sn);
void softcm_conn_iter_enter(struct softcm_net *sn, struct softcm_conn_iter *iter);
struct softcm_id *softcm_conn_take_one(struct softcm_conn_iter *iter);
void softcm_conn_iter_exit(struct softcm_conn_iter *iter);

int softcm_conn_insert(struct softcm_id *id);
int softcm_conn_insert_remote(struct softcm_id *id, u64 guid, u32 comm_id);
void softcm_conn_remove(struct softcm_id *id);
struct softcm_id *softcm_conn_find(struct softcm_net *sn, u32 local_id);
struct softcm_id *softcm_conn_find_remote(struct softcm_net *sn, u64 guid, u32 comm_id);
void softcm_conn_insert_remote_qp(struct softcm_id *id);
void softcm_conn_remove_remote_qp(struct softcm_id *id);
struct softcm_id *softcm_conn_find_remote_qp(struct softcm_net *sn, u64 guid, u32 qpn);
u64 softcm_conn_new_tid(struct softcm_net *sn);
unsigned int softcm_conn_get_orphans(struct softcm_net *sn, unsigned int skip,
				     struct softcm_id **ids, unsigned int max);

#endif /* _SOFTCM_CONNTAB_H */
