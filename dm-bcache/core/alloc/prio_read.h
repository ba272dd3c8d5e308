/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the prio/gen chain (ondisk-format 3.4): from the head bucket a
 * journal entry names, ceil(nbuckets / prios_per_bucket) buckets, each
 * checked (checksum, then magic) before its entries are taken.  Fills
 * every bucket's generation (and priority).  The checker reads it with
 * its own claims and messages; the loader and the allocator read it to
 * learn the gens.
 */
#ifndef DM_BCACHE_CORE_PRIO_READ_H
#define DM_BCACHE_CORE_PRIO_READ_H

#include "format/prio.h"

/* What a read of the chain found. */
struct bch_prio_result {
	/*
	 * The highest seq of the links read; every link of one prio write
	 * carries the same one (the scan for a lost journal's chain and
	 * the next prio write go on from it).
	 */
	u64 seq;
	bool mixed_seq;		/* links read with different seqs */
	/* When stopped, why, for the caller's message: */
	u32 link;		/* position in the chain */
	u64 bucket;
	/* "outside the device", the validator's, or NULL: a claim stopped it */
	const char *why;
	const char *what;	/* "csum" or "magic": what expected/found are */
	u64 expected, found;
};

struct bch_prio_reader {
	void *ctx;
	/* Before link @link at @bucket is read; false stops the read. */
	bool (*claim)(void *ctx, u32 link, u64 bucket);
	/* After a sound bucket covering buckets [first, first + count). */
	void (*visit)(void *ctx, u64 bucket, u64 first, u32 count,
		      const struct bch_prio_set_disk *p);
};

/*
 * Read the chain from @head into @gens (and @prios, if not NULL), each
 * nbuckets long, and what it found into @res (if not NULL).  0 when read
 * whole; 1 when stopped (by a bad bucket, described in @res, or by
 * @rd->claim); a negative errno on I/O error.
 */
int bch_prio_read(const struct bch_meta_io *io, const struct bch_geom *g,
		  u64 head, u8 *gens, u16 *prios,
		  const struct bch_prio_reader *rd, struct bch_prio_result *res);

#endif
