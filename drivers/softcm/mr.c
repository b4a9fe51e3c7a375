// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions, as ib_umem_get() and uverbs make them: the user range
 * is pinned long-term (FOLL_LONGTERM; pin() says why always FOLL_WRITE).
 *
 * Accounting: the pages are charged to the registering task's user
 * (user_struct's locked_vm, as io_uring charges its buffers) against its
 * RLIMIT_MEMLOCK; beyond it REG_MR is ENOMEM, unless the caller has
 * CAP_IPC_LOCK, which is then charged nothing.  Not to its mm, as 6.1's
 * ib_umem_get() does: an MR lives as long as its file, which a child
 * inherits, a process passes on and an exec keeps, while a new mm starts
 * with nothing charged, so a charge per mm bounds nothing.  The user
 * stays referenced by the MR and gets its pages back when they are
 * unpinned, in the same step.  The registering mm's pinned_vm counts
 * them too, for VmPin in its /proc status only.
 *
 * Keys: lkey and rkey are random 32-bit values, unique in the namespace,
 * because an rkey is what a peer presents to read or write our memory:
 * it must not be guessable from other keys or from the number of MRs.
 * Both live in the namespace's key table (an xarray keyed by key), the
 * lookup the data path does for every RDMA request and SGE.
 *
 * Lifetime: the packet path finds an MR by key under RCU and takes no
 * reference (softcm_mr_find_rcu()); it never keeps one across packets.
 * DEREG_MR (or the file's close) takes the keys out of the table and
 * gives the PD its use back; the last reference (the table's, as nothing
 * else takes one) queues the free after a grace period (queue_rcu_work()
 * on the module's workqueue, which a namespace's exit flushes): by then
 * every packet that found the MR before its keys went has finished, and
 * the work unpins and uncharges the pages together, then frees the MR.
 * DEREG_MR waits for that work: when it returns, no packet can read or
 * write the region, the pages are unpinned and the user has its budget
 * back; only a packet built before, whose fragments are the region's
 * pages (the sysctl tx_zcopy, rcxmit.c), may still hold some until the
 * stack frees it (Documentation/design.rst, "Zero-copy transmit").  A
 * file's close does not wait (a grace period per MR would make closing
 * a file with many MRs slow): its MRs go the same way right after.
 */

#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_user_ioctl_verbs.h>

#include "core.h"
#include "file.h"
#include "limits.h"
#include "mr.h"
#include "netns.h"
#include "pd.h"

/*
 * Access flags, libibverbs' values: what we enforce (REMOTE_ATOMIC: a
 * peer's atomics, softcm_mr_remote_atomic()), what we refuse as not supported,
 * and the hints that uverbs accepts from any caller and a
 * device may ignore (HUGETLB, and the optional range, relaxed ordering
 * among them), which we ignore.
 */
#define ACCESS_LOCAL_WRITE	IB_UVERBS_ACCESS_LOCAL_WRITE
#define ACCESS_REMOTE_WRITE	IB_UVERBS_ACCESS_REMOTE_WRITE
#define ACCESS_REMOTE_ATOMIC	IB_UVERBS_ACCESS_REMOTE_ATOMIC
#define ACCESS_SUPPORTED	(IB_UVERBS_ACCESS_LOCAL_WRITE | \
				 IB_UVERBS_ACCESS_REMOTE_WRITE | \
				 IB_UVERBS_ACCESS_REMOTE_READ | \
				 IB_UVERBS_ACCESS_REMOTE_ATOMIC)
#define ACCESS_UNSUPPORTED	(IB_UVERBS_ACCESS_MW_BIND | \
				 IB_UVERBS_ACCESS_ZERO_BASED | \
				 IB_UVERBS_ACCESS_ON_DEMAND)
#define ACCESS_HINTS		(IB_UVERBS_ACCESS_HUGETLB | \
				 IB_UVERBS_ACCESS_OPTIONAL_RANGE)

/* Tries at a free random key: with 2^32 keys, a second try is already rare. */
#define KEY_TRIES		16

static int check_access(u32 access)
{
	if (access & ~(ACCESS_SUPPORTED | ACCESS_UNSUPPORTED | ACCESS_HINTS))
		return -EINVAL;
	if (access & ACCESS_UNSUPPORTED)
		return -EOPNOTSUPP;
	/* As ib_check_mr_access(): a peer may write only what we may write. */
	if ((access & (ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC)) &&
	    !(access & ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* The range as uverbs checks it, and its number of pages. */
static int check_range(const struct softcm_reg_mr *c, unsigned long *npages)
{
	u64 end = c->addr + c->length;

	if (!c->length || c->length > SOFTCM_MAX_MR_SIZE)
		return -EINVAL;
	if (end < c->addr || PAGE_ALIGN(end) < end || end > TASK_SIZE)
		return -EINVAL;
	if (c->iova + c->length < c->iova)
		return -EINVAL;
	/* The data path maps iova to pages by offset, as uverbs requires. */
	if ((c->addr & ~PAGE_MASK) != (c->iova & ~PAGE_MASK))
		return -EINVAL;
	*npages = (PAGE_ALIGN(end) - (c->addr & PAGE_MASK)) >> PAGE_SHIFT;
	return 0;
}

/*
 * Charge @mr's pages to the caller's user, within its RLIMIT_MEMLOCK,
 * unless it has CAP_IPC_LOCK (asked without an audit record, as io_uring
 * asks: every REG_MR asks); and to its mm's pinned_vm, for VmPin.
 */
static int charge(struct softcm_mr *mr)
{
	unsigned long limit, cur;
	struct user_struct *user;

	if (!ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK)) {
		user = current_user();
		limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		cur = atomic_long_read(&user->locked_vm);
		do {
			if (cur > limit || mr->npages > limit - cur)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur,
						  cur + mr->npages));
		mr->user = get_uid(user);
	}
	atomic64_add(mr->npages, &mr->mm->pinned_vm);
	return 0;
}

/* Any context: what charge() did. */
static void uncharge(struct softcm_mr *mr)
{
	atomic64_sub(mr->npages, &mr->mm->pinned_vm);
	if (mr->user) {
		atomic_long_sub(mr->npages, &mr->user->locked_vm);
		free_uid(mr->user);
		mr->user = NULL;
	}
}

static bool writable(u32 access)
{
	return access & (ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
}

/*
 * FOLL_WRITE always, as this kernel's ib_umem_get() does, with FOLL_FORCE
 * when nobody may write through the MR: a read-only pin of a page not yet
 * written (the shared zero page, a page shared with a parent after fork)
 * would keep the old page while the program's next write replaces it, so
 * that a peer's RDMA READ would never see the program's data.  Forcing
 * the write fault gives the MR the page the program writes, and lets
 * memory the program cannot write (PROT_READ) be registered read-only.
 */
static int pin(struct softcm_mr *mr, u64 addr)
{
	unsigned int flags = FOLL_LONGTERM | FOLL_WRITE |
			     (writable(mr->access) ? 0 : FOLL_FORCE);
	unsigned long start = addr & PAGE_MASK;
	unsigned long done = 0;
	int ret;

	while (done < mr->npages) {
		cond_resched();
		ret = pin_user_pages_fast(start + done * PAGE_SIZE,
					  min(mr->npages - done, 1UL << 16), flags,
					  mr->pages + done);
		if (ret <= 0) {
			unpin_user_pages(mr->pages, done);
			return ret ?: -EFAULT;
		}
		done += ret;
	}
	return 0;
}

/*
 * A new random key in the table for @mr, in *@key (mr->lkey or mr->rkey).
 * The field is set only once the insertion made the key @mr's alone: a
 * candidate written first could, while a retry replaced it, equal the
 * MR's own other key (its lkey, tried as its rkey), and a peer's lookup
 * of that lkey would then pass as an rkey.  A lookup that finds the MR
 * before the field is set refuses it, which costs nothing: no one has
 * the key before REG_MR returns.  The field stays 0 when no key could be
 * inserted, so that erase_keys() never erases another MR's.
 */
static int insert_key(struct softcm_mr *mr, u32 *key)
{
	int i, ret = -EAGAIN;
	u32 k;

	for (i = 0; i < KEY_TRIES; i++) {
		k = get_random_u32();
		if (!k)
			continue;	/* 0 reads as "no key" too easily */
		ret = xa_insert(&mr->sn->mr_keys, k, mr, GFP_KERNEL_ACCOUNT);
		if (ret != -EBUSY)
			break;
	}
	if (!ret)
		WRITE_ONCE(*key, k);
	return ret;
}

static void erase_keys(struct softcm_mr *mr)
{
	if (mr->lkey)
		xa_erase(&mr->sn->mr_keys, mr->lkey);
	if (mr->rkey)
		xa_erase(&mr->sn->mr_keys, mr->rkey);
}

/*
 * Out of the table: no new lookup finds it, and its PD is free to go.  Its
 * pages stay pinned, and charged, until a grace period after the last
 * reference (mr_free()).
 */
static void mr_destroy(struct softcm_uobj *obj)
{
	struct softcm_mr *mr = container_of(obj, struct softcm_mr, uobj);

	erase_keys(mr);
	/* the use only: the reference stays for the data path's PD check */
	softcm_uobj_drop_use(&mr->pd->uobj);
	atomic_dec(&mr->sn->nr_uobjs);
}

/*
 * A grace period after the last reference, so after the keys left the
 * table, in process context: no packet that found the MR is still
 * copying (softcm_mr_find_rcu()).  Unpin and uncharge in one step, then
 * free: nothing can find the MR any more.
 */
static void mr_free_work(struct work_struct *work)
{
	struct softcm_mr *mr = container_of(to_rcu_work(work), struct softcm_mr, free_work);
	struct completion *freed = mr->freed;

	unpin_user_pages_dirty_lock(mr->pages, mr->npages, writable(mr->access));
	uncharge(mr);
	mmdrop(mr->mm);
	kvfree(mr->pages);
	softcm_uobj_put(&mr->pd->uobj);
	kfree(mr);
	if (freed)
		complete(freed);
}

/* Any context; the keys are out of the table (mr_destroy()). */
static void mr_free(struct softcm_uobj *obj)
{
	struct softcm_mr *mr = container_of(obj, struct softcm_mr, uobj);

	queue_rcu_work(softcm_workqueue(), &mr->free_work);
}

static const struct softcm_uobj_ops mr_ops = {
	.destroy = mr_destroy,
	.free = mr_free,
};

/*
 * Complete @mr in its PD and publish it: keys first, then the handle, all
 * under the file's lock so that no DEALLOC_PD or DEREG_MR runs between.
 * On failure after the keys, a lookup may hold the MR: it goes through
 * destroy and put like any other.
 */
static int publish(struct softcm_file *sf, struct softcm_mr *mr,
		   struct softcm_reg_mr *c)
{
	int ret;

	mutex_lock(&sf->uobjs.lock);
	mr->pd = softcm_pd_use(sf, c->pd_handle);
	if (IS_ERR(mr->pd)) {
		ret = PTR_ERR(mr->pd);
		mr->pd = NULL;
		goto out;
	}
	atomic_inc(&mr->sn->nr_uobjs);
	ret = insert_key(mr, &mr->lkey);
	if (!ret)
		ret = insert_key(mr, &mr->rkey);
	if (!ret)
		ret = softcm_uobj_add(&sf->uobjs, &mr->uobj);
	if (ret) {
		mr_destroy(&mr->uobj);
		goto out;
	}
	c->handle = mr->uobj.handle;
	c->lkey = mr->lkey;
	c->rkey = mr->rkey;
out:
	mutex_unlock(&sf->uobjs.lock);
	return ret;
}

int softcm_mr_reg(struct softcm_file *sf, struct softcm_reg_mr *c)
{
	unsigned long npages;
	struct softcm_mr *mr;
	int ret;

	if (c->reserved0)
		return -EINVAL;
	ret = check_access(c->access);
	if (!ret)
		ret = check_range(c, &npages);
	if (ret)
		return ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	softcm_uobj_init(&mr->uobj, SOFTCM_UOBJ_MR, &mr_ops);
	INIT_RCU_WORK(&mr->free_work, mr_free_work);
	mr->sn = softcm_net(sf->net);
	mr->iova = c->iova;
	mr->length = c->length;
	mr->access = c->access & ACCESS_SUPPORTED;
	mr->offset = c->addr & ~PAGE_MASK;
	mr->npages = npages;
	mr->mm = current->mm;
	mmgrab(mr->mm);

	ret = charge(mr);
	if (ret)
		goto err_drop_mm;
	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = pin(mr, c->addr);
	if (ret)
		goto err_free_pages;

	ret = publish(sf, mr, c);
	if (ret && mr->pd) {
		softcm_uobj_put(&mr->uobj);	/* the free work unwinds the rest */
		return ret;
	}
	if (ret)
		goto err_unpin;
	return 0;

err_unpin:
	unpin_user_pages(mr->pages, npages);
err_free_pages:
	kvfree(mr->pages);
err_uncharge:
	uncharge(mr);
err_drop_mm:
	mmdrop(mr->mm);
	kfree(mr);
	return ret;
}

/*
 * Returns once no packet can touch the region and its pages are unpinned
 * and uncharged (mr_free_work()).
 */
int softcm_mr_dereg(struct softcm_file *sf, struct softcm_destroy_obj *c)
{
	DECLARE_COMPLETION_ONSTACK(freed);
	struct softcm_uobj *obj;

	if (c->reserved0)
		return -EINVAL;
	obj = softcm_uobj_remove(&sf->uobjs, SOFTCM_UOBJ_MR, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	/* before our put: the last one, ours or not, orders it for the work */
	container_of(obj, struct softcm_mr, uobj)->freed = &freed;
	softcm_uobj_put(obj);
	wait_for_completion(&freed);
	return 0;
}

/*
 * The MR whose lkey (or, with @remote, rkey) is @key, or NULL: under
 * rcu_read_lock() (softirq counts), valid until rcu_read_unlock(), which
 * must come before the packet that asked is done, and with no sleep
 * before it.  A deregistered MR is not found; one found just before its
 * DEREG_MR keeps its pages until this section ends, and that DEREG_MR
 * waits for it.  The caller checks the rest: PD (mr->pd == qp->pd, both
 * referenced), access and bounds.
 */
struct softcm_mr *softcm_mr_find_rcu(struct softcm_net *sn, u32 key, bool remote)
{
	struct softcm_mr *mr;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(), "MR key lookup outside RCU");
	mr = xa_load(&sn->mr_keys, key);
	if (mr && (remote ? READ_ONCE(mr->rkey) : READ_ONCE(mr->lkey)) != key)
		return NULL;
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_mr_find_rcu);

void softcm_mr_net_init(struct softcm_net *sn)
{
	xa_init(&sn->mr_keys);
}

/*
 * Files pin their namespace, and their MRs leave the key table when they
 * close: none is left.  Their free works may still be queued, and the
 * module's code must outlive them: module exit runs this for every
 * namespace before the workqueue goes.
 */
void softcm_mr_net_uninit(struct softcm_net *sn)
{
	rcu_barrier();
	flush_workqueue(softcm_workqueue());
	WARN_ON(!xa_empty(&sn->mr_keys));
	xa_destroy(&sn->mr_keys);
}

/* Whether [@iova, @iova + @len) lies in @mr. */
static bool mr_covers(const struct softcm_mr *mr, u64 iova, u64 len)
{
	return iova >= mr->iova && len <= mr->length && iova - mr->iova <= mr->length - len;
}

/*
 * The other end of a copy: @buf, or, with @skb, a received packet's
 * bytes from @off, read where they lie (fragments included): only ever
 * a source.  Advanced by what was copied.  Or, with @frags, no copy: the
 * region's pages are attached to that skb as page fragments
 * (softcm_mr_sge_attach()).
 */
struct mr_io {
	u8 *buf;
	const struct sk_buff *skb;
	unsigned int off;
	struct sk_buff *frags;
};

/*
 * @n bytes of @page from @po, as @skb's next page fragment (or the
 * growth of its last one, when they follow it in the same page), the
 * page referenced for as long as the skb holds it: past a DEREG_MR that
 * unpins it, past the process's munmap.  -E2BIG with no room left but
 * the trailer's (softcm_rc_put_trailer()).
 */
static int mr_attach(struct sk_buff *skb, struct page *page, unsigned int po, unsigned int n)
{
	int i = skb_shinfo(skb)->nr_frags;

	if (skb_can_coalesce(skb, i, page, po)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], n);
	} else {
		if (i >= MAX_SKB_FRAGS - 1)
			return -E2BIG;
		get_page(page);
		skb_fill_page_desc(skb, i, page, po, n);
	}
	skb_len_add(skb, n);
	return 0;
}

/* Copy between @io and @mr's pages at @iova, checked by mr_covers(). */
static int mr_copy(struct softcm_mr *mr, u64 iova, struct mr_io *io, u32 len, bool to_mr)
{
	u64 off = iova - mr->iova + mr->offset;

	while (len) {
		unsigned int po = offset_in_page(off);
		unsigned int n = min_t(u32, len, PAGE_SIZE - po);
		struct page *page = mr->pages[off >> PAGE_SHIFT];
		u8 *va;

		if (io->frags) {
			int ret = mr_attach(io->frags, page, po, n);

			if (ret)
				return ret;
			off += n;
			len -= n;
			continue;
		}
		va = kmap_local_page(page);
		if (!to_mr) {
			memcpy(io->buf, va + po, n);
		} else if (!io->skb) {
			memcpy(va + po, io->buf, n);
		} else {
			/* the caller checked the packet's length */
			WARN_ON_ONCE(skb_copy_bits(io->skb, io->off, va + po, n));
		}
		if (to_mr)
			flush_dcache_page(page);
		kunmap_local(va);
		if (io->skb)
			io->off += n;
		else
			io->buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Copy @len bytes between @buf and the local buffers @sge (@n of them,
 * their lkeys in @pd), from byte @off of them on: into them with
 * @to_mr, which then need local write access.  The pages are the
 * pinned ones of each MR, looked up per call: the data path never
 * touches a user address.  -EMSGSIZE if the SGEs are too short,
 * -EACCES for a key, PD, bound or access that does not hold.
 */
static int sge_copy(struct softcm_net *sn, struct softcm_pd *pd,
		    const struct softcm_sge *sge, u32 n, u64 off, struct mr_io *io,
		    u32 len, bool to_mr)
{
	struct softcm_mr *mr;
	int ret = 0;
	u32 i, m;

	rcu_read_lock();
	for (i = 0; len && i < n; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		m = min_t(u64, len, sge[i].length - off);
		mr = softcm_mr_find_rcu(sn, sge[i].lkey, false);
		if (!mr || mr->pd != pd || !mr_covers(mr, sge[i].addr + off, m) ||
		    (to_mr && !(mr->access & IB_UVERBS_ACCESS_LOCAL_WRITE))) {
			ret = -EACCES;
			break;
		}
		ret = mr_copy(mr, sge[i].addr + off, io, m, to_mr);
		if (ret)
			break;
		len -= m;
		off = 0;
	}
	rcu_read_unlock();
	if (!ret && len)
		ret = -EMSGSIZE;
	return ret;
}

int softcm_mr_sge_copy(struct softcm_net *sn, struct softcm_pd *pd,
		       const struct softcm_sge *sge, u32 n, u64 off, u8 *buf,
		       u32 len, bool to_mr)
{
	struct mr_io io = { .buf = buf };

	return sge_copy(sn, pd, sge, n, off, &io, len, to_mr);
}

/*
 * As softcm_mr_sge_copy() into the SGEs, from @skb's bytes at @skb_off
 * (the caller checked that it holds @len there): a received payload
 * copied from the skb's fragments as they are, never linearised.
 */
int softcm_mr_sge_copy_skb(struct softcm_net *sn, struct softcm_pd *pd,
			   const struct softcm_sge *sge, u32 n, u64 off,
			   const struct sk_buff *skb, unsigned int skb_off, u32 len)
{
	struct mr_io io = { .skb = skb, .off = skb_off };

	return sge_copy(sn, pd, sge, n, off, &io, len, true);
}

/*
 * As softcm_mr_sge_copy() out of the SGEs, without the copy: their pages
 * become @skb's page fragments (a packet's payload, sent from the pinned
 * pages themselves).  -E2BIG if they would take more fragments than an
 * skb has: the caller frees @skb and copies instead.
 */
int softcm_mr_sge_attach(struct softcm_net *sn, struct softcm_pd *pd,
			 const struct softcm_sge *sge, u32 n, u64 off,
			 struct sk_buff *skb, u32 len)
{
	struct mr_io io = { .frags = skb };

	return sge_copy(sn, pd, sge, n, off, &io, len, false);
}

/*
 * Whether a peer may reach @len bytes at @va of @mr, the region its rkey
 * named, with @access (IB_UVERBS_ACCESS_REMOTE_*): -ENOENT if the key
 * names no region of @pd (none, a local key, another PD's: the rkey is
 * not valid for the QP), -EACCES if the region does not grant @access or
 * hold the range.  Both are a Remote Access Error on the wire; the
 * responder counts them apart.
 */
static int remote_ok(const struct softcm_mr *mr, const struct softcm_pd *pd, u32 access,
		     u64 va, u64 len)
{
	if (!mr || mr->pd != pd)
		return -ENOENT;
	if ((mr->access & access) != access || !mr_covers(mr, va, len))
		return -EACCES;
	return 0;
}

/*
 * What a peer's RDMA request may do to the region @rkey names: copy @len
 * bytes between @buf and it at @va, into it with @to_mr, once
 * remote_ok() holds, before a byte moves.  Looked up per call, as every
 * packet of a request: no MR is held across packets.
 */
static int remote_copy(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
		       u64 va, struct mr_io *io, u32 len, u32 access, bool to_mr)
{
	struct softcm_mr *mr;
	int ret;

	rcu_read_lock();
	mr = softcm_mr_find_rcu(sn, rkey, true);
	ret = remote_ok(mr, pd, access, va, len);
	if (!ret)
		ret = mr_copy(mr, va, io, len, to_mr);
	rcu_read_unlock();
	return ret;
}

int softcm_mr_remote_copy(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			  u64 va, u8 *buf, u32 len, u32 access, bool to_mr)
{
	struct mr_io io = { .buf = buf };

	return remote_copy(sn, pd, rkey, va, &io, len, access, to_mr);
}

/* As softcm_mr_remote_copy() into the region, from @skb's bytes at @skb_off. */
int softcm_mr_remote_copy_skb(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			      u64 va, const struct sk_buff *skb, unsigned int skb_off,
			      u32 len, u32 access)
{
	struct mr_io io = { .skb = skb, .off = skb_off };

	return remote_copy(sn, pd, rkey, va, &io, len, access, true);
}

/* As softcm_mr_remote_copy(), without the copy: whether it would be allowed. */
int softcm_mr_remote_check(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			   u64 va, u32 len, u32 access)
{
	int ret;

	rcu_read_lock();
	ret = remote_ok(softcm_mr_find_rcu(sn, rkey, true), pd, access, va, len);
	rcu_read_unlock();
	return ret;
}

/*
 * A peer's atomic on the 8 bytes at @va of the region @rkey names (IBTA
 * 9.4.5): with @cas, compare and swap (@swap_add stored if the value is
 * @compare), else fetch and add (@swap_add added, wrapping at 2^64); the
 * value found goes to @orig.  The MR must be in @pd, grant REMOTE_ATOMIC
 * and hold the 8 bytes: remote_ok()'s errors otherwise.  @va must be
 * 8-byte aligned, and so must its byte in the pinned page (an MR whose
 * iova is not aligned as its address has none such): -EINVAL otherwise,
 * as rxe's RESPST_ERR_MISALIGNED_ATOMIC.  Nothing is touched on an error.
 *
 * The operation is the CPU's own atomic instruction on the kernel's
 * mapping of the page: atomic against every other atomic on the address,
 * whichever QP or namespace sends it, and against the CPU atomics of the
 * processes that map the page (rxe's global spinlock covers only its own).
 */
int softcm_mr_remote_atomic(struct softcm_net *sn, struct softcm_pd *pd, u32 rkey,
			    u64 va, bool cas, u64 compare, u64 swap_add, u64 *orig)
{
	struct softcm_mr *mr;
	struct page *page;
	u64 off, *word;
	u8 *map;
	int ret;

	rcu_read_lock();
	mr = softcm_mr_find_rcu(sn, rkey, true);
	ret = remote_ok(mr, pd, IB_UVERBS_ACCESS_REMOTE_ATOMIC, va, sizeof(*word));
	if (ret)
		goto out_unlock;
	off = va - mr->iova + mr->offset;
	ret = -EINVAL;
	if ((va | off) & (sizeof(*word) - 1))
		goto out_unlock;
	/* aligned: the 8 bytes are in one page */
	page = mr->pages[off >> PAGE_SHIFT];
	map = kmap_local_page(page);
	word = (u64 *)(map + offset_in_page(off));
	if (cas)
		*orig = cmpxchg64(word, compare, swap_add);
	else
		*orig = atomic64_fetch_add((s64)swap_add, (atomic64_t *)word);
	flush_dcache_page(page);
	kunmap_local(map);
	ret = 0;
out_unlock:
	rcu_read_unlock();
	return ret;
}
