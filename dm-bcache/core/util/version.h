/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The project's version: the target's dm version (dmb-main.c) and the
 * tools' --version (userspace/lib/cli.c) both come from here, so a module
 * and the tools built from one tree always report the same number.
 */
#ifndef DM_BCACHE_CORE_VERSION_H
#define DM_BCACHE_CORE_VERSION_H

#define DMB_VERSION_MAJOR	1
#define DMB_VERSION_MINOR	4
#define DMB_VERSION_PATCH	0

#define DMB_STR_(x)		#x
#define DMB_STR(x)		DMB_STR_(x)
#define DMB_VERSION_STRING	DMB_STR(DMB_VERSION_MAJOR) "." \
				DMB_STR(DMB_VERSION_MINOR) "." \
				DMB_STR(DMB_VERSION_PATCH)

#endif
