/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_UOBJ_H
#define _SOFTCM_UOBJ_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/xarray.h>

/*
 * The kinds of verbs objects, in the order a closing file destroys them:
 * users before what they use (an AH or a QP before its PD and CQs).
 */
enum softcm_uobj_type {
	SOFTCM_UOBJ_AH = 1,
	SOFTCM_UOBJ_QP,
	SOFTCM_UOBJ_MR,
	SOFTCM_UOBJ_CQ,
	SOFTCM_UOBJ_PD,
	SOFTCM_UOBJ_TYPE_MAX = SOFTCM_UOBJ_PD,
};

struct rdma_cgroup;
struct softcm_net;
struct softcm_uobj;

struct softcm_uobj_ops {
	/* Tear down: called once, when the object leaves its table. */
	void (*destroy)(struct softcm_uobj *obj);
	/*
	 * Free the memory: called when the last reference is dropped.  Lookups
	 * are lockless (RCU), so the memory must outlive a grace period
	 * (kfree_rcu()).
	 */
	void (*free)(struct softcm_uobj *obj);
};

/*
 * The head of every verbs object, embedded in it.  The table holds one
 * reference; lookups take their own.  usecnt counts the objects that use
 * this one (a QP its PD and CQs): while it is nonzero the object cannot
 * be destroyed (EBUSY), as in uverbs.  Until @committed, only the command
 * creating the object knows it (uobj.c).
 */
struct softcm_uobj {
	struct kref ref;
	enum softcm_uobj_type type;
	u32 handle;
	bool committed;			/* set once, with release semantics */
	atomic_t usecnt;
	const struct softcm_uobj_ops *ops;
	struct rdma_cgroup *cg;		/* charged one HCA_OBJECT (uobj.c) */
};

/*
 * A file's verbs objects.  @lock serialises creation and destruction, so
 * that a use taken while creating cannot race with the destruction of the
 * object used; lookups for work (post, poll) are lockless.
 */
struct softcm_uobjs {
	struct mutex lock;		/* creation and destruction */
	struct xarray objs;		/* handle -> struct softcm_uobj */
	atomic_t count;
	/* per type, each bounded by its SOFTCM_MAX_* of limits.h */
	atomic_t nr[SOFTCM_UOBJ_TYPE_MAX + 1];
	struct softcm_net *sn;		/* its caps and its rdma cgroup device */
	/* charged one HCA_HANDLE from the first object to the release */
	struct rdma_cgroup *cg;
};

#define SOFTCM_MAX_UOBJS_PER_FILE	BIT(20)

void softcm_uobj_rdmacg_init(void);
void softcm_uobj_rdmacg_uninit(void);
void softcm_uobjs_init(struct softcm_uobjs *u, struct softcm_net *sn);
void softcm_uobjs_release(struct softcm_uobjs *u);

void softcm_uobj_init(struct softcm_uobj *obj, enum softcm_uobj_type type,
		      const struct softcm_uobj_ops *ops);
int softcm_uobj_add(struct softcm_uobjs *u, struct softcm_uobj *obj);
void softcm_uobj_commit(struct softcm_uobjs *u, enum softcm_uobj_type type,
			u32 handle);
void softcm_uobj_abort(struct softcm_uobjs *u, enum softcm_uobj_type type,
		       u32 handle);
struct softcm_uobj *softcm_uobj_get(struct softcm_uobjs *u,
				    enum softcm_uobj_type type, u32 handle);
struct softcm_uobj *softcm_uobj_use(struct softcm_uobjs *u,
				    enum softcm_uobj_type type, u32 handle);
void softcm_uobj_unuse(struct softcm_uobj *obj);
void softcm_uobj_drop_use(struct softcm_uobj *obj);
struct softcm_uobj *softcm_uobj_remove(struct softcm_uobjs *u,
				       enum softcm_uobj_type type, u32 handle);
void softcm_uobj_put(struct softcm_uobj *obj);

#endif /* _SOFTCM_UOBJ_H */
