// SPDX-License-Identifier: GPL-2.0
/*
 * A file's table of verbs objects, in the manner of uverbs' uobjects.
 *
 * Handles are allocated per file from 1 and name one object of one type:
 * a handle of another type, of another file or of a destroyed object is
 * ENOENT.  The table owns one reference on each object.  Removal takes
 * the object out of the table first, so that no new lookup finds it, then
 * tears it down; work already holding a reference finishes against an
 * object its own code marks dead.
 *
 * Creation is in two phases, as for ids (file.c): the object takes its
 * handle when it is complete (softcm_uobj_add()), but no other thread can
 * find, use or destroy it until the command's reply has reached userspace
 * (softcm_uobj_commit()).  A reply that cannot be copied out undoes the
 * object by its handle (softcm_uobj_abort()), which therefore still names
 * that object: an undo never removes another thread's object.
 *
 * Bounds, checked in this order when an object takes its handle: the
 * file's limit of the type (ENOMEM, what QUERY_DEVICE reports) and of
 * all types (EMFILE); the namespace's sysctl of the type, max_qps and
 * the like (ENOMEM, counted in refused_qps...); the rdma cgroup of the
 * creating task, one HCA_HANDLE for the file from its first object to
 * its release and one HCA_OBJECT per object (EAGAIN, as uverbs passes
 * on rdmacg_try_charge()'s answer; counted in refused_rdmacg).  The
 * namespace and the cgroup are uncharged when the object's destroy has
 * run, not when it leaves the table: a QP's number is free by then,
 * which is what keeps the 24-bit QP numbers out of reach (netns.c).
 */

#include <linux/cgroup_rdma.h>

#include <linux/lockdep.h>
#include <linux/slab.h>

#include "limits.h"
#include "netns.h"
#include "uobj.h"

/* What QUERY_DEVICE reports as max_pd, max_mr, ...: per file. */
static const unsigned int uobj_max[SOFTCM_UOBJ_TYPE_MAX + 1] = {
	[SOFTCM_UOBJ_AH] = SOFTCM_MAX_AH,
	[SOFTCM_UOBJ_QP] = SOFTCM_MAX_QP,
	[SOFTCM_UOBJ_MR] = SOFTCM_MAX_MR,
	[SOFTCM_UOBJ_CQ] = SOFTCM_MAX_CQ,
	[SOFTCM_UOBJ_PD] = SOFTCM_MAX_PD,
};

void softcm_uobjs_init(struct softcm_uobjs *u, struct softcm_net *sn)
{
	int type;

	u->sn = sn;
	u->cg = NULL;
	mutex_init(&u->lock);
	xa_init_flags(&u->objs, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	atomic_set(&u->count, 0);
	for (type = 0; type <= SOFTCM_UOBJ_TYPE_MAX; type++)
		atomic_set(&u->nr[type], 0);
}

static void uobj_release(struct kref *ref)
{
	struct softcm_uobj *obj = container_of(ref, struct softcm_uobj, ref);

	obj->ops->free(obj);
}

void softcm_uobj_put(struct softcm_uobj *obj)
{
	kref_put(&obj->ref, uobj_release);
}

void softcm_uobj_init(struct softcm_uobj *obj, enum softcm_uobj_type type,
		      const struct softcm_uobj_ops *ops)
{
	kref_init(&obj->ref);
	obj->type = type;
	obj->handle = 0;
	obj->committed = false;
	atomic_set(&obj->usecnt, 0);
	obj->ops = ops;
	obj->cg = NULL;
}

/* One more object of @type in the namespace, if its sysctl allows. */
static int net_charge(struct softcm_net *sn, enum softcm_uobj_type type)
{
	if (atomic_inc_return(&sn->nr_objs[type]) > READ_ONCE(sn->max_objs[type])) {
		atomic_dec(&sn->nr_objs[type]);
		atomic_long_inc(&sn->refused_objs[type]);
		return -ENOMEM;
	}
	return 0;
}

#if IS_ENABLED(CONFIG_CGROUP_RDMA)
/*
 * One device for the whole host, named "softcm" in rdma.max, not one per
 * namespace: a limit can name only a device that exists, and starts at
 * "max" on a new one, so a user who may make network namespaces (any
 * user, through a user namespace) would get an unlimited device with
 * each.  The namespaces' own caps are their sysctls.
 */
static struct rdmacg_device uobj_cg_device = { .name = "softcm" };

void softcm_uobj_rdmacg_init(void)
{
	rdmacg_register_device(&uobj_cg_device);
}

/* After the last file: nothing is charged to the device any more. */
void softcm_uobj_rdmacg_uninit(void)
{
	rdmacg_unregister_device(&uobj_cg_device);
}

/*
 * The file's HCA_HANDLE with its first object, as uverbs charges one
 * with each context, then @obj's HCA_OBJECT, to the creating task's
 * rdma cgroup.
 */
static int rdmacg_charge(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
	struct rdmacg_device *dev = &uobj_cg_device;
	int ret;

	lockdep_assert_held(&u->lock);
	if (!u->cg) {
		ret = rdmacg_try_charge(&u->cg, dev, RDMACG_RESOURCE_HCA_HANDLE);
		if (ret) {
			u->cg = NULL;
			goto err_count;
		}
	}
	ret = rdmacg_try_charge(&obj->cg, dev, RDMACG_RESOURCE_HCA_OBJECT);
	if (ret) {
		obj->cg = NULL;
		goto err_count;
	}
	return 0;

err_count:
	atomic_long_inc(&u->sn->refused_rdmacg);
	return ret;
}

static void rdmacg_uncharge_obj(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
	if (obj->cg)
		rdmacg_uncharge(obj->cg, &uobj_cg_device, RDMACG_RESOURCE_HCA_OBJECT);
	obj->cg = NULL;
}

static void rdmacg_uncharge_file(struct softcm_uobjs *u)
{
	if (u->cg)
		rdmacg_uncharge(u->cg, &uobj_cg_device, RDMACG_RESOURCE_HCA_HANDLE);
	u->cg = NULL;
}
#else
void softcm_uobj_rdmacg_init(void)
{
}

void softcm_uobj_rdmacg_uninit(void)
{
}

static int rdmacg_charge(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
	return 0;
}

static void rdmacg_uncharge_obj(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
}

static void rdmacg_uncharge_file(struct softcm_uobjs *u)
{
}
#endif

/*
 * Tear @obj down (it has left the table) and give back what it was
 * charged: after its destroy, which frees a QP's number.
 */
static void uobj_destroy(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
	obj->ops->destroy(obj);
	rdmacg_uncharge_obj(u, obj);
	atomic_dec(&u->sn->nr_objs[obj->type]);
}

/*
 * Reserve a new handle (obj->handle) for @obj; the table takes over the
 * caller's initial reference.  Called with the table's lock held, after
 * the object is complete; other threads find it only once the command
 * commits it (softcm_uobj_commit()), or the command aborts it.  A file
 * at its limit of objects of this type gets ENOMEM, what a device out of
 * resources answers under libibverbs.
 */
int softcm_uobj_add(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
	int ret;

	lockdep_assert_held(&u->lock);
	if (atomic_inc_return(&u->nr[obj->type]) > uobj_max[obj->type]) {
		ret = -ENOMEM;
		goto err_dec_type;
	}
	if (atomic_inc_return(&u->count) > SOFTCM_MAX_UOBJS_PER_FILE) {
		ret = -EMFILE;
		goto err_dec_count;
	}
	ret = net_charge(u->sn, obj->type);
	if (ret)
		goto err_dec_count;
	ret = rdmacg_charge(u, obj);
	if (ret)
		goto err_net_uncharge;
	ret = xa_alloc(&u->objs, &obj->handle, obj, xa_limit_31b, GFP_KERNEL_ACCOUNT);
	if (ret) {
		ret = ret == -EBUSY ? -EMFILE : ret;
		goto err_rdmacg_uncharge;
	}
	return 0;

err_rdmacg_uncharge:
	rdmacg_uncharge_obj(u, obj);
err_net_uncharge:
	atomic_dec(&u->sn->nr_objs[obj->type]);
err_dec_count:
	atomic_dec(&u->count);
err_dec_type:
	atomic_dec(&u->nr[obj->type]);
	return ret;
}

static void uobj_take_out(struct softcm_uobjs *u, struct softcm_uobj *obj)
{
	__xa_erase(&u->objs, obj->handle);
	atomic_dec(&u->count);
	atomic_dec(&u->nr[obj->type]);
}

/*
 * A new reference on the committed object @handle of @type, or
 * ERR_PTR(-ENOENT).
 */
struct softcm_uobj *softcm_uobj_get(struct softcm_uobjs *u,
				    enum softcm_uobj_type type, u32 handle)
{
	struct softcm_uobj *obj;

	rcu_read_lock();
	obj = xa_load(&u->objs, handle);
	/* acquire: pairs with the commit's release, after a complete object */
	if (obj && (obj->type != type || !smp_load_acquire(&obj->committed) ||
		    !kref_get_unless_zero(&obj->ref)))
		obj = NULL;
	rcu_read_unlock();
	return obj ?: ERR_PTR(-ENOENT);
}

/*
 * The reply that names the new object @handle of @type reached userspace:
 * from now on other threads may find, use and destroy it.
 */
void softcm_uobj_commit(struct softcm_uobjs *u, enum softcm_uobj_type type,
			u32 handle)
{
	struct softcm_uobj *obj;

	xa_lock(&u->objs);
	obj = xa_load(&u->objs, handle);
	if (!WARN_ON_ONCE(!obj || obj->type != type || obj->committed)) {
		/* release: what the command made is seen by who finds it committed */
		smp_store_release(&obj->committed, true);
	}
	xa_unlock(&u->objs);
}

/*
 * The reply that names the new object @handle of @type could not be copied
 * out: nobody knows the handle, so destroy the object.  Nobody else could
 * find it, so @handle is still this object and nothing uses it.
 */
void softcm_uobj_abort(struct softcm_uobjs *u, enum softcm_uobj_type type,
		       u32 handle)
{
	struct softcm_uobj *obj;

	mutex_lock(&u->lock);
	xa_lock(&u->objs);
	obj = xa_load(&u->objs, handle);
	if (WARN_ON_ONCE(!obj || obj->type != type || obj->committed ||
			 atomic_read(&obj->usecnt)))
		obj = NULL;
	else
		uobj_take_out(u, obj);
	xa_unlock(&u->objs);
	mutex_unlock(&u->lock);
	if (obj) {
		uobj_destroy(u, obj);
		softcm_uobj_put(obj);
	}
}

/*
 * As softcm_uobj_get(), and count a use of the object, which keeps it
 * from being destroyed until softcm_uobj_unuse().  Under the table's lock,
 * so that the object cannot be in the middle of its removal.
 */
struct softcm_uobj *softcm_uobj_use(struct softcm_uobjs *u,
				    enum softcm_uobj_type type, u32 handle)
{
	struct softcm_uobj *obj;

	lockdep_assert_held(&u->lock);
	obj = softcm_uobj_get(u, type, handle);
	if (!IS_ERR(obj))
		atomic_inc(&obj->usecnt);
	return obj;
}

void softcm_uobj_unuse(struct softcm_uobj *obj)
{
	atomic_dec(&obj->usecnt);
	softcm_uobj_put(obj);
}

/*
 * The user of @obj is destroyed: @obj may be destroyed too from now on,
 * but the user keeps the reference its use took until it is freed
 * itself (then softcm_uobj_put()), so that whatever still holds the
 * user (a packet, a timer) may still dereference @obj: a QP its PD and
 * CQs, an MR its PD.
 */
void softcm_uobj_drop_use(struct softcm_uobj *obj)
{
	atomic_dec(&obj->usecnt);
}

/*
 * Take the object @handle of @type out of the table and tear it down.
 * Returns it with the table's reference, which the caller drops with
 * softcm_uobj_put() once it has read what it reports; ERR_PTR(-ENOENT)
 * (an object not committed yet too), or ERR_PTR(-EBUSY) while another
 * object uses it.
 */
struct softcm_uobj *softcm_uobj_remove(struct softcm_uobjs *u,
				       enum softcm_uobj_type type, u32 handle)
{
	struct softcm_uobj *obj;

	mutex_lock(&u->lock);
	xa_lock(&u->objs);
	obj = xa_load(&u->objs, handle);
	if (!obj || obj->type != type || !obj->committed)
		obj = ERR_PTR(-ENOENT);
	else if (atomic_read(&obj->usecnt))
		obj = ERR_PTR(-EBUSY);
	else
		uobj_take_out(u, obj);
	xa_unlock(&u->objs);
	mutex_unlock(&u->lock);
	if (!IS_ERR(obj))
		uobj_destroy(u, obj);
	return obj;
}

/*
 * The file is closing and nothing else can reach its table: destroy every
 * object, users before what they use, so that every use is dropped before
 * its object's turn comes.
 */
void softcm_uobjs_release(struct softcm_uobjs *u)
{
	struct softcm_uobj *obj;
	unsigned long handle;
	int type;

	for (type = 1; type <= SOFTCM_UOBJ_TYPE_MAX; type++) {
		xa_for_each(&u->objs, handle, obj) {
			if (obj->type != type)
				continue;
			xa_lock(&u->objs);
			uobj_take_out(u, obj);
			xa_unlock(&u->objs);
			uobj_destroy(u, obj);
			softcm_uobj_put(obj);
		}
	}
	rdmacg_uncharge_file(u);
	WARN_ON_ONCE(!xa_empty(&u->objs));
	xa_destroy(&u->objs);
	mutex_destroy(&u->lock);
}
