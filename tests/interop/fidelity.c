// SPDX-License-Identifier: GPL-2.0
/*
 * fidelity: one program, two libraries, one expected outcome.  Built twice
 * from this source against rdma-core's <rdma/rdma_cma.h>: with -lrdmacm
 * (Debian's librdmacm 44, run over rdma_rxe in the test VM) and with
 * -lsoftcm (over /dev/softcm).  tests/interop/fidelity_test.sh runs every
 * case under both and diffs their output line by line; the differences
 * it accepts are in tests/interop/fidelity.expected-differences.
 *
 *   fidelity list                 the case names, one a line
 *   fidelity CASE ADDR PORT       run CASE against ADDR (an address of this
 *                                 host) and PORT; print its outcome
 *
 * Every line is normalised so that both builds can print the same one: a
 * call's return value and errno name, an event's type, status and whether
 * its private_data is NULL or how long it is, and an address as its
 * family and "self" (ADDR), "any" or "other", with its port as "PORT", "0"
 * or "other".
 * Each side of a connection is this same process (the server on one event
 * channel, the client on another, each waited for in turn), so the run
 * needs no peer but the local CM.
 *
 * A case runs in a forked child: where librdmacm crashes, the line is
 * "crash SIGNAME" and the harness compares that with softcm's answer.
 * A case that runs to its end prints "done" last; one that stops early
 * (no event, a failed setup step, a crash, a timeout) does not, and the
 * harness fails the case when librdmacm's run lacks it, unless the list of
 * expected differences says librdmacm crashes there: two runs that fail
 * alike have compared nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* softcm's own option (userspace/lib/softcm.h); not in rdma_cma.h */
#define OPTION_CONNECT_RESPONSE	0x100

static struct sockaddr_storage g_addr;	/* ADDR, with PORT */
static const char *g_addr_str, *g_port_str;
static unsigned short g_port;
static int g_wait_ms = 10000;

/*
 * Lines are written with write(2) on the unbuffered stdout, so that what
 * a case printed before it crashed is in the output.
 */
static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* "WHAT = RET" and, on failure, the errno's name. */
static void ret(const char *what, int r)
{
	if (r)
		out("%s = %d %s", what, r, strerrorname_np(errno) ?: "?");
	else
		out("%s = 0", what);
}

static const char *port_str(unsigned short port)
{
	if (port == g_port)
		return "PORT";
	return port ? "other" : "0";
}

/* An address: its family, then self (ADDR), any (zeroes) or other, and its port. */
static void addr(const char *what, struct sockaddr *sa)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)sa;
	struct sockaddr_in *self4 = (struct sockaddr_in *)&g_addr;
	struct sockaddr_in6 *self6 = (struct sockaddr_in6 *)&g_addr;

	switch (sa->sa_family) {
	case AF_INET:
		out("%s: inet %s port %s", what,
		    sin->sin_addr.s_addr == self4->sin_addr.s_addr ? "self" :
		    sin->sin_addr.s_addr ? "other" : "any", port_str(ntohs(sin->sin_port)));
		break;
	case AF_INET6:
		out("%s: inet6 %s port %s", what,
		    !memcmp(&sin6->sin6_addr, &self6->sin6_addr, 16) ? "self" :
		    IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr) ? "any" : "other",
		    port_str(ntohs(sin6->sin6_port)));
		break;
	case AF_UNSPEC:
		out("%s: unspec", what);
		break;
	default:
		out("%s: family %d", what, sa->sa_family);
	}
}

static void pdata(char *buf, size_t len, const struct rdma_conn_param *p)
{
	if (!p->private_data)
		snprintf(buf, len, "NULL len %u", p->private_data_len);
	else
		snprintf(buf, len, "len %u", p->private_data_len);
}

/* The next event on CH, printed as "WHAT event TYPE status S pdata ..." */
static struct rdma_cm_event *ev(struct rdma_event_channel *ch, const char *what)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;
	char pd[32];

	if (poll(&pfd, 1, g_wait_ms) != 1) {
		out("%s: no event", what);
		exit(3);
	}
	if (rdma_get_cm_event(ch, &e)) {
		ret("rdma_get_cm_event", -1);
		exit(3);
	}
	pdata(pd, sizeof(pd), &e->param.conn);
	out("%s event %s status %d pdata %s", what, rdma_event_str(e->event), e->status, pd);
	return e;
}

/* ev(), acked at once; its type, or -1 if it was not EXPECT. */
static int ev_ack(struct rdma_event_channel *ch, const char *what, enum rdma_cm_event_type expect)
{
	struct rdma_cm_event *e = ev(ch, what);
	int type = e->event;

	rdma_ack_cm_event(e);
	return type == (int)expect ? type : -1;
}

static void conn_fields(const char *what, const struct rdma_conn_param *p)
{
	out("%s: responder_resources %u initiator_depth %u retry_count %u", what,
	    p->responder_resources, p->initiator_depth, p->retry_count);
	out("%s: rnr_retry_count %u flow_control %u srq %u", what,
	    p->rnr_retry_count, p->flow_control, p->srq);
}

static struct rdma_event_channel *channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch) {
		ret("rdma_create_event_channel", -1);
		exit(3);
	}
	return ch;
}

static struct sockaddr *at(struct sockaddr_storage *ss, unsigned short port)
{
	*ss = g_addr;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	return (struct sockaddr *)ss;
}

/* A listener on ADDR PORT (CH NULL: synchronous). */
static struct rdma_cm_id *listener(struct rdma_event_channel *ch)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(id, at(&ss, g_port)) || rdma_listen(id, 4)) {
		ret("listener", -1);
		exit(3);
	}
	return id;
}

/* An id with its address and route resolved to ADDR PORT; events printed. */
static struct rdma_cm_id *client(struct rdma_event_channel *ch)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		ret("rdma_create_id", -1);
		exit(3);
	}
	ret("rdma_resolve_addr", rdma_resolve_addr(id, NULL, at(&ss, g_port), 2000));
	if (ev_ack(ch, "client", RDMA_CM_EVENT_ADDR_RESOLVED) < 0)
		exit(3);
	ret("rdma_resolve_route", rdma_resolve_route(id, 2000));
	if (ev_ack(ch, "client", RDMA_CM_EVENT_ROUTE_RESOLVED) < 0)
		exit(3);
	return id;
}

/*
 * What a QP-less id announces (the kernel needs a QPN in the REQ/REP).
 * The client's and the server's differ: both ends are one CA here, and the
 * Linux CM rejects (REJ 10, stale connection) a REP whose QPN and CA GUID
 * are those of the REQ it answers.
 */
#define CLIENT_QPN	0x1234
#define SERVER_QPN	0x5678
static struct rdma_conn_param param(const char *data, unsigned int qpn)
{
	struct rdma_conn_param p = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7, .qp_num = qpn,
	};

	if (data) {
		p.private_data = data;
		p.private_data_len = strlen(data) + 1;
	}
	return p;
}

/* The client connects with P; the server's CONNECT_REQUEST is returned. */
static struct rdma_cm_event *request(struct rdma_event_channel *sch, struct rdma_cm_id *cid,
				     struct rdma_conn_param *p)
{
	struct rdma_cm_event *e;

	ret("rdma_connect", rdma_connect(cid, p));
	e = ev(sch, "server");
	if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		exit(3);
	return e;
}

/* ---- the cases ---- */

/*
 * Issue 17 items 1, 3, 5: an id without a QP gets CONNECT_RESPONSE and
 * sends the RTU with rdma_establish(); an event without private data has
 * private_data NULL; rdma_get_peer_addr() before, during and after.
 */
static void c_handshake(void)
{
	struct rdma_event_channel *sch = channel(), *cch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid, *sid;
	struct rdma_conn_param p = param("hello", CLIENT_QPN), a = param("welcome", SERVER_QPN);
	struct rdma_cm_event *e;

	addr("listener peer", rdma_get_peer_addr(lid));
	addr("listener local", rdma_get_local_addr(lid));
	cid = client(cch);
	addr("client peer after resolve", rdma_get_peer_addr(cid));
	e = request(sch, cid, &p);
	sid = e->id;
	out("request data %s", e->param.conn.private_data &&
	    !strcmp(e->param.conn.private_data, "hello") ? "hello" : "other");
	out("listen_id %s", e->listen_id == lid ? "listener" : "other");
	addr("request peer", rdma_get_peer_addr(sid));
	addr("request local", rdma_get_local_addr(sid));
	rdma_ack_cm_event(e);
	ret("rdma_accept", rdma_accept(sid, &a));
	e = ev(cch, "client");
	out("reply data %s", e->param.conn.private_data &&
	    !strcmp(e->param.conn.private_data, "welcome") ? "welcome" : "other");
	rdma_ack_cm_event(e);
	ret("rdma_establish", rdma_establish(cid));
	ev_ack(sch, "server", RDMA_CM_EVENT_ESTABLISHED);
	addr("client peer connected", rdma_get_peer_addr(cid));
	ret("rdma_establish again", rdma_establish(cid));
	ret("rdma_disconnect client", rdma_disconnect(cid));
	ev_ack(sch, "server", RDMA_CM_EVENT_DISCONNECTED);
	ret("rdma_disconnect server", rdma_disconnect(sid));
	ev_ack(cch, "client", RDMA_CM_EVENT_DISCONNECTED);
	addr("client peer after disconnect", rdma_get_peer_addr(cid));
	addr("server peer after disconnect", rdma_get_peer_addr(sid));
	ret("rdma_disconnect client again", rdma_disconnect(cid));
	ret("rdma_destroy_id", rdma_destroy_id(sid) || rdma_destroy_id(cid) ||
	    rdma_destroy_id(lid));
}

/* A server thread for c_sync: accepts one connection, answers its DREQ. */
static char sync_log[1024];
static void *sync_server(void *arg)
{
	struct rdma_event_channel *sch = arg;
	struct rdma_conn_param a = param(NULL, SERVER_QPN);
	struct rdma_cm_event *e;
	struct pollfd pfd = { .fd = sch->fd, .events = POLLIN };
	struct rdma_cm_id *sid = NULL;
	size_t n = 0;
	int i;

	for (i = 0; i < 3; i++) {
		if (poll(&pfd, 1, g_wait_ms) != 1 || rdma_get_cm_event(sch, &e))
			break;
		n += snprintf(sync_log + n, sizeof(sync_log) - n, "server event %s status %d\n",
			      rdma_event_str(e->event), e->status);
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			sid = e->id;
			rdma_ack_cm_event(e);
			n += snprintf(sync_log + n, sizeof(sync_log) - n, "rdma_accept = %d\n",
				      rdma_accept(sid, &a));
		} else if (e->event == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_ack_cm_event(e);
			n += snprintf(sync_log + n, sizeof(sync_log) - n,
				      "rdma_disconnect server = %d\n", rdma_disconnect(sid));
		} else {
			rdma_ack_cm_event(e);
		}
	}
	if (sid)
		rdma_destroy_id(sid);
	return NULL;
}

static void sync_event(const char *what, struct rdma_cm_id *id)
{
	if (id->event)
		out("%s: id->event %s status %d", what, rdma_event_str(id->event->event),
		    id->event->status);
	else
		out("%s: id->event NULL", what);
}

/* Issue 17 item 1, synchronous: rdma_connect() returns at CONNECT_RESPONSE. */
static void c_sync(void)
{
	struct rdma_event_channel *sch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid;
	struct rdma_conn_param p = param("sync", CLIENT_QPN);
	struct sockaddr_storage ss;
	pthread_t t;

	pthread_create(&t, NULL, sync_server, sch);
	ret("rdma_create_id", rdma_create_id(NULL, &cid, NULL, RDMA_PS_TCP));
	ret("rdma_resolve_addr", rdma_resolve_addr(cid, NULL, at(&ss, g_port), 2000));
	sync_event("resolve_addr", cid);
	ret("rdma_resolve_route", rdma_resolve_route(cid, 2000));
	sync_event("resolve_route", cid);
	ret("rdma_connect", rdma_connect(cid, &p));
	sync_event("connect", cid);
	ret("rdma_establish", rdma_establish(cid));
	ret("rdma_disconnect client", rdma_disconnect(cid));
	sync_event("disconnect", cid);
	pthread_join(t, NULL);
	fputs(sync_log, stdout);
	ret("rdma_destroy_id", rdma_destroy_id(cid) || rdma_destroy_id(lid));
}

/*
 * The end of a handshake both parameter cases share: the server accepts
 * with @a, the client prints the reply's parameters and establishes, and
 * all three ids go.
 */
static void accept_and_end(struct rdma_event_channel *sch, struct rdma_event_channel *cch,
			   struct rdma_cm_id *lid, struct rdma_cm_id *cid,
			   struct rdma_cm_id *sid, struct rdma_conn_param *a)
{
	struct rdma_cm_event *e;

	ret("rdma_accept", rdma_accept(sid, a));
	e = ev(cch, "client");
	conn_fields("reply", &e->param.conn);
	rdma_ack_cm_event(e);
	ret("rdma_establish", rdma_establish(cid));
	ev_ack(sch, "server", RDMA_CM_EVENT_ESTABLISHED);
	ret("rdma_destroy_id", rdma_destroy_id(sid) || rdma_destroy_id(cid) ||
	    rdma_destroy_id(lid));
}

/* Issue 17 item 2: retry counts above 7 clamped, srq and flow_control as Linux. */
static void c_params_clamp(void)
{
	struct rdma_event_channel *sch = channel(), *cch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid = client(cch), *sid;
	struct rdma_conn_param p = param(NULL, CLIENT_QPN), a = param(NULL, SERVER_QPN);
	struct rdma_cm_event *e;

	p.retry_count = 15;
	p.rnr_retry_count = 9;
	p.srq = 2;
	p.flow_control = 2;
	p.responder_resources = 3;
	p.initiator_depth = 2;
	e = request(sch, cid, &p);
	conn_fields("request", &e->param.conn);
	conn_fields("caller's param after connect", &p);
	sid = e->id;
	rdma_ack_cm_event(e);
	a.rnr_retry_count = 12;
	a.retry_count = 200;
	a.srq = 5;
	a.flow_control = 3;
	accept_and_end(sch, cch, lid, cid, sid, &a);
}

/* Issue 17 item 2: depths above the device maximum (rxe: 128), and 0xFF. */
static void c_params_depth(void)
{
	struct rdma_event_channel *sch = channel(), *cch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid = client(cch), *sid;
	struct rdma_conn_param p = param(NULL, CLIENT_QPN), a = param(NULL, SERVER_QPN);
	struct rdma_cm_event *e;

	p.responder_resources = 129;
	ret("rdma_connect responder_resources 129", rdma_connect(cid, &p));
	p.responder_resources = 1;
	p.initiator_depth = 129;
	ret("rdma_connect initiator_depth 129", rdma_connect(cid, &p));
	p.responder_resources = RDMA_MAX_RESP_RES;
	p.initiator_depth = RDMA_MAX_INIT_DEPTH;
	e = request(sch, cid, &p);
	conn_fields("request", &e->param.conn);
	sid = e->id;
	rdma_ack_cm_event(e);
	a.responder_resources = 129;
	ret("rdma_accept responder_resources 129", rdma_accept(sid, &a));
	a.responder_resources = RDMA_MAX_RESP_RES;
	a.initiator_depth = RDMA_MAX_INIT_DEPTH;
	accept_and_end(sch, cch, lid, cid, sid, &a);
}

/* Issue 17 item 3: rdma_reject keeps a synchronous id's event until destroy. */
static void c_reject_sync(void)
{
	struct rdma_event_channel *cch = channel();
	struct rdma_cm_id *lid = listener(NULL), *cid = client(cch), *sid = NULL;
	struct rdma_conn_param p = param("knock", CLIENT_QPN);

	ret("rdma_connect", rdma_connect(cid, &p));
	ret("rdma_get_request", rdma_get_request(lid, &sid));
	if (!sid)
		exit(3);
	sync_event("request", sid);
	addr("request peer", rdma_get_peer_addr(sid));
	ret("rdma_reject", rdma_reject(sid, "no", 3));
	sync_event("after reject", sid);
	ev_ack(cch, "client", RDMA_CM_EVENT_REJECTED);
	addr("client peer after reject", rdma_get_peer_addr(cid));
	ret("rdma_destroy_id", rdma_destroy_id(sid) || rdma_destroy_id(cid) ||
	    rdma_destroy_id(lid));
}

/* Nobody listens on PORT: the CM's REJ (reason 8, invalid service ID). */
static void c_no_listener(void)
{
	struct rdma_event_channel *cch = channel();
	struct rdma_cm_id *cid = client(cch);
	struct rdma_conn_param p = param(NULL, CLIENT_QPN);

	ret("rdma_connect", rdma_connect(cid, &p));
	ev_ack(cch, "client", RDMA_CM_EVENT_REJECTED);
	ret("rdma_disconnect after reject", rdma_disconnect(cid));
	ret("rdma_destroy_id", rdma_destroy_id(cid));
}

/*
 * The server lets go of its id after rdma_accept(), before the client's
 * rdma_establish(): the REJ its CM sends then finds the client in
 * REP_RCVD, which the Linux CM takes to timewait (cm_rej_handler()), and
 * rdma_establish() has no connection left to send the RTU of.
 */
static void c_reject_after_reply(void)
{
	struct rdma_event_channel *sch = channel(), *cch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid = client(cch), *sid;
	struct rdma_conn_param p = param(NULL, CLIENT_QPN), a = param(NULL, SERVER_QPN);
	struct rdma_cm_event *e;

	e = request(sch, cid, &p);
	sid = e->id;
	rdma_ack_cm_event(e);
	ret("rdma_accept", rdma_accept(sid, &a));
	ev_ack(cch, "client", RDMA_CM_EVENT_CONNECT_RESPONSE);
	ret("rdma_destroy_id server", rdma_destroy_id(sid));
	ev_ack(cch, "client", RDMA_CM_EVENT_REJECTED);
	addr("client peer after reject", rdma_get_peer_addr(cid));
	ret("rdma_establish after reject", rdma_establish(cid));
	ret("rdma_disconnect after reject", rdma_disconnect(cid));
	ret("rdma_destroy_id", rdma_destroy_id(cid) || rdma_destroy_id(lid));
}

/* The argument checks of rdma_connect/rdma_accept/rdma_get_request. */
static void c_connect_errors(void)
{
	struct rdma_event_channel *sch = channel(), *cch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid = client(cch);
	struct rdma_cm_id *sid = NULL;

	ret("rdma_connect NULL param", rdma_connect(cid, NULL));
	ret("rdma_get_request on an async listener", rdma_get_request(lid, &sid));
	ret("rdma_establish before connect", rdma_establish(cid));
	ret("rdma_disconnect resolved, never connected", rdma_disconnect(cid));
	ret("rdma_destroy_id", rdma_destroy_id(cid) || rdma_destroy_id(lid));
}

/* rdma_disconnect on ids that never connected (uapi.rst: softcm EINVAL, Linux 0). */
static void c_disconnect_unconnected(void)
{
	struct rdma_event_channel *ch = channel();
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	ret("rdma_create_id", rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	ret("rdma_disconnect idle", rdma_disconnect(id));
	ret("rdma_bind_addr", rdma_bind_addr(id, at(&ss, g_port)));
	ret("rdma_disconnect bound", rdma_disconnect(id));
	ret("rdma_listen", rdma_listen(id, 1));
	ret("rdma_disconnect listener", rdma_disconnect(id));
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

/* rdma_accept on a listener bound to ADDR (with a conn_param). */
static void c_accept_listener(void)
{
	struct rdma_cm_id *lid = listener(channel());
	struct rdma_conn_param a = param(NULL, SERVER_QPN);

	ret("rdma_accept listener", rdma_accept(lid, &a));
	ret("rdma_destroy_id", rdma_destroy_id(lid));
}

/* rdma_accept(NULL) on a listener (the crash in librdmacm 44). */
static void c_accept_listener_null(void)
{
	struct rdma_cm_id *lid = listener(channel());

	ret("rdma_accept listener NULL", rdma_accept(lid, NULL));
	ret("rdma_destroy_id", rdma_destroy_id(lid));
}

/* rdma_accept on a wildcard listener, which has no device under librdmacm. */
static void c_accept_listener_any(void)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(g_port) };
	struct rdma_conn_param a = param(NULL, SERVER_QPN);
	struct rdma_cm_id *lid;

	ret("rdma_create_id", rdma_create_id(channel(), &lid, NULL, RDMA_PS_TCP));
	ret("rdma_bind_addr any", rdma_bind_addr(lid, (struct sockaddr *)&any));
	ret("rdma_listen", rdma_listen(lid, 1));
	ret("rdma_accept listener", rdma_accept(lid, &a));
	ret("rdma_destroy_id", rdma_destroy_id(lid));
}

/* rdma_accept(NULL) on a request without a QP. */
static void c_accept_null(void)
{
	struct rdma_event_channel *sch = channel(), *cch = channel();
	struct rdma_cm_id *lid = listener(sch), *cid = client(cch), *sid;
	struct rdma_conn_param p = param(NULL, CLIENT_QPN);
	struct rdma_cm_event *e;

	e = request(sch, cid, &p);
	sid = e->id;
	rdma_ack_cm_event(e);
	ret("rdma_accept NULL", rdma_accept(sid, NULL));
	ret("rdma_destroy_id", rdma_destroy_id(sid) || rdma_destroy_id(cid) ||
	    rdma_destroy_id(lid));
}

/* Issue 17 item 4: rdma_resolve_route on ids whose address is not resolved. */
static void c_route_idle(void)
{
	struct rdma_cm_id *id;

	ret("rdma_create_id", rdma_create_id(channel(), &id, NULL, RDMA_PS_TCP));
	ret("rdma_resolve_route idle", rdma_resolve_route(id, 2000));
}

static void c_route_bound(void)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	ret("rdma_create_id", rdma_create_id(channel(), &id, NULL, RDMA_PS_TCP));
	ret("rdma_bind_addr", rdma_bind_addr(id, at(&ss, g_port)));
	ret("rdma_resolve_route bound", rdma_resolve_route(id, 2000));
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

static void c_route_timeout0(void)
{
	struct rdma_event_channel *ch = channel();
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	ret("rdma_create_id", rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	ret("rdma_resolve_addr", rdma_resolve_addr(id, NULL, at(&ss, g_port), 2000));
	ev_ack(ch, "client", RDMA_CM_EVENT_ADDR_RESOLVED);
	ret("rdma_resolve_route timeout 0", rdma_resolve_route(id, 0));
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

static void c_resolve_negative(void)
{
	struct rdma_event_channel *ch = channel();
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	ret("rdma_create_id", rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	ret("rdma_resolve_addr timeout -1", rdma_resolve_addr(id, NULL, at(&ss, g_port), -1));
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

/* Issue 17 item 4: rdma_set_option. */
static void c_options(void)
{
	struct rdma_cm_id *id;
	unsigned char u8 = 0x10;
	int one = 1;

	ret("rdma_create_id", rdma_create_id(channel(), &id, NULL, RDMA_PS_TCP));
	ret("unknown name", rdma_set_option(id, RDMA_OPTION_ID, 99, &one, sizeof(one)));
	ret("unknown level", rdma_set_option(id, 99, RDMA_OPTION_ID_TOS, &u8, 1));
	ret("TOS", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &u8, 1));
	ret("TOS int", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)));
	ret("REUSEADDR", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
					 &one, sizeof(one)));
	ret("REUSEADDR u8", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &u8, 1));
	ret("AFONLY", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
				      &one, sizeof(one)));
	ret("ACK_TIMEOUT", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &u8, 1));
	ret("TOS NULL optval", rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, NULL, 1));
	ret("softcm CONNECT_RESPONSE", rdma_set_option(id, RDMA_OPTION_ID,
						       OPTION_CONNECT_RESPONSE, &one, sizeof(one)));
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

/* Port spaces other than TCP and UDP (issue 17 item 2). */
static void c_port_spaces(void)
{
	struct rdma_cm_id *id;
	int r;

	r = rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP);
	ret("RDMA_PS_UDP", r);
	if (!r)
		rdma_destroy_id(id);
	r = rdma_create_id(NULL, &id, NULL, RDMA_PS_IB);
	ret("RDMA_PS_IB", r);
	if (!r)
		rdma_destroy_id(id);
	r = rdma_create_id(NULL, &id, NULL, RDMA_PS_IPOIB);
	ret("RDMA_PS_IPOIB", r);
	if (!r)
		rdma_destroy_id(id);
	r = rdma_create_id(NULL, &id, NULL, 0x42);
	ret("port space 0x42", r);
	if (!r)
		rdma_destroy_id(id);
}

/*
 * SIDR (RDMA_PS_UDP) with a synchronous listener: the answer's event, and
 * whether rdma_accept() keeps the request in id->event (librdmacm 44 does).
 */
static void c_sidr(void)
{
	struct rdma_event_channel *cch = channel();
	struct rdma_conn_param p = param("sidr", CLIENT_QPN), a = param("ok", SERVER_QPN);
	struct rdma_cm_id *lid, *cid, *sid = NULL;
	struct sockaddr_storage ss;
	struct rdma_cm_event *e;

	if (rdma_create_id(NULL, &lid, NULL, RDMA_PS_UDP) ||
	    rdma_bind_addr(lid, at(&ss, g_port)) || rdma_listen(lid, 4)) {
		ret("listener", -1);
		exit(3);
	}
	ret("rdma_create_id", rdma_create_id(cch, &cid, NULL, RDMA_PS_UDP));
	out("qp_type %d", cid->qp_type);
	ret("rdma_resolve_addr", rdma_resolve_addr(cid, NULL, at(&ss, g_port), 2000));
	ev_ack(cch, "client", RDMA_CM_EVENT_ADDR_RESOLVED);
	ret("rdma_resolve_route", rdma_resolve_route(cid, 2000));
	ev_ack(cch, "client", RDMA_CM_EVENT_ROUTE_RESOLVED);
	ret("rdma_connect", rdma_connect(cid, &p));
	ret("rdma_get_request", rdma_get_request(lid, &sid));
	if (!sid)
		exit(3);
	sync_event("request", sid);
	out("request ud: private_data_len %u qp_num %#x qkey %#x",
	    sid->event->param.ud.private_data_len, sid->event->param.ud.qp_num,
	    sid->event->param.ud.qkey);
	ret("rdma_accept", rdma_accept(sid, &a));
	sync_event("after accept", sid);
	e = ev(cch, "client");
	out("answer ud: qp_num %#x qkey %#x", e->param.ud.qp_num, e->param.ud.qkey);
	rdma_ack_cm_event(e);
	ret("rdma_destroy_id", rdma_destroy_id(sid) || rdma_destroy_id(cid) ||
	    rdma_destroy_id(lid));
}

/* rdma_migrate_id: to another channel, and a synchronous id to NULL. */
static void c_migrate(void)
{
	struct rdma_event_channel *ch1 = channel(), *ch2 = channel();
	struct rdma_event_channel bad = { .fd = -1 };
	struct sockaddr_storage ss;
	struct rdma_cm_id *id, *sync;

	ret("rdma_create_id", rdma_create_id(ch1, &id, NULL, RDMA_PS_TCP));
	ret("rdma_migrate_id to ch2", rdma_migrate_id(id, ch2));
	out("channel %s", id->channel == ch2 ? "ch2" : "other");
	ret("rdma_resolve_addr", rdma_resolve_addr(id, NULL, at(&ss, g_port), 2000));
	ev_ack(ch2, "ch2", RDMA_CM_EVENT_ADDR_RESOLVED);
	ret("rdma_migrate_id to a bad fd", rdma_migrate_id(id, &bad));
	ret("rdma_create_id sync", rdma_create_id(NULL, &sync, NULL, RDMA_PS_TCP));
	ret("rdma_migrate_id sync to NULL", rdma_migrate_id(sync, NULL));
	ret("rdma_migrate_id sync to ch1", rdma_migrate_id(sync, ch1));
	ret("rdma_destroy_id", rdma_destroy_id(id) || rdma_destroy_id(sync));
}

/* rdma_create_ep: active, with a pd but no qp_init_attr (the header: pd ignored). */
static void c_create_ep(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id;
	int r;

	if (rdma_getaddrinfo(g_addr_str, g_port_str, &hints, &res)) {
		out("rdma_getaddrinfo failed");
		exit(3);
	}
	r = rdma_create_ep(&id, res, NULL, NULL);
	ret("rdma_create_ep active", r);
	if (!r) {
		addr("peer", rdma_get_peer_addr(id));
		out("qp_type %d ps %#x", id->qp_type, id->ps);
		rdma_destroy_ep(id);
	}
	hints.ai_flags |= RAI_PASSIVE;
	rdma_freeaddrinfo(res);
	if (rdma_getaddrinfo(g_addr_str, g_port_str, &hints, &res)) {
		out("rdma_getaddrinfo failed");
		exit(3);
	}
	r = rdma_create_ep(&id, res, NULL, NULL);
	ret("rdma_create_ep passive", r);
	if (!r) {
		addr("local", rdma_get_local_addr(id));
		ret("rdma_listen", rdma_listen(id, 1));
		rdma_destroy_ep(id);
	}
	res->ai_src_addr = NULL;	/* leaked: the case ends here */
	res->ai_src_len = 0;
	r = rdma_create_ep(&id, res, NULL, NULL);
	ret("rdma_create_ep passive without ai_src_addr", r);
	if (!r)
		rdma_destroy_ep(id);
}

static void ai_print(const char *what, int r, struct rdma_addrinfo *res)
{
	int n = 0;

	if (r) {
		out("%s = %d (%s) errno %s", what, r, gai_strerror(r),
		    r == -1 ? strerrorname_np(errno) : "-");
		return;
	}
	out("%s = 0", what);
	for (; res; res = res->ai_next, n++) {
		out("  flags %#x family %d qp_type %d port_space %#x", res->ai_flags,
		    res->ai_family, res->ai_qp_type, res->ai_port_space);
		if (res->ai_src_addr)
			addr("  src", res->ai_src_addr);
		if (res->ai_dst_addr)
			addr("  dst", res->ai_dst_addr);
	}
	out("  entries %d", n);
}

/* Issue 17 item 4: rdma_getaddrinfo as librdmacm 44 answers. */
static void c_addrinfo(void)
{
	struct rdma_addrinfo hints = { 0 }, *res = NULL;
	int r;

	hints.ai_flags = RAI_NUMERICHOST | 0x4000;	/* an unknown bit */
	hints.ai_port_space = RDMA_PS_TCP;
	r = rdma_getaddrinfo(g_addr_str, g_port_str, &hints, &res);
	ai_print("unknown flag", r, res);
	if (!r)
		rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST;
	r = rdma_getaddrinfo(g_addr_str, g_port_str, &hints, &res);
	ai_print("passive", r, res);
	if (!r)
		rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_NUMERICHOST;
	r = rdma_getaddrinfo("10.0.0.300", g_port_str, &hints, &res);
	ai_print("bad numeric host", r, res);
	hints.ai_flags = 0;
	hints.ai_family = AF_APPLETALK;
	r = rdma_getaddrinfo(g_addr_str, g_port_str, &hints, &res);
	ai_print("family AF_APPLETALK", r, res);
	if (!r)
		rdma_freeaddrinfo(res);
}

/* rdma_getaddrinfo(NULL, NULL, passive hints): librdmacm 44 crashes. */
static void c_addrinfo_null(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res = NULL;
	int r;

	r = rdma_getaddrinfo(NULL, NULL, &hints, &res);
	ai_print("NULL NULL passive", r, res);
	if (!r)
		rdma_freeaddrinfo(res);
}

static void c_event_str(void)
{
	out("%s", rdma_event_str(RDMA_CM_EVENT_CONNECT_RESPONSE));
	out("%s", rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT));
	out("%s", rdma_event_str(16));
	out("%s", rdma_event_str(-1));
}

/* ---- the library review's findings (issue 28 item 3) ---- */

static void verbs_ret(const char *what, const void *obj)
{
	if (obj)
		out("%s = ok", what);
	else
		out("%s = NULL %s", what, strerrorname_np(errno) ?: "?");
}

/* An id bound to ADDR, which gives it the address's device. */
static struct rdma_cm_id *bound_id(void)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) || rdma_bind_addr(id, at(&ss, 0))) {
		ret("bound id", -1);
		exit(3);
	}
	out("id->verbs %s", id->verbs ? "set" : "NULL");
	if (!id->verbs)
		exit(3);
	return id;
}

/*
 * V3: IBV_ACCESS_REMOTE_ATOMIC at registration (with LOCAL_WRITE, as
 * ib_check_mr_access() wants) and in a QP's access flags, as the kernel
 * and rxe accept it, whatever the device's atomic_cap.
 */
static void c_remote_atomic(void)
{
	const int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qp_access_flags = all,
	};
	struct rdma_cm_id *id = bound_id();
	static char buf[4096];
	struct ibv_qp_init_attr qia2;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;

	pd = ibv_alloc_pd(id->verbs);
	cq = ibv_create_cq(id->verbs, 2, NULL, NULL, 0);
	if (!pd || !cq) {
		out("pd or cq failed");
		exit(3);
	}
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC);
	verbs_ret("ibv_reg_mr REMOTE_ATOMIC alone", mr);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), all);
	verbs_ret("ibv_reg_mr every access flag", mr);
	if (mr) {
		out("mr access lkey %s", mr->lkey ? "set" : "0");
		ret("ibv_dereg_mr", ibv_dereg_mr(mr));
	}
	qia.send_cq = qia.recv_cq = cq;
	qp = ibv_create_qp(pd, &qia);
	verbs_ret("ibv_create_qp", qp);
	if (!qp)
		exit(3);
	errno = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS);
	ret("ibv_modify_qp INIT every access flag", errno ? -1 : 0);
	memset(&qa, 0, sizeof(qa));
	errno = ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, &qia2);
	ret("ibv_query_qp", errno ? -1 : 0);
	out("qp_state %d qp_access_flags %#x", qa.qp_state, qa.qp_access_flags);
	ret("ibv_destroy_qp", ibv_destroy_qp(qp));
	ret("ibv_destroy_cq", ibv_destroy_cq(cq));
	ret("ibv_dealloc_pd", ibv_dealloc_pd(pd));
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

/*
 * V4: a context from rdma_get_devices() is used after rdma_free_devices(),
 * with no id or object holding it: librdmacm keeps its devices open.
 */
static void c_devices_after_free(void)
{
	struct ibv_device_attr attr;
	struct ibv_context **list, *ctx;
	struct ibv_pd *pd;
	int n = -1;

	list = rdma_get_devices(&n);
	if (!list || n < 1 || !list[0]) {
		out("rdma_get_devices: none");
		exit(3);
	}
	ctx = list[0];
	rdma_free_devices(list);
	pd = ibv_alloc_pd(ctx);
	verbs_ret("ibv_alloc_pd on the freed list's context", pd);
	if (pd)
		ret("ibv_dealloc_pd", ibv_dealloc_pd(pd));
	errno = ibv_query_device(ctx, &attr);
	ret("ibv_query_device", errno ? -1 : 0);
	out("phys_port_cnt %u", attr.phys_port_cnt);
	/* The same device again: the same context. */
	list = rdma_get_devices(&n);
	if (!list)
		exit(3);
	out("second list: %s context", list[0] == ctx ? "the same" : "another");
	rdma_free_devices(list);
}

/*
 * Library review V9: ibv_query_gid_ex()'s answers, an errno value each:
 * an entry that is there, flags it does not know, an index past the
 * table, a port the device lacks.  libibverbs' fallback for a kernel
 * without the ioctl says EOPNOTSUPP for flags; over rxe the 6.1 kernel's
 * ioctl answers, EINVAL, and so does softcm.
 */
static void c_query_gid_ex(void)
{
	struct rdma_cm_id *id = bound_id();
	struct ibv_gid_entry e;
	int r;

	r = ibv_query_gid_ex(id->verbs, 1, 0, &e, 0);
	out("ibv_query_gid_ex index 0 = %s", r ? strerrorname_np(r) ?: "?" : "0");
	r = ibv_query_gid_ex(id->verbs, 1, 0, &e, 1);
	out("ibv_query_gid_ex flags 1 = %s", r ? strerrorname_np(r) ?: "?" : "0");
	r = ibv_query_gid_ex(id->verbs, 1, 100000, &e, 0);
	out("ibv_query_gid_ex index 100000 = %s", r ? strerrorname_np(r) ?: "?" : "0");
	r = ibv_query_gid_ex(id->verbs, 2, 0, &e, 0);
	out("ibv_query_gid_ex port 2 = %s", r ? strerrorname_np(r) ?: "?" : "0");
	ret("rdma_destroy_id", rdma_destroy_id(id));
}

/*
 * A client on CH connects to the listener with a QP-less request,
 * announcing CLIENT_QPN + I: the Linux CM rejects a second REQ from one CA
 * with a QPN it already has (stale connection).
 */
static struct rdma_cm_id *connecting_client(struct rdma_event_channel *ch, unsigned int i)
{
	struct rdma_conn_param p = param(NULL, CLIENT_QPN + i);
	struct rdma_cm_id *cid = client(ch);

	ret("rdma_connect", rdma_connect(cid, &p));
	return cid;
}

static int fd_nonblock(int fd)
{
	return !!(fcntl(fd, F_GETFL) & O_NONBLOCK);
}

/*
 * R2: a synchronous listener's new id has a channel of its own (librdmacm
 * migrates it to a private one): O_NONBLOCK on the listener's fd is not
 * the new id's, and rdma_migrate_id(new id, NULL) sees a synchronous id.
 */
static void c_sync_new_id_channel(void)
{
	struct rdma_event_channel *cch = channel();
	struct rdma_cm_id *lid = listener(NULL), *cid, *sid = NULL;

	cid = connecting_client(cch, 0);
	ret("rdma_get_request", rdma_get_request(lid, &sid));
	if (!sid)
		exit(3);
	out("new id's channel: %s, fd %s", sid->channel == lid->channel ? "the listener's" : "its own",
	    sid->channel->fd == lid->channel->fd ? "the listener's" : "its own");
	ret("fcntl listener O_NONBLOCK",
	    fcntl(lid->channel->fd, F_SETFL, fcntl(lid->channel->fd, F_GETFL) | O_NONBLOCK));
	out("listener O_NONBLOCK %d, new id O_NONBLOCK %d", fd_nonblock(lid->channel->fd),
	    fd_nonblock(sid->channel->fd));
	ret("rdma_migrate_id new id to NULL", rdma_migrate_id(sid, NULL));
	ret("rdma_destroy_id", rdma_destroy_id(sid) || rdma_destroy_id(cid) ||
	    rdma_destroy_id(lid));
}

/*
 * R3: poll() on a synchronous listener's fd says readable while a
 * request is there for rdma_get_request(), whether the kernel still
 * queues it (librdmacm) or the library already read it.
 */
static void c_sync_poll_request(void)
{
	struct rdma_event_channel *cch = channel();
	struct rdma_cm_id *lid = listener(NULL), *cid[3], *sid[3] = { 0 };
	struct pollfd pfd = { .fd = lid->channel->fd, .events = POLLIN };
	int i, r;

	for (i = 0; i < 3; i++)
		cid[i] = connecting_client(cch, i);
	/* The three requests reach the listener. */
	usleep(g_wait_ms * 50);
	for (i = 0; i < 2; i++)
		ret("rdma_get_request", rdma_get_request(lid, &sid[i]));
	r = poll(&pfd, 1, 0);
	out("poll(listener fd) after two requests = %d revents %#x", r, pfd.revents);
	ret("fcntl listener O_NONBLOCK",
	    fcntl(lid->channel->fd, F_SETFL, fcntl(lid->channel->fd, F_GETFL) | O_NONBLOCK));
	ret("rdma_get_request third, non-blocking", rdma_get_request(lid, &sid[2]));
	r = poll(&pfd, 1, 0);
	out("poll(listener fd) after three requests = %d", r);
	for (i = 0; i < 3; i++) {
		if (sid[i])
			rdma_destroy_id(sid[i]);
		rdma_destroy_id(cid[i]);
	}
	ret("rdma_destroy_id", rdma_destroy_id(lid));
}

/*
 * R4: a forked child that reads its parent's channel is refused (rdma_ucm
 * checks the file's credentials); the parent still has its event and
 * destroys its id.
 */
static void c_fork_child_reads(void)
{
	struct rdma_event_channel *ch = channel();
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct sockaddr_storage ss;
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	int status;
	pid_t pid;

	ret("rdma_create_id", rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	ret("rdma_resolve_addr", rdma_resolve_addr(id, NULL, at(&ss, g_port), 2000));
	out("poll before fork = %d", poll(&pfd, 1, g_wait_ms));
	pid = fork();
	if (pid < 0)
		exit(3);
	if (!pid) {
		ret("child: rdma_get_cm_event", rdma_get_cm_event(ch, &e));
		ret("child: rdma_destroy_id", rdma_destroy_id(id));
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		exit(3);
	if (WIFSIGNALED(status))
		out("child: crash SIG%s", sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		out("child: exit %d", WEXITSTATUS(status));
	out("parent: poll after the child = %d", poll(&pfd, 1, 0));
	ev_ack(ch, "parent", RDMA_CM_EVENT_ADDR_RESOLVED);
	ret("parent: rdma_destroy_id", rdma_destroy_id(id));
}

/* A case that outlives its time is killed, with whatever it holds open. */
static pid_t child;
static void on_alarm(int sig)
{
	kill(child, SIGKILL);
}

static const struct fcase {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "handshake/no-qp-connect-response-establish", c_handshake },
	{ "handshake/sync-connect-returns-at-connect-response", c_sync },
	{ "params/retry-counts-clamped", c_params_clamp },
	{ "params/depth-maximum", c_params_depth },
	{ "reject/sync-id-keeps-event", c_reject_sync },
	{ "reject/no-listener", c_no_listener },
	{ "reject/server-gone-before-establish", c_reject_after_reply },
	{ "errors/connect-get-request-establish-disconnect", c_connect_errors },
	{ "errors/disconnect-unconnected", c_disconnect_unconnected },
	{ "errors/accept-on-listener", c_accept_listener },
	{ "errors/accept-null-on-listener", c_accept_listener_null },
	{ "errors/accept-on-wildcard-listener", c_accept_listener_any },
	{ "errors/accept-null-param", c_accept_null },
	{ "errors/resolve-route-idle-id", c_route_idle },
	{ "errors/resolve-route-bound-id", c_route_bound },
	{ "errors/resolve-route-timeout-0", c_route_timeout0 },
	{ "errors/resolve-addr-negative-timeout", c_resolve_negative },
	{ "errors/port-spaces", c_port_spaces },
	{ "options/set-option", c_options },
	{ "sidr/sync-listener-accept", c_sidr },
	{ "migrate/channels", c_migrate },
	{ "create-ep/active-passive", c_create_ep },
	{ "addrinfo/flags-family-errors", c_addrinfo },
	{ "addrinfo/null-node-null-service-passive", c_addrinfo_null },
	{ "events/event-str", c_event_str },
	{ "verbs/remote-atomic-access", c_remote_atomic },
	{ "verbs/device-list-context-after-free", c_devices_after_free },
	{ "verbs/query-gid-ex", c_query_gid_ex },
	{ "sync/new-id-has-its-own-channel", c_sync_new_id_channel },
	{ "sync/poll-sees-a-request-read-ahead", c_sync_poll_request },
	{ "fork/child-reads-inherited-channel", c_fork_child_reads },
};

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai;
	const char *w = getenv("FIDELITY_WAIT_MS");
	unsigned int i;
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			puts(cases[i].name);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: fidelity list | fidelity CASE ADDR PORT\n");
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (!strcmp(cases[i].name, argv[1]))
			break;
	if (i == ARRAY_SIZE(cases) ||
	    getaddrinfo(argv[2], argv[3], &hints, &ai)) {
		fprintf(stderr, "fidelity: no case %s, or a bad ADDR PORT\n", argv[1]);
		return 2;
	}
	memcpy(&g_addr, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	g_addr_str = argv[2];
	g_port_str = argv[3];
	g_port = atoi(argv[3]);
	if (w)
		g_wait_ms = atoi(w);

	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		cases[i].fn();
		out("done");
		_exit(0);
	}
	child = pid;
	signal(SIGALRM, on_alarm);
	alarm(3 * g_wait_ms / 1000 + 1);
	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR)
			return 2;
	/* no time left on the alarm: it went off */
	if (!alarm(0))
		out("timeout after %d s", 3 * g_wait_ms / 1000 + 1);
	else if (WIFSIGNALED(status))
		out("crash SIG%s", sigabbrev_np(WTERMSIG(status)) ?: "?");
	else if (WEXITSTATUS(status))
		out("exit %d", WEXITSTATUS(status));
	return 0;
}
