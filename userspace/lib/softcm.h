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

#ifdef __cplusplus
}
#endif

#endif /* _SOFTCM_H */
