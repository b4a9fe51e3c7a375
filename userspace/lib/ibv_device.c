// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * libibverbs' devices and contexts: the namespace's one device, "softcm0",
 * a CA with one RoCEv2 port; contexts with their operations, queries of
 * the device, its port, GIDs and P_Keys, and async events.  And the cm
 * device: the context that the rdma_cm ids of a namespace share, opened
 * when the first of them needs it (as librdmacm's ucma_init_device()) and
 * closed when its last user has gone, with the PD librdmacm allocates
 * for each device.  Return conventions are libibverbs': some calls return
 * an errno value, others -1 or NULL with errno set.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "softcm.h"

/* verbs.h turns these names into inline wrappers; we define the functions. */
#undef ibv_query_port

static int post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad)
{
	*bad = wr;
	return EOPNOTSUPP;
}

static int bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	return EOPNOTSUPP;
}

static int dealloc_mw(struct ibv_mw *mw)
{
	return EOPNOTSUPP;
}

static int query_port(struct ibv_context *ctx, uint8_t port_num,
		      struct ibv_port_attr *attr, size_t len);
static int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size);

/*
 * The device, one object for the process, as libibverbs keeps one per
 * device: every list names it and every context's ->device is it, so a
 * program may compare them and use one after the list is freed.  It is
 * the size of rdma-core's struct verbs_device, whose ibv_device comes
 * first and the provider's operations after it, zeroed: a provider's
 * direct-verbs helper linked into the process (mlx5dv_is_supported()
 * reads verbs_get_device(dev)->ops) finds no operations of its own, not
 * memory past the end.  One object serves every namespace: the device of
 * each is "softcm0", and what differs (the node GUID) is asked of the
 * context's own.
 */
static struct {
	struct ibv_device dev;
	/* verbs_device's ops, refcount, list entry, sysfs, core_support */
	void *verbs_device_rest[8];
} softcm_device = {
	.dev = {
		.node_type = IBV_NODE_CA,
		.transport_type = IBV_TRANSPORT_IB,
		.name = "softcm0",
		.dev_name = SOFTCM_DEVICE_NAME,
		.dev_path = "/dev/" SOFTCM_DEVICE_NAME,
		.ibdev_path = "/sys/class/misc/" SOFTCM_DEVICE_NAME,
	},
};

/*
 * A new context: a new open of /dev/softcm in the calling thread's
 * namespace, its device attributes and its async event descriptor.
 * NULL with errno: ENODEV without the module, EPROTONOSUPPORT for another
 * ABI, the first verbs command's error for a module without verbs.
 */
static struct ibv_context *open_context(int internal)
{
	struct softcm_create_async_fd a = { 0 };
	struct softcm_query_device q;
	struct softcm_context *sctx;
	struct ibv_context *ctx;
	int err;

	if (softcm_check_abi())
		return NULL;
	sctx = calloc(1, sizeof(*sctx));
	if (!sctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = &sctx->vctx.context;
	ctx->cmd_fd = open("/dev/" SOFTCM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (ctx->cmd_fd < 0) {
		err = errno == ENOENT ? ENODEV : errno;
		goto err_free;
	}
	memset(&q, 0, sizeof(q));
	if (softcm_vioctl(ctx, SOFTCM_IOCTL_QUERY_DEVICE, &q) ||
	    softcm_vioctl(ctx, SOFTCM_IOCTL_CREATE_ASYNC_FD, &a)) {
		err = errno;
		goto err_close;
	}
	ctx->async_fd = a.fd;

	sctx->node_guid = q.attr.node_guid;
	sctx->internal = internal;
	sctx->users = 1;
	ctx->device = &softcm_device.dev;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->ops.poll_cq = softcm_ctx_poll_cq;
	ctx->ops.req_notify_cq = softcm_ctx_req_notify_cq;
	ctx->ops.post_send = softcm_ctx_post_send;
	ctx->ops.post_recv = softcm_ctx_post_recv;
	ctx->ops.post_srq_recv = post_srq_recv;
	ctx->ops.bind_mw = bind_mw;
	ctx->ops.dealloc_mw = dealloc_mw;
	/*
	 * verbs.h's inlines reach these through verbs_get_ctx_op(), which
	 * checks abi_compat and that sz covers the member; the others stay
	 * NULL and those inlines answer EOPNOTSUPP.
	 */
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	sctx->vctx.sz = sizeof(sctx->vctx);
	sctx->vctx.query_port = query_port;
	sctx->vctx.create_qp_ex = softcm_ctx_create_qp_ex;
	sctx->vctx.create_cq_ex = softcm_ctx_create_cq_ex;
	sctx->vctx.query_device_ex = query_device_ex;
	return ctx;

err_close:
	close(ctx->cmd_fd);
err_free:
	free(sctx);
	errno = err;
	return NULL;
}

/*
 * The device while a module of this library's ABI is loaded (every such
 * module has verbs, and a device in every namespace); NULL and ENOSYS
 * without one, as libibverbs without uverbs.  Nothing is opened, as
 * libibverbs lists from sysfs: a /dev/softcm this process may not open
 * (EACCES, EMFILE) is listed, and ibv_open_device() says why it fails.
 * The list is an array alone: its device outlives it (softcm_device).
 */
SOFTCM_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;

	if (softcm_check_abi()) {
		errno = ENOSYS;
		return NULL;
	}
	list = calloc(2, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = &softcm_device.dev;
	if (num_devices)
		*num_devices = 1;
	return list;
}

SOFTCM_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

SOFTCM_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

/* Available with the kernel's netlink only; softcm has none to number. */
SOFTCM_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return -1;
}

/*
 * The calling thread's namespace's node GUID, asked of the kernel each
 * time (a thread may change namespaces): one open and one QUERY_DEVICE,
 * no context.  0 with errno when it cannot be asked.
 */
SOFTCM_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct softcm_query_device q;
	int fd, err = 0;

	if (softcm_check_abi())
		return 0;
	fd = open("/dev/" SOFTCM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		errno = errno == ENOENT ? ENODEV : errno;
		return 0;
	}
	memset(&q, 0, sizeof(q));
	if (ioctl(fd, SOFTCM_IOCTL_QUERY_DEVICE, &q))
		err = errno;
	close(fd);
	if (err) {
		errno = err;
		return 0;
	}
	return q.attr.node_guid;
}

SOFTCM_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	if (!device || strcmp(device->name, "softcm0")) {
		errno = ENODEV;
		return NULL;
	}
	return open_context(0);
}

/* As libibverbs: what the application left on the context goes with it. */
SOFTCM_EXPORT int ibv_close_device(struct ibv_context *context)
{
	softcm_ctx_free(to_sctx(context));
	return 0;
}

/* Nothing to do: the kernel pins memory long-term, fork() or not. */
SOFTCM_EXPORT int ibv_fork_init(void)
{
	return 0;
}

SOFTCM_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

static void device_attr_from_kern(struct ibv_device_attr *attr,
				  const struct softcm_device_attr *k)
{
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%u.%u.%u",
		 (unsigned int)(k->fw_ver >> 32), (unsigned int)(k->fw_ver >> 16) & 0xffff,
		 (unsigned int)k->fw_ver & 0xffff);
	attr->node_guid = k->node_guid;
	attr->sys_image_guid = k->sys_image_guid;
	attr->max_mr_size = k->max_mr_size;
	attr->page_size_cap = k->page_size_cap;
	attr->vendor_id = k->vendor_id;
	attr->vendor_part_id = k->vendor_part_id;
	attr->hw_ver = k->hw_ver;
	attr->max_qp = k->max_qp;
	attr->max_qp_wr = k->max_qp_wr;
	attr->device_cap_flags = k->device_cap_flags;
	attr->max_sge = k->max_sge;
	attr->max_sge_rd = k->max_sge;
	attr->max_cq = k->max_cq;
	attr->max_cqe = k->max_cqe;
	attr->max_mr = k->max_mr;
	attr->max_pd = k->max_pd;
	attr->max_qp_rd_atom = k->max_qp_rd_atom;
	attr->max_res_rd_atom = k->max_qp_rd_atom * k->max_qp;
	attr->max_qp_init_rd_atom = k->max_qp_init_rd_atom;
	/* as rdma_rxe: atomics are atomic against each other, on any QP */
	attr->atomic_cap = IBV_ATOMIC_HCA;
	attr->max_ah = k->max_ah;
	attr->max_pkeys = k->max_pkeys;
	attr->local_ca_ack_delay = k->local_ca_ack_delay;
	attr->phys_port_cnt = k->phys_port_cnt;
}

/* An errno value, as libibverbs' query_device. */
SOFTCM_EXPORT int ibv_query_device(struct ibv_context *context,
				   struct ibv_device_attr *attr)
{
	struct softcm_query_device q;

	memset(&q, 0, sizeof(q));
	if (softcm_vioctl(context, SOFTCM_IOCTL_QUERY_DEVICE, &q))
		return errno;
	device_attr_from_kern(attr, &q.attr);
	return 0;
}

/*
 * ibv_query_device_ex() through the context: ibv_query_device()'s
 * attributes, then the extended ones softcm has (all 64 bits of the
 * capability flags, the port count); the rest (ODP, time stamps, TSO,
 * RSS, tag matching, device memory...) read 0, none supported.  An
 * errno value; @attr_size bytes of @attr, for an older, shorter struct.
 */
static int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct softcm_query_device q;
	struct ibv_device_attr_ex a;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&q, 0, sizeof(q));
	if (softcm_vioctl(ctx, SOFTCM_IOCTL_QUERY_DEVICE, &q))
		return errno;
	memset(&a, 0, sizeof(a));
	device_attr_from_kern(&a.orig_attr, &q.attr);
	a.device_cap_flags_ex = q.attr.device_cap_flags;
	a.phys_port_cnt_ex = q.attr.phys_port_cnt;
	if (attr_size > sizeof(a))
		memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

/* @len bytes of @attr: the application's struct may be an older, shorter one. */
static int query_port(struct ibv_context *ctx, uint8_t port_num,
		      struct ibv_port_attr *attr, size_t len)
{
	struct softcm_query_port q = { .port_num = port_num };
	const struct softcm_port_attr *k = &q.attr;
	struct ibv_port_attr a;

	if (softcm_vioctl(ctx, SOFTCM_IOCTL_QUERY_PORT, &q))
		return errno;
	memset(&a, 0, sizeof(a));
	a.state = k->state;
	a.max_mtu = k->max_mtu;
	a.active_mtu = k->active_mtu;
	a.gid_tbl_len = k->gid_tbl_len;
	a.port_cap_flags = k->port_cap_flags;
	a.max_msg_sz = k->max_msg_sz;
	a.pkey_tbl_len = k->pkey_tbl_len;
	a.max_vl_num = 1;
	a.active_width = k->active_width;
	a.active_speed = k->active_speed;
	a.phys_state = k->phys_state;
	a.link_layer = k->link_layer;
	/* a newer header's larger struct: its fields we do not know read 0 */
	if (len > sizeof(a))
		memset(attr, 0, len);
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/*
 * The symbol programs call when verbs_get_ctx_op() finds no query_port,
 * with libibverbs 1.1's struct, which ends before port_cap_flags2.
 */
SOFTCM_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
				 struct _compat_ibv_port_attr *port_attr)
{
	return query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			  offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* An empty entry reads as zeroes, as libibverbs; -1 with errno. */
SOFTCM_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
				int index, union ibv_gid *gid)
{
	struct softcm_query_gid q = { .port_num = port_num, .index = index };

	if (index < 0)
		return softcm_err(EINVAL);
	if (softcm_vioctl(context, SOFTCM_IOCTL_QUERY_GID, &q))
		return -1;
	memcpy(gid->raw, q.gid, sizeof(gid->raw));
	return 0;
}

/* One entry; ENODATA for an empty one, as libibverbs.  An errno value. */
static int query_gid_entry(struct ibv_context *context, uint32_t port_num, uint32_t index,
			   struct ibv_gid_entry *entry)
{
	struct softcm_query_gid q = { .port_num = port_num, .index = index };

	if (port_num > 0xff)
		return EINVAL;
	if (softcm_vioctl(context, SOFTCM_IOCTL_QUERY_GID, &q))
		return errno;
	if (q.gid_type == SOFTCM_GID_TYPE_NONE)
		return ENODATA;
	memset(entry, 0, sizeof(*entry));
	memcpy(entry->gid.raw, q.gid, sizeof(entry->gid.raw));
	entry->gid_index = index;
	entry->port_num = port_num;
	entry->gid_type = IBV_GID_TYPE_ROCE_V2;
	entry->ndev_ifindex = q.ifindex;
	return 0;
}

/* ibv_query_gid_ex(): an errno value, as libibverbs. */
SOFTCM_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				    uint32_t gid_index, struct ibv_gid_entry *entry,
				    uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	if (flags || entry_size < sizeof(e))
		return EINVAL;
	ret = query_gid_entry(context, port_num, gid_index, &e);
	if (!ret)
		memcpy(entry, &e, sizeof(e));
	return ret;
}

/*
 * An entry's type, as rdma-core's sysfs names it (driver.h's enum
 * ibv_gid_type_sysfs): what ibv_devinfo prints beside each GID.  Exported
 * by the compat library only, in rdma-core's private version
 * (userspace/compat/compat.map).  An empty entry reads as IB/RoCE v1, as
 * libibverbs answers for one; 0, or -1 with errno.
 */
enum { GID_TYPE_SYSFS_IB_ROCE_V1, GID_TYPE_SYSFS_ROCE_V2 };

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       unsigned int *type);
SOFTCM_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				     unsigned int index, unsigned int *type)
{
	struct ibv_gid_entry e;
	int ret = query_gid_entry(context, port_num, index, &e);

	if (ret == ENODATA) {
		*type = GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret)
		return softcm_err(ret);
	*type = GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

/* ibv_query_gid_table(): the valid entries, or a negative errno value. */
SOFTCM_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					   struct ibv_gid_entry *entries, size_t max_entries,
					   uint32_t flags, size_t entry_size)
{
	struct ibv_port_attr pattr;
	struct ibv_gid_entry e;
	size_t n = 0;
	int ret;

	if (flags || entry_size < sizeof(e))
		return -EINVAL;
	ret = query_port(context, SOFTCM_PORT_NUM, &pattr, sizeof(pattr));
	if (ret)
		return -ret;
	for (int i = 0; i < pattr.gid_tbl_len; i++) {
		ret = query_gid_entry(context, SOFTCM_PORT_NUM, i, &e);
		if (ret == ENODATA)
			continue;
		if (ret)
			return -ret;
		if (n == max_entries)
			return -EINVAL;
		memcpy((char *)entries + n * entry_size, &e, sizeof(e));
		n++;
	}
	return n;
}

/*
 * RoCE has one P_Key, the default full member 0xffff at index 0.  Another
 * index is -1 with ENOENT, as libibverbs finding no sysfs file for it.
 */
SOFTCM_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
				 int index, __be16 *pkey)
{
	if (port_num != SOFTCM_PORT_NUM || index != 0)
		return softcm_err(ENOENT);
	*pkey = htobe16(0xffff);
	return 0;
}

SOFTCM_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
				     __be16 pkey)
{
	if (port_num != SOFTCM_PORT_NUM || be16toh(pkey) != 0xffff)
		return softcm_err(ENOENT);
	return 0;
}

static int is_qp_event(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return 1;
	default:
		return 0;
	}
}

/* Blocks unless async_fd was made O_NONBLOCK; 0 or -1 with errno. */
SOFTCM_EXPORT int ibv_get_async_event(struct ibv_context *context,
				      struct ibv_async_event *event)
{
	struct softcm_async_event kev;
	ssize_t len;

	len = read(context->async_fd, &kev, sizeof(kev));
	if (len != sizeof(kev))
		return softcm_err(len < 0 ? errno : EIO);
	memset(event, 0, sizeof(*event));
	event->event_type = kev.event_type;
	if (kev.event_type == IBV_EVENT_CQ_ERR)
		event->element.cq = (struct ibv_cq *)(uintptr_t)kev.uid;
	else if (is_qp_event(kev.event_type))
		event->element.qp = (struct ibv_qp *)(uintptr_t)kev.uid;
	else
		event->element.port_num = SOFTCM_PORT_NUM;
	return 0;
}

/* A CQ or QP destroy waits for its events to be acknowledged. */
SOFTCM_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (event->event_type == IBV_EVENT_CQ_ERR && event->element.cq) {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
	} else if (is_qp_event(event->event_type) && event->element.qp) {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
	}
}

/*
 * The cm devices, one per network namespace a thread of the process used
 * ids in.  A namespace is named by its inode, as /proc/thread-self/ns/net
 * shows it: the id's thread is in the namespace its channel was opened in.
 */
static pthread_mutex_t cmdev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct softcm_cmdev *cmdevs;

static void cmdev_unlink(struct softcm_cmdev *dev)
{
	struct softcm_cmdev **p;

	for (p = &cmdevs; *p != dev; p = &(*p)->next)
		;
	*p = dev->next;
	dev->unlinked = 1;
}

/*
 * The context's last user went, once: nobody takes a context whose users
 * reached 0 (softcm_ctx_hold_unless_zero()), so the cm device goes with
 * it; a softcm_cmdev_get() that found it dying has unlinked it already.
 */
static void cmdev_ctx_last_put(struct softcm_context *sctx)
{
	struct softcm_cmdev *dev = sctx->cmdev;

	pthread_mutex_lock(&cmdev_lock);
	if (!dev->unlinked)
		cmdev_unlink(dev);
	pthread_mutex_unlock(&cmdev_lock);
	softcm_ctx_free(sctx);
	free(dev);
}

/* The depths librdmacm's cma_dev takes from the device's attributes. */
static void set_depths(struct softcm_cmdev *dev)
{
	struct ibv_device_attr attr;

	dev->max_resp_res = SOFTCM_MAX_RD_ATOMIC;
	dev->max_init_depth = SOFTCM_MAX_RD_ATOMIC;
	if (ibv_query_device(dev->verbs, &attr))
		return;
	dev->max_resp_res = attr.max_qp_rd_atom < 0xff ? attr.max_qp_rd_atom : 0xfe;
	dev->max_init_depth = attr.max_qp_init_rd_atom < 0xff ? attr.max_qp_init_rd_atom : 0xfe;
}

uint8_t softcm_max_resp_res(const struct softcm_id_priv *priv)
{
	return priv->cmdev ? priv->cmdev->max_resp_res : SOFTCM_MAX_RD_ATOMIC;
}

uint8_t softcm_max_init_depth(const struct softcm_id_priv *priv)
{
	return priv->cmdev ? priv->cmdev->max_init_depth : SOFTCM_MAX_RD_ATOMIC;
}

/* The calling thread's namespace's cm device, with a reference; NULL, errno. */
struct softcm_cmdev *softcm_cmdev_get(void)
{
	struct softcm_cmdev *dev;
	struct stat st;
	int err;

	if (stat("/proc/thread-self/ns/net", &st))
		return NULL;
	pthread_mutex_lock(&cmdev_lock);
	for (dev = cmdevs; dev; dev = dev->next)
		if (dev->ns_dev == st.st_dev && dev->ns_ino == st.st_ino)
			break;
	if (dev && (dev->refcnt || dev->pd))
		goto found;	/* in use, or its PD still held (see put) */
	if (dev && !softcm_ctx_hold_unless_zero(dev->verbs)) {
		/* Its last user is closing it: leave it to that, open anew. */
		cmdev_unlink(dev);
		dev = NULL;
	}
	if (dev) {
		/* Kept alive by the application's objects: take it again. */
		dev->pd = ibv_alloc_pd(dev->verbs);
		if (!dev->pd) {
			err = errno;
			pthread_mutex_unlock(&cmdev_lock);
			softcm_ctx_put(dev->verbs);
			errno = err;
			return NULL;
		}
		goto found;
	}

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		err = ENOMEM;
		goto err_unlock;
	}
	dev->verbs = open_context(1);
	if (!dev->verbs) {
		err = errno;
		goto err_free;
	}
	dev->pd = ibv_alloc_pd(dev->verbs);
	if (!dev->pd) {
		err = errno;
		goto err_close;
	}
	dev->ns_dev = st.st_dev;
	dev->ns_ino = st.st_ino;
	set_depths(dev);
	to_sctx(dev->verbs)->cmdev = dev;
	to_sctx(dev->verbs)->last_put = cmdev_ctx_last_put;
	dev->next = cmdevs;
	cmdevs = dev;
found:
	dev->refcnt++;
	pthread_mutex_unlock(&cmdev_lock);
	return dev;

err_close:
	softcm_ctx_free(to_sctx(dev->verbs));
err_free:
	free(dev);
err_unlock:
	pthread_mutex_unlock(&cmdev_lock);
	errno = err;
	return NULL;
}

/*
 * The last id gone, its PD goes, as librdmacm's ucma_put_device(), and
 * its hold on the context: the context closes with the last object the
 * application made on it (cmdev_ctx_last_put()).  A PD still in use (a
 * QP the application did not destroy) stays, with the hold, for the next
 * id.  The context's users cannot reach 0 under the lock: the hold is
 * dropped after it.
 */
void softcm_cmdev_put(struct softcm_cmdev *dev)
{
	int drop = 0;

	if (!dev)
		return;
	pthread_mutex_lock(&cmdev_lock);
	if (!--dev->refcnt && !ibv_dealloc_pd(dev->pd)) {
		dev->pd = NULL;
		drop = 1;
	}
	pthread_mutex_unlock(&cmdev_lock);
	if (drop)
		softcm_ctx_put(dev->verbs);
}

/*
 * A device rdma_get_devices() handed out stays open until the process
 * exits, as librdmacm keeps its devices: its context is the application's
 * to use after rdma_free_devices(), and later ids get the same one.  One
 * reference, taken once, never put.
 */
void softcm_cmdev_keep(struct softcm_cmdev *dev)
{
	pthread_mutex_lock(&cmdev_lock);
	if (!dev->kept) {
		dev->kept = 1;
		dev->refcnt++;
	}
	pthread_mutex_unlock(&cmdev_lock);
}

/*
 * A request's new id takes its listener's device, when it has one: the
 * same namespace's (the listener's channel's), found without the
 * namespace lookup's stat(2), one system call less per connection.
 */
void softcm_cmdev_share(struct softcm_id_priv *priv, const struct softcm_id_priv *from)
{
	struct softcm_cmdev *dev = from->cmdev;

	if (!dev || priv->cmdev)
		return;
	pthread_mutex_lock(&cmdev_lock);
	dev->refcnt++;
	pthread_mutex_unlock(&cmdev_lock);
	priv->cmdev = dev;
	priv->id.verbs = dev->verbs;
	priv->id.pd = dev->pd;
	priv->id.port_num = SOFTCM_PORT_NUM;
}

/*
 * Give an id the namespace's device, as librdmacm's ucma_get_device():
 * id->verbs, id->pd and id->port_num.  The device is opened by the calling
 * thread, so only a thread in the namespace of the id's channel can give
 * it one: an id used from another namespace (one thread driving ids of
 * several) gets none, rather than a device of the wrong namespace.
 * Without a device (that case, or a module without verbs) the id goes on
 * without, as before devices existed: 0 either way.
 */
int softcm_cmdev_attach(struct softcm_id_priv *priv)
{
	struct softcm_channel *sch = to_schannel(priv->id.channel);
	struct softcm_cmdev *dev;
	struct stat st;

	if (priv->cmdev)
		return 0;
	if (stat("/proc/thread-self/ns/net", &st) || st.st_dev != sch->ns_dev ||
	    st.st_ino != sch->ns_ino)
		return 0;
	dev = softcm_cmdev_get();
	if (!dev)
		return 0;
	priv->cmdev = dev;
	priv->id.verbs = dev->verbs;
	priv->id.pd = dev->pd;
	priv->id.port_num = SOFTCM_PORT_NUM;
	return 0;
}
