// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * rdma-core's rsockets, as far as softcm has them: not at all yet.  Its
 * librdmacm exports them (RDMACM_1.0), Debian's rstream, riostream,
 * rcopy and udpong import them and librspreload.so calls them, all with
 * immediate binding: without these symbols those programs, and every
 * program librspreload is preloaded into, stop in the dynamic linker.
 * With them they load, and the first rsocket() says once, on stderr,
 * that softcm has no rsockets, and fails with EOPNOTSUPP (librspreload
 * then falls back to the kernel's socket, as it does when librdmacm finds
 * no device).  No rsocket can exist, so every descriptor the other calls
 * get is not one: EBADF, as librdmacm for a descriptor it does not know;
 * rpoll() and rselect() are poll() and select(), which is what librdmacm's
 * are for descriptors that are not rsockets (rdma-core's example programs
 * call rpoll() for every wait).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#define EXPORT __attribute__((visibility("default")))

static pthread_once_t said = PTHREAD_ONCE_INIT;

static void say(void)
{
	fprintf(stderr, "softcm: rsockets (rsocket(), librspreload) are not supported yet; "
		"see softcm(8)\n");
}

EXPORT int rsocket(int domain, int type, int protocol)
{
	pthread_once(&said, say);
	errno = EOPNOTSUPP;
	return -1;
}

static int bad(void)
{
	errno = EBADF;
	return -1;
}

EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return bad();
}

EXPORT int rlisten(int socket, int backlog)
{
	return bad();
}

EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return bad();
}

EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return bad();
}

EXPORT int rshutdown(int socket, int how)
{
	return bad();
}

EXPORT int rclose(int socket)
{
	return bad();
}

EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	return bad();
}

EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			 struct sockaddr *src_addr, socklen_t *addrlen)
{
	return bad();
}

EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	return bad();
}

EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	return bad();
}

EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		       const struct sockaddr *dest_addr, socklen_t addrlen)
{
	return bad();
}

EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	return bad();
}

EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return bad();
}

EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return bad();
}

EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return bad();
}

EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return bad();
}

EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
		   struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return bad();
}

EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return bad();
}

EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval,
		       socklen_t optlen)
{
	return bad();
}

EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	return bad();
}

EXPORT int rfcntl(int socket, int cmd, ...)
{
	return bad();
}

EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	return bad();
}

EXPORT int riounmap(int socket, void *buf, size_t len)
{
	return bad();
}

EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	return bad();
}
