// SPDX-License-Identifier: GPL-2.0
/*
 * The character device /dev/softcm and its per-open context.
 *
 * Each open is a context of its own, bound to the network namespace of the
 * process that opened it, as a socket is bound to the namespace it was
 * created in: passing the file to a process in another namespace does not
 * move the context.  The context pins its namespace for the same reason a
 * socket does.
 *
 * The misc device's file operations carry THIS_MODULE as owner, so every
 * open file holds a reference on the module and rmmod fails with EBUSY
 * until the last one is closed; exit therefore never meets a live context.
 */

#include <linux/device.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <uapi/linux/softcm.h>

#include "chardev.h"

struct softcm_file {
	struct net *net;
};

static int softcm_open(struct inode *inode, struct file *filp)
{
	struct softcm_file *sf;

	sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);
	if (!sf)
		return -ENOMEM;
	sf->net = get_net(current->nsproxy->net_ns);
	filp->private_data = sf;
	pr_debug("file %p created in netns %u\n", sf, sf->net->ns.inum);
	return stream_open(inode, filp);
}

static int softcm_release(struct inode *inode, struct file *filp)
{
	struct softcm_file *sf = filp->private_data;

	pr_debug("file %p destroyed\n", sf);
	put_net(sf->net);
	kfree(sf);
	return 0;
}

static const struct file_operations softcm_fops = {
	.owner		= THIS_MODULE,
	.open		= softcm_open,
	.release	= softcm_release,
	.llseek		= no_llseek,
};

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", SOFTCM_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static struct attribute *softcm_attrs[] = {
	&dev_attr_abi_version.attr,
	NULL
};
ATTRIBUTE_GROUPS(softcm);

static struct miscdevice softcm_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= SOFTCM_DEVICE_NAME,
	.fops		= &softcm_fops,
	.groups		= softcm_groups,
	.mode		= 0666,
};

int softcm_chardev_init(void)
{
	return misc_register(&softcm_misc);
}

void softcm_chardev_uninit(void)
{
	misc_deregister(&softcm_misc);
}
