// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs commands of /dev/softcm, numbered from SOFTCM_VCMD_BASE
 * (uapi/linux/softcm.h documents them).  The same scheme as ucmd.c: one
 * table, clamped with array_index_nospec(), structs that grow at their
 * end.  A command that creates an object commits it once its reply is
 * copied out, and aborts it when the reply cannot be (nobody knows the
 * handle); until then no other thread can find it (uobj.c), so the abort
 * removes that object and no other.  One that creates a file descriptor
 * installs it only after the copy-out, so a failed reply leaves no
 * descriptor behind.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>
#include <uapi/linux/softcm.h>

#include "ah.h"
#include "cq.h"
#include "device.h"
#include "evfd.h"
#include "file.h"
#include "mr.h"
#include "pd.h"
#include "qp.h"
#include "uobj.h"
#include "vcmd.h"

union vcmd_args {
	struct softcm_query_device query_device;
	struct softcm_query_port query_port;
	struct softcm_query_gid query_gid;
	struct softcm_alloc_pd alloc_pd;
	struct softcm_destroy_obj destroy_obj;
	struct softcm_reg_mr reg_mr;
	struct softcm_create_comp_channel create_comp_channel;
	struct softcm_create_async_fd create_async_fd;
	struct softcm_create_cq create_cq;
	struct softcm_destroy_cq destroy_cq;
	struct softcm_req_notify_cq req_notify_cq;
	struct softcm_poll_cq poll_cq;
	struct softcm_create_qp create_qp;
	struct softcm_modify_qp modify_qp;
	struct softcm_query_qp query_qp;
	struct softcm_destroy_qp destroy_qp;
	struct softcm_post post;
	struct softcm_create_ah create_ah;
	struct softcm_doorbell doorbell;
};

struct vcmd {
	int (*handler)(struct softcm_file *sf, union vcmd_args *a,
		       struct softcm_newfd *nf);
	u16 size;	/* the struct as this kernel knows it */
	u16 min_size;	/* the struct in its first ABI version */
	/* a created object, committed or aborted after the copy-out */
	u8 obj_type;	/* enum softcm_uobj_type, 0 for none */
	u8 handle_off;	/* offsetof its handle in the struct */
	/* the reply says where an error stopped (bad_wr): copied out anyway */
	bool reply_on_error;
};

/* Each handler takes its own struct: adapt it to the table's signature. */
static int vcmd_device_query(struct softcm_file *sf, union vcmd_args *a,
			     struct softcm_newfd *nf)
{
	return softcm_device_query(sf, &a->query_device);
}

static int vcmd_device_query_port(struct softcm_file *sf, union vcmd_args *a,
				  struct softcm_newfd *nf)
{
	return softcm_device_query_port(sf, &a->query_port);
}

static int vcmd_device_query_gid(struct softcm_file *sf, union vcmd_args *a,
				 struct softcm_newfd *nf)
{
	return softcm_device_query_gid(sf, &a->query_gid);
}

static int vcmd_pd_alloc(struct softcm_file *sf, union vcmd_args *a,
			 struct softcm_newfd *nf)
{
	return softcm_pd_alloc(sf, &a->alloc_pd);
}

static int vcmd_pd_dealloc(struct softcm_file *sf, union vcmd_args *a,
			   struct softcm_newfd *nf)
{
	return softcm_pd_dealloc(sf, &a->destroy_obj);
}

static int vcmd_mr_reg(struct softcm_file *sf, union vcmd_args *a,
		       struct softcm_newfd *nf)
{
	return softcm_mr_reg(sf, &a->reg_mr);
}

static int vcmd_mr_dereg(struct softcm_file *sf, union vcmd_args *a,
			 struct softcm_newfd *nf)
{
	return softcm_mr_dereg(sf, &a->destroy_obj);
}

static int vcmd_evfd_create_comp_channel(struct softcm_file *sf, union vcmd_args *a,
					 struct softcm_newfd *nf)
{
	return softcm_evfd_create_comp_channel(sf, &a->create_comp_channel, nf);
}

static int vcmd_evfd_create_async(struct softcm_file *sf, union vcmd_args *a,
				  struct softcm_newfd *nf)
{
	return softcm_evfd_create_async(sf, &a->create_async_fd, nf);
}

static int vcmd_cq_create(struct softcm_file *sf, union vcmd_args *a,
			  struct softcm_newfd *nf)
{
	return softcm_cq_create(sf, &a->create_cq);
}

static int vcmd_cq_destroy(struct softcm_file *sf, union vcmd_args *a,
			   struct softcm_newfd *nf)
{
	return softcm_cq_destroy(sf, &a->destroy_cq);
}

static int vcmd_cq_req_notify(struct softcm_file *sf, union vcmd_args *a,
			      struct softcm_newfd *nf)
{
	return softcm_cq_req_notify(sf, &a->req_notify_cq);
}

static int vcmd_cq_poll(struct softcm_file *sf, union vcmd_args *a,
			struct softcm_newfd *nf)
{
	return softcm_cq_poll(sf, &a->poll_cq);
}

static int vcmd_qp_create(struct softcm_file *sf, union vcmd_args *a,
			  struct softcm_newfd *nf)
{
	return softcm_qp_create(sf, &a->create_qp);
}

static int vcmd_qp_modify(struct softcm_file *sf, union vcmd_args *a,
			  struct softcm_newfd *nf)
{
	return softcm_qp_modify(sf, &a->modify_qp);
}

static int vcmd_qp_query(struct softcm_file *sf, union vcmd_args *a,
			 struct softcm_newfd *nf)
{
	return softcm_qp_query(sf, &a->query_qp);
}

static int vcmd_qp_destroy(struct softcm_file *sf, union vcmd_args *a,
			   struct softcm_newfd *nf)
{
	return softcm_qp_destroy(sf, &a->destroy_qp);
}

static int vcmd_qp_post_send(struct softcm_file *sf, union vcmd_args *a,
			     struct softcm_newfd *nf)
{
	return softcm_qp_post_send(sf, &a->post);
}

static int vcmd_qp_post_recv(struct softcm_file *sf, union vcmd_args *a,
			     struct softcm_newfd *nf)
{
	return softcm_qp_post_recv(sf, &a->post);
}

static int vcmd_qp_doorbell(struct softcm_file *sf, union vcmd_args *a,
			    struct softcm_newfd *nf)
{
	return softcm_qp_doorbell(sf, &a->doorbell);
}

static int vcmd_ah_create(struct softcm_file *sf, union vcmd_args *a,
			  struct softcm_newfd *nf)
{
	return softcm_ah_create(sf, &a->create_ah);
}

static int vcmd_ah_destroy(struct softcm_file *sf, union vcmd_args *a,
			   struct softcm_newfd *nf)
{
	return softcm_ah_destroy(sf, &a->destroy_obj);
}

#define VCMD(name, fn, type)						\
	[SOFTCM_VCMD_##name - SOFTCM_VCMD_BASE] = {			\
		.handler = vcmd_##fn,					\
		.size = sizeof(struct type), .min_size = sizeof(struct type) \
	}

#define VCMD_CREATE(name, fn, type, utype)				\
	[SOFTCM_VCMD_##name - SOFTCM_VCMD_BASE] = {			\
		.handler = vcmd_##fn,					\
		.size = sizeof(struct type), .min_size = sizeof(struct type), \
		.obj_type = utype, .handle_off = offsetof(struct type, handle) \
	}

/* A create command whose struct grew since ABI 1: @first bytes then. */
#define VCMD_CREATE_GROWN(name, fn, type, utype, first)			\
	[SOFTCM_VCMD_##name - SOFTCM_VCMD_BASE] = {			\
		.handler = vcmd_##fn,					\
		.size = sizeof(struct type), .min_size = first,		\
		.obj_type = utype, .handle_off = offsetof(struct type, handle) \
	}

#define VCMD_POST(name, fn)						\
	[SOFTCM_VCMD_##name - SOFTCM_VCMD_BASE] = {			\
		.handler = vcmd_##fn,					\
		.size = sizeof(struct softcm_post),			\
		.min_size = sizeof(struct softcm_post),			\
		.reply_on_error = true					\
	}

static const struct vcmd vcmds[] = {
	VCMD(QUERY_DEVICE, device_query, softcm_query_device),
	VCMD(QUERY_PORT, device_query_port, softcm_query_port),
	VCMD(QUERY_GID, device_query_gid, softcm_query_gid),
	VCMD_CREATE(ALLOC_PD, pd_alloc, softcm_alloc_pd, SOFTCM_UOBJ_PD),
	VCMD(DEALLOC_PD, pd_dealloc, softcm_destroy_obj),
	VCMD_CREATE(REG_MR, mr_reg, softcm_reg_mr, SOFTCM_UOBJ_MR),
	VCMD(DEREG_MR, mr_dereg, softcm_destroy_obj),
	VCMD(CREATE_COMP_CHANNEL, evfd_create_comp_channel,
	     softcm_create_comp_channel),
	VCMD(CREATE_ASYNC_FD, evfd_create_async, softcm_create_async_fd),
	VCMD_CREATE_GROWN(CREATE_CQ, cq_create, softcm_create_cq, SOFTCM_UOBJ_CQ, 24),
	VCMD(DESTROY_CQ, cq_destroy, softcm_destroy_cq),
	VCMD(REQ_NOTIFY_CQ, cq_req_notify, softcm_req_notify_cq),
	VCMD(POLL_CQ, cq_poll, softcm_poll_cq),
	VCMD_CREATE_GROWN(CREATE_QP, qp_create, softcm_create_qp, SOFTCM_UOBJ_QP, 64),
	VCMD(MODIFY_QP, qp_modify, softcm_modify_qp),
	VCMD(QUERY_QP, qp_query, softcm_query_qp),
	VCMD(DESTROY_QP, qp_destroy, softcm_destroy_qp),
	VCMD_POST(POST_SEND, qp_post_send),
	VCMD_POST(POST_RECV, qp_post_recv),
	VCMD_CREATE(CREATE_AH, ah_create, softcm_create_ah, SOFTCM_UOBJ_AH),
	VCMD(DESTROY_AH, ah_destroy, softcm_destroy_obj),
	VCMD(DOORBELL, qp_doorbell, softcm_doorbell),
};

static_assert(ARRAY_SIZE(vcmds) == SOFTCM_VCMD_END - SOFTCM_VCMD_BASE);

/* The ABI's layouts, the same for 32- and 64-bit userspace. */
static_assert(sizeof(struct softcm_query_device) == 112);
static_assert(sizeof(struct softcm_query_port) == 40);
static_assert(sizeof(struct softcm_query_gid) == 32);
static_assert(sizeof(struct softcm_alloc_pd) == 8);
static_assert(sizeof(struct softcm_destroy_obj) == 8);
static_assert(sizeof(struct softcm_reg_mr) == 48);
static_assert(sizeof(struct softcm_create_comp_channel) == 8);
static_assert(sizeof(struct softcm_create_async_fd) == 8);
static_assert(sizeof(struct softcm_comp_event) == 16);
static_assert(sizeof(struct softcm_async_event) == 16);
static_assert(sizeof(struct softcm_create_cq) == 72);
static_assert(sizeof(struct softcm_destroy_cq) == 16);
static_assert(sizeof(struct softcm_req_notify_cq) == 8);
static_assert(sizeof(struct softcm_wc) == 48);
static_assert(sizeof(struct softcm_poll_cq) == 16);
static_assert(sizeof(struct softcm_ah_attr) == 32);
static_assert(sizeof(struct softcm_qp_attr) == 144);
static_assert(sizeof(struct softcm_create_qp) == 128);
static_assert(sizeof(struct softcm_modify_qp) == 152);
static_assert(sizeof(struct softcm_query_qp) == 184);
static_assert(sizeof(struct softcm_destroy_qp) == 8);
static_assert(sizeof(struct softcm_sge) == 16);
static_assert(sizeof(struct softcm_send_wr) == 56);
static_assert(sizeof(struct softcm_recv_wr) == 16);
static_assert(sizeof(struct softcm_post) == 32);
static_assert(sizeof(struct softcm_create_ah) == 40);
static_assert(sizeof(struct softcm_doorbell) == 8);
static_assert(sizeof(struct softcm_ring_map) == 16);
static_assert(sizeof(struct softcm_ring_info) == 16);

static u32 vcmd_handle(const struct vcmd *c, const union vcmd_args *a)
{
	u32 handle;

	memcpy(&handle, (const u8 *)a + c->handle_off, sizeof(handle));
	return handle;
}

long softcm_vcmd_ioctl(struct softcm_file *sf, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	unsigned int nr = _IOC_NR(cmd) - SOFTCM_VCMD_BASE;
	size_t usize = _IOC_SIZE(cmd);
	struct softcm_newfd nf = { .fd = -1 };
	const struct vcmd *c;
	union vcmd_args a;
	int ret;

	if (_IOC_TYPE(cmd) != SOFTCM_IOCTL_TYPE ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    _IOC_NR(cmd) < SOFTCM_VCMD_BASE || nr >= ARRAY_SIZE(vcmds))
		return -ENOTTY;
	c = &vcmds[array_index_nospec(nr, ARRAY_SIZE(vcmds))];

	if (usize < c->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&a, c->size, uarg, usize);
	if (ret)
		return ret;

	ret = c->handler(sf, &a, &nf);
	if (ret) {
		/* a handler that failed after making its descriptor */
		if (nf.async)
			softcm_evfd_async_done(sf, nf.async, false);
		if (nf.file) {
			fput(nf.file);
			put_unused_fd(nf.fd);
		}
		if (c->reply_on_error &&
		    copy_to_user(uarg, &a, min_t(size_t, usize, c->size)))
			return -EFAULT;
		return ret;
	}
	if (copy_to_user(uarg, &a, min_t(size_t, usize, c->size))) {
		if (c->obj_type)
			softcm_uobj_abort(&sf->uobjs, c->obj_type, vcmd_handle(c, &a));
		if (nf.async)
			softcm_evfd_async_done(sf, nf.async, false);
		if (nf.file) {
			fput(nf.file);
			put_unused_fd(nf.fd);
		}
		return -EFAULT;
	}
	if (c->obj_type)
		softcm_uobj_commit(&sf->uobjs, c->obj_type, vcmd_handle(c, &a));
	if (nf.async)
		softcm_evfd_async_done(sf, nf.async, true);
	if (nf.file)
		fd_install(nf.fd, nf.file);
	return 0;
}
