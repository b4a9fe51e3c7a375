// SPDX-License-Identifier: GPL-2.0
/*
 * Per-network-namespace state and its sysctl directory, net/softcm.
 *
 * Each namespace gets its own copy of the sysctl table whose .data pointers
 * point into that namespace's struct softcm_net, so that a write in one
 * namespace never changes another.
 */

#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/mm.h>
#include <net/netns/generic.h>
#include <uapi/linux/softcm.h>

#include "id.h"
#include "netns.h"

static unsigned int softcm_net_id __read_mostly;

static int backlog_max = SOFTCM_MAX_BACKLOG_LIMIT;
static int ids_max = SOFTCM_MAX_IDS_LIMIT;

enum { SYSCTL_MAX_BACKLOG, SYSCTL_MAX_IDS };

static const struct ctl_table sysctl_template[] = {
	{
		.procname	= "max_backlog",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &backlog_max,
	},
	{
		.procname	= "max_ids_per_file",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &ids_max,
	},
	{ }
};

struct softcm_net *softcm_net(const struct net *net)
{
	return net_generic(net, softcm_net_id);
}

void softcm_netns_add_id(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	mutex_lock(&sn->ids_lock);
	list_add_tail(&id->net_node, &sn->ids);
	mutex_unlock(&sn->ids_lock);
}

void softcm_netns_del_id(struct softcm_id *id)
{
	struct softcm_net *sn = softcm_net(id->net);

	mutex_lock(&sn->ids_lock);
	list_del_init(&id->net_node);
	mutex_unlock(&sn->ids_lock);
}

/*
 * A referenced snapshot of the namespace's ids, for a notification to
 * visit each under its own mutex (which ranks above ids_lock, so we cannot
 * take it while walking the list).  Release with softcm_netns_put_ids().
 */
struct softcm_id **softcm_netns_get_ids(struct net *net, unsigned int *count)
{
	struct softcm_net *sn = softcm_net(net);
	struct softcm_id **ids, *id;
	unsigned int n = 0, max = 0;

	mutex_lock(&sn->ids_lock);
	list_for_each_entry(id, &sn->ids, net_node)
		max++;
	ids = kvmalloc_array(max ?: 1, sizeof(*ids), GFP_KERNEL);
	if (ids) {
		list_for_each_entry(id, &sn->ids, net_node) {
			softcm_id_get(id);
			ids[n++] = id;
		}
	}
	mutex_unlock(&sn->ids_lock);
	*count = n;
	return ids;
}

void softcm_netns_put_ids(struct softcm_id **ids, unsigned int count)
{
	while (count)
		softcm_id_put(ids[--count]);
	kvfree(ids);
}

static int sysctl_register(struct softcm_net *sn)
{
	struct ctl_table *table;

	table = kmemdup(sysctl_template, sizeof(sysctl_template), GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	table[SYSCTL_MAX_BACKLOG].data = &sn->max_backlog;
	table[SYSCTL_MAX_IDS].data = &sn->max_ids_per_file;

	sn->sysctl = register_net_sysctl(sn->net, "net/softcm", table);
	if (!sn->sysctl) {
		kfree(table);
		return -ENOMEM;
	}
	return 0;
}

static void sysctl_unregister(struct softcm_net *sn)
{
	const struct ctl_table *table = sn->sysctl->ctl_table_arg;

	unregister_net_sysctl_table(sn->sysctl);
	kfree(table);
}

static int __net_init softcm_net_init(struct net *net)
{
	struct softcm_net *sn = softcm_net(net);
	int ret;

	sn->net = net;
	sn->max_backlog = SOFTCM_MAX_BACKLOG_DEFAULT;
	sn->max_ids_per_file = SOFTCM_MAX_IDS_DEFAULT;
	softcm_ports_init(&sn->ports);
	mutex_init(&sn->ids_lock);
	INIT_LIST_HEAD(&sn->ids);
	spin_lock_init(&sn->pending_lock);
	INIT_LIST_HEAD(&sn->pending);

	ret = sysctl_register(sn);
	if (ret)
		goto err_uninit_ports;

	WRITE_ONCE(sn->ready, true);
	pr_debug("netns %u created\n", net->ns.inum);
	return 0;

err_uninit_ports:
	softcm_ports_uninit(&sn->ports);
	return ret;
}

static void __net_exit softcm_net_exit(struct net *net)
{
	struct softcm_net *sn = softcm_net(net);

	WRITE_ONCE(sn->ready, false);
	sysctl_unregister(sn);
	/* Ids pin their namespace: none can exist or be resolving now. */
	WARN_ON(!list_empty(&sn->pending));
	WARN_ON(!list_empty(&sn->ids));
	mutex_destroy(&sn->ids_lock);
	softcm_ports_uninit(&sn->ports);
	pr_debug("netns %u destroyed\n", net->ns.inum);
}

static struct pernet_operations softcm_pernet_ops = {
	.init	= softcm_net_init,
	.exit	= softcm_net_exit,
	.id	= &softcm_net_id,
	.size	= sizeof(struct softcm_net),
};

int softcm_netns_init(void)
{
	return register_pernet_subsys(&softcm_pernet_ops);
}

void softcm_netns_uninit(void)
{
	unregister_pernet_subsys(&softcm_pernet_ops);
}
