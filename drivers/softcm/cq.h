/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CQ_H
#define _SOFTCM_CQ_H

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <uapi/linux/softcm.h>

#include "evfd.h"
#include "uobj.h"

struct softcm_file;
struct softcm_ring;

enum softcm_cq_arm {
	SOFTCM_CQ_DISARMED,
	SOFTCM_CQ_ARMED_NEXT,
	SOFTCM_CQ_ARMED_SOLICITED,
};

/*
 * A completion queue: a ring of completions that QPs append to
 * (softcm_cq_push()) and the owner polls in its mapping of the ring
 * (uapi/linux/softcm.h, "Rings"), or with POLL_CQ.  It holds cqe
 * completions; once full it is in error, as IBTA says: the completion
 * that found it full is lost, IBV_EVENT_CQ_ERR is reported, and every
 * later completion is refused.
 */
struct softcm_cq {
	struct softcm_uobj uobj;
	spinlock_t lock;		/* the fields below; BH: completions */
	u32 prod;			/* ours; kpage->prod mirrors it */
	u32 cqe;			/* what it holds */
	enum softcm_cq_arm armed;
	bool error;			/* overflowed */
	bool dead;			/* destroyed: no more completions */
	/* fixed at creation: the rings and the kernel's view of them */
	u32 entries;			/* slots, a power of two >= cqe */
	struct softcm_ring *kring;	/* read-only to the user: prod, CQEs */
	struct softcm_ring *uring;	/* the user's: cons */
	struct softcm_cq_kpage *kpage;
	struct softcm_cq_upage *upage;
	u8 *cqes;			/* SOFTCM_CQE_STRIDE apart */
	struct mutex poll_mutex;	/* POLL_CQ's pollers, one at a time */
	struct softcm_file *sf;		/* for the async event, until destroyed */
	struct softcm_evfd *channel;	/* referenced, or NULL */
	u64 uid;
	struct softcm_evfd_entry comp_ev;
	struct softcm_evfd_entry async_ev;
	/* what destroy reports, read once the CQ has left its table */
	u32 comp_reported;
	u32 async_reported;
	struct rcu_head rcu;
};

static inline struct softcm_cq *softcm_cq_of(struct softcm_uobj *obj)
{
	return container_of(obj, struct softcm_cq, uobj);
}

int softcm_cq_create(struct softcm_file *sf, struct softcm_create_cq *c);
int softcm_cq_destroy(struct softcm_file *sf, struct softcm_destroy_cq *c);
int softcm_cq_req_notify(struct softcm_file *sf, struct softcm_req_notify_cq *c);
int softcm_cq_poll(struct softcm_file *sf, struct softcm_poll_cq *c);

int softcm_cq_push(struct softcm_cq *cq, const struct softcm_wc *wc, bool solicited);

#endif /* _SOFTCM_CQ_H */
