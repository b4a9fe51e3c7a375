// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * A synchronous RDMA CM client: resolve the server, connect with a
 * greeting in the private data, print the server's answer, disconnect.
 *
 *   sync_client [-p PORT] [-m MESSAGE] SERVER
 *
 *   cc -o sync_client sync_client.c -lsoftcm    (or -lrdmacm)
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

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { 0 }, *res;
	struct rdma_conn_param param = { 0 };
	const struct rdma_conn_param *rep;
	const char *port = "7471", *msg = NULL;
	char greeting[56], local[64], peer[64];
	struct rdma_cm_id *id;
	int opt, ret;

	while ((opt = getopt(argc, argv, "p:m:")) != -1) {
		switch (opt) {
		case 'p':
			port = optarg;
			break;
		case 'm':
			msg = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;

	hints.ai_port_space = RDMA_PS_TCP;
	ret = rdma_getaddrinfo(argv[optind], port, &hints, &res);
	if (ret) {
		fprintf(stderr, "rdma_getaddrinfo: %s\n",
			ret == -1 ? strerror(errno) : gai_strerror(ret));
		return 1;
	}
	/* An active endpoint comes back with its address and route resolved. */
	ret = rdma_create_ep(&id, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (ret) {
		perror("rdma_create_ep");
		return 1;
	}

	/* RDMA_PS_TCP leaves 56 bytes of the request's private data to us. */
	if (msg)
		snprintf(greeting, sizeof(greeting), "%s", msg);
	else
		snprintf(greeting, sizeof(greeting), "hello from pid %d", (int)getpid());
	param.private_data = greeting;
	param.private_data_len = strlen(greeting) + 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	/*
	 * Returns with the server's reply.  Without a QP that is
	 * RDMA_CM_EVENT_CONNECT_RESPONSE, under librdmacm as under softcm: the
	 * connection is established once rdma_establish() has sent the RTU.
	 */
	if (rdma_connect(id, &param)) {
		perror("rdma_connect");
		rdma_destroy_ep(id);
		return 1;
	}
	if (id->event->event == RDMA_CM_EVENT_CONNECT_RESPONSE && rdma_establish(id)) {
		perror("rdma_establish");
		rdma_destroy_ep(id);
		return 1;
	}
	printf("connected to %s from %s\n",
	       addr_str(rdma_get_peer_addr(id), peer, sizeof(peer)),
	       addr_str(rdma_get_local_addr(id), local, sizeof(local)));
	/* The event that completed the call holds the server's reply. */
	rep = &id->event->param.conn;
	if (rep->private_data)
		printf("server says: %.*s\n",
		       (int)strnlen(rep->private_data, rep->private_data_len),
		       (const char *)rep->private_data);

	ret = 0;
	if (rdma_disconnect(id)) {
		perror("rdma_disconnect");
		ret = 1;
	} else {
		printf("disconnected\n");
	}
	rdma_destroy_ep(id);
	return ret;

usage:
	fprintf(stderr, "usage: %s [-p PORT] [-m MESSAGE] SERVER\n", argv[0]);
	return 2;
}
