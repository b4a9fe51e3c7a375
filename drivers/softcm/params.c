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
