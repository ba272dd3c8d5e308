/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the prio/gen chain (ondisk-format 3.4): nr_prio_buckets buckets,
 * each holding the entries of prios_per_bucket consecutive buckets and
 * the number of the next link.  The formatter writes the first chain, the
 * allocator's commits write every later one, always to fresh buckets, so
 * the chain the journal names stays readable until a newer entry names
 * the new one.
 */
#ifndef DM_BCACHE_CORE_PRIO_WRITE_H
#define DM_BCACHE_CORE_PRIO_WRITE_H

#include "format/prio.h"

/* The entry to record for @bucket. */
typedef void (*bch_prio_entry_fn)(void *ctx, u64 bucket,
				  struct bch_prio_entry *e);

/*
 * Write the chain into @chain[0..nr_prio_buckets), head first, using
 * @buf (meta_bucket_bytes).  0 or -errno.
 */
int bch_prio_write(const struct bch_meta_io *io, const struct bch_geom *g,
		   const u64 *chain, u64 seq, bch_prio_entry_fn fn, void *ctx,
		   void *buf);

#endif
