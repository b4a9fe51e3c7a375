// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for addrinfo.sh: librdmacm refuses every call, even
 * rdma_getaddrinfo(), with ENODEV when libibverbs lists no device, and the
 * host has none.  One made-up device satisfies its initialisation, which
 * only reads the list, the GUIDs and the indices; getaddrinfo never
 * touches a device.
 */
#include <stdlib.h>
#include <infiniband/verbs.h>

static struct ibv_device fake;

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **list = calloc(2, sizeof(*list));

	if (list)
		list[0] = &fake;
	if (num)
		*num = list ? 1 : 0;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	(void)device;
	return htobe64(1);
}

int ibv_get_device_index(struct ibv_device *device)
{
	(void)device;
	return 0;
}
