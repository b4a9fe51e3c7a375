// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The parts of librdmacm's API that need a verbs device: softcm has none,
 * so there are no devices, and queue pairs, shared receive queues, QP
 * attributes, ECE, multicast and QP event notification fail with ENOSYS
 * (see softcm(7)).  They exist so that programs written for librdmacm
 * link unchanged.
 */
#include <stdlib.h>

#include "internal.h"

SOFTCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(1, sizeof(*list));

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	if (num_devices)
		*num_devices = 0;
	return list;
}

SOFTCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

SOFTCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
				 struct ibv_qp_init_attr *qp_init_attr)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id,
				    struct ibv_qp_init_attr_ex *qp_init_attr)
{
	return softcm_err(ENOSYS);
}

/* There is never a QP to destroy. */
SOFTCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
}

SOFTCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				     struct ibv_srq_init_attr_ex *attr)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
}

SOFTCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				    int *qp_attr_mask)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				      void *context)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
					 struct rdma_cm_join_mc_attr_ex *mc_join_attr,
					 void *context)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return softcm_err(ENOSYS);
}

SOFTCM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return softcm_err(ENOSYS);
}

/* The QP events it passes on (IBV_EVENT_COMM_EST) come from a QP. */
SOFTCM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	return softcm_err(ENOSYS);
}
