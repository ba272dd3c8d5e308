/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The grammar of the bcache target's optional arguments, in one table.
 *
 * Every option a user can give, in the table line or by message, is
 * described here once: its name, whether it takes a value, the value's
 * range and unit, whether it may change at runtime, and whether this
 * version implements it.  The constructor, the message handler, the status
 * writer and docs/dm-bcache.rst all follow this table.
 *
 * Options that a later version implements are still parsed and
 * range-checked, then refused with "... not supported yet", so that a table
 * line written for a newer module fails loudly instead of being accepted
 * with no effect.
 */
#ifndef DM_BCACHE_OPTIONS_H
#define DM_BCACHE_OPTIONS_H

#include <linux/types.h>

/* Cache modes, ordered from most to least caching. */
enum dmb_mode {
	DMB_MODE_WRITEBACK,
	DMB_MODE_WRITETHROUGH,
	DMB_MODE_WRITEAROUND,
	DMB_MODE_PASSTHROUGH,
	DMB_NR_MODES
};

enum dmb_opt {
	DMB_OPT_MODE,		/* a mode keyword: no value */
	DMB_OPT_ORIGIN_LAYOUT,
	DMB_OPT_BLOCK_SIZE,
	DMB_OPT_BUCKET_SIZE,
	DMB_OPT_REPLACEMENT,
	DMB_OPT_DISCARD,
	DMB_OPT_SEQ_CUTOFF,
	DMB_OPT_CONG_READ,
	DMB_OPT_CONG_WRITE,
	DMB_OPT_READAHEAD,
	DMB_OPT_WB_PERCENT,
	DMB_OPT_WB_DELAY,
	DMB_OPT_WB_RATE_MIN,
	DMB_OPT_CLEANER,
	DMB_OPT_FLUSH_ON_SUSPEND,
	DMB_NR_OPTS
};

struct dmb_opt_desc {
	const char *name;
	const char *const *names;	/* value names, or NULL if numeric */
	unsigned int nr_names;
	u64 min, max, def;
	bool pow2;			/* value must be a power of two */
	bool runtime;			/* may be changed by message */
	bool supported;			/* implemented by this version */
	const char *err_invalid;	/* bad or out-of-range value */
	const char *err_unsupported;
	const char *err_duplicate;
};

extern const struct dmb_opt_desc dmb_opts[DMB_NR_OPTS];
extern const char *const dmb_mode_names[DMB_NR_MODES];
extern const bool dmb_mode_supported[DMB_NR_MODES];

/* A plain decimal number: digits only, no sign, no trailing junk. */
int dmb_parse_decimal(const char *str, u64 *val);

/* Look up a value-taking option by name; DMB_NR_OPTS if unknown. */
enum dmb_opt dmb_opt_lookup(const char *name);

/* Look up a mode keyword; DMB_NR_MODES if unknown. */
enum dmb_mode dmb_mode_lookup(const char *name);

/*
 * Parse @str as a value of @opt: a decimal number within range (and a
 * power of two where required), or one of the option's value names.
 * Returns 0 and sets @val, or -EINVAL.
 */
int dmb_opt_parse_value(enum dmb_opt opt, const char *str, u64 *val);

/* Write @val of @opt as text, the inverse of dmb_opt_parse_value(). */
int dmb_opt_format_value(enum dmb_opt opt, u64 val, char *buf, size_t len);

#endif
