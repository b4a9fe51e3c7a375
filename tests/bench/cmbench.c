// SPDX-License-Identifier: GPL-2.0
/*
 * cmbench: connection setup and teardown rates, latencies and per-call
 * costs for a connection manager written against <rdma/rdma_cma.h>, and
 * the same measurements for kernel TCP.  Built twice from this file: with
 * libsoftcm (-DCMBENCH_SOFTCM) and with rdma-core's librdmacm, so both CMs
 * are measured by one method and one clock (CLOCK_MONOTONIC).
 *
 *   cmbench server -t cm|tcp -b ADDR -p PORT -s SHM [-B BACKLOG] [-y|-e|-X]
 *   cmbench client -t cm|tcp -a ADDR -p PORT -s SHM -S SYSTEM -T TOPO
 *                  [-n N,N...] [-w WINDOW] [-r RUNS] [-l LAT_N]
 *                  [-L LIVE,LIVE...] [-U BURST_N] [-c] [-m] [-g] [-X]
 *
 * The server listens with BACKLOG (default 65535); -y makes it a
 * synchronous server (rdma_get_request() and a blocking rdma_accept(), or
 * a blocking accept(2) loop), -e an epoll loop over the event channel (TCP's
 * default server is an epoll loop already).  -U runs the burst case: BURST_N
 * clients connect at once (all in flight), typically to a listener whose
 * backlog is much smaller, and the time until both sides of every one
 * are established is reported (the client takes -B and -y/-e too, for
 * the case's name).  -X (libsoftcm only) batches the calls: the server
 * drains its channel and accepts what it read with one softcm_submit(),
 * the client creates, resolves, connects and establishes that way too
 * (softcm_submit(3)), so that many connections cost few system calls.
 *
 * The server and the client are separate processes (they may be in
 * different network namespaces, or linked against different libraries);
 * the server stamps the moment each connection is established and
 * disconnected on its side into a file both map (SHM), indexed by the
 * connection number the client sends as private data (CM) or by the
 * client's port (TCP).  A connection counts as set up once both sides
 * have seen it established.
 *
 * The client prints one line per measurement:
 *   cmbench system=S topo=T case=C n=N window=W runs=R metric=M unit=U
 *           min=X median=Y max=Z
 * Every case runs a warm-up first that is not counted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#ifdef CMBENCH_SOFTCM
#include <softcm.h>
#endif

#define SLOTS		(1 << 18)	/* connection numbers (and TCP ports) */
#define STALL_MS	30000		/* no event for this long: the run failed */
#define MAX_RUNS	16

struct shared {
	uint64_t srv_est[SLOTS];
	uint64_t srv_disc[SLOTS];
};

struct conn {
	struct rdma_cm_id *id;
	int fd;
	uint16_t port;
	uint64_t t_start, t_addr, t_route, t_conn, t_est, t_disc;
	uint32_t idx;				/* -X: the REQ's private data */
	struct rdma_conn_param param;		/* -X: until the batch is sent */
};

static struct shared *shm;
static int tcp_mode, o_backlog = 65535;
static char o_server = 'b';	/* b: blocking event loop, y: sync, e: epoll */
#ifdef CMBENCH_SOFTCM
static int o_submit;		/* -X: softcm_submit() */
#endif
static const char *o_addr, *o_port = "7900", *o_sys = "?", *o_topo = "?";
static struct sockaddr_storage dst;
static socklen_t dst_len;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "cmbench: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void map_shared(const char *path, int create)
{
	int fd = open(path, O_RDWR | (create ? O_CREAT : 0), 0600);

	if (fd < 0)
		die(path);
	if (create && ftruncate(fd, sizeof(*shm)))
		die("ftruncate");
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED)
		die("mmap");
	close(fd);
}

static void stamp(volatile uint64_t *slot)
{
	__atomic_store_n(slot, now_ns(), __ATOMIC_RELEASE);
}

static uint64_t peek(uint64_t *slot)
{
	return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

static void lookup(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int err = getaddrinfo(host, port, &hints, &ai);

	if (err) {
		fprintf(stderr, "cmbench: %s: %s\n", host, gai_strerror(err));
		exit(2);
	}
	memcpy(&dst, ai->ai_addr, ai->ai_addrlen);
	dst_len = ai->ai_addrlen;
	freeaddrinfo(ai);
}

static void raise_nofile(void)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };

	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max = 65536 * 4;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- server ---- */

static void cm_param(struct rdma_conn_param *p, uint32_t *idx, uint32_t qpn)
{
	memset(p, 0, sizeof(*p));
	p->private_data = idx;
	p->private_data_len = idx ? sizeof(*idx) : 0;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	/* No QP on either side: the number is only carried in REQ/REP. */
	p->qp_num = qpn & 0xffffff;
}

static int cm_listen(struct rdma_event_channel *ch, struct rdma_cm_id **listen)
{
	if (rdma_create_id(ch, listen, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(*listen, (struct sockaddr *)&dst))
		die("rdma_bind_addr");
	if (rdma_listen(*listen, o_backlog) && rdma_listen(*listen, 1024))
		die("rdma_listen");
	printf("listening\n");
	fflush(stdout);
	return 0;
}

static uint32_t req_index(const struct rdma_cm_event *ev)
{
	uint32_t idx = 0;

	if (ev->param.conn.private_data_len >= sizeof(idx))
		memcpy(&idx, ev->param.conn.private_data, sizeof(idx));
	return idx % SLOTS;
}

/* One event of the asynchronous servers; acks it. */
static void cm_server_event(struct rdma_cm_id *listen, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct rdma_cm_id *id = ev->id;
	uint32_t idx;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		idx = req_index(ev);
		id->context = (void *)(uintptr_t)(idx + 1);
		cm_param(&param, NULL, 0x800000 | idx);
		rdma_ack_cm_event(ev);
		if (rdma_accept(id, &param)) {
			fprintf(stderr, "cmbench server: rdma_accept: %s\n", strerror(errno));
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
		}
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id->context)
			stamp(&shm->srv_est[(uintptr_t)id->context - 1]);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (id->context)
			stamp(&shm->srv_disc[(uintptr_t)id->context - 1]);
		/* Our DREP: the client's disconnect completes. */
		rdma_disconnect(id);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		return;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		fprintf(stderr, "cmbench server: %s status %d\n",
			rdma_event_str(ev->event), ev->status);
		if (id != listen && (ev->event == RDMA_CM_EVENT_CONNECT_ERROR ||
				     ev->event == RDMA_CM_EVENT_UNREACHABLE ||
				     ev->event == RDMA_CM_EVENT_REJECTED)) {
			rdma_ack_cm_event(ev);
			rdma_destroy_id(id);
			return;
		}
	}
	rdma_ack_cm_event(ev);
}

/*
 * The synchronous server of rdma_get_request(3): one request at a time,
 * rdma_accept() returning once the connection is established.  Its ids
 * stay as they are until the process ends (the burst case only sets up).
 */
static int cm_sync_server(void)
{
	struct rdma_conn_param param;
	struct rdma_cm_id *listen, *id;
	uint32_t idx;

	cm_listen(NULL, &listen);
	while (!rdma_get_request(listen, &id)) {
		idx = req_index(id->event);
		cm_param(&param, NULL, 0x800000 | idx);
		if (rdma_accept(id, &param)) {
			fprintf(stderr, "cmbench server: rdma_accept: %s\n", strerror(errno));
			rdma_destroy_id(id);
			continue;
		}
		stamp(&shm->srv_est[idx]);
	}
	die("rdma_get_request");
	return 2;
}

/* A non-blocking event channel in a new epoll set, with the listener. */
static struct rdma_event_channel *epoll_listen(int *ep, struct rdma_cm_id **listen)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct epoll_event e = { .events = EPOLLIN };

	if (!ch)
		die("rdma_create_event_channel");
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
	*ep = epoll_create1(0);
	if (*ep < 0 || epoll_ctl(*ep, EPOLL_CTL_ADD, ch->fd, &e))
		die("epoll");
	cm_listen(ch, listen);
	return ch;
}

/* The event channel in an epoll loop, as an event-driven server has it. */
static int cm_epoll_server(void)
{
	struct epoll_event e;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *listen;
	struct rdma_event_channel *ch;
	int ep;

	ch = epoll_listen(&ep, &listen);
	for (;;) {
		if (epoll_wait(ep, &e, 1, -1) < 0 && errno != EINTR)
			die("epoll_wait");
		while (!rdma_get_cm_event(ch, &ev))
			cm_server_event(listen, ev);
		if (errno != EAGAIN)
			die("rdma_get_cm_event");
	}
	return 2;
}

#ifdef CMBENCH_SOFTCM
/*
 * -X: the epoll loop, with the requests of each drain accepted by one
 * softcm_submit(); their parameters live until then.
 */
static int cm_submit_server(void)
{
	struct rdma_event_channel *ch;
	struct epoll_event e;
	struct rdma_conn_param *param;
	struct softcm_op *ops;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *listen;
	unsigned int k, i, max = 4096;
	uint32_t idx;
	int ep;

	ops = calloc(max, sizeof(*ops));
	param = calloc(max, sizeof(*param));
	if (!ops || !param)
		die("calloc");
	ch = epoll_listen(&ep, &listen);
	for (;;) {
		if (epoll_wait(ep, &e, 1, -1) < 0 && errno != EINTR)
			die("epoll_wait");
		k = 0;
		while (k < max && !rdma_get_cm_event(ch, &ev)) {
			if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
				cm_server_event(listen, ev);
				continue;
			}
			idx = req_index(ev);
			ev->id->context = (void *)(uintptr_t)(idx + 1);
			cm_param(&param[k], NULL, 0x800000 | idx);
			ops[k] = (struct softcm_op){ .code = SOFTCM_OP_ACCEPT, .id = ev->id,
						     .conn_param = &param[k] };
			k++;
			rdma_ack_cm_event(ev);
		}
		if (k < max && errno != EAGAIN)
			die("rdma_get_cm_event");
		if (k && softcm_submit(ops, k) < 0)
			die("softcm_submit");
		for (i = 0; i < k; i++) {
			if (!ops[i].err)
				continue;
			fprintf(stderr, "cmbench server: accept: %s\n", strerror(ops[i].err));
			rdma_reject(ops[i].id, NULL, 0);
			rdma_destroy_id(ops[i].id);
		}
	}
	return 2;
}
#endif

static int cm_server(void)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *listen;

	if (o_server == 'y')
		return cm_sync_server();
	if (o_server == 'e')
		return cm_epoll_server();
#ifdef CMBENCH_SOFTCM
	if (o_submit)
		return cm_submit_server();
#endif
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	cm_listen(ch, &listen);
	while (!rdma_get_cm_event(ch, &ev))
		cm_server_event(listen, ev);
	die("rdma_get_cm_event");
	return 2;
}

/* A blocking accept(2) loop: TCP's synchronous server. */
static int tcp_sync_server(int lfd)
{
	struct sockaddr_storage peer;
	socklen_t len;
	int fd;

	if (fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) & ~O_NONBLOCK))
		die("fcntl");
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		len = sizeof(peer);
		fd = accept(lfd, (struct sockaddr *)&peer, &len);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		stamp(&shm->srv_est[ntohs(((struct sockaddr_in *)&peer)->sin_port)]);
		/* kept open, as the CM server keeps its ids */
	}
	return 2;
}

static int tcp_server(void)
{
	struct epoll_event evs[256], e;
	struct sockaddr_storage peer;
	socklen_t len;
	int one = 1, lfd, ep, n, i, fd;
	uint16_t port;
	char buf[64];

	lfd = socket(dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&dst, dst_len) || listen(lfd, o_backlog))
		die("bind/listen");
	if (o_server == 'y')
		return tcp_sync_server(lfd);
	ep = epoll_create1(0);
	e.events = EPOLLIN;
	e.data.u64 = (uint64_t)lfd << 32;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		n = epoll_wait(ep, evs, 256, -1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (i = 0; i < n; i++) {
			fd = evs[i].data.u64 >> 32;
			port = evs[i].data.u64 & 0xffff;
			if (fd != lfd) {
				ssize_t got = read(fd, buf, sizeof(buf));

				if (got > 0 || (got < 0 && errno == EAGAIN))
					continue;
				stamp(&shm->srv_disc[port]);
				close(fd);
				continue;
			}
			while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
				/* As an application learns its peer. */
				len = sizeof(peer);
				getpeername(fd, (struct sockaddr *)&peer, &len);
				port = ntohs(((struct sockaddr_in *)&peer)->sin_port);
				stamp(&shm->srv_est[port]);
				e.events = EPOLLIN | EPOLLRDHUP;
				e.data.u64 = (uint64_t)fd << 32 | port;
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
			}
		}
	}
	return 2;
}

/* ---- client: one batch of connections ---- */

static struct rdma_event_channel *cli_ch;
static int cli_ep = -1;
/*
 * TCP clients of the burst case send a byte once connected, as a client
 * sends its request: a connection whose handshake ended in a SYN cookie
 * while the accept queue was full is only taken by the server when data
 * comes (the lone ACK was dropped), as with any real client.
 */
static int tcp_hello;
static unsigned int o_runs = 3, o_window = 256, o_lat = 200, o_cold, o_mem = 1, o_peer = 1;
static int failed;

static int launch_cm(struct conn *c, uint32_t idx)
{
	c->t_start = now_ns();
	if (rdma_create_id(cli_ch, &c->id, (void *)(uintptr_t)idx, RDMA_PS_TCP))
		return -1;
	return rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 5000);
}

static int launch_tcp(struct conn *c, uint32_t idx)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	struct epoll_event e;

	c->t_start = now_ns();
	c->fd = socket(dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -1;
	if (connect(c->fd, (struct sockaddr *)&dst, dst_len) && errno != EINPROGRESS)
		return -1;
	getsockname(c->fd, (struct sockaddr *)&me, &len);
	c->port = ntohs(me.sin_port);
	e.events = EPOLLOUT;
	e.data.u64 = idx;
	return epoll_ctl(cli_ep, EPOLL_CTL_ADD, c->fd, &e);
}

static void stuck(const char *what, unsigned int done, unsigned int n)
{
	fprintf(stderr, "cmbench %s/%s: %s: %u of %u after %d s without an event\n",
		o_sys, o_topo, what, done, n, STALL_MS / 1000);
	failed = 1;
}

#ifdef CMBENCH_SOFTCM
static struct softcm_op *xops;

/* Send the @k ops queued; 0, or -1 after saying which failed. */
static int xsubmit(unsigned int k)
{
	unsigned int i;

	if (!k)
		return 0;
	if (softcm_submit(xops, k) < 0) {
		fprintf(stderr, "cmbench: softcm_submit: %s\n", strerror(errno));
		failed = 1;
		return -1;
	}
	for (i = 0; i < k; i++) {
		if (!xops[i].err)
			continue;
		fprintf(stderr, "cmbench: op %d: %s\n", xops[i].code, strerror(xops[i].err));
		failed = 1;
		return -1;
	}
	return 0;
}

/*
 * batch() with -X: each wave of new connections is created and resolved
 * with a softcm_submit() per step, and the next step of every connection
 * whose event one drain of the channel read goes in one more.
 */
static int batch_submit(struct conn *c, unsigned int n, unsigned int window, uint32_t base)
{
	unsigned int started = 0, done = 0, k, first, i, j;
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	uint32_t idx;

	if (!xops) {
		xops = calloc(window, sizeof(*xops));
		if (!xops || fcntl(cli_ch->fd, F_SETFL, fcntl(cli_ch->fd, F_GETFL) | O_NONBLOCK))
			die("setup");
	}
	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].fd = -1;
		shm->srv_est[(base + i) % SLOTS] = 0;
	}
	while (done < n) {
		for (k = 0, first = started; started < n && started - done < window; started++) {
			c[started].t_start = now_ns();
			xops[k++] = (struct softcm_op){ .code = SOFTCM_OP_CREATE_ID, .channel = cli_ch,
						       .context = (void *)(uintptr_t)(base + started),
						       .ps = RDMA_PS_TCP };
		}
		if (xsubmit(k))
			return -1;
		for (j = 0; j < k; j++) {
			c[first + j].id = xops[j].id;
			xops[j].code = SOFTCM_OP_RESOLVE_ADDR;
			xops[j].dst_addr = (struct sockaddr *)&dst;
			xops[j].timeout_ms = 5000;
		}
		if (xsubmit(k))
			return -1;

		pfd.fd = cli_ch->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, STALL_MS) <= 0) {
			stuck("setup", done, n);
			return -1;
		}
		k = 0;
		while (k < window && !rdma_get_cm_event(cli_ch, &ev)) {
			idx = (uintptr_t)ev->id->context;
			i = idx - base;
			xops[k] = (struct softcm_op){ .id = ev->id, .timeout_ms = 5000 };
			switch (ev->event) {
			case RDMA_CM_EVENT_ADDR_RESOLVED:
				c[i].t_addr = now_ns();
				xops[k++].code = SOFTCM_OP_RESOLVE_ROUTE;
				break;
			case RDMA_CM_EVENT_ROUTE_RESOLVED:
				c[i].t_route = c[i].t_conn = now_ns();
				c[i].idx = idx;
				cm_param(&c[i].param, &c[i].idx, 0x100000 | idx);
				xops[k].conn_param = &c[i].param;
				xops[k++].code = SOFTCM_OP_CONNECT;
				break;
			case RDMA_CM_EVENT_CONNECT_RESPONSE:
				/* without a QP: we send the RTU */
				xops[k++].code = SOFTCM_OP_ESTABLISH;
				c[i].t_est = now_ns();
				done++;
				break;
			default:
				fprintf(stderr, "cmbench %s/%s: connection %u: %s status %d\n",
					o_sys, o_topo, i, rdma_event_str(ev->event), ev->status);
				rdma_ack_cm_event(ev);
				failed = 1;
				return -1;
			}
			rdma_ack_cm_event(ev);
		}
		if (k < window && errno != EAGAIN)
			die("rdma_get_cm_event");
		if (xsubmit(k))
			return -1;
	}
	return 0;
}
#endif

/*
 * Set up @n connections, at most @window in flight, numbered from @base;
 * waits for the server's side of each too.  Returns 0 or -1.
 */
static int batch(struct conn *c, unsigned int n, unsigned int window, uint32_t base)
{
	unsigned int started = 0, done = 0, i;
	struct rdma_conn_param param;
	struct epoll_event evs[256];
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	uint32_t idx;
	int k, err, r;
	socklen_t len;
	struct sockaddr_storage peer;

#ifdef CMBENCH_SOFTCM
	if (o_submit && !tcp_mode)
		return batch_submit(c, n, window, base);
#endif
	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].fd = -1;
		if (!tcp_mode)
			shm->srv_est[(base + i) % SLOTS] = 0;
	}
	if (tcp_mode)
		memset(shm->srv_est, 0, sizeof(shm->srv_est[0]) * 65536);
	while (done < n) {
		while (started < n && started - done < window) {
			idx = base + started;
			r = tcp_mode ? launch_tcp(&c[started], idx) : launch_cm(&c[started], idx);
			if (r) {
				fprintf(stderr, "cmbench: connection %u: %s\n", started,
					strerror(errno));
				failed = 1;
				return -1;
			}
			started++;
		}
		if (tcp_mode) {
			k = epoll_wait(cli_ep, evs, 256, STALL_MS);
			if (k <= 0) {
				stuck("setup", done, n);
				return -1;
			}
			for (r = 0; r < k; r++) {
				i = (uint32_t)evs[r].data.u64 - base;
				len = sizeof(err);
				getsockopt(c[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
				if (err) {
					errno = err;
					fprintf(stderr, "cmbench: tcp connect: %s\n", strerror(err));
					failed = 1;
					return -1;
				}
				len = sizeof(peer);
				getpeername(c[i].fd, (struct sockaddr *)&peer, &len);
				c[i].t_est = now_ns();
				if (tcp_hello && write(c[i].fd, "?", 1) != 1) {
					fprintf(stderr, "cmbench: tcp write: %s\n", strerror(errno));
					failed = 1;
					return -1;
				}
				epoll_ctl(cli_ep, EPOLL_CTL_DEL, c[i].fd, NULL);
				done++;
			}
			continue;
		}
		pfd.fd = cli_ch->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, STALL_MS) <= 0) {
			stuck("setup", done, n);
			return -1;
		}
		if (rdma_get_cm_event(cli_ch, &ev))
			die("rdma_get_cm_event");
		idx = (uintptr_t)ev->id->context;
		i = idx - base;
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			c[i].t_addr = now_ns();
			err = rdma_resolve_route(ev->id, 5000);
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			c[i].t_route = c[i].t_conn = now_ns();
			cm_param(&param, &idx, 0x100000 | idx);
			err = rdma_connect(ev->id, &param);
			break;
		case RDMA_CM_EVENT_CONNECT_RESPONSE:
			/* without a QP (librdmacm and libsoftcm): we send the RTU. */
			err = rdma_establish(ev->id);
			c[i].t_est = now_ns();
			done++;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			c[i].t_est = now_ns();
			done++;
			err = 0;
			break;
		default:
			fprintf(stderr, "cmbench %s/%s: connection %u: %s status %d\n",
				o_sys, o_topo, i, rdma_event_str(ev->event), ev->status);
			err = -1;
		}
		rdma_ack_cm_event(ev);
		if (err) {
			fprintf(stderr, "cmbench: connection %u: %s\n", i, strerror(errno));
			failed = 1;
			return -1;
		}
	}
	return 0;
}

/* When both sides have the connection; waits for the server's stamp. */
static uint64_t both_est(struct conn *c, uint32_t idx)
{
	uint64_t *slot = tcp_mode ? &shm->srv_est[c->port] : &shm->srv_est[idx % SLOTS];
	uint64_t t0 = now_ns(), s;

	while (!(s = peek(slot))) {
		if (now_ns() - t0 > STALL_MS * 1000000ull) {
			failed = 1;
			fprintf(stderr, "cmbench: server never saw connection %u\n", idx);
			return c->t_est;
		}
		sched_yield();
	}
	return s > c->t_est ? s : c->t_est;
}

/* Disconnect all: returns the time until both sides saw it, in ns. */
static uint64_t teardown(struct conn *c, unsigned int n, uint32_t base)
{
	struct rdma_cm_event *ev;
	struct epoll_event e, evs[256];
	unsigned int done = 0, started = 0, missing = 0, i;
	struct pollfd pfd;
	uint64_t t0, end, s, *slot;
	char buf[16];
	ssize_t got;
	int k, r;

	for (i = 0; i < n; i++)
		shm->srv_disc[tcp_mode ? c[i].port : (base + i) % SLOTS] = 0;
	t0 = now_ns();
	while (done < n) {
		/*
		 * As many in flight as at setup: a burst of 50 000 DREQs
		 * overflows a socket buffer, and a DREQ that times out
		 * ends the connection on one side only.
		 */
		for (; started < n && started - done < o_window; started++) {
			i = started;
			if (tcp_mode) {
				e.events = EPOLLIN | EPOLLRDHUP;
				e.data.u64 = i;
				epoll_ctl(cli_ep, EPOLL_CTL_ADD, c[i].fd, &e);
				shutdown(c[i].fd, SHUT_WR);
			} else if (rdma_disconnect(c[i].id)) {
				fprintf(stderr, "cmbench: rdma_disconnect: %s\n", strerror(errno));
				failed = 1;
				return 0;
			}
		}
		if (tcp_mode) {
			k = epoll_wait(cli_ep, evs, 256, STALL_MS);
			if (k <= 0) {
				stuck("teardown", done, n);
				return 0;
			}
			for (r = 0; r < k; r++) {
				i = evs[r].data.u64;
				got = read(c[i].fd, buf, sizeof(buf));
				if (got > 0 || (got < 0 && errno == EAGAIN) || c[i].t_disc)
					continue;
				c[i].t_disc = now_ns();
				epoll_ctl(cli_ep, EPOLL_CTL_DEL, c[i].fd, NULL);
				done++;
			}
			continue;
		}
		pfd.fd = cli_ch->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, STALL_MS) <= 0) {
			stuck("teardown", done, n);
			return 0;
		}
		if (rdma_get_cm_event(cli_ch, &ev))
			die("rdma_get_cm_event");
		i = (uintptr_t)ev->id->context - base;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			c[i].t_disc = now_ns();
			done++;
		} else if (ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT) {
			fprintf(stderr, "cmbench: teardown: %s\n", rdma_event_str(ev->event));
		}
		rdma_ack_cm_event(ev);
	}
	end = 0;
	for (i = 0; i < n; i++) {
		slot = &shm->srv_disc[tcp_mode ? c[i].port : (base + i) % SLOTS];
		while (!(s = peek(slot)) && now_ns() - c[i].t_disc < STALL_MS * 1000000ull)
			sched_yield();
		if (!s && !missing++)
			fprintf(stderr, "cmbench: server never saw disconnect %u\n", i);
		end = s > end ? s : end;
		end = c[i].t_disc > end ? c[i].t_disc : end;
	}
	if (missing) {
		fprintf(stderr, "cmbench: %u of %u disconnects never reached the server\n",
			missing, n);
		failed = 1;
	}
	return end - t0;
}

/* Destroy all ids (close all sockets): returns the time in ns. */
static uint64_t destroy(struct conn *c, unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (tcp_mode)
			close(c[i].fd);
		else
			rdma_destroy_id(c[i].id);
	}
	return now_ns() - t0;
}

/* ---- client: statistics and output ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, unsigned int n, unsigned int p)
{
	unsigned int k = (uint64_t)n * p / 100;

	qsort(v, n, sizeof(*v), cmp_u64);
	return v[k >= n ? n - 1 : k];
}

static void report(const char *cas, unsigned int n, unsigned int window, const char *metric,
		   const char *unit, double *v, unsigned int runs)
{
	qsort(v, runs, sizeof(*v), cmp_dbl);
	printf("cmbench system=%s topo=%s case=%s n=%u window=%u runs=%u metric=%s unit=%s "
	       "min=%.6g median=%.6g max=%.6g\n", o_sys, o_topo, cas, n, window, runs, metric,
	       unit, v[0], v[runs / 2], v[runs - 1]);
	fflush(stdout);
}

static long slab_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/*
 * The setup case for @n connections: a warm-up, then o_runs runs of
 * batch + teardown + destroy.  @window 1 is the single-connection latency.
 */
static void setup_case(const char *cas, unsigned int n, unsigned int window)
{
	double rate[MAX_RUNS], p50[MAX_RUNS], p99[MAX_RUNS], cp50[MAX_RUNS], cp99[MAX_RUNS];
	double down[MAX_RUNS], des[MAX_RUNS], addr50[MAX_RUNS], route50[MAX_RUNS];
	double mem[MAX_RUNS];
	struct conn *c = calloc(n, sizeof(*c));
	uint64_t *lat = calloc(n, sizeof(*lat)), *clat = calloc(n, sizeof(*lat));
	uint64_t *al = calloc(n, sizeof(*lat)), *rl = calloc(n, sizeof(*lat));
	uint64_t start, end, e, td;
	unsigned int run, i, warm = n < 200 ? n : 200;
	long before, after;

	if (!c || !lat || !clat || !al || !rl)
		die("calloc");
	/* Warm-up: neighbours, caches, the server's first allocations. */
	if (batch(c, warm, window, 0) || !teardown(c, warm, 0))
		goto out;
	destroy(c, warm);
	for (run = 0; run < o_runs; run++) {
		before = slab_kib();
		if (batch(c, n, window, 0))
			goto out;
		start = c[0].t_start;
		end = 0;
		for (i = 0; i < n; i++) {
			e = both_est(&c[i], i);
			end = e > end ? e : end;
			lat[i] = e - c[i].t_start;
			clat[i] = e - c[i].t_conn;
			al[i] = c[i].t_addr - c[i].t_start;
			rl[i] = c[i].t_route - c[i].t_addr;
		}
		after = slab_kib();
		mem[run] = (double)(after - before) * 1024 / n;
		rate[run] = n / ((end - start) / 1e9);
		p50[run] = pct(lat, n, 50) / 1e3;
		p99[run] = pct(lat, n, 99) / 1e3;
		if (!tcp_mode) {
			cp50[run] = pct(clat, n, 50) / 1e3;
			cp99[run] = pct(clat, n, 99) / 1e3;
			addr50[run] = pct(al, n, 50) / 1e3;
			route50[run] = pct(rl, n, 50) / 1e3;
		}
		td = teardown(c, n, 0);
		if (!td)
			goto out;
		down[run] = n / (td / 1e9);
		des[run] = n / (destroy(c, n) / 1e9);
	}
	report(cas, n, window, "rate", "conn/s", rate, o_runs);
	report(cas, n, window, "lat_p50", "us", p50, o_runs);
	report(cas, n, window, "lat_p99", "us", p99, o_runs);
	if (!tcp_mode) {
		report(cas, n, window, "connect_p50", "us", cp50, o_runs);
		report(cas, n, window, "connect_p99", "us", cp99, o_runs);
		report(cas, n, window, "addr_p50", "us", addr50, o_runs);
		report(cas, n, window, "route_p50", "us", route50, o_runs);
	}
	report(cas, n, window, "teardown_rate", "conn/s", down, o_runs);
	report(cas, n, window, "destroy_rate", "ids/s", des, o_runs);
	if (o_mem && window > 1)
		report(cas, n, window, "kmem_per_conn", "bytes", mem, o_runs);
out:
	free(c);
	free(lat);
	free(clat);
	free(al);
	free(rl);
}

/*
 * The burst case: @n clients connect at once to a listener whose backlog
 * may be much smaller; the time from the first connect to the last
 * connection established on both sides.  Each run's ids (sockets) are
 * destroyed after it without waiting for the server: the synchronous
 * servers never look at their connections again.
 */
static void burst_case(unsigned int n)
{
	double total[MAX_RUNS], p50[MAX_RUNS], p99[MAX_RUNS];
	struct conn *c = calloc(n, sizeof(*c));
	uint64_t *lat = calloc(n, sizeof(*lat));
	uint64_t start, end, e;
	unsigned int run, i;
	char cas[64];
	uint32_t base;

	if (!c || !lat)
		die("calloc");
	/* the server's kind and backlog, as the client was told them */
	snprintf(cas, sizeof(cas), "burst-%s-b%d", o_server == 'y' ? "sync" : "epoll",
		 o_backlog);
	tcp_hello = 1;
	for (run = 0; run < o_runs; run++) {
		base = (run + 1) * n;
		if (batch(c, n, n, base))
			goto out;
		start = c[0].t_start;
		end = 0;
		for (i = 0; i < n; i++) {
			e = both_est(&c[i], base + i);
			end = e > end ? e : end;
			lat[i] = e - c[i].t_start;
		}
		total[run] = (end - start) / 1e6;
		p50[run] = pct(lat, n, 50) / 1e3;
		p99[run] = pct(lat, n, 99) / 1e3;
		destroy(c, n);
	}
	report(cas, n, n, "time", "ms", total, o_runs);
	report(cas, n, n, "lat_p50", "us", p50, o_runs);
	report(cas, n, n, "lat_p99", "us", p99, o_runs);
out:
	tcp_hello = 0;
	free(c);
	free(lat);
}

static volatile uintptr_t sink;
#ifdef CMBENCH_SOFTCM
static const int softcm_build = 1;
#else
static const int softcm_build;
#endif

/* Whether @ss is the server's address and port, as the client dialled it. */
static int is_server(const struct sockaddr *sa)
{
	const struct sockaddr_in *a = (const void *)sa, *b = (const void *)&dst;
	const struct sockaddr_in6 *a6 = (const void *)sa, *b6 = (const void *)&dst;

	if (!sa || sa->sa_family != dst.ss_family)
		return 0;
	if (sa->sa_family == AF_INET)
		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	return a6->sin6_port == b6->sin6_port &&
	       !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
}

static void wrong_peer(const char *call)
{
	fprintf(stderr, "cmbench: %s did not return the server's address\n", call);
	exit(2);
}

/*
 * The peer address of an established connection, asked @iters times, by
 * the system call (getpeername(2)) or ioctl (softcm_getpeername()) each
 * system offers, and by rdma-core's inline rdma_get_peer_addr(), which
 * reads the id's copy and makes no call at all (shown, never compared
 * with a system call).  Every answer must be the server's address: a
 * call that fills in nothing would be fast.
 */
static void peer_case(void)
{
	double v[MAX_RUNS], w[MAX_RUNS];
	struct sockaddr_storage ss;
	unsigned int run, k, iters = 1000000, sys_iters = 100000;
	struct conn c;
	socklen_t len;
	uint64_t t0;

	if (batch(&c, 1, 1, 0))
		return;
	both_est(&c, 0);
	if (!tcp_mode && !is_server(rdma_get_peer_addr(c.id)))
		wrong_peer("rdma_get_peer_addr");
	for (run = 0; run < o_runs; run++) {
		if (!tcp_mode && !softcm_build)
			goto inline_only;	/* librdmacm has no such call */
		t0 = now_ns();
		for (k = 0; k < sys_iters; k++) {
			len = sizeof(ss);
			memset(&ss, 0, sizeof(ss));
#ifdef CMBENCH_SOFTCM
			if (!tcp_mode && softcm_getpeername(c.id, (struct sockaddr *)&ss, &len))
				die("softcm_getpeername");
#endif
			if (tcp_mode && getpeername(c.fd, (struct sockaddr *)&ss, &len))
				die("getpeername");
			/* the copy is part of the cost: read what came back */
			sink += ((struct sockaddr_in *)&ss)->sin_port;
		}
		v[run] = (now_ns() - t0) / (double)sys_iters;
		if (!is_server((struct sockaddr *)&ss))
			wrong_peer(tcp_mode ? "getpeername" : "softcm_getpeername");
inline_only:
		if (tcp_mode)
			continue;
		t0 = now_ns();
		for (k = 0; k < iters; k++) {
			const struct sockaddr *sa = rdma_get_peer_addr(c.id);

			sink += ((const struct sockaddr_in *)sa)->sin_port;
			__asm__ __volatile__("" ::: "memory");
		}
		w[run] = (now_ns() - t0) / (double)iters;
	}
	if (tcp_mode)
		report("peeraddr", 1, 1, "getpeername", "ns", v, o_runs);
#ifdef CMBENCH_SOFTCM
	else
		report("peeraddr", 1, 1, "softcm_getpeername", "ns", v, o_runs);
#endif
	if (!tcp_mode)
		report("peeraddr", 1, 1, "rdma_get_peer_addr", "ns", w, o_runs);
	if (teardown(&c, 1, 0))
		destroy(&c, 1);
}

/* Address resolution with the neighbour flushed before each one. */
static void cold_case(void)
{
	double v[MAX_RUNS];
	unsigned int run, k, reps = 20;
	uint64_t t[20];
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	for (run = 0; run < o_runs; run++) {
		for (k = 0; k < reps; k++) {
			if (system("ip neigh flush all >/dev/null 2>&1"))
				fprintf(stderr, "cmbench: ip neigh flush failed\n");
			if (rdma_create_id(cli_ch, &id, NULL, RDMA_PS_TCP))
				die("rdma_create_id");
			t[k] = now_ns();
			if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 5000))
				die("rdma_resolve_addr");
			if (rdma_get_cm_event(cli_ch, &ev))
				die("rdma_get_cm_event");
			t[k] = now_ns() - t[k];
			if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
				fprintf(stderr, "cmbench: cold resolve: %s\n",
					rdma_event_str(ev->event));
				failed = 1;
			}
			rdma_ack_cm_event(ev);
			rdma_destroy_id(id);
		}
		v[run] = pct(t, reps, 50) / 1e3;
	}
	report("resolve_cold", reps, 1, "addr_p50", "us", v, o_runs);
}

/*
 * Scale: @live idle connections stay up while batches of 1000 are set up
 * and torn down; the rate beside the plain 1000 case shows O(n) costs.
 */
static const char *o_slabdir;

/* /proc/slabinfo into @o_slabdir/slab-@live.@when: which caches grow. */
static void slab_snapshot(unsigned int live, const char *when)
{
	char cmd[512];

	if (!o_slabdir)
		return;
	snprintf(cmd, sizeof(cmd), "cat /proc/slabinfo >%s/slab-%u.%s", o_slabdir, live, when);
	if (system(cmd))
		fprintf(stderr, "cmbench: %s failed\n", cmd);
}

static void scale_case(unsigned int live)
{
	double rate[MAX_RUNS], look[MAX_RUNS], mem;
	long before, after;
	struct conn *idle = calloc(live, sizeof(*idle)), *c = calloc(1000, sizeof(*c));
	struct sockaddr_storage ss;
	unsigned int run, i, n = 1000;
	uint64_t start, end, e, t0;
	socklen_t len;

	if (!idle || !c)
		die("calloc");
	slab_snapshot(live, "before");
	before = slab_kib();
	if (batch(idle, live, o_window, 0))
		goto out;
	for (i = 0; i < live; i++)
		both_est(&idle[i], i);
	after = slab_kib();
	slab_snapshot(live, "after");
	mem = (double)(after - before) * 1024 / live;
	for (run = 0; run < o_runs; run++) {
		if (batch(c, n, o_window, live))
			goto out;
		start = c[0].t_start;
		end = 0;
		for (i = 0; i < n; i++) {
			e = both_est(&c[i], live + i);
			end = e > end ? e : end;
		}
		rate[run] = n / ((end - start) / 1e9);
		/* The lookup of one id among all of them, through the kernel. */
		t0 = now_ns();
		for (i = 0; i < 100000; i++) {
			len = sizeof(ss);
#ifdef CMBENCH_SOFTCM
			if (!tcp_mode)
				softcm_getpeername(idle[i % live].id, (struct sockaddr *)&ss, &len);
#endif
			if (tcp_mode)
				getpeername(idle[i % live].fd, (struct sockaddr *)&ss, &len);
		}
		look[run] = (now_ns() - t0) / 1e5;
		if (!teardown(c, n, live))
			goto out;
		destroy(c, n);
	}
	report("scale", live, o_window, "rate", "conn/s", rate, o_runs);
	report("scale", live, o_window, "lookup", "ns", look, o_runs);
	/* One measurement, not o_runs: setting up @live is the costly part. */
	report("scale", live, o_window, "kmem_per_conn", "bytes", &mem, 1);
	if (teardown(idle, live, 0))
		destroy(idle, live);
out:
	free(idle);
	free(c);
}

static unsigned int o_burst;

static int client(const char *ns, const char *lives)
{
	char *list, *tok, *save;

	if (tcp_mode) {
		cli_ep = epoll_create1(0);
		if (cli_ep < 0)
			die("epoll_create1");
	} else {
		cli_ch = rdma_create_event_channel();
		if (!cli_ch)
			die("rdma_create_event_channel");
	}
	list = strdup(ns);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		setup_case("setup", atoi(tok), o_window);
	free(list);
	if (o_lat)
		setup_case("single", o_lat, 1);
	if (o_peer)
		peer_case();
	if (o_cold && !tcp_mode)
		cold_case();
	if (o_burst)
		burst_case(o_burst);
	if (lives) {
		list = strdup(lives);
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			scale_case(atoi(tok));
		free(list);
	}
	return failed;
}

int main(int argc, char **argv)
{
	const char *shm_path = NULL, *bind_addr = NULL, *ns = "1000", *lives = NULL;
	int opt, server;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: cmbench server|client [options]\n");
		return 2;
	}
	server = !strcmp(argv[1], "server");
	optind = 2;
	while ((opt = getopt(argc, argv, "t:a:b:p:s:S:T:n:w:r:l:L:cMPD:B:yeU:X")) != -1) {
		switch (opt) {
		case 't': tcp_mode = !strcmp(optarg, "tcp"); break;
		case 'a': o_addr = optarg; break;
		case 'b': bind_addr = optarg; break;
		case 'p': o_port = optarg; break;
		case 's': shm_path = optarg; break;
		case 'S': o_sys = optarg; break;
		case 'T': o_topo = optarg; break;
		case 'n': ns = optarg; break;
		case 'w': o_window = atoi(optarg); break;
		case 'r': o_runs = atoi(optarg); break;
		case 'l': o_lat = atoi(optarg); break;
		case 'L': lives = optarg; break;
		case 'c': o_cold = 1; break;
		case 'M': o_mem = 0; break;
		case 'P': o_peer = 0; break;
		case 'D': o_slabdir = optarg; break;
		case 'B': o_backlog = atoi(optarg); break;
		case 'y': o_server = 'y'; break;
		case 'e': o_server = 'e'; break;
		case 'U': o_burst = atoi(optarg); break;
#ifdef CMBENCH_SOFTCM
		case 'X': o_submit = 1; break;
#endif
		default: return 2;
		}
	}
	if (!shm_path || !(server ? bind_addr : o_addr)) {
		fprintf(stderr, "cmbench: -s SHM and -b ADDR (server) or -a ADDR (client)\n");
		return 2;
	}
	if (o_runs < 1 || o_runs > MAX_RUNS || o_window < 1) {
		fprintf(stderr, "cmbench: 1..%d runs, a window of at least 1\n", MAX_RUNS);
		return 2;
	}
	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	map_shared(shm_path, server);
	lookup(server ? bind_addr : o_addr, o_port);
	if (server)
		return tcp_mode ? tcp_server() : cm_server();
	return client(ns, lives);
}
