/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_ROUTE_H
#define _SOFTCM_ROUTE_H

#include <linux/types.h>
#include <kunit/visibility.h>

struct softcm_id;
struct softcm_query_route;
struct sockaddr_storage;

int softcm_id_resolve_route(struct softcm_id *id, u32 timeout_ms);
int softcm_id_query_route(struct softcm_id *id, struct softcm_query_route *q);
u8 softcm_ib_mtu(unsigned int netdev_mtu);

#if IS_ENABLED(CONFIG_KUNIT)
void softcm_ip_to_gid(const struct sockaddr_storage *ss, u8 gid[16]);
u32 softcm_flow_label(const struct sockaddr_storage *src,
		      const struct sockaddr_storage *dst);
#endif

#endif /* _SOFTCM_ROUTE_H */
