// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Verbs contexts: the ioctls made on them and the lifetime of the
 * library's internal ones (ibv_device.c opens them).  A context is one
 * open of /dev/softcm (its cmd_fd) with its async event descriptor, as a
 * uverbs context is one open of /dev/infiniband/uverbsN.  The bottom of
 * libibverbs' half: it calls nothing of the library's.
 */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

int softcm_vioctl(struct ibv_context *ctx, unsigned long cmd, void *arg)
{
	return ioctl(ctx->cmd_fd, cmd, arg) ? -1 : 0;
}

/* Closing the file destroys what is left of its objects in the kernel. */
void softcm_ctx_free(struct softcm_context *sctx)
{
	struct ibv_context *ctx = &sctx->vctx.context;

	close(ctx->async_fd);
	close(ctx->cmd_fd);
	pthread_mutex_destroy(&ctx->mutex);
	free(sctx);
}

/* One more object (or the cm device) uses an internal context. */
void softcm_ctx_hold(struct ibv_context *ctx)
{
	struct softcm_context *sctx = to_sctx(ctx);

	if (sctx->internal)
		__atomic_add_fetch(&sctx->users, 1, __ATOMIC_RELAXED);
}

/*
 * One more user of an internal context that still has one: a context
 * whose users reached 0 is being closed and is never taken again, so
 * that its last put runs once.  Returns 0 for such a context.
 */
int softcm_ctx_hold_unless_zero(struct ibv_context *ctx)
{
	struct softcm_context *sctx = to_sctx(ctx);
	unsigned long n = __atomic_load_n(&sctx->users, __ATOMIC_RELAXED);

	do {
		if (!n)
			return 0;
	} while (!__atomic_compare_exchange_n(&sctx->users, &n, n + 1, 0,
					      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	return 1;
}

/* And one less: the last user of an internal context closes it. */
void softcm_ctx_put(struct ibv_context *ctx)
{
	struct softcm_context *sctx = to_sctx(ctx);

	if (!sctx->internal || __atomic_sub_fetch(&sctx->users, 1, __ATOMIC_ACQ_REL))
		return;
	if (sctx->last_put)
		sctx->last_put(sctx);
	else
		softcm_ctx_free(sctx);
}
