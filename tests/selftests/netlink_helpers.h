/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Topologies made by this process over rtnetlink instead of by `ip`:
 * named namespaces (as `ip netns add` and `ip netns del` make and remove
 * them, so that `ip -n`, `ip netns exec` and init.sh's leftover check see
 * them), veth pairs between them, addresses added and removed, links up
 * and down, their MTU, links removed, routes, and root qdiscs removed.
 *
 * Why: each program a test starts costs about half a second of CPU on
 * the debug kernel under TCG (KASAN and kmemleak on every page it maps),
 * and a fixture made per case with `sh` and `ip -batch` started six or
 * seven; make check is bound by the host's CPU.  Only what the fixtures
 * need is here; anything else stays with `ip`.
 */
#ifndef _SOFTCM_NETLINK_HELPERS_H
#define _SOFTCM_NETLINK_HELPERS_H

#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "topo_helpers.h"

#define NL_BUF	1024

struct nl_msg {
	union {
		struct nlmsghdr h;
		char buf[NL_BUF];
	};
};

/* Append attribute @type with @len bytes of @data; its start, or NULL. */
static inline struct rtattr *nl_put(struct nl_msg *m, unsigned short type,
				    const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(m->buf + NLMSG_ALIGN(m->h.nlmsg_len));

	if (NLMSG_ALIGN(m->h.nlmsg_len) + RTA_SPACE(len) > sizeof(m->buf))
		return NULL;
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + RTA_SPACE(len);
	return a;
}

static inline struct rtattr *nl_nest(struct nl_msg *m, unsigned short type)
{
	return nl_put(m, type, NULL, 0);
}

static inline void nl_nest_end(struct nl_msg *m, struct rtattr *a)
{
	a->rta_len = m->buf + m->h.nlmsg_len - (char *)a;
}

/* Reserve @len zeroed bytes of fixed header; its start, or NULL. */
static inline void *nl_reserve(struct nl_msg *m, size_t len)
{
	void *p = m->buf + NLMSG_ALIGN(m->h.nlmsg_len);

	if (NLMSG_ALIGN(m->h.nlmsg_len) + NLMSG_ALIGN(len) > sizeof(m->buf))
		return NULL;
	memset(p, 0, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + NLMSG_ALIGN(len);
	return p;
}

static inline void nl_init(struct nl_msg *m, unsigned short type, unsigned short flags)
{
	memset(&m->h, 0, sizeof(m->h));
	m->h.nlmsg_len = NLMSG_HDRLEN;
	m->h.nlmsg_type = type;
	m->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
}

/*
 * Send @m on a route socket of namespace @nsfd (-1: the caller's) and
 * read its acknowledgement; 0 or the kernel's -errno.
 */
static inline int nl_talk(int nsfd, struct nl_msg *m)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char reply[NL_BUF];
	struct nlmsghdr *r = (struct nlmsghdr *)reply;
	int home = -1, fd, ret;
	ssize_t n;

	if (nsfd >= 0) {
		home = netns_self();
		if (home < 0)
			return home;
		ret = netns_enter(nsfd);
		if (ret) {
			close(home);
			return ret;
		}
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ret = fd < 0 ? -errno : 0;
	if (home >= 0) {
		if (netns_enter(home) && !ret)
			ret = -EIO;
		close(home);
	}
	if (ret) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	m->h.nlmsg_seq = 1;
	if (sendto(fd, m->buf, m->h.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) != (ssize_t)m->h.nlmsg_len) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, reply, sizeof(reply), 0);
	if (n < 0)
		ret = -errno;
	else if (n < (ssize_t)NLMSG_HDRLEN || !NLMSG_OK(r, (size_t)n) ||
		 r->nlmsg_type != NLMSG_ERROR)
		ret = -EPROTO;
	else
		ret = ((struct nlmsgerr *)NLMSG_DATA(r))->error;
out:
	close(fd);
	return ret;
}

/* /run/netns/@name into @path of @size. */
static inline void netns_path(char *path, size_t size, const char *name)
{
	snprintf(path, size, "/run/netns/%s", name);
}

/*
 * A new namespace named @name, as `ip netns add` makes it (a file in
 * /run/netns with the namespace bind-mounted on it); 0 or -errno
 * (-EEXIST if the name is taken).  The calling thread makes it with
 * unshare() and goes back to its own.
 */
static inline int netns_add(const char *name)
{
	char path[128];
	int fd, home, ret = 0;

	netns_path(path, sizeof(path), name);
	if (mkdir("/run/netns", 0755) && errno != EEXIST)
		return -errno;
	/*
	 * /run/netns a shared mount of its own, as ip makes it: if it were a
	 * plain directory, the next `ip netns add` would bind-mount it over
	 * itself with our namespaces' mounts copied, and the originals,
	 * hidden below, would keep `ip netns del` from unlinking them (EBUSY).
	 */
	if (mount("", "/run/netns", "none", MS_SHARED | MS_REC, NULL)) {
		if (errno != EINVAL ||
		    mount("/run/netns", "/run/netns", "none", MS_BIND | MS_REC, NULL) ||
		    mount("", "/run/netns", "none", MS_SHARED | MS_REC, NULL))
			return -errno;
	}
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	home = netns_self();
	if (home < 0) {
		unlink(path);
		return home;
	}
	if (unshare(CLONE_NEWNET))
		ret = -errno;
	else if (mount("/proc/thread-self/ns/net", path, "none", MS_BIND, NULL))
		ret = -errno;
	if (netns_enter(home) && !ret)
		ret = -EIO;
	close(home);
	if (ret) {
		umount2(path, MNT_DETACH);
		unlink(path);
	}
	return ret;
}

/* Remove namespace @name as `ip netns del` does; 0 or -errno (-ENOENT). */
static inline int netns_del(const char *name)
{
	char path[128];

	netns_path(path, sizeof(path), name);
	umount2(path, MNT_DETACH);
	return unlink(path) ? -errno : 0;
}

/*
 * A veth pair: @dev1 in namespace @ns1, @dev2 in @ns2 (file descriptors
 * of the namespaces); 0 or -errno.
 */
static inline int veth_add(int ns1, const char *dev1, int ns2, const char *dev2)
{
	struct rtattr *info, *data, *peer;
	struct ifinfomsg *ifi;
	struct nl_msg m;

	nl_init(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	if (!nl_reserve(&m, sizeof(*ifi)) ||
	    !nl_put(&m, IFLA_IFNAME, dev1, strlen(dev1) + 1) ||
	    !nl_put(&m, IFLA_NET_NS_FD, &ns1, sizeof(ns1)))
		return -E2BIG;
	info = nl_nest(&m, IFLA_LINKINFO);
	if (!info || !nl_put(&m, IFLA_INFO_KIND, "veth", 5))
		return -E2BIG;
	data = nl_nest(&m, IFLA_INFO_DATA);
	peer = data ? nl_nest(&m, VETH_INFO_PEER) : NULL;
	if (!peer || !nl_reserve(&m, sizeof(*ifi)) ||
	    !nl_put(&m, IFLA_IFNAME, dev2, strlen(dev2) + 1) ||
	    !nl_put(&m, IFLA_NET_NS_FD, &ns2, sizeof(ns2)))
		return -E2BIG;
	nl_nest_end(&m, peer);
	nl_nest_end(&m, data);
	nl_nest_end(&m, info);
	return nl_talk(-1, &m);
}

/* The index of @dev in namespace @nsfd; 0 if there is none. */
static inline int link_index(int nsfd, const char *dev)
{
	int home = netns_self(), index = 0;

	if (home < 0)
		return 0;
	if (!netns_enter(nsfd))
		index = if_nametoindex(dev);
	if (netns_enter(home))
		index = 0;
	close(home);
	return index;
}

/*
 * Change @dev of namespace @nsfd: up or down (@up 1 or 0; -1 leaves it),
 * its MTU (@mtu 0 leaves it), or remove it (@del); 0 or -errno.
 */
static inline int link_change(int nsfd, const char *dev, int up, unsigned int mtu, bool del)
{
	int index = link_index(nsfd, dev);
	struct ifinfomsg *ifi;
	struct nl_msg m;

	if (!index)
		return -ENODEV;
	nl_init(&m, del ? RTM_DELLINK : RTM_NEWLINK, 0);
	ifi = nl_reserve(&m, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = index;
	if (up >= 0) {
		ifi->ifi_flags = up ? IFF_UP : 0;
		ifi->ifi_change = IFF_UP;
	}
	if (mtu && !nl_put(&m, IFLA_MTU, &mtu, sizeof(mtu)))
		return -E2BIG;
	return nl_talk(nsfd, &m);
}

/* Set @dev of namespace @nsfd up; 0 or -errno. */
static inline int link_up(int nsfd, const char *dev)
{
	return link_change(nsfd, dev, 1, 0, false);
}

static inline int link_down(int nsfd, const char *dev)
{
	return link_change(nsfd, dev, 0, 0, false);
}

/*
 * Add (@add) or remove address @cidr ("10.1.0.1/24", "fd00::1/64") of
 * @dev of namespace @nsfd; when adding, without duplicate address
 * detection if @nodad, with the subnet's broadcast address if @brd
 * (IPv4: `ip addr add ... brd +`); 0 or -errno.
 */
static inline int addr_change(int nsfd, const char *dev, const char *cidr, bool add, bool nodad,
			      bool brd)
{
	int index = link_index(nsfd, dev);
	unsigned char addr[16];
	struct ifaddrmsg *ifa;
	char ip[INET6_ADDRSTRLEN];
	const char *slash = strchr(cidr, '/');
	struct nl_msg m;
	size_t len;
	int family;

	if (!index)
		return -ENODEV;
	if (!slash || (size_t)(slash - cidr) >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, cidr, slash - cidr);
	ip[slash - cidr] = '\0';
	family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	len = family == AF_INET6 ? 16 : 4;
	if (inet_pton(family, ip, addr) != 1)
		return -EINVAL;
	if (add)
		nl_init(&m, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	else
		nl_init(&m, RTM_DELADDR, 0);
	ifa = nl_reserve(&m, sizeof(*ifa));
	ifa->ifa_family = family;
	ifa->ifa_prefixlen = atoi(slash + 1);
	ifa->ifa_flags = nodad ? IFA_F_NODAD : 0;
	ifa->ifa_index = index;
	if (!nl_put(&m, IFA_LOCAL, addr, len) || !nl_put(&m, IFA_ADDRESS, addr, len))
		return -E2BIG;
	if (add && brd && family == AF_INET) {
		uint32_t a, host = ifa->ifa_prefixlen >= 32 ? 0 : ~0u >> ifa->ifa_prefixlen;

		memcpy(&a, addr, 4);
		a |= htonl(host);
		if (!nl_put(&m, IFA_BROADCAST, &a, 4))
			return -E2BIG;
	}
	return nl_talk(nsfd, &m);
}

static inline int addr_add(int nsfd, const char *dev, const char *cidr, bool nodad, bool brd)
{
	return addr_change(nsfd, dev, cidr, true, nodad, brd);
}

static inline int addr_del(int nsfd, const char *dev, const char *cidr)
{
	return addr_change(nsfd, dev, cidr, false, false, false);
}

/*
 * An IPv4 route to @cidr ("10.1.2.0/24", "0.0.0.0/0") via gateway @gw in
 * namespace @nsfd's main table, as `ip route add CIDR via GW` makes it;
 * 0 or -errno.
 */
static inline int route_add(int nsfd, const char *cidr, const char *gw)
{
	const char *slash = strchr(cidr, '/');
	struct in_addr dst, via;
	struct rtmsg *rtm;
	char ip[INET_ADDRSTRLEN];
	struct nl_msg m;

	if (!slash || (size_t)(slash - cidr) >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, cidr, slash - cidr);
	ip[slash - cidr] = '\0';
	if (inet_pton(AF_INET, ip, &dst) != 1 || inet_pton(AF_INET, gw, &via) != 1)
		return -EINVAL;
	nl_init(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
	rtm = nl_reserve(&m, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = atoi(slash + 1);
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_BOOT;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	if ((rtm->rtm_dst_len && !nl_put(&m, RTA_DST, &dst, 4)) ||
	    !nl_put(&m, RTA_GATEWAY, &via, 4))
		return -E2BIG;
	return nl_talk(nsfd, &m);
}

/*
 * Remove the root qdisc of @dev in namespace @nsfd, as `tc qdisc del dev
 * DEV root` does (the device goes back to its default); 0, or -errno
 * (-ENOENT when there was none to remove).
 */
static inline int qdisc_root_del(int nsfd, const char *dev)
{
	int index = link_index(nsfd, dev);
	struct tcmsg *tcm;
	struct nl_msg m;

	if (!index)
		return -ENODEV;
	nl_init(&m, RTM_DELQDISC, 0);
	tcm = nl_reserve(&m, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = index;
	tcm->tcm_parent = TC_H_ROOT;
	return nl_talk(nsfd, &m);
}

/*
 * One end of a veth pair between two namespaces: its namespace, device
 * and addresses ("10.1.0.1/24", up to NULL), each optionally followed by
 * " nodad" (no duplicate address detection) or " brd" (`brd +`).
 */
struct topo_end {
	const char *ns, *dev;
	const char *addrs[4];
};

static inline int topo_end_up(int nsfd, const struct topo_end *e)
{
	int ret = link_up(nsfd, "lo");

	for (int i = 0; !ret && i < 4 && e->addrs[i]; i++) {
		char cidr[64];
		const char *sp = strchr(e->addrs[i], ' ');

		snprintf(cidr, sizeof(cidr), "%.*s", sp ? (int)(sp - e->addrs[i]) : 63,
			 e->addrs[i]);
		ret = addr_add(nsfd, e->dev, cidr, sp && !strcmp(sp + 1, "nodad"),
			       sp && !strcmp(sp + 1, "brd"));
	}
	return ret ?: link_up(nsfd, e->dev);
}

/* Namespace @name made afresh (a stale one removed), its lo up; 0 or -errno. */
static inline int netns_fresh(const char *name)
{
	int ns, ret;

	netns_del(name);
	ret = netns_add(name);
	if (ret)
		return ret;
	ns = netns_open(name);
	if (ns < 0)
		return ns;
	ret = link_up(ns, "lo");
	close(ns);
	return ret;
}

/*
 * Namespaces @a->ns and @b->ns, which exist, joined by a veth pair with
 * @a's and @b's devices and addresses, every link up (lo too); what
 * `ip link add ... type veth peer ...`, `ip addr add` and `ip link set
 * up` would make.  0 or -errno.
 */
static inline int topo_link(const struct topo_end *a, const struct topo_end *b)
{
	int na = netns_open(a->ns), nb = netns_open(b->ns), ret;

	ret = na < 0 ? na : nb < 0 ? nb : 0;
	ret = ret ?: veth_add(na, a->dev, nb, b->dev);
	ret = ret ?: topo_end_up(na, a);
	ret = ret ?: topo_end_up(nb, b);
	if (na >= 0)
		close(na);
	if (nb >= 0)
		close(nb);
	return ret;
}

/*
 * Namespaces @a->ns and @b->ns, made afresh (a stale one from an earlier
 * run is removed), joined by topo_link().  0 or -errno.
 */
static inline int topo_pair(const struct topo_end *a, const struct topo_end *b)
{
	int ret;

	netns_del(a->ns);
	netns_del(b->ns);
	ret = netns_add(a->ns);
	ret = ret ?: netns_add(b->ns);
	return ret ?: topo_link(a, b);
}

#endif /* _SOFTCM_NETLINK_HELPERS_H */
