/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where differences between the kernels dm-bcache supports
 * (Debian's 6.1 and 6.12) are handled.  Code elsewhere uses the names
 * defined here and never tests LINUX_VERSION_CODE itself.
 */
#ifndef DM_BCACHE_COMPAT_H
#define DM_BCACHE_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>

/*
 * Was the table loaded for writing?  6.5 replaced fmode_t with blk_mode_t
 * and FMODE_WRITE with BLK_OPEN_WRITE (a macro, so its presence tells).
 */
static inline bool dmb_table_writable(struct dm_target *ti)
{
#ifdef BLK_OPEN_WRITE
	return dm_table_get_mode(ti->table) & BLK_OPEN_WRITE;
#else
	return dm_table_get_mode(ti->table) & FMODE_WRITE;
#endif
}

/*
 * blk_limits_io_min() was removed in 6.11; raising io_min directly is what
 * it did, and is valid on both kernels.
 */
static inline void dmb_limits_raise_io_min(struct queue_limits *limits,
					   unsigned int bytes)
{
	if (limits->io_min < bytes)
		limits->io_min = bytes;
}

#endif
