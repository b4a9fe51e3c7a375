// SPDX-License-Identifier: GPL-2.0
/*
 * exec_peer: one side of an RC connection with a QP, through rdma-core's
 * librdmacm and libibverbs, as a program built for them uses them.  It is
 * built against rdma-core's headers and libraries, never libsoftcm: it
 * runs as it is on rdma_rxe, and under `softcm exec` on softcm
 * (tests/interop/exec_test.sh).
 *
 * Once the connection is ESTABLISHED it prints its QP as ibv_query_qp()
 * reports it, on one line:
 *
 *	qp qpn N state RTS sq_psn N rq_psn N dest_qpn N
 *
 * then "established", and holds the connection (so that the test can look
 * at both QPs) until a line or end of file arrives on standard input; then
 * it disconnects.  Exit status 0 when all of that worked, 1 when anything
 * failed (the call is named on stderr), 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct peer {
	struct rdma_cm_id *listen_id, *id;
	struct rdma_addrinfo *res;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
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
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (!p->id->verbs)
		return fail("no device on the id");
	p->pd = ibv_alloc_pd(p->id->verbs);
	if (!p->pd)
		return fail("ibv_alloc_pd");
	p->cq = ibv_create_cq(p->id->verbs, 8, NULL, NULL, 0);
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
			 IBV_QP_DEST_QPN, &init))
		return fail("ibv_query_qp");
	printf("qp qpn %u state %s sq_psn %u rq_psn %u dest_qpn %u\n", qp->qp_num,
	       (unsigned int)a.qp_state < sizeof(qp_states) / sizeof(qp_states[0]) &&
	       qp_states[a.qp_state] ? qp_states[a.qp_state] : "?",
	       a.sq_psn, a.rq_psn, a.dest_qp_num);
	return 0;
}

/* Synchronous ids (no event channel): each call returns once it is done. */
static int server(struct peer *p)
{
	if (rdma_create_ep(&p->listen_id, p->res, NULL, NULL))
		return fail("rdma_create_ep");
	if (rdma_listen(p->listen_id, 1))
		return fail("rdma_listen");
	printf("listening\n");
	fflush(stdout);
	if (rdma_get_request(p->listen_id, &p->id))
		return fail("rdma_get_request");
	if (create_qp(p))
		return -1;
	if (rdma_accept(p->id, NULL))
		return fail("rdma_accept");
	return 0;
}

static int client(struct peer *p)
{
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
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

static void destroy(struct peer *p)
{
	if (p->id) {
		if (p->id->qp)
			rdma_destroy_qp(p->id);
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
	struct peer p = { 0 };
	char line[64];
	int is_server, ret = 1;

	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "Usage: exec_peer server|client ADDR PORT\n");
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
