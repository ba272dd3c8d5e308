/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The platform layer under the dm-bcache core.
 *
 * Every file in core/ includes this header and nothing else from its
 * environment, so the same sources build into dm-bcache.ko and into the
 * userspace library that the offline tools and tests link.  It provides
 * fixed-width and little-endian types, byte-order helpers, string helpers,
 * errno values and static_assert.  Later layers add memory, locks, metadata
 * block I/O, time and deferred work here, never directly in core files.
 *
 * Byte order: mainline bcache writes its superblock little-endian and every
 * other structure in host order.  All deployments are x86-64, so the format
 * is treated as little-endian throughout; the helpers below are the one
 * place where that assumption is made.
 */
#ifndef DM_BCACHE_CORE_PLATFORM_H
#define DM_BCACHE_CORE_PLATFORM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>
#else
#include "platform_user.h"
#endif

#endif
