/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packets on the wire, crafted in userspace: a raw IPv4 socket (IP_HDRINCL)
 * lets a test fix every header field the ICRC covers, so that it can send
 * well-framed CM MADs with chosen contents, or break one thing at a time.
 * The packet leaves from the calling thread's network namespace.
 */
#ifndef _SOFTCM_WIRE_HELPERS_H
#define _SOFTCM_WIRE_HELPERS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define ROCE_LEN	280	/* BTH + DETH + MAD + ICRC */
#define MAD_OFF		20	/* the MAD in the UDP payload */
#define WIRE_MAX	400	/* the largest UDP payload a test sends */

static inline uint32_t crc32_ieee(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xedb88320 : crc >> 1;
	}
	return crc;
}

/* rxe's ICRC over a whole IPv4 packet (20-byte header, UDP, payload). */
static inline uint32_t icrc(const uint8_t *pkt, size_t len)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t h[20 + 8 + 12];
	uint32_t crc;

	memcpy(h, pkt, sizeof(h));
	h[1] = 0xff;			/* TOS */
	h[8] = 0xff;			/* TTL */
	h[10] = h[11] = 0xff;		/* IP checksum */
	h[26] = h[27] = 0xff;		/* UDP checksum */
	h[28 + 4] = 0xff;		/* BTH FECN/BECN/resv6 */
	crc = crc32_ieee(0xffffffff, ones, sizeof(ones));
	crc = crc32_ieee(crc, h, sizeof(h));
	crc = crc32_ieee(crc, pkt + sizeof(h), len - sizeof(h) - 4);
	return ~crc;
}

struct wire {
	uint8_t pkt[20 + 8 + WIRE_MAX];
	size_t paylen;		/* UDP payload */
};

/* A well-formed CM MAD packet from src to dst, of attribute attr. */
static inline void wire_init(struct wire *w, const char *src, const char *dst, uint16_t attr)
{
	struct iphdr *ip = (struct iphdr *)w->pkt;
	struct udphdr *udp = (struct udphdr *)(w->pkt + 20);
	uint8_t *bth = w->pkt + 28, *mad = bth + MAD_OFF;

	memset(w, 0, sizeof(*w));
	w->paylen = ROCE_LEN;
	ip->version = 4;
	ip->ihl = 5;
	ip->id = htons(0x1234);
	ip->frag_off = htons(IP_DF);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	inet_pton(AF_INET, src, &ip->saddr);
	inet_pton(AF_INET, dst, &ip->daddr);
	udp->source = htons(0xd872);
	udp->dest = htons(4791);
	bth[0] = 0x64;			/* UD SEND_ONLY */
	bth[2] = bth[3] = 0xff;		/* P_Key */
	bth[7] = 1;			/* QP1 */
	bth[12] = 0x80;			/* DETH Q_Key 0x80010000 */
	bth[13] = 0x01;
	bth[19] = 1;			/* source QP 1 */
	mad[0] = 1;
	mad[1] = 7;			/* CM */
	mad[2] = 2;
	mad[3] = 3;			/* SEND */
	mad[8] = 0x42;			/* a transaction ID */
	mad[16] = attr >> 8;
	mad[17] = attr;
}

static inline uint8_t *wire_mad(struct wire *w)
{
	return w->pkt + 28 + MAD_OFF;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* The lengths and (unless keep_icrc) the ICRC as they would be sent. */
static inline void wire_finish(struct wire *w, bool keep_icrc)
{
	struct iphdr *ip = (struct iphdr *)w->pkt;
	struct udphdr *udp = (struct udphdr *)(w->pkt + 20);
	size_t len = 28 + w->paylen;
	uint32_t crc;

	ip->tot_len = htons(len);
	udp->len = htons(8 + w->paylen);
	if (!keep_icrc && w->paylen >= 24) {
		crc = icrc(w->pkt, len);
		memcpy(w->pkt + len - 4, &crc, 4);	/* host order, as rxe */
	}
}

/*
 * wire_finish(), then send on @fd, a raw IPPROTO_RAW socket with
 * IP_HDRINCL, or on a new one when @fd is negative.  0 or -errno.
 */
static inline int wire_send_on(int fd, struct wire *w, bool keep_icrc)
{
	struct iphdr *ip = (struct iphdr *)w->pkt;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = ip->daddr };
	size_t len = 28 + w->paylen;
	bool own = fd < 0;
	ssize_t ret;
	int one = 1;

	wire_finish(w, keep_icrc);
	if (own) {
		fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
		if (fd < 0)
			return -errno;
		setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one));
	}
	ret = sendto(fd, w->pkt, len, 0, (struct sockaddr *)&to, sizeof(to));
	ret = ret == (ssize_t)len ? 0 : -errno;
	if (own)
		close(fd);
	return ret;
}

static inline int wire_send(struct wire *w, bool keep_icrc)
{
	return wire_send_on(-1, w, keep_icrc);
}

/*
 * The next CM MAD with attribute @attr (REQ 0x10, RTU 0x14, ...) in an
 * IPv4 frame read from the AF_PACKET socket @pfd within @timeout_ms,
 * copied whole (256 bytes) to @mad_out; 0 or -ETIME.
 */
static inline int wire_sniff(int pfd, uint8_t attr, uint8_t *mad_out, int timeout_ms)
{
	struct timespec ts;
	uint8_t frame[512];
	long now, end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
	for (;;) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		const uint8_t *mad;
		ssize_t len;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		if (now >= end)
			return -ETIME;
		if (poll(&p, 1, 100) <= 0)
			continue;
		len = recv(pfd, frame, sizeof(frame), 0);
		if (len < 14 + 28 + ROCE_LEN || frame[12] != 0x08 || frame[13] != 0x00)
			continue;
		mad = frame + 14 + 28 + MAD_OFF;
		if (mad[1] != 7 || mad[17] != attr)
			continue;
		memcpy(mad_out, mad, 256);
		return 0;
	}
}

#endif /* _SOFTCM_WIRE_HELPERS_H */
