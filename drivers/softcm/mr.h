/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_MR_H
#define _SOFTCM_MR_H

#include <linux/workqueue.h>
#include <uapi/linux/softcm.h>

#include "uobj.h"

struct completion;
struct mm_struct;
struct page;
struct sk_buff;
struct user_struct;
struct softcm_file;
struct softcm_net;
struct softcm_pd;

/*
 * A memory region: user pages pinned long-term, named by two random keys
 * in its namespace's key table.  The data path finds it by key
 * (softcm_mr_find_rcu()) and copies through @pages: byte @off of the
 * region, whose first byte is at @iova for peers, is at byte
 * @offset + @off of pages[0..npages).
 */
struct softcm_mr {
	struct softcm_uobj uobj;
	struct softcm_net *sn;		/* whose mr_keys has the keys */
	struct softcm_pd *pd;		/* used until destroy, referenced until free */
	u64 iova;
	u64 length;
	u32 access;			/* IBV_ACCESS_* */
	u32 lkey;
	u32 rkey;
	unsigned int offset;		/* of the start in pages[0] */
	unsigned long npages;
	struct page **pages;
	struct mm_struct *mm;		/* grabbed: its pinned_vm counts the pages */
	/* referenced: its locked_vm is charged; NULL with CAP_IPC_LOCK */
	struct user_struct *user;
	struct rcu_work free_work;	/* unpin and uncharge, then free */
	struct completion *freed;	/* a DEREG_MR waiting for that */
};

int softcm_mr_reg(struct softcm_file *sf, struct softcm_reg_mr *c);
int softcm_mr_dereg(struct softcm_file *sf, struct softcm_destroy_obj *c);

/* The packet path's (Documentation/design.rst, "The packet path") */
struct softcm_mr *softcm_mr_find_rcu(struct softcm_net *sn, u32 key, bool remote);
int softcm_mr_sge_copy(struct softcm_net *sn, struct softcm_pd *pd,
		       const struct softcm_sge *sge, u32 n, u64 off, u8 *buf,
		       u32 len, bool to_mr);
int softcm_mr_remote_copy(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			  u64 va, u8 *buf, u32 len, u32 access, bool to_mr);
int softcm_mr_sge_copy_skb(struct softcm_net *sn, struct softcm_pd *pd,
			   const struct softcm_sge *sge, u32 n, u64 off,
			   const struct sk_buff *skb, unsigned int skb_off, u32 len);
int softcm_mr_remote_copy_skb(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			      u64 va, const struct sk_buff *skb, unsigned int skb_off,
			      u32 len, u32 access);
int softcm_mr_sge_attach(struct softcm_net *sn, struct softcm_pd *pd,
			 const struct softcm_sge *sge, u32 n, u64 off,
			 struct sk_buff *skb, u32 len);
int softcm_mr_remote_check(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			   u64 va, u32 len, u32 access);
int softcm_mr_remote_atomic(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			    u64 va, bool cas, u64 compare, u64 swap_add, u64 *orig);

void softcm_mr_net_init(struct softcm_net *sn);
void softcm_mr_net_uninit(struct softcm_net *sn);

#endif /* _SOFTCM_MR_H */
