// SPDX-License-Identifier: GPL-2.0
/*
 * The bcache target's constructor and destructor: the table line grammar,
 * one parse helper per argument group, device opening and validation.
 *
 * Table line:
 *
 *   <start> <len> bcache <cache dev> <origin dev> <#opt args> [<opt arg>]*
 *
 *   opt args:
 *     writethrough | writeback | writearound | passthrough   (mode keyword)
 *     <option name> <value>                                  (two args)
 *
 * Each option may appear once, and at most one mode keyword.  Every failure
 * sets a precise ti->error and writes nothing to either device.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/blkdev.h>
#include <linux/log2.h>

#include "compat.h"
#include "dmb-target.h"

/* Smallest cache: the fewest buckets a set may have, of a page each. */
#define DMB_MIN_CACHE_SECTORS (BCH_SET_MIN_NBUCKETS * BCH_PAGE_SECTORS)

bool dmb_opt_given(struct dmb_cache *dc, enum dmb_opt opt)
{
	unsigned int i;

	for (i = 0; i < dc->nr_opts_given; i++)
		if (dc->opt_order[i] == opt)
			return true;
	return false;
}

static int note_option(struct dmb_cache *dc, enum dmb_opt opt, u64 val,
		       char **error)
{
	if (dmb_opt_given(dc, opt)) {
		*error = (char *)dmb_opts[opt].err_duplicate;
		return -EINVAL;
	}
	dc->opt_val[opt] = val;
	dc->opt_order[dc->nr_opts_given++] = opt;
	return 0;
}

static int parse_mode_keyword(struct dmb_cache *dc, enum dmb_mode mode,
			      char **error)
{
	int r = note_option(dc, DMB_OPT_MODE, mode, error);

	if (r)
		return r;
	if (!dmb_mode_supported[mode]) {
		*error = "Cache mode is not supported yet";
		return -EOPNOTSUPP;
	}
	dc->mode = mode;
	return 0;
}

static int parse_value_option(struct dmb_cache *dc, struct dm_arg_set *as,
			      const char *name, char **error)
{
	enum dmb_opt opt = dmb_opt_lookup(name);
	const char *value;
	u64 val;
	int r;

	if (opt == DMB_NR_OPTS) {
		*error = "Unrecognised cache option";
		return -EINVAL;
	}
	if (!as->argc) {
		*error = "Missing value for cache option";
		return -EINVAL;
	}
	value = dm_shift_arg(as);
	if (dmb_opt_parse_value(opt, value, &val)) {
		*error = (char *)dmb_opts[opt].err_invalid;
		return -EINVAL;
	}
	r = note_option(dc, opt, val, error);
	if (r)
		return r;
	if (!dmb_opts[opt].supported) {
		*error = (char *)dmb_opts[opt].err_unsupported;
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The optional argument group: its count, then keywords and pairs. */
static int parse_options(struct dmb_cache *dc, struct dm_arg_set *as,
			 char **error)
{
	struct dm_arg_set opts;
	const char *count = dm_shift_arg(as);
	enum dmb_opt opt;
	u64 argc;
	int r;

	for (opt = 0; opt < DMB_NR_OPTS; opt++)
		dc->opt_val[opt] = dmb_opts[opt].def;
	dc->mode = dmb_opts[DMB_OPT_MODE].def;

	if (dmb_parse_decimal(count, &argc) || argc > DMB_MAX_OPT_ARGS) {
		*error = "Invalid number of optional arguments";
		return -EINVAL;
	}
	if (as->argc < argc) {
		*error = "Fewer optional arguments than their count";
		return -EINVAL;
	}
	if (as->argc > argc) {
		*error = "Unexpected arguments after the optional arguments";
		return -EINVAL;
	}

	opts = *as;
	while (opts.argc) {
		const char *arg = dm_shift_arg(&opts);
		enum dmb_mode mode = dmb_mode_lookup(arg);

		if (mode != DMB_NR_MODES)
			r = parse_mode_keyword(dc, mode, error);
		else
			r = parse_value_option(dc, &opts, arg, error);
		if (r)
			return r;
	}
	return 0;
}

static int parse_dev(struct dm_target *ti, const char *path,
		     struct dm_dev **dev, const char *what_error)
{
	int r = dm_get_device(ti, path, dm_table_get_mode(ti->table), dev);

	if (r)
		ti->error = (char *)what_error;
	return r;
}

static int parse_cache_dev(struct dmb_cache *dc, const char *path)
{
	struct dm_target *ti = dc->ti;
	int r = parse_dev(ti, path, &dc->cache_dev, "Error opening cache device");

	if (r)
		return r;
	if (bdev_nr_sectors(dc->cache_dev->bdev) < DMB_MIN_CACHE_SECTORS) {
		ti->error = "Cache device too small (minimum 2052 KiB)";
		return -EINVAL;
	}
	return 0;
}

/*
 * Open the origin and apply the layout rule of core/format/origin.h.  Sector 8 is
 * read only when the rule needs it, so origin_layout raw never reads it.
 */
static int parse_origin_dev(struct dmb_cache *dc, const char *path)
{
	struct dm_target *ti = dc->ti;
	struct block_device *bdev;
	struct bch_sb_disk *sb;
	sector_t size;
	u64 data_offset;
	const char *err;
	int r;

	r = parse_dev(ti, path, &dc->origin_dev, "Error opening origin device");
	if (r)
		return r;
	bdev = dc->origin_dev->bdev;
	if (dc->cache_dev->bdev == bdev) {
		ti->error = "Cache and origin must be different devices";
		return -EINVAL;
	}
	size = bdev_nr_sectors(bdev);

	if (dc->opt_val[DMB_OPT_ORIGIN_LAYOUT] != BCH_ORIGIN_RAW &&
	    size >= BCH_SB_SECTOR + BCH_SB_BYTES / SECTOR_SIZE) {
		r = dmb_meta_dev_init(&dc->origin_meta, bdev);
		if (r) {
			ti->error = "Cannot create dm-io client";
			return r;
		}
		sb = kmalloc(BCH_SB_BYTES, GFP_KERNEL);
		if (!sb) {
			ti->error = "Cannot allocate superblock buffer";
			return -ENOMEM;
		}
		r = bch_sb_read(&dc->origin_meta.io, sb);
		if (!r)
			bch_origin_probe(sb, size, bdev_logical_block_size(bdev),
					 &dc->origin_info);
		kfree(sb);
		if (r) {
			ti->error = "Error reading origin superblock";
			return r;
		}
	}
	if (dc->origin_info.probe == BCH_PROBE_INVALID)
		DMERR("origin %s: invalid bcache superblock: %s",
		      dc->origin_dev->name, dc->origin_info.invalid_reason);

	/* A dirty one must name the cache's set: dmb-index.c checks. */
	err = bch_origin_choose(dc->opt_val[DMB_OPT_ORIGIN_LAYOUT],
				&dc->origin_info, true, &dc->layout,
				&data_offset);
	if (err) {
		ti->error = (char *)err;
		return -EINVAL;
	}
	dc->data_offset = data_offset;
	if (ti->len > size - dc->data_offset) {
		ti->error = "Origin device too small for target length";
		return -EINVAL;
	}
	return 0;
}

/*
 * The block size: the unit of the cache's allocation and the logical block
 * size of the target.  It defaults to the origin superblock's when there is
 * one, else to the larger logical block size of the two devices.
 */
static int parse_block_size(struct dmb_cache *dc)
{
	struct dm_target *ti = dc->ti;
	unsigned int lbs = max(bdev_logical_block_size(dc->cache_dev->bdev),
			       bdev_logical_block_size(dc->origin_dev->bdev));
	bool backing = dc->layout == BCH_LAYOUT_BACKING;

	if (dmb_opt_given(dc, DMB_OPT_BLOCK_SIZE)) {
		dc->block_size = dc->opt_val[DMB_OPT_BLOCK_SIZE];
		if (backing && dc->block_size != dc->origin_info.sb.block_size) {
			ti->error = "block_size differs from the origin superblock's";
			return -EINVAL;
		}
	} else if (backing) {
		dc->block_size = dc->origin_info.sb.block_size;
	} else {
		dc->block_size = lbs >> SECTOR_SHIFT;
	}
	if ((dc->block_size << SECTOR_SHIFT) < lbs) {
		ti->error = "block_size smaller than a device's logical block size";
		return -EINVAL;
	}
	if (dc->block_size > BCH_PAGE_SECTORS) {
		ti->error = "Device logical block size larger than 4 KiB";
		return -EINVAL;
	}
	if (ti->len & (dc->block_size - 1)) {
		ti->error = "Target length is not a multiple of block_size";
		return -EINVAL;
	}
	return 0;
}

int dmb_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	const char *cache_path, *origin_path;
	struct dmb_cache *dc;
	int r;

	if (argc < 3) {
		ti->error = "Not enough arguments";
		return -EINVAL;
	}
	dc = kzalloc(sizeof(*dc), GFP_KERNEL);
	if (!dc) {
		ti->error = "Cannot allocate bcache context";
		return -ENOMEM;
	}
	dc->ti = ti;
	/*
	 * A table loaded read-only writes nothing to either device: its
	 * index is opened in state ro (dmb-index.c), or refused where
	 * opening would have to write.
	 */
	dc->read_only = !dmb_table_writable(ti);
	ti->private = dc;
	spin_lock_init(&dc->stream_lock);

	cache_path = dm_shift_arg(&as);
	origin_path = dm_shift_arg(&as);
	r = parse_options(dc, &as, &ti->error);
	if (r)
		goto bad;
	r = parse_cache_dev(dc, cache_path);
	if (r)
		goto bad;
	r = parse_origin_dev(dc, origin_path);
	if (r)
		goto bad;
	r = parse_block_size(dc);
	if (r)
		goto bad;
	r = dmb_index_get(dc);
	if (r)
		goto bad;
	/*
	 * A write is cached in at most DMB_MAX_PIECES pieces, one per bucket
	 * it touches, so a bio longer than DMB_MAX_PIECES - 1 buckets could
	 * never be cached: dm splits bios to this length first.  A power of
	 * two, as dm stacks it into the queue's chunk_sectors.
	 */
	r = dm_set_target_max_io_len(ti, rounddown_pow_of_two((DMB_MAX_PIECES - 1) *
							      dc->cache_sb.bucket_size));
	if (r)
		goto bad;

	r = dmb_stats_init(&dc->stats);
	if (r) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}

	ti->num_flush_bios = 1;
	/*
	 * Flushes and FUA must reach the target whatever the devices below
	 * say: the index's keys wait in memory for the next journal write,
	 * which a flush forces.  Without this, on devices without a volatile
	 * cache dm would offer neither, fsync would never reach the journal,
	 * and a power cut would lose acknowledged write-back data.
	 */
	ti->flush_supported = true;
	/*
	 * Discards invalidate what the cache holds of their range and go on
	 * to the origin (dmb-io.c); dm offers them only when both devices
	 * take them.
	 */
	ti->num_discard_bios = 1;
	ti->per_io_data_size = sizeof(struct dmb_io);
	return 0;
bad:
	dmb_dtr(ti);
	return r;
}

/* Tolerates any half-built state that dmb_ctr() can leave. */
void dmb_dtr(struct dm_target *ti)
{
	struct dmb_cache *dc = ti->private;

	if (!dc)
		return;
	dmb_index_put(dc);
	dmb_stats_exit(&dc->stats);
	dmb_meta_dev_exit(&dc->cache_meta);
	dmb_meta_dev_exit(&dc->origin_meta);
	if (dc->origin_dev)
		dm_put_device(ti, dc->origin_dev);
	if (dc->cache_dev)
		dm_put_device(ti, dc->cache_dev);
	kfree(dc);
	ti->private = NULL;
}
