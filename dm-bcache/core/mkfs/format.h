/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing a bcache device from nothing: the rules make-bcache applies to
 * a new cache or backing superblock, and the initialisation of a cache
 * set's metadata (journal, prio chain, UUID table, empty root) the way
 * the mainline driver does it on first registration.  Used by
 * bcache_format and by the target's constructor on an all-zero cache
 * device.
 */
#ifndef DM_BCACHE_CORE_FORMAT_H
#define DM_BCACHE_CORE_FORMAT_H

#include "format/geometry.h"
#include "alloc/prio_write.h"

#define BCH_FORMAT_DEF_BUCKET	1024	/* sectors, make-bcache's default */
#define BCH_FORMAT_MAX_BUCKET	32768	/* largest without feature bits */

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

/*
 * A set's metadata written from given parts, the base bch_format_cache_set()
 * writes for a new set and bcache_repair for a rebuilt one: the prio chain
 * in @prio_chain[0..nr_prio_buckets) recording @entry for every bucket, the
 * UUID table @uuids (meta_bucket_bytes; NULL: every slot free) in
 * @uuid_bucket, an empty root leaf in @root_bucket, and the journal emptied
 * but for one entry of seq @seq naming the three.  @entry must give the
 * named buckets the gens given here.
 */
struct bch_set_base {
	const u64 *prio_chain;
	u64 prio_seq;
	bch_prio_entry_fn entry;
	void *entry_ctx;
	u64 uuid_bucket, root_bucket;
	u8 uuid_gen, root_gen;
	const void *uuids;
	u64 seq;
	u32 jset_version;	/* names the UUID table's layout */
};

/* Write @base for the cache @sb; the superblock is not written.  0 or -errno. */
int bch_format_set_base(const struct bch_meta_io *io, const struct bch_sb *sb,
			const struct bch_set_base *base);

#endif
