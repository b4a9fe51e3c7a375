// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * A synchronous RDMA CM server: librdmacm's blocking calls, one client at
 * a time.  A client's connection request carries its greeting in the
 * private data; we accept with ours and hang up.
 *
 *   sync_server [-b ADDRESS] [-p PORT] [-n COUNT]
 *
 * With -n, exits after COUNT clients; otherwise serves until killed.
 * Only the connection is made: the example shows the CM alone, so no
 * QP is created (rdma_create_ep() with a NULL qp_init_attr).
 *
 *   cc -o sync_server sync_server.c -lsoftcm    (or -lrdmacm)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static const char *addr_str(struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN], port[8];

	if (getnameinfo(sa, sizeof(struct sockaddr_storage), host, sizeof(host),
			port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(buf, len, "?");
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, len, "[%s]:%s", host, port);
	else
		snprintf(buf, len, "%s:%s", host, port);
	return buf;
}

/* The request's private data: the client's greeting, NUL-padded. */
static int greeting_len(const struct rdma_conn_param *conn)
{
	return conn->private_data ? strnlen(conn->private_data, conn->private_data_len) : 0;
}

static void serve(struct rdma_cm_id *id)
{
	const struct rdma_conn_param *req = &id->event->param.conn;
	struct rdma_conn_param param = { 0 };
	char peer[64], reply[128];

	addr_str(rdma_get_peer_addr(id), peer, sizeof(peer));
	printf("request from %s: %.*s\n", peer, greeting_len(req),
	       (const char *)req->private_data);

	snprintf(reply, sizeof(reply), "welcome, %s", peer);
	param.private_data = reply;
	param.private_data_len = strlen(reply) + 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.rnr_retry_count = 7;
	/*
	 * Returns with the client's RTU (ESTABLISHED), or with its DREQ
	 * when a client that hangs up at once has it overtake the RTU
	 * (DISCONNECTED): the event left in id->event says which.
	 */
	if (rdma_accept(id, &param)) {
		perror("rdma_accept");
		goto out;
	}
	if (id->event->event != RDMA_CM_EVENT_ESTABLISHED) {
		/* Destroying the id answers the DREQ. */
		printf("disconnected from %s before its RTU\n", peer);
		goto out;
	}
	printf("connected to %s\n", peer);

	/*
	 * Returns once the connection is down, whichever side sent the
	 * DREQ first: this one, or the client's, which ours then answers.
	 */
	if (rdma_disconnect(id)) {
		perror("rdma_disconnect");
		goto out;
	}
	printf("disconnected from %s\n", peer);
out:
	rdma_destroy_ep(id);
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { 0 }, *res;
	struct rdma_cm_id *listen_id, *id;
	const char *addr = NULL, *port = "7471";
	int count = 0, served, opt, ret;
	char local[64];

	while ((opt = getopt(argc, argv, "b:p:n:")) != -1) {
		switch (opt) {
		case 'b':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			count = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-b ADDRESS] [-p PORT] [-n COUNT]\n", argv[0]);
			return 2;
		}
	}

	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	ret = rdma_getaddrinfo(addr, port, &hints, &res);
	if (ret) {
		fprintf(stderr, "rdma_getaddrinfo: %s\n",
			ret == -1 ? strerror(errno) : gai_strerror(ret));
		return 1;
	}
	/* A passive endpoint is bound to the address; no QP without a device. */
	ret = rdma_create_ep(&listen_id, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (ret) {
		perror("rdma_create_ep");
		return 1;
	}
	if (rdma_listen(listen_id, 0)) {
		perror("rdma_listen");
		rdma_destroy_ep(listen_id);
		return 1;
	}
	printf("listening on %s\n", addr_str(rdma_get_local_addr(listen_id), local,
					     sizeof(local)));
	fflush(stdout);

	ret = 0;
	for (served = 0; !count || served < count; served++) {
		/* Blocks until a request arrives; the new id comes with it. */
		if (rdma_get_request(listen_id, &id)) {
			perror("rdma_get_request");
			ret = 1;
			break;
		}
		serve(id);
		fflush(stdout);
	}
	rdma_destroy_ep(listen_id);
	return ret;
}
