// SPDX-License-Identifier: GPL-2.0
/*
 * dm-bcache: the bcache SSD cache as a device-mapper target.
 *
 * This file owns the target's registration, its I/O mapping, device
 * iteration, queue limits and the suspend/resume hooks.  The table line is
 * parsed in dmb-ctr.c, status in dmb-status.c, messages in dmb-message.c,
 * and the on-disk format lives in core/, shared with the userspace tools.
 *
 * It caches in every mode, write-back included: the data path is dmb-io.c,
 * the index and its worker dmb-index.c, the index itself core/set/set.c,
 * write-back dmb-writeback.c.
 */
#include <linux/module.h>
#include <linux/bio.h>

#include "dmb-target.h"
#include "compat.h"
#include "core/util/crc64.h"
#include "core/util/version.h"

static int dmb_iterate_devices(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data)
{
	struct dmb_cache *dc = ti->private;
	int r;

	r = fn(ti, dc->cache_dev, 0, bdev_nr_sectors(dc->cache_dev->bdev), data);
	if (!r)
		r = fn(ti, dc->origin_dev, dc->data_offset, ti->len, data);
	return r;
}

/* Never expose a block smaller than the cache's allocation unit. */
static void dmb_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct dmb_cache *dc = ti->private;
	unsigned int bytes = dc->block_size << SECTOR_SHIFT;

	if (limits->logical_block_size < bytes)
		limits->logical_block_size = bytes;
	if (limits->physical_block_size < bytes)
		limits->physical_block_size = bytes;
	dmb_limits_raise_io_min(limits, bytes);
}

/*
 * Suspend and resume.  dm calls presuspend before waiting for in-flight
 * I/O, postsuspend once it has drained, and resume before new I/O is let
 * in.  Postsuspend leaves the index durable: pending keys journalled,
 * changed nodes written and a journal entry naming the root, so a table
 * reload or a removal starts from a clean commit.
 */
static const char *dmb_name(struct dm_target *ti)
{
	return dm_device_name(dm_table_get_md(ti->table));
}

/* Write-back copies bypass dm, so they stop here and restart on resume. */
static void dmb_presuspend(struct dm_target *ti)
{
	struct dmb_cache *dc = ti->private;

	DMDEBUG("%s: presuspend", dmb_name(ti));
	dmb_wb_stop(dc->ix);
}

/* A suspend that did not happen (interrupted): write-back goes on. */
static void dmb_presuspend_undo(struct dm_target *ti)
{
	struct dmb_cache *dc = ti->private;

	dmb_wb_start(dc->ix);
}

static void dmb_postsuspend(struct dm_target *ti)
{
	struct dmb_cache *dc = ti->private;

	DMDEBUG("%s: postsuspend", dmb_name(ti));
	if (dc->read_only)	/* nothing to write, nothing written */
		return;
	if (READ_ONCE(dc->opt_val[DMB_OPT_FLUSH_ON_SUSPEND]) &&
	    dmb_wb_flush_suspended(dc->ix))
		DMERR("%s: flush_on_suspend: dirty data left in the cache",
		      dmb_name(ti));
	dmb_index_sync(dc->ix);
}

static void dmb_resume(struct dm_target *ti)
{
	struct dmb_cache *dc = ti->private;

	DMDEBUG("%s: resume", dmb_name(ti));
	dmb_index_resume(dc->ix);
	dmb_wb_tune(dc->ix, dc);
	dmb_wb_start(dc->ix);
}

static struct target_type dmb_target = {
	.name = "bcache",
	.version = { DMB_VERSION_MAJOR, DMB_VERSION_MINOR, DMB_VERSION_PATCH },
	.module = THIS_MODULE,
	.ctr = dmb_ctr,
	.dtr = dmb_dtr,
	.map = dmb_map,
	.end_io = dmb_end_io,
	.status = dmb_status,
	.message = dmb_message,
	.iterate_devices = dmb_iterate_devices,
	.io_hints = dmb_io_hints,
	.presuspend = dmb_presuspend,
	.presuspend_undo = dmb_presuspend_undo,
	.postsuspend = dmb_postsuspend,
	.resume = dmb_resume,
};

static int __init dmb_init(void)
{
	int r;

	bch_crc64_init();
	r = dmb_index_init();
	if (r)
		return r;
	r = dm_register_target(&dmb_target);
	if (r)
		dmb_index_exit();
	return r;
}

static void __exit dmb_exit(void)
{
	dm_unregister_target(&dmb_target);
	dmb_index_exit();
}

module_init(dmb_init);
module_exit(dmb_exit);

MODULE_DESCRIPTION(DM_NAME " bcache SSD cache target");
MODULE_AUTHOR("The dm-bcache developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(DMB_VERSION_STRING);
