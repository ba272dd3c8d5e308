/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing a bcache device from nothing: superblock encoding, the rules
 * make-bcache applies to a new cache or backing superblock, and the
 * initialisation of a cache set's metadata (journal, prio chain, UUID
 * table, empty root) the way the mainline driver does it on first
 * registration.  Used by bcache_format and by the target's constructor
 * on an all-zero cache device.
 */
#ifndef DM_BCACHE_CORE_FORMAT_H
#define DM_BCACHE_CORE_FORMAT_H

#include "geometry.h"

/*
 * The fewest buckets a cache set may have: the mainline driver sizes its
 * free lists as roundup_pow_of_two(nbuckets) >> 10 and refuses the cache
 * when that is 0, i.e. at 512 buckets or fewer.  bcache_format, the
 * checker and the target all apply this one rule (bch_set_nbuckets_err).
 */
#define BCH_SET_MIN_NBUCKETS	513
#define BCH_FORMAT_DEF_BUCKET	1024	/* sectors, make-bcache's default */
#define BCH_FORMAT_MAX_BUCKET	32768	/* largest without feature bits */

enum bch_replacement {
	BCH_REPLACEMENT_LRU,
	BCH_REPLACEMENT_FIFO,
	BCH_REPLACEMENT_RANDOM,
};

struct bch_format_params {
	u64 dev_sectors;
	u32 block_size;		/* sectors */
	u32 bucket_size;	/* sectors */
	u64 data_offset;	/* backing only, sectors */
	bool discard;		/* cache only */
	enum bch_replacement policy;
	bool writeback;		/* backing only: initial cache mode */
	u8 uuid[16];
	u8 set_uuid[16];
	u8 label[BCH_SB_LABEL_SIZE];
};

/* Encode @sb into @d (BCH_SB_BYTES, zeroed by the caller) with its csum. */
void bch_sb_encode(const struct bch_sb *sb, struct bch_sb_disk *d);

/*
 * Build the superblock make-bcache would write for @p; NULL on success,
 * else why @p cannot be formatted.  The cache superblock is left not
 * synchronous (no metadata yet), exactly as make-bcache leaves it.
 */
const char *bch_format_cache_sb(const struct bch_format_params *p,
				struct bch_sb *sb);
const char *bch_format_backing_sb(const struct bch_format_params *p,
				  struct bch_sb *sb);

/*
 * Give the cache described by @sb (valid, not yet synchronous) a fresh,
 * empty set: journal buckets, a prio chain, an empty UUID table and an
 * empty root leaf, one journal entry naming them, then the superblock
 * marked synchronous.  Writes the superblock last so that a crash leaves
 * a device the next attempt formats again.  Updates @sb to what was
 * written.  Returns 0 or a negative errno.
 */
int bch_format_cache_set(const struct bch_meta_io *io, struct bch_sb *sb);

/* NULL if a cache set of @nbuckets buckets is usable, else why not. */
const char *bch_set_nbuckets_err(u64 nbuckets);

/*
 * A blank device: sectors 0-15 (the head make-bcache zeroes and the
 * superblock) all zero.  The target formats a blank cache on first use and
 * the checker reports it as blank, not as damage.  @area holds
 * BCH_SB_AREA_BYTES from sector 0.
 */
#define BCH_SB_AREA_BYTES	(2 * BCH_SB_BYTES)
bool bch_sb_area_blank(const void *area);

/* Read and write the superblock block at sector 8. */
/* @buf holds BCH_SB_BYTES. */
int bch_sb_read(const struct bch_meta_io *io, void *buf);
int bch_sb_write(const struct bch_meta_io *io, const struct bch_sb *sb);

#endif
