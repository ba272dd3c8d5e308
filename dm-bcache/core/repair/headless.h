/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cache whose journal holds no valid entry: what the newest entry would
 * have named, found by scanning the buckets (the journal's own excepted).
 *
 * The prio chain.  Every bucket whose first sector holds a prio set of
 * this cache (its magic; the checksum is checked when the chain is read)
 * is a candidate.  The links of one prio write share a seq, which every
 * write raises (the driver, the target and the rebuild go on from the
 * chain they read), so the current chain is the one of the highest seq
 * from whose head a whole chain reads, every link of that seq.  A higher
 * seq whose sets form no whole chain is a prio write cut short (the chain
 * is written tail first): no journal entry named it yet, and the buckets
 * whose gens it raised were given no new contents before one did.
 *
 * The UUID table has no header, magic or checksum.  A candidate is a
 * bucket whose first meta_bucket_bytes read as a table with a slot in use
 * and every slot sound, padding zero and a free slot all zero (the driver
 * and the target write tables from zeroed memory), a slot in use with a
 * registration time and a NUL-padded label, and that does not start as
 * a node, prio set or journal entry does (an empty leaf would read as a
 * table).  Besides the current table, candidates are copies left behind
 * each time the table moved, and tables an earlier set on the same
 * device left (nothing in a table names its set).  Every table write
 * stamps the slot it changes (taken, registered or retired) with the
 * time, and all those writes come after the earlier set's last one and
 * after the copies left: the current table is the one of the newest
 * stamp.  Candidates as new as it must agree with it on every slot's
 * UUID (and a slot in use on its flags and size), or which one is
 * current is unknown: an error rather than a guess.  A clock set back
 * between an earlier set and this one would make the earlier set's table
 * look newer; the repair says which bucket it took and of how many.
 *
 * Used by bcache_repair only, through bch_salvage_read().  Single-threaded.
 */
#ifndef DM_BCACHE_CORE_HEADLESS_H
#define DM_BCACHE_CORE_HEADLESS_H

#include "format/geometry.h"

struct bch_prio_found {
	u64 head;		/* the chain's first bucket */
	u64 seq;
	u64 cut_seq;		/* a newer seq forming no chain, or 0 */
	u64 other;		/* with -ENOTUNIQ: a second head of seq */
	u32 sets;		/* prio sets of this cache found, any seq */
};

/*
 * Find the current prio chain of the cache behind @io.  0; -ENODATA when
 * no whole chain reads; -ENOTUNIQ when two do with the highest seq;
 * -ENOMEM.  Read errors skip the bucket.
 */
int bch_prio_scan(const struct bch_meta_io *io, const struct bch_sb *sb,
		  const struct bch_geom *g, struct bch_prio_found *f);

struct bch_uuid_found {
	u64 bucket;		/* the table taken */
	u64 other;		/* with -ENOTUNIQ: as new, and disagreeing */
	u32 when;		/* its newest time stamp (seconds) */
	u32 tables;		/* candidates found */
	u32 same;		/* of them as new as the one taken */
};

/*
 * Find the UUID table; into @table (meta_bucket_bytes) when found.  0;
 * -ENODATA when no bucket holds one; -ENOTUNIQ when two of the newest
 * stamp disagree; -ENOMEM.
 */
int bch_uuid_scan(const struct bch_meta_io *io, const struct bch_sb *sb,
		  const struct bch_geom *g, void *table,
		  struct bch_uuid_found *f);

/*
 * The table in @bucket, which an administrator named, into @table when it
 * reads as one as the scan judges a candidate.  0; -ENODATA when it does
 * not; -ENOMEM.
 */
int bch_uuid_given(const struct bch_meta_io *io, const struct bch_sb *sb,
		   const struct bch_geom *g, u64 bucket, void *table);

#endif
