// SPDX-License-Identifier: GPL-2.0
/*
 * The rings of QPs and CQs (uapi/linux/softcm.h, "Rings"): what the kernel
 * writes maps read-only and stays so; a program scribbling over its own
 * rings and indices while it posts can fail only its own QP (KASAN on the
 * debug kernel watches the kernel's reads); polling and posting receives
 * make no system call, posting sends one DOORBELL per call that finds the
 * kernel idle (the ioctls counted by ioctl_count.h); many threads posting
 * on one QP lose no doorbell; ring memory counts against the namespace's
 * max_ring_bytes and the mappings keep it until they go.
 *
 * Each test runs in a network namespace of its own, its loopback up for
 * the address vectors' GIDs.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "verbs_helpers.h"
#include "ioctl_count.h"
#include "qps_helpers.h"

#define WAIT_MS		30000

static unsigned int nr_doorbell(void)
{
	return ncalls[SOFTCM_VCMD_DOORBELL];
}

static unsigned int nr_all(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < 256; i++)
		n += ncalls[i];
	return n;
}

static void zero_counts(void)
{
	memset(ncalls, 0, sizeof(ncalls));
}

/* QP @qpn's counter @name, as this namespace's /proc/net/softcm_qps shows it. */
static long long qp_stat(uint32_t qpn, const char *name)
{
	int fd = open("/proc/thread-self/net/softcm_qps", O_RDONLY | O_CLOEXEC);
	long long v;

	if (fd < 0)
		return -1;
	v = qp_counter(fd, qpn, name);
	close(fd);
	return v;
}

/* The namespace's device, through the library. */
static struct ibv_context *open_dev(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	ctx = n == 1 ? ibv_open_device(list[0]) : NULL;
	ibv_free_device_list(list);
	return ctx;
}

struct lib {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;
};

static int lib_make(struct lib *l, uint32_t wr, uint32_t cqe, uint32_t inline_data)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = inline_data },
	};

	l->ctx = open_dev();
	if (!l->ctx)
		return -1;
	l->pd = ibv_alloc_pd(l->ctx);
	l->scq = ibv_create_cq(l->ctx, cqe, NULL, NULL, 0);
	l->rcq = ibv_create_cq(l->ctx, cqe, NULL, NULL, 0);
	if (!l->pd || !l->scq || !l->rcq)
		return -1;
	a.send_cq = l->scq;
	a.recv_cq = l->rcq;
	l->qp = ibv_create_qp(l->pd, &a);
	l->cap = a.cap;
	return l->qp ? 0 : -1;
}

static void lib_free(struct lib *l)
{
	ibv_destroy_qp(l->qp);
	ibv_destroy_cq(l->scq);
	ibv_destroy_cq(l->rcq);
	ibv_dealloc_pd(l->pd);
	ibv_close_device(l->ctx);
}

static int lib_modify(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = {
		.qp_state = state, .port_num = 1, .path_mtu = IBV_MTU_1024,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE, .dest_qp_num = 0x4242,
		.rq_psn = 1, .sq_psn = 2, .max_dest_rd_atomic = 1, .max_rd_atomic = 0,
		.min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	int mask = IBV_QP_STATE;

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.dgid.raw[10] = 0xff;
	a.ah_attr.grh.dgid.raw[11] = 0xff;
	a.ah_attr.grh.dgid.raw[12] = 10;
	a.ah_attr.grh.dgid.raw[15] = 2;
	if (state == IBV_QPS_INIT)
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	else if (state == IBV_QPS_RTR)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	else if (state == IBV_QPS_RTS)
		mask |= IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

static int lib_to_rts(struct ibv_qp *qp)
{
	return lib_modify(qp, IBV_QPS_INIT) ?: lib_modify(qp, IBV_QPS_RTR) ?:
	       lib_modify(qp, IBV_QPS_RTS);
}

/* Poll @cq until @n completions are in @wc, or WAIT_MS pass; how many came. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, r;

	for (int ms = 0; got < n && ms < WAIT_MS;) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (!r) {
			usleep(1000);
			ms++;
		}
	}
	return got;
}

FIXTURE(ring) {
	int dummy;
};

FIXTURE_SETUP(ring)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, lo_up());
	zero_counts();
}

FIXTURE_TEARDOWN(ring)
{
	EXPECT_EQ(0, stats_wait_eq_here("qps", 0, WAIT_MS));
	EXPECT_EQ(0, stats_wait_eq_here("cqs", 0, WAIT_MS));
}

/* Raw objects on a file of our own, for the tests that bypass the library. */
struct raw {
	int fd;
	__u32 pd, cq;
	struct softcm_create_cq c;
	struct softcm_create_qp q;
};

static int raw_make(struct raw *r, __u32 wr)
{
	struct softcm_alloc_pd pd = { 0 };

	memset(r, 0, sizeof(*r));
	r->fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	if (vioctl(r->fd, SOFTCM_IOCTL_ALLOC_PD, &pd))
		return -1;
	r->pd = pd.handle;
	r->c.cqe = 4 * wr;
	r->c.channel_fd = -1;
	if (vioctl(r->fd, SOFTCM_IOCTL_CREATE_CQ, &r->c))
		return -1;
	r->cq = r->c.handle;
	r->q.pd_handle = r->pd;
	r->q.send_cq_handle = r->cq;
	r->q.recv_cq_handle = r->cq;
	r->q.qp_type = IBV_QPT_RC;
	r->q.cap = (struct softcm_qp_cap){ .max_send_wr = wr, .max_recv_wr = wr,
					    .max_send_sge = 2, .max_recv_sge = 2 };
	return vioctl(r->fd, SOFTCM_IOCTL_CREATE_QP, &r->q);
}

static void *map(int fd, const struct softcm_ring_map *m, int prot)
{
	return mmap(NULL, m->size, prot, MAP_SHARED, fd, m->offset);
}

/*
 * Write one byte at @p through /proc/self/mem and through
 * process_vm_writev(), the ways around a mapping's protection (the
 * first writes with FOLL_FORCE, as a debugger does): how many wrote.
 * The mm refuses a forced write to a shared mapping without VM_WRITE,
 * and the ring's mapping has no ->access of its own that would let one
 * through: this holds while both do (and while mprotect() cannot make
 * the mapping writable, checked before).
 */
static int forced_writes(volatile char *p)
{
	char v = (char)(*p ^ 0x5a);
	struct iovec local = { .iov_base = &v, .iov_len = 1 };
	struct iovec remote = { .iov_base = (void *)p, .iov_len = 1 };
	int fd, n = 0;

	fd = open("/proc/self/mem", O_RDWR);
	if (fd >= 0) {
		n += pwrite(fd, &v, 1, (off_t)(uintptr_t)p) == 1;
		close(fd);
	}
	n += process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == 1;
	return n;
}

/* In a child: write one byte at @p; how the child ended. */
static int child_writes(volatile char *p)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		*p = 1;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return status;
}

TEST_F(ring, kernel_areas_are_read_only_for_good)
{
	struct softcm_destroy_qp dq = { 0 };
	struct softcm_destroy_cq dc = { 0 };
	struct softcm_qp_kpage *kp;
	struct softcm_cq_kpage *ckp;
	struct softcm_qp_upage *up;
	struct raw r;
	int status;

	ASSERT_EQ(0, raw_make(&r, 4));
	EXPECT_NE(0, r.q.kmap.offset);
	EXPECT_EQ(4, r.q.sq.entries);
	/* asked no inline data: granted what the SGEs' room holds, as rxe */
	EXPECT_EQ(32, r.q.cap.max_inline_data);

	/* writable or executable: refused */
	EXPECT_EQ(MAP_FAILED, map(r.fd, &r.q.kmap, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, map(r.fd, &r.c.kmap, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, map(r.fd, &r.q.umap, PROT_READ | PROT_EXEC));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, r.q.kmap.size, PROT_READ, MAP_PRIVATE, r.fd,
				   r.q.kmap.offset));
	/* read-only: readable, and never writable */
	kp = map(r.fd, &r.q.kmap, PROT_READ);
	ASSERT_NE(MAP_FAILED, kp);
	EXPECT_EQ(IBV_QPS_RESET, kp->state);
	EXPECT_EQ(SOFTCM_SQ_NEED_DOORBELL, kp->sq_flags);
	EXPECT_EQ(-1, mprotect(kp, r.q.kmap.size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	status = child_writes((volatile char *)kp);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_EQ(0, forced_writes((volatile char *)kp));
	EXPECT_EQ(IBV_QPS_RESET, kp->state);
	ckp = map(r.fd, &r.c.kmap, PROT_READ);
	ASSERT_NE(MAP_FAILED, ckp);
	EXPECT_EQ(-1, mprotect(ckp, r.c.kmap.size, PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	status = child_writes((volatile char *)ckp);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_EQ(0, forced_writes((volatile char *)ckp));
	/* the user's area is writable */
	up = map(r.fd, &r.q.umap, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, up);
	up->rq_prod = 0;

	/*
	 * Destroyed: the offsets are gone, the mappings keep their memory
	 * (nothing of the QP is reachable through them).
	 */
	dq.handle = r.q.handle;
	ASSERT_EQ(0, vioctl(r.fd, SOFTCM_IOCTL_DESTROY_QP, &dq));
	dc.handle = r.cq;
	ASSERT_EQ(0, vioctl(r.fd, SOFTCM_IOCTL_DESTROY_CQ, &dc));
	EXPECT_EQ(MAP_FAILED, map(r.fd, &r.q.kmap, PROT_READ));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_QPS_RESET, kp->state);
	up->sq_prod = 7;
	EXPECT_EQ(0, ckp->prod);
	EXPECT_EQ(0, munmap(kp, r.q.kmap.size));
	EXPECT_EQ(0, munmap(ckp, r.c.kmap.size));
	EXPECT_EQ(0, munmap(up, r.q.umap.size));
	close(r.fd);
}

TEST_F(ring, poll_and_post_recv_make_no_system_call)
{
	struct ibv_recv_wr rwr = { 0 }, *bad;
	struct ibv_wc wc[16];
	struct lib l;
	int i;

	ASSERT_EQ(0, lib_make(&l, 16, 64, 0));
	ASSERT_EQ(0, lib_modify(l.qp, IBV_QPS_INIT));
	zero_counts();
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(0, ibv_poll_cq(l.rcq, 16, wc));
	for (i = 0; i < 16; i++) {
		rwr.wr_id = 100 + i;
		ASSERT_EQ(0, ibv_post_recv(l.qp, &rwr, &bad));
	}
	/* full: ENOMEM, still no system call */
	EXPECT_EQ(ENOMEM, ibv_post_recv(l.qp, &rwr, &bad));
	EXPECT_EQ(0, nr_all());

	/* ERR flushes them; polling them is no system call either */
	ASSERT_EQ(0, lib_modify(l.qp, IBV_QPS_ERR));
	zero_counts();
	ASSERT_EQ(16, poll_n(l.rcq, wc, 16));
	EXPECT_EQ(0, nr_all());
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(100 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
		EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
	}
	/* posted in ERR: one doorbell flushes it at once */
	rwr.wr_id = 7;
	ASSERT_EQ(0, ibv_post_recv(l.qp, &rwr, &bad));
	EXPECT_EQ(1, nr_doorbell());
	ASSERT_EQ(1, ibv_poll_cq(l.rcq, 16, wc));
	EXPECT_EQ(7, wc[0].wr_id);
	EXPECT_EQ(1, nr_all());
	lib_free(&l);
}

TEST_F(ring, post_send_rings_only_an_idle_kernel)
{
	struct ibv_send_wr wr[8], *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[16];
	char data[16] = "inline payload";
	struct lib l;
	int i;

	/* asked for no inline data, as rdma_xclient: still takes 16 bytes */
	ASSERT_EQ(0, lib_make(&l, 4, 64, 0));
	ASSERT_EQ(4, l.cap.max_send_wr);
	EXPECT_LE(16, l.cap.max_inline_data);
	ASSERT_EQ(0, lib_to_rts(l.qp));
	memset(wr, 0, sizeof(wr));
	sge = (struct ibv_sge){ .addr = (uintptr_t)data, .length = sizeof(data) };
	for (i = 0; i < 8; i++) {
		wr[i].wr_id = i + 1;
		/*
		 * RDMA READ on a QP with no READ credits (max_rd_atomic 0):
		 * it can never be sent, so each completes at once
		 */
		wr[i].opcode = IBV_WR_RDMA_READ;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 7 ? &wr[i + 1] : NULL;
	}
	/* idle: one doorbell, and the kernel counts it and the WR it took */
	wr[0].next = NULL;
	EXPECT_EQ(0, qp_stat(l.qp->qp_num, "doorbells"));
	EXPECT_EQ(0, qp_stat(l.qp->qp_num, "sq_wrs"));
	zero_counts();
	ASSERT_EQ(0, ibv_post_send(l.qp, &wr[0], &bad));
	EXPECT_EQ(1, nr_doorbell());
	EXPECT_EQ(1, nr_all());
	EXPECT_EQ(1, qp_stat(l.qp->qp_num, "doorbells"));
	EXPECT_EQ(1, qp_stat(l.qp->qp_num, "sq_wrs"));
	ASSERT_EQ(1, poll_n(l.scq, wc, 1));
	EXPECT_EQ(1, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc[0].status);
	/* a list: one doorbell for all of it; each WR completes (flushed) */
	wr[0].next = &wr[1];
	wr[3].next = NULL;
	zero_counts();
	ASSERT_EQ(0, ibv_post_send(l.qp, &wr[1], &bad));
	EXPECT_EQ(1, nr_doorbell());
	EXPECT_EQ(1, nr_all());
	EXPECT_EQ(2, qp_stat(l.qp->qp_num, "doorbells"));
	EXPECT_EQ(4, qp_stat(l.qp->qp_num, "sq_wrs"));
	ASSERT_EQ(3, poll_n(l.scq, wc, 3));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(i + 2, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
	}
	/* more than the queue holds: the rest ENOMEM, with bad on the first */
	wr[3].next = &wr[4];
	zero_counts();
	EXPECT_EQ(ENOMEM, ibv_post_send(l.qp, &wr[0], &bad));
	EXPECT_EQ(&wr[l.cap.max_send_wr], bad);
	EXPECT_EQ(1, nr_doorbell());
	EXPECT_EQ((int)l.cap.max_send_wr, poll_n(l.scq, wc, l.cap.max_send_wr));
	/* inline beyond what was granted: EINVAL, nothing posted */
	sge.length = l.cap.max_inline_data + 1;
	wr[0].next = NULL;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags |= IBV_SEND_INLINE;
	zero_counts();
	EXPECT_EQ(EINVAL, ibv_post_send(l.qp, &wr[0], &bad));
	EXPECT_EQ(0, nr_all());
	/* RESET: refused before a system call */
	ASSERT_EQ(0, lib_modify(l.qp, IBV_QPS_RESET));
	sge.length = 1;
	zero_counts();
	EXPECT_EQ(EINVAL, ibv_post_send(l.qp, &wr[0], &bad));
	EXPECT_EQ(0, nr_doorbell());
	EXPECT_EQ(0, ibv_poll_cq(l.scq, 16, wc));
	lib_free(&l);
}

#define POSTERS		4
#define PER_POSTER	3000

struct poster {
	struct ibv_qp *qp;
	int id;
	unsigned int doorbells;
	unsigned int calls;
	int err;
};

static void *post_many(void *arg)
{
	struct poster *p = arg;
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_READ }, *bad;
	int i, ret;

	for (i = 0; i < PER_POSTER; i++) {
		wr.wr_id = (uint64_t)p->id << 32 | i;
		while ((ret = ibv_post_send(p->qp, &wr, &bad)) == ENOMEM)
			sched_yield();
		p->calls++;
		if (ret) {
			p->err = ret;
			break;
		}
	}
	p->doorbells = nr_doorbell();
	return NULL;
}

TEST_F(ring, many_posters_lose_no_doorbell)
{
	static char seen[POSTERS][PER_POSTER];
	struct poster p[POSTERS];
	pthread_t t[POSTERS];
	unsigned int doorbells = 0, calls = 0;
	struct ibv_wc wc[64];
	struct lib l;
	int got = 0, n, i, ms = 0;

	ASSERT_EQ(0, lib_make(&l, 64, 65535, 0));
	ASSERT_EQ(0, lib_to_rts(l.qp));
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < POSTERS; i++) {
		p[i] = (struct poster){ .qp = l.qp, .id = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, post_many, &p[i]));
	}
	/* poll while they post: every WR completes, none twice */
	while (got < POSTERS * PER_POSTER && ms < WAIT_MS) {
		n = ibv_poll_cq(l.scq, 64, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			int who = wc[i].wr_id >> 32, k = wc[i].wr_id & 0xffffffff;

			ASSERT_GT(POSTERS, who);
			ASSERT_GT(PER_POSTER, k);
			EXPECT_EQ(0, seen[who][k]);
			seen[who][k] = 1;
		}
		got += n;
		if (!n) {
			usleep(1000);
			ms++;
		}
	}
	for (i = 0; i < POSTERS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, p[i].err);
		doorbells += p[i].doorbells;
		calls += p[i].calls;
	}
	EXPECT_EQ(POSTERS * PER_POSTER, got);
	EXPECT_GE(calls, doorbells);
	/* the kernel took every WR once, and counted every doorbell rung */
	EXPECT_EQ(POSTERS * PER_POSTER, qp_stat(l.qp->qp_num, "sq_wrs"));
	EXPECT_EQ(doorbells, qp_stat(l.qp->qp_num, "doorbells"));
	TH_LOG("%u posts, %u doorbells", calls, doorbells);
	lib_free(&l);
}

/* Rewrites the target's user area at random until told to stop. */
struct scribbler {
	volatile int stop;
	__u32 *words;
	size_t n;
};

static void *scribble(void *arg)
{
	struct scribbler *s = arg;
	unsigned int x = 12345;

	while (!s->stop) {
		x = x * 1103515245 + 12345;
		s->words[(x >> 8) % s->n] = x & 1 ? x : (x >> 16) & 0x3f;
	}
	return NULL;
}

static int raw_state(int fd, __u32 qp, __u32 state)
{
	struct softcm_modify_qp m = { .handle = qp, .attr_mask = IBV_QP_STATE };
	m.attr.qp_state = state;
	if (state == IBV_QPS_INIT) {
		m.attr_mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		m.attr.port_num = 1;
	}
	return vioctl(fd, SOFTCM_IOCTL_MODIFY_QP, &m);
}

TEST_F(ring, a_scribbled_ring_hurts_only_its_own_qp)
{
	struct softcm_sge sg[2] = { { .addr = 0x1000, .length = 8 } };
	struct softcm_send_wr swr = { .opcode = IBV_WR_SEND, .num_sge = 1 };
	struct softcm_recv_wr rwr = { .num_sge = 1 };
	struct softcm_post post = { .sge = (uintptr_t)sg, .wr_count = 1, .sge_count = 1 };
	struct softcm_doorbell db = { .flags = SOFTCM_DOORBELL_SQ | SOFTCM_DOORBELL_RQ };
	struct softcm_poll_cq pc;
	struct softcm_wc kwc[16];
	struct ibv_recv_wr vwr = { 0 }, *bad;
	struct ibv_wc wc[8];
	struct scribbler s = { 0 };
	struct lib victim;
	pthread_t t;
	struct raw r;
	void *um, *cu;
	int round, i;

	/* the victim, on the library, in another file: 8 receives posted */
	ASSERT_EQ(0, lib_make(&victim, 8, 64, 0));
	ASSERT_EQ(0, lib_modify(victim.qp, IBV_QPS_INIT));
	for (i = 0; i < 8; i++) {
		vwr.wr_id = 500 + i;
		ASSERT_EQ(0, ibv_post_recv(victim.qp, &vwr, &bad));
	}

	ASSERT_EQ(0, raw_make(&r, 8));
	um = map(r.fd, &r.q.umap, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, um);
	cu = map(r.fd, &r.c.umap, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, cu);
	/* the QP's indices and slots, and the CQ's consumer index */
	s.words = um;
	s.n = r.q.umap.size / 4;
	ASSERT_EQ(0, pthread_create(&t, NULL, scribble, &s));
	post.handle = r.q.handle;
	db.handle = r.q.handle;
	for (round = 0; round < 3000; round++) {
		raw_state(r.fd, r.q.handle, IBV_QPS_RESET);
		raw_state(r.fd, r.q.handle, IBV_QPS_INIT);
		post.wr = (uintptr_t)&rwr;
		rwr.wr_id = round;
		vioctl(r.fd, SOFTCM_IOCTL_POST_RECV, &post);
		/* UD-less RC: RTS needs a path; ERR consumes whatever is there */
		vioctl(r.fd, SOFTCM_IOCTL_DOORBELL, &db);
		raw_state(r.fd, r.q.handle, IBV_QPS_ERR);
		post.wr = (uintptr_t)&swr;
		swr.wr_id = round;
		swr.send_flags = round & 1 ? IBV_SEND_INLINE : 0;
		vioctl(r.fd, SOFTCM_IOCTL_POST_SEND, &post);
		vioctl(r.fd, SOFTCM_IOCTL_DOORBELL, &db);
		((__u32 *)cu)[0] = round * 2654435761u;
		pc = (struct softcm_poll_cq){ .wc = (uintptr_t)kwc, .handle = r.cq, .ne = 16 };
		vioctl(r.fd, SOFTCM_IOCTL_POLL_CQ, &pc);
	}
	s.stop = 1;
	pthread_join(t, NULL);
	munmap(um, r.q.umap.size);
	munmap(cu, r.c.umap.size);
	close(r.fd);

	/* the victim is as it was: INIT, its 8 receives, flushed in order */
	EXPECT_EQ(0, ibv_poll_cq(victim.rcq, 8, wc));
	ASSERT_EQ(0, lib_modify(victim.qp, IBV_QPS_ERR));
	ASSERT_EQ(8, poll_n(victim.rcq, wc, 8));
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(500 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
	}
	lib_free(&victim);
}

static int set_max_ring_bytes(unsigned long v)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "echo %lu > /proc/sys/net/softcm/max_ring_bytes", v);
	return system(cmd);
}

TEST_F(ring, ring_bytes_capped_per_namespace)
{
	struct softcm_create_cq c = { .channel_fd = -1 };
	struct softcm_destroy_cq d = { 0 };
	int fd, n = 0;
	size_t len;
	void *m;

	/* a CQ of 32 is two pages: its CQEs and the user's page */
	ASSERT_EQ(0, set_max_ring_bytes(8 * 4096));
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	c.cqe = 65535;
	EXPECT_EQ(-ENOMEM, vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c));
	c.cqe = 32;
	while (n < 8 && !vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c))
		n++;
	EXPECT_EQ(4, n);
	EXPECT_EQ(-ENOMEM, vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c));
	/* a mapping keeps its page charged after the CQ is gone */
	len = c.kmap.size;
	EXPECT_EQ(4096, len);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, c.kmap.offset);
	ASSERT_NE(MAP_FAILED, m);
	d.handle = c.handle;
	ASSERT_EQ(0, vioctl(fd, SOFTCM_IOCTL_DESTROY_CQ, &d));
	EXPECT_EQ(-ENOMEM, vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c));
	EXPECT_EQ(0, munmap(m, len));
	EXPECT_EQ(0, vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c));
	EXPECT_EQ(-ENOMEM, vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c));
	close(fd);
	EXPECT_EQ(0, set_max_ring_bytes(1UL << 30));
}

TEST_HARNESS_MAIN
