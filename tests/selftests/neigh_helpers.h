/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Neighbour updates made by the network, for the tests of what softcm
 * does with them: ARP requests from sender addresses the target has not
 * seen, each of which makes the target's kernel create a neighbour entry
 * (a NETEVENT_NEIGH_UPDATE), as any host on the link can.
 */
#ifndef _SOFTCM_NEIGH_HELPERS_H
#define _SOFTCM_NEIGH_HELPERS_H

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/if_ether.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* An AF_PACKET socket on @ifname of the caller's namespace; -errno. */
static inline int arp_socket(const char *ifname, int *ifindex)
{
	int fd;

	*ifindex = 0;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ARP));

	if (fd < 0)
		return -errno;
	*ifindex = if_nametoindex(ifname);
	if (!*ifindex) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/*
 * Broadcast @count ARP requests for @target, the i-th from sender
 * @first + i (host order) with a MAC of its own (02:5e:@salt:...); 0 or
 * -errno.
 */
static inline int arp_flood(int fd, int ifindex, const char *target, uint32_t first,
			    unsigned int count, uint8_t salt)
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ARP),
		.sll_ifindex = ifindex, .sll_halen = ETH_ALEN,
		.sll_addr = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	struct {
		struct ether_header eth;
		struct ether_arp arp;
	} __attribute__((packed)) f;
	struct in_addr tpa;
	unsigned int i;

	if (inet_pton(AF_INET, target, &tpa) != 1)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		uint32_t spa = htonl(first + i);
		uint8_t mac[ETH_ALEN] = { 0x02, 0x5e, salt, (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff };

		memset(&f, 0, sizeof(f));
		memset(f.eth.ether_dhost, 0xff, ETH_ALEN);
		memcpy(f.eth.ether_shost, mac, ETH_ALEN);
		f.eth.ether_type = htons(ETHERTYPE_ARP);
		f.arp.arp_hrd = htons(ARPHRD_ETHER);
		f.arp.arp_pro = htons(ETHERTYPE_IP);
		f.arp.arp_hln = ETH_ALEN;
		f.arp.arp_pln = 4;
		f.arp.arp_op = htons(ARPOP_REQUEST);
		memcpy(f.arp.arp_sha, mac, ETH_ALEN);
		memcpy(f.arp.arp_spa, &spa, 4);
		memcpy(f.arp.arp_tpa, &tpa, 4);
		if (sendto(fd, &f, sizeof(f), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(f))
			return -errno;
	}
	return 0;
}

#endif /* _SOFTCM_NEIGH_HELPERS_H */
