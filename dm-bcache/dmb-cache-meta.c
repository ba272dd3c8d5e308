// SPDX-License-Identifier: GPL-2.0
/*
 * The cache device at construction: format it when its superblock area is
 * all zero, create the set's metadata when it carries a superblock that
 * make-bcache wrote (as the mainline driver does on first registration),
 * and otherwise check all of its metadata with the same checker that
 * bcache_check runs, refusing a damaged cache with a precise ti->error
 * (and a cache whose needs_check flag says a table failed on it).  A
 * table loaded read-only writes nothing: it takes a cache that holds a
 * set, needs_check or not, and refuses one it would have to write first.
 * The details of every finding go to the kernel log.
 */
#include <linux/blkdev.h>
#include <linux/log2.h>
#include <linux/uuid.h>

#include "dmb-target.h"
#include "core/mkfs/format.h"

/*
 * The bucket size chosen for a blank cache aims at this many buckets; the
 * minimum any cache may have is bch_set_nbuckets_err()'s.
 */
#define DMB_FORMAT_AIM_NBUCKETS	1024
#define DMB_MAX_LOGGED		8

static const char *const damage_errors[BCH_NR_DAMAGE] = {
	[BCH_DMG_SUPERBLOCK] = "Cache superblock invalid",
	[BCH_DMG_JOURNAL_EMPTY] = "Cache journal has no valid entry",
	[BCH_DMG_JOURNAL_ENTRY] = "Cache journal entry damaged",
	[BCH_DMG_JOURNAL_TAIL] = NULL,	/* tolerated: bch_damage_tolerated() */
	[BCH_DMG_JOURNAL_SEQ] = "Cache journal sequence broken",
	[BCH_DMG_JOURNAL_KEY] = "Cache journal holds an invalid key",
	[BCH_DMG_PRIO] = "Cache prio buckets damaged",
	[BCH_DMG_UUID] = "Cache UUID table damaged",
	[BCH_DMG_ROOT] = "Cache btree root invalid",
	[BCH_DMG_NODE] = "Cache btree node damaged",
	[BCH_DMG_KEY_INVALID] = "Cache btree holds an invalid key",
	[BCH_DMG_KEY_ORDER] = "Cache btree keys out of order",
	[BCH_DMG_KEY_OVERLAP] = "Cache btree keys overlap",
	[BCH_DMG_KEY_BOUNDS] = "Cache btree key outside its node",
	[BCH_DMG_PTR_STALE] = "Cache metadata pointer stale",
	[BCH_DMG_BUCKET_CONFLICT] = "Cache bucket used twice",
};

struct findings {
	struct dmb_cache *dc;
	unsigned int logged;
	int first;			/* class of the first finding, or -1 */
};

/* Every finding refuses the cache except those the core tolerates. */
static void on_finding(void *ctx, enum bch_damage cls, const char *msg)
{
	struct findings *f = ctx;

	if (bch_damage_tolerated(cls)) {
		DMWARN("cache %s: %s: %s; ignored", f->dc->cache_dev->name,
		       bch_damage_names[cls], msg);
		return;
	}
	if (f->first < 0)
		f->first = cls;
	if (f->logged++ < DMB_MAX_LOGGED)
		DMERR("cache %s: %s: %s", f->dc->cache_dev->name,
		      bch_damage_names[cls], msg);
}

/*
 * The bucket size to format with: the table's, or 512 KiB (make-bcache's
 * default) halved until the device holds DMB_FORMAT_AIM_NBUCKETS.
 */
static u32 choose_bucket_size(struct dmb_cache *dc, u64 sectors)
{
	u32 bucket = dc->opt_val[DMB_OPT_BUCKET_SIZE];

	if (dmb_opt_given(dc, DMB_OPT_BUCKET_SIZE))
		return bucket;
	while (bucket > BCH_PAGE_SECTORS &&
	       sectors / bucket < DMB_FORMAT_AIM_NBUCKETS)
		bucket >>= 1;
	return max_t(u32, bucket, dc->block_size);
}

static int format_cache(struct dmb_cache *dc, void *area)
{
	struct dm_target *ti = dc->ti;
	struct bch_format_params p = { 0 };
	struct bch_sb *sb = &dc->cache_sb;
	const char *err;
	int r;

	p.dev_sectors = dc->cache_meta.io.sectors;
	p.block_size = dc->block_size;
	p.bucket_size = choose_bucket_size(dc, p.dev_sectors);
	p.policy = BCH_REPLACEMENT_LRU;
	generate_random_uuid(p.uuid);		/* RFC 4122 version 4 */
	generate_random_uuid(p.set_uuid);
	err = bch_format_cache_sb(&p, sb);
	if (err) {
		DMERR("cache %s: cannot format with %u-sector buckets: %s",
		      dc->cache_dev->name, p.bucket_size, err);
		ti->error = "Cache device too small for 513 buckets of bucket_size";
		return -EINVAL;
	}
	/* Zero the head as make-bcache does, then the set, superblock last. */
	memset(area, 0, BCH_SB_BYTES);
	r = dc->cache_meta.io.write(dc->cache_meta.io.ctx, 0, area,
				    BCH_SB_BYTES);
	if (!r)
		r = bch_format_cache_set(&dc->cache_meta.io, sb);
	if (r) {
		ti->error = "Error formatting cache device";
		return r;
	}
	dc->formatted = true;
	DMINFO("cache %s: formatted: %llu buckets of %u sectors, block %u",
	       dc->cache_dev->name, sb->nbuckets, sb->bucket_size,
	       sb->block_size);
	return 0;
}

static int check_cache(struct dmb_cache *dc);

/*
 * The table against an existing superblock (read from the device, or the
 * live index's a reload shares), before anything is written:
 * bucket_size, where given, must match; the target's block size (its
 * logical block size) may be larger than the cache's block size but not
 * smaller, as the mainline driver refuses a backing device whose block
 * size is smaller than its cache's.  Without block_size or a backing
 * superblock, the target takes the cache's block size if it is larger.
 */
int dmb_cache_match_geometry(struct dmb_cache *dc)
{
	struct dm_target *ti = dc->ti;
	struct bch_sb *sb = &dc->cache_sb;
	bool given = dmb_opt_given(dc, DMB_OPT_BLOCK_SIZE);
	bool backing = dc->layout == BCH_LAYOUT_BACKING;

	if (dmb_opt_given(dc, DMB_OPT_BUCKET_SIZE) &&
	    dc->opt_val[DMB_OPT_BUCKET_SIZE] != sb->bucket_size) {
		ti->error = "bucket_size differs from the cache superblock's";
		return -EINVAL;
	}
	if (!given && !backing)
		dc->block_size = max(dc->block_size, sb->block_size);
	if (dc->block_size < sb->block_size) {
		ti->error = given ? "block_size smaller than the cache's block size" :
			"Origin superblock block size smaller than the cache's";
		return -EINVAL;
	}
	if (ti->len & (dc->block_size - 1)) {
		ti->error = "Target length is not a multiple of block_size";
		return -EINVAL;
	}
	return 0;
}

static int check_cache(struct dmb_cache *dc)
{
	struct dm_target *ti = dc->ti;
	struct findings f = { .dc = dc, .first = -1 };
	struct bch_check_ops ops = { .ctx = &f, .finding = on_finding };
	struct bch_check_opts o = { 0 };
	struct bch_check_result *res;
	int r;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res) {
		ti->error = "Cannot allocate check state";
		return -ENOMEM;
	}
	r = bch_check(&dc->cache_meta.io, &o, &ops, res);
	if (r) {
		ti->error = "Error reading cache metadata";
	} else if (f.first >= 0) {
		if (f.logged > DMB_MAX_LOGGED)
			DMERR("cache %s: %u more findings; run bcache_check",
			      dc->cache_dev->name, f.logged - DMB_MAX_LOGGED);
		ti->error = (char *)damage_errors[f.first];
		r = -EINVAL;
	}
	kfree(res);
	return r;
}

/*
 * Before a set is made on the cache (formatting it, or creating the set
 * a make-bcache superblock lacks): a new set holds no dirty data, so an
 * origin whose backing superblock says dirty has its newest data in some
 * other set.  Refused here, before anything is written to the cache.
 */
static int refuse_dirty_origin(struct dmb_cache *dc, const u8 *set_uuid)
{
	const struct bch_sb *osb = &dc->origin_info.sb;

	if (dc->layout != BCH_LAYOUT_BACKING ||
	    bch_sb_bdev_state(osb) != BCH_BDEV_STATE_DIRTY)
		return 0;
	dc->ti->error = set_uuid && !memcmp(osb->set_uuid, set_uuid, 16) ?
		"Origin bcache superblock is dirty but its cache holds no index" :
		"Origin bcache superblock is dirty for another cache set";
	return -EINVAL;
}

int dmb_cache_meta_open(struct dmb_cache *dc)
{
	struct dm_target *ti = dc->ti;
	struct bch_meta_io *io = &dc->cache_meta.io;
	const char *err;
	u8 *area;
	int r;

	r = dmb_meta_dev_init(&dc->cache_meta, dc->cache_dev->bdev);
	if (r) {
		ti->error = "Cannot create dm-io client";
		return r;
	}
	area = kzalloc(BCH_SB_AREA_BYTES, GFP_KERNEL);
	if (!area) {
		ti->error = "Cannot allocate superblock buffer";
		return -ENOMEM;
	}
	r = io->read(io->ctx, 0, area, BCH_SB_AREA_BYTES);
	if (r) {
		ti->error = "Error reading cache superblock";
		goto out;
	}
	if (bch_sb_area_blank(area)) {
		if (dc->read_only) {
			ti->error = "Read-only table: the cache is blank";
			r = -EINVAL;
			goto out;
		}
		r = refuse_dirty_origin(dc, NULL);
		if (!r)
			r = format_cache(dc, area);
		if (!r)
			r = check_cache(dc);
		goto out;
	}

	err = bch_sb_validate((void *)(area + BCH_SB_BYTES), io->sectors,
			      io->lbs, &dc->cache_sb);
	if (err) {
		DMERR("cache %s: superblock: %s", dc->cache_dev->name, err);
		ti->error = (char *)err;
		r = -EINVAL;
		goto out;
	}
	if (dc->cache_sb.kind != BCH_SB_KIND_CACHE) {
		ti->error = "Cache device has a bcache backing superblock";
		r = -EINVAL;
		goto out;
	}
	/*
	 * A cache that failed with dirty data keeps its set, trusted, and
	 * needs_check: a read-only table may still read the dirty data out
	 * (as dm-thin lets a pool that needs checking run read-only).
	 */
	if ((dc->cache_sb.flags & BCH_CACHE_NEEDS_CHECK) && !dc->read_only) {
		ti->error = "Cache needs checking: run bcache_check --clear-needs-check-flag";
		r = -EINVAL;
		goto out;
	}
	r = dmb_cache_match_geometry(dc);
	if (r)
		goto out;
	if (!(dc->cache_sb.flags & BCH_CACHE_SYNC)) {
		/* make-bcache output: create the set, as registration does. */
		if (dc->read_only) {
			ti->error = "Read-only table: the cache holds no set";
			r = -EINVAL;
			goto out;
		}
		if (bch_set_nbuckets_err(dc->cache_sb.nbuckets)) {
			ti->error = "Cache superblock has fewer than 513 buckets";
			r = -EINVAL;
			goto out;
		}
		r = refuse_dirty_origin(dc, dc->cache_sb.set_uuid);
		if (r)
			goto out;
		r = bch_format_cache_set(io, &dc->cache_sb);
		if (r) {
			ti->error = "Error creating the cache set";
			goto out;
		}
		dc->formatted = true;
	}
	/* What we just wrote is checked too: the cheapest self-test. */
	r = check_cache(dc);
out:
	kfree(area);
	return r;
}
