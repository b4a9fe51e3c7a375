// SPDX-License-Identifier: GPL-2.0
/*
 * Per-network-namespace state and its sysctl directory, net/softcm.
 *
 * Each namespace gets its own copy of the sysctl table whose .data pointers
 * point into that namespace's struct softcm_net, so that a write in one
 * namespace never changes another.
 */

#include <kunit/visibility.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/sysctl.h>
#include <uapi/linux/softcm.h>

#include "cm.h"
#include "compat.h"
#include "conntab.h"
#include "gid.h"
#include "listing.h"
#include "mr.h"
#include "netns.h"
#include "rc.h"
#include "stats.h"
#include "transport.h"

unsigned int softcm_net_id __read_mostly;
EXPORT_SYMBOL_IF_KUNIT(softcm_net_id);

static int backlog_max = SOFTCM_MAX_BACKLOG_LIMIT;
static int ids_max = SOFTCM_MAX_IDS_LIMIT;
static int ib_time_max = 31;
static int retries_max = 15;
/*
 * QP numbers are 24 bits, 2 to 2^24 - 1, one per QP of the namespace
 * from its creation to the end of its destroy.  A creating QP reserves
 * its number before it is charged against max_qps, and a destroyed one
 * is uncharged only after its number is free, so at most one number per
 * task (PID_MAX_LIMIT, 2^22) is in use beyond the charged QPs: capping
 * max_qps at 2^23 keeps the space out of reach of every setting.
 */
static int qps_max = 1 << 23;
/*
 * MRs take two random 32-bit keys each (mr.c), tried a few times: at
 * most 2^25 keys in use keeps a try's collision below 1/128.
 */
static int objs_max = 1 << 24;

enum {
	SYSCTL_MAX_BACKLOG, SYSCTL_MAX_IDS, SYSCTL_CM_RESPONSE_TIMEOUT,
	SYSCTL_CM_RETRIES, SYSCTL_PACKET_LIFE_TIME, SYSCTL_MRA_TIMEOUT,
	SYSCTL_MAX_PEER_TIMEOUT, SYSCTL_MAX_TIMEWAIT, SYSCTL_MAX_HELD_REQUESTS,
	SYSCTL_MAX_RING_BYTES, SYSCTL_MAX_AHS, SYSCTL_MAX_QPS, SYSCTL_MAX_MRS,
	SYSCTL_MAX_CQS, SYSCTL_MAX_PDS, SYSCTL_TX_ZCOPY, SYSCTL_TX_GSO,
	SYSCTL_COUNT	/* the entries, not counting the sentinel */
};

/*
 * The Linux CM's values (cma.c): CMA_CM_RESPONSE_TIMEOUT and friends.
 * The response timeout is the one upstream lowered to "roughly 1s"
 * (18, 1024 ms) together with exponential backoff of retransmissions;
 * 6.1 still advertises 20 (4096 ms).
 */
#define CM_RESPONSE_TIMEOUT_DEFAULT	18
#define CM_RETRIES_DEFAULT		15
#define PACKET_LIFE_TIME_DEFAULT	18
#define MRA_TIMEOUT_DEFAULT		24
/*
 * Caps on what a peer decides (2^16 ms, about 67 s, each): above every
 * time a Linux peer asks for with its defaults (4 s responses, 67 s MRAs),
 * far below the 2.3 hours the fields allow.
 */
#define MAX_PEER_TIMEOUT_DEFAULT	24
#define MAX_TIMEWAIT_DEFAULT		24
/*
 * REQs a listener holds beyond its backlog (backlog.c), as many as the
 * backlog's own default: about 1.2 KiB each, charged to the listener's
 * memory cgroup.
 */
#define MAX_HELD_REQUESTS_DEFAULT	SOFTCM_MAX_BACKLOG_DEFAULT
/*
 * The rings of every QP and CQ of the namespace (ring.c): 1 GiB, 32 QPs
 * of the largest queues or thousands of ordinary ones; each page is
 * charged to its creator's memory cgroup as well.
 */
#define MAX_RING_BYTES_DEFAULT		SZ_1G
/*
 * Verbs objects of the namespace, whatever their files: eight files at
 * their own limits (limits.h), sixteen for MRs.
 */
#define MAX_OBJS_DEFAULT		BIT(17)
#define MAX_MRS_DEFAULT			BIT(20)

#define IB_TIME(name) {							\
	.procname	= name,						\
	.maxlen		= sizeof(int),					\
	.mode		= 0644,						\
	.proc_handler	= proc_dointvec_minmax,				\
	.extra1		= SYSCTL_ZERO,					\
	.extra2		= &ib_time_max,					\
}

/* 0 refuses every object of the type: no verbs in the namespace. */
#define MAX_OBJS(name, max) {						\
	.procname	= name,						\
	.maxlen		= sizeof(int),					\
	.mode		= 0644,						\
	.proc_handler	= proc_dointvec_minmax,				\
	.extra1		= SYSCTL_ZERO,					\
	.extra2		= &(max),					\
}

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
	IB_TIME("cm_response_timeout"),
	{
		.procname	= "cm_retries",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &retries_max,
	},
	IB_TIME("packet_life_time"),
	IB_TIME("mra_timeout"),
	IB_TIME("max_peer_timeout"),
	IB_TIME("max_timewait"),
	{
		.procname	= "max_held_requests",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &backlog_max,
	},
	{
		.procname	= "max_ring_bytes",
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
	},
	MAX_OBJS("max_ahs", objs_max),
	MAX_OBJS("max_qps", qps_max),
	MAX_OBJS("max_mrs", objs_max),
	MAX_OBJS("max_cqs", objs_max),
	MAX_OBJS("max_pds", objs_max),
	{
		.procname	= "tx_zcopy",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "tx_gso",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{ }	/* the end for 6.1; 6.12 goes by SYSCTL_COUNT (compat.h) */
};

static_assert(ARRAY_SIZE(sysctl_template) == SYSCTL_COUNT + 1);

/*
 * The limits on what the namespace's users and peers may make the kernel
 * keep.  A namespace that an unprivileged user created (with a user
 * namespace of its own) would otherwise let that user raise them, since
 * its creator has CAP_NET_ADMIN over it: there they are read-only, as
 * Linux keeps several of its own net sysctls from such namespaces.  The
 * CM's timers stay writable everywhere.
 */
static const unsigned char sysctl_limits[] = {
	SYSCTL_MAX_BACKLOG, SYSCTL_MAX_IDS, SYSCTL_MAX_PEER_TIMEOUT,
	SYSCTL_MAX_TIMEWAIT, SYSCTL_MAX_HELD_REQUESTS, SYSCTL_MAX_RING_BYTES,
	SYSCTL_MAX_AHS, SYSCTL_MAX_QPS, SYSCTL_MAX_MRS, SYSCTL_MAX_CQS,
	SYSCTL_MAX_PDS, SYSCTL_TX_ZCOPY,
};

static int sysctl_register(struct softcm_net *sn)
{
	struct ctl_table *table;

	table = kmemdup(sysctl_template, sizeof(sysctl_template), GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	table[SYSCTL_MAX_BACKLOG].data = &sn->max_backlog;
	table[SYSCTL_MAX_IDS].data = &sn->max_ids_per_file;
	table[SYSCTL_CM_RESPONSE_TIMEOUT].data = &sn->cm_response_timeout;
	table[SYSCTL_CM_RETRIES].data = &sn->cm_retries;
	table[SYSCTL_PACKET_LIFE_TIME].data = &sn->packet_life_time;
	table[SYSCTL_MRA_TIMEOUT].data = &sn->mra_timeout;
	table[SYSCTL_MAX_PEER_TIMEOUT].data = &sn->max_peer_timeout;
	table[SYSCTL_MAX_TIMEWAIT].data = &sn->max_timewait;
	table[SYSCTL_MAX_HELD_REQUESTS].data = &sn->max_held_requests;
	table[SYSCTL_MAX_RING_BYTES].data = &sn->max_ring_bytes;
	table[SYSCTL_MAX_AHS].data = &sn->max_objs[SOFTCM_UOBJ_AH];
	table[SYSCTL_MAX_QPS].data = &sn->max_objs[SOFTCM_UOBJ_QP];
	table[SYSCTL_MAX_MRS].data = &sn->max_objs[SOFTCM_UOBJ_MR];
	table[SYSCTL_MAX_CQS].data = &sn->max_objs[SOFTCM_UOBJ_CQ];
	table[SYSCTL_MAX_PDS].data = &sn->max_objs[SOFTCM_UOBJ_PD];
	table[SYSCTL_TX_ZCOPY].data = &sn->tx_zcopy;
	table[SYSCTL_TX_GSO].data = &sn->tx_gso;
	if (sn->net->user_ns != &init_user_ns) {
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(sysctl_limits); i++)
			table[sysctl_limits[i]].mode = 0444;
	}

	sn->sysctl = register_net_sysctl_sz(sn->net, "net/softcm", table,
					    SYSCTL_COUNT);
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
	int i, ret;

	sn->net = net;
	ret = softcm_stats_init(&sn->stats);
	if (ret)
		return ret;
	sn->max_backlog = SOFTCM_MAX_BACKLOG_DEFAULT;
	sn->max_ids_per_file = SOFTCM_MAX_IDS_DEFAULT;
	sn->cm_response_timeout = CM_RESPONSE_TIMEOUT_DEFAULT;
	sn->cm_retries = CM_RETRIES_DEFAULT;
	sn->packet_life_time = PACKET_LIFE_TIME_DEFAULT;
	sn->mra_timeout = MRA_TIMEOUT_DEFAULT;
	sn->max_peer_timeout = MAX_PEER_TIMEOUT_DEFAULT;
	sn->max_timewait = MAX_TIMEWAIT_DEFAULT;
	sn->max_held_requests = MAX_HELD_REQUESTS_DEFAULT;
	sn->max_ring_bytes = MAX_RING_BYTES_DEFAULT;
	sn->tx_zcopy = 0;
	sn->tx_gso = 1;
	atomic_long_set(&sn->ring_bytes, 0);
	for (i = 0; i <= SOFTCM_UOBJ_TYPE_MAX; i++) {
		sn->max_objs[i] = MAX_OBJS_DEFAULT;
		atomic_set(&sn->nr_objs[i], 0);
		atomic_long_set(&sn->refused_objs[i], 0);
	}
	sn->max_objs[SOFTCM_UOBJ_MR] = MAX_MRS_DEFAULT;
	atomic_long_set(&sn->refused_ring_bytes, 0);
	atomic_long_set(&sn->refused_rdmacg, 0);
	softcm_ports_init(&sn->ports);
	mutex_init(&sn->ids_lock);
	INIT_LIST_HEAD(&sn->ids);
	xa_init_flags(&sn->qpns, XA_FLAGS_ALLOC);
	softcm_transport_net_init(sn);
	softcm_gid_init(sn);
	softcm_mr_net_init(sn);

	ret = softcm_conntab_init(sn);
	if (ret)
		goto err_uninit_transport;
	ret = softcm_stats_proc_init(net);
	if (ret)
		goto err_uninit_conntab;
	ret = softcm_listing_proc_init(net);
	if (ret)
		goto err_uninit_stats;
	ret = softcm_qps_proc_init(net);
	if (ret)
		goto err_uninit_listing;
	ret = sysctl_register(sn);
	if (ret)
		goto err_uninit_qps;

	WRITE_ONCE(sn->ready, true);
	pr_debug("netns %u created\n", net->ns.inum);
	return 0;

err_uninit_qps:
	softcm_qps_proc_uninit(net);
err_uninit_listing:
	softcm_listing_proc_uninit(net);
err_uninit_stats:
	softcm_stats_proc_uninit(net);
err_uninit_conntab:
	softcm_conntab_uninit(sn);
err_uninit_transport:
	softcm_mr_net_uninit(sn);
	softcm_transport_net_uninit(sn);
	softcm_ports_uninit(&sn->ports);
	softcm_stats_uninit(&sn->stats);
	return ret;
}

static void __net_exit softcm_net_exit(struct net *net)
{
	struct softcm_net *sn = softcm_net(net);

	WRITE_ONCE(sn->ready, false);
	sysctl_unregister(sn);
	softcm_qps_proc_uninit(net);
	softcm_listing_proc_uninit(net);
	softcm_stats_proc_uninit(net);
	/* Nothing arrives after this; then the connections in timewait go. */
	softcm_transport_net_uninit(sn);
	softcm_cm_net_uninit(sn);
	softcm_conntab_uninit(sn);
	/* Ids pin their namespace: none can exist or be resolving now. */
	WARN_ON(!list_empty(&sn->ids));
	softcm_mr_net_uninit(sn);	/* files pin it too: no MR is left */
	mutex_destroy(&sn->ids_lock);
	/* QPs pin their file, which pins the namespace */
	WARN_ON(!xa_empty(&sn->qpns));
	xa_destroy(&sn->qpns);
	softcm_ports_uninit(&sn->ports);
	softcm_stats_uninit(&sn->stats);
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
