// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRATE_ID and the life of a connection request's new id.
 *
 * A CONNECT_REQUEST owns the id it announces until it is read: that id is
 * in no handle table before (it cannot be guessed, migrated or destroyed
 * by handle), it moves with its listener's events, and it is named by a
 * handle of the file that reads it.  A reader whose buffer faults for ever
 * stalls nobody else: neither a destroy of its own listener nor another
 * connection in the namespace.
 *
 * The server side speaks the raw ioctls (handles are what matters here);
 * the clients are librdmacm ids in the same namespace, over 127.0.0.1.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "ioctl_helpers.h"

#define NS	"sc-mig"
#define PORT	19600
#define EV_MS	20000

static int ev_ms(void)
{
	return EV_MS << softcm_slow_shift();
}

static int open_dev(void)
{
	return open("/dev/softcm", O_RDWR | O_CLOEXEC);
}

/* A listener on 127.0.0.1:@port in file @fd; its handle, or -errno. */
static int listen_on(int fd, unsigned short port, __u32 *h)
{
	struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct softcm_listen l = { .backlog = 8 };
	int ret = create_id(fd, SOFTCM_PS_TCP, 0x11, h);

	if (ret)
		return ret;
	b.handle = *h;
	memcpy(b.addr, &sin, sizeof(sin));
	if (ioctl(fd, SOFTCM_IOCTL_BIND, &b))
		return -errno;
	l.handle = *h;
	return ioctl(fd, SOFTCM_IOCTL_LISTEN, &l) ? -errno : 0;
}

static int migrate(int to, int from, __u32 handle, __u32 *out)
{
	struct softcm_migrate_id m = { .fd = from, .handle = handle };

	if (ioctl(to, SOFTCM_IOCTL_MIGRATE_ID, &m))
		return -errno;
	*out = m.handle;
	return 0;
}

static int accept_id(int fd, __u32 h)
{
	struct softcm_accept a = { .uid = 0x22, .handle = h };

	a.param.qp_num = 0x4321;
	a.param.responder_resources = 1;
	a.param.initiator_depth = 1;
	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &a) ? -errno : 0;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* The next event on @ch within the bound: its type, or -1. */
static int next_cm_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *e;
	int type;

	if (!readable(ch->fd, ev_ms()) || rdma_get_cm_event(ch, &e))
		return -1;
	type = e->event;
	rdma_ack_cm_event(e);
	return type;
}

/* A client id on @ch connecting to 127.0.0.1:@port (the REQ is sent). */
static int client_connect(struct rdma_event_channel *ch, unsigned short port,
			  struct rdma_cm_id **id)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .qp_num = 0x1234 };

	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(*id, NULL, (struct sockaddr *)&dst, 2000) ||
	    next_cm_event(ch) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(*id, 2000) ||
	    next_cm_event(ch) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -1;
	return rdma_connect(*id, &p);
}

FIXTURE(mig) {
	int home, ns, stats;
	/* one channel per client: their events must not interleave */
	struct rdma_event_channel *ch, *ch2, *ch3;
	struct rdma_cm_id *client, *client2, *client3;
};

FIXTURE_SETUP(mig)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, netns_fresh(NS));
	self->home = netns_self();
	self->ns = netns_open(NS);
	ASSERT_LE(0, self->home);
	ASSERT_LE(0, self->ns);
	self->stats = stats_open(self->ns, self->home);
	ASSERT_LE(0, self->stats);
	/* This test's threads all live in the namespace. */
	ASSERT_EQ(0, netns_enter(self->ns));
	self->ch = rdma_create_event_channel();
	self->ch2 = rdma_create_event_channel();
	self->ch3 = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ch);
	ASSERT_NE(NULL, self->ch2);
	ASSERT_NE(NULL, self->ch3);
}

FIXTURE_TEARDOWN(mig)
{
	struct rdma_cm_id *ids[] = { self->client, self->client2, self->client3 };

	for (unsigned int i = 0; i < 3; i++)
		if (ids[i])
			rdma_destroy_id(ids[i]);
	if (self->ch)
		rdma_destroy_event_channel(self->ch);
	if (self->ch2)
		rdma_destroy_event_channel(self->ch2);
	if (self->ch3)
		rdma_destroy_event_channel(self->ch3);
	/* Everything of ours goes: connections (timewait included), ids, files. */
	EXPECT_EQ(0, stats_wait_idle(self->stats, 60000 << softcm_slow_shift()));
	netns_enter(self->home);
	if (netns_del(NS))
		TH_LOG("namespace already gone");
}

/*
 * A1, the unannounced id: its handle cannot be guessed, so it cannot be
 * migrated to a file that is then closed while its CONNECT_REQUEST still
 * points at it (a use-after-free of that file when the listener goes).
 */
TEST_F(mig, unread_request_id_cannot_be_migrated)
{
	int a = open_dev(), b = open_dev();
	__u32 l, h, g;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, listen_on(a, PORT, &l));
	ASSERT_EQ(0, client_connect(self->ch, PORT, &self->client));
	ASSERT_TRUE(readable(a, ev_ms()));

	/* The handles after the listener's: none names the new id. */
	for (g = l + 1; g < l + 8; g++) {
		EXPECT_EQ(-ENOENT, migrate(b, a, g, &h)) {
			TH_LOG("handle %u", g);
		}
	}
	close(b);
	/* The listener goes, its unread request with it: the client is refused. */
	ASSERT_EQ(0, destroy_id(a, l, NULL));
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, next_cm_event(self->ch));
	close(a);
}

/*
 * A listener on file @a with the client's request unread, then migrated
 * to file @b as @l2: 0, or the step that failed (negative).
 */
static int listener_with_request_moved(FIXTURE_DATA(mig) *self, int a, int b, __u32 *l2)
{
	__u32 l;

	if (a < 0 || b < 0)
		return -1;
	if (listen_on(a, PORT, &l) || client_connect(self->ch, PORT, &self->client))
		return -2;
	if (!readable(a, ev_ms()))
		return -3;
	return migrate(b, a, l, l2);
}

/*
 * A1, the listener: migrating it takes its unread requests and their ids
 * along, so closing the old file leaves them alone, and destroying the
 * listener afterwards frees them (and refuses the client).
 */
TEST_F(mig, listener_migration_then_old_file_closed)
{
	int a = open_dev(), b = open_dev();
	struct softcm_event ev;
	__u32 l2 = 0;

	ASSERT_EQ(0, listener_with_request_moved(self, a, b, &l2));
	/* The request moved with its listener: nothing is left in the old file. */
	EXPECT_FALSE(readable(a, 0));
	EXPECT_TRUE(readable(b, 0));
	close(a);
	/* Closing the old file ended nothing: both ends are still there. */
	EXPECT_EQ(2, stats_get(self->stats, "connections"));
	ASSERT_EQ(0, destroy_id(b, l2, NULL));
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, next_cm_event(self->ch));
	/* The request died with its listener: nothing to read. */
	EXPECT_EQ(-ETIME, next_event(b, &ev, 0));
	close(b);
}

/*
 * A5: after a listener's migration, its CONNECT_REQUEST read on the new
 * file names the new id (not the listener), an id of that file that
 * ACCEPT accepts, even once the old file is closed.
 */
TEST_F(mig, migrated_request_names_its_new_id)
{
	int a = open_dev(), b = open_dev();
	struct softcm_event ev;
	__u32 l2 = 0;

	ASSERT_EQ(0, listener_with_request_moved(self, a, b, &l2));
	close(a);

	ASSERT_EQ(0, next_event(b, &ev, ev_ms()));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	EXPECT_EQ(0x11, ev.uid);		/* the listener's */
	EXPECT_NE(l2, ev.handle);
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(b, ev.handle));
	EXPECT_EQ(SOFTCM_STATE_LISTEN, state_of(b, l2));
	ASSERT_EQ(0, accept_id(b, ev.handle));
	/* No QP: CONNECT_RESPONSE, and rdma_establish() sends the RTU. */
	EXPECT_EQ(RDMA_CM_EVENT_CONNECT_RESPONSE, next_cm_event(self->ch));
	EXPECT_EQ(0, rdma_establish(self->client));
	ASSERT_EQ(0, next_event(b, &ev, ev_ms()));
	EXPECT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	EXPECT_EQ(0x22, ev.uid);
	close(b);
}

/* A read() whose buffer is a userfaultfd page nobody resolves, yet. */
struct stalled_read {
	int fd;
	void *buf;
	ssize_t ret;
	int err;
};

static void *stalled_reader(void *arg)
{
	struct stalled_read *r = arg;

	r->ret = read(r->fd, r->buf, sizeof(struct softcm_event));
	r->err = errno;
	return NULL;
}

struct destroyer {
	int fd;
	__u32 handle;
	int ret;
	volatile bool done;
};

static void *destroy_thread(void *arg)
{
	struct destroyer *d = arg;

	d->ret = destroy_id(d->fd, d->handle, NULL);
	d->done = true;
	return NULL;
}

/*
 * A6: a reader stuck in the copy of a CONNECT_REQUEST (its buffer faults
 * and the fault is not resolved) must not stall the destroy of that
 * listener, nor, through the namespace's one receive work, a request to
 * it and an unrelated connection.
 */
TEST_F(mig, stalled_reader_stalls_nobody_else)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct stalled_read r = { .ret = -2 };
	struct destroyer d = { 0 };
	struct softcm_event ev;
	struct uffd_msg msg;
	pthread_t reader, killer;
	int a = open_dev(), c = open_dev(), uffd;
	long deadline;
	__u32 l = 0, l2 = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, c);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(close(a); close(c); return, "no userfaultfd in this kernel (%s)",
		     strerror(errno));
	ASSERT_LE(0, uffd);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	r.buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.buf);
	reg.range.start = (unsigned long)r.buf;
	reg.range.len = 4096;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	ASSERT_EQ(0, listen_on(a, PORT, &l));
	ASSERT_EQ(0, listen_on(c, PORT + 1, &l2));
	ASSERT_EQ(0, client_connect(self->ch, PORT, &self->client));
	ASSERT_TRUE(readable(a, ev_ms()));

	/* The reader is in its copy once its fault reaches us. */
	ASSERT_EQ(0, fcntl(a, F_SETFL, O_NONBLOCK));
	r.fd = a;
	ASSERT_EQ(0, pthread_create(&reader, NULL, stalled_reader, &r));
	ASSERT_TRUE(readable(uffd, ev_ms()));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	/* Destroy the listener meanwhile, from another thread. */
	d.fd = a;
	d.handle = l;
	ASSERT_EQ(0, pthread_create(&killer, NULL, destroy_thread, &d));
	/* A request to it (the receive work meets it), then an unrelated one. */
	ASSERT_EQ(0, client_connect(self->ch3, PORT, &self->client3));
	ASSERT_EQ(0, client_connect(self->ch2, PORT + 1, &self->client2));
	EXPECT_TRUE(readable(c, ev_ms()));
	deadline = topo_now_ms() + ev_ms();
	while (!d.done && topo_now_ms() < deadline)
		usleep(10000);
	EXPECT_TRUE(d.done);
	/* the unrelated request came and is accepted */
	ev.event = 0;
	EXPECT_EQ(0, next_event(c, &ev, 0));
	EXPECT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	if (ev.event == SOFTCM_EVENT_CONNECT_REQUEST) {
		EXPECT_EQ(0, accept_id(c, ev.handle));
		EXPECT_EQ(RDMA_CM_EVENT_CONNECT_RESPONSE, next_cm_event(self->ch2));
		EXPECT_EQ(0, rdma_establish(self->client2));
	}

	/* Let the reader go: the copy completes, everything unwinds. */
	{
		struct uffdio_zeropage z = { .range = { .start = (unsigned long)r.buf,
							.len = 4096 } };

		ioctl(uffd, UFFDIO_ZEROPAGE, &z);
	}
	pthread_join(reader, NULL);
	pthread_join(killer, NULL);
	EXPECT_EQ(0, d.ret);
	/*
	 * The listener was destroyed during the copy: its request is not
	 * returned (nothing of an id is once DESTROY_ID has returned), and
	 * nothing else is queued.
	 */
	EXPECT_EQ(-1, r.ret);
	EXPECT_EQ(EAGAIN, r.err);
	/*
	 * The request to the listener being destroyed was refused, whether
	 * it found the listener (its unread request goes with it) or not.
	 */
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, next_cm_event(self->ch3));
	close(a);
	close(c);
	close(uffd);
	munmap(r.buf, 4096);
}

/*
 * An event that a reader of the old file had taken when its id migrated
 * goes back before the id's later events on the new file, not behind
 * them (review 2026-11-28 #3): the reader of file a stalls in the copy of
 * an id's ESTABLISHED; its DISCONNECTED comes, the id moves to file b,
 * the copy completes (revoked: not counted as read); b reads ESTABLISHED,
 * then DISCONNECTED.
 */
TEST_F(mig, revoked_read_keeps_order)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage z;
	struct stalled_read r = { .ret = -2 };
	struct softcm_event ev;
	struct uffd_msg msg;
	pthread_t reader;
	int a = open_dev(), b = open_dev(), uffd;
	__u32 l = 0, x, nx = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(close(a); close(b); return, "no userfaultfd in this kernel (%s)",
		     strerror(errno));
	ASSERT_LE(0, uffd);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	r.buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.buf);
	reg.range.start = (unsigned long)r.buf;
	reg.range.len = 4096;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	/* An established connection; its ESTABLISHED unread on a. */
	ASSERT_EQ(0, listen_on(a, PORT, &l));
	ASSERT_EQ(0, client_connect(self->ch, PORT, &self->client));
	ASSERT_EQ(0, next_event(a, &ev, ev_ms()));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	x = ev.handle;
	ASSERT_EQ(0, accept_id(a, x));
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_RESPONSE, next_cm_event(self->ch));
	ASSERT_EQ(0, rdma_establish(self->client));
	ASSERT_TRUE(readable(a, ev_ms()));

	/* The reader takes ESTABLISHED and stalls in its copy. */
	ASSERT_EQ(0, fcntl(a, F_SETFL, O_NONBLOCK));
	r.fd = a;
	ASSERT_EQ(0, pthread_create(&reader, NULL, stalled_reader, &r));
	ASSERT_TRUE(readable(uffd, ev_ms()));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	/*
	 * The peer disconnects (its DREQ waits for our DREP, which only our
	 * own DISCONNECT sends); the id moves to b, where its DISCONNECTED
	 * is, moved along or queued there after.
	 */
	ASSERT_EQ(0, rdma_disconnect(self->client));
	ASSERT_EQ(0, migrate(b, a, x, &nx));
	ASSERT_TRUE(readable(b, ev_ms()));

	/* The copy completes: revoked, the entry goes back to b. */
	z.range.start = (unsigned long)r.buf;
	z.range.len = 4096;
	z.mode = 0;
	ioctl(uffd, UFFDIO_ZEROPAGE, &z);
	pthread_join(reader, NULL);
	EXPECT_EQ(-1, r.ret);
	EXPECT_EQ(EAGAIN, r.err);

	ASSERT_EQ(0, next_event(b, &ev, ev_ms()));
	EXPECT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	EXPECT_EQ(nx, ev.handle);
	ASSERT_EQ(0, next_event(b, &ev, ev_ms()));
	EXPECT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	EXPECT_EQ(nx, ev.handle);
	EXPECT_EQ(0, destroy_id(b, nx, NULL));
	EXPECT_EQ(0, destroy_id(a, l, NULL));
	close(a);
	close(b);
	close(uffd);
	munmap(r.buf, 4096);
}

TEST_HARNESS_MAIN
