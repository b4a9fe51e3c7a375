// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_getaddrinfo() held to one table of expected outcomes.  Built twice
 * by addrinfo.sh, against librdmacm and against libsoftcm: both passing
 * means a ported program gets the same answer from either library.  Every
 * row was measured against Debian's librdmacm 44.  One TAP line per row.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include <rdma/rdma_cma.h>

struct row {
	const char *name;
	const char *node, *service;
	int no_hints;
	int flags, family, qp_type, ps;
	const char *src, *dst;		/* IPv4 "a.b.c.d:port" hints */
	const char *want;
};

static const struct row rows[] = {
	{ "null-hints-localhost", "localhost", "7471", .no_hints = 1,
	  .want = "n=1 flags=0 family=2 qp=2 ps=0x106 src=- dst=127.0.0.1:7471" },
	{ "zero-hints-numeric", "127.0.0.1", "7471",
	  .want = "n=1 flags=0 family=2 qp=2 ps=0x106 src=- dst=127.0.0.1:7471" },
	{ "passive-no-node", NULL, "7471", .flags = RAI_PASSIVE,
	  .want = "n=1 flags=0x1 family=2 qp=2 ps=0x106 src=0.0.0.0:7471 dst=-" },
	{ "passive-v6", "::1", "7471", .flags = RAI_PASSIVE, .family = AF_INET6,
	  .want = "n=1 flags=0x1 family=10 qp=2 ps=0x106 src=[v6] dst=-" },
	{ "unknown-flag-ignored", "127.0.0.1", "7471", .flags = 0x1000,
	  .want = "n=1 flags=0 family=2 qp=2 ps=0x106 src=- dst=127.0.0.1:7471" },
	{ "result-flags-only-passive", "127.0.0.1", "7471",
	  .flags = RAI_NUMERICHOST | RAI_NOROUTE,
	  .want = "n=1 flags=0 family=2 qp=2 ps=0x106 src=- dst=127.0.0.1:7471" },
	{ "af-ib-is-unspec", "127.0.0.1", "7471", .family = 27,
	  .want = "n=1 flags=0 family=2 qp=2 ps=0x106 src=- dst=127.0.0.1:7471" },
	{ "af-unix", "127.0.0.1", "7471", .family = AF_UNIX,
	  .want = "EAI_FAMILY" },
	{ "v6-hint-v4-address", "127.0.0.1", "7471", .family = AF_INET6,
	  .want = "EAI_ADDRFAMILY" },
	{ "numerichost-name", "localhost", "7471", .flags = RAI_NUMERICHOST,
	  .want = "EAI_NONAME" },
	{ "unknown-name", "no-such-host.invalid", "7471", .flags = RAI_NUMERICHOST,
	  .want = "EAI_NONAME" },
	{ "unknown-service", "127.0.0.1", "no-such-service", .no_hints = 1,
	  .want = "EAI_SERVICE" },
	{ "ud", "127.0.0.1", "7471", .qp_type = IBV_QPT_UD, .ps = RDMA_PS_UDP,
	  .want = "n=1 flags=0 family=2 qp=4 ps=0x111 src=- dst=127.0.0.1:7471" },
	{ "ps-from-hints", "127.0.0.1", "7471", .ps = RDMA_PS_UDP,
	  .want = "n=1 flags=0 family=2 qp=4 ps=0x111 src=- dst=127.0.0.1:7471" },
	{ "active-src-from-hints", "127.0.0.1", "7471", .src = "10.0.0.1:0",
	  .want = "n=1 flags=0 family=2 qp=2 ps=0x106 src=10.0.0.1:0 dst=127.0.0.1:7471" },
	{ "passive-ignores-hint-src", NULL, "7471", .flags = RAI_PASSIVE,
	  .src = "10.0.0.1:9",
	  .want = "n=1 flags=0x1 family=2 qp=2 ps=0x106 src=0.0.0.0:7471 dst=-" },
	{ "no-name-dst-from-hints", NULL, NULL, .dst = "10.0.0.2:7471",
	  .want = "n=1 flags=0 family=0 qp=0 ps=0 src=- dst=10.0.0.2:7471" },
	{ "no-name-src-from-hints", NULL, NULL, .flags = RAI_PASSIVE,
	  .src = "10.0.0.1:7471", .qp_type = IBV_QPT_RC, .ps = RDMA_PS_TCP,
	  .want = "n=1 flags=0x1 family=0 qp=2 ps=0x106 src=10.0.0.1:7471 dst=-" },
	{ "no-name-both-from-hints", NULL, NULL, .family = AF_INET,
	  .src = "10.0.0.1:0", .dst = "10.0.0.2:7471",
	  .want = "n=1 flags=0 family=2 qp=0 ps=0 src=10.0.0.1:0 dst=10.0.0.2:7471" },
	{ "no-name-no-addresses", NULL, NULL, .flags = RAI_PASSIVE,
	  .want = "n=1 flags=0x1 family=0 qp=0 ps=0 src=- dst=-" },
	{ "nothing-at-all", NULL, NULL, .no_hints = 1,
	  .want = "-1 EINVAL" },
};

static const char *gai_name(int ret)
{
	switch (ret) {
	case EAI_FAMILY: return "EAI_FAMILY";
	case EAI_ADDRFAMILY: return "EAI_ADDRFAMILY";
	case EAI_NONAME: return "EAI_NONAME";
	case EAI_SERVICE: return "EAI_SERVICE";
	case EAI_BADFLAGS: return "EAI_BADFLAGS";
	case EAI_SOCKTYPE: return "EAI_SOCKTYPE";
	case EAI_NODATA: return "EAI_NODATA";
	default: return NULL;
	}
}

static void fmt_addr(char *buf, size_t len, const struct sockaddr *sa, socklen_t salen)
{
	const struct sockaddr_in *sin = (const void *)sa;
	char a[INET_ADDRSTRLEN];

	if (!sa || !salen)
		snprintf(buf, len, "-");
	else if (sa->sa_family == AF_INET6 && salen == sizeof(struct sockaddr_in6))
		snprintf(buf, len, "[v6]");
	else if (sa->sa_family == AF_INET && salen == sizeof(*sin))
		snprintf(buf, len, "%s:%u", inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a)),
			 ntohs(sin->sin_port));
	else
		snprintf(buf, len, "family%u/len%u", sa->sa_family, (unsigned int)salen);
}

static void parse(struct sockaddr_in *sin, const char *s)
{
	char host[32] = "0.0.0.0";
	unsigned int port = 0;

	memset(sin, 0, sizeof(*sin));
	if (sscanf(s, "%31[^:]:%u", host, &port) != 2)
		port = 0;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, host, &sin->sin_addr);
}

static void run(const struct row *r, char *out, size_t len)
{
	struct rdma_addrinfo hints, *res = NULL, *cur;
	struct sockaddr_in src, dst;
	char s[64], d[64];
	int ret, n = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = r->flags;
	hints.ai_family = r->family;
	hints.ai_qp_type = r->qp_type;
	hints.ai_port_space = r->ps;
	if (r->src) {
		parse(&src, r->src);
		hints.ai_src_addr = (struct sockaddr *)&src;
		hints.ai_src_len = sizeof(src);
	}
	if (r->dst) {
		parse(&dst, r->dst);
		hints.ai_dst_addr = (struct sockaddr *)&dst;
		hints.ai_dst_len = sizeof(dst);
	}
	errno = 0;
	ret = rdma_getaddrinfo(r->node, r->service, r->no_hints ? NULL : &hints, &res);
	if (ret == -1) {
		snprintf(out, len, "-1 %s", errno == EINVAL ? "EINVAL" : strerror(errno));
		return;
	}
	if (ret) {
		snprintf(out, len, "%s", gai_name(ret) ? gai_name(ret) : "EAI_other");
		return;
	}
	for (cur = res; cur; cur = cur->ai_next)
		n++;
	fmt_addr(s, sizeof(s), res->ai_src_addr, res->ai_src_len);
	fmt_addr(d, sizeof(d), res->ai_dst_addr, res->ai_dst_len);
	snprintf(out, len, "n=%d flags=%#x family=%d qp=%d ps=%#x src=%s dst=%s", n,
		 res->ai_flags, res->ai_family, res->ai_qp_type, res->ai_port_space, s, d);
	rdma_freeaddrinfo(res);
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "lib";
	unsigned int i, failed = 0;
	char got[256];

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		run(&rows[i], got, sizeof(got));
		if (strcmp(got, rows[i].want)) {
			failed++;
			printf("not ok - static/addrinfo/%s/%s\n#   want: %s\n#   got:  %s\n",
			       lib, rows[i].name, rows[i].want, got);
		} else {
			printf("ok - static/addrinfo/%s/%s\n", lib, rows[i].name);
		}
	}
	return failed ? 1 : 0;
}
