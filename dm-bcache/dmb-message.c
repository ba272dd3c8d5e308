// SPDX-License-Identifier: GPL-2.0
/*
 * Messages (dmsetup message <dev> 0 ...):
 *
 *   cache_mode <mode>         switch the cache mode
 *   <option> <value>          set a runtime option (dmb-options.c)
 *   clear_stats               zero the I/O counters
 *   gc                        run a gc pass now, return when it is done
 *   flush                     write back all dirty data, return when the
 *                             cache is clean (an error if a copy failed);
 *                             writes are written through meanwhile
 *   detach [force]            forget the origin: refused while anything
 *                             is dirty unless forced (which drops the
 *                             dirty data); then passthrough, and a
 *                             backing origin's superblock says detached
 *   invalidate <begin>-<end>  known, implemented by a later version
 *
 * Every refusal returns an error to dmsetup and logs one line naming the
 * message and the reason.  A table loaded read-only refuses the messages
 * that write to a device or change how it is cached (-EROFS).
 */
#include <linux/device-mapper.h>

#include "dmb-target.h"

static const char *const later_messages[] = {
	"invalidate",
};

static const char *const writing_messages[] = {
	"gc", "flush", "detach", "cache_mode",
};

static int refuse(struct dmb_cache *dc, const char *msg, int err,
		  const char *why)
{
	DMWARN("%s: message %s refused: %s",
	       dm_device_name(dm_table_get_md(dc->ti->table)), msg, why);
	return err;
}

static int set_cache_mode(struct dmb_cache *dc, const char *name)
{
	enum dmb_mode mode = dmb_mode_lookup(name);

	if (mode == DMB_NR_MODES)
		return refuse(dc, "cache_mode", -EINVAL, "unknown cache mode");
	if (!dmb_mode_supported[mode])
		return refuse(dc, "cache_mode", -EOPNOTSUPP,
			      "cache mode is not supported yet");
	/* Reads would go to the origin, which lacks the dirty data. */
	if (mode == DMB_MODE_PASSTHROUGH &&
	    bch_set_dirty_sectors(&dc->ix->set))
		return refuse(dc, "cache_mode", -EBUSY,
			      "dirty data in the cache: flush it first");
	WRITE_ONCE(dc->mode, mode);
	dmb_wb_tune(dc->ix, dc);
	dmb_table_changed(dc);
	return 0;
}

static int detach_origin(struct dmb_cache *dc, bool force)
{
	struct dmb_index *ix = dc->ix;
	enum dmb_mode mode = READ_ONCE(dc->mode);
	int r;

	if (!force && bch_set_dirty_sectors(&ix->set))
		return refuse(dc, "detach", -EBUSY,
			      "dirty data in the cache: flush first, or detach force");
	WRITE_ONCE(dc->mode, DMB_MODE_PASSTHROUGH);
	dmb_wb_tune(ix, dc);
	r = dmb_index_detach(ix, dc->data_offset, dc->ti->len, force);
	if (r) {
		WRITE_ONCE(dc->mode, mode);
		dmb_wb_tune(ix, dc);
		return refuse(dc, "detach", r, r == -EBUSY ?
			      "dirty data in the cache: flush first, or detach force" :
			      "the cache index could not record it");
	}
	DMINFO("%s: detached from cache %s%s",
	       dm_device_name(dm_table_get_md(dc->ti->table)), ix->name,
	       force ? " (forced: dirty data dropped)" : "");
	dmb_table_changed(dc);
	return 0;
}

static int set_option(struct dmb_cache *dc, enum dmb_opt opt,
		      const char *value)
{
	const struct dmb_opt_desc *d = &dmb_opts[opt];
	u64 val;

	if (dmb_opt_parse_value(opt, value, &val))
		return refuse(dc, d->name, -EINVAL, d->err_invalid);
	if (!d->runtime)
		return refuse(dc, d->name, -EINVAL,
			      "option cannot be changed at runtime");
	if (!d->supported)
		return refuse(dc, d->name, -EOPNOTSUPP, d->err_unsupported);
	WRITE_ONCE(dc->opt_val[opt], val);
	dmb_wb_tune(dc->ix, dc);
	return 0;
}

int dmb_message(struct dm_target *ti, unsigned int argc, char **argv,
		char *result, unsigned int maxlen)
{
	struct dmb_cache *dc = ti->private;
	enum dmb_opt opt;
	unsigned int i;

	if (!argc)
		return refuse(dc, "(empty)", -EINVAL, "no message given");
	for (i = 0; dc->read_only && i < ARRAY_SIZE(writing_messages); i++)
		if (!strcasecmp(argv[0], writing_messages[i]))
			return refuse(dc, argv[0], -EROFS, "the table is read-only");

	if (!strcasecmp(argv[0], "clear_stats")) {
		if (argc != 1)
			return refuse(dc, argv[0], -EINVAL, "takes no arguments");
		dmb_stats_clear(&dc->stats);
		return 0;
	}
	if (!strcasecmp(argv[0], "gc")) {
		if (argc != 1)
			return refuse(dc, argv[0], -EINVAL, "takes no arguments");
		return dmb_index_gc(dc->ix);
	}
	if (!strcasecmp(argv[0], "flush")) {
		if (argc != 1)
			return refuse(dc, argv[0], -EINVAL, "takes no arguments");
		return dmb_wb_flush(dc->ix);
	}
	if (!strcasecmp(argv[0], "detach")) {
		if (argc > 2 || (argc == 2 && strcasecmp(argv[1], "force")))
			return refuse(dc, argv[0], -EINVAL,
				      "takes no argument but force");
		return detach_origin(dc, argc == 2);
	}
	if (!strcasecmp(argv[0], "cache_mode")) {
		if (argc != 2)
			return refuse(dc, argv[0], -EINVAL, "takes one argument");
		return set_cache_mode(dc, argv[1]);
	}
	for (i = 0; i < ARRAY_SIZE(later_messages); i++)
		if (!strcasecmp(argv[0], later_messages[i]))
			return refuse(dc, argv[0], -EOPNOTSUPP,
				      "not supported yet");

	opt = dmb_opt_lookup(argv[0]);
	if (opt == DMB_NR_OPTS)
		return refuse(dc, argv[0], -EINVAL, "unknown message");
	if (argc != 2)
		return refuse(dc, argv[0], -EINVAL, "takes one value");
	return set_option(dc, opt, argv[1]);
}
