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
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/timekeeping.h>
#include <linux/sort.h>

/* Metadata buffers can reach 4 MiB (a prio bucket): kvmalloc them. */
static inline void *bch_zalloc(size_t size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static inline void bch_free(void *p)
{
	kvfree(p);
}

static inline u64 bch_random_u64(void)
{
	return get_random_u64();
}

static inline u32 bch_now_seconds(void)
{
	return (u32)ktime_get_real_seconds();
}

static inline void bch_sort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	sort(base, n, size, cmp, NULL);
}
#else
#include "util/platform_user.h"
#endif

/*
 * Metadata I/O for code in core/ that reads or writes whole structures:
 * the formatter and the checker.  The kernel implements it over dm-io,
 * the tools over pread/pwrite.  Sectors are 512 bytes; @len is a multiple
 * of 512.  All return 0 or a negative errno.
 */
struct bch_meta_io {
	void *ctx;
	u64 sectors;			/* device size */
	unsigned int lbs;		/* logical block size, bytes */
	int (*read)(void *ctx, u64 sector, void *buf, size_t len);
	int (*write)(void *ctx, u64 sector, const void *buf, size_t len);
	int (*flush)(void *ctx);	/* make earlier writes durable */
};

#endif
