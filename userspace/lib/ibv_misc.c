// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The rest of libibverbs' public calls, those that need no object of
 * ours or that softcm cannot support.  Programs import them whether or
 * not they call them (Debian links every program with immediate binding,
 * so one missing import stops a program before main()).  A call softcm
 * does not support answers as libibverbs does for a provider without the
 * operation: EOPNOTSUPP, never a crash (Documentation/verbs.rst lists
 * them).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "internal.h"

/* Declared by rdma-core's driver.h and marshall.h, which Debian does not ship. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
const char *ibv_get_sysfs_path(void);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

/* Where sysfs is mounted: $SYSFS_PATH if set (without trailing '/'), else /sys. */
SOFTCM_EXPORT const char *ibv_get_sysfs_path(void)
{
	static char path[256];
	const char *env = getenv("SYSFS_PATH");
	size_t len;

	if (!env || !*env || strlen(env) >= sizeof(path))
		return "/sys";
	len = strlen(env);
	while (len > 1 && env[len - 1] == '/')
		len--;
	memcpy(path, env, len);
	path[len] = '\0';
	return path;
}

/*
 * The contents of DIR/FILE in @buf, NUL-terminated, without its trailing
 * newline: their length, or -1 with errno.  softcm's device has no
 * attribute files (its ibdev_path is the misc device's directory), so
 * ibv_devinfo's board_id is not found, as for rxe.
 */
SOFTCM_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char *path;
	ssize_t len;
	int fd, err;

	if (!size)
		return softcm_err(EINVAL);
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return softcm_err(ENOMEM);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	err = errno;
	close(fd);
	if (len < 0)
		return softcm_err(err);
	if ((size_t)len == size)
		len--;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return len;
}

/*
 * Nothing to do around fork(): the kernel pins registered memory for the
 * long term and gives the child copies (ibv_is_fork_initialized() says
 * IBV_FORK_UNNEEDED), as libibverbs on such a kernel.
 */
SOFTCM_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

SOFTCM_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return 0;
}

/* The uverbs structures of rdma-core's own providers, copied field by field. */
SOFTCM_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					      struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

SOFTCM_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					      struct ib_uverbs_qp_attr *src)
{
	dst->qp_state = src->qp_state;
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

SOFTCM_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					       struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

SOFTCM_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					     struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

/*
 * Sharing objects between processes through a uverbs file: softcm's
 * objects belong to the file that made them, and /dev/softcm has no
 * import.  NULL with EOPNOTSUPP, as libibverbs for a provider without it;
 * nothing can have been imported, so unimporting does nothing.
 */
SOFTCM_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	errno = EOPNOTSUPP;
	return NULL;
}

SOFTCM_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

SOFTCM_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

SOFTCM_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

SOFTCM_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
}

SOFTCM_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
}

SOFTCM_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* Enhanced connection establishment: no vendor options, EOPNOTSUPP. */
SOFTCM_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

SOFTCM_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* 0: no promise that data lands in order, libibverbs' default answer. */
SOFTCM_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
					     uint32_t flags)
{
	return 0;
}
