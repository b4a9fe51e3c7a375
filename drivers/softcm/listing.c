// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/softcm: every id of the namespace, one line each, as
 * /proc/net/tcp lists sockets; softcm(8)'s "show" reads it.
 *
 * Each read() walks from its position: the ids the namespace lists, then
 * the connections that outlive their destroyed ids in timewait, a batch
 * of at most LISTING_BATCH referenced at a time, all released when the
 * read() returns.  So an open listing pins nothing, and needs no memory
 * that grows with the namespace.  Each line is formatted under its id's
 * mutex, so it is consistent in itself; across read() calls ids that come
 * or go may shift the rest by a line, as in /proc/net/tcp.
 *
 * Comm IDs and QPNs are what a forged DREQ, REJ or REP must name: only the
 * id's owner (the uid that opened its file) and CAP_NET_ADMIN in the
 * namespace's user namespace see them; anyone else reads "-".
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "conntab.h"
#include "file.h"
#include "id.h"
#include "listing.h"
#include "netns.h"
#include "state.h"

#define LISTING_NAME	"softcm"
#define LISTING_BATCH	32

struct listing {
	struct net *net;		/* referenced only during a read() */
	bool held;
	bool privileged;		/* the opener: CAP_NET_ADMIN there */
	kuid_t reader;			/* the opener's euid */
	loff_t first;			/* position of batch[0] */
	unsigned long now;		/* jiffies the ages count to */
	unsigned int count;
	struct softcm_id *batch[LISTING_BATCH];	/* referenced */
};

static void put_batch(struct listing *l)
{
	while (l->count)
		softcm_id_put(l->batch[--l->count]);
}

/* The ids at index @from (0-based) on, up to LISTING_BATCH of them. */
static void fill(struct listing *l, loff_t from)
{
	struct softcm_net *sn = softcm_net(l->net);
	loff_t skip = from;

	put_batch(l);
	l->first = from;
	/* One being destroyed is listed with the orphans if it outlives that. */
	l->count = softcm_id_get_batch(l->net, &skip, l->batch, LISTING_BATCH);
	if (l->count < LISTING_BATCH && skip <= UINT_MAX)
		l->count += softcm_conn_get_orphans(sn, skip, l->batch + l->count,
						    LISTING_BATCH - l->count);
}

static void *at(struct listing *l, loff_t pos)
{
	loff_t i = pos - 1;

	if (i < l->first || i >= l->first + l->count)
		fill(l, i);
	return i - l->first < l->count ? &l->batch[i - l->first] : NULL;
}

static void *listing_start(struct seq_file *m, loff_t *pos)
{
	struct listing *l = m->private;

	/* Within a read() the namespace's exit waits for us: it is there. */
	l->held = maybe_get_net(l->net);
	if (!l->held)
		return NULL;
	/*
	 * One instant for the whole listing, so that its ages order the
	 * ids as they were made even when a row is written a tick after
	 * the one before it.
	 */
	if (*pos == 0) {
		l->now = jiffies;
		return SEQ_START_TOKEN;
	}
	return at(l, *pos);
}

static void *listing_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return at(m->private, *pos);
}

static void listing_stop(struct seq_file *m, void *v)
{
	struct listing *l = m->private;

	put_batch(l);
	l->first = 0;
	if (l->held)
		put_net(l->net);
	l->held = false;
}

static const char *ps_name(u16 ps)
{
	switch (ps) {
	case SOFTCM_PS_TCP:
		return "TCP";
	case SOFTCM_PS_UDP:
		return "UDP";
	default:
		return "?";
	}
}

/* ss's notation: "*" for no address; brackets around IPv6 before a port. */
static void show_addr(struct seq_file *m, const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET || a->ss_family == AF_INET6)
		seq_printf(m, " %pISpc", a);
	else
		seq_puts(m, " *");
}

static void show_dev(struct seq_file *m, struct net *net, int ifindex)
{
	struct net_device *dev;

	rcu_read_lock();
	dev = ifindex ? dev_get_by_index_rcu(net, ifindex) : NULL;
	seq_printf(m, " %s", dev ? dev->name : "*");
	rcu_read_unlock();
}

static void show_hex(struct seq_file *m, bool visible, u32 v, int width)
{
	if (visible)
		seq_printf(m, " %#0*x", width, v);
	else
		seq_puts(m, " -");
}

static int listing_show(struct seq_file *m, void *v)
{
	struct listing *l = m->private;
	struct softcm_id *id;
	bool owned, visible;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "pid handle ps state local peer dev cm_state local_comm_id remote_comm_id qpn remote_qpn age_ms\n");
		return 0;
	}
	id = *(struct softcm_id **)v;

	mutex_lock(&id->mutex);
	/*
	 * Only a published id that is not being destroyed has an owner, and
	 * then its file is alive for as long as we hold the id's mutex.  A
	 * request not read yet, or a destroyed id left in timewait: "-".
	 */
	owned = id->file && id->state != SOFTCM_STATE_DESTROYING;
	if (owned)
		seq_printf(m, "%d %u", pid_vnr(id->file->owner), id->handle);
	else
		seq_puts(m, "- -");
	visible = l->privileged || (owned && uid_eq(id->file->uid, l->reader));
	seq_printf(m, " %s %s", ps_name(id->ps), softcm_state_name(id->state));
	show_addr(m, &id->src);
	show_addr(m, &id->dst);
	show_dev(m, l->net, id->dev.ifindex ?: id->bound_ifindex);
	seq_printf(m, " %s", softcm_cm_state_name(id->cm.state));
	show_hex(m, visible, id->cm.local_id, 10);
	show_hex(m, visible, id->cm.remote.comm_id, 10);
	show_hex(m, visible, id->cm.qpn, 8);
	show_hex(m, visible, id->cm.remote_qpn, 8);
	seq_printf(m, " %u\n", jiffies_to_msecs(time_after(id->created, l->now) ?
						 0 : l->now - id->created));
	mutex_unlock(&id->mutex);
	return 0;
}

static const struct seq_operations listing_ops = {
	.start	= listing_start,
	.next	= listing_next,
	.stop	= listing_stop,
	.show	= listing_show,
};

static int listing_open(struct inode *inode, struct file *file)
{
	struct net *net = pde_data(inode);
	struct listing *l;
	int ret;

	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return -ENOMEM;
	l->net = net;
	l->reader = file->f_cred->euid;
	l->privileged = file_ns_capable(file, net->user_ns, CAP_NET_ADMIN);
	ret = seq_open(file, &listing_ops);
	if (ret) {
		kfree(l);
		return ret;
	}
	((struct seq_file *)file->private_data)->private = l;
	return 0;
}

static int listing_release(struct inode *inode, struct file *file)
{
	kfree(((struct seq_file *)file->private_data)->private);
	return seq_release(inode, file);
}

static const struct proc_ops listing_proc_ops = {
	.proc_open	= listing_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= listing_release,
};

int softcm_listing_proc_init(struct net *net)
{
	if (!proc_create_data(LISTING_NAME, 0444, net->proc_net, &listing_proc_ops, net))
		return -ENOMEM;
	return 0;
}

void softcm_listing_proc_uninit(struct net *net)
{
	remove_proc_entry(LISTING_NAME, net->proc_net);
}
