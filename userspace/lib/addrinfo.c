// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * rdma_getaddrinfo(): getaddrinfo(3) dressed as rdma_addrinfo, the way
 * librdmacm 44 does it for IP addresses, so that a ported program sees the
 * same answer: one result (getaddrinfo's first), glibc's defaults when
 * there are no hints, EAI_* codes returned as they are, unknown flags
 * ignored, and a result built from the hints' addresses alone when there
 * is neither node nor service.  There is no InfiniBand naming (no AF_IB
 * addresses, no SA or ibacm route lookup): AF_IB in the hints is treated
 * as AF_UNSPEC, as librdmacm does before it converts addresses.
 * tests/static/addrinfo.sh holds both libraries to one table.
 */
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef AF_IB
#define AF_IB 27
#endif

/* Only the flags getaddrinfo(3) understands are passed on; others are ignored. */
static void hints_to_gai(const struct rdma_addrinfo *hints, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	if (hints->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (hints->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (hints->ai_family != AF_IB)
		ai->ai_family = hints->ai_family;

	switch (hints->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	default:
		break;
	}
	switch (hints->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	default:
		break;
	}
}

static int dup_addr(struct sockaddr **dst, socklen_t *dst_len,
		    const struct sockaddr *sa, socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return -1;
	memcpy(*dst, sa, len);
	*dst_len = len;
	return 0;
}

/* The first getaddrinfo(3) result; the hints' qp type and port space win. */
static int convert(struct rdma_addrinfo *rai, const struct rdma_addrinfo *hints,
		   const struct addrinfo *ai)
{
	if (hints->ai_qp_type)
		rai->ai_qp_type = hints->ai_qp_type;
	else if (ai->ai_socktype == SOCK_STREAM)
		rai->ai_qp_type = IBV_QPT_RC;
	else if (ai->ai_socktype == SOCK_DGRAM)
		rai->ai_qp_type = IBV_QPT_UD;

	if (hints->ai_port_space)
		rai->ai_port_space = hints->ai_port_space;
	else if (ai->ai_protocol == IPPROTO_TCP)
		rai->ai_port_space = RDMA_PS_TCP;
	else if (ai->ai_protocol == IPPROTO_UDP)
		rai->ai_port_space = RDMA_PS_UDP;

	rai->ai_family = ai->ai_family;
	if (ai->ai_flags & AI_PASSIVE) {
		rai->ai_flags = RAI_PASSIVE;
		return dup_addr(&rai->ai_src_addr, &rai->ai_src_len,
				ai->ai_addr, ai->ai_addrlen);
	}
	return dup_addr(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
}

/*
 * Returns 0; a getaddrinfo(3) error code (EAI_*, for gai_strerror(3)) when
 * name resolution fails; or -1 with errno: EINVAL when there is nothing to
 * resolve (no node, service or hints) or no res, ENOMEM.
 */
SOFTCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				   const struct rdma_addrinfo *hints,
				   struct rdma_addrinfo **res)
{
	static const struct rdma_addrinfo nohints;
	struct rdma_addrinfo *rai;
	struct addrinfo gai_hints, *ai;
	int ret = 0;

	if (!res || (!node && !service && !hints))
		return softcm_err(EINVAL);
	rai = calloc(1, sizeof(*rai));
	if (!rai)
		return softcm_err(ENOMEM);

	if (node || service) {
		/* NULL hints: glibc's defaults (AI_V4MAPPED | AI_ADDRCONFIG) */
		if (hints) {
			hints_to_gai(hints, &gai_hints);
			ret = getaddrinfo(node, service, &gai_hints, &ai);
		} else {
			ret = getaddrinfo(node, service, NULL, &ai);
		}
		if (ret) {
			free(rai);
			return ret;
		}
		if (!hints)
			hints = &nohints;
		ret = convert(rai, hints, ai);
		freeaddrinfo(ai);
	} else {
		/* Nothing to look up: the result is the hints' addresses. */
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len && hints->ai_dst_addr)
			ret = dup_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
				       hints->ai_dst_addr, hints->ai_dst_len);
	}
	if (!ret && !rai->ai_src_len && hints->ai_src_len && hints->ai_src_addr)
		ret = dup_addr(&rai->ai_src_addr, &rai->ai_src_len,
			       hints->ai_src_addr, hints->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return softcm_err(ENOMEM);
	}
	*res = rai;
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
