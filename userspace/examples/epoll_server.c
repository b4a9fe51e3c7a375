// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * An asynchronous RDMA CM server: one thread, one epoll set, any number
 * of clients at once.  The event channel's fd is non-blocking and sits in
 * the epoll set next to a signalfd; each wakeup drains every pending CM
 * event.  Clients are accepted with a reply in the private data, and
 * their ids destroyed once they disconnect.
 *
 *   epoll_server [-b ADDRESS] [-p PORT] [-n COUNT]
 *
 * With -n, exits after COUNT clients have come and gone; otherwise runs
 * until SIGINT or SIGTERM.
 *
 *   cc -o epoll_server epoll_server.c -lsoftcm    (or -lrdmacm)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <rdma/rdma_cma.h>

/* One client, in its id's context; the server keeps them on a list. */
struct conn {
	struct rdma_cm_id *id;
	struct conn *prev, *next;
	int n;
	int established;
	char peer[64];
};

struct server {
	struct rdma_event_channel *channel;
	struct rdma_cm_id *listen_id;
	struct conn conns;		/* list head */
	int requests;
	int served;			/* clients come and gone */
};

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

static struct conn *conn_new(struct server *s, struct rdma_cm_id *id)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id = id;
	c->n = ++s->requests;
	addr_str(rdma_get_peer_addr(id), c->peer, sizeof(c->peer));
	c->next = s->conns.next;
	c->prev = &s->conns;
	c->next->prev = c;
	s->conns.next = c;
	id->context = c;
	return c;
}

/* Every event of the id must have been acknowledged. */
static void conn_destroy(struct conn *c)
{
	c->prev->next = c->next;
	c->next->prev = c->prev;
	rdma_destroy_id(c->id);
	free(c);
}

/* A new client: accept it, with our reply as the private data. */
static int on_request(struct server *s, struct rdma_cm_event *event)
{
	const struct rdma_conn_param *req = &event->param.conn;
	struct rdma_conn_param param = { 0 };
	char reply[128];
	struct conn *c;

	c = conn_new(s, event->id);
	if (!c) {
		rdma_reject(event->id, NULL, 0);
		/* An id no conn owns: destroyed once the event is acked. */
		event->id->context = NULL;
		return -1;
	}
	printf("[%d] request from %s: %.*s\n", c->n, c->peer,
	       req->private_data ? (int)strnlen(req->private_data, req->private_data_len) : 0,
	       (const char *)req->private_data);

	snprintf(reply, sizeof(reply), "welcome, %s, you are client %d", c->peer, c->n);
	param.private_data = reply;
	param.private_data_len = strlen(reply) + 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.rnr_retry_count = 7;
	if (rdma_accept(c->id, &param)) {
		printf("[%d] rdma_accept: %s\n", c->n, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Returns nonzero when the event's id is finished with: the caller
 * destroys it after acknowledging the event, which rdma_destroy_id()
 * would otherwise wait for.
 */
static int on_event(struct server *s, struct rdma_cm_event *event)
{
	struct conn *c = event->id->context;

	switch (event->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return on_request(s, event);
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established = 1;
		printf("[%d] connected to %s\n", c->n, c->peer);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * The client's DREQ: answer it, then the id is done.  A client
		 * that hangs up at once may have its DREQ overtake its RTU:
		 * then there was no ESTABLISHED.
		 */
		rdma_disconnect(c->id);
		printf("[%d] disconnected from %s%s\n", c->n, c->peer,
		       c->established ? "" : " before its RTU");
		s->served++;
		return 1;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		printf("[%d] %s from %s (status %d)\n", c->n, rdma_event_str(event->event),
		       c->peer, event->status);
		s->served++;
		return 1;
	default:
		printf("unexpected %s\n", rdma_event_str(event->event));
		return 0;
	}
}

/* Every event pending on the channel; -1 on an error other than EAGAIN. */
static int drain_events(struct server *s)
{
	struct rdma_cm_event *event;
	struct rdma_cm_id *id;
	struct conn *c;
	int done;

	while (!rdma_get_cm_event(s->channel, &event)) {
		done = on_event(s, event);
		id = event->id;
		c = id->context;
		rdma_ack_cm_event(event);
		if (done && c)
			conn_destroy(c);
		else if (done)
			rdma_destroy_id(id);
	}
	if (errno != EAGAIN) {
		perror("rdma_get_cm_event");
		return -1;
	}
	fflush(stdout);
	return 0;
}

static int listen_on(struct server *s, const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { 0 }, *res;
	char local[64];
	int ret;

	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	ret = rdma_getaddrinfo(addr, port, &hints, &res);
	if (ret) {
		fprintf(stderr, "rdma_getaddrinfo: %s\n",
			ret == -1 ? strerror(errno) : gai_strerror(ret));
		return -1;
	}
	ret = rdma_create_id(s->channel, &s->listen_id, NULL, RDMA_PS_TCP);
	if (ret) {
		perror("rdma_create_id");
		goto out;
	}
	ret = rdma_bind_addr(s->listen_id, res->ai_src_addr);
	if (ret) {
		perror("rdma_bind_addr");
		goto out;
	}
	ret = rdma_listen(s->listen_id, 128);
	if (ret) {
		perror("rdma_listen");
		goto out;
	}
	printf("listening on %s\n", addr_str(rdma_get_local_addr(s->listen_id), local,
					     sizeof(local)));
	fflush(stdout);
out:
	rdma_freeaddrinfo(res);
	return ret;
}

int main(int argc, char **argv)
{
	struct server s = { .conns = { .prev = &s.conns, .next = &s.conns } };
	const char *addr = NULL, *port = "7471";
	struct epoll_event ev = { .events = EPOLLIN }, ready[2];
	int count = 0, ep = -1, sfd = -1, stop = 0, ret = 1, opt, i, n;
	struct signalfd_siginfo si;
	sigset_t mask;

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

	s.channel = rdma_create_event_channel();
	if (!s.channel) {
		perror("rdma_create_event_channel");
		return 1;
	}
	/* rdma_get_cm_event() then says EAGAIN instead of blocking. */
	if (fcntl(s.channel->fd, F_SETFL, fcntl(s.channel->fd, F_GETFL) | O_NONBLOCK)) {
		perror("fcntl");
		goto out;
	}
	if (listen_on(&s, addr, port))
		goto out;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0) {
		perror("signalfd/epoll_create1");
		goto out;
	}
	ev.data.fd = s.channel->fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, s.channel->fd, &ev))
		goto out;
	ev.data.fd = sfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev))
		goto out;

	while (!stop && (!count || s.served < count)) {
		n = epoll_wait(ep, ready, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("epoll_wait");
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (ready[i].data.fd == sfd) {
				if (read(sfd, &si, sizeof(si)) == sizeof(si))
					printf("signal %u: stopping\n", si.ssi_signo);
				stop = 1;
			} else if (drain_events(&s)) {
				goto out;
			}
		}
	}
	printf("served %d clients\n", s.served);
	ret = 0;
out:
	/* Whoever is still connected is cut off: destroying an id does that. */
	while (s.conns.next != &s.conns)
		conn_destroy(s.conns.next);
	if (s.listen_id)
		rdma_destroy_id(s.listen_id);
	rdma_destroy_event_channel(s.channel);
	if (ep >= 0)
		close(ep);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
