// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl commands of /dev/softcm (uapi/linux/softcm.h documents them).
 *
 * One table, indexed by the ioctl number's command field and clamped with
 * array_index_nospec(), gives each command its handler and its argument
 * sizes.  The size encoded in the ioctl number is the caller's struct
 * size: copy_struct_from_user() zero-fills a shorter struct and refuses a
 * longer one with unknown non-zero bytes, so structs can grow.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/softcm.h>

#include "addr.h"
#include "bind.h"
#include "chardev.h"
#include "cm.h"
#include "compat.h"
#include "file.h"
#include "id.h"
#include "netns.h"
#include "qp.h"
#include "qpattr.h"
#include "route.h"
#include "sockaddr.h"
#include "ucmd.h"

union ucmd_args {
	struct softcm_create_id create_id;
	struct softcm_destroy_id destroy_id;
	struct softcm_bind bind;
	struct softcm_listen listen;
	struct softcm_query_addr query_addr;
	struct softcm_query_id query_id;
	struct softcm_set_option set_option;
	struct softcm_migrate_id migrate_id;
	struct softcm_resolve_addr resolve_addr;
	struct softcm_resolve_route resolve_route;
	struct softcm_query_route query_route;
	struct softcm_connect connect;
	struct softcm_accept accept;
	struct softcm_reject reject;
	struct softcm_disconnect disconnect;
	struct softcm_init_qp_attr init_qp_attr;
	struct softcm_batch batch;
};

static int ucmd_create_id(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_create_id *c = &a->create_id;

	if (c->reserved0)
		return -EINVAL;
	return softcm_file_create_id(sf, c->ps, c->uid, &c->handle);
}

/* The copy-out of a new handle failed: nobody knows the id, so undo it. */
static void undo_create_id(struct softcm_file *sf, union ucmd_args *a)
{
	softcm_file_destroy_handle(sf, a->create_id.handle, NULL);
}

static int ucmd_destroy_id(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_destroy_id *c = &a->destroy_id;

	return softcm_file_destroy_handle(sf, c->handle, &c->events_reported);
}

static int ucmd_bind(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_bind *c = &a->bind;
	struct softcm_id *id;
	int ret;

	if (c->addr_len > sizeof(c->addr))
		return -EINVAL;
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_bind(id, c->addr, c->addr_len);
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_listen(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_id *id;
	int ret;

	id = softcm_file_get_locked(sf, a->listen.handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_listen(id, a->listen.backlog);
	softcm_id_unlock_put(id);
	return ret;
}

/*
 * getpeername(2) semantics: copy what fits, report the full size.  Only an
 * id that has a peer (a destination) answers for it.
 */
static int ucmd_query_addr(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_query_addr *c = &a->query_addr;
	struct sockaddr_storage ss;
	struct softcm_id *id;
	size_t len;
	int ret;

	if (c->reserved0 || c->which > SOFTCM_QUERY_CONNECTED_PEER)
		return -EINVAL;
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_query_addr(id, c->which, &ss);
	softcm_id_unlock_put(id);
	if (ret)
		return ret;

	len = softcm_addr_size(&ss);
	if (copy_to_user(u64_to_user_ptr(c->addr), &ss, min_t(size_t, len, c->addr_len)))
		return -EFAULT;
	c->addr_len = len;
	return 0;
}

static int ucmd_query_id(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_query_id *c = &a->query_id;
	struct softcm_id *id;

	if (c->reserved0 || c->reserved1)
		return -EINVAL;
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	c->state = id->state;
	c->ps = id->ps;
	c->bound_ifindex = id->bound_ifindex;
	c->backlog = id->state == SOFTCM_STATE_LISTEN ? id->backlog : 0;
	softcm_id_unlock_put(id);
	return 0;
}

static int ucmd_set_option(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_set_option *c = &a->set_option;
	struct softcm_id *id;
	int ret;

	if (c->level == SOFTCM_OPTION_FILE) {
		if (c->handle)
			return -EINVAL;
		return softcm_file_set_option(sf, c->optname, c->value);
	}
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_set_option(id, c->level, c->optname, c->value);
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_migrate_id(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_migrate_id *c = &a->migrate_id;
	struct softcm_file *from;
	struct fd f;
	int ret;

	if (c->reserved0)
		return -EINVAL;
	f = fdget(c->fd);
	if (fd_empty(f))
		return -EBADF;
	from = softcm_chardev_file(fd_file(f));
	if (!from || from->net != sf->net)
		ret = -EINVAL;
	else
		ret = softcm_file_migrate(sf, from, c->handle, &c->handle,
					  &c->events_reported);
	fdput(f);
	/*
	 * Always, not only when queued events moved: the caller may have
	 * moved records it held (counted in its page's @held) along.
	 */
	if (!ret)
		softcm_event_wake(&sf->evq);
	return ret;
}

static int ucmd_resolve_addr(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_resolve_addr *c = &a->resolve_addr;
	struct softcm_id *id;
	int ret;

	if (c->src_len > sizeof(c->src) || c->dst_len > sizeof(c->dst) || c->reserved0)
		return -EINVAL;
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_resolve_addr(id, c->src, c->src_len, c->dst, c->dst_len,
				     c->timeout_ms);
	/*
	 * The address the id is bound to now (its port final; the wildcard
	 * of an implicit bind until the resolution picks the source), for a
	 * caller whose struct has room for it.
	 */
	if (!ret) {
		memset(c->local, 0, sizeof(c->local));
		c->local_len = softcm_addr_size(&id->src);
		memcpy(c->local, &id->src, c->local_len);
	}
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_resolve_route(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_id *id;
	int ret;

	id = softcm_file_get_locked(sf, a->resolve_route.handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_resolve_route(id, a->resolve_route.timeout_ms);
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_query_route(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_query_route *c = &a->query_route;
	struct softcm_id *id;
	int ret;

	if (c->reserved0 || c->reserved1)
		return -EINVAL;
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_id_query_route(id, c);
	softcm_id_unlock_put(id);
	return ret;
}

/*
 * Whether @qpn, as CONNECT or ACCEPT announces it, numbers an RC QP of
 * the namespace: the connection then carries a QP's data, and the CM's
 * stale-QPN check guards it (id.h, qp_backed).  Numbers that name no QP
 * are those of programs that use the CM alone, free to announce any.
 */
static bool names_rc_qp(struct softcm_file *sf, u32 qpn)
{
	struct softcm_qp *qp;
	bool ret = false;

	rcu_read_lock();
	qp = softcm_qp_find_rcu(softcm_net(sf->net), qpn & 0xffffff);
	if (qp) {
		spin_lock_bh(&qp->lock);
		ret = !qp->dead && qp->type == IB_QPT_RC;
		spin_unlock_bh(&qp->lock);
	}
	rcu_read_unlock();
	return ret;
}

static int ucmd_connect(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_id *id;
	int ret;

	id = softcm_file_get_locked(sf, a->connect.handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	id->cm.qp_backed = names_rc_qp(sf, a->connect.param.qp_num);
	ret = softcm_cm_connect(id, &a->connect);
	softcm_id_unlock_put(id);
	return ret;
}

/*
 * SOFTCM_ACCEPT_QP: INIT again, RTR and RTS with what INIT_QP_ATTR gives,
 * as librdmacm's ucma_modify_qp_rtr() and _rts() before its REP or RTU.
 * A REP's depths are the ones it announces; an RTU's the connection's.
 */
static int accept_move_qp(struct softcm_id *id, struct softcm_qp *qp,
			  const struct softcm_accept *c)
{
	static const u32 states[] = { IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS };
	struct softcm_init_qp_attr *steps;
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&id->mutex);

	steps = kcalloc(ARRAY_SIZE(states), sizeof(*steps), GFP_KERNEL);
	if (!steps)
		return -ENOMEM;
	for (i = 0; !ret && i < ARRAY_SIZE(states); i++) {
		steps[i].qp_state = states[i];
		ret = softcm_qpattr_init(id, &steps[i]);
	}
	if (ret)
		goto out;
	if (!(c->flags & SOFTCM_ACCEPT_ESTABLISH)) {
		steps[1].attr.max_dest_rd_atomic = c->param.responder_resources;
		steps[2].attr.max_rd_atomic = c->param.initiator_depth;
	}
	ret = softcm_qp_move(qp, steps, ARRAY_SIZE(states));
out:
	kfree(steps);
	return ret;
}

/*
 * ACCEPT naming a QP: the QP's file is held (fdget) and the QP referenced
 * for the command only; under the id's mutex (lock order: the id's mutex,
 * then the QP's lock; design.rst) the answer is checked, the QP moved,
 * then the REP or RTU sent.  The checks come first, the QP's number among
 * them (the REP announces it, the RTU must be for the QP the REQ
 * announced), so that a command refused leaves the QP as it was, as
 * librdmacm leaves it when it does not get as far as the write().  Only a
 * move or a send that fails leaves the QP in ERR, and then nothing was
 * sent: the message goes last.
 */
static int accept_with_qp(struct softcm_file *sf, struct softcm_accept *c)
{
	struct softcm_file *qsf;
	struct softcm_qp *qp;
	struct softcm_id *id;
	struct fd f;
	int ret;

	f = fdget(c->qp_fd);
	if (fd_empty(f))
		return -EBADF;
	qsf = softcm_chardev_file(fd_file(f));
	if (!qsf || qsf->net != sf->net) {
		ret = -EINVAL;
		goto out_fdput;
	}
	qp = softcm_qp_get_rc(qsf, c->qp_handle);
	if (IS_ERR(qp)) {
		ret = PTR_ERR(qp);
		goto out_fdput;
	}
	/* a file of our namespace made it: this only restates that */
	ret = -EINVAL;
	if (qp->sn != softcm_net(sf->net))
		goto out_put_qp;

	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out_put_qp;
	}
	ret = softcm_cm_accept_check(id, c, qp->qpn);
	if (ret)
		goto out_unlock;
	ret = accept_move_qp(id, qp, c);
	if (!(c->flags & SOFTCM_ACCEPT_ESTABLISH))
		id->cm.qp_backed = true;
	if (!ret)
		ret = softcm_cm_accept(id, c, qp->qpn);
	if (ret)
		softcm_qp_set_err(qp);
out_unlock:
	softcm_id_unlock_put(id);
out_put_qp:
	softcm_qp_put(qp);
out_fdput:
	fdput(f);
	return ret;
}

static int ucmd_accept(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_accept *c = &a->accept;
	struct softcm_id *id;
	int ret;

	if (c->flags & SOFTCM_ACCEPT_QP)
		return accept_with_qp(sf, c);
	/* without the flag they mean nothing yet: zero, so they may later */
	if (c->qp_fd || c->qp_handle)
		return -EINVAL;
	id = softcm_file_get_locked(sf, c->handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (!(c->flags & SOFTCM_ACCEPT_ESTABLISH))
		id->cm.qp_backed = names_rc_qp(sf, c->param.qp_num);
	ret = softcm_cm_accept(id, c, 0);
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_reject(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_id *id;
	int ret;

	id = softcm_file_get_locked(sf, a->reject.handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_cm_reject(id, &a->reject);
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_disconnect(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_id *id;
	int ret;

	if (a->disconnect.reserved0)
		return -EINVAL;
	id = softcm_file_get_locked(sf, a->disconnect.handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_cm_disconnect(id);
	softcm_id_unlock_put(id);
	return ret;
}

/* The QP attributes for the id's next QP state, as rdma_init_qp_attr(). */
static int ucmd_init_qp_attr(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_id *id;
	int ret;

	id = softcm_file_get_locked(sf, a->init_qp_attr.handle);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = softcm_qpattr_init(id, &a->init_qp_attr);
	softcm_id_unlock_put(id);
	return ret;
}

static int ucmd_batch(struct softcm_file *sf, union ucmd_args *a);

struct ucmd {
	int (*handler)(struct softcm_file *sf, union ucmd_args *a);
	void (*undo)(struct softcm_file *sf, union ucmd_args *a);
	u16 size;	/* the struct as this kernel knows it */
	u16 min_size;	/* the struct in its first ABI version */
	/*
	 * What it does cannot be undone (BATCH): its reply is written once
	 * before it runs, so that a reply nobody could read fails the
	 * command before anything ran.
	 */
	bool reply_first;
};

#define UCMD(name, fn, type, undo_fn)					\
	[SOFTCM_CMD_##name] = {						\
		.handler = fn, .undo = undo_fn,				\
		.size = sizeof(struct type), .min_size = sizeof(struct type) \
	}

/* A struct that grew: @first is the member the first version ended before. */
#define UCMD_GREW(name, fn, type, undo_fn, first)			\
	[SOFTCM_CMD_##name] = {						\
		.handler = fn, .undo = undo_fn,				\
		.size = sizeof(struct type),				\
		.min_size = offsetof(struct type, first)		\
	}

static const struct ucmd ucmds[] = {
	UCMD(CREATE_ID, ucmd_create_id, softcm_create_id, undo_create_id),
	UCMD(DESTROY_ID, ucmd_destroy_id, softcm_destroy_id, NULL),
	UCMD(BIND, ucmd_bind, softcm_bind, NULL),
	UCMD(LISTEN, ucmd_listen, softcm_listen, NULL),
	UCMD(QUERY_ADDR, ucmd_query_addr, softcm_query_addr, NULL),
	UCMD(QUERY_ID, ucmd_query_id, softcm_query_id, NULL),
	UCMD(SET_OPTION, ucmd_set_option, softcm_set_option, NULL),
	UCMD(MIGRATE_ID, ucmd_migrate_id, softcm_migrate_id, NULL),
	UCMD_GREW(RESOLVE_ADDR, ucmd_resolve_addr, softcm_resolve_addr, NULL, local_len),
	UCMD(RESOLVE_ROUTE, ucmd_resolve_route, softcm_resolve_route, NULL),
	UCMD(QUERY_ROUTE, ucmd_query_route, softcm_query_route, NULL),
	UCMD(CONNECT, ucmd_connect, softcm_connect, NULL),
	UCMD_GREW(ACCEPT, ucmd_accept, softcm_accept, NULL, qp_fd),
	UCMD(REJECT, ucmd_reject, softcm_reject, NULL),
	UCMD(DISCONNECT, ucmd_disconnect, softcm_disconnect, NULL),
	UCMD(INIT_QP_ATTR, ucmd_init_qp_attr, softcm_init_qp_attr, NULL),
	[SOFTCM_CMD_BATCH] = {
		.handler = ucmd_batch,
		.size = sizeof(struct softcm_batch),
		.min_size = sizeof(struct softcm_batch),
		.reply_first = true
	},
};

static_assert(ARRAY_SIZE(ucmds) == SOFTCM_CMD_COUNT);

/* The ABI's layouts, the same for 32- and 64-bit userspace. */
static_assert(sizeof(struct softcm_create_id) == 16);
static_assert(sizeof(struct softcm_destroy_id) == 8);
static_assert(sizeof(struct softcm_bind) == 136);
static_assert(sizeof(struct softcm_listen) == 8);
static_assert(sizeof(struct softcm_query_addr) == 24);
static_assert(sizeof(struct softcm_query_id) == 24);
static_assert(sizeof(struct softcm_set_option) == 16);
static_assert(sizeof(struct softcm_migrate_id) == 16);
static_assert(sizeof(struct softcm_resolve_addr) == 408);
static_assert(sizeof(struct softcm_resolve_route) == 8);
static_assert(sizeof(struct softcm_query_route) == 72);
static_assert(sizeof(struct softcm_event) == 296);
static_assert(sizeof(struct softcm_event_full) == 640);
static_assert(offsetof(struct softcm_event_full, local) == 312);
static_assert(offsetof(struct softcm_event_full, route) == 568);
static_assert(sizeof(struct softcm_connect) == 280);
static_assert(sizeof(struct softcm_accept) == 296);
static_assert(offsetof(struct softcm_accept, qp_fd) == 288);
static_assert(sizeof(struct softcm_reject) == 264);
static_assert(sizeof(struct softcm_disconnect) == 8);
static_assert(sizeof(struct softcm_init_qp_attr) == 160);
static_assert(sizeof(struct softcm_batch_op) == 16);
static_assert(sizeof(struct softcm_batch) == 16);

long softcm_ucmd_ioctl(struct softcm_file *sf, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd);
	const struct ucmd *c;
	union ucmd_args a;
	int ret;

	if (_IOC_TYPE(cmd) != SOFTCM_IOCTL_TYPE ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) || nr >= ARRAY_SIZE(ucmds))
		return -ENOTTY;
	c = &ucmds[array_index_nospec(nr, ARRAY_SIZE(ucmds))];

	if (usize < c->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&a, c->size, uarg, usize);
	if (ret)
		return ret;
	/* the caller's own struct back: whether it can take the reply */
	if (c->reply_first && copy_to_user(uarg, &a, min_t(size_t, usize, c->size)))
		return -EFAULT;

	ret = c->handler(sf, &a);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &a, min_t(size_t, usize, c->size))) {
		if (c->undo)
			c->undo(sf, &a);
		return -EFAULT;
	}
	return 0;
}

/*
 * BATCH: each op runs through softcm_ucmd_ioctl() as its own ioctl would,
 * so a batch reaches nothing its commands could not; BATCH itself is
 * refused as an op, which bounds the stack to one level.  A batch of the
 * maximum size yields the CPU between ops and stops for a fatal signal.
 */
static int ucmd_batch(struct softcm_file *sf, union ucmd_args *a)
{
	struct softcm_batch *b = &a->batch;
	struct softcm_batch_op __user *uops = u64_to_user_ptr(b->ops);
	struct softcm_batch_op op;
	u32 i;

	if (!b->count || b->count > SOFTCM_BATCH_MAX)
		return -EINVAL;
	for (i = 0; i < b->count; i++) {
		if (fatal_signal_pending(current))
			break;
		if (copy_from_user(&op, &uops[i], sizeof(op)))
			break;
		if ((_IOC_TYPE(op.cmd) == SOFTCM_IOCTL_TYPE &&
		     _IOC_NR(op.cmd) == SOFTCM_CMD_BATCH) ||
		    op.arg != (unsigned long)op.arg)
			op.result = -EINVAL;
		else
			op.result = softcm_ucmd_ioctl(sf, op.cmd, op.arg);
		if (put_user(op.result, &uops[i].result))
			break;
		cond_resched();
	}
	if (!i)
		return fatal_signal_pending(current) ? -EINTR : -EFAULT;
	b->done = i;
	return 0;
}
