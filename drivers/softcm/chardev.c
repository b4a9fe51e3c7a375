// SPDX-License-Identifier: GPL-2.0
/*
 * The character device /dev/softcm.
 *
 * Each open is a context of its own (file.c), bound to the network
 * namespace of the process that opened it, as a socket is bound to the
 * namespace it was created in: passing the file to a process in another
 * namespace does not move the context.
 *
 * The file operations carry THIS_MODULE as owner, so every open file holds
 * a reference on the module and rmmod fails until the last one is closed;
 * module exit therefore never meets a live context.
 */

#include <kunit/visibility.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <uapi/linux/softcm.h>

#include "chardev.h"
#include "event.h"
#include "evfd.h"
#include "evpage.h"
#include "ring.h"
#include "file.h"
#include "ucmd.h"
#include "vcmd.h"

static const struct file_operations softcm_fops;

static int softcm_open(struct inode *inode, struct file *filp)
{
	struct softcm_file *sf;

	sf = softcm_file_create(current->nsproxy->net_ns);
	if (!sf)
		return -ENOMEM;
	filp->private_data = sf;
	return stream_open(inode, filp);
}

static int softcm_release(struct inode *inode, struct file *filp)
{
	struct softcm_file *sf = filp->private_data;

	/* evfd.c and evpage.c are above file.c: their parts go here */
	softcm_evfd_file_release(sf);
	softcm_evpage_release(sf);
	softcm_file_release(sf);
	return 0;
}

static ssize_t softcm_read(struct file *filp, char __user *buf, size_t count,
			   loff_t *pos)
{
	return softcm_file_read(filp->private_data, buf, count,
				filp->f_flags & O_NONBLOCK);
}

static __poll_t softcm_poll(struct file *filp, poll_table *wait)
{
	struct softcm_file *sf = filp->private_data;
	__poll_t mask = softcm_event_poll(&sf->evq, filp, wait);

	/*
	 * Records the user read and still holds are as good as queued.  No
	 * wakeup comes when it changes @held: it changes it while awake.
	 */
	if (!(mask & EPOLLIN) && softcm_evpage_held(sf))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* Offset 0 is the event page; the others are the verbs objects' rings. */
static int softcm_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff == SOFTCM_MMAP_EVENT_PAGE)
		return softcm_evpage_mmap(filp->private_data, vma);
	return softcm_ring_mmap(filp->private_data, vma);
}

static long softcm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	if (_IOC_NR(cmd) >= SOFTCM_VCMD_BASE)
		return softcm_vcmd_ioctl(filp->private_data, cmd, arg);
	return softcm_ucmd_ioctl(filp->private_data, cmd, arg);
}

static const struct file_operations softcm_fops = {
	.owner		= THIS_MODULE,
	.open		= softcm_open,
	.release	= softcm_release,
	.read		= softcm_read,
	.poll		= softcm_poll,
	.mmap		= softcm_mmap,
	.unlocked_ioctl	= softcm_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

/* The context behind @filp if it is an open /dev/softcm, else NULL. */
struct softcm_file *softcm_chardev_file(struct file *filp)
{
	return filp->f_op == &softcm_fops ? filp->private_data : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_chardev_file);

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
