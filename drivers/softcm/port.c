// SPDX-License-Identifier: GPL-2.0
/*
 * Port tables: which ids own which port, per namespace and port space, and
 * the rules rdma_cm applies when a second id wants the same port.
 *
 * Lock order: an id's mutex, then its namespace's ports.lock.
 */

#include <linux/capability.h>
#include <linux/lockdep.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/ip.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <kunit/visibility.h>

#include "id.h"
#include "netns.h"
#include "port.h"
#include "sockaddr.h"

void softcm_ports_init(struct softcm_ports *ports)
{
	mutex_init(&ports->lock);
	xa_init(&ports->tcp);
	xa_init(&ports->udp);
}

/* Every id is destroyed before its namespace: the tables must be empty. */
void softcm_ports_uninit(struct softcm_ports *ports)
{
	WARN_ON(!xa_empty(&ports->tcp));
	WARN_ON(!xa_empty(&ports->udp));
	xa_destroy(&ports->tcp);
	xa_destroy(&ports->udp);
	mutex_destroy(&ports->lock);
}

static struct softcm_ports *ports_of(struct softcm_id *id)
{
	return &softcm_net(id->net)->ports;
}

static struct xarray *table_of(struct softcm_id *id)
{
	struct softcm_ports *ports = ports_of(id);

	return id->ps == SOFTCM_PS_TCP ? &ports->tcp : &ports->udp;
}

/*
 * rdma_cm's cma_check_port(): may @id share @bl with its owners?  Two ids
 * that both allow reuse coexist, as do two AF_INET/AF_INET6-only ids of
 * different families; otherwise a wildcard on either side conflicts with
 * everything and equal addresses conflict.
 */
VISIBLE_IF_KUNIT int softcm_port_check(struct softcm_bind_list *bl,
				       struct softcm_id *id, bool reuseaddr)
{
	struct softcm_id *cur;

	hlist_for_each_entry(cur, &bl->owners, bind_node) {
		if (cur == id)
			continue;
		if (reuseaddr && cur->reuseaddr)
			continue;
		if (id->afonly && cur->afonly &&
		    id->src.ss_family != cur->src.ss_family)
			continue;
		if (softcm_addr_any(&id->src) || softcm_addr_any(&cur->src))
			return -EADDRNOTAVAIL;
		if (softcm_addr_equal(&id->src, &cur->src))
			return -EADDRINUSE;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_port_check);

static void join(struct softcm_bind_list *bl, struct softcm_id *id)
{
	lockdep_assert_held(&ports_of(id)->lock);

	id->bind_list = bl;
	softcm_addr_set_port(&id->src, bl->port);
	hlist_add_head(&id->bind_node, &bl->owners);
}

static int new_bind_list(struct xarray *table, struct softcm_id *id, u16 port)
{
	struct softcm_bind_list *bl;
	int ret;

	lockdep_assert_held(&ports_of(id)->lock);

	bl = kzalloc(sizeof(*bl), GFP_KERNEL_ACCOUNT);
	if (!bl)
		return -ENOMEM;
	bl->port = port;
	INIT_HLIST_HEAD(&bl->owners);
	ret = xa_insert(table, port, bl, GFP_KERNEL_ACCOUNT);
	if (ret) {
		kfree(bl);
		return ret;
	}
	join(bl, id);
	return 0;
}

/*
 * A free port from the namespace's ip_local_port_range, starting at a
 * random point so that ports are not predictable.
 */
static int bind_any_port(struct xarray *table, struct softcm_id *id)
{
	int low, high, ret;
	u32 i, remaining, offset;
	u16 port;

	lockdep_assert_held(&ports_of(id)->lock);

	inet_get_local_port_range(id->net, &low, &high);
	remaining = high - low + 1;
	offset = get_random_u32_below(remaining);
	for (i = 0; i < remaining; i++) {
		port = low + (offset + i) % remaining;
		if (inet_is_local_reserved_port(id->net, port) || xa_load(table, port))
			continue;
		ret = new_bind_list(table, id, port);
		if (ret != -EBUSY)
			return ret;
	}
	return -EADDRNOTAVAIL;
}

/*
 * Give @id the port in its source address, or a free one for port 0.  The
 * source address (family, address, afonly) must be final.
 */
int softcm_port_bind(struct softcm_id *id)
{
	struct softcm_ports *ports = ports_of(id);
	struct xarray *table = table_of(id);
	struct softcm_bind_list *bl;
	u16 port = softcm_addr_port(&id->src);
	int ret;

	lockdep_assert_held(&id->mutex);

	if (port && port < PROT_SOCK &&
	    !ns_capable(id->net->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;

	mutex_lock(&ports->lock);
	if (!port) {
		ret = bind_any_port(table, id);
	} else {
		bl = xa_load(table, port);
		if (!bl) {
			ret = new_bind_list(table, id, port);
		} else {
			ret = softcm_port_check(bl, id, id->reuseaddr);
			if (!ret)
				join(bl, id);
		}
	}
	mutex_unlock(&ports->lock);
	return ret;
}

/* A listener may no longer share its port by reuse (rdma_listen()). */
int softcm_port_make_unique(struct softcm_id *id)
{
	struct softcm_ports *ports = ports_of(id);
	int ret = 0;

	lockdep_assert_held(&id->mutex);

	if (!id->reuseaddr)
		return 0;
	mutex_lock(&ports->lock);
	ret = softcm_port_check(id->bind_list, id, false);
	if (!ret)
		id->reuseaddr = false;
	mutex_unlock(&ports->lock);
	return ret;
}

void softcm_port_release(struct softcm_id *id)
{
	struct softcm_ports *ports = ports_of(id);
	struct softcm_bind_list *bl = id->bind_list;

	lockdep_assert_held(&id->mutex);

	if (!bl)
		return;
	mutex_lock(&ports->lock);
	hlist_del(&id->bind_node);
	id->bind_list = NULL;
	if (hlist_empty(&bl->owners)) {
		xa_erase(table_of(id), bl->port);
		kfree(bl);
	}
	mutex_unlock(&ports->lock);
}

/*
 * Other ids' port checks read these flags under the port lock, so once an
 * id may be in a table they change under both its mutex and that lock.
 */
void softcm_port_set_flags(struct softcm_id *id, bool reuseaddr, bool afonly)
{
	struct softcm_ports *ports = ports_of(id);

	lockdep_assert_held(&id->mutex);

	mutex_lock(&ports->lock);
	id->reuseaddr = reuseaddr;
	id->afonly = afonly;
	mutex_unlock(&ports->lock);
}

/*
 * Resolution chose a specific source address for a wildcard-bound id; the
 * port stays.  Other ids' port checks read the address under the lock.
 */
void softcm_port_set_src(struct softcm_id *id, const struct sockaddr_storage *src)
{
	struct softcm_ports *ports = ports_of(id);
	u16 port = softcm_addr_port(&id->src);

	lockdep_assert_held(&id->mutex);

	mutex_lock(&ports->lock);
	id->src = *src;
	softcm_addr_set_port(&id->src, port);
	mutex_unlock(&ports->lock);
}

/*
 * rdma_cm's cma_match_private_data(): a listener on the wildcard that is
 * not AF-only takes any family; otherwise the family must be the
 * request's and the address, unless a wildcard, its destination.
 */
static bool listener_matches(struct softcm_id *l, const struct sockaddr_storage *dst,
			     int ifindex)
{
	if (softcm_addr_any(&l->src) && !l->afonly)
		return true;
	if (l->src.ss_family != dst->ss_family)
		return false;
	if (l->bound_ifindex && l->bound_ifindex != ifindex)
		return false;
	return softcm_addr_any(&l->src) || softcm_addr_equal(&l->src, dst);
}

/*
 * The listener of port space @ps and @port that takes a request for
 * @dst, referenced, or NULL; @any tells whether anything listens on the
 * port at all (the REJ reason differs).  Its state is checked again under
 * its mutex by the caller.
 */
struct softcm_id *softcm_port_find_listener(struct net *net, u16 ps, u16 port,
					    const struct sockaddr_storage *dst,
					    int ifindex, bool *any)
{
	struct softcm_ports *ports = &softcm_net(net)->ports;
	struct softcm_id *cur, *found = NULL;
	struct softcm_bind_list *bl;

	*any = false;
	mutex_lock(&ports->lock);
	bl = xa_load(ps == SOFTCM_PS_TCP ? &ports->tcp : &ports->udp, port);
	if (bl) {
		hlist_for_each_entry(cur, &bl->owners, bind_node) {
			if (READ_ONCE(cur->state) != SOFTCM_STATE_LISTEN)
				continue;
			*any = true;
			if (dst->ss_family != AF_UNSPEC &&
			    listener_matches(cur, dst, ifindex)) {
				softcm_id_get(cur);
				found = cur;
				break;
			}
		}
	}
	mutex_unlock(&ports->lock);
	return found;
}
