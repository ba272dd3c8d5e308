/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sizes and magics derived from a cache superblock: how big a metadata
 * bucket's used part is, how big a btree node is, how many prios fit in a
 * prio bucket, how many UUID slots the table has, and the per-structure
 * magic numbers derived from the set UUID.  ondisk-format 3.4, 5.1, 7,
 * appendix A and B.  The driver derives several of these from the x86-64
 * page size and MAX_ORDER; the constants here fix them to those values
 * whatever the host.
 */
#ifndef DM_BCACHE_CORE_GEOMETRY_H
#define DM_BCACHE_CORE_GEOMETRY_H

#include "format/super.h"
#include "format/bkey.h"

#define BCH_PAGE_BYTES		4096
#define BCH_MAX_ORDER_PAGES	1024	/* MAX_ORDER_NR_PAGES on x86-64 */
#define BCH_BTREE_MAX_PAGES	64
#define BCH_JSET_MAX_BYTES	(BCH_PAGE_BYTES << 3)
#define BCH_INITIAL_PRIO	32768
#define BCH_BTREE_PRIO		65535

#define BCH_JSET_MAGIC		0x245235c1a3625032ULL
#define BCH_PSET_MAGIC		0x6750e15f87337f91ULL
#define BCH_BSET_MAGIC		0x90135c78b99e07f5ULL

struct bch_geom {
	struct bch_key_geom kg;		/* nbuckets, bucket_size, first_bucket */
	u32 block_sectors;
	u32 meta_bucket_bytes;		/* used part of a prio/UUID bucket */
	u32 btree_sectors;		/* btree node size */
	u32 prios_per_bucket;
	u32 nr_prio_buckets;
	u32 nr_uuids;
	u32 nr_this_dev;
	u64 set_magic;
	u64 jset_magic;
	u64 pset_magic;
	u64 bset_magic;
};

/* Fill @g from a validated cache superblock. */
void bch_geom_init(struct bch_geom *g, const struct bch_sb *sb);

static inline u64 bch_bucket_sector(const struct bch_geom *g, u64 bucket)
{
	return bucket * g->kg.bucket_size;
}

static inline u64 bch_ptr_bucket(const struct bch_geom *g, u64 ptr)
{
	return bch_ptr_offset(ptr) / g->kg.bucket_size;
}

/*
 * The recovery rule (ondisk-format 3.3): a pointer on this device that is
 * newer than its bucket sets the bucket's gen in @gens.
 */
void bch_gen_adopt(const struct bch_geom *g, u8 *gens, u64 ptr);

/*
 * Is @k's pointer current: present, on this device (sets have one), inside
 * it, and not stale against @gens?  NULL @gens means gens are unknown, and
 * nothing counts as stale.
 */
bool bch_key_live(const struct bch_geom *g, const u8 *gens,
		  const struct bch_key *k);

/*
 * The fewest buckets a cache set may have: the mainline driver sizes its
 * free lists as roundup_pow_of_two(nbuckets) >> 10 and refuses the cache
 * when that is 0, i.e. at 512 buckets or fewer.  bcache_format, the
 * checker and the target all apply this one rule (bch_set_nbuckets_err).
 */
#define BCH_SET_MIN_NBUCKETS	513

/* NULL if a cache set of @nbuckets buckets is usable, else why not. */
const char *bch_set_nbuckets_err(u64 nbuckets);

#endif
