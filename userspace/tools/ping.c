// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm ping: one connection (or SIDR exchange) to a softcm or rdma_cm
 * peer, or a server for COUNT of them, showing each step; the tests use
 * it as the peer of librdmacm programs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>
#include <linux/softcm.h>

#include "softcm.h"
#include "tool.h"

#define PING_PORT	"7471"		/* librdmacm's examples' */
#define PING_DATA	"ping"
#define PING_REPLY	"pong"
#define PING_TIMEOUT_MS	10000
#define PING_RESOLVE_MS	2000		/* librdmacm's examples' */
#define PING_FOREVER	(-1)		/* poll()'s: no timeout */

#define STR(x)		#x
#define XSTR(x)		STR(x)

const char ping_help[] =
	"  ping -l [-D] [-R] [-u] [-b ADDR] [-p PORT] [-d DATA] [-q QPN] [-n COUNT]\n"
	"          [-t MS]\n"
	"             accept COUNT connections (1) on ADDR (0.0.0.0) port PORT\n"
	"             (" PING_PORT "): show each peer's address and private data, answer\n"
	"             DATA (\"" PING_REPLY "\"), and disconnect when the peer does; with -D,\n"
	"             disconnect first, as soon as a connection is established;\n"
	"             with -R, reject each request with DATA instead\n"
	"  ping [-u | -w | -i] [-p PORT] [-d DATA] [-q QPN] [-t MS] ADDR\n"
	"             connect to ADDR port PORT with DATA (\"" PING_DATA "\") as private\n"
	"             data; show the peer, its answer and the handshake time,\n"
	"             then disconnect (-w: wait for the server to; -i: once a\n"
	"             line arrives on standard input).  Every wait for the peer\n"
	"             gives up after MS ms (client: " XSTR(PING_TIMEOUT_MS) ", server: never).\n"
	"             -u: a UD id (RDMA_PS_UDP): a SIDR exchange, no connection.\n"
	"             -q: the QPN the REQ announces, or the server's first REP\n"
	"             or SIDR_REP (0; the next one QPN + 1, and so on)\n";

/* "10.0.0.1:7471", "[fe80::1%eth0]:7471" */
static const char *addr_str(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return "(none)";
	if (getnameinfo(sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
			sizeof(struct sockaddr_in6), host, sizeof(host), port,
			sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV))
		return "(invalid)";
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
	return buf;
}

/*
 * Private data as a C string literal.  The CM pads it to its message's
 * size with zeroes, which say nothing: they are left out.
 */
static const char *data_str(const void *data, unsigned int len, char *buf, size_t size)
{
	const unsigned char *p = data;
	size_t n = 0;

	while (len && !p[len - 1])
		len--;
	buf[n++] = '"';
	for (; len && n + 6 < size; p++, len--) {
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			buf[n++] = *p;
		else
			n += snprintf(buf + n, size - n, "\\x%02x", *p);
	}
	if (len)
		n += snprintf(buf + n, size - n, "...");
	snprintf(buf + n, size - n, "\"");
	return buf;
}

static int ping_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "softcm ping: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* The next event, or NULL with errno (ETIMEDOUT after @timeout_ms, if >= 0). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int timeout_ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *event;
	int n;

	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		errno = ETIMEDOUT;
	if (n <= 0 || rdma_get_cm_event(ch, &event))
		return NULL;
	return event;
}

/* Wait for @want; anything else is a failure, said on stderr. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type want, int timeout_ms)
{
	struct rdma_cm_event *event = next_event(ch, timeout_ms);

	if (!event) {
		ping_fail("waiting for %s: %s", rdma_event_str(want), strerror(errno));
		return NULL;
	}
	if (event->event == want && !event->status)
		return event;
	if (event->event == RDMA_CM_EVENT_REJECTED && event->status == 8) {
		ping_fail("connection refused: nothing listens there (REJ reason 8)");
	} else if (event->event == RDMA_CM_EVENT_REJECTED) {
		char d[1024];

		ping_fail("connection rejected (REJ reason %d), private data %s", event->status,
			  data_str(event->param.conn.private_data,
				   event->param.conn.private_data_len, d, sizeof(d)));
	} else {
		ping_fail("got %s (status %d) waiting for %s", rdma_event_str(event->event),
			  event->status, rdma_event_str(want));
	}
	rdma_ack_cm_event(event);
	return NULL;
}

struct ping_opts {
	int listen;
	int disconnect_first;		/* server: send the DREQ ourselves */
	int wait_disconnect;		/* client: leave the DREQ to the server */
	int wait_stdin;			/* client: disconnect after a line on stdin */
	int reject;			/* server: rdma_reject() with @data */
	enum rdma_port_space ps;	/* RDMA_PS_TCP, or RDMA_PS_UDP for SIDR */
	const char *bind;
	const char *port;
	const char *data;
	const char *addr;
	unsigned int qpn;		/* announced; there is no QP */
	int count;
	int timeout_ms;			/* every wait for the peer; PING_FOREVER */
	int timeout_given;		/* -t: else a default for our side */
	int help;			/* -h: only the usage */
};

static int lookup(const char *host, const char *port, int passive, struct addrinfo **res)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
		.ai_family = host ? AF_UNSPEC : AF_INET,
		.ai_socktype = SOCK_STREAM,
	};
	int err = getaddrinfo(host, port, &hints, res);

	if (err)
		return ping_fail("%s: %s", host ? host : port, gai_strerror(err));
	return 0;
}

/*
 * A line on stdin, within @timeout_ms: the caller's go-ahead (a test that
 * disconnects only once the peer has reported ESTABLISHED).
 */
static int wait_line(int timeout_ms)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char line[64];
	int n;

	printf("waiting for a line on stdin\n");
	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return ping_fail("waiting for stdin: %s", n ? strerror(errno) : "timed out");
	if (!fgets(line, sizeof(line), stdin))
		return ping_fail("stdin closed");
	return 0;
}

static int ping_client(struct rdma_event_channel *ch, const struct ping_opts *o)
{
	struct rdma_conn_param param = {
		.private_data = o->data,
		.private_data_len = strlen(o->data),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = o->qpn,
	};
	struct rdma_cm_event *event;
	struct timespec t0, t1;
	struct addrinfo *ai;
	struct rdma_cm_id *id;
	char a[80], b[80], d[1024];
	int ret = 1;

	if (lookup(o->addr, o->port, 0, &ai))
		return 1;
	if (rdma_create_id(ch, &id, NULL, o->ps)) {
		freeaddrinfo(ai);
		return ping_fail("rdma_create_id: %s", strerror(errno));
	}
	/*
	 * The kernel answers resolutions by their deadline, an error event
	 * saying more than our own timeout would: wait for it.
	 */
	if (rdma_resolve_addr(id, NULL, ai->ai_addr, PING_RESOLVE_MS)) {
		ping_fail("%s: %s", o->addr, strerror(errno));
		goto out;
	}
	event = expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, PING_FOREVER);
	if (!event)
		goto out;
	rdma_ack_cm_event(event);
	if (rdma_resolve_route(id, PING_RESOLVE_MS)) {
		ping_fail("rdma_resolve_route: %s", strerror(errno));
		goto out;
	}
	event = expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, PING_FOREVER);
	if (!event)
		goto out;
	rdma_ack_cm_event(event);
	printf("connecting to %s from %s\n", addr_str(rdma_get_peer_addr(id), a, sizeof(a)),
	       addr_str(rdma_get_local_addr(id), b, sizeof(b)));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rdma_connect(id, &param)) {
		ping_fail("rdma_connect: %s", strerror(errno));
		goto out;
	}
	/*
	 * Without a QP, a connection's reply is CONNECT_RESPONSE, and
	 * rdma_establish() sends the RTU, as under librdmacm.  A SIDR_REP is
	 * ESTABLISHED.
	 */
	event = expect(ch, o->ps == RDMA_PS_UDP ? RDMA_CM_EVENT_ESTABLISHED :
		       RDMA_CM_EVENT_CONNECT_RESPONSE, o->timeout_ms);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!event)
		goto out;
	if (o->ps != RDMA_PS_UDP && rdma_establish(id)) {
		ping_fail("rdma_establish: %s", strerror(errno));
		rdma_ack_cm_event(event);
		goto out;
	}
	printf("established with %s\n", addr_str(rdma_get_peer_addr(id), a, sizeof(a)));
	printf("peer port %u (rdma_get_dst_port), local port %u (rdma_get_src_port)\n",
	       ntohs(rdma_get_dst_port(id)), ntohs(rdma_get_src_port(id)));
	if (o->ps == RDMA_PS_UDP)
		printf("remote QPN %#x, Q_Key %#x\n", event->param.ud.qp_num,
		       event->param.ud.qkey);
	printf("private data from the server: %s\n",
	       o->ps == RDMA_PS_UDP ?
	       data_str(event->param.ud.private_data, event->param.ud.private_data_len,
			d, sizeof(d)) :
	       data_str(event->param.conn.private_data, event->param.conn.private_data_len,
			d, sizeof(d)));
	printf("handshake: %ld us\n", (long)((t1.tv_sec - t0.tv_sec) * 1000000 +
					     (t1.tv_nsec - t0.tv_nsec) / 1000));
	rdma_ack_cm_event(event);
	/* A datagram id has nothing to disconnect: SIDR was the whole exchange. */
	if (o->ps == RDMA_PS_UDP) {
		ret = 0;
		goto out;
	}

	if (o->wait_stdin && wait_line(o->timeout_ms))
		goto out;
	if (!o->wait_disconnect && rdma_disconnect(id)) {
		ping_fail("rdma_disconnect: %s", strerror(errno));
		goto out;
	}
	event = expect(ch, RDMA_CM_EVENT_DISCONNECTED, o->timeout_ms);
	if (!event)
		goto out;
	rdma_ack_cm_event(event);
	/* Our DREP: the server's rdma_disconnect() completes. */
	if (o->wait_disconnect && rdma_disconnect(id)) {
		ping_fail("rdma_disconnect: %s", strerror(errno));
		goto out;
	}
	printf("disconnected\n");
	ret = 0;
out:
	rdma_destroy_id(id);
	freeaddrinfo(ai);
	return ret;
}

/* softcm_getpeername() of @id, as text; 0, or 1 after saying why not. */
static int peer_str(struct rdma_cm_id *id, char *buf, size_t size)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (softcm_getpeername(id, (struct sockaddr *)&peer, &len))
		return ping_fail("softcm_getpeername: %s", strerror(errno));
	addr_str((struct sockaddr *)&peer, buf, size);
	return 0;
}

/* Connection @n's request: show it, then accept it with our answer. */
static int serve_request(struct rdma_cm_event *event, int n, const struct ping_opts *o)
{
	enum rdma_port_space ps = o->ps;
	struct rdma_conn_param param = {
		.private_data = o->data,
		.private_data_len = strlen(o->data),
		.responder_resources = RDMA_MAX_RESP_RES,
		.initiator_depth = RDMA_MAX_INIT_DEPTH,
		.rnr_retry_count = 7,
		/*
		 * One QPN per connection: a Linux peer rejects (REJ 10) a
		 * REP with the QPN of another of its connections to us.
		 */
		.qp_num = (o->qpn + n - 1) & 0xffffff,
	};
	struct rdma_cm_id *id = event->id;
	char a[80], b[80], d[1024];

	id->context = (void *)(long)n;
	/* softcm_getpeername(), as getpeername(2), waits for the connection. */
	printf("[%d] request from %s (rdma_get_peer_addr)\n", n,
	       addr_str(rdma_get_peer_addr(id), a, sizeof(a)));
	printf("[%d] private data from the client: %s\n", n,
	       ps == RDMA_PS_UDP ?
	       data_str(event->param.ud.private_data, event->param.ud.private_data_len,
			d, sizeof(d)) :
	       data_str(event->param.conn.private_data, event->param.conn.private_data_len,
			d, sizeof(d)));
	if (o->reject) {
		if (rdma_reject(id, o->data, strlen(o->data)))
			return ping_fail("rdma_reject: %s", strerror(errno));
		printf("[%d] rejected\n", n);
		return 0;
	}
	if (rdma_accept(id, &param))
		return ping_fail("rdma_accept: %s", strerror(errno));
	if (ps == RDMA_PS_UDP) {
		if (peer_str(id, b, sizeof(b)))
			return 1;
		printf("[%d] answered (SIDR), peer %s (softcm_getpeername)\n", n, b);
	}
	return 0;
}

/* Serves until @o->count connections have come and gone. */
static int ping_server(struct rdma_event_channel *ch, const struct ping_opts *o)
{
	struct rdma_cm_event *event;
	struct rdma_cm_id *listen, *id;
	int seen = 0, done = 0, ret = 1, n;
	struct sockaddr_storage peer;
	struct addrinfo *ai;
	socklen_t len;
	char a[80];

	if (lookup(o->bind, o->port, 1, &ai))
		return 1;
	if (rdma_create_id(ch, &listen, NULL, o->ps)) {
		freeaddrinfo(ai);
		return ping_fail("rdma_create_id: %s", strerror(errno));
	}
	if (rdma_bind_addr(listen, ai->ai_addr) || rdma_listen(listen, 0)) {
		ping_fail("%s: %s", addr_str(ai->ai_addr, a, sizeof(a)), strerror(errno));
		goto out;
	}
	printf("listening on %s\n", addr_str(rdma_get_local_addr(listen), a, sizeof(a)));
	fflush(stdout);

	while (done < o->count) {
		event = next_event(ch, o->timeout_ms);
		if (!event) {
			ping_fail("waiting for connections: %s", strerror(errno));
			goto out;
		}
		id = event->id;
		n = (int)(long)id->context;
		switch (event->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			if (serve_request(event, ++seen, o)) {
				rdma_ack_cm_event(event);
				rdma_destroy_id(id);
				goto out;
			}
			/*
			 * The SIDR_REP or the REJ is all there is to say
			 * about this request.
			 */
			if (o->ps == RDMA_PS_UDP || o->reject) {
				rdma_ack_cm_event(event);
				rdma_destroy_id(id);
				done++;
				continue;
			}
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			len = sizeof(peer);
			if (!softcm_getpeername(id, (struct sockaddr *)&peer, &len)) {
				printf("[%d] established with %s (softcm_getpeername)\n", n,
				       addr_str((struct sockaddr *)&peer, a, sizeof(a)));
			} else if (errno == ENOTCONN) {
				/* A DREQ came right after the RTU: over already. */
				printf("[%d] established, and over already\n", n);
			} else {
				ping_fail("softcm_getpeername: %s", strerror(errno));
				rdma_ack_cm_event(event);
				rdma_destroy_id(id);
				goto out;
			}
			if (o->disconnect_first) {
				/* Our DREQ; DISCONNECTED comes with the DREP. */
				if (rdma_disconnect(id)) {
					ping_fail("[%d] rdma_disconnect: %s", n, strerror(errno));
					rdma_ack_cm_event(event);
					rdma_destroy_id(id);
					goto out;
				}
				printf("[%d] disconnecting\n", n);
			}
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			printf("[%d] disconnected\n", n);
			rdma_ack_cm_event(event);
			/* Our DREP: the peer's rdma_disconnect() completes. */
			if (!o->disconnect_first && rdma_disconnect(id))
				ping_fail("[%d] rdma_disconnect: %s", n, strerror(errno));
			rdma_destroy_id(id);
			done++;
			continue;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			ping_fail("[%d] %s (status %d)", n, rdma_event_str(event->event),
				  event->status);
			rdma_ack_cm_event(event);
			if (id != listen)
				rdma_destroy_id(id);
			goto out;
		}
		rdma_ack_cm_event(event);
	}
	fflush(stdout);
	ret = 0;
out:
	rdma_destroy_id(listen);
	freeaddrinfo(ai);
	return ret;
}

/*
 * The command line into @o: 0, or 2 on a usage error.  -h stops the
 * reading, as it always has: what follows it is not looked at.
 */
static int read_ping_opts(int argc, char **argv, struct ping_opts *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "+lDRuwib:p:n:d:q:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o->listen = 1;
			break;
		case 'D':
			o->disconnect_first = 1;
			break;
		case 'u':
			o->ps = RDMA_PS_UDP;
			break;
		case 'w':
			o->wait_disconnect = 1;
			break;
		case 'i':
			o->wait_stdin = 1;
			break;
		case 'R':
			o->reject = 1;
			break;
		case 'b':
			o->bind = optarg;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'd':
			o->data = optarg;
			break;
		case 'q':
			o->qpn = strtoul(optarg, &end, 0);
			if (*end || o->qpn > 0xffffff)
				return 2;
			break;
		case 'n':
			o->count = strtol(optarg, &end, 10);
			if (*end || o->count < 1)
				return 2;
			break;
		case 't':
			o->timeout_ms = strtol(optarg, &end, 10);
			if (*end || o->timeout_ms < 0)
				return 2;
			o->timeout_given = 1;
			break;
		case 'h':
			o->help = 1;
			return 0;
		default:
			return 2;
		}
	}
	if (o->listen ? optind != argc : optind != argc - 1)
		return 2;
	o->addr = o->listen ? NULL : argv[optind];
	return 0;
}

/* The most private data the first message we send can carry. */
static size_t max_data(const struct ping_opts *o)
{
	int ud = o->ps == RDMA_PS_UDP;

	if (o->reject)
		return ud ? SOFTCM_SIDR_REP_PRIVATE_DATA : SOFTCM_REJ_PRIVATE_DATA;
	if (o->listen)
		return ud ? SOFTCM_SIDR_REP_PRIVATE_DATA : SOFTCM_REP_PRIVATE_DATA;
	return ud ? SOFTCM_SIDR_REQ_PRIVATE_DATA : SOFTCM_REQ_PRIVATE_DATA;
}

/*
 * Whether the options go together (each of -D, -R, -w, -i is for one side
 * and one kind of id); then the defaults of those not given, and whether
 * the private data fits.  0, or 2 after saying why not.
 */
static int check_ping_opts(struct ping_opts *o)
{
	if ((o->disconnect_first && (!o->listen || o->ps == RDMA_PS_UDP)) ||
	    ((o->wait_disconnect || o->wait_stdin) && (o->listen || o->ps == RDMA_PS_UDP)) ||
	    (o->wait_disconnect && o->wait_stdin) ||
	    (o->reject && (!o->listen || o->disconnect_first))) {
		usage(stderr);
		return 2;
	}
	if (!o->data)
		o->data = o->listen ? PING_REPLY : PING_DATA;
	if (strlen(o->data) > max_data(o)) {
		fprintf(stderr, "softcm ping: -d: at most %zu bytes of private data\n",
			max_data(o));
		return 2;
	}
	if (!o->timeout_given)
		o->timeout_ms = o->listen ? PING_FOREVER : PING_TIMEOUT_MS;
	return 0;
}

int cmd_ping(int argc, char **argv)
{
	struct ping_opts o = { .port = PING_PORT, .count = 1, .ps = RDMA_PS_TCP };
	struct rdma_event_channel *ch;
	int ret;

	if (read_ping_opts(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	if (o.help) {
		usage(stdout);
		return 0;
	}
	ret = check_ping_opts(&o);
	if (ret)
		return ret;

	/* One line on stderr, not the library's and ours. */
	if (softcm_check_abi())
		return ping_fail(errno == ENODEV ? "the softcm module is not loaded" :
				 "the module speaks another ABI than this tool");

	/* Line by line, also into a pipe or a file that someone is watching. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ch = rdma_create_event_channel();
	if (!ch)
		return ping_fail("%s", strerror(errno));
	ret = o.listen ? ping_server(ch, &o) : ping_client(ch, &o);
	rdma_destroy_event_channel(ch);
	return ret;
}
