// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/softcm: every id of the namespace, one line each, as
 * /proc/net/tcp lists sockets; softcm(8)'s "show" reads it.
 *
 * The ids are collected, referenced, when the file is opened: the ids the
 * namespace lists, then the connections that outlive their destroyed ids
 * in timewait.  Each line is formatted under its id's mutex, so it is
 * consistent in itself; the file as a whole is a snapshot taken at open,
 * read in O(ids) however many read() calls it takes.
 */

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "conntab.h"
#include "file.h"
#include "id.h"
#include "listing.h"
#include "netns.h"
#include "state.h"

#define LISTING_NAME	"softcm"

struct listing {
	struct net *net;		/* referenced */
	struct softcm_id **ids;		/* referenced */
	unsigned int count;
};

static void *listing_start(struct seq_file *m, loff_t *pos)
{
	struct listing *l = m->private;

	if (*pos == 0)
		return SEQ_START_TOKEN;
	return *pos <= l->count ? &l->ids[*pos - 1] : NULL;
}

static void *listing_next(struct seq_file *m, void *v, loff_t *pos)
{
	struct listing *l = m->private;

	++*pos;
	return *pos <= l->count ? &l->ids[*pos - 1] : NULL;
}

static void listing_stop(struct seq_file *m, void *v)
{
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

static int listing_show(struct seq_file *m, void *v)
{
	struct listing *l = m->private;
	struct softcm_id *id;
	pid_t pid = 0;
	u32 handle = 0;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "pid handle ps state local peer dev cm_state local_comm_id remote_comm_id qpn remote_qpn age_ms\n");
		return 0;
	}
	id = *(struct softcm_id **)v;

	mutex_lock(&id->mutex);
	/* A destroyed id left in timewait has no owner: "-" as in ss. */
	if (id->state != SOFTCM_STATE_DESTROYING) {
		pid = pid_vnr(id->file->owner);
		handle = id->handle;
	}
	if (pid)
		seq_printf(m, "%d %u", pid, handle);
	else
		seq_puts(m, "- -");
	seq_printf(m, " %s %s", ps_name(id->ps), softcm_state_name(id->state));
	show_addr(m, &id->src);
	show_addr(m, &id->dst);
	show_dev(m, l->net, id->dev.ifindex ?: id->bound_ifindex);
	seq_printf(m, " %s %#010x %#010x %#08x %#08x %u\n",
		   softcm_cm_state_name(id->cm.state), id->cm.local_id,
		   id->cm.remote.comm_id, id->cm.qpn, id->cm.remote_qpn,
		   jiffies_to_msecs(jiffies - id->created));
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
	struct softcm_id **live, **ids;
	unsigned int nlive, orphans;
	struct listing *l;
	int ret = -ENOMEM;

	/* The namespace may be on its way out: then there is nothing to list. */
	net = maybe_get_net(net);
	if (!net)
		return -ENOENT;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		goto err_put_net;
	live = softcm_netns_get_ids(net, &nlive);
	if (!live)
		goto err_free_listing;
	orphans = atomic_read(&softcm_net(net)->nr_conns);
	ids = kvmalloc_array(nlive + orphans ?: 1, sizeof(*ids), GFP_KERNEL);
	if (!ids)
		goto err_put_live;
	memcpy(ids, live, nlive * sizeof(*ids));
	kvfree(live);
	l->count = nlive + softcm_conn_get_orphans(softcm_net(net), ids + nlive, orphans);
	l->ids = ids;
	l->net = net;

	ret = seq_open(file, &listing_ops);
	if (ret)
		goto err_put_ids;
	((struct seq_file *)file->private_data)->private = l;
	return 0;

err_put_ids:
	softcm_netns_put_ids(ids, l->count);
	goto err_free_listing;
err_put_live:
	softcm_netns_put_ids(live, nlive);
err_free_listing:
	kfree(l);
err_put_net:
	put_net(net);
	return ret;
}

static int listing_release(struct inode *inode, struct file *file)
{
	struct listing *l = ((struct seq_file *)file->private_data)->private;

	softcm_netns_put_ids(l->ids, l->count);
	put_net(l->net);
	kfree(l);
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
