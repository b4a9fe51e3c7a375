/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_LIMITS_H
#define _SOFTCM_LIMITS_H

#include <linux/sizes.h>

/*
 * What the verbs objects allow, as QUERY_DEVICE reports it
 * (struct softcm_device_attr).  Objects belong to a file (uobj.c), so
 * the object counts are per open of /dev/softcm, not per device: a
 * program that opens the device twice gets each limit twice, as it gets
 * RLIMIT_NOFILE's worth of descriptors.  What bounds the memory of all
 * of them is the memory cgroup every object is charged to, and
 * RLIMIT_MEMLOCK for the pages MRs pin.
 */

/* Objects per file. */
#define SOFTCM_MAX_PD			16384
#define SOFTCM_MAX_MR			65536
#define SOFTCM_MAX_AH			16384
#define SOFTCM_MAX_CQ			16384
#define SOFTCM_MAX_QP			16384

/* Work queues and completion queues. */
#define SOFTCM_MAX_QP_WR		16384	/* per send or receive queue */
#define SOFTCM_MAX_SGE			32	/* per work request */
#define SOFTCM_MAX_CQE			65535
#define SOFTCM_MAX_INLINE		512	/* bytes, as rxe's 32 SGEs' worth */

/*
 * RDMA READs in flight per QP, as initiator and as responder: what
 * INIT_QP_ATTR and MODIFY_QP accept in max_rd_atomic and
 * max_dest_rd_atomic, and what the data path keeps resources for.
 */
#define SOFTCM_MAX_QP_RD_ATOM		128
#define SOFTCM_MAX_QP_INIT_RD_ATOM	128

/*
 * One MR's length: an SGE's length is 32 bits, and the page array of an
 * MR this long (1M pointers, 8 MiB) is still a reasonable allocation.
 */
#define SOFTCM_MAX_MR_SIZE		SZ_4G
/* One message: max_msg_sz of the port, as RoCE devices report 2^31. */
#define SOFTCM_MAX_MSG_SZ		SZ_2G

#define SOFTCM_MAX_PKEYS		1	/* the default P_Key, 0xffff */
#define SOFTCM_LOCAL_CA_ACK_DELAY	15	/* as rxe */

#endif /* _SOFTCM_LIMITS_H */
