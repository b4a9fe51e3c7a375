// SPDX-License-Identifier: GPL-2.0
/*
 * softcm: an RDMA connection manager for hosts without RDMA hardware.
 *
 * This file only sequences module init and exit; each subsystem owns its
 * own init/uninit pair.
 */

#include <linux/module.h>

#include "addr.h"
#include "chardev.h"
#include "core.h"
#include "icrc.h"
#include "id.h"
#include "netns.h"
#include "notify.h"
#include "rc.h"
#include "uobj.h"
#include "version.h"

static int __init softcm_mod_init(void)
{
	int ret;

	ret = softcm_id_init();
	if (ret)
		return ret;

	ret = softcm_core_init();
	if (ret)
		goto err_uninit_id;

	/* Before the namespaces' sockets, which receive with it. */
	ret = softcm_icrc_init();
	if (ret)
		goto err_uninit_core;
	ret = softcm_rc_rcv_init();
	if (ret)
		goto err_uninit_icrc;
	ret = softcm_addr_init();
	if (ret)
		goto err_uninit_rc;

	ret = softcm_netns_init();
	if (ret)
		goto err_uninit_addr;

	ret = softcm_notify_init();
	if (ret)
		goto err_uninit_netns;

	softcm_uobj_rdmacg_init();

	/* Last: once the device exists userspace can open it. */
	ret = softcm_chardev_init();
	if (ret)
		goto err_uninit_rdmacg;

	pr_info("softcm " SOFTCM_VERSION " loaded\n");
	return 0;

err_uninit_rdmacg:
	softcm_uobj_rdmacg_uninit();
	softcm_notify_uninit();
err_uninit_netns:
	softcm_netns_uninit();
err_uninit_addr:
	softcm_addr_uninit();
err_uninit_rc:
	softcm_rc_rcv_uninit();
err_uninit_icrc:
	softcm_icrc_uninit();
err_uninit_core:
	softcm_core_uninit();
err_uninit_id:
	softcm_id_uninit();
	return ret;
}

/*
 * Every file is closed, but the works of their ids may still be queued
 * (a resolution cancelled at close drops its id's last reference from its
 * work) and the network may still post more.  Stop the network first,
 * then let every queued work finish while the namespaces' state they use
 * still exists; only then free that state (which cancels the works of
 * connections in timewait, and waits for any still running).
 */
static void __exit softcm_mod_exit(void)
{
	softcm_chardev_uninit();
	softcm_uobj_rdmacg_uninit();	/* every file is closed */
	softcm_notify_uninit();		/* flushes the workqueue */
	softcm_netns_uninit();
	softcm_addr_uninit();
	softcm_rc_rcv_uninit();
	softcm_icrc_uninit();
	softcm_core_uninit();
	softcm_id_uninit();
	pr_debug("softcm unloaded\n");
}

module_init(softcm_mod_init);
module_exit(softcm_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RDMA connection manager over RoCEv2 for hosts without RDMA hardware");
MODULE_AUTHOR("The softcm developers");
MODULE_VERSION(SOFTCM_VERSION);
