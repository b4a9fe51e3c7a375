/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the selftests that drive the verbs objects of /dev/softcm
 * through its ioctls, without libibverbs: libibverbs' values that the ABI
 * uses, thin wrappers that return 0 or -errno (a count where they say
 * so), the RC attributes that take a QP to RTS, and the VmPin figure that
 * pinned memory regions move.
 */
#ifndef _SOFTCM_VERBS_HELPERS_H
#define _SOFTCM_VERBS_HELPERS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/softcm.h>

/* libibverbs' values (<infiniband/verbs.h>), which the ABI uses. */
enum { QPT_RC = 2, QPT_UC = 3, QPT_UD = 4, QPT_RAW_PACKET = 8, QPT_XRC_SEND = 9 };
enum { QPS_RESET, QPS_INIT, QPS_RTR, QPS_RTS, QPS_SQD, QPS_SQE, QPS_ERR };
enum {
	M_STATE = 1 << 0, M_CUR_STATE = 1 << 1, M_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	M_ACCESS_FLAGS = 1 << 3, M_PKEY_INDEX = 1 << 4, M_PORT = 1 << 5,
	M_QKEY = 1 << 6, M_AV = 1 << 7, M_PATH_MTU = 1 << 8, M_TIMEOUT = 1 << 9,
	M_RETRY_CNT = 1 << 10, M_RNR_RETRY = 1 << 11, M_RQ_PSN = 1 << 12,
	M_MAX_QP_RD_ATOMIC = 1 << 13, M_ALT_PATH = 1 << 14, M_MIN_RNR_TIMER = 1 << 15,
	M_SQ_PSN = 1 << 16, M_MAX_DEST_RD_ATOMIC = 1 << 17, M_PATH_MIG_STATE = 1 << 18,
	M_CAP = 1 << 19, M_DEST_QPN = 1 << 20,
};
enum { WC_SUCCESS = 0, WC_LOC_QP_OP_ERR = 2, WC_LOC_PROT_ERR = 4, WC_WR_FLUSH_ERR = 5,
       WC_GENERAL_ERR = 21 };
enum { WC_SEND = 0, WC_RDMA_WRITE = 1, WC_RDMA_READ = 2, WC_RECV = 128 };
enum {
	WR_RDMA_WRITE, WR_RDMA_WRITE_WITH_IMM, WR_SEND, WR_SEND_WITH_IMM, WR_RDMA_READ,
	WR_ATOMIC_CMP_AND_SWP, WR_ATOMIC_FETCH_AND_ADD, WR_LOCAL_INV, WR_BIND_MW,
	WR_SEND_WITH_INV,
};
enum {
	ACCESS_LOCAL_WRITE = 1 << 0, ACCESS_REMOTE_WRITE = 1 << 1,
	ACCESS_REMOTE_READ = 1 << 2, ACCESS_REMOTE_ATOMIC = 1 << 3,
	ACCESS_MW_BIND = 1 << 4, ACCESS_ZERO_BASED = 1 << 5,
	ACCESS_ON_DEMAND = 1 << 6, ACCESS_RELAXED_ORDERING = 1 << 20,
};

/* The attributes each RC step requires (rc_to_rts()). */
#define RC_INIT_MASK	(M_STATE | M_PKEY_INDEX | M_PORT | M_ACCESS_FLAGS)
#define RC_RTR_MASK	(M_STATE | M_AV | M_PATH_MTU | M_DEST_QPN | M_RQ_PSN | \
			 M_MAX_DEST_RD_ATOMIC | M_MIN_RNR_TIMER)
#define RC_RTS_MASK	(M_STATE | M_TIMEOUT | M_RETRY_CNT | M_RNR_RETRY | M_SQ_PSN | \
			 M_MAX_QP_RD_ATOMIC)

/* Not inlined: system() in a test body upsets -Wclobbered. */
static int __attribute__((noinline, unused)) sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline int vioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int alloc_pd(int fd, __u32 *h)
{
	struct softcm_alloc_pd c = { 0 };
	int ret = vioctl(fd, SOFTCM_IOCTL_ALLOC_PD, &c);

	*h = c.handle;
	return ret;
}

/* DEALLOC_PD, DEREG_MR, DESTROY_AH: the commands that take only a handle. */
static inline int destroy_obj(int fd, unsigned long cmd, __u32 h)
{
	struct softcm_destroy_obj c = { .handle = h };

	return vioctl(fd, cmd, &c);
}

static inline int dealloc_pd(int fd, __u32 h)
{
	return destroy_obj(fd, SOFTCM_IOCTL_DEALLOC_PD, h);
}

static inline int create_cq(int fd, __u32 cqe, int channel, __u64 uid, __u32 *h)
{
	struct softcm_create_cq c = { .uid = uid, .cqe = cqe, .channel_fd = channel };
	int ret = vioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &c);

	*h = c.handle;
	return ret;
}

/* The events reported go to *@comp and *@async unless they are NULL. */
static inline int destroy_cq(int fd, __u32 h, __u32 *comp, __u32 *async)
{
	struct softcm_destroy_cq c = { .handle = h };
	int ret = vioctl(fd, SOFTCM_IOCTL_DESTROY_CQ, &c);

	if (comp)
		*comp = c.comp_events_reported;
	if (async)
		*async = c.async_events_reported;
	return ret;
}

/* Completions polled (at most @ne), or -errno. */
static inline int poll_cq(int fd, __u32 h, struct softcm_wc *wc, __u32 ne)
{
	struct softcm_poll_cq c = { .wc = (__u64)(uintptr_t)wc, .handle = h, .ne = ne };
	int ret = vioctl(fd, SOFTCM_IOCTL_POLL_CQ, &c);

	return ret ? ret : (int)c.ne;
}

/*
 * Poll until @n completions are in @wc or @ms milliseconds have passed:
 * for completions the data path writes after the call that caused them
 * returned.  How many came, or -errno.
 */
static inline int poll_cq_wait(int fd, __u32 h, struct softcm_wc *wc, __u32 n, int ms)
{
	int got = 0, r;

	while (got < (int)n) {
		r = poll_cq(fd, h, wc + got, n - got);
		if (r < 0)
			return r;
		got += r;
		if (!r) {
			if (ms-- <= 0)
				break;
			usleep(1000);
		}
	}
	return got;
}

static inline int modify_qp(int fd, __u32 h, __u32 mask, const struct softcm_qp_attr *a)
{
	struct softcm_modify_qp c = { .handle = h, .attr_mask = mask, .attr = *a };

	return vioctl(fd, SOFTCM_IOCTL_MODIFY_QP, &c);
}

static inline int destroy_qp(int fd, __u32 h, __u32 *reported)
{
	struct softcm_destroy_qp c = { .handle = h };
	int ret = vioctl(fd, SOFTCM_IOCTL_DESTROY_QP, &c);

	if (reported)
		*reported = c.events_reported;
	return ret;
}

/* Attributes valid for every RC step: the caller's mask picks. */
static inline struct softcm_qp_attr rc_attr(__u32 state)
{
	struct softcm_qp_attr a = {
		.qp_state = state, .path_mtu = 3, .qkey = 0x11111111,
		.rq_psn = 0x123456, .sq_psn = 0xabcdef, .dest_qp_num = 0x4242,
		.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ,
		.max_rd_atomic = 4, .max_dest_rd_atomic = 8, .min_rnr_timer = 12,
		.port_num = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 6,
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

static inline int to_state(int fd, __u32 h, __u32 state, __u32 mask)
{
	struct softcm_qp_attr a = rc_attr(state);

	return modify_qp(fd, h, mask, &a);
}

static inline int rc_to_rts(int fd, __u32 h)
{
	return to_state(fd, h, QPS_INIT, RC_INIT_MASK) ?:
	       to_state(fd, h, QPS_RTR, RC_RTR_MASK) ?:
	       to_state(fd, h, QPS_RTS, RC_RTS_MASK);
}

/* VmPin of this process (its mm's pinned_vm), in kB; -1 if unreadable. */
static inline long vm_pin_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

#endif /* _SOFTCM_VERBS_HELPERS_H */
