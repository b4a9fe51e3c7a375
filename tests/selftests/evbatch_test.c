// SPDX-License-Identifier: GPL-2.0
/*
 * libsoftcm's batched events: one read() of full records serves several
 * rdma_get_cm_event() calls, poll() sees what the library holds (the
 * shared page), and the records it holds follow their ids: dropped with a
 * destroyed id (a listener's buffered request taking its new id along),
 * moved with a migrated one, each to its own synchronous id (a synchronous
 * listener's new ids on channels of their own), once to one of several
 * threads.
 *
 * Events are made by resolving ids to the loopback: each id's state says
 * (QUERY_ID, under the same lock as the queueing) when its event is
 * queued, so a test knows what the kernel holds before the library reads.
 * A fresh file's handles are 1, 2, ... in the order its ids are created.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <sys/ioctl.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "softcm.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

#define WAIT_MS		20000
#define NR_IDS		7

static struct sockaddr_in sin4(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

/* Until the id @handle of @fd is in @state: 0, or -1 after WAIT_MS. */
static int wait_state(int fd, __u32 handle, __u32 state)
{
	long deadline = topo_now_ms() + WAIT_MS;
	struct softcm_query_id q = { .handle = handle };

	for (;;) {
		if (!ioctl(fd, SOFTCM_IOCTL_QUERY_ID, &q) && q.state == state)
			return 0;
		if (topo_now_ms() > deadline)
			return -1;
		usleep(2000);
	}
}

/*
 * A new id on @ch (handle @handle in its file) whose ADDR_RESOLVED is
 * queued in the kernel, unread.
 */
static int resolved_id(struct rdma_event_channel *ch, __u32 handle, struct rdma_cm_id **id)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);

	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(*id, NULL, (struct sockaddr *)&dst, 2000))
		return -1;
	return wait_state(ch->fd, handle, SOFTCM_STATE_ADDR_RESOLVED);
}

static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* The kernel has nothing queued: a raw read() of the O_NONBLOCK file. */
static int kernel_empty(int fd)
{
	struct softcm_event_full rec;

	return read(fd, &rec, sizeof(rec)) == -1 && errno == EAGAIN;
}

static int nonblock(int fd)
{
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static long long ids_here(void)
{
	int fd = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	long long n;

	if (fd < 0)
		return STATS_MISSING;
	n = stats_get(fd, "ids");
	close(fd);
	return n;
}

/* The index of @id in @ids, or -1. */
static int index_of(struct rdma_cm_id **ids, int n, struct rdma_cm_id *id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return i;
	return -1;
}

FIXTURE(ev) {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *ids[NR_IDS];
	int seen[NR_IDS];
};

FIXTURE_SETUP(ev)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	self->ch = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ch);
}

FIXTURE_TEARDOWN(ev)
{
	rdma_destroy_event_channel(self->ch);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * NR_IDS events queued; the first four calls read 1, 2 (one of them
 * served from the buffer) and 4 records, the buffer doubling each time a
 * read() fills it: after them the kernel's queue is empty and the library
 * holds the last three.  @self->seen counts each id's events handed out.
 */
static int queue_and_take_four(struct __test_metadata *_metadata, FIXTURE_DATA(ev) *self)
{
	struct rdma_cm_event *event;
	int i, k;

	for (i = 0; i < NR_IDS; i++)
		if (resolved_id(self->ch, i + 1, &self->ids[i]))
			return -1;
	if (nonblock(self->ch->fd))
		return -1;
	for (i = 0; i < 4; i++) {
		if (rdma_get_cm_event(self->ch, &event))
			return -1;
		EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
		k = index_of(self->ids, NR_IDS, event->id);
		EXPECT_LE(0, k);
		if (k >= 0)
			self->seen[k]++;
		/* The record's addresses, with no query of the kernel's. */
		EXPECT_EQ(AF_INET, rdma_get_local_addr(event->id)->sa_family);
		EXPECT_EQ(htons(7471), rdma_get_dst_port(event->id));
		rdma_ack_cm_event(event);
	}
	return 0;
}

/* Three events served after the kernel's queue is empty: from the buffer. */
TEST_F(ev, batch_served_from_one_read)
{
	struct rdma_cm_event *event;
	int i, k;

	ASSERT_EQ(0, queue_and_take_four(_metadata, self));
	EXPECT_TRUE(kernel_empty(self->ch->fd));
	for (i = 4; i < NR_IDS; i++) {
		ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
		EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
		k = index_of(self->ids, NR_IDS, event->id);
		ASSERT_LE(0, k);
		self->seen[k]++;
		rdma_ack_cm_event(event);
	}
	for (i = 0; i < NR_IDS; i++)
		EXPECT_EQ(1, self->seen[i]);
	/* O_NONBLOCK: EAGAIN once nothing is held and the kernel has nothing. */
	EXPECT_EQ(-1, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(EAGAIN, errno);
	for (i = 0; i < NR_IDS; i++)
		EXPECT_EQ(0, rdma_destroy_id(self->ids[i]));
}

/*
 * An application that polls, gets one event and polls again does not
 * hang while the library holds events the kernel no longer has.
 */
TEST_F(ev, poll_sees_held_events)
{
	struct rdma_cm_event *event;
	int i;

	ASSERT_EQ(0, queue_and_take_four(_metadata, self));
	EXPECT_TRUE(kernel_empty(self->ch->fd));
	for (i = 4; i < NR_IDS; i++) {
		ASSERT_TRUE(readable(self->ch->fd, WAIT_MS));
		ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
		rdma_ack_cm_event(event);
	}
	/* Nothing held, nothing queued: not readable. */
	EXPECT_FALSE(readable(self->ch->fd, 0));
	for (i = 0; i < NR_IDS; i++)
		EXPECT_EQ(0, rdma_destroy_id(self->ids[i]));
}

/*
 * Destroying ids whose events the library holds, unread: no wait for
 * them (they count as given back), and they are never handed out.
 */
TEST_F(ev, destroy_drops_held_events)
{
	struct rdma_cm_event *event;
	int i;

	ASSERT_EQ(0, queue_and_take_four(_metadata, self));
	for (i = 0; i < NR_IDS; i++)
		if (!self->seen[i])
			EXPECT_EQ(0, rdma_destroy_id(self->ids[i]));
	EXPECT_EQ(-1, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_FALSE(readable(self->ch->fd, 0));
	for (i = 0; i < NR_IDS; i++)
		if (self->seen[i])
			EXPECT_EQ(0, rdma_destroy_id(self->ids[i]));
}

/*
 * A listener destroyed while the library holds one of its requests: the
 * request's new id goes too, in the kernel, with the file still open.
 */
TEST_F(ev, destroy_listener_drops_held_request)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 20301);
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *listen, *warm, *client[2], *req;
	struct rdma_event_channel *cch;
	struct rdma_cm_event *event;
	long long ids;
	int i;

	cch = rdma_create_event_channel();
	ASSERT_NE(NULL, cch);
	/* One event read alone makes the buffer hold two. */
	ASSERT_EQ(0, resolved_id(self->ch, 1, &warm));
	ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
	rdma_ack_cm_event(event);
	ASSERT_EQ(0, rdma_create_id(self->ch, &listen, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(listen, (struct sockaddr *)&sin));
	ASSERT_EQ(0, rdma_listen(listen, 4));

	ids = ids_here();
	ASSERT_NE(STATS_MISSING, ids);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rdma_create_id(cch, &client[i], NULL, RDMA_PS_TCP));
		ASSERT_EQ(0, rdma_resolve_addr(client[i], NULL, (struct sockaddr *)&sin, 2000));
		ASSERT_TRUE(readable(cch->fd, WAIT_MS));
		ASSERT_EQ(0, rdma_get_cm_event(cch, &event));
		ASSERT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
		rdma_ack_cm_event(event);
		ASSERT_EQ(0, rdma_resolve_route(client[i], 2000));
		ASSERT_TRUE(readable(cch->fd, WAIT_MS));
		ASSERT_EQ(0, rdma_get_cm_event(cch, &event));
		ASSERT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, event->event);
		rdma_ack_cm_event(event);
		ASSERT_EQ(0, rdma_connect(client[i], &param));
	}
	/* Both requests' new ids exist: both requests are queued. */
	ASSERT_EQ(0, stats_wait_eq_here("ids", ids + 4, WAIT_MS));

	ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, event->event);
	req = event->id;
	rdma_ack_cm_event(event);
	EXPECT_EQ(0, rdma_destroy_id(req));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	EXPECT_EQ(0, rdma_destroy_id(warm));
	/* Left: the two clients, for warm and listen; no orphan of the held request. */
	EXPECT_EQ(0, stats_wait_eq_here("ids", ids, WAIT_MS));
	EXPECT_FALSE(readable(self->ch->fd, 0));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, rdma_destroy_id(client[i]));
	rdma_destroy_event_channel(cch);
}

/*
 * Migrating an id whose two events the library holds: they come, in
 * order, on the new channel (which poll() sees readable), not on the old;
 * and the migration does not wait for them to be acknowledged.
 */
TEST_F(ev, migrate_moves_held_events)
{
	struct rdma_cm_id *w[4], *m;
	struct rdma_event_channel *ch2;
	struct rdma_cm_event *event;
	int i;

	ch2 = rdma_create_event_channel();
	ASSERT_NE(NULL, ch2);
	ASSERT_EQ(0, nonblock(self->ch->fd));
	ASSERT_EQ(0, nonblock(ch2->fd));
	/* Reads of 1, then 2: the buffer holds 4 after. */
	ASSERT_EQ(0, resolved_id(self->ch, 1, &w[0]));
	ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
	rdma_ack_cm_event(event);
	ASSERT_EQ(0, resolved_id(self->ch, 2, &w[1]));
	ASSERT_EQ(0, resolved_id(self->ch, 3, &w[2]));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
		rdma_ack_cm_event(event);
	}
	/* w[3]'s event, then m's two. */
	ASSERT_EQ(0, resolved_id(self->ch, 4, &w[3]));
	ASSERT_EQ(0, resolved_id(self->ch, 5, &m));
	ASSERT_EQ(0, rdma_resolve_route(m, 2000));
	ASSERT_EQ(0, wait_state(self->ch->fd, 5, SOFTCM_STATE_ROUTE_RESOLVED));
	ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(w[3], event->id);
	rdma_ack_cm_event(event);
	EXPECT_TRUE(kernel_empty(self->ch->fd));

	ASSERT_EQ(0, rdma_migrate_id(m, ch2));
	EXPECT_EQ(-1, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_FALSE(readable(self->ch->fd, 0));
	ASSERT_TRUE(readable(ch2->fd, WAIT_MS));
	ASSERT_EQ(0, rdma_get_cm_event(ch2, &event));
	EXPECT_EQ(m, event->id);
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	rdma_ack_cm_event(event);
	ASSERT_TRUE(readable(ch2->fd, WAIT_MS));
	ASSERT_EQ(0, rdma_get_cm_event(ch2, &event));
	EXPECT_EQ(m, event->id);
	EXPECT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, event->event);
	EXPECT_EQ(1, m->route.num_paths);
	rdma_ack_cm_event(event);
	EXPECT_EQ(-1, rdma_get_cm_event(ch2, &event));
	EXPECT_EQ(EAGAIN, errno);

	EXPECT_EQ(0, rdma_destroy_id(m));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, rdma_destroy_id(w[i]));
	rdma_destroy_event_channel(ch2);
}

struct reader {
	struct rdma_event_channel *ch;
	int *taken;		/* total, atomic */
	int total;
	struct rdma_cm_id *got[32];
	int n;
};

static void *read_until_all_taken(void *p)
{
	struct reader *r = p;
	struct rdma_cm_event *event;

	while (__atomic_load_n(r->taken, __ATOMIC_SEQ_CST) < r->total) {
		if (rdma_get_cm_event(r->ch, &event)) {
			if (errno != EAGAIN)
				break;
			continue;
		}
		if (r->n < 32)
			r->got[r->n] = event->id;
		r->n++;
		__atomic_add_fetch(r->taken, 1, __ATOMIC_SEQ_CST);
		rdma_ack_cm_event(event);
	}
	return NULL;
}

struct one_reader {
	struct rdma_event_channel *ch;
	pid_t tid;
};

static void *get_one_event(void *arg)
{
	struct one_reader *r = arg;
	struct rdma_cm_event *event;

	__atomic_store_n(&r->tid, gettid(), __ATOMIC_RELEASE);
	if (!rdma_get_cm_event(r->ch, &event))
		rdma_ack_cm_event(event);
	return NULL;
}

/*
 * A thread cancelled while it sleeps in rdma_get_cm_event()'s read() on
 * an empty channel (seen asleep there in its /proc syscall and state
 * before the cancel): the cancel ends the read(), and the channel still
 * serves events and its ids can be destroyed.  A reader that left its
 * reading set would make the next call wait for ever (bounded by
 * alarm()).
 */
TEST_F(ev, cancelled_reader_gives_the_channel_back)
{
	struct one_reader r = { .ch = self->ch };
	struct rdma_cm_event *event;
	struct rdma_cm_id *id;
	struct timespec ts;
	pid_t tid = 0;
	pthread_t th;
	void *ret;
	int joined;

	ASSERT_EQ(0, pthread_create(&th, NULL, get_one_event, &r));
	for (long end = topo_now_ms() + WAIT_MS; !tid && topo_now_ms() < end; usleep(1000))
		tid = __atomic_load_n(&r.tid, __ATOMIC_ACQUIRE);
	EXPECT_NE(0, tid);
	EXPECT_EQ(0, task_wait_asleep_in(getpid(), tid, SYS_read, WAIT_MS))
		TH_LOG("the reader never slept in read()");
	ASSERT_EQ(0, pthread_cancel(th));
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	joined = pthread_timedjoin_np(th, &ret, &ts);
	ASSERT_EQ(0, joined) TH_LOG("the cancel did not end the reader's read()");
	EXPECT_EQ(PTHREAD_CANCELED, ret);

	alarm(WAIT_MS / 1000);
	ASSERT_EQ(0, nonblock(self->ch->fd));
	EXPECT_EQ(-1, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, resolved_id(self->ch, 1, &id));
	ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	EXPECT_EQ(id, event->id);
	rdma_ack_cm_event(event);
	EXPECT_EQ(0, rdma_destroy_id(id));
	alarm(0);
}

/* Two threads reading one channel get every event exactly once. */
TEST_F(ev, two_threads_one_channel)
{
	struct rdma_cm_id *ids[16];
	struct reader r[2] = { 0 };
	pthread_t th[2];
	int taken = 0, i, j, k, seen[16] = { 0 };

	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, resolved_id(self->ch, i + 1, &ids[i]));
	ASSERT_EQ(0, nonblock(self->ch->fd));
	for (i = 0; i < 2; i++) {
		r[i].ch = self->ch;
		r[i].taken = &taken;
		r[i].total = 16;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, read_until_all_taken, &r[i]));
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	EXPECT_EQ(16, r[0].n + r[1].n);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < r[i].n && j < 32; j++) {
			k = index_of(ids, 16, r[i].got[j]);
			ASSERT_LE(0, k);
			seen[k]++;
		}
	}
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(1, seen[i]);
		EXPECT_EQ(0, rdma_destroy_id(ids[i]));
	}
}

/*
 * The library's read(), interposed: armed on one fd, the first read()
 * there that returns records stops after the kernel counted them as read,
 * before the library has seen them, until the test lets it go: a reader
 * whose records of an id come back after that id migrated (they are
 * forwarded).  The real read() keeps its cancellation point.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd;			/* armed on, or -1 */
	int reached, released;
} hook = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, 0, 0 };

ssize_t read(int fd, void *buf, size_t len)
{
	static ssize_t (*real)(int, void *, size_t);
	ssize_t n;

	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	n = real(fd, buf, len);
	if (n <= 0 || fd != __atomic_load_n(&hook.fd, __ATOMIC_ACQUIRE))
		return n;
	pthread_mutex_lock(&hook.lock);
	if (hook.fd == fd) {
		hook.fd = -1;
		hook.reached = 1;
		pthread_cond_broadcast(&hook.cond);
		while (!hook.released)
			pthread_cond_wait(&hook.cond, &hook.lock);
	}
	pthread_mutex_unlock(&hook.lock);
	return n;
}

static void hook_arm(int fd)
{
	pthread_mutex_lock(&hook.lock);
	hook.reached = 0;
	hook.released = 0;
	__atomic_store_n(&hook.fd, fd, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hook.lock);
}

static int hook_wait_reached(void)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&hook.lock);
	while (!hook.reached && !ret)
		ret = pthread_cond_timedwait(&hook.cond, &hook.lock, &ts);
	pthread_mutex_unlock(&hook.lock);
	return ret;
}

static void hook_release(void)
{
	pthread_mutex_lock(&hook.lock);
	hook.released = 1;
	pthread_cond_broadcast(&hook.cond);
	pthread_mutex_unlock(&hook.lock);
}

static void *release_later(void *arg)
{
	usleep(300 * 1000);
	hook_release();
	return NULL;
}

struct migrator {
	struct rdma_cm_id *id;
	struct rdma_event_channel *to;
	int ret;
};

static void *migrate(void *arg)
{
	struct migrator *m = arg;

	m->ret = rdma_migrate_id(m->id, m->to);
	return NULL;
}

/* Until @id is on @ch: the kernel moved it (MIGRATE_ID returned). */
static int wait_moved(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	long deadline = topo_now_ms() + WAIT_MS;

	while (__atomic_load_n(&id->channel, __ATOMIC_ACQUIRE) != ch) {
		if (topo_now_ms() > deadline)
			return -1;
		usleep(1000);
	}
	return 0;
}

/*
 * The forwarded-records race (review R5): a reader of the old channel
 * holds the id's ADDR_RESOLVED, read before the migration and not yet
 * seen by the library, while the id migrates; the id's newer
 * ROUTE_RESOLVED is queued on the new channel.  There, ADDR_RESOLVED
 * still comes first: the newer record waits for it.
 */
TEST_F(ev, migrate_forwarded_record_comes_first)
{
	struct one_reader r = { .ch = self->ch };
	struct migrator m = { 0 };
	struct rdma_event_channel *ch2;
	struct rdma_cm_event *event;
	pthread_t rth, mth, lth;
	struct rdma_cm_id *id;

	ch2 = rdma_create_event_channel();
	ASSERT_NE(NULL, ch2);
	ASSERT_EQ(0, resolved_id(self->ch, 1, &id));
	hook_arm(self->ch->fd);
	ASSERT_EQ(0, pthread_create(&rth, NULL, get_one_event, &r));
	ASSERT_EQ(0, hook_wait_reached()) TH_LOG("the reader never read the record");
	m.id = id;
	m.to = ch2;
	ASSERT_EQ(0, pthread_create(&mth, NULL, migrate, &m));
	ASSERT_EQ(0, wait_moved(id, ch2));
	alarm(3 * WAIT_MS / 1000);
	ASSERT_EQ(0, rdma_resolve_route(id, 2000));
	ASSERT_EQ(0, wait_state(ch2->fd, 1, SOFTCM_STATE_ROUTE_RESOLVED));
	ASSERT_EQ(0, pthread_create(&lth, NULL, release_later, NULL));
	ASSERT_EQ(0, rdma_get_cm_event(ch2, &event));
	EXPECT_EQ(id, event->id);
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	rdma_ack_cm_event(event);
	ASSERT_EQ(0, rdma_get_cm_event(ch2, &event));
	EXPECT_EQ(id, event->id);
	EXPECT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, event->event);
	rdma_ack_cm_event(event);
	ASSERT_EQ(0, pthread_join(lth, NULL));
	ASSERT_EQ(0, pthread_join(mth, NULL));
	EXPECT_EQ(0, m.ret);
	/* The old channel's reader sleeps in read(), with nothing of the id. */
	ASSERT_EQ(0, pthread_cancel(rth));
	ASSERT_EQ(0, pthread_join(rth, NULL));
	alarm(0);
	EXPECT_EQ(0, rdma_destroy_id(id));
	rdma_destroy_event_channel(ch2);
}

#define POLL_S		4

struct poller {
	int fd;
	pid_t tid;
	int ret;
	short revents;
	long ms;		/* how long it slept */
};

static void *poll_once(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	struct timespec ts = { .tv_sec = POLL_S };
	long start = topo_now_ms();

	__atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
	p->ret = ppoll(&pfd, 1, &ts, NULL);
	p->ms = topo_now_ms() - start;
	p->revents = pfd.revents;
	return NULL;
}

/*
 * The same race: a thread already asleep in poll() on the new channel
 * when the forwarded record arrives is woken for it, well before its
 * timeout (at which poll() would look again and see the record anyway).
 */
TEST_F(ev, migrate_forwarded_record_wakes_pollers)
{
	struct one_reader r = { .ch = self->ch };
	struct migrator m = { 0 };
	struct poller p = { 0 };
	struct rdma_event_channel *ch2;
	struct rdma_cm_event *event;
	pthread_t rth, mth, pth;
	struct rdma_cm_id *id;
	pid_t tid = 0;

	ch2 = rdma_create_event_channel();
	ASSERT_NE(NULL, ch2);
	ASSERT_EQ(0, resolved_id(self->ch, 1, &id));
	hook_arm(self->ch->fd);
	ASSERT_EQ(0, pthread_create(&rth, NULL, get_one_event, &r));
	ASSERT_EQ(0, hook_wait_reached()) TH_LOG("the reader never read the record");
	m.id = id;
	m.to = ch2;
	ASSERT_EQ(0, pthread_create(&mth, NULL, migrate, &m));
	ASSERT_EQ(0, wait_moved(id, ch2));
	alarm(3 * WAIT_MS / 1000);
	p.fd = ch2->fd;
	ASSERT_EQ(0, pthread_create(&pth, NULL, poll_once, &p));
	for (long end = topo_now_ms() + WAIT_MS; !tid && topo_now_ms() < end; usleep(1000))
		tid = __atomic_load_n(&p.tid, __ATOMIC_ACQUIRE);
	ASSERT_NE(0, tid);
	ASSERT_EQ(0, task_wait_asleep_in(getpid(), tid, SYS_ppoll, WAIT_MS))
		TH_LOG("the poller never slept in ppoll()");
	hook_release();
	ASSERT_EQ(0, pthread_join(pth, NULL));
	EXPECT_EQ(1, p.ret);
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_GT((POLL_S - 1) * 1000, p.ms)
		TH_LOG("the poller slept %ld ms: not woken for the forwarded record", p.ms);
	ASSERT_EQ(0, pthread_join(mth, NULL));
	EXPECT_EQ(0, m.ret);
	ASSERT_EQ(0, nonblock(ch2->fd));
	ASSERT_EQ(0, rdma_get_cm_event(ch2, &event));
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	rdma_ack_cm_event(event);
	ASSERT_EQ(0, pthread_cancel(rth));
	ASSERT_EQ(0, pthread_join(rth, NULL));
	alarm(0);
	EXPECT_EQ(0, rdma_destroy_id(id));
	rdma_destroy_event_channel(ch2);
}

struct sync_client {
	struct sockaddr_in dst;
	struct rdma_cm_id *id;
	int ret;
};

/* A synchronous active side: connect, and the RTU once the REP came. */
static void *sync_connect(void *p)
{
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct sync_client *c = p;

	c->ret = -1;
	if (rdma_create_id(NULL, &c->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&c->dst, 2000) ||
	    rdma_resolve_route(c->id, 2000) || rdma_connect(c->id, &param) ||
	    rdma_establish(c->id))
		return NULL;
	c->ret = 0;
	return NULL;
}

struct acceptor {
	struct rdma_cm_id *id;
	int ret;
	enum rdma_cm_event_type event;
	struct rdma_cm_id *event_id;
};

static void *sync_accept(void *p)
{
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct acceptor *a = p;

	a->ret = rdma_accept(a->id, &param);
	if (!a->ret && a->id->event) {
		a->event = a->id->event->event;
		a->event_id = a->id->event->id;
	}
	return NULL;
}

/*
 * A synchronous listener's new ids each get a private channel of their
 * own, as librdmacm's (review R2): O_NONBLOCK on the listener's fd is not
 * theirs; two accepted at once, on two threads, each return on their own
 * ESTABLISHED.
 */
TEST(sync_requests_get_channels_of_their_own)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 20302);
	struct sync_client c[2] = { { .dst = sin }, { .dst = sin } };
	struct acceptor a[2] = { 0 };
	struct rdma_cm_id *listen;
	pthread_t cth[2], ath[2];
	int i;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_create_id(NULL, &listen, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(listen, (struct sockaddr *)&sin));
	ASSERT_EQ(0, rdma_listen(listen, 4));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&cth[i], NULL, sync_connect, &c[i]));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rdma_get_request(listen, &a[i].id));
		EXPECT_NE(listen->channel, a[i].id->channel);
		EXPECT_NE(listen->channel->fd, a[i].id->channel->fd);
		EXPECT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, a[i].id->event->event);
	}
	EXPECT_NE(a[0].id->channel->fd, a[1].id->channel->fd);
	ASSERT_EQ(0, nonblock(listen->channel->fd));
	for (i = 0; i < 2; i++)
		EXPECT_FALSE(fcntl(a[i].id->channel->fd, F_GETFL) & O_NONBLOCK);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&ath[i], NULL, sync_accept, &a[i]));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(ath[i], NULL));
		EXPECT_EQ(0, a[i].ret);
		EXPECT_EQ(RDMA_CM_EVENT_ESTABLISHED, a[i].event);
		EXPECT_EQ(a[i].id, a[i].event_id);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(cth[i], NULL));
		EXPECT_EQ(0, c[i].ret);
	}
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, rdma_destroy_id(a[i].id));
		EXPECT_EQ(0, rdma_destroy_id(c[i].id));
	}
	EXPECT_EQ(0, rdma_destroy_id(listen));
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST_HARNESS_MAIN
