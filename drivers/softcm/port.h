/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_PORT_H
#define _SOFTCM_PORT_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct softcm_id;
struct sockaddr_storage;

/* The ids bound to one port of one port space, in one namespace. */
struct softcm_bind_list {
	struct hlist_head owners;
	u16 port;
};

/* A namespace's port tables, one per port space: port -> bind list. */
struct softcm_ports {
	struct mutex lock;	/* both tables and ids' port flags */
	struct xarray tcp;
	struct xarray udp;
};

void softcm_ports_init(struct softcm_ports *ports);
void softcm_ports_uninit(struct softcm_ports *ports);

int softcm_port_bind(struct softcm_id *id);
int softcm_port_make_unique(struct softcm_id *id);
void softcm_port_release(struct softcm_id *id);
#if IS_ENABLED(CONFIG_KUNIT)
int softcm_port_check(struct softcm_bind_list *bl, struct softcm_id *id,
		      bool reuseaddr);
#endif
void softcm_port_set_flags(struct softcm_id *id, bool reuseaddr, bool afonly);
void softcm_port_set_src(struct softcm_id *id, const struct sockaddr_storage *src);

struct net;
struct softcm_id *softcm_port_find_listener(struct net *net, u16 ps, u16 port,
					    const struct sockaddr_storage *dst,
					    int ifindex, bool *any);

#endif /* _SOFTCM_PORT_H */
