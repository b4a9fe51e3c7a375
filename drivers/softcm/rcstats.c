// SPDX-License-Identifier: GPL-2.0
/*
 * What each RC QP counts, and /proc/net/softcm_qps: every QP of the
 * namespace, one line each, with its state, path and counters, as
 * `rdma statistic qp` shows rxe's.
 *
 * A counter is bumped where its event happens, with or without the QP's
 * lock (the requester counts after it let go of it), so each is an atomic
 * of the QP's own; the namespace's sum is per CPU (stats.h).
 *
 * The listing walks the QPN table under RCU, as a packet finds its QP,
 * and formats each line under the QP's lock: it pins nothing and needs
 * no memory that grows with the namespace.  QPNs and PSNs are what a
 * forged packet must name: only the QP's owner (the uid that opened its
 * file) and CAP_NET_ADMIN in the namespace's user namespace see them.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "netns.h"
#include "qp.h"
#include "qpstate.h"
#include "rc.h"
#include "stats.h"

#define QPS_NAME	"softcm_qps"

void softcm_rc_count(struct softcm_qp *qp, enum softcm_rc_counter c, unsigned long n)
{
	atomic_long_add(n, &qp->rc.cnt[c]);
	softcm_stat_add(&qp->sn->stats, SOFTCM_STAT_RC + c, n);
}

/* The QP at or after QPN @idx; *@pos is its line's position: QPN + 1. */
static struct softcm_qp *qps_from(struct seq_file *m, unsigned long idx, loff_t *pos)
{
	struct softcm_net *sn = softcm_net(seq_file_net(m));
	struct softcm_qp *qp;

	qp = xa_find(&sn->qpns, &idx, ULONG_MAX, XA_PRESENT);
	if (qp)
		*pos = (loff_t)idx + 1;
	return qp;
}

static void *qps_start(struct seq_file *m, loff_t *pos)
	__acquires(RCU)
{
	rcu_read_lock();
	if (!*pos)
		return SEQ_START_TOKEN;
	return qps_from(m, *pos - 1, pos);
}

static void *qps_next(struct seq_file *m, void *v, loff_t *pos)
{
	struct softcm_qp *qp = qps_from(m, v == SEQ_START_TOKEN ? 0 : *pos, pos);

	if (!qp)
		++*pos;
	return qp;
}

static void qps_stop(struct seq_file *m, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static void show_hex(struct seq_file *m, bool visible, u32 v)
{
	if (visible)
		seq_printf(m, " 0x%06x", v);
	else
		seq_puts(m, " -");
}

static int qps_show(struct seq_file *m, void *v)
{
	struct net *net = seq_file_net(m);
	struct softcm_qp *qp = v;
	const struct softcm_rc *rc = &qp->rc;
	bool visible;
	int c;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "qpn type state dest_qpn sq_psn rq_psn local peer mtu");
		for (c = 0; c < SOFTCM_RC_COUNTERS; c++)
			seq_printf(m, " %s", softcm_rc_counter_name(c));
		seq_putc(m, '\n');
		return 0;
	}
	/*
	 * The QP's memory outlives our RCU section, its file may not: the
	 * owner is the QP's copy.
	 */
	visible = file_ns_capable(m->file, net->user_ns, CAP_NET_ADMIN) ||
		  uid_eq(qp->owner, m->file->f_cred->euid);
	spin_lock_bh(&qp->lock);
	show_hex(m, visible, qp->qpn);
	seq_printf(m, " %s %s", qp->type == IB_QPT_RC ? "RC" : "UD",
		   softcm_qp_state_name(qp->state));
	show_hex(m, visible, qp->attr.dest_qp_num);
	show_hex(m, visible, qp->type == IB_QPT_RC ? rc->psn : qp->attr.sq_psn);
	show_hex(m, visible, qp->type == IB_QPT_RC ? rc->epsn : qp->attr.rq_psn);
	if (qp->type == IB_QPT_RC && rc->path_ok && rc->v6)
		seq_printf(m, " %pI6c %pI6c %u", &rc->saddr, &rc->daddr, rc->mtu);
	else if (qp->type == IB_QPT_RC && rc->path_ok)
		seq_printf(m, " %pI4 %pI4 %u", &rc->saddr.s6_addr32[3],
			   &rc->daddr.s6_addr32[3], rc->mtu);
	else
		seq_puts(m, " - - -");
	spin_unlock_bh(&qp->lock);
	for (c = 0; c < SOFTCM_RC_COUNTERS; c++)
		seq_printf(m, " %ld", atomic_long_read(&rc->cnt[c]));
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations qps_ops = {
	.start	= qps_start,
	.next	= qps_next,
	.stop	= qps_stop,
	.show	= qps_show,
};

int softcm_qps_proc_init(struct net *net)
{
	if (!proc_create_net(QPS_NAME, 0444, net->proc_net, &qps_ops,
			     sizeof(struct seq_net_private)))
		return -ENOMEM;
	return 0;
}

void softcm_qps_proc_uninit(struct net *net)
{
	remove_proc_entry(QPS_NAME, net->proc_net);
}
