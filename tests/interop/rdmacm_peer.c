// SPDX-License-Identifier: GPL-2.0
/*
 * rdmacm_peer: one side of a connection through the system's librdmacm
 * and the kernel's rdma_cm (over rdma_rxe in the test VM), as a peer for
 * softcm in tests/interop/rxe_test.sh.  It is built against rdma-core's
 * <rdma/rdma_cma.h> and linked with -lrdmacm only, never with libsoftcm.
 *
 * No QP: the kernel's rdma_cm connects and accepts without one when
 * rdma_conn_param.qp_num says which QPN to announce; the active side then
 * gets CONNECT_RESPONSE instead of ESTABLISHED and sends the RTU with
 * rdma_establish().
 *
 * Every CM event is printed on a line of its own ("event NAME status N"),
 * private data as "data LEN HEX" and "text LEN TEXT" (all LEN bytes that
 * librdmacm reports, padding included: callers compare a prefix).  The
 * exit status is 0 only when the expected sequence happened, 1 when it did
 * not (or a wait ran out), 2 on a usage error.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

struct opts {
	int server;
	int reject;		/* server: rdma_reject(); client: expect REJECTED */
	int disconnect_first;	/* rdma_disconnect() right after ESTABLISHED */
	int gone;		/* server: destroy the id after rdma_accept(), on a
				 * line on stdin; client: expect REJECTED once
				 * established */
	int count;		/* server: connections to take */
	const char *data;
	unsigned int qpn;
	int timeout_s;		/* for the whole run */
	const char *addr, *port;
};

struct conn {
	int n;
	int established;
};

static struct timespec deadline;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rdmacm_peer server [-r | -g] [-D] [-d DATA] [-n COUNT] [-q QPN] [-t SEC] ADDR PORT\n"
		"       rdmacm_peer client [-r | -g] [-D] [-d DATA] [-q QPN] [-t SEC] ADDR PORT\n"
		"  server: listen on ADDR PORT, take COUNT (1) connections: print each\n"
		"          request's peer and private data, accept with DATA (-r: reject\n"
		"          with DATA)\n"
		"  client: connect to ADDR PORT with DATA; print the reply's private data\n"
		"          (-r: a rejection is expected)\n"
		"  -g      server: once accepted, destroy the id at a line on stdin,\n"
		"          before the RTU (the CM then sends a REJ); client: expect\n"
		"          that REJ: REJECTED once established\n"
		"  -D      disconnect right after ESTABLISHED (else wait for the peer's\n"
		"          DREQ, then answer it)\n"
		"  -t SEC  give up after SEC seconds in all (30)\n");
}

/* Milliseconds left until the deadline, at least 0. */
static int left_ms(void)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline.tv_sec - now.tv_sec) * 1000 +
	     (deadline.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? ms : 0;
}

static void print_data(const char *what, const void *data, unsigned int len)
{
	const unsigned char *p = data;
	unsigned int i;

	printf("%s data %u ", what, len);
	for (i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("\n%s text %u ", what, len);
	for (i = 0; i < len; i++)
		putchar(p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.');
	putchar('\n');
}

static const char *addr_str(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (getnameinfo(sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			sizeof(struct sockaddr_in), host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		return "(invalid)";
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
	return buf;
}

/* The next event, printed; NULL once the deadline has passed. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int n;

	do
		n = poll(&pfd, 1, left_ms());
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		printf("timeout waiting for an event\n");
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev)) {
		printf("rdma_get_cm_event: %s\n", strerror(errno));
		return NULL;
	}
	printf("event %s status %d\n", rdma_event_str(ev->event), ev->status);
	return ev;
}

/* A line on stdin (the test's go-ahead), by the deadline. */
static int wait_line(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char buf[64];
	int n;

	do
		n = poll(&pfd, 1, left_ms());
	while (n < 0 && errno == EINTR);
	if (n <= 0 || !fgets(buf, sizeof(buf), stdin)) {
		printf("no line on stdin\n");
		return -1;
	}
	return 0;
}

/* Wait for @want; anything else is a failure. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch);

	if (ev && (ev->event != want || ev->status)) {
		printf("unexpected: wanted %s\n", rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

static int lookup(const struct opts *o, struct addrinfo **res)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	int err = getaddrinfo(o->addr, o->port, &hints, res);

	if (err)
		printf("%s %s: %s\n", o->addr, o->port, gai_strerror(err));
	return err ? -1 : 0;
}

static struct rdma_conn_param conn_param(const struct opts *o)
{
	struct rdma_conn_param p = {
		.private_data = o->data,
		.private_data_len = strlen(o->data),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = o->qpn,
	};

	return p;
}

/* Answer the peer's DREQ, or wait for the answer to ours. */
static int disconnected(struct rdma_cm_id *id, const struct opts *o)
{
	if (!o->disconnect_first && rdma_disconnect(id)) {
		printf("rdma_disconnect (DREP): %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int run_client(struct rdma_event_channel *ch, const struct opts *o)
{
	struct rdma_conn_param p = conn_param(o);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct addrinfo *ai;
	char a[96];
	int ret = 1;

	if (lookup(o, &ai))
		return 1;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		printf("rdma_create_id: %s\n", strerror(errno));
		freeaddrinfo(ai);
		return 1;
	}
	if (rdma_resolve_addr(id, NULL, ai->ai_addr, 2000)) {
		printf("rdma_resolve_addr: %s\n", strerror(errno));
		goto out;
	}
	ev = expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ev)
		goto out;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 2000)) {
		printf("rdma_resolve_route: %s\n", strerror(errno));
		goto out;
	}
	ev = expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ev)
		goto out;
	rdma_ack_cm_event(ev);
	printf("connecting to %s\n", addr_str(rdma_get_peer_addr(id), a, sizeof(a)));
	if (rdma_connect(id, &p)) {
		printf("rdma_connect: %s\n", strerror(errno));
		goto out;
	}
	ev = next_event(ch);
	if (!ev)
		goto out;
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		printf("REJECTED reason %d\n", ev->status);
		print_data("reject", ev->param.conn.private_data,
			   ev->param.conn.private_data_len);
		rdma_ack_cm_event(ev);
		ret = o->reject ? 0 : 1;
		goto out;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ev->status)
			break;
		print_data("reply", ev->param.conn.private_data,
			   ev->param.conn.private_data_len);
		if (ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
			rdma_ack_cm_event(ev);
			/* No QP: rdma_establish() has the kernel send the RTU. */
			if (rdma_establish(id)) {
				printf("rdma_establish: %s\n", strerror(errno));
				goto out;
			}
		} else {
			rdma_ack_cm_event(ev);
		}
		printf("established\n");
		fflush(stdout);
		if (o->reject) {
			printf("unexpected: accepted\n");
			goto out;
		}
		if (o->gone) {
			ev = next_event(ch);
			if (!ev)
				goto out;
			if (ev->event != RDMA_CM_EVENT_REJECTED) {
				printf("unexpected: wanted REJECTED\n");
				rdma_ack_cm_event(ev);
				goto out;
			}
			printf("REJECTED reason %d\n", ev->status);
			rdma_ack_cm_event(ev);
			printf("done\n");
			ret = 0;
			goto out;
		}
		if (o->disconnect_first && rdma_disconnect(id)) {
			printf("rdma_disconnect: %s\n", strerror(errno));
			goto out;
		}
		ev = expect(ch, RDMA_CM_EVENT_DISCONNECTED);
		if (!ev)
			goto out;
		rdma_ack_cm_event(ev);
		if (disconnected(id, o))
			goto out;
		printf("done\n");
		ret = 0;
		goto out;
	default:
		break;
	}
	printf("unexpected event\n");
	rdma_ack_cm_event(ev);
out:
	rdma_destroy_id(id);
	freeaddrinfo(ai);
	return ret;
}

static int run_server(struct rdma_event_channel *ch, const struct opts *o)
{
	struct rdma_conn_param p = conn_param(o);
	struct rdma_cm_id *listen, *id;
	struct rdma_cm_event *ev;
	int seen = 0, done = 0, ret = 1;
	struct addrinfo *ai;
	struct conn *c;
	char a[96];

	if (lookup(o, &ai))
		return 1;
	if (rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP)) {
		printf("rdma_create_id: %s\n", strerror(errno));
		freeaddrinfo(ai);
		return 1;
	}
	if (rdma_bind_addr(listen, ai->ai_addr) || rdma_listen(listen, 16)) {
		printf("listen on %s: %s\n", addr_str(ai->ai_addr, a, sizeof(a)),
		       strerror(errno));
		goto out;
	}
	printf("listening on %s\n", addr_str(rdma_get_local_addr(listen), a, sizeof(a)));
	fflush(stdout);

	while (done < o->count) {
		ev = next_event(ch);
		if (!ev)
			goto out;
		id = ev->id;
		c = id->context;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			c = calloc(1, sizeof(*c));
			if (!c)
				break;
			c->n = ++seen;
			id->context = c;
			printf("[%d] request from %s\n", c->n,
			       addr_str(rdma_get_peer_addr(id), a, sizeof(a)));
			print_data("request", ev->param.conn.private_data,
				   ev->param.conn.private_data_len);
			rdma_ack_cm_event(ev);
			if (o->reject) {
				if (rdma_reject(id, o->data, strlen(o->data))) {
					printf("rdma_reject: %s\n", strerror(errno));
					goto out;
				}
				printf("[%d] rejected\n", c->n);
				rdma_destroy_id(id);
				free(c);
				done++;
				continue;
			}
			if (rdma_accept(id, &p)) {
				printf("rdma_accept: %s\n", strerror(errno));
				goto out;
			}
			if (o->gone) {
				/* With no RTU yet, the CM ends it with a REJ. */
				printf("[%d] accepted\n", c->n);
				if (wait_line())
					goto out;
				rdma_destroy_id(id);
				printf("[%d] destroyed\n", c->n);
				free(c);
				done++;
			}
			continue;
		case RDMA_CM_EVENT_ESTABLISHED:
			rdma_ack_cm_event(ev);
			c->established = 1;
			printf("[%d] established\n", c->n);
			fflush(stdout);
			if (o->disconnect_first && rdma_disconnect(id)) {
				printf("rdma_disconnect: %s\n", strerror(errno));
				goto out;
			}
			continue;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_ack_cm_event(ev);
			if (!c->established) {
				printf("[%d] unexpected: disconnected before established\n", c->n);
				goto out;
			}
			if (disconnected(id, o))
				goto out;
			printf("[%d] done\n", c->n);
			fflush(stdout);
			rdma_destroy_id(id);
			free(c);
			done++;
			continue;
		default:
			break;
		}
		printf("unexpected event\n");
		rdma_ack_cm_event(ev);
		goto out;
	}
	ret = 0;
out:
	rdma_destroy_id(listen);
	freeaddrinfo(ai);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = { .count = 1, .data = "", .qpn = 0x11, .timeout_s = 30 };
	struct rdma_event_channel *ch;
	char *end;
	int c, ret;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		usage(stderr);
		return 2;
	}
	o.server = !strcmp(argv[1], "server");
	argc--;
	argv++;
	while ((c = getopt(argc, argv, "rgDd:n:q:t:")) != -1) {
		switch (c) {
		case 'r':
			o.reject = 1;
			break;
		case 'g':
			o.gone = 1;
			break;
		case 'D':
			o.disconnect_first = 1;
			break;
		case 'd':
			o.data = optarg;
			break;
		case 'n':
			o.count = strtol(optarg, &end, 10);
			if (*end || o.count < 1)
				goto usage_error;
			break;
		case 'q':
			o.qpn = strtoul(optarg, &end, 0);
			if (*end)
				goto usage_error;
			break;
		case 't':
			o.timeout_s = strtol(optarg, &end, 10);
			if (*end || o.timeout_s < 1)
				goto usage_error;
			break;
		default:
			goto usage_error;
		}
	}
	if (optind != argc - 2 || (o.reject && o.gone))
		goto usage_error;
	o.addr = argv[optind];
	o.port = argv[optind + 1];

	/* Line by line, into a file that the test watches. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += o.timeout_s;
	ch = rdma_create_event_channel();
	if (!ch) {
		printf("rdma_create_event_channel: %s\n", strerror(errno));
		return 1;
	}
	ret = o.server ? run_server(ch, &o) : run_client(ch, &o);
	rdma_destroy_event_channel(ch);
	printf("exit %d\n", ret);
	return ret;

usage_error:
	usage(stderr);
	return 2;
}
