// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The parts of librdmacm's API that need the verbs device: the device
 * list, the id's QP (created on id->verbs and moved to INIT with the
 * kernel's attributes, as librdmacm's rdma_create_qp()), its attributes
 * for each state (rdma_init_qp_attr()) and the transitions the CM makes
 * (RTR and RTS on the REP or before ours, which the kernel's ACCEPT makes
 * with SOFTCM_ACCEPT_QP; ERR on disconnect and rejection), which conn.c
 * and event.c call.  Shared receive queues are
 * not supported (EOPNOTSUPP); multicast, ECE and rdma_notify() fail with
 * ENOSYS (see softcm(7)).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

/*
 * The namespace's device, the only one; an empty list when the module has
 * no verbs.  Its context stays open after rdma_free_devices(), until the
 * process exits, as librdmacm's devices do (softcm_cmdev_keep()).
 */
SOFTCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(2, sizeof(*list));
	struct softcm_cmdev *dev;

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	dev = softcm_cmdev_get();
	if (dev) {
		softcm_cmdev_keep(dev);
		list[0] = dev->verbs;
	}
	if (num_devices)
		*num_devices = dev ? 1 : 0;
	return list;
}

SOFTCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	if (!list)
		return;
	if (list[0])
		softcm_cmdev_put(to_sctx(list[0])->cmdev);
	free(list);
}

/* The attributes the kernel gives for @attr->qp_state, from the id's CM state. */
SOFTCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				    int *qp_attr_mask)
{
	struct softcm_init_qp_attr c;

	if (!id || !qp_attr || !qp_attr_mask)
		return softcm_err(EINVAL);
	memset(&c, 0, sizeof(c));
	c.handle = to_priv(id)->handle;
	c.qp_state = qp_attr->qp_state;
	if (softcm_ioctl(to_priv(id), SOFTCM_IOCTL_INIT_QP_ATTR, &c))
		return -1;
	softcm_qp_attr_from_kern(qp_attr, &c.attr);
	*qp_attr_mask = c.attr_mask;
	return 0;
}

/* Move the id's QP to @state with the kernel's attributes; -1 and errno. */
static int modify_to(struct rdma_cm_id *id, enum ibv_qp_state state,
		     struct ibv_qp_attr *attr, int *mask)
{
	attr->qp_state = state;
	return rdma_init_qp_attr(id, attr, mask);
}

static int seterr(int ret)
{
	return ret ? softcm_err(ret) : 0;
}

/* As librdmacm's ucma_modify_qp_err(): no QP, nothing to do. */
int softcm_qp_err(struct softcm_id_priv *priv)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	if (!priv->id.qp)
		return 0;
	return seterr(ibv_modify_qp(priv->id.qp, &attr, IBV_QP_STATE));
}

/*
 * The active side's REP, with a QP: RTR and RTS, then the RTU, as
 * librdmacm's ucma_process_conn_resp(), in one ACCEPT: the kernel moves
 * the QP (INIT again, RTR, RTS, with the connection's depths, as
 * RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH ask) before the RTU, and
 * leaves it in ERR if it cannot.  On failure the QP goes to ERR here too,
 * for the errors found before the kernel touched it.
 */
int softcm_qp_conn_resp(struct softcm_id_priv *priv)
{
	struct ibv_qp *qp = priv->id.qp;
	struct softcm_accept c;
	int err;

	memset(&c, 0, sizeof(c));
	c.uid = (uintptr_t)priv;
	c.handle = priv->handle;
	c.flags = SOFTCM_ACCEPT_ESTABLISH;
	if (qp) {
		c.flags |= SOFTCM_ACCEPT_QP;
		c.qp_fd = qp->context->cmd_fd;
		c.qp_handle = qp->handle;
	}
	if (!softcm_ioctl(priv, SOFTCM_IOCTL_ACCEPT, &c))
		return 0;
	err = errno;
	softcm_qp_err(priv);
	return softcm_err(err);
}

/* An address's RoCEv2 GID: IPv4 v4-mapped, IPv6 as it is. */
static void addr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

/*
 * A UD event's address handle attributes, as rdma_cm gives them for
 * RoCE: the peer's GID, our address's GID table index, port 1, global.
 * All zero for an id without a device.
 */
void softcm_ud_ah_attr(struct softcm_id_priv *priv, struct ibv_ah_attr *ah)
{
	struct rdma_addr *a = &priv->id.route.addr;
	struct ibv_port_attr pattr;
	union ibv_gid sgid, gid;

	memset(ah, 0, sizeof(*ah));
	if (!priv->id.verbs)
		return;
	addr_gid(&a->src_addr, &sgid);
	addr_gid(&a->dst_addr, &ah->grh.dgid);
	ah->is_global = 1;
	ah->port_num = SOFTCM_PORT_NUM;
	ah->grh.hop_limit = priv->id.route.num_paths && priv->path.hop_limit ?
			    priv->path.hop_limit : 64;
	if (ibv_query_port(priv->id.verbs, SOFTCM_PORT_NUM, &pattr))
		return;
	for (int i = 0; i < pattr.gid_tbl_len; i++) {
		if (!ibv_query_gid(priv->id.verbs, SOFTCM_PORT_NUM, i, &gid) &&
		    !memcmp(&gid, &sgid, sizeof(gid))) {
			ah->grh.sgid_index = i;
			break;
		}
	}
}

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq && id->send_cq != id->recv_cq)
			ibv_destroy_cq(id->send_cq);
	} else if (id->send_cq) {
		ibv_destroy_cq(id->send_cq);
	}
	id->recv_cq = NULL;
	id->send_cq = NULL;
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
			ibv_destroy_comp_channel(id->send_cq_channel);
	} else if (id->send_cq_channel) {
		ibv_destroy_comp_channel(id->send_cq_channel);
	}
	id->recv_cq_channel = NULL;
	id->send_cq_channel = NULL;
}

/* A CQ with a channel of its own, for a QP created without one. */
static int create_cq(struct rdma_cm_id *id, uint32_t size, struct ibv_cq **cq,
		     struct ibv_comp_channel **channel)
{
	*channel = ibv_create_comp_channel(id->verbs);
	if (!*channel)
		return -1;
	*cq = ibv_create_cq(id->verbs, size, id, *channel, 0);
	return *cq ? 0 : -1;
}

/*
 * A UD QP goes straight to RTS (send PSN 0), a connected one to INIT with
 * the kernel's attributes, as librdmacm's ucma_init_ud_qp() and
 * ucma_init_conn_qp().  An errno value.
 */
static int init_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	if (modify_to(id, IBV_QPS_INIT, &attr, &mask))
		return errno;
	ret = ibv_modify_qp(qp, &attr, mask);
	if (ret || id->qp_type != IBV_QPT_UD)
		return ret;
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/*
 * As librdmacm's: on the id's device (EINVAL without one, or for a PD of
 * another context), with CQs and channels of the id's own for the CQs not
 * given (rdma_destroy_qp() destroys those), the QP in INIT.
 */
SOFTCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp;
	int ret;

	if (!id || !attr)
		return softcm_err(EINVAL);
	if (id->qp || !id->verbs)
		return softcm_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	} else if (attr->pd->context != id->verbs) {
		return softcm_err(EINVAL);
	}
	if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
	    (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
		return softcm_err(EINVAL);

	if (!attr->recv_cq && !id->recv_cq && attr->cap.max_recv_wr &&
	    create_cq(id, attr->cap.max_recv_wr, &id->recv_cq, &id->recv_cq_channel))
		goto err_cqs;
	if (!attr->send_cq && !id->send_cq && attr->cap.max_send_wr &&
	    create_cq(id, attr->cap.max_send_wr, &id->send_cq, &id->send_cq_channel))
		goto err_cqs;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = id->recv_cq;

	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp)
		goto err_cqs;
	ret = init_qp(id, qp);
	if (ret) {
		ibv_destroy_qp(qp);
		errno = ret;
		goto err_cqs;
	}
	id->pd = qp->pd;
	id->qp = qp;
	return 0;

err_cqs:
	ret = errno;
	destroy_cqs(id);
	return softcm_err(ret);
}

SOFTCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
				 struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int ret;

	if (!id || !qp_init_attr)
		return softcm_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &ex);
	memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	return ret;
}

/* The QP and the CQs rdma_create_qp() made for it. */
SOFTCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

SOFTCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr)
{
	return softcm_err(EOPNOTSUPP);
}

SOFTCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				     struct ibv_srq_init_attr_ex *attr)
{
	return softcm_err(EOPNOTSUPP);
}

/* There is never an SRQ to destroy. */
SOFTCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
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
