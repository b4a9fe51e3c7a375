// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm_submit(): rdma_cm calls in batches.  Each op is checked and its
 * command built as its call builds it (cma.c, resolve.c, conn.c); the
 * commands of the ops on one channel go down in one BATCH, and each op is
 * then finished as its call finishes (a new id's handle, a resolution's
 * addresses).  Only asynchronous ids: a synchronous call returns after
 * its event, and a batch waits for none.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"
#include "softcm.h"

union cmd {
	struct softcm_create_id create;
	struct softcm_resolve_addr resolve;
	struct softcm_resolve_route route;
	struct softcm_connect connect;
	struct softcm_disconnect disconnect;
	struct softcm_accept accept;
};

struct pending {
	union cmd cmd;
	unsigned long ioctl;
	struct softcm_id_priv *priv;	/* a SOFTCM_OP_CREATE_ID's new one */
	int fd;				/* -1: failed before the kernel */
};

/* An op's id, if it names a usable asynchronous one. */
static struct softcm_id_priv *async_priv(const struct softcm_op *op)
{
	struct softcm_id_priv *priv;

	if (!op->id)
		return NULL;
	priv = to_priv(op->id);
	return priv->sync ? NULL : priv;
}

static int prepare_create(struct softcm_op *op, struct pending *p)
{
	if (!op->channel || (op->ps != RDMA_PS_TCP && op->ps != RDMA_PS_UDP))
		return EINVAL;
	p->priv = softcm_id_alloc(op->channel, op->context, op->ps);
	if (!p->priv)
		return errno;
	p->cmd.create.uid = (uintptr_t)p->priv;
	p->cmd.create.ps = op->ps;
	p->ioctl = SOFTCM_IOCTL_CREATE_ID;
	p->fd = op->channel->fd;
	return 0;
}

static int prepare_resolve_addr(struct softcm_op *op, struct softcm_id_priv *priv,
				struct softcm_resolve_addr *c)
{
	socklen_t dlen = softcm_sa_len(op->dst_addr), slen = softcm_sa_len(op->src_addr);

	if (!dlen || op->timeout_ms < 0 || (op->src_addr && !slen))
		return EINVAL;
	c->handle = priv->handle;
	c->timeout_ms = op->timeout_ms;
	c->src_len = slen;
	c->dst_len = dlen;
	if (slen)
		memcpy(c->src, op->src_addr, slen);
	memcpy(c->dst, op->dst_addr, dlen);
	return 0;
}

/* The op's command, as its call would make it; 0 or an errno for op->err. */
static int prepare(struct softcm_op *op, struct pending *p)
{
	struct softcm_id_priv *priv;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (op->code == SOFTCM_OP_CREATE_ID)
		return prepare_create(op, p);
	priv = async_priv(op);
	if (!priv)
		return EINVAL;
	switch (op->code) {
	case SOFTCM_OP_RESOLVE_ADDR:
		if (prepare_resolve_addr(op, priv, &p->cmd.resolve))
			return EINVAL;
		p->ioctl = SOFTCM_IOCTL_RESOLVE_ADDR;
		break;
	case SOFTCM_OP_RESOLVE_ROUTE:
		if (op->timeout_ms < 0)
			return EINVAL;
		p->cmd.route.handle = priv->handle;
		p->cmd.route.timeout_ms = op->timeout_ms;
		p->ioctl = SOFTCM_IOCTL_RESOLVE_ROUTE;
		break;
	case SOFTCM_OP_CONNECT:
		if (softcm_connect_args(priv, op->conn_param, &p->cmd.connect))
			return errno;
		p->ioctl = SOFTCM_IOCTL_CONNECT;
		break;
	case SOFTCM_OP_DISCONNECT:
		/* As rdma_disconnect(): the QP flushes first. */
		if (softcm_qp_err(priv))
			return errno;
		p->cmd.disconnect.handle = priv->handle;
		p->ioctl = SOFTCM_IOCTL_DISCONNECT;
		break;
	case SOFTCM_OP_ACCEPT:
		/* With a QP, the command moves it to RTS first. */
		if (softcm_accept_args(priv, op->conn_param, &p->cmd.accept))
			return errno;
		p->ioctl = SOFTCM_IOCTL_ACCEPT;
		break;
	case SOFTCM_OP_ESTABLISH:
		if (priv->id.qp)
			return EINVAL;
		p->cmd.accept.uid = (uintptr_t)priv;
		p->cmd.accept.handle = priv->handle;
		p->cmd.accept.flags = SOFTCM_ACCEPT_ESTABLISH;
		p->ioctl = SOFTCM_IOCTL_ACCEPT;
		break;
	default:
		return EINVAL;
	}
	p->fd = priv->id.channel->fd;
	return 0;
}

/* The op's command returned @result (0 or -errno): finish as its call. */
static void finish(struct softcm_op *op, struct pending *p, int result)
{
	op->err = -result;
	if (op->code == SOFTCM_OP_CREATE_ID) {
		if (result) {
			softcm_id_free(p->priv);
			return;
		}
		p->priv->handle = p->cmd.create.handle;
		op->id = &p->priv->id;
	} else if (op->code == SOFTCM_OP_RESOLVE_ADDR && !result) {
		softcm_resolved_addr(to_priv(op->id), &p->cmd.resolve, op->dst_addr);
	} else if (op->code == SOFTCM_OP_ACCEPT && result) {
		/* As rdma_accept(): a QP that could not answer goes to ERR. */
		softcm_qp_err(to_priv(op->id));
	}
}

/*
 * One BATCH for the prepared ops from @first on that share its channel
 * (up to SOFTCM_BATCH_MAX), skipping those that failed already; marks
 * each one it sent done (fd -1).  The ops keep their order.
 */
static void run(struct softcm_op *ops, struct pending *p, int n, int first,
		struct softcm_batch_op *kops, int *idx)
{
	struct softcm_batch b = { 0 };
	int fd = p[first].fd, i, m = 0, err = 0;

	for (i = first; i < n && m < SOFTCM_BATCH_MAX; i++) {
		if (p[i].fd != fd)
			continue;
		kops[m].cmd = p[i].ioctl;
		kops[m].result = 0;
		kops[m].arg = (uintptr_t)&p[i].cmd;
		idx[m++] = i;
	}
	b.count = m;
	b.ops = (uintptr_t)kops;
	if (ioctl(fd, SOFTCM_IOCTL_BATCH, &b)) {
		err = errno;
		b.done = 0;
	}
	for (i = 0; i < m; i++) {
		/* Not run: the whole call failed, or a signal stopped it. */
		int res = i < (int)b.done ? kops[i].result : -(err ? err : EINTR);

		finish(&ops[idx[i]], &p[idx[i]], res);
		p[idx[i]].fd = -1;
	}
}

SOFTCM_EXPORT int softcm_submit(struct softcm_op *ops, int n)
{
	struct softcm_batch_op *kops;
	struct pending *p;
	int i, ok = 0, *idx;

	if (!ops || n <= 0)
		return softcm_err(EINVAL);
	p = calloc(n, sizeof(*p));
	kops = calloc(n < SOFTCM_BATCH_MAX ? n : SOFTCM_BATCH_MAX, sizeof(*kops));
	idx = calloc(n < SOFTCM_BATCH_MAX ? n : SOFTCM_BATCH_MAX, sizeof(*idx));
	if (!p || !kops || !idx) {
		free(p);
		free(kops);
		free(idx);
		return softcm_err(ENOMEM);
	}
	for (i = 0; i < n; i++)
		ops[i].err = prepare(&ops[i], &p[i]);
	for (i = 0; i < n; i++)
		while (p[i].fd >= 0)
			run(ops, p, n, i, kops, idx);
	for (i = 0; i < n; i++)
		ok += !ops[i].err;
	free(p);
	free(kops);
	free(idx);
	return ok;
}
