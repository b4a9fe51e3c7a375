// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/softcm_stats: the namespace's CM counters and gauges, one
 * "name value" per line, for tests and for people (softcm(8) reads it).
 */

#include <kunit/visibility.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "netns.h"
#include "params.h"
#include "stats.h"
#include "uobj.h"

static const char *const names[SOFTCM_STAT_COUNT] = {
	[SOFTCM_STAT_RX + 0] = "rx_req", "rx_mra", "rx_rej", "rx_rep", "rx_rtu",
	"rx_dreq", "rx_drep", "rx_sidr_req", "rx_sidr_rep",
	[SOFTCM_STAT_TX + 0] = "tx_req", "tx_mra", "tx_rej", "tx_rep", "tx_rtu",
	"tx_dreq", "tx_drep", "tx_sidr_req", "tx_sidr_rep",
	[SOFTCM_STAT_RETRANSMITS] = "retransmits",
	[SOFTCM_STAT_TIMEOUTS] = "timeouts",
	[SOFTCM_STAT_DUPLICATES] = "duplicates",
	[SOFTCM_STAT_DROP_LENGTH] = "drop_length",
	[SOFTCM_STAT_DROP_HEADER] = "drop_header",
	[SOFTCM_STAT_DROP_QKEY] = "drop_qkey",
	[SOFTCM_STAT_DROP_PKEY] = "drop_pkey",
	[SOFTCM_STAT_DROP_ICRC] = "drop_icrc",
	[SOFTCM_STAT_DROP_MAD] = "drop_mad",
	[SOFTCM_STAT_DROP_UNKNOWN] = "drop_unknown",
	[SOFTCM_STAT_DROP_STALE] = "drop_stale",
	[SOFTCM_STAT_DROP_PEER] = "drop_peer",
	[SOFTCM_STAT_DROP_BACKLOG] = "drop_backlog",
	[SOFTCM_STAT_DROP_QUEUE] = "drop_queue",
	[SOFTCM_STAT_DROP_NOMEM] = "drop_nomem",
	[SOFTCM_STAT_TX_ERRORS] = "tx_errors",
	[SOFTCM_STAT_BAD_ADDRESS] = "bad_address",
	[SOFTCM_STAT_NEIGH_UPDATES] = "neigh_updates",
	[SOFTCM_STAT_NEIGH_WAKEUPS] = "neigh_wakeups",
	[SOFTCM_STAT_REQ_HELD] = "req_held",
	[SOFTCM_STAT_REQ_PROMOTED] = "req_promoted",
	[SOFTCM_STAT_GID_TABLE_FULL] = "gid_table_full",
	[SOFTCM_STAT_DROP_ADDRESS] = "drop_address",
	[SOFTCM_STAT_DROP_QPN] = "drop_qpn",
	/*
	 * The RC block: "rc_" and the QP's name of the counter, but for
	 * those named before the block was.
	 */
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_PACKETS] = "rc_tx_packets",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_BYTES] = "rc_tx_bytes",
	[SOFTCM_STAT_RC + SOFTCM_RC_RX_PACKETS] = "rc_rx_packets",
	[SOFTCM_STAT_RC + SOFTCM_RC_RX_BYTES] = "rc_rx_bytes",
	[SOFTCM_STAT_RC + SOFTCM_RC_ACKS_SENT] = "rc_acks_sent",
	[SOFTCM_STAT_RC + SOFTCM_RC_ACKS_RECEIVED] = "rc_acks_received",
	[SOFTCM_STAT_RC + SOFTCM_RC_SEQ_NAKS_SENT] = "rc_seq_naks_sent",
	[SOFTCM_STAT_RC + SOFTCM_RC_SEQ_NAKS_RECEIVED] = "rc_seq_naks_received",
	[SOFTCM_STAT_RC + SOFTCM_RC_RNR_NAKS_SENT] = "rnr_naks_sent",
	[SOFTCM_STAT_RC + SOFTCM_RC_RNR_NAKS_RECEIVED] = "rc_rnr_naks_received",
	[SOFTCM_STAT_RC + SOFTCM_RC_ACCESS_NAKS_SENT] = "drop_access",
	[SOFTCM_STAT_RC + SOFTCM_RC_RETRANSMITS] = "rc_retransmits",
	[SOFTCM_STAT_RC + SOFTCM_RC_TIMEOUTS] = "rc_timeouts",
	[SOFTCM_STAT_RC + SOFTCM_RC_DUPLICATES] = "rc_duplicates",
	[SOFTCM_STAT_RC + SOFTCM_RC_DROPS] = "rc_drops",
	[SOFTCM_STAT_RC + SOFTCM_RC_READ_REPLAYS] = "read_replays",
	[SOFTCM_STAT_RC + SOFTCM_RC_RD_EXHAUSTED] = "rd_atomic_exhausted",
	[SOFTCM_STAT_RC + SOFTCM_RC_READ_RETRIES] = "read_retries",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_INLINE] = "rc_tx_inline",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_WORK] = "rc_tx_work",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_RCV] = "rc_tx_rcv",
	[SOFTCM_STAT_RC + SOFTCM_RC_RESP_RCV] = "rc_resp_rcv",
	[SOFTCM_STAT_RC + SOFTCM_RC_RESP_WORK] = "rc_resp_work",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_COPIED] = "rc_tx_copied",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_NO_ROUTE] = "rc_tx_no_route",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_ERRORS] = "rc_tx_errors",
	[SOFTCM_STAT_RC + SOFTCM_RC_DOORBELLS] = "rc_doorbells",
	[SOFTCM_STAT_RC + SOFTCM_RC_SQ_WRS] = "rc_sq_wrs",
	[SOFTCM_STAT_RC + SOFTCM_RC_TX_GSO] = "rc_tx_gso",
	[SOFTCM_STAT_RC + SOFTCM_RC_RESP_STOPS] = "rc_resp_stops",
	[SOFTCM_STAT_RC + SOFTCM_RC_RESP_CPU_WAITS] = "rc_resp_cpu_waits",
	[SOFTCM_STAT_RC + SOFTCM_RC_ACK_PROBES] = "rc_ack_probes",
	[SOFTCM_STAT_RC + SOFTCM_RC_STATE_DROPS] = "drop_state",
	[SOFTCM_STAT_RC + SOFTCM_RC_RKEY_NAKS_SENT] = "drop_rkey",
};

static const char *const rc_names[SOFTCM_RC_COUNTERS] = {
	[SOFTCM_RC_TX_PACKETS] = "tx_packets",
	[SOFTCM_RC_TX_BYTES] = "tx_bytes",
	[SOFTCM_RC_RX_PACKETS] = "rx_packets",
	[SOFTCM_RC_RX_BYTES] = "rx_bytes",
	[SOFTCM_RC_ACKS_SENT] = "acks_sent",
	[SOFTCM_RC_ACKS_RECEIVED] = "acks_received",
	[SOFTCM_RC_SEQ_NAKS_SENT] = "seq_naks_sent",
	[SOFTCM_RC_SEQ_NAKS_RECEIVED] = "seq_naks_received",
	[SOFTCM_RC_RNR_NAKS_SENT] = "rnr_naks_sent",
	[SOFTCM_RC_RNR_NAKS_RECEIVED] = "rnr_naks_received",
	[SOFTCM_RC_ACCESS_NAKS_SENT] = "access_naks_sent",
	[SOFTCM_RC_RETRANSMITS] = "retransmits",
	[SOFTCM_RC_TIMEOUTS] = "timeouts",
	[SOFTCM_RC_DUPLICATES] = "duplicates",
	[SOFTCM_RC_DROPS] = "drops",
	[SOFTCM_RC_READ_REPLAYS] = "read_replays",
	[SOFTCM_RC_RD_EXHAUSTED] = "rd_atomic_exhausted",
	[SOFTCM_RC_READ_RETRIES] = "read_retries",
	[SOFTCM_RC_TX_INLINE] = "tx_inline",
	[SOFTCM_RC_TX_WORK] = "tx_work",
	[SOFTCM_RC_TX_RCV] = "tx_rcv",
	[SOFTCM_RC_RESP_RCV] = "resp_rcv",
	[SOFTCM_RC_RESP_WORK] = "resp_work",
	[SOFTCM_RC_TX_COPIED] = "tx_copied",
	[SOFTCM_RC_TX_NO_ROUTE] = "tx_no_route",
	[SOFTCM_RC_TX_ERRORS] = "tx_errors",
	[SOFTCM_RC_DOORBELLS] = "doorbells",
	[SOFTCM_RC_SQ_WRS] = "sq_wrs",
	[SOFTCM_RC_TX_GSO] = "tx_gso",
	[SOFTCM_RC_RESP_STOPS] = "resp_stops",
	[SOFTCM_RC_RESP_CPU_WAITS] = "resp_cpu_waits",
	[SOFTCM_RC_ACK_PROBES] = "ack_probes",
	[SOFTCM_RC_STATE_DROPS] = "state_drops",
	[SOFTCM_RC_RKEY_NAKS_SENT] = "rkey_naks_sent",
};

/*
 * As the sysctls name them: net.softcm.max_qps bounds "charged_qps" and
 * counts its refusals in "refused_qps".
 */
static const char *const obj_names[SOFTCM_UOBJ_TYPE_MAX + 1] = {
	[SOFTCM_UOBJ_AH] = "ahs",
	[SOFTCM_UOBJ_QP] = "qps",
	[SOFTCM_UOBJ_MR] = "mrs",
	[SOFTCM_UOBJ_CQ] = "cqs",
	[SOFTCM_UOBJ_PD] = "pds",
};

const char *softcm_stat_name(enum softcm_stat i)
{
	return i < SOFTCM_STAT_COUNT ? names[i] : NULL;
}

const char *softcm_rc_counter_name(enum softcm_rc_counter c)
{
	return c < SOFTCM_RC_COUNTERS ? rc_names[c] : NULL;
}

unsigned long softcm_stat_read(const struct softcm_stats *s, enum softcm_stat i)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(s->cpu, cpu)->v[i];
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_stat_read);

static unsigned long stat_rej_read(const struct softcm_stats *s, bool tx, unsigned int r)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(s->cpu, cpu)->rej[tx][r];
	return sum;
}

int softcm_stats_init(struct softcm_stats *s)
{
	s->cpu = alloc_percpu(struct softcm_stats_cpu);
	return s->cpu ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_stats_init);

void softcm_stats_uninit(struct softcm_stats *s)
{
	free_percpu(s->cpu);
	s->cpu = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_stats_uninit);

static int stats_show(struct seq_file *m, void *v)
{
	struct softcm_net *sn = softcm_net(seq_file_single_net(m));
	unsigned int i, tx;

	for (i = 0; i < SOFTCM_STAT_COUNT; i++)
		seq_printf(m, "%s %lu\n", names[i], softcm_stat_read(&sn->stats, i));
	/* REJs by reason: only the reasons seen, there are dozens. */
	for (tx = 0; tx < 2; tx++) {
		for (i = 0; i < SOFTCM_REJ_SLOTS; i++) {
			unsigned long n = stat_rej_read(&sn->stats, tx, i);

			if (n)
				seq_printf(m, "%s_rej_reason_%u %lu\n", tx ? "tx" : "rx", i, n);
		}
	}
	seq_printf(m, "connections %d\n", atomic_read(&sn->conntab.nr_conns));
	seq_printf(m, "ids %d\n", atomic_read(&sn->nr_ids));
	seq_printf(m, "files %d\n", atomic_read(&sn->nr_files));
	seq_printf(m, "held_requests %d\n", atomic_read(&sn->nr_held));
	seq_printf(m, "uobjs %d\n", atomic_read(&sn->nr_uobjs));
	seq_printf(m, "cqs %d\n", atomic_read(&sn->nr_cqs));
	seq_printf(m, "qps %d\n", atomic_read(&sn->nr_qps));
	/* the namespace's verbs objects against its sysctls, and refusals */
	for (i = 1; i <= SOFTCM_UOBJ_TYPE_MAX; i++) {
		seq_printf(m, "charged_%s %d\n", obj_names[i],
			   atomic_read(&sn->nr_objs[i]));
		seq_printf(m, "refused_%s %ld\n", obj_names[i],
			   atomic_long_read(&sn->refused_objs[i]));
	}
	seq_printf(m, "ring_bytes %ld\n", atomic_long_read(&sn->ring_bytes));
	seq_printf(m, "refused_ring_bytes %ld\n",
		   atomic_long_read(&sn->refused_ring_bytes));
	seq_printf(m, "refused_rdmacg %ld\n", atomic_long_read(&sn->refused_rdmacg));
	seq_printf(m, "socket_v4 %d\n", READ_ONCE(sn->transport.sock_state[0]));
	seq_printf(m, "socket_v6 %d\n", READ_ONCE(sn->transport.sock_state[1]));
	seq_printf(m, "udp_port %u\n", softcm_udp_port);
	return 0;
}

int softcm_stats_proc_init(struct net *net)
{
	if (!proc_create_net_single("softcm_stats", 0444, net->proc_net,
				    stats_show, NULL))
		return -ENOMEM;
	return 0;
}

void softcm_stats_proc_uninit(struct net *net)
{
	remove_proc_entry("softcm_stats", net->proc_net);
}
