// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * rdma_getaddrinfo(): getaddrinfo(3) dressed as rdma_addrinfo, the way
 * librdmacm does it for IP addresses.  There is no InfiniBand naming (no
 * AF_IB, no SA or ibacm route lookup).
 */
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int hints_to_gai(const struct rdma_addrinfo *hints, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	if (!hints)
		return 0;
	if (hints->ai_flags & ~(RAI_PASSIVE | RAI_NUMERICHOST | RAI_NOROUTE | RAI_FAMILY))
		return -1;
	if (hints->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (hints->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET &&
	    hints->ai_family != AF_INET6)
		return -1;
	ai->ai_family = hints->ai_family;

	if (hints->ai_qp_type == IBV_QPT_UD || hints->ai_port_space == RDMA_PS_UDP) {
		ai->ai_socktype = SOCK_DGRAM;
		ai->ai_protocol = IPPROTO_UDP;
	} else {
		ai->ai_socktype = SOCK_STREAM;
		ai->ai_protocol = IPPROTO_TCP;
	}
	return 0;
}

static struct sockaddr *dup_addr(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *copy = malloc(len);

	if (copy)
		memcpy(copy, sa, len);
	return copy;
}

static struct rdma_addrinfo *convert(const struct addrinfo *ai,
				     const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *rai;

	rai = calloc(1, sizeof(*rai));
	if (!rai)
		return NULL;
	rai->ai_flags = hints ? hints->ai_flags : 0;
	rai->ai_family = ai->ai_family;
	if (ai->ai_socktype == SOCK_DGRAM) {
		rai->ai_qp_type = IBV_QPT_UD;
		rai->ai_port_space = RDMA_PS_UDP;
	} else {
		rai->ai_qp_type = IBV_QPT_RC;
		rai->ai_port_space = RDMA_PS_TCP;
	}
	if (hints && hints->ai_qp_type)
		rai->ai_qp_type = hints->ai_qp_type;
	if (hints && hints->ai_port_space)
		rai->ai_port_space = hints->ai_port_space;

	if (rai->ai_flags & RAI_PASSIVE) {
		rai->ai_src_addr = dup_addr(ai->ai_addr, ai->ai_addrlen);
		if (!rai->ai_src_addr)
			goto err_free;
		rai->ai_src_len = ai->ai_addrlen;
	} else {
		rai->ai_dst_addr = dup_addr(ai->ai_addr, ai->ai_addrlen);
		if (!rai->ai_dst_addr)
			goto err_free;
		rai->ai_dst_len = ai->ai_addrlen;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			rai->ai_src_addr = dup_addr(hints->ai_src_addr, hints->ai_src_len);
			if (!rai->ai_src_addr)
				goto err_free;
			rai->ai_src_len = hints->ai_src_len;
		}
	}
	return rai;

err_free:
	rdma_freeaddrinfo(rai);
	return NULL;
}

/*
 * Returns 0; a getaddrinfo(3) error code (for gai_strerror(3)) when name
 * resolution fails; or -1 with errno for anything else.
 */
SOFTCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				   const struct rdma_addrinfo *hints,
				   struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *head = NULL, **tail = &head;
	struct addrinfo gai_hints, *ai, *cur;
	int ret;

	if (!res || (!node && !service))
		return softcm_err(EINVAL);
	if (hints_to_gai(hints, &gai_hints))
		return softcm_err(EINVAL);
	ret = getaddrinfo(node, service, &gai_hints, &ai);
	if (ret)
		return ret;

	for (cur = ai; cur; cur = cur->ai_next) {
		if (cur->ai_family != AF_INET && cur->ai_family != AF_INET6)
			continue;
		*tail = convert(cur, hints);
		if (!*tail) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(head);
			return softcm_err(ENOMEM);
		}
		tail = &(*tail)->ai_next;
	}
	freeaddrinfo(ai);
	if (!head)
		return EAI_NONAME;
	*res = head;
	return 0;
}

SOFTCM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}
