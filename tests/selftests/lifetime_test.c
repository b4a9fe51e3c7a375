// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetimes a data path relies on (Documentation/design.rst, "The packet
 * path"), by raw ioctls and the rings: a QP destroyed while work is
 * outstanding on it, then its CQs, then its PD, each answering as
 * libibverbs programs expect (EBUSY while used, 0 once the user is gone,
 * no completion for what the destroyed QP held); DEREG_MR while a posted
 * send names the region's lkey, and while other threads register,
 * deregister and post; a QP destroyed while other threads post, ring its
 * doorbell, move and poll it.  On the debug kernel KASAN and lockdep must
 * stay silent.  Each test runs in a namespace of its own, whose gauges it
 * checks at the end.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "verbs_helpers.h"

/* libibverbs' values the helpers lack. */
enum { SEND_SIGNALED = 2 };

#define WAIT_MS		20000
#define WR		16	/* each queue's depth */
#define BUF_PAGES	4
#define THREADS		3
#define ROUNDS		20
#define CALLS_BEFORE	100	/* each thread's calls before a destroy comes */

/* A file's PD, MR over buf, two CQs and an RC QP whose rings are mapped. */
struct objs {
	int fd;
	__u32 pd, mr, scq, rcq;
	__u32 lkey;
	struct softcm_create_qp q;
	unsigned char *buf;
	void *um;		/* the QP's upage, send and receive queues */
};

static int make_mr(struct objs *o)
{
	struct softcm_reg_mr m = {
		.addr = (uintptr_t)o->buf, .length = BUF_PAGES * getpagesize(),
		.iova = (uintptr_t)o->buf, .pd_handle = o->pd, .access = ACCESS_LOCAL_WRITE,
	};
	int ret = vioctl(o->fd, SOFTCM_IOCTL_REG_MR, &m);

	o->mr = m.handle;
	o->lkey = m.lkey;
	return ret;
}

static int make_qp(struct objs *o)
{
	int ret;

	memset(&o->q, 0, sizeof(o->q));
	o->q.pd_handle = o->pd;
	o->q.send_cq_handle = o->scq;
	o->q.recv_cq_handle = o->rcq;
	o->q.qp_type = QPT_RC;
	o->q.cap = (struct softcm_qp_cap){ .max_send_wr = WR, .max_recv_wr = WR,
					    .max_send_sge = 1, .max_recv_sge = 1 };
	ret = vioctl(o->fd, SOFTCM_IOCTL_CREATE_QP, &o->q);
	if (ret)
		return ret;
	o->um = mmap(NULL, o->q.umap.size, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd,
		     o->q.umap.offset);
	return o->um == MAP_FAILED ? -errno : 0;
}

static int make_objs(struct objs *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (o->fd < 0)
		return -errno;
	o->buf = mmap(NULL, BUF_PAGES * getpagesize(), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (o->buf == MAP_FAILED)
		return -errno;
	memset(o->buf, 0x5a, BUF_PAGES * getpagesize());
	return alloc_pd(o->fd, &o->pd) ?: make_mr(o) ?:
	       create_cq(o->fd, 4 * WR, -1, 0, &o->scq) ?:
	       create_cq(o->fd, 4 * WR, -1, 0, &o->rcq) ?: make_qp(o);
}

static void free_objs(struct objs *o)
{
	if (o->um && o->um != MAP_FAILED)
		munmap(o->um, o->q.umap.size);
	munmap(o->buf, BUF_PAGES * getpagesize());
	close(o->fd);
}

static __u32 *upage_word(struct objs *o, size_t off)
{
	return (__u32 *)((char *)o->um + off);
}

/*
 * Write send @i (wr_id 1000 + i, one SGE of the MR) into the send queue
 * and publish it, with no doorbell: it is posted and not taken.
 */
static void sq_post(struct objs *o, __u32 i)
{
	char *slot = (char *)o->um + o->q.sq.offset +
		     (size_t)(i & (o->q.sq.entries - 1)) * o->q.sq.stride;
	struct softcm_sq_wqe *w = (struct softcm_sq_wqe *)slot;
	struct softcm_sge *sge = (struct softcm_sge *)(w + 1);

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = 1000 + i;
	w->wr.opcode = WR_SEND;
	w->wr.send_flags = SEND_SIGNALED;
	w->wr.num_sge = 1;
	sge->addr = (uintptr_t)o->buf + 64 * i;
	sge->length = 64;
	sge->lkey = o->lkey;
	__atomic_store_n(upage_word(o, offsetof(struct softcm_qp_upage, sq_prod)), i + 1,
			 __ATOMIC_RELEASE);
}

/* The same for receive @i (wr_id 2000 + i). */
static void rq_post(struct objs *o, __u32 i)
{
	char *slot = (char *)o->um + o->q.rq.offset +
		     (size_t)(i & (o->q.rq.entries - 1)) * o->q.rq.stride;
	struct softcm_rq_wqe *w = (struct softcm_rq_wqe *)slot;
	struct softcm_sge *sge = (struct softcm_sge *)(w + 1);

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = 2000 + i;
	w->wr.num_sge = 1;
	sge->addr = (uintptr_t)o->buf + BUF_PAGES * getpagesize() / 2 + 64 * i;
	sge->length = 64;
	sge->lkey = o->lkey;
	__atomic_store_n(upage_word(o, offsetof(struct softcm_qp_upage, rq_prod)), i + 1,
			 __ATOMIC_RELEASE);
}

FIXTURE(lifetime) {
	int dummy;
};

FIXTURE_SETUP(lifetime)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, lo_up());
}

FIXTURE_TEARDOWN(lifetime)
{
	EXPECT_EQ(0, stats_wait_eq_here("qps", 0, WAIT_MS));
	EXPECT_EQ(0, stats_wait_eq_here("cqs", 0, WAIT_MS));
	EXPECT_EQ(0, stats_wait_eq_here("uobjs", 0, WAIT_MS));
}

/*
 * RTS with 8 sends and 8 receives posted and not taken: the CQs and the
 * PD are EBUSY while the QP uses them; once DESTROY_QP returns, the QP's
 * work is gone without a completion (nobody polls for it: verbs.rst), and
 * the CQs, then the PD, go as soon as they are asked to.
 */
TEST_F(lifetime, destroy_qp_then_cqs_then_pd_with_work_outstanding)
{
	struct softcm_wc wc[WR];
	struct objs o;
	__u32 i;

	ASSERT_EQ(0, make_objs(&o));
	ASSERT_EQ(0, rc_to_rts(o.fd, o.q.handle));
	for (i = 0; i < 8; i++) {
		sq_post(&o, i);
		rq_post(&o, i);
	}
	EXPECT_EQ(-EBUSY, destroy_cq(o.fd, o.scq, NULL, NULL));
	EXPECT_EQ(-EBUSY, destroy_cq(o.fd, o.rcq, NULL, NULL));
	EXPECT_EQ(-EBUSY, destroy_obj(o.fd, SOFTCM_IOCTL_DEALLOC_PD, o.pd));
	EXPECT_EQ(0, poll_cq(o.fd, o.scq, wc, WR));
	EXPECT_EQ(0, poll_cq(o.fd, o.rcq, wc, WR));

	ASSERT_EQ(0, destroy_qp(o.fd, o.q.handle, NULL));
	EXPECT_EQ(0, poll_cq(o.fd, o.scq, wc, WR));
	EXPECT_EQ(0, poll_cq(o.fd, o.rcq, wc, WR));
	/* the rings stay mapped, and writable, for the program to unmap */
	sq_post(&o, 8);
	rq_post(&o, 8);
	EXPECT_EQ(0, destroy_cq(o.fd, o.scq, NULL, NULL));
	EXPECT_EQ(0, destroy_cq(o.fd, o.rcq, NULL, NULL));
	/* the MR still uses the PD */
	EXPECT_EQ(-EBUSY, destroy_obj(o.fd, SOFTCM_IOCTL_DEALLOC_PD, o.pd));
	EXPECT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEREG_MR, o.mr));
	EXPECT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEALLOC_PD, o.pd));
	EXPECT_EQ(-ENOENT, destroy_qp(o.fd, o.q.handle, NULL));
	free_objs(&o);
}

/*
 * DEREG_MR while a posted send names the region's lkey: it succeeds, and
 * when it returns the pages are unpinned (VmPin back); the requester
 * then finds no MR for the lkey when it builds the packet: the send
 * completes with LOC_PROT_ERR, nothing of the region is read, the QP
 * goes to ERR and the later sends are flushed.
 */
TEST_F(lifetime, dereg_while_a_posted_send_names_its_lkey)
{
	struct softcm_doorbell db = { .flags = SOFTCM_DOORBELL_SQ };
	struct softcm_wc wc[WR];
	long pin0 = vm_pin_kb();
	struct objs o;
	__u32 i;

	ASSERT_LE(0, pin0);
	ASSERT_EQ(0, make_objs(&o));
	EXPECT_EQ(pin0 + BUF_PAGES * getpagesize() / 1024, vm_pin_kb());
	ASSERT_EQ(0, rc_to_rts(o.fd, o.q.handle));
	for (i = 0; i < 4; i++)
		sq_post(&o, i);
	ASSERT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEREG_MR, o.mr));
	EXPECT_EQ(pin0, vm_pin_kb());

	db.handle = o.q.handle;
	ASSERT_EQ(0, vioctl(o.fd, SOFTCM_IOCTL_DOORBELL, &db));
	/* the requester's work completes them, after DOORBELL returned */
	ASSERT_EQ(4, poll_cq_wait(o.fd, o.scq, wc, 4, WAIT_MS));
	EXPECT_EQ(1000, wc[0].wr_id);
	EXPECT_EQ(WC_LOC_PROT_ERR, wc[0].status);
	EXPECT_EQ(0, wc[0].vendor_err);
	for (i = 1; i < 4; i++) {
		EXPECT_EQ(1000 + i, wc[i].wr_id);
		EXPECT_EQ(WC_WR_FLUSH_ERR, wc[i].status);
	}
	EXPECT_EQ(0, destroy_qp(o.fd, o.q.handle, NULL));
	EXPECT_EQ(0, destroy_cq(o.fd, o.scq, NULL, NULL));
	EXPECT_EQ(0, destroy_cq(o.fd, o.rcq, NULL, NULL));
	EXPECT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEALLOC_PD, o.pd));
	free_objs(&o);
}

/* What the threads below share. */
struct race {
	struct objs *o;
	__u32 qp;		/* the handle they work on */
	__u32 scq, rcq;
	atomic_int stop;
	atomic_int calls;	/* made by all threads this round */
	atomic_int bad;		/* an answer no caller may get */
	atomic_int bad_errno;
};

/* The answers a command on a QP being destroyed may get. */
static void check_answer(struct race *r, int ret)
{
	if (ret && ret != -ENOENT && ret != -EINVAL && ret != -ENOMEM) {
		atomic_fetch_add(&r->bad, 1);
		atomic_store(&r->bad_errno, ret);
	}
	atomic_fetch_add(&r->calls, 1);
}

/* Post, ring, move and poll the QP until told to stop. */
static void *worker(void *arg)
{
	struct race *r = arg;
	struct softcm_sge sge = { .length = 64 };
	struct softcm_send_wr swr = { .opcode = WR_SEND, .num_sge = 1 };
	struct softcm_recv_wr rwr = { .num_sge = 1 };
	struct softcm_post post = { .sge = (uintptr_t)&sge, .wr_count = 1, .sge_count = 1 };
	struct softcm_doorbell db = { .flags = SOFTCM_DOORBELL_SQ | SOFTCM_DOORBELL_RQ };
	struct softcm_wc wc[8];
	int fd = r->o->fd, n = 0;

	sge.addr = (uintptr_t)r->o->buf;
	sge.lkey = r->o->lkey;
	post.handle = r->qp;
	db.handle = r->qp;
	while (!atomic_load(&r->stop)) {
		switch (n++ % 6) {
		case 0:
			post.wr = (uintptr_t)&swr;
			swr.wr_id = n;
			check_answer(r, vioctl(fd, SOFTCM_IOCTL_POST_SEND, &post));
			break;
		case 1:
			post.wr = (uintptr_t)&rwr;
			rwr.wr_id = n;
			check_answer(r, vioctl(fd, SOFTCM_IOCTL_POST_RECV, &post));
			break;
		case 2:
			check_answer(r, vioctl(fd, SOFTCM_IOCTL_DOORBELL, &db));
			break;
		case 3:
			check_answer(r, to_state(fd, r->qp, QPS_RESET, M_STATE));
			check_answer(r, rc_to_rts(fd, r->qp));
			break;
		case 4:
			poll_cq(fd, r->scq, wc, 8);
			poll_cq(fd, r->rcq, wc, 8);
			break;
		case 5:
			check_answer(r, to_state(fd, r->qp, QPS_ERR, M_STATE));
			break;
		}
	}
	return NULL;
}

/*
 * Threads post sends and receives, ring the doorbell, move and poll a QP
 * while it is destroyed: DESTROY_QP succeeds and its CQs, then its PD, go
 * at once, while the threads' commands keep coming (ENOENT from then on,
 * nothing but ENOENT, EINVAL and ENOMEM before).  Each round a fresh set
 * of objects; the rings are the threads' too (their sends were written
 * there by POST_SEND).
 */
TEST_F(lifetime, destroy_while_threads_post)
{
	pthread_t t[THREADS];
	struct race r;
	struct objs o;
	int round, i;

	for (round = 0; round < ROUNDS; round++) {
		ASSERT_EQ(0, make_objs(&o));
		ASSERT_EQ(0, rc_to_rts(o.fd, o.q.handle));
		memset(&r, 0, sizeof(r));
		r.o = &o;
		r.qp = o.q.handle;
		r.scq = o.scq;
		r.rcq = o.rcq;
		for (i = 0; i < THREADS; i++)
			ASSERT_EQ(0, pthread_create(&t[i], NULL, worker, &r));
		while (atomic_load(&r.calls) < THREADS * CALLS_BEFORE)
			sched_yield();
		ASSERT_EQ(0, destroy_qp(o.fd, o.q.handle, NULL));
		EXPECT_EQ(0, destroy_cq(o.fd, o.scq, NULL, NULL));
		EXPECT_EQ(0, destroy_cq(o.fd, o.rcq, NULL, NULL));
		EXPECT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEREG_MR, o.mr));
		EXPECT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEALLOC_PD, o.pd));
		/* and the threads go on a little against handles now stale */
		i = atomic_load(&r.calls);
		while (atomic_load(&r.calls) < i + THREADS * 10)
			sched_yield();
		atomic_store(&r.stop, 1);
		for (i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		EXPECT_EQ(0, atomic_load(&r.bad)) {
			TH_LOG("round %d: an answer %d", round, atomic_load(&r.bad_errno));
		}
		free_objs(&o);
	}
}

struct regger {
	int fd;
	__u32 pd, qp;
	unsigned char *buf;
	size_t len;
	int rounds;
	int failed;		/* the first errno REG_MR or DEREG_MR gave */
};

/*
 * Register, post a send naming the new lkey, deregister: @rounds times,
 * beside other threads doing the same with their own buffers.
 */
static void *regger(void *arg)
{
	struct regger *g = arg;
	struct softcm_sge sge = { .length = 64 };
	struct softcm_send_wr swr = { .opcode = WR_SEND, .num_sge = 1 };
	struct softcm_post post = { .wr = (uintptr_t)&swr, .sge = (uintptr_t)&sge,
				    .wr_count = 1, .sge_count = 1 };
	int i, ret;

	post.handle = g->qp;
	for (i = 0; i < g->rounds && !g->failed; i++) {
		struct softcm_reg_mr m = {
			.addr = (uintptr_t)g->buf, .length = g->len, .iova = (uintptr_t)g->buf,
			.pd_handle = g->pd, .access = ACCESS_LOCAL_WRITE,
		};

		ret = vioctl(g->fd, SOFTCM_IOCTL_REG_MR, &m);
		if (ret) {
			g->failed = ret;
			break;
		}
		sge.addr = (uintptr_t)g->buf;
		sge.lkey = m.lkey;
		swr.wr_id = i;
		/* in RTS or ERR: it completes at once either way */
		vioctl(g->fd, SOFTCM_IOCTL_POST_SEND, &post);
		ret = destroy_obj(g->fd, SOFTCM_IOCTL_DEREG_MR, m.handle);
		if (ret)
			g->failed = ret;
	}
	return NULL;
}

/*
 * Four threads register and deregister their own buffers in one PD and
 * post sends naming each new lkey (the CQ overflows: it does not matter):
 * every REG_MR and DEREG_MR succeeds, and once they are done only the
 * fixture's MR is pinned.
 */
TEST_F(lifetime, reg_dereg_post_in_threads)
{
	struct regger g[4];
	pthread_t t[4];
	long pin0 = vm_pin_kb();
	struct objs o;
	int i;

	ASSERT_LE(0, pin0);
	ASSERT_EQ(0, make_objs(&o));
	ASSERT_EQ(0, rc_to_rts(o.fd, o.q.handle));
	for (i = 0; i < 4; i++) {
		g[i] = (struct regger){ .fd = o.fd, .pd = o.pd, .qp = o.q.handle,
					.len = 16 * getpagesize(), .rounds = 100 };
		g[i].buf = mmap(NULL, g[i].len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, g[i].buf);
		memset(g[i].buf, i, g[i].len);
		ASSERT_EQ(0, pthread_create(&t[i], NULL, regger, &g[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, g[i].failed);
		munmap(g[i].buf, g[i].len);
	}
	/* the fixture's MR only */
	EXPECT_EQ(pin0 + BUF_PAGES * getpagesize() / 1024, vm_pin_kb());
	EXPECT_EQ(0, destroy_qp(o.fd, o.q.handle, NULL));
	EXPECT_EQ(0, destroy_obj(o.fd, SOFTCM_IOCTL_DEREG_MR, o.mr));
	EXPECT_EQ(pin0, vm_pin_kb());
	free_objs(&o);
}

static volatile int listing_stop;

/* Read /proc/net/softcm_qps of the thread's namespace until told to stop. */
static void *lister(void *arg)
{
	int fd = *(int *)arg;
	char buf[16384];
	long reads = 0;

	while (!__atomic_load_n(&listing_stop, __ATOMIC_ACQUIRE)) {
		while (pread(fd, buf, sizeof(buf), 0) > 0 && reads++ % 4)
			;
	}
	return (void *)reads;
}

/*
 * The QP listing, read in a loop by two threads while files holding QPs
 * are closed: the listing finds a QP under RCU, whose memory outlives
 * the read, but its file does not; a line must not read the file (the
 * debug kernel's KASAN would see the use after free).
 */
TEST_F(lifetime, qp_listing_read_while_files_close)
{
	pthread_t t[2];
	struct objs o[4];
	int fd, rounds = softcm_rounds(100);
	void *reads;

	fd = open("/proc/thread-self/net/softcm_qps", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	listing_stop = 0;
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, lister, &fd));
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 4; i++)
			ASSERT_EQ(0, make_objs(&o[i]));
		for (int i = 0; i < 4; i++)
			free_objs(&o[i]);
	}
	__atomic_store_n(&listing_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(t[i], &reads));
		EXPECT_LT(0, (long)reads);
	}
	close(fd);
}

TEST_HARNESS_MAIN
