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
#include <sys/types.h>

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
 * for, for an id without a device: what rxe advertises as max_qp_rd_atom
 * and max_qp_init_rd_atom.  An id with one uses the device's
 * (softcm_max_resp_res(), softcm_max_init_depth()), as librdmacm.
 */
#define SOFTCM_MAX_RD_ATOMIC	128

struct softcm_id_priv;

/*
 * A record read from a channel's file and not handed out yet (evbuf.c).
 * @from is the channel whose file it was read from, where a
 * CONNECT_REQUEST's new id lives; a record moved to another channel's
 * buffer with its id holds a reference on it (@holds_from), so that the
 * file outlives its new ids' records.
 */
struct softcm_evrec {
	struct softcm_evrec *next;
	struct softcm_channel *from;
	int holds_from;
	uint32_t mig_gen;	/* moved by its id's migration of this generation */
	struct softcm_event_full full;
};

/*
 * An id leaving a channel (evbuf.c): destroyed (@to NULL) or migrated to
 * @to.  Records of it that a read() already under way returns are dropped
 * or sent after it, not buffered here.
 */
struct softcm_departure {
	struct softcm_departure *next;
	struct softcm_id_priv *priv;
	struct softcm_channel *to;
	uint32_t read_before;		/* the id's records read when it left */
	uint32_t forwarded;		/* sent after it since */
};

/*
 * An event channel and the network namespace it was opened in (its
 * inode, as /proc/thread-self/ns/net shows it): the one its ids live in.
 *
 * Its records are read in batches and served from a buffer (evbuf.c).
 * @lock guards the buffer (@head, @tail, @nr_held), @reading, @forwarding,
 * the cycle counts, @departures and the page's held; @cond announces every change of the
 * buffer, the end of every read() and of every cycle's forwarding.  One
 * thread at a time reads (@reading), with no lock held, into @rbuf
 * (@rbuf_cap records), with a record of @spare ready for each: only the
 * reader touches those three.
 * @page is the file's shared page, whose held poll() honours, mapped for
 * every channel.  @fork_gen: the channel is usable in its opener only.
 * @users (atomic): the application's channel is its own until
 * rdma_destroy_event_channel(), a private one its synchronous id's;
 * records read from it and moved away hold it.
 */
struct softcm_channel {
	struct rdma_event_channel channel;
	dev_t ns_dev;
	ino_t ns_ino;
	unsigned long users;
	struct softcm_event_page *page;
	unsigned int fork_gen;		/* the opener's (abi.c) */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct softcm_evrec *head, **tail;
	uint32_t nr_held;
	int reading;
	unsigned int forwarding;	/* read() cycles dropping or forwarding */
	unsigned long cycles, cycles_done;	/* read() cycles begun, ended */
	struct softcm_departure *departures;

	struct softcm_event_full *rbuf;
	unsigned int rbuf_cap;
	struct softcm_evrec *spare;	/* the reader's, for what it reads */
	unsigned int nr_spare;
};

static inline struct softcm_channel *to_schannel(struct rdma_event_channel *channel)
{
	return container_of(channel, struct softcm_channel, channel);
}

struct softcm_id_priv {
	struct rdma_cm_id id;
	uint32_t handle;
	int sync;			/* created without a channel */
	int connect_response;		/* SOFTCM_OPTION_ID_CONNECT_RESPONSE */

	/* A passive id's request, the defaults of rdma_accept() */
	uint8_t responder_resources;
	uint8_t initiator_depth;

	/*
	 * mut guards the events_* counts and mig_gen, and cond announces
	 * their every increase: events are acknowledged (or dropped unread)
	 * on any thread, and rdma_destroy_id() and rdma_migrate_id() wait
	 * until every event the kernel reported is, or moved along with the
	 * id (id.c).  Nothing else is guarded by it: migration switches
	 * handle, id.channel and sync under it, but their readers do not take
	 * it (an event names the id as the record does, and a call racing the
	 * id's own migration is the application's bug, as in librdmacm);
	 * id.event belongs to the thread making a synchronous id's calls.
	 * departure is its entry in a channel's departures, under that
	 * channel's lock.  events_read (atomic): its records read from the
	 * kernel, ever; mig_hold (atomic): a migration's older records may
	 * still be on their way to the new channel, where the newer ones
	 * wait (evbuf.c).
	 */
	pthread_mutex_t mut;
	pthread_cond_t cond;
	uint32_t events_completed;
	uint32_t events_moved;		/* along with the id by its migration */
	uint32_t events_moved_acked;	/* of those, given back since */
	uint32_t mig_gen;		/* its migrations, counted from 1 */
	struct softcm_departure departure;
	uint32_t events_read;
	int mig_hold;

	struct ibv_sa_path_rec path;	/* id.route.path_rec once resolved */

	/*
	 * The namespace's verbs device, once the id has one (bound to an
	 * address, resolved, or from a request), as librdmacm's cma_dev:
	 * id.verbs, id.pd and id.port_num come from it.  connect_error: the
	 * REP could not move the QP, CONNECT_ERROR was reported and the
	 * connection's later events are dropped, as librdmacm does.
	 * qp_init_attr: a passive rdma_create_ep()'s, for rdma_get_request().
	 */
	struct softcm_cmdev *cmdev;
	int connect_error;
	struct ibv_qp_init_attr *qp_init_attr;
};

struct softcm_event_priv {
	struct rdma_cm_event event;
	struct softcm_id_priv *id_priv;
	uint32_t mig_gen;		/* its record's, 0 if never moved */
	uint8_t private_data[SOFTCM_PRIVATE_DATA_MAX];
};

static inline struct softcm_id_priv *to_priv(struct rdma_cm_id *id)
{
	return container_of(id, struct softcm_id_priv, id);
}

/*
 * A verbs context: the public one is vctx.context, as libibverbs providers
 * embed it, so that <infiniband/verbs.h>'s inline verbs_get_ctx() finds
 * the extended operations.  An internal context (the one rdma_cm ids of a
 * namespace share) is closed when its last user goes: the cm device's
 * hold, and each object created on it.  An application's own context
 * (ibv_open_device()) is closed by ibv_close_device() alone.
 */
struct softcm_context {
	__be64 node_guid;
	int internal;
	unsigned long users;		/* atomic; internal contexts only */
	struct softcm_cmdev *cmdev;	/* the cm device holding it, if any */
	/* called instead of freeing when users reaches 0, if set */
	void (*last_put)(struct softcm_context *sctx);
	struct verbs_context vctx;	/* last: verbs_context ends in context */
};

static inline struct softcm_context *to_sctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct softcm_context, vctx.context);
}

/*
 * The namespace's device as rdma_cm ids see it.  refcnt counts the ids
 * and device lists using it, and one more for good once a device list
 * handed it out (@kept); while it is not 0 the cm device holds its
 * context and a PD.  It stays listed while its context lives (objects the
 * application made on it), so that later ids get the same context.
 */
struct softcm_cmdev {
	struct softcm_cmdev *next;
	dev_t ns_dev;			/* the network namespace's inode */
	ino_t ns_ino;
	unsigned long refcnt;		/* under the list's lock */
	struct ibv_context *verbs;
	struct ibv_pd *pd;		/* NULL while refcnt is 0 */
	uint8_t max_resp_res;		/* max_qp_rd_atom */
	uint8_t max_init_depth;		/* max_qp_init_rd_atom */
	int unlinked;			/* its context is dying: off the list */
	int kept;			/* rdma_get_devices() gave it out */
};

/*
 * The library's files call only downwards, in this order (lowest first):
 *   abi.c      the device, the ABI check, event channels' lifetime
 *   ibv_ctx.c  verbs contexts' ioctls and lifetime
 *   ring.c     mapping and unmapping the areas of a QP's or CQ's rings
 *   ibv_mem.c, ibv_cq.c, ibv_qp.c, ibv_str.c, ibv_misc.c: libibverbs'
 *              objects (PDs, MRs and AHs; channels and CQs; QPs and
 *              posting), the *_str and rate helpers, and the calls that
 *              need no object (sysfs, fork ranges, copies, import, ECE)
 *   ibv_cq_ex.c, ibv_qp_ex.c: the extended CQ (ibv_start_poll() and the
 *              ibv_wc_read_*) and QP (the ibv_wr_* builder) on those
 *   ibv_device.c, ibv_ah.c  devices, contexts (their operations), queries,
 *              async events, and the namespace's cm device; address
 *              handles from a work completion
 *   evbuf.c    channels' buffered records: reading them in batches,
 *              what poll() sees of them, an id's on its destruction or
 *              migration, and the count of its events given back
 *   id.c       the private id: alloc/free, ioctls, the kernel's addresses
 *              and path, migration, destruction
 *   verbs.c    the QP calls of librdmacm and the QP's CM transitions
 *   event.c    reading events, a synchronous id's wait for its event
 *   cma.c, resolve.c, conn.c, addrinfo.c: the rest of the API
 *   batch.c    softcm_submit(): several of those calls in one system call
 * Files of one layer may call each other (rdma_create_ep() resolves), as
 * long as no cycle forms.  tests/static/library.sh checks both on the
 * object files.  The prototypes below are grouped by the file that
 * provides them.
 */

/* abi.c */
struct softcm_channel *softcm_channel_open(void);
int softcm_channel_check(const struct softcm_channel *sch);
void softcm_channel_get(struct softcm_channel *sch);
void softcm_channel_put(struct softcm_channel *sch);

/* ibv_ctx.c */
int softcm_vioctl(struct ibv_context *ctx, unsigned long cmd, void *arg);
void softcm_ctx_free(struct softcm_context *sctx);
void softcm_ctx_hold(struct ibv_context *ctx);
int softcm_ctx_hold_unless_zero(struct ibv_context *ctx);
void softcm_ctx_put(struct ibv_context *ctx);

/* ibv_device.c */
int softcm_cmdev_attach(struct softcm_id_priv *priv);
void softcm_cmdev_share(struct softcm_id_priv *priv, const struct softcm_id_priv *from);
uint8_t softcm_max_resp_res(const struct softcm_id_priv *priv);
uint8_t softcm_max_init_depth(const struct softcm_id_priv *priv);
struct softcm_cmdev *softcm_cmdev_get(void);
void softcm_cmdev_keep(struct softcm_cmdev *dev);
void softcm_cmdev_put(struct softcm_cmdev *dev);

/*
 * An area of a QP or CQ the library maps (uapi/linux/softcm.h, "Rings"),
 * and the calls that map and unmap one.
 */
struct softcm_area {
	void *addr;
	size_t size;
};

int softcm_area_map(struct ibv_context *ctx, struct softcm_area *a,
		    const struct softcm_ring_map *m, int writable);
void softcm_area_unmap(struct softcm_area *a);

/*
 * A CQ: the public one first (an ibv_cq_ex begins as an ibv_cq does),
 * then its ring.  Pollers take @lock: one consumer at a time.
 */
struct softcm_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
	struct softcm_area kmap;	/* read-only: prod, the completions */
	struct softcm_area umap;	/* ours: cons */
	const struct softcm_cq_kpage *kpage;
	struct softcm_cq_upage *upage;
	const uint8_t *cqes;
	uint32_t mask;
	uint32_t stride;
	uint32_t cons;			/* ours, under lock */
	pthread_spinlock_t lock;
	/* ibv_start_poll() to ibv_end_poll(), under lock: the slot at cons */
	const struct softcm_wc *cur;
};

static inline struct softcm_cq *to_scq(struct ibv_cq *cq)
{
	return container_of(cq, struct softcm_cq, cq);
}

/*
 * A QP: the public one first, then its rings.  Posters of one queue take
 * its lock; the kernel's indices and the state are read from kpage.
 */
struct softcm_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	struct softcm_area kmap;	/* read-only: struct softcm_qp_kpage */
	struct softcm_area umap;	/* ours: indices, SQ, RQ */
	const struct softcm_qp_kpage *kpage;
	struct softcm_qp_upage *upage;
	uint8_t *sq, *rq;
	uint32_t sq_mask, rq_mask, sq_stride, rq_stride;
	struct ibv_qp_cap cap;		/* as granted */
	uint32_t sq_prod, rq_prod;	/* ours, under sq_lock and rq_lock */
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;

	/*
	 * ibv_create_qp_ex()'s QPs (ibv_qp_ex.c): @ex, what
	 * ibv_qp_to_qp_ex() answers.  From ibv_wr_start() to
	 * ibv_wr_complete() or ibv_wr_abort(), under sq_lock, the builder's
	 * own producer index (@wr_prod, published only by wr_complete), the
	 * slot last built (@wr_cur, NULL if none or it failed), whether it
	 * still lacks its UD address, and the first error (@wr_err, an errno
	 * value that wr_complete returns).
	 */
	int ex;
	uint32_t wr_prod;
	struct softcm_sq_wqe *wr_cur;
	int wr_need_ud;
	int wr_err;
};

static inline struct softcm_qp *to_sqp(struct ibv_qp *qp)
{
	return container_of(qp, struct softcm_qp, qp);
}

/* The send queue's slot of free-running index @idx. */
static inline struct softcm_sq_wqe *softcm_sq_slot(struct softcm_qp *sqp, uint32_t idx)
{
	return (struct softcm_sq_wqe *)(sqp->sq + (size_t)(idx & sqp->sq_mask) * sqp->sq_stride);
}

/* Whether slot @prod is free: the kernel took what was there. */
static inline int softcm_sq_room(struct softcm_qp *sqp, uint32_t prod)
{
	/* Pairs with the kernel's release of sq_cons: the slot is free. */
	uint32_t cons = __atomic_load_n(&sqp->kpage->sq_cons, __ATOMIC_ACQUIRE);

	return prod - cons < sqp->cap.max_send_wr;
}

/* IBV_WR_ATOMIC_CMP_AND_SWP or IBV_WR_ATOMIC_FETCH_AND_ADD */
static inline int softcm_wr_is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* ibv_cq.c: the context's operations, and a CQ for ibv_cq_ex.c */
int softcm_ctx_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int softcm_ctx_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct softcm_cq *softcm_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				   struct ibv_comp_channel *channel, int comp_vector);

/* ibv_qp.c: posting, and a QP and its send queue for ibv_qp_ex.c */
int softcm_ctx_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int softcm_ctx_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct softcm_qp *softcm_qp_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
void softcm_qp_attr_from_kern(struct ibv_qp_attr *attr, const struct softcm_qp_attr *k);
int softcm_sq_can_post(struct softcm_qp *sqp);
void softcm_sq_publish(struct softcm_qp *sqp, uint32_t prod);
void softcm_sq_kick(struct softcm_qp *sqp);

/* ibv_qp_ex.c, ibv_cq_ex.c: the context's extended operations */
struct ibv_qp *softcm_ctx_create_qp_ex(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr);
struct ibv_cq_ex *softcm_ctx_create_cq_ex(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr);

/* evbuf.c */
void softcm_id_event_acked(struct softcm_id_priv *priv, uint32_t mig_gen);
int softcm_evbuf_take(struct softcm_channel *sch, struct softcm_id_priv *priv,
		      struct softcm_evrec **rec);
void softcm_evrec_free(struct softcm_evrec *rec);
void softcm_evbuf_forget(struct softcm_channel *sch, struct softcm_id_priv *priv);
uint32_t softcm_evbuf_move(struct softcm_channel *from, struct softcm_channel *to,
			   struct softcm_id_priv *priv, int depart);
void softcm_evbuf_departed(struct softcm_channel *sch, struct softcm_id_priv *priv);
uint32_t softcm_evbuf_arrived(struct softcm_channel *from, struct softcm_channel *to,
			      struct softcm_id_priv *priv, uint32_t reported);
void softcm_evbuf_release(struct softcm_channel *to, struct softcm_id_priv *priv);

/* id.c */
int softcm_ioctl(struct softcm_id_priv *priv, unsigned long cmd, void *arg);
int softcm_query_addr_at(int fd, __u32 handle, int which, void *buf, __u32 *len);
int softcm_refresh_addr(struct softcm_id_priv *priv);
int softcm_addr_from_record(struct softcm_id_priv *priv, const struct softcm_event_full *rec);
void softcm_route_from_record(struct softcm_id_priv *priv, const struct softcm_event_full *rec);
int softcm_event_errno(const struct rdma_cm_event *event);
void softcm_ack_event(struct rdma_cm_event *event);
void softcm_put_event(struct softcm_id_priv *priv);
struct softcm_id_priv *softcm_id_alloc(struct rdma_event_channel *channel,
				       void *context, enum rdma_port_space ps);
void softcm_id_free(struct softcm_id_priv *priv);
int softcm_id_destroy(struct softcm_id_priv *priv);
int softcm_id_migrate(struct softcm_id_priv *priv, struct rdma_event_channel *channel);

/* verbs.c */
int softcm_qp_conn_resp(struct softcm_id_priv *priv);
int softcm_qp_err(struct softcm_id_priv *priv);
void softcm_ud_ah_attr(struct softcm_id_priv *priv, struct ibv_ah_attr *ah);

/* event.c */
int softcm_get_event(struct rdma_event_channel *channel, struct softcm_id_priv *priv,
		     struct rdma_cm_event **event);
int softcm_wait_sync(struct softcm_id_priv *priv);

/* resolve.c, conn.c: a command's arguments and aftermath, for batch.c */
void softcm_resolved_addr(struct softcm_id_priv *priv, const struct softcm_resolve_addr *c,
			  const struct sockaddr *dst_addr);
int softcm_connect_args(struct softcm_id_priv *priv, const struct rdma_conn_param *conn_param,
			struct softcm_connect *c);
int softcm_accept_args(struct softcm_id_priv *priv, const struct rdma_conn_param *conn_param,
		       struct softcm_accept *c);

#endif /* _SOFTCM_INTERNAL_H */
