/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The origin layout rule: does the origin's data start at sector 0 (raw,
 * LVM style) or at the data offset of a mainline bcache backing superblock?
 *
 * The rule, shared by the target's constructor and the offline tools so
 * that both always give the same answer:
 *
 *   origin_layout raw      sector 0 is data sector 0; sector 8 is never
 *                          interpreted, whatever it holds.
 *   origin_layout backing  a valid backing superblock (not dirty, see
 *                          below) is required; data starts at its data
 *                          offset.
 *   auto (the default)     no bcache magic at sector 8 means raw; a valid
 *                          backing superblock means backing; any other
 *                          bcache superblock (a cache one, or one that fails
 *                          validation) is refused, because guessing either
 *                          way could shift the user's data by data_offset.
 *
 * A backing superblock whose state is DIRTY is refused in both auto and
 * backing modes, because its cache holds data the origin does not have
 * yet, unless the caller will bring that very cache up with it (@dirty_ok:
 * the target's constructor, which then requires the superblock to name
 * the cache's set, and replays the cache's journal).
 */
#ifndef DM_BCACHE_CORE_ORIGIN_H
#define DM_BCACHE_CORE_ORIGIN_H

#include "format/super.h"

enum bch_origin_request {
	BCH_ORIGIN_AUTO,
	BCH_ORIGIN_RAW,
	BCH_ORIGIN_BACKING,
	BCH_NR_ORIGIN_REQUESTS
};

/* Names of the requests as users write them: auto, raw, backing. */
extern const char *const bch_origin_request_names[BCH_NR_ORIGIN_REQUESTS];

enum bch_origin_layout {
	BCH_LAYOUT_RAW,
	BCH_LAYOUT_BACKING,
};

/* What sector 8 of an origin holds. */
enum bch_origin_probe {
	BCH_PROBE_NONE,		/* no bcache magic */
	BCH_PROBE_BACKING,	/* valid backing superblock */
	BCH_PROBE_CACHE,	/* valid cache superblock */
	BCH_PROBE_INVALID,	/* bcache magic, but validation failed */
};

struct bch_origin_info {
	enum bch_origin_probe probe;
	const char *invalid_reason;	/* set for BCH_PROBE_INVALID */
	struct bch_sb sb;		/* decoded when probe is not NONE */
};

/*
 * Classify the 4 KiB block read from byte 4096 of the origin.  @dev_sectors
 * and @dev_lbs describe the origin (size in sectors, logical block size).
 */
void bch_origin_probe(const struct bch_sb_disk *d, u64 dev_sectors,
		      unsigned int dev_lbs, struct bch_origin_info *info);

/*
 * Apply the rule above.  On success returns NULL and sets @layout and
 * @data_offset; otherwise returns a static error string.
 */
const char *bch_origin_choose(enum bch_origin_request req,
			      const struct bch_origin_info *info, bool dirty_ok,
			      enum bch_origin_layout *layout, u64 *data_offset);

const char *bch_origin_layout_name(enum bch_origin_layout layout);

/*
 * The UUID a raw origin's data is recorded under in the cache's UUID
 * table, derived from the cache set's UUID (a cache serves one raw
 * origin, so it is the same at every construction), and the label its
 * slot gets.  A backing origin uses its superblock's UUID instead.
 */
#define BCH_RAW_ORIGIN_LABEL	"dm-bcache raw origin"
void bch_origin_raw_uuid(const u8 set_uuid[16], u8 uuid[16]);

/*
 * Is what the cache set @set_uuid holds for the backing origin whose
 * superblock is @sb current?  Only if the superblock records the
 * attachment (that set's UUID, state clean or dirty); otherwise the
 * origin was used without this cache since, and the cache's copy is
 * stale.  A raw origin keeps no record: callers take the cache to be
 * its own.
 */
bool bch_origin_attached(const struct bch_sb *sb, const u8 set_uuid[16]);

/*
 * Record in backing superblock @sb (decoded; the caller writes it with
 * bch_sb_write()) that it belongs to set @set_uuid in @state, as the
 * mainline driver records attach (clean), dirty data (dirty), write-back
 * done (clean) and detach (no set, none).
 */
void bch_origin_record(struct bch_sb *sb, const u8 set_uuid[16],
		       enum bch_bdev_state state);

#endif
