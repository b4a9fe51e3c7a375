// SPDX-License-Identifier: GPL-2.0
/*
 * exec_peer: one side of an RC connection with a QP, through rdma-core's
 * librdmacm and libibverbs, as a program built for them uses them.  It is
 * built against rdma-core's headers and libraries, never libsoftcm: it
 * runs as it is on rdma_rxe, and under `softcm exec` on softcm
 * (tests/interop/exec_test.sh).
 *
 *	exec_peer server|client ADDR PORT [-r INIT,RESP] [-s | -u N]
 *
 * Once the connection is ESTABLISHED it prints its QP as ibv_query_qp()
 * reports it, on one line:
 *
 *	qp qpn N state RTS sq_psn N rq_psn N dest_qpn N max_rd_atomic N
 *	max_dest_rd_atomic N min_rnr_timer N rnr_retry N
 *
 * then "established", and holds the connection (so that the test can look
 * at both QPs) until a line or end of file arrives on standard input; then
 * it disconnects.  -r: the initiator depth and responder resources it
 * asks for in its REQ or REP (default: 1,1 in the REQ, librdmacm's
 * defaults in the REP).  -s: one SEND of 64 bytes
 * from the client to the server first, made to meet an RNR NAK: the
 * client sends at once; the server posts its receive only when a line
 * arrives on standard input, then checks every byte.  Each prints
 * "send status S" or "recv status S bytes N data ok|bad".  -u N: a
 * stream's tail (softcm's requester sends its last SEND without AckReq
 * and later asks for the ACK with a probe): the server posts RECV_SLOTS
 * receives before it accepts and prints "recv K ok|bad" as each message
 * arrives, K counting them all, until a line or end of file arrives;
 * the client, for each line "send", posts N SENDs of 64 bytes in one
 * ibv_post_send(), none signalled, into a send queue of N, and prints
 * "posted K": a post that finds the queue still full (ENOMEM: the last
 * messages not yet acknowledged) is tried again every millisecond.
 * Exit status 0 when all of that worked, 1 when anything failed (the
 * call is named on stderr), 2 on a usage error.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG_SIZE	64
#define WAIT_SECONDS	60	/* the RNR waits are 655 ms each */
#define RECV_SLOTS	64	/* -u: the messages a server takes */

struct peer {
	struct rdma_cm_id *listen_id, *id;
	struct rdma_addrinfo *res;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char buf[RECV_SLOTS * MSG_SIZE];
	unsigned int init_depth, resp_res;
	unsigned int stream;	/* -u N: N, else 0 */
	int rd_set;	/* -r given: else the server accepts with librdmacm's defaults */
};

static const char *const qp_states[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
};

static int fail(const char *what)
{
	perror(what);
	return -1;
}

/* A PD, a CQ and an RC QP on the id's device, as rdma-core's examples. */
static int create_qp(struct peer *p)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = p->stream ?: 4, .max_recv_wr = RECV_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (!p->id->verbs)
		return fail("no device on the id");
	p->pd = ibv_alloc_pd(p->id->verbs);
	if (!p->pd)
		return fail("ibv_alloc_pd");
	p->cq = ibv_create_cq(p->id->verbs, RECV_SLOTS + 4, NULL, NULL, 0);
	if (!p->cq)
		return fail("ibv_create_cq");
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	if (rdma_create_qp(p->id, p->pd, &attr))
		return fail("rdma_create_qp");
	return 0;
}

static int print_qp(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
			 IBV_QP_DEST_QPN | IBV_QP_MAX_QP_RD_ATOMIC |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |
			 IBV_QP_RNR_RETRY, &init))
		return fail("ibv_query_qp");
	printf("qp qpn %u state %s sq_psn %u rq_psn %u dest_qpn %u max_rd_atomic %u "
	       "max_dest_rd_atomic %u min_rnr_timer %u rnr_retry %u\n", qp->qp_num,
	       (unsigned int)a.qp_state < sizeof(qp_states) / sizeof(qp_states[0]) &&
	       qp_states[a.qp_state] ? qp_states[a.qp_state] : "?",
	       a.sq_psn, a.rq_psn, a.dest_qp_num, a.max_rd_atomic, a.max_dest_rd_atomic,
	       a.min_rnr_timer, a.rnr_retry);
	return 0;
}

/* Message @m's byte @i, for -u. */
static unsigned char stream_byte(unsigned int m, unsigned int i)
{
	return (unsigned char)(i * 7 + 3 + m * 13);
}

/* -u: the server's RECV_SLOTS receives, posted before it accepts. */
static int stream_recvs(struct peer *p)
{
	struct ibv_sge sge = { .length = MSG_SIZE };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	unsigned int m;

	p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return fail("ibv_reg_mr");
	memset(p->buf, 0, sizeof(p->buf));
	for (m = 0; m < RECV_SLOTS; m++) {
		sge.addr = (uintptr_t)p->buf + m * MSG_SIZE;
		sge.lkey = p->mr->lkey;
		wr.wr_id = m;
		if (ibv_post_recv(p->id->qp, &wr, &bad))
			return fail("ibv_post_recv");
	}
	return 0;
}

/* Synchronous ids (no event channel): each call returns once it is done. */
static int server(struct peer *p)
{
	struct rdma_conn_param param = {
		.responder_resources = p->resp_res, .initiator_depth = p->init_depth,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	if (rdma_create_ep(&p->listen_id, p->res, NULL, NULL))
		return fail("rdma_create_ep");
	if (rdma_listen(p->listen_id, 1))
		return fail("rdma_listen");
	printf("listening\n");
	fflush(stdout);
	if (rdma_get_request(p->listen_id, &p->id))
		return fail("rdma_get_request");
	if (create_qp(p) || (p->stream && stream_recvs(p)))
		return -1;
	if (rdma_accept(p->id, p->rd_set ? &param : NULL))
		return fail("rdma_accept");
	return 0;
}

static int client(struct peer *p)
{
	struct rdma_conn_param param = {
		.responder_resources = p->resp_res, .initiator_depth = p->init_depth,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	if (rdma_create_ep(&p->id, p->res, NULL, NULL))
		return fail("rdma_create_ep");
	if (create_qp(p))
		return -1;
	if (rdma_connect(p->id, &param))
		return fail("rdma_connect");
	return 0;
}

/* One completion within WAIT_SECONDS: its status, or -1. */
static int wait_wc(struct peer *p, struct ibv_wc *wc)
{
	time_t end = time(NULL) + WAIT_SECONDS;
	int n;

	while ((n = ibv_poll_cq(p->cq, 1, wc)) == 0 && time(NULL) < end)
		poll(NULL, 0, 1);
	if (n != 1) {
		fprintf(stderr, "no completion (%d)\n", n);
		return -1;
	}
	return wc->status;
}

/* -s: the SEND that meets an RNR NAK, each side's part. */
static int exchange(struct peer *p, int is_server)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf, .length = MSG_SIZE };
	struct ibv_wc wc;
	char line[64];
	int st, i, ok = 1;

	p->mr = ibv_reg_mr(p->pd, p->buf, MSG_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return fail("ibv_reg_mr");
	sge.lkey = p->mr->lkey;
	if (!is_server) {
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		for (i = 0; i < MSG_SIZE; i++)
			p->buf[i] = (unsigned char)(i * 7 + 3);
		if (ibv_post_send(p->id->qp, &wr, &bad))
			return fail("ibv_post_send");
		st = wait_wc(p, &wc);
		printf("send status %d\n", st);
		fflush(stdout);
		return st ? -1 : 0;
	}
	/* the receive is posted only when the test says so */
	if (!fgets(line, sizeof(line), stdin))
		return fail("stdin");
	{
		struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

		memset(p->buf, 0, MSG_SIZE);
		if (ibv_post_recv(p->id->qp, &wr, &bad))
			return fail("ibv_post_recv");
	}
	st = wait_wc(p, &wc);
	for (i = 0; i < MSG_SIZE; i++)
		ok &= p->buf[i] == (unsigned char)(i * 7 + 3);
	printf("recv status %d bytes %u data %s\n", st, st ? 0 : wc.byte_len,
	       ok ? "ok" : "bad");
	fflush(stdout);
	return st || wc.byte_len != MSG_SIZE || !ok ? -1 : 0;
}

/* -u: the server reports each message until standard input has something. */
static int stream_server(struct peer *p)
{
	struct pollfd in = { .fd = 0, .events = POLLIN };
	unsigned int got = 0, i;
	struct ibv_wc wc;
	int n, ok;

	for (;;) {
		n = ibv_poll_cq(p->cq, 1, &wc);
		if (n < 0)
			return fail("ibv_poll_cq");
		if (n == 0) {
			if (poll(&in, 1, 1) > 0)
				return 0;
			continue;
		}
		ok = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		     wc.byte_len == MSG_SIZE && wc.wr_id == got;
		for (i = 0; ok && i < MSG_SIZE; i++)
			ok = p->buf[got * MSG_SIZE + i] == stream_byte(got, i);
		printf("recv %u %s\n", ++got, ok ? "ok" : "bad");
		fflush(stdout);
		if (!ok)
			return -1;
	}
}

/* -u: the client's unsignalled SENDs, N on each line "send". */
static int stream_client(struct peer *p)
{
	struct ibv_sge sge[RECV_SLOTS];
	struct ibv_send_wr wr[RECV_SLOTS], *bad;
	unsigned int sent = 0, m, i;
	char line[64];
	time_t end;
	int err;

	p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return fail("ibv_reg_mr");
	while (fgets(line, sizeof(line), stdin) && !strcmp(line, "send\n")) {
		if (sent + p->stream > RECV_SLOTS)
			return fail("-u: more messages than the server's receives");
		for (m = 0; m < p->stream; m++) {
			for (i = 0; i < MSG_SIZE; i++)
				p->buf[m * MSG_SIZE + i] = stream_byte(sent + m, i);
			sge[m] = (struct ibv_sge){ .addr = (uintptr_t)p->buf + m * MSG_SIZE,
						   .length = MSG_SIZE, .lkey = p->mr->lkey };
			wr[m] = (struct ibv_send_wr){ .wr_id = sent + m, .sg_list = &sge[m],
						      .num_sge = 1, .opcode = IBV_WR_SEND,
						      .next = m + 1 < p->stream ? &wr[m + 1] : NULL };
		}
		end = time(NULL) + WAIT_SECONDS;
		while ((err = ibv_post_send(p->id->qp, wr, &bad)) == ENOMEM &&
		       bad == wr && time(NULL) < end)
			poll(NULL, 0, 1);
		if (err) {
			errno = err;
			return fail("ibv_post_send");
		}
		sent += p->stream;
		printf("posted %u\n", sent);
		fflush(stdout);
	}
	return 0;
}

static void destroy(struct peer *p)
{
	if (p->id) {
		if (p->id->qp)
			rdma_destroy_qp(p->id);
		if (p->mr)
			ibv_dereg_mr(p->mr);
		if (p->cq)
			ibv_destroy_cq(p->cq);
		if (p->pd)
			ibv_dealloc_pd(p->pd);
		rdma_destroy_ep(p->id);
	}
	if (p->listen_id)
		rdma_destroy_ep(p->listen_id);
	if (p->res)
		rdma_freeaddrinfo(p->res);
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct peer p = { .init_depth = 1, .resp_res = 1 };
	int is_server, ret = 1, send = 0, i, end;
	char line[64];

	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "-s")) {
			send = 1;
		} else if (!strcmp(argv[i], "-u") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%u%n", &p.stream, &end) == 1 && !argv[i + 1][end] &&
			   p.stream > 0 && p.stream <= RECV_SLOTS) {
			i++;
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%u,%u", &p.init_depth, &p.resp_res) == 2) {
			i++;
			p.rd_set = 1;
		} else {
			break;
		}
	}
	if (argc < 4 || i < argc || (send && p.stream) ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "Usage: exec_peer server|client ADDR PORT [-r INIT,RESP] [-s | -u N]\n");
		return 2;
	}
	is_server = !strcmp(argv[1], "server");
	if (is_server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &p.res)) {
		perror("rdma_getaddrinfo");
		return 1;
	}
	if ((is_server ? server(&p) : client(&p)) || print_qp(p.id->qp))
		goto out;
	printf("established\n");
	fflush(stdout);
	if (send && exchange(&p, is_server))
		goto out;
	if (p.stream && (is_server ? stream_server(&p) : stream_client(&p)))
		goto out;

	if (!fgets(line, sizeof(line), stdin) && ferror(stdin)) {
		perror("stdin");
		goto out;
	}
	if (rdma_disconnect(p.id)) {
		perror("rdma_disconnect");
		goto out;
	}
	printf("disconnected\n");
	ret = 0;
out:
	destroy(&p);
	return ret;
}
