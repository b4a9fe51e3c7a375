// SPDX-License-Identifier: GPL-2.0
/*
 * The RC requester's go-back (softcm_rc_go_back()): where it resumes
 * sending, given the WRs it took and their PSNs; and which message ends
 * ask for an ACK (softcm_rc_ask_last()); on a QP of its own that only
 * this logic touches.
 */

#include <kunit/test.h>
#include <linux/jiffies.h>
#include <rdma/ib_verbs.h>

#include "qp.h"
#include "rc.h"

#define ENTRIES	4
#define MTU	1024

static struct softcm_qp *fake_qp(struct kunit *test)
{
	struct softcm_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->rc.swqe = kunit_kcalloc(test, ENTRIES, sizeof(*qp->rc.swqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->rc.swqe);
	spin_lock_init(&qp->lock);
	qp->sq_entries = ENTRIES;
	qp->rc.mtu = MTU;
	return qp;
}

/* One more WR taken, of @npkts packets, from the queue's tail PSN on. */
static void take(struct softcm_qp *qp, u32 npkts)
{
	struct softcm_swqe *s = &qp->rc.swqe[qp->rc.sq_next & (ENTRIES - 1)];

	s->first_psn = qp->rc.tail_psn;
	s->npkts = npkts;
	s->len = npkts * MTU;
	qp->rc.tail_psn = (qp->rc.tail_psn + npkts) & 0xffffff;
	qp->rc.sq_next++;
}

static void go_back(struct softcm_qp *qp, u32 psn)
{
	spin_lock_bh(&qp->lock);
	softcm_rc_go_back(qp, psn);
	spin_unlock_bh(&qp->lock);
}

static void mid_message(struct kunit *test)
{
	struct softcm_qp *qp = fake_qp(test);

	qp->rc.tail_psn = 100;
	take(qp, 3);
	take(qp, 1);
	qp->rc.req_wqe = 2;
	qp->rc.psn = 104;
	go_back(qp, 101);
	KUNIT_EXPECT_EQ(test, 0U, qp->rc.req_wqe);
	KUNIT_EXPECT_EQ(test, (u32)MTU, qp->rc.req_off);
	KUNIT_EXPECT_EQ(test, 101U, qp->rc.psn);
	go_back(qp, 103);
	KUNIT_EXPECT_EQ(test, 1U, qp->rc.req_wqe);
	KUNIT_EXPECT_EQ(test, 0U, qp->rc.req_off);
}

static void across_the_wrap(struct kunit *test)
{
	struct softcm_qp *qp = fake_qp(test);

	qp->rc.tail_psn = 0xfffffe;
	take(qp, 4);
	go_back(qp, 1);
	KUNIT_EXPECT_EQ(test, 0U, qp->rc.req_wqe);
	KUNIT_EXPECT_EQ(test, 3U * MTU, qp->rc.req_off);
	KUNIT_EXPECT_EQ(test, 1U, qp->rc.psn);
}

/*
 * An ACK for packets sent before a go-back acknowledged every WR taken
 * while the requester was sending them again: it goes to the next WR to
 * be taken, at the PSN after them all, not stay behind the queue.
 */
static void past_every_wr(struct kunit *test)
{
	struct softcm_qp *qp = fake_qp(test);

	qp->rc.tail_psn = 100;
	take(qp, 2);
	take(qp, 2);
	/* going back to 100, it had resent up to 102 when the ACK came */
	qp->rc.req_wqe = 1;
	qp->rc.req_off = 0;
	qp->rc.psn = 102;
	qp->sq_cons = 2;	/* both WRs completed */
	go_back(qp, 104);
	KUNIT_EXPECT_EQ(test, 2U, qp->rc.req_wqe);
	KUNIT_EXPECT_EQ(test, 0U, qp->rc.req_off);
	KUNIT_EXPECT_EQ(test, 104U, qp->rc.psn);
	/* the next WR taken is sent from there */
	take(qp, 1);
	KUNIT_EXPECT_NE(test, qp->rc.req_wqe, qp->rc.sq_next);
	KUNIT_EXPECT_EQ(test, qp->rc.psn, qp->rc.swqe[2].first_psn);
}

/* A PSN neither taken nor the next leaves the requester where it is. */
static void foreign_psn_ignored(struct kunit *test)
{
	struct softcm_qp *qp = fake_qp(test);

	qp->rc.tail_psn = 100;
	take(qp, 2);
	qp->rc.req_wqe = 1;
	qp->rc.psn = 102;
	go_back(qp, 500);
	KUNIT_EXPECT_EQ(test, 1U, qp->rc.req_wqe);
	KUNIT_EXPECT_EQ(test, 102U, qp->rc.psn);
}

static bool ask_last(struct softcm_qp *qp, const struct softcm_sq_wqe *w, bool resend)
{
	bool ret;

	spin_lock_bh(&qp->lock);
	ret = softcm_rc_ask_last(qp, w, resend);
	spin_unlock_bh(&qp->lock);
	return ret;
}

/*
 * Unsignalled messages ending in one tick of jiffies: the first after an
 * earlier tick asks and the next go without; a signalled one asks; of a
 * send queue of 16, 3 in a row go without and the 4th asks (a quarter of
 * the queue); on a QP that signals all, every one asks.  A try that a
 * tick ends mid-way is made again.
 */
static void stream_asks_every_quarter_queue(struct kunit *test)
{
	struct softcm_qp *qp = fake_qp(test);
	struct softcm_sq_wqe w = {}, sig = { .wr.send_flags = IB_SEND_SIGNALED };
	bool asked[6];
	unsigned long t;
	int tries, i;

	qp->sq_entries = 64;
	for (tries = 0; tries < 5; tries++) {
		qp->rc.unasked = 0;
		t = jiffies;
		qp->rc.last_msg = t - 1;
		for (i = 0; i < 6; i++)
			asked[i] = ask_last(qp, i == 5 ? &sig : &w, false);
		if (!time_after(jiffies, t))
			break;
	}
	KUNIT_ASSERT_LT(test, tries, 5);
	KUNIT_EXPECT_TRUE(test, asked[0]);
	for (i = 1; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, asked[i]);
	KUNIT_EXPECT_TRUE(test, asked[5]);

	qp->sq_entries = 16;
	for (tries = 0; tries < 5; tries++) {
		qp->rc.unasked = 0;
		t = jiffies;
		qp->rc.last_msg = t;
		for (i = 0; i < 4; i++)
			asked[i] = ask_last(qp, &w, false);
		qp->sq_sig_all = true;
		asked[4] = ask_last(qp, &w, false);
		qp->sq_sig_all = false;
		if (!time_after(jiffies, t))
			break;
	}
	KUNIT_ASSERT_LT(test, tries, 5);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, asked[i]);
	KUNIT_EXPECT_TRUE(test, asked[3]);
	KUNIT_EXPECT_TRUE(test, asked[4]);
}

/*
 * A packet sent again (a go-back's, an ACK probe's) asks, and is no
 * message's end: the message after a probe, which comes two ticks after
 * the last message, asks even in the probe's own tick.
 */
static void resend_is_no_message_end(struct kunit *test)
{
	struct softcm_qp *qp = fake_qp(test);
	struct softcm_sq_wqe w = {};
	bool probe, next;
	unsigned long t;
	int tries;

	qp->sq_entries = 64;
	for (tries = 0; tries < 5; tries++) {
		t = jiffies;
		qp->rc.last_msg = t - 2;
		probe = ask_last(qp, &w, true);
		next = ask_last(qp, &w, false);
		if (!time_after(jiffies, t))
			break;
	}
	KUNIT_ASSERT_LT(test, tries, 5);
	KUNIT_EXPECT_TRUE(test, probe);
	KUNIT_EXPECT_TRUE(test, next);
	KUNIT_EXPECT_EQ(test, t, qp->rc.last_msg);
}

static struct kunit_case req_cases[] = {
	KUNIT_CASE(mid_message),
	KUNIT_CASE(across_the_wrap),
	KUNIT_CASE(past_every_wr),
	KUNIT_CASE(foreign_psn_ignored),
	KUNIT_CASE(stream_asks_every_quarter_queue),
	KUNIT_CASE(resend_is_no_message_end),
	{}
};

static struct kunit_suite req_suite = {
	.name = "softcm_req",
	.test_cases = req_cases,
};

kunit_test_suite(req_suite);
