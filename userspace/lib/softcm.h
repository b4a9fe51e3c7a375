/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * libsoftcm: softcm-specific additions.  The rdma_* calls themselves are
 * declared by rdma-core's <rdma/rdma_cma.h>, which libsoftcm implements.
 *
 * Every call returns 0 (or a non-negative value) on success and -1 with
 * errno set on failure.
 */
#ifndef _SOFTCM_H
#define _SOFTCM_H

#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rdma_cm_id;

/*
 * Kept for compatibility; it changes nothing.  rdma_set_option(id,
 * RDMA_OPTION_ID, SOFTCM_OPTION_ID_CONNECT_RESPONSE, &v, sizeof(int))
 * succeeds, and every active id without a QP gets
 * RDMA_CM_EVENT_CONNECT_RESPONSE and is established by rdma_establish(),
 * as under librdmacm.
 * Numbered away from rdma-core's RDMA_OPTION_ID_* values.
 */
#define SOFTCM_OPTION_ID_CONNECT_RESPONSE	0x100

/**
 * softcm_get_abi_version - ABI version of the loaded softcm module
 *
 * Return: the version published in /sys/class/misc/softcm/abi_version,
 * or -1 with errno ENODEV when the module is not loaded, or EPROTO when the
 * file does not hold a version number.
 */
int softcm_get_abi_version(void);

/**
 * softcm_check_abi - whether this library can drive the loaded module
 *
 * Return: 0 when the module's ABI version is the one the library was built
 * for; -1 with errno ENODEV (module not loaded) or EPROTONOSUPPORT (another
 * ABI version).
 */
int softcm_check_abi(void);

/**
 * softcm_getpeername - the peer address of an id, as getpeername(2)
 * @id: the id
 * @addr: buffer for the address
 * @addrlen: in: size of @addr; out: the address's full size (larger than
 *           the buffer when the address was truncated)
 *
 * Asks the kernel, unlike rdma_get_peer_addr(), which reads the library's
 * copy (librdmacm's semantics: set by rdma_resolve_addr() and on events,
 * left as it was when the connection ends).  As a TCP socket, an id has a
 * peer only while its connection is established (a UD id: once its SIDR
 * exchange completed or was answered).
 * Errors in Linux's order: ENOTCONN before the buffers are checked.  A
 * NULL @addr with *@addrlen 0 succeeds, copying nothing.  *@addrlen is
 * read and written in userspace: an unreadable or unwritable @addrlen is
 * SIGSEGV, not EFAULT.
 *
 * Return: 0, or -1 with errno EBADF (@id is NULL), ENOTCONN (no connection
 * established), EFAULT (@addrlen NULL, @addr NULL with *@addrlen not 0, or @addr
 * not writable), EINVAL (*@addrlen negative as an int) or ENOENT (the id
 * is being destroyed).
 */
int softcm_getpeername(struct rdma_cm_id *id, struct sockaddr *addr,
		       socklen_t *addrlen);

/**
 * softcm_getsockname - the local address of an id, as getsockname(2)
 *
 * As softcm_getpeername(), for the local address; an unbound id's is
 * AF_UNSPEC, all zero.
 */
int softcm_getsockname(struct rdma_cm_id *id, struct sockaddr *addr,
		       socklen_t *addrlen);

/**
 * softcm_version - the library's version string, e.g. "0.1.0"
 */
const char *softcm_version(void);

/*
 * softcm_submit(3): the rdma_cm calls of @ops, on asynchronous ids, in as
 * few system calls as their channels allow (one per channel, up to 1024
 * ops each; the ops of one channel run in their order).  Each op's err
 * is 0 or the errno its call would have set; the return value is the
 * number of ops that succeeded, or -1 and errno (EINVAL, ENOMEM) when the
 * call itself could not be made.
 */
enum softcm_op_code {
	SOFTCM_OP_CREATE_ID = 1,	/* rdma_create_id(channel, &id, context, ps) */
	SOFTCM_OP_RESOLVE_ADDR,		/* rdma_resolve_addr(id, src_addr, dst_addr, timeout_ms) */
	SOFTCM_OP_RESOLVE_ROUTE,	/* rdma_resolve_route(id, timeout_ms) */
	SOFTCM_OP_CONNECT,		/* rdma_connect(id, conn_param) */
	SOFTCM_OP_DISCONNECT,		/* rdma_disconnect(id) */
	SOFTCM_OP_ACCEPT,		/* rdma_accept(id, conn_param) */
	SOFTCM_OP_ESTABLISH,		/* rdma_establish(id) */
};

struct rdma_event_channel;
struct rdma_conn_param;

struct softcm_op {
	int code;				/* enum softcm_op_code */
	int err;				/* out */
	struct rdma_cm_id *id;			/* out for SOFTCM_OP_CREATE_ID */
	struct rdma_event_channel *channel;	/* SOFTCM_OP_CREATE_ID */
	void *context;				/* SOFTCM_OP_CREATE_ID */
	int ps;					/* SOFTCM_OP_CREATE_ID: enum rdma_port_space */
	int timeout_ms;				/* SOFTCM_OP_RESOLVE_* */
	struct sockaddr *src_addr;		/* SOFTCM_OP_RESOLVE_ADDR, may be NULL */
	struct sockaddr *dst_addr;		/* SOFTCM_OP_RESOLVE_ADDR */
	struct rdma_conn_param *conn_param;	/* SOFTCM_OP_CONNECT, _ACCEPT */
};

int softcm_submit(struct softcm_op *ops, int n);

#ifdef __cplusplus
}
#endif

#endif /* _SOFTCM_H */
