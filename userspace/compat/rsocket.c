// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * What only the compat libraries export, beyond libsoftcm's own symbols:
 * rdma-core's example programs (ucmatose, cmtime, rping, udaddy) share
 * common.c, whose do_poll() calls rpoll() when told to use rsockets and
 * poll() otherwise.  They are linked with BIND_NOW, so without an rpoll()
 * they do not even start.  softcm has no rsockets, and for a descriptor
 * that is not an rsocket librdmacm's rpoll() is poll(): so is ours.
 */
#include <poll.h>

__attribute__((visibility("default")))
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}
