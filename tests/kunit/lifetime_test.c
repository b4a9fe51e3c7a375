// SPDX-License-Identifier: GPL-2.0
/*
 * The packet path's lifetimes (Documentation/design.rst, "The packet
 * path"), before there is a data path: a thread standing in for it finds
 * a QP by number and an MR by rkey under RCU, with bottom halves off as in
 * softirq, and works on them slowly (on the QP after it entered it, out
 * of RCU: only the entry holds it), while the test destroys the QP (then
 * its CQs and PD) or deregisters the MR through the real ioctls of a real
 * /dev/softcm file.  DESTROY_QP and DEREG_MR must not return while the
 * stand-in is still at work on what they destroy, and neither KASAN nor
 * a fault may come when the CQs go right after the QP (the QP's rings
 * are unmapped when it is freed).
 *
 * The ioctls' arguments live in user memory of the test's own (a KUnit
 * mm, kunit_vm_mmap()), which also holds the MR's pages.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/softcm.h>

#include "chardev.h"
#include "cq.h"
#include "file.h"
#include "mr.h"
#include "netns.h"
#include "qp.h"

/*
 * How long the stand-in works on an object it found: far more than a
 * destroy that does not wait takes, even on a slow guest, and long enough
 * for what such a destroy freed to be freed indeed (a grace period).
 */
#define WORK_MS		200
/* user memory: one page of ioctl arguments, then the MR's */
#define ARG_OFF		0
#define MR_OFF		PAGE_SIZE
#define USER_BYTES	(2 * PAGE_SIZE)

struct lt {
	struct kunit *test;
	struct file *filp;
	struct softcm_net *sn;
	unsigned long user;		/* the test's user memory */
	u32 pd, scq, rcq, qp, qpn, mr, rkey;
	/* the stand-in */
	struct task_struct *thread;
	atomic_t inside;		/* in a packet's work now */
	atomic_t packets;		/* worked on something */
	atomic_t destroyed;		/* the destroy under test returned */
	atomic_t late;			/* packets still at work after that */
	u32 rq_prod;			/* read from the QP's ring */
	bool stop;
};

/* One ioctl on the test's file, its argument copied through user memory. */
static int uioctl(struct lt *lt, unsigned int cmd, void *arg)
{
	void __user *u = (void __user *)(lt->user + ARG_OFF);
	size_t size = _IOC_SIZE(cmd);
	long ret;

	if (copy_to_user(u, arg, size))
		return -EFAULT;
	ret = lt->filp->f_op->unlocked_ioctl(lt->filp, cmd, (unsigned long)u);
	if (copy_from_user(arg, u, size))
		return -EFAULT;
	return ret;
}

static struct softcm_qp_attr rc_attr(u32 state)
{
	struct softcm_qp_attr a = {
		.qp_state = state, .path_mtu = IB_MTU_1024, .dest_qp_num = 0x4242,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
		.max_rd_atomic = 1, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.port_num = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.hop_limit = 64;
	a.ah_attr.dgid[10] = 0xff;
	a.ah_attr.dgid[11] = 0xff;
	a.ah_attr.dgid[12] = 10;
	a.ah_attr.dgid[15] = 2;
	return a;
}

static int modify(struct lt *lt, u32 state, u32 mask)
{
	struct softcm_modify_qp c = { .handle = lt->qp, .attr_mask = mask,
				      .attr = rc_attr(state) };

	return uioctl(lt, SOFTCM_IOCTL_MODIFY_QP, &c);
}

static int destroy_obj(struct lt *lt, unsigned int cmd, u32 handle)
{
	struct softcm_destroy_obj c = { .handle = handle };

	return uioctl(lt, cmd, &c);
}

static int destroy_cq(struct lt *lt, u32 handle)
{
	struct softcm_destroy_cq c = { .handle = handle };

	return uioctl(lt, SOFTCM_IOCTL_DESTROY_CQ, &c);
}

/* A file, a PD, an MR over the user page, two CQs and an RC QP in RTR. */
static void lt_make(struct kunit *test, struct lt *lt)
{
	struct softcm_alloc_pd pd = { 0 };
	struct softcm_create_cq cq = { .cqe = 1024, .channel_fd = -1 };
	struct softcm_create_qp qp = { .qp_type = IB_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct softcm_reg_mr mr = { .length = PAGE_SIZE,
				    .access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE };
	struct softcm_file *sf;

	memset(lt, 0, sizeof(*lt));
	lt->test = test;
	lt->user = kunit_vm_mmap(test, NULL, 0, USER_BYTES, PROT_READ | PROT_WRITE,
				 MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, 0, lt->user);
	lt->filp = filp_open("/dev/softcm", O_RDWR, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(lt->filp));
	sf = softcm_chardev_file(lt->filp);
	KUNIT_ASSERT_NOT_NULL(test, sf);
	lt->sn = softcm_net(sf->net);

	KUNIT_ASSERT_EQ(test, 0, uioctl(lt, SOFTCM_IOCTL_ALLOC_PD, &pd));
	lt->pd = pd.handle;
	mr.addr = lt->user + MR_OFF;
	mr.iova = mr.addr;
	mr.pd_handle = lt->pd;
	KUNIT_ASSERT_EQ(test, 0, uioctl(lt, SOFTCM_IOCTL_REG_MR, &mr));
	lt->mr = mr.handle;
	lt->rkey = mr.rkey;
	KUNIT_ASSERT_EQ(test, 0, uioctl(lt, SOFTCM_IOCTL_CREATE_CQ, &cq));
	lt->scq = cq.handle;
	KUNIT_ASSERT_EQ(test, 0, uioctl(lt, SOFTCM_IOCTL_CREATE_CQ, &cq));
	lt->rcq = cq.handle;
	qp.pd_handle = lt->pd;
	qp.send_cq_handle = lt->scq;
	qp.recv_cq_handle = lt->rcq;
	KUNIT_ASSERT_EQ(test, 0, uioctl(lt, SOFTCM_IOCTL_CREATE_QP, &qp));
	lt->qp = qp.handle;
	lt->qpn = qp.qp_num;
	KUNIT_ASSERT_EQ(test, 0, modify(lt, IB_QPS_INIT, IB_QP_STATE | IB_QP_PKEY_INDEX |
					IB_QP_PORT | IB_QP_ACCESS_FLAGS));
	KUNIT_ASSERT_EQ(test, 0, modify(lt, IB_QPS_RTR, IB_QP_STATE | IB_QP_AV |
					IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
					IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER));
}

/*
 * A packet's work, slow: WORK_MS, after which the destroy under test must
 * not have returned yet (else it is counted in late).  In softirq's
 * conditions (@atomic) it spins; otherwise it sleeps, so that grace
 * periods go on meanwhile, as they would beside a work item.
 */
static void work_slowly(struct lt *lt, bool atomic)
{
	int ms;

	for (ms = 0; ms < WORK_MS; ms++) {
		if (atomic)
			mdelay(1);
		else
			usleep_range(1000, 1100);
	}
	if (atomic_read(&lt->destroyed))
		atomic_inc(&lt->late);
}

/* Wait until the stand-in is in the middle of a packet's work. */
static void wait_inside(struct lt *lt)
{
	while (!atomic_read(&lt->inside))
		cond_resched();
}

static void stop_thread(struct lt *lt)
{
	WRITE_ONCE(lt->stop, true);
	kthread_stop(lt->thread);
}

/*
 * A receive for the QP, as the data path will take it in softirq: find
 * it by number and enter it, then, out of RCU and softirq as a packet
 * handed to a work item would be, complete a receive to its CQ, work a
 * while, complete another, leave.  Only having entered holds the QP, its
 * CQs and PD then.
 */
static int qp_packets(void *arg)
{
	struct softcm_wc wc = { .opcode = IB_WC_RECV, .port_num = 1 };
	struct lt *lt = arg;
	struct softcm_qp *qp;
	bool entered;

	while (!READ_ONCE(lt->stop)) {
		local_bh_disable();
		rcu_read_lock();
		qp = softcm_qp_find_rcu(lt->sn, lt->qpn);
		entered = qp && softcm_qp_enter(qp);
		rcu_read_unlock();
		local_bh_enable();
		if (entered) {
			atomic_set(&lt->inside, 1);
			wc.qp_num = qp->qpn;
			softcm_cq_push(qp->rcq, &wc, false);
			work_slowly(lt, false);
			/* the next receive's slot, as a receive takes it */
			lt->rq_prod = READ_ONCE(qp->upage->rq_prod);
			softcm_cq_push(qp->rcq, &wc, false);
			atomic_inc(&lt->packets);
			atomic_set(&lt->inside, 0);
			softcm_qp_leave(qp);
		}
		cond_resched();
	}
	return 0;
}

/*
 * DESTROY_QP while a packet works on the QP: it returns only once the
 * packet is done, and the CQs and the PD, destroyed right after, are
 * never touched by it (KASAN).  No later packet finds the QP.
 */
static void destroy_qp_waits_for_packets(struct kunit *test)
{
	struct softcm_destroy_qp d = { 0 };
	struct lt lt;
	int packets;

	lt_make(test, &lt);
	lt.thread = kthread_run(qp_packets, &lt, "softcm-lt-qp");
	KUNIT_ASSERT_FALSE(test, IS_ERR(lt.thread));
	wait_inside(&lt);
	d.handle = lt.qp;
	KUNIT_EXPECT_EQ(test, 0, uioctl(&lt, SOFTCM_IOCTL_DESTROY_QP, &d));
	atomic_set(&lt.destroyed, 1);
	packets = atomic_read(&lt.packets);
	KUNIT_EXPECT_EQ(test, 0, destroy_cq(&lt, lt.rcq));
	KUNIT_EXPECT_EQ(test, 0, destroy_cq(&lt, lt.scq));
	KUNIT_EXPECT_EQ(test, 0, destroy_obj(&lt, SOFTCM_IOCTL_DEREG_MR, lt.mr));
	KUNIT_EXPECT_EQ(test, 0, destroy_obj(&lt, SOFTCM_IOCTL_DEALLOC_PD, lt.pd));
	/* a while longer: nothing finds the QP any more */
	msleep(20);
	stop_thread(&lt);
	KUNIT_EXPECT_LT(test, 0, packets);
	KUNIT_EXPECT_EQ(test, packets, atomic_read(&lt.packets));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&lt.late));
	fput(lt.filp);
}

/*
 * An RDMA WRITE's packet, as the data path will take it: find the MR by
 * rkey, write into its first page, work a while (a long copy), done.
 */
static int mr_packets(void *arg)
{
	struct lt *lt = arg;
	struct softcm_mr *mr;
	u8 *p;

	while (!READ_ONCE(lt->stop)) {
		local_bh_disable();
		rcu_read_lock();
		mr = softcm_mr_find_rcu(lt->sn, lt->rkey, true);
		if (mr && (mr->access & IB_ACCESS_REMOTE_WRITE)) {
			atomic_set(&lt->inside, 1);
			p = kmap_local_page(mr->pages[0]);
			memset(p, 0xab, 64);
			work_slowly(lt, true);
			memset(p + 64, 0xab, 64);
			kunmap_local(p);
			atomic_inc(&lt->packets);
			atomic_set(&lt->inside, 0);
		}
		rcu_read_unlock();
		local_bh_enable();
		cond_resched();
	}
	return 0;
}

/*
 * DEREG_MR while a packet writes into the region: it returns only once
 * the packet is done, and no later packet finds the MR.  Its PD is free
 * at once.
 */
static void dereg_mr_waits_for_packets(struct kunit *test)
{
	struct softcm_destroy_qp d = { 0 };
	struct lt lt;
	int packets;

	lt_make(test, &lt);
	lt.thread = kthread_run(mr_packets, &lt, "softcm-lt-mr");
	KUNIT_ASSERT_FALSE(test, IS_ERR(lt.thread));
	wait_inside(&lt);
	KUNIT_EXPECT_EQ(test, 0, destroy_obj(&lt, SOFTCM_IOCTL_DEREG_MR, lt.mr));
	atomic_set(&lt.destroyed, 1);
	packets = atomic_read(&lt.packets);
	msleep(20);
	stop_thread(&lt);
	KUNIT_EXPECT_LT(test, 0, packets);
	KUNIT_EXPECT_EQ(test, packets, atomic_read(&lt.packets));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&lt.late));
	d.handle = lt.qp;
	KUNIT_EXPECT_EQ(test, 0, uioctl(&lt, SOFTCM_IOCTL_DESTROY_QP, &d));
	KUNIT_EXPECT_EQ(test, 0, destroy_cq(&lt, lt.rcq));
	KUNIT_EXPECT_EQ(test, 0, destroy_cq(&lt, lt.scq));
	KUNIT_EXPECT_EQ(test, 0, destroy_obj(&lt, SOFTCM_IOCTL_DEALLOC_PD, lt.pd));
	fput(lt.filp);
}

static struct kunit_case lifetime_cases[] = {
	KUNIT_CASE(destroy_qp_waits_for_packets),
	KUNIT_CASE(dereg_mr_waits_for_packets),
	{}
};

static struct kunit_suite lifetime_suite = {
	.name = "softcm_lifetime",
	.test_cases = lifetime_cases,
};

kunit_test_suite(lifetime_suite);
