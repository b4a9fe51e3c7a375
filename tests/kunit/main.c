// SPDX-License-Identifier: GPL-2.0
/*
 * softcm_kunit.ko: the KUnit suites for softcm's pure logic.  Built only
 * against a kernel with CONFIG_KUNIT (our debug kernel); the suites run when
 * the module is loaded, after softcm.ko, whose test-only exports they use.
 */

#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for softcm");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
