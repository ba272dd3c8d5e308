// SPDX-License-Identifier: GPL-2.0
/*
 * The option table and its value parser.  Units are in the table comments
 * and in docs/dm-bcache.rst; sizes are in 512-byte sectors throughout, as
 * everywhere else in device-mapper.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/log2.h>
#include <linux/ctype.h>

#include "dmb-options.h"
#include "core/format/origin.h"

const char *const dmb_mode_names[DMB_NR_MODES] = {
	[DMB_MODE_WRITEBACK] = "writeback",
	[DMB_MODE_WRITETHROUGH] = "writethrough",
	[DMB_MODE_WRITEAROUND] = "writearound",
	[DMB_MODE_PASSTHROUGH] = "passthrough",
};

const bool dmb_mode_supported[DMB_NR_MODES] = {
	[DMB_MODE_WRITEBACK] = true,
	[DMB_MODE_WRITETHROUGH] = true,
	[DMB_MODE_WRITEAROUND] = true,
	[DMB_MODE_PASSTHROUGH] = true,
};

static const char *const replacement_names[] = { "lru", "fifo", "random" };
static const char *const on_off_names[] = { "off", "on" };

#define NAMES(a) .names = (a), .nr_names = ARRAY_SIZE(a), .max = ARRAY_SIZE(a) - 1
#define ERRORS(n) \
	.err_invalid = "Invalid " n " value", \
	.err_unsupported = "Option " n " is not supported yet", \
	.err_duplicate = "Option " n " given more than once"

const struct dmb_opt_desc dmb_opts[DMB_NR_OPTS] = {
	[DMB_OPT_MODE] = {
		.name = "cache_mode", .max = DMB_NR_MODES - 1,
		.def = DMB_MODE_WRITETHROUGH, .runtime = true,
		.supported = true,
		.err_invalid = "Invalid cache mode",
		.err_unsupported = "Cache mode is not supported yet",
		.err_duplicate = "Conflicting cache modes",
	},
	/* auto | raw | backing: see core/format/origin.h */
	[DMB_OPT_ORIGIN_LAYOUT] = {
		.name = "origin_layout", NAMES(bch_origin_request_names),
		.supported = true, ERRORS("origin_layout"),
	},
	/* sectors; exposed logical block size and cache block size */
	[DMB_OPT_BLOCK_SIZE] = {
		.name = "block_size", .min = 1, .max = 8, .pow2 = true,
		.supported = true, ERRORS("block_size"),
	},
	/* sectors; used when formatting the cache */
	[DMB_OPT_BUCKET_SIZE] = {
		.name = "bucket_size", .min = 8, .max = 32768, .def = 1024,
		.pow2 = true, .supported = true, ERRORS("bucket_size"),
	},
	[DMB_OPT_REPLACEMENT] = {
		.name = "replacement", NAMES(replacement_names),
		ERRORS("replacement"),
	},
	[DMB_OPT_DISCARD] = {
		.name = "discard", NAMES(on_off_names), .runtime = true,
		ERRORS("discard"),
	},
	/* sectors; 0 disables sequential bypass */
	[DMB_OPT_SEQ_CUTOFF] = {
		.name = "sequential_cutoff", .max = 1ULL << 31, .def = 8192,
		.runtime = true, .supported = true,
		ERRORS("sequential_cutoff"),
	},
	/* microseconds; 0 disables */
	[DMB_OPT_CONG_READ] = {
		.name = "congested_read_threshold_us", .max = 10000000,
		.def = 2000, .runtime = true, .supported = true,
		ERRORS("congested_read_threshold_us"),
	},
	[DMB_OPT_CONG_WRITE] = {
		.name = "congested_write_threshold_us", .max = 10000000,
		.def = 20000, .runtime = true, .supported = true,
		ERRORS("congested_write_threshold_us"),
	},
	/* sectors read past a miss */
	[DMB_OPT_READAHEAD] = {
		.name = "readahead", .max = 65536, .runtime = true,
		.supported = true, ERRORS("readahead"),
	},
	/* percent of the cache kept dirty */
	[DMB_OPT_WB_PERCENT] = {
		.name = "writeback_percent", .max = 40, .def = 10,
		.runtime = true, .supported = true, ERRORS("writeback_percent"),
	},
	/* seconds from the first dirty data in a clean cache to writeback */
	[DMB_OPT_WB_DELAY] = {
		.name = "writeback_delay", .max = 86400, .def = 30,
		.runtime = true, .supported = true, ERRORS("writeback_delay"),
	},
	/* sectors per second */
	[DMB_OPT_WB_RATE_MIN] = {
		.name = "writeback_rate_minimum", .min = 1, .max = 1U << 30,
		.def = 8, .runtime = true, .supported = true,
		ERRORS("writeback_rate_minimum"),
	},
	/* on: write through and write back flat out until clean, to detach */
	[DMB_OPT_CLEANER] = {
		.name = "cleaner", NAMES(on_off_names), .runtime = true,
		.supported = true, ERRORS("cleaner"),
	},
	/* on: postsuspend writes back everything before it returns */
	[DMB_OPT_FLUSH_ON_SUSPEND] = {
		.name = "flush_on_suspend", NAMES(on_off_names), .runtime = true,
		.supported = true, ERRORS("flush_on_suspend"),
	},
};

enum dmb_opt dmb_opt_lookup(const char *name)
{
	enum dmb_opt opt;

	/* The mode is given as a keyword in tables, never by this name. */
	for (opt = DMB_OPT_MODE + 1; opt < DMB_NR_OPTS; opt++)
		if (!strcmp(name, dmb_opts[opt].name))
			return opt;
	return DMB_NR_OPTS;
}

enum dmb_mode dmb_mode_lookup(const char *name)
{
	enum dmb_mode mode;

	for (mode = 0; mode < DMB_NR_MODES; mode++)
		if (!strcmp(name, dmb_mode_names[mode]))
			return mode;
	return DMB_NR_MODES;
}

int dmb_parse_decimal(const char *str, u64 *val)
{
	/* Digits only: no sign, no radix prefix, no trailing junk. */
	if (!isdigit(str[0]) || kstrtou64(str, 10, val))
		return -EINVAL;
	return 0;
}

int dmb_opt_parse_value(enum dmb_opt opt, const char *str, u64 *val)
{
	const struct dmb_opt_desc *d = &dmb_opts[opt];
	unsigned int i;
	u64 v;

	if (opt == DMB_OPT_MODE) {
		v = dmb_mode_lookup(str);
		if (v == DMB_NR_MODES)
			return -EINVAL;
		*val = v;
		return 0;
	}
	if (d->names) {
		for (i = 0; i < d->nr_names; i++) {
			if (!strcmp(str, d->names[i])) {
				*val = i;
				return 0;
			}
		}
		return -EINVAL;
	}
	if (dmb_parse_decimal(str, &v))
		return -EINVAL;
	if (v < d->min || v > d->max || (d->pow2 && !is_power_of_2(v)))
		return -EINVAL;
	*val = v;
	return 0;
}

int dmb_opt_format_value(enum dmb_opt opt, u64 val, char *buf, size_t len)
{
	const struct dmb_opt_desc *d = &dmb_opts[opt];

	if (opt == DMB_OPT_MODE)
		return scnprintf(buf, len, "%s", dmb_mode_names[val]);
	if (d->names)
		return scnprintf(buf, len, "%s", d->names[val]);
	return scnprintf(buf, len, "%llu", val);
}
