/* SPDX-License-Identifier: GPL-2.0 */
#define SOFTCM_VERSION "0.1.0"
