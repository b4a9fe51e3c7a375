/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One end of an RC connection made by hand through the library's verbs
 * (no CM): a device opened in a namespace, a PD, two CQs, a QP and a
 * registered buffer; and the modify-QP sequence that connects it to
 * another end.  For the data-path programs (rc_*_test.c).
 */
#ifndef SOFTCM_RC_EP_H
#define SOFTCM_RC_EP_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "topo_helpers.h"
#include "vm_helpers.h"

struct rc_ep_opts {
	int scq_cqe, rcq_cqe;	/* 0: twice the QP's queue */
	int qp_wr;		/* max_send_wr (and max_recv_wr); 0: 64 */
	int rq_wr;		/* max_recv_wr; 0: qp_wr */
	int send_sge;		/* max_send_sge; 0: 2 */
	size_t len;		/* of the buffer; 0: 64 KiB */
	bool channel;		/* the receive CQ on a completion channel */
	bool stats;		/* open the namespace's softcm_stats */
	bool no_remote_read;	/* the MR without REMOTE_READ */
	bool remote_atomic;	/* the MR with REMOTE_ATOMIC */
};

struct rc_ep {
	struct ibv_context *ctx;
	struct ibv_comp_channel *chan;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	size_t len;
	int gid_index;
	int stats;		/* its namespace's softcm_stats, or -1 */
	const char *ns;		/* its namespace's name, once made */
};

/* The device of namespace @name, through the library: its file is opened there. */
static inline struct ibv_context *rc_open_dev_in(const char *name, int home)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int ns = netns_open(name), n;

	if (ns < 0 || netns_enter(ns))
		return NULL;
	list = ibv_get_device_list(&n);
	if (list && n == 1)
		ctx = ibv_open_device(list[0]);
	if (list)
		ibv_free_device_list(list);
	netns_enter(home);
	close(ns);
	return ctx;
}

/* The GID table's index of address @ip (IPv4, v4-mapped, or IPv6); -1 if none. */
static inline int rc_gid_index_of(struct ibv_context *ctx, const char *ip)
{
	union ibv_gid gid, want = { 0 };

	if (strchr(ip, ':')) {
		inet_pton(AF_INET6, ip, want.raw);
	} else {
		want.raw[10] = 0xff;
		want.raw[11] = 0xff;
		inet_pton(AF_INET, ip, &want.raw[12]);
	}
	for (int i = 0; i < 32; i++) {
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, &want, sizeof(gid)))
			return i;
	}
	return -1;
}

/*
 * Wait up to @ms for the GID of @ip in namespace @ns: a work adds it
 * after the address (notify.c).  0, or -1.
 */
static inline int rc_wait_gid(const char *ns, const char *ip, int home, int ms)
{
	struct ibv_context *ctx = rc_open_dev_in(ns, home);
	long end = topo_now_ms() + ms;
	int ret = -1;

	if (!ctx)
		return -1;
	while (ret < 0 && topo_now_ms() < end) {
		if (rc_gid_index_of(ctx, ip) >= 0)
			ret = 0;
		else
			usleep(10000);
	}
	ibv_close_device(ctx);
	return ret;
}

static inline int rc_ep_make(struct rc_ep *e, const char *ns, const char *ip, int home,
			     const struct rc_ep_opts *o)
{
	int wr = o->qp_wr ?: 64, rq_wr = o->rq_wr ?: wr;
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = rq_wr, .max_send_sge = o->send_sge ?: 2,
			 .max_recv_sge = 2 },
	};

	memset(e, 0, sizeof(*e));
	e->stats = -1;
	e->ns = ns;
	e->len = o->len ?: 65536;
	e->ctx = rc_open_dev_in(ns, home);
	if (!e->ctx)
		return -1;
	if (o->stats) {
		int nsfd = netns_open(ns);

		if (nsfd < 0)
			return -1;
		e->stats = stats_open(nsfd, home);
		close(nsfd);
		if (e->stats < 0)
			return -1;
	}
	e->gid_index = rc_gid_index_of(e->ctx, ip);
	e->pd = ibv_alloc_pd(e->ctx);
	if (o->channel) {
		e->chan = ibv_create_comp_channel(e->ctx);
		if (!e->chan)
			return -1;
	}
	e->scq = ibv_create_cq(e->ctx, o->scq_cqe ?: 2 * wr, NULL, NULL, 0);
	e->rcq = ibv_create_cq(e->ctx, o->rcq_cqe ?: 2 * rq_wr, NULL, e->chan, 0);
	if (e->gid_index < 0 || !e->pd || !e->scq || !e->rcq)
		return -1;
	a.send_cq = e->scq;
	a.recv_cq = e->rcq;
	e->qp = ibv_create_qp(e->pd, &a);
	e->buf = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!e->qp || e->buf == MAP_FAILED)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, e->len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE |
			   (o->no_remote_read ? 0 : IBV_ACCESS_REMOTE_READ) |
			   (o->remote_atomic ? IBV_ACCESS_REMOTE_ATOMIC : 0));
	return e->mr ? 0 : -1;
}

static inline void rc_ep_free(struct rc_ep *e)
{
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->chan)
		ibv_destroy_comp_channel(e->chan);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	/* (a fixture's zeroed end that was never made has no ctx and no fd) */
	if (e->ctx && e->stats >= 0)
		close(e->stats);
	if (e->ctx)
		ibv_close_device(e->ctx);
	if (e->buf && e->buf != MAP_FAILED)
		munmap(e->buf, e->len);
	memset(e, 0, sizeof(*e));
	e->stats = -1;
}

/*
 * No object of the file left in namespace @name (its "uobjs" gauge at 0
 * within @timeout_ms): 0, or -1 having said which namespace held what.
 */
static inline int rc_ns_empty(const char *name, int timeout_ms)
{
	int fd = netns_stats_open(name), ret = -1;

	if (fd < 0)
		return -1;
	if (!stats_wait_eq(fd, "uobjs", 0, timeout_ms))
		ret = 0;
	else
		fprintf(stderr, "# namespace %s still holds %lld objects (%lld QPs, %lld CQs, %lld MRs)\n",
			name, stats_get(fd, "uobjs"), stats_get(fd, "qps"), stats_get(fd, "cqs"),
			stats_get(fd, "mrs"));
	close(fd);
	return ret;
}

/*
 * A fixture's two ends freed, then nothing of theirs left in their
 * namespaces within @timeout_ms: a data-path test finds what it leaks
 * (a QP, CQ or MR the module kept after its file closed).  0, or -1.
 */
static inline int rc_ep_free_pair(struct rc_ep *a, struct rc_ep *b, int timeout_ms)
{
	const char *na = a->ns, *nb = b->ns;
	int ret = 0;

	rc_ep_free(a);
	rc_ep_free(b);
	if (na && rc_ns_empty(na, timeout_ms))
		ret = -1;
	if (nb && (!na || strcmp(na, nb)) && rc_ns_empty(nb, timeout_ms))
		ret = -1;
	return ret;
}

struct rc_path {
	uint32_t sq_psn;	/* of this side; the peer's rq_psn */
	uint8_t min_rnr_timer;	/* this side's, as responder */
	uint8_t rnr_retry;	/* this side's, as requester */
	uint8_t retry_cnt;	/* this side's, as requester; 0: 7 */
	uint8_t timeout;	/* this side's, as requester; 0: 14 (67 ms), scaled */
	uint8_t rd_atomic;	/* max_rd_atomic and max_dest_rd_atomic; 0: 1 */
	bool no_remote_read;	/* the QP's access flags without REMOTE_READ */
	bool remote_atomic;	/* the QP's access flags with REMOTE_ATOMIC */
};

/* @e to RTS, connected to @peer: path MTU 1024, 67 ms timeout unless said (scaled). */
static inline int rc_ep_connect(struct rc_ep *e, const struct rc_ep *peer,
				const struct rc_path *mine, const struct rc_path *theirs)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   (mine->no_remote_read ? 0 : IBV_ACCESS_REMOTE_READ) |
				   (mine->remote_atomic ? IBV_ACCESS_REMOTE_ATOMIC : 0),
	};
	int rd = mine->rd_atomic ?: 1;
	int ret;

	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = theirs->sq_psn;
	a.max_dest_rd_atomic = rd;
	a.min_rnr_timer = mine->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = e->gid_index;
	if (ibv_query_gid(peer->ctx, 1, peer->gid_index, &a.ah_attr.grh.dgid))
		return -1;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = mine->sq_psn;
	/*
	 * 67 ms, 8 times that on the debug kernel: there a window of
	 * packets can take longer than 67 ms to be acknowledged, and each
	 * early timeout sends the window again.
	 */
	a.timeout = (mine->timeout ?: 14) + softcm_slow_shift();
	a.retry_cnt = mine->retry_cnt ?: 7;
	a.rnr_retry = mine->rnr_retry;
	a.max_rd_atomic = rd;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Poll @cq until @n completions are in @wc, or @ms pass; how many came. */
static inline int rc_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, long ms)
{
	long end = topo_now_ms() + ms;
	int got = 0, r;

	while (got < n && topo_now_ms() < end) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (!r)
			usleep(200);
	}
	return got;
}

/* The state of @qp, or -1. */
static inline int rc_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

#endif /* SOFTCM_RC_EP_H */
