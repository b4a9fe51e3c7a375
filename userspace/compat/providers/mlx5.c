// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm exec's libmlx5.so.1: perftest's programs are linked with
 * rdma-core's libmlx5 and libefa (Mellanox and AWS direct verbs), and
 * Debian's libmlx5 needs libibverbs' private version, which only
 * rdma-core's own libibverbs has.  This one carries the soname and
 * versions and the entry points Debian's programs import, and each says
 * "not this device", as libmlx5 does for a device that is not a Mellanox
 * one: false, or NULL or an error with EOPNOTSUPP.  perftest calls them
 * only for a device whose vendor is Mellanox's; softcm's is not.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <infiniband/mlx5dv.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{
	return false;
}

EXPORT struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
					      struct mlx5dv_context_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_attr,
				       struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	return EOPNOTSUPP;
}

EXPORT int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen,
				   void *out, size_t outlen)
{
	return EOPNOTSUPP;
}

EXPORT int mlx5dv_crypto_login(struct ibv_context *context,
			       struct mlx5dv_crypto_login_attr *login_attr)
{
	return EOPNOTSUPP;
}

EXPORT struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
					    struct mlx5dv_dek_init_attr *init_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{
	return EOPNOTSUPP;
}
