// SPDX-License-Identifier: GPL-2.0
/*
 * softcm_bugs.ko: commits one kernel bug on load, chosen by bug=, so that the
 * runner's self-check can prove that each class of bug fails a run on the
 * debug kernel even when every test passed.  Test-only: never loaded by
 * normal runs, never installed.
 *
 *   bug=uaf      read a freed object (KASAN)
 *   bug=lockdep  take two locks in both orders (lockdep)
 *   bug=leak     lose the last pointer to an allocation (kmemleak)
 */

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "uaf, lockdep or leak");

static DEFINE_MUTEX(lock_a);
static DEFINE_MUTEX(lock_b);

static noinline void use_after_free(void)
{
	int *p = kmalloc(sizeof(*p) * 8, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	pr_info("value after free: %d\n", READ_ONCE(p[1]));
}

static noinline void lock_inversion(void)
{
	mutex_lock(&lock_a);
	mutex_lock(&lock_b);
	mutex_unlock(&lock_b);
	mutex_unlock(&lock_a);

	mutex_lock(&lock_b);
	mutex_lock(&lock_a);
	mutex_unlock(&lock_a);
	mutex_unlock(&lock_b);
}

static noinline void leak(void)
{
	void *p = kmalloc(512, GFP_KERNEL);

	/* The only pointer dies with this frame; kmemleak must notice. */
	pr_info("leaked %zu bytes\n", p ? ksize(p) : 0);
}

static int __init softcm_bugs_init(void)
{
	if (!strcmp(bug, "uaf"))
		use_after_free();
	else if (!strcmp(bug, "lockdep"))
		lock_inversion();
	else if (!strcmp(bug, "leak"))
		leak();
	else
		return -EINVAL;
	return 0;
}

static void __exit softcm_bugs_exit(void)
{
}

module_init(softcm_bugs_init);
module_exit(softcm_bugs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("softcm test runner self-check: deliberate kernel bugs");
