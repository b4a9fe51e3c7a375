// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters.  They are read-only once the module is loaded: values
 * that may change at run time are per-namespace sysctls (netns.c) instead,
 * because a module parameter is global and a namespace must not be able to
 * change another namespace's behaviour.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "params.h"

/* IANA's RoCEv2 port; another value only makes sense between softcm hosts. */
unsigned short softcm_udp_port = 4791;

/*
 * Received CM packets a namespace holds before it drops a flood
 * (transport.c says why 4096).  A load-time choice for a host that
 * expects bigger bursts; tests lower it so that filling the queues is
 * cheap on a debug kernel.
 */
unsigned int softcm_rx_queue_max = SOFTCM_RX_QUEUE_DEFAULT;

/* Out of range is as invalid as not a number: one errno for both. */
VISIBLE_IF_KUNIT int softcm_parse_port(const char *val, u16 *port)
{
	u16 p;

	if (kstrtou16(val, 0, &p) || !p)
		return -EINVAL;
	*port = p;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_parse_port);

static int port_set(const char *val, const struct kernel_param *kp)
{
	return softcm_parse_port(val, kp->arg);
}

static const struct kernel_param_ops port_ops = {
	.set = port_set,
	.get = param_get_ushort,
};

module_param_cb(udp_port, &port_ops, &softcm_udp_port, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the CM transport, 1-65535 (default 4791)");

VISIBLE_IF_KUNIT int softcm_parse_rx_queue_max(const char *val, unsigned int *max)
{
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n < SOFTCM_RX_QUEUE_MIN || n > SOFTCM_RX_QUEUE_LIMIT)
		return -EINVAL;
	*max = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_parse_rx_queue_max);

static int rx_queue_max_set(const char *val, const struct kernel_param *kp)
{
	return softcm_parse_rx_queue_max(val, kp->arg);
}

static const struct kernel_param_ops rx_queue_max_ops = {
	.set = rx_queue_max_set,
	.get = param_get_uint,
};

module_param_cb(rx_queue_max, &rx_queue_max_ops, &softcm_rx_queue_max, 0444);
MODULE_PARM_DESC(rx_queue_max,
		 "received CM packets a namespace holds before dropping, 64-65536 (default 4096)");
