// SPDX-License-Identifier: GPL-2.0
/*
 * BATCH (many id commands in one system call), the source RESOLVE_ADDR
 * returns, and libsoftcm's softcm_submit() on top of them: each test in a
 * network namespace of its own, connections over its loopback.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <rdma/rdma_cma.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "softcm.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "ioctl_count.h"


static void calls_reset(void)
{
	memset(ncalls, 0, sizeof(ncalls));
}

/* This thread's softcm ioctls since calls_reset(), and its BATCHes. */
static unsigned int calls_all(void)
{
	unsigned int n = 0;

	for (int i = 0; i < 256; i++)
		n += ncalls[i];
	return n;
}

static unsigned int calls_batch(void)
{
	return ncalls[SOFTCM_CMD_BATCH];
}

static int own_netns(void)
{
	if (softcm_ensure_loaded() || unshare(CLONE_NEWNET))
		return -1;
	return lo_up() ? -1 : 0;
}

static struct sockaddr_in sin4(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

static int batch(int fd, struct softcm_batch_op *ops, __u32 count, __u32 *done)
{
	struct softcm_batch b = { .count = count, .ops = (__u64)(uintptr_t)ops };

	if (ioctl(fd, SOFTCM_IOCTL_BATCH, &b))
		return -errno;
	*done = b.done;
	return 0;
}

static struct softcm_batch_op op(unsigned long cmd, void *arg)
{
	struct softcm_batch_op o = { .cmd = cmd, .result = 12345, .arg = (__u64)(uintptr_t)arg };

	return o;
}

/*
 * Each op runs as its own ioctl, in order; a failing one stops nothing.
 * The order shows in a fresh file, whose first id is handle 1: a batch
 * that creates it, then binds, listens on and queries handle 1 succeeds
 * only op after op (run the other way round, all but the CREATE_ID are
 * ENOENT).
 */
TEST(batch_runs_each_op)
{
	struct softcm_create_id c1 = { .uid = 1, .ps = SOFTCM_PS_TCP };
	struct softcm_create_id c2 = { .uid = 2, .ps = SOFTCM_PS_UDP };
	struct softcm_create_id bad = { .uid = 3, .ps = 77 };
	struct softcm_destroy_id d = { .handle = 0x7fffffff };
	struct softcm_create_id c3 = { .uid = 4, .ps = SOFTCM_PS_TCP };
	struct softcm_bind b = { .handle = 1, .addr_len = sizeof(struct sockaddr_in) };
	struct softcm_listen l = { .handle = 1, .backlog = 1 };
	struct softcm_query_id q3 = { .handle = 1 };
	struct sockaddr_in sin = sin4("127.0.0.1", 7472);
	struct softcm_batch_op ops[4];
	struct softcm_query_id q;
	__u32 done = 0;
	int fd, fd2;

	ASSERT_EQ(0, own_netns());
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ops[0] = op(SOFTCM_IOCTL_CREATE_ID, &c1);
	ops[1] = op(SOFTCM_IOCTL_DESTROY_ID, &d);
	ops[2] = op(SOFTCM_IOCTL_CREATE_ID, &bad);
	ops[3] = op(SOFTCM_IOCTL_CREATE_ID, &c2);
	ASSERT_EQ(0, batch(fd, ops, 4, &done));
	EXPECT_EQ(4, done);
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(-ENOENT, ops[1].result);
	EXPECT_EQ(-EINVAL, ops[2].result);
	EXPECT_EQ(0, ops[3].result);
	EXPECT_NE(c1.handle, c2.handle);
	ASSERT_EQ(0, query_id(fd, c1.handle, &q));
	EXPECT_EQ(SOFTCM_PS_TCP, q.ps);
	ASSERT_EQ(0, query_id(fd, c2.handle, &q));
	EXPECT_EQ(SOFTCM_PS_UDP, q.ps);
	EXPECT_EQ(0, stats_wait_eq_here("ids", 2, 1000));

	fd2 = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	memcpy(b.addr, &sin, sizeof(sin));
	ops[0] = op(SOFTCM_IOCTL_CREATE_ID, &c3);
	ops[1] = op(SOFTCM_IOCTL_BIND, &b);
	ops[2] = op(SOFTCM_IOCTL_LISTEN, &l);
	ops[3] = op(SOFTCM_IOCTL_QUERY_ID, &q3);
	ASSERT_EQ(0, batch(fd2, ops, 4, &done));
	EXPECT_EQ(4, done);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(0, ops[i].result) TH_LOG("op %d", i);
	}
	EXPECT_EQ(1, c3.handle);
	EXPECT_EQ(SOFTCM_STATE_LISTEN, q3.state);
	EXPECT_EQ(1, q3.backlog);
	close(fd2);
	close(fd);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/* What a batch refuses, as a whole or op by op. */
TEST(batch_refuses)
{
	struct softcm_create_id c = { .uid = 1, .ps = SOFTCM_PS_TCP };
	struct softcm_query_device qd = { 0 };
	struct softcm_batch nested = { 0 };
	struct softcm_batch_op ops[6];
	struct softcm_batch b = { 0 };
	__u32 done = 0;
	int fd;

	ASSERT_EQ(0, own_netns());
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ops[0] = op(SOFTCM_IOCTL_CREATE_ID, &c);
	EXPECT_EQ(-EINVAL, batch(fd, ops, 0, &done));
	EXPECT_EQ(-EINVAL, batch(fd, ops, SOFTCM_BATCH_MAX + 1, &done));
	EXPECT_EQ(-EFAULT, batch(fd, NULL, 1, &done));
	b.count = 1;
	b.ops = (__u64)(uintptr_t)ops;
	b.done = 99;
	/* a reserved-free struct: nothing else to refuse; done is out only */
	ASSERT_EQ(0, ioctl(fd, SOFTCM_IOCTL_BATCH, &b));
	EXPECT_EQ(1, b.done);

	nested.count = 1;
	nested.ops = (__u64)(uintptr_t)&ops[5];
	ops[0] = op(SOFTCM_IOCTL_BATCH, &nested);
	ops[1] = op(SOFTCM_IOCTL_QUERY_DEVICE, &qd);	/* a verbs command */
	ops[2] = op(_IOWR(SOFTCM_IOCTL_TYPE, 0x3f, struct softcm_destroy_id), &c);
	ops[3] = op(SOFTCM_IOCTL_CREATE_ID, NULL);	/* its argument faults */
	ops[4] = op(SOFTCM_IOCTL_CREATE_ID, &c);	/* and the next one runs */
	ops[5] = op(SOFTCM_IOCTL_CREATE_ID, &c);
	ASSERT_EQ(0, batch(fd, ops, 5, &done));
	EXPECT_EQ(5, done);
	EXPECT_EQ(-EINVAL, ops[0].result);
	EXPECT_EQ(12345, ops[5].result);		/* the nested batch never ran */
	EXPECT_EQ(-ENOTTY, ops[1].result);
	EXPECT_EQ(-ENOTTY, ops[2].result);
	EXPECT_EQ(-EFAULT, ops[3].result);
	EXPECT_EQ(0, ops[4].result);
	close(fd);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * A CREATE_ID whose new handle cannot be written back is undone inside a
 * batch as it is alone: the id is gone, and the op says EFAULT.
 */
TEST(batch_undoes_unwritable_create)
{
	struct softcm_create_id *ro;
	struct softcm_batch_op ops[1];
	__u32 done = 0;
	int fd;

	ASSERT_EQ(0, own_netns());
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ro->uid = 1;
	ro->ps = SOFTCM_PS_TCP;
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	ops[0] = op(SOFTCM_IOCTL_CREATE_ID, ro);
	ASSERT_EQ(0, batch(fd, ops, 1, &done));
	EXPECT_EQ(1, done);
	EXPECT_EQ(-EFAULT, ops[0].result);
	EXPECT_EQ(0, stats_wait_eq_here("ids", 0, 1000));
	close(fd);
	munmap(ro, 4096);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * A struct softcm_batch that cannot be written back (review 2026-11-28
 * #7): EFAULT before any op ran, not after all of them, whose done count
 * nobody could read.  Here: no id created, no op's result written.
 */
TEST(batch_unwritable_struct_runs_nothing)
{
	struct softcm_create_id ids[4] = { 0 };
	struct softcm_batch_op ops[4];
	struct softcm_batch *ro;
	int fd;

	ASSERT_EQ(0, own_netns());
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 4; i++) {
		ids[i].uid = i + 1;
		ids[i].ps = SOFTCM_PS_TCP;
		ops[i] = op(SOFTCM_IOCTL_CREATE_ID, &ids[i]);
	}
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ro->count = 4;
	ro->ops = (__u64)(uintptr_t)ops;
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	EXPECT_EQ(-1, ioctl(fd, SOFTCM_IOCTL_BATCH, ro));
	EXPECT_EQ(EFAULT, errno);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(12345, ops[i].result) TH_LOG("op %d ran", i);
		EXPECT_EQ(0, ids[i].handle);
	}
	EXPECT_EQ(0, stats_wait_eq_here("ids", 0, 0));
	close(fd);
	munmap(ro, 4096);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * RESOLVE_ADDR returns the source it bound the id to: the address
 * given (or the wildcard), with the port picked, which QUERY_ADDR shows
 * too (the resolution may already have filled in the address by then).
 */
TEST(resolve_addr_returns_source)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471), src = sin4("127.0.0.1", 0);
	struct sockaddr_in *back, got;
	struct softcm_resolve_addr c = { 0 };
	__u32 len = sizeof(got);
	__u32 handle, i;
	int fd;

	ASSERT_EQ(0, own_netns());
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, 1, &handle));
		memset(&c, 0, sizeof(c));
		c.handle = handle;
		c.timeout_ms = 2000;
		c.dst_len = sizeof(dst);
		memcpy(c.dst, &dst, sizeof(dst));
		if (i) {
			c.src_len = sizeof(src);
			memcpy(c.src, &src, sizeof(src));
		}
		ASSERT_EQ(0, ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c));
		ASSERT_EQ(sizeof(struct sockaddr_in), c.local_len);
		back = (struct sockaddr_in *)c.local;
		EXPECT_EQ(AF_INET, back->sin_family);
		EXPECT_NE(0, back->sin_port);
		EXPECT_EQ(i ? htonl(INADDR_LOOPBACK) : htonl(INADDR_ANY), back->sin_addr.s_addr);
		ASSERT_EQ(0, query_addr(fd, handle, SOFTCM_QUERY_LOCAL, &got, &len));
		EXPECT_EQ(got.sin_port, back->sin_port);
	}
	/* a caller of the first, shorter struct: accepted, told nothing more */
	ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, 1, &handle));
	memset(&c, 0, sizeof(c));
	c.handle = handle;
	c.timeout_ms = 2000;
	c.dst_len = sizeof(dst);
	memcpy(c.dst, &dst, sizeof(dst));
	c.local_len = 12345;
	ASSERT_EQ(0, ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SOFTCM_IOCTL_TYPE,
				    SOFTCM_CMD_RESOLVE_ADDR,
				    offsetof(struct softcm_resolve_addr, local_len)), &c));
	EXPECT_EQ(12345, c.local_len);
	close(fd);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/* softcm_submit() of @ops, with the ioctls it made: its BATCHes, all. */
static int submit_counted(struct softcm_op *ops, int n, unsigned int *batches,
			  unsigned int *all)
{
	int ret;

	calls_reset();
	ret = softcm_submit(ops, n);
	*batches = calls_batch();
	*all = calls_all();
	return ret;
}

/* The next event of @ch, acknowledged; its type, or -1. */
static int next_type(struct rdma_event_channel *ch, struct rdma_cm_id **id, int *status)
{
	struct rdma_cm_event *ev;
	int type;

	if (rdma_get_cm_event(ch, &ev))
		return -1;
	type = ev->event;
	if (id)
		*id = ev->id;
	if (status)
		*status = ev->status;
	rdma_ack_cm_event(ev);
	return type;
}

struct server {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	int want, established, failed;
	struct rdma_cm_id *ids[256];
	int nids;
};

/* Accepts requests until @want connections are established. */
static void *serve(void *arg)
{
	struct server *s = arg;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };

	while (s->established < s->want && !s->failed) {
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(s->ch, &ev)) {
			s->failed = errno;
			break;
		}
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST: {
			struct softcm_op op = { .code = SOFTCM_OP_ACCEPT, .id = ev->id,
						.conn_param = &p };

			unsigned int nb, na;

			p.qp_num = 100 + s->nids;
			s->ids[s->nids++] = ev->id;
			if (submit_counted(&op, 1, &nb, &na) != 1)
				s->failed = op.err ? op.err : errno;
			else if (nb != 1 || na != 1)	/* the ACCEPT went as one BATCH */
				s->failed = 2000 + na;
			break;
		}
		case RDMA_CM_EVENT_ESTABLISHED:
			s->established++;
			break;
		default:
			s->failed = 1000 + ev->event;
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return NULL;
}

#define NCONN	64

/*
 * Create, resolve and connect NCONN ids with one softcm_submit() per
 * step: every op succeeds and every connection is established, and each
 * step, the NCONN ops of one channel, is one BATCH and no other ioctl.
 */
TEST(submit_connects_many)
{
	struct sockaddr_in any = sin4("127.0.0.1", 0), dst = sin4("127.0.0.1", 0);
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7, .qp_num = 42 };
	static struct softcm_op ops[NCONN];
	struct rdma_event_channel *ch;
	struct server s = { .want = NCONN };
	struct rdma_cm_id *id;
	unsigned int nb, na;
	pthread_t thr;
	int i, n, status;

	ASSERT_EQ(0, own_netns());
	s.ch = rdma_create_event_channel();
	ch = rdma_create_event_channel();
	ASSERT_NE(NULL, s.ch);
	ASSERT_NE(NULL, ch);
	ASSERT_EQ(0, rdma_create_id(s.ch, &s.listen, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(s.listen, (struct sockaddr *)&any));
	ASSERT_EQ(0, rdma_listen(s.listen, NCONN));
	dst.sin_port = rdma_get_src_port(s.listen);
	ASSERT_EQ(0, pthread_create(&thr, NULL, serve, &s));

	for (i = 0; i < NCONN; i++)
		ops[i] = (struct softcm_op){ .code = SOFTCM_OP_CREATE_ID, .channel = ch,
					     .context = &ops[i], .ps = RDMA_PS_TCP };
	ASSERT_EQ(NCONN, submit_counted(ops, NCONN, &nb, &na));
	EXPECT_EQ(1, nb);
	EXPECT_EQ(1, na);
	for (i = 0; i < NCONN; i++) {
		ASSERT_EQ(0, ops[i].err);
		ASSERT_NE(NULL, ops[i].id);
		EXPECT_EQ(&ops[i], ops[i].id->context);
		ops[i].code = SOFTCM_OP_RESOLVE_ADDR;
		ops[i].dst_addr = (struct sockaddr *)&dst;
		ops[i].timeout_ms = 2000;
	}
	ASSERT_EQ(NCONN, submit_counted(ops, NCONN, &nb, &na));
	EXPECT_EQ(1, nb);
	EXPECT_EQ(1, na);
	/* the source each command bound, as rdma_resolve_addr() leaves it */
	EXPECT_EQ(AF_INET, rdma_get_local_addr(ops[0].id)->sa_family);
	EXPECT_NE(0, rdma_get_src_port(ops[0].id));
	EXPECT_EQ(dst.sin_port, rdma_get_dst_port(ops[0].id));
	for (n = 0; n < NCONN; n++)
		ASSERT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, next_type(ch, NULL, NULL));
	for (i = 0; i < NCONN; i++)
		ops[i].code = SOFTCM_OP_RESOLVE_ROUTE;
	ASSERT_EQ(NCONN, submit_counted(ops, NCONN, &nb, &na));
	EXPECT_EQ(1, nb);
	EXPECT_EQ(1, na);
	for (n = 0; n < NCONN; n++)
		ASSERT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, next_type(ch, NULL, NULL));
	for (i = 0; i < NCONN; i++) {
		ops[i].code = SOFTCM_OP_CONNECT;
		ops[i].conn_param = &p;
	}
	ASSERT_EQ(NCONN, submit_counted(ops, NCONN, &nb, &na));
	EXPECT_EQ(1, nb);
	EXPECT_EQ(1, na);
	for (n = 0; n < NCONN; n++) {
		ASSERT_EQ(RDMA_CM_EVENT_CONNECT_RESPONSE, next_type(ch, &id, &status));
		ASSERT_EQ(0, status);
		ops[n].code = SOFTCM_OP_ESTABLISH;
		ops[n].id = id;
	}
	ASSERT_EQ(NCONN, submit_counted(ops, NCONN, &nb, &na));
	EXPECT_EQ(1, nb);
	EXPECT_EQ(1, na);
	pthread_join(thr, NULL);
	EXPECT_EQ(0, s.failed);
	EXPECT_EQ(NCONN, s.established);

	/* ESTABLISH named the ids in the order of their responses */
	for (i = 0; i < NCONN; i++)
		ops[i].code = SOFTCM_OP_DISCONNECT;
	ASSERT_EQ(NCONN, submit_counted(ops, NCONN, &nb, &na));
	EXPECT_EQ(1, nb);
	EXPECT_EQ(1, na);
	/*
	 * The server answers each DREQ as an application does, with its own
	 * rdma_disconnect(): left unanswered, every DREQ would run through
	 * its retransmissions (about 100 s) before the client saw its end.
	 */
	for (n = 0; n < NCONN; n++) {
		ASSERT_EQ(RDMA_CM_EVENT_DISCONNECTED, next_type(s.ch, &id, NULL));
		EXPECT_EQ(0, rdma_disconnect(id));
	}
	for (n = 0; n < NCONN; n++)
		ASSERT_EQ(RDMA_CM_EVENT_DISCONNECTED, next_type(ch, NULL, NULL));
	for (i = 0; i < NCONN; i++)
		EXPECT_EQ(0, rdma_destroy_id(ops[i].id));
	for (i = 0; i < s.nids; i++)
		EXPECT_EQ(0, rdma_destroy_id(s.ids[i]));
	EXPECT_EQ(0, rdma_destroy_id(s.listen));
	rdma_destroy_event_channel(ch);
	rdma_destroy_event_channel(s.ch);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * Each op answers for itself, as its call would: bad ops fail alone,
 * synchronous ids are refused, and ops of two channels interleaved go
 * down in a call per channel, each id landing on its own channel.
 */
TEST(submit_reports_each_op)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);
	struct rdma_event_channel *a, *b;
	struct rdma_cm_id *sync_id;
	struct softcm_op ops[8];
	unsigned int nb, na;
	int i;

	ASSERT_EQ(0, own_netns());
	a = rdma_create_event_channel();
	b = rdma_create_event_channel();
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, rdma_create_id(NULL, &sync_id, NULL, RDMA_PS_TCP));

	EXPECT_EQ(-1, submit_counted(NULL, 1, &nb, &na));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, na);
	EXPECT_EQ(-1, submit_counted(ops, 0, &nb, &na));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, na);

	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 4; i++) {
		ops[i].code = SOFTCM_OP_CREATE_ID;
		ops[i].channel = i % 2 ? b : a;
		ops[i].ps = RDMA_PS_TCP;
	}
	ops[4] = (struct softcm_op){ .code = SOFTCM_OP_CREATE_ID, .ps = RDMA_PS_TCP };
	ops[5] = (struct softcm_op){ .code = SOFTCM_OP_CREATE_ID, .channel = a, .ps = 99 };
	ops[6] = (struct softcm_op){ .code = SOFTCM_OP_RESOLVE_ROUTE, .id = sync_id,
				     .timeout_ms = 100 };
	ops[7] = (struct softcm_op){ .code = 77, .id = sync_id };
	EXPECT_EQ(4, submit_counted(ops, 8, &nb, &na));
	/* a BATCH per channel; the ops refused in the library reach no ioctl */
	EXPECT_EQ(2, nb);
	EXPECT_EQ(2, na);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, ops[i].err);
		EXPECT_EQ(i % 2 ? b : a, ops[i].id->channel);
	}
	for (i = 4; i < 8; i++)
		EXPECT_EQ(EINVAL, ops[i].err);

	/* the kernel's own refusals come back per op */
	ops[4] = (struct softcm_op){ .code = SOFTCM_OP_RESOLVE_ROUTE, .id = ops[0].id,
				     .timeout_ms = 100 };		/* IDLE: EINVAL */
	ops[5] = (struct softcm_op){ .code = SOFTCM_OP_RESOLVE_ADDR, .id = ops[1].id,
				     .dst_addr = (struct sockaddr *)&dst, .timeout_ms = 100 };
	ops[6] = (struct softcm_op){ .code = SOFTCM_OP_DISCONNECT, .id = ops[2].id };
	ops[7] = (struct softcm_op){ .code = SOFTCM_OP_ESTABLISH, .id = ops[3].id };
	EXPECT_EQ(1, submit_counted(&ops[4], 4, &nb, &na));
	EXPECT_EQ(2, nb);
	EXPECT_EQ(2, na);
	EXPECT_EQ(EINVAL, ops[4].err);
	EXPECT_EQ(0, ops[5].err);
	EXPECT_EQ(EINVAL, ops[6].err);
	EXPECT_EQ(EINVAL, ops[7].err);
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, next_type(b, NULL, NULL));

	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, rdma_destroy_id(ops[i].id));
	EXPECT_EQ(0, rdma_destroy_id(sync_id));
	rdma_destroy_event_channel(a);
	rdma_destroy_event_channel(b);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

#define NCHUNK	1100	/* more ops than one BATCH takes */

/*
 * More ops than one BATCH takes, most on one channel, a few of another
 * channel among them: a BATCH per SOFTCM_BATCH_MAX ops of a channel
 * (two for the first, one for the other), and the ops of a channel in
 * their order, within a BATCH and from one BATCH to the next.  That order
 * shows in two RESOLVE_ADDRs of one id, each to another port: only the
 * first can succeed (the id is no longer bound after it), so the first
 * in the array must be the one that succeeds, and the id's destination
 * its port.  One pair is inside the first BATCH, the other straddles the
 * first BATCH's end.
 */
TEST(submit_chunks_in_channel_order)
{
	struct sockaddr_in dst[2] = { sin4("127.0.0.1", 7481), sin4("127.0.0.1", 7482) };
	static struct softcm_op ops[NCHUNK];
	struct rdma_event_channel *a, *b;
	struct rdma_cm_id *pair[2], *id;
	int i, k = 0, seen[2] = { 0 };
	int at[2][2], n[2] = { 0 };	/* where each pair's ops are in @ops */
	unsigned int nb, na;

	ASSERT_EQ(0, own_netns());
	a = rdma_create_event_channel();
	b = rdma_create_event_channel();
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, rdma_create_id(a, &pair[i], NULL, RDMA_PS_TCP));

	/* channel a's ops k = 5, 6 and 1023, 1024 are the pairs (0-based) */
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < NCHUNK; i++) {
		int j = k == 5 || k == 6 ? 0 : k == SOFTCM_BATCH_MAX - 1 ||
			k == SOFTCM_BATCH_MAX ? 1 : -1;

		if (i % 100 == 50) {
			ops[i] = (struct softcm_op){ .code = SOFTCM_OP_CREATE_ID, .channel = b,
						     .ps = RDMA_PS_TCP };
			continue;
		}
		if (j < 0) {
			ops[i] = (struct softcm_op){ .code = SOFTCM_OP_CREATE_ID, .channel = a,
						     .ps = RDMA_PS_TCP };
		} else {
			ops[i] = (struct softcm_op){ .code = SOFTCM_OP_RESOLVE_ADDR, .id = pair[j],
						     .dst_addr = (struct sockaddr *)&dst[n[j]],
						     .timeout_ms = 2000 };
			at[j][n[j]++] = i;
		}
		k++;
	}
	ASSERT_LT(SOFTCM_BATCH_MAX, k);
	ASSERT_GT(2 * SOFTCM_BATCH_MAX, k);
	ASSERT_EQ(2, n[0]);
	ASSERT_EQ(2, n[1]);

	EXPECT_EQ(NCHUNK - 2, submit_counted(ops, NCHUNK, &nb, &na));
	EXPECT_EQ(3, nb);
	EXPECT_EQ(3, na);
	for (int j = 0; j < 2; j++) {
		EXPECT_EQ(0, ops[at[j][0]].err) TH_LOG("pair %d", j);
		EXPECT_EQ(EINVAL, ops[at[j][1]].err) TH_LOG("pair %d", j);
		EXPECT_EQ(dst[0].sin_port, rdma_get_dst_port(pair[j])) TH_LOG("pair %d", j);
	}
	for (i = 0; i < NCHUNK; i++) {
		if (ops[i].code != SOFTCM_OP_CREATE_ID)
			continue;
		ASSERT_EQ(0, ops[i].err) TH_LOG("op %d", i);
		EXPECT_EQ(ops[i].channel, ops[i].id->channel);
	}
	/* one resolution each, on their channel */
	for (i = 0; i < 2; i++) {
		int status;

		ASSERT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, next_type(a, &id, &status));
		EXPECT_EQ(0, status);
		seen[id == pair[1]]++;
	}
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);

	for (i = 0; i < NCHUNK; i++)
		if (ops[i].code == SOFTCM_OP_CREATE_ID)
			EXPECT_EQ(0, rdma_destroy_id(ops[i].id));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, rdma_destroy_id(pair[i]));
	rdma_destroy_event_channel(a);
	rdma_destroy_event_channel(b);
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST_HARNESS_MAIN
