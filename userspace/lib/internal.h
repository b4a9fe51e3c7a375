/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * libsoftcm internals.  The public objects are rdma-core's (struct
 * rdma_cm_id, struct rdma_cm_event from <rdma/rdma_cma.h>), each embedded
 * first in a private one, as librdmacm does.
 */
#ifndef _SOFTCM_INTERNAL_H
#define _SOFTCM_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>
#include <linux/softcm.h>

#define SOFTCM_EXPORT __attribute__((visibility("default")))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Set errno and return -1, the way every public call fails. */
static inline int softcm_err(int err)
{
	errno = err;
	return -1;
}

/* The size of an IPv4 or IPv6 socket address; 0 for anything else. */
static inline socklen_t softcm_sa_len(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

/*
 * The device maximum librdmacm checks responder_resources and
 * initiator_depth against, and what 0xFF ("the device's maximum") stands
 * for.  There is no device to ask: this is what rxe advertises as
 * max_qp_rd_atom and max_qp_init_rd_atom.
 */
#define SOFTCM_MAX_RD_ATOMIC	128

struct softcm_id_priv {
	struct rdma_cm_id id;
	uint32_t handle;
	int sync;			/* created without a channel */
	int connect_response;		/* SOFTCM_OPTION_ID_CONNECT_RESPONSE */

	/* A passive id's request, the defaults of rdma_accept() */
	uint8_t responder_resources;
	uint8_t initiator_depth;

	/*
	 * mut guards events_completed and cond announces its every increase:
	 * events are acknowledged on any thread, and rdma_destroy_id() and
	 * rdma_migrate_id() wait until every event the application read is
	 * (id.c).  Nothing else is guarded by it: migration switches handle,
	 * id.channel and sync under it, but their readers do not take it (an
	 * event's refreshes name the id as the event does, and a call racing
	 * the id's own migration is the application's bug, as in librdmacm);
	 * id.event belongs to the thread making a synchronous id's calls.
	 */
	pthread_mutex_t mut;
	pthread_cond_t cond;
	uint32_t events_completed;

	struct ibv_sa_path_rec path;	/* id.route.path_rec once resolved */
};

struct softcm_event_priv {
	struct rdma_cm_event event;
	struct softcm_id_priv *id_priv;
	uint8_t private_data[SOFTCM_PRIVATE_DATA_MAX];
};

static inline struct softcm_id_priv *to_priv(struct rdma_cm_id *id)
{
	return container_of(id, struct softcm_id_priv, id);
}

/*
 * The library's files call only downwards, in this order (lowest first):
 *   abi.c      the device, the ABI check, event channels
 *   id.c       the private id: alloc/free, ioctls, the kernel's addresses
 *              and path, acknowledged events, migration, destruction
 *   event.c    reading events, a synchronous id's wait for its event
 *   cma.c, resolve.c, conn.c, addrinfo.c, verbs.c: the rest of the API
 * Files of one layer may call each other (rdma_create_ep() resolves), as
 * long as no cycle forms.  tests/static/library.sh checks both on the
 * object files.  The prototypes below are grouped by the file that
 * provides them.
 */

/* abi.c: nothing private; id.c calls rdma_create/destroy_event_channel() */

/* id.c */
int softcm_ioctl(struct softcm_id_priv *priv, unsigned long cmd, void *arg);
int softcm_query_addr_at(int fd, __u32 handle, int which, void *buf, __u32 *len);
int softcm_refresh_addr(struct softcm_id_priv *priv);
int softcm_refresh_addr_at(struct softcm_id_priv *priv, int fd, __u32 handle);
int softcm_refresh_route_at(struct softcm_id_priv *priv, int fd, __u32 handle);
int softcm_event_errno(const struct rdma_cm_event *event);
void softcm_id_event_acked(struct softcm_id_priv *priv);
void softcm_ack_event(struct rdma_cm_event *event);
void softcm_put_event(struct softcm_id_priv *priv);
struct softcm_id_priv *softcm_id_alloc(struct rdma_event_channel *channel,
				       void *context, enum rdma_port_space ps);
void softcm_id_free(struct softcm_id_priv *priv);
int softcm_id_destroy(struct softcm_id_priv *priv);
int softcm_id_migrate(struct softcm_id_priv *priv, struct rdma_event_channel *channel);

/* event.c */
int softcm_wait_sync(struct softcm_id_priv *priv);

#endif /* _SOFTCM_INTERNAL_H */
