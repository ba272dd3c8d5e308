// SPDX-License-Identifier: GPL-2.0
/*
 * The origin layout rule (see origin.h for the rule itself).
 */
#include "format/origin.h"

const char *const bch_origin_request_names[BCH_NR_ORIGIN_REQUESTS] = {
	[BCH_ORIGIN_AUTO] = "auto",
	[BCH_ORIGIN_RAW] = "raw",
	[BCH_ORIGIN_BACKING] = "backing",
};

static const char *const layout_names[] = {
	[BCH_LAYOUT_RAW] = "raw",
	[BCH_LAYOUT_BACKING] = "backing",
};

const char *bch_origin_layout_name(enum bch_origin_layout layout)
{
	return layout_names[layout];
}

void bch_origin_probe(const struct bch_sb_disk *d, u64 dev_sectors,
		      unsigned int dev_lbs, struct bch_origin_info *info)
{
	const char *err;

	memset(info, 0, sizeof(*info));
	if (!bch_sb_has_magic(d)) {
		info->probe = BCH_PROBE_NONE;
		return;
	}
	err = bch_sb_validate(d, dev_sectors, dev_lbs, &info->sb);
	if (err) {
		info->probe = BCH_PROBE_INVALID;
		info->invalid_reason = err;
	} else if (info->sb.kind == BCH_SB_KIND_BACKING) {
		info->probe = BCH_PROBE_BACKING;
	} else {
		info->probe = BCH_PROBE_CACHE;
	}
}

static const char *choose_backing(const struct bch_origin_info *info,
				  bool dirty_ok, enum bch_origin_layout *layout,
				  u64 *data_offset)
{
	if (bch_sb_bdev_state(&info->sb) == BCH_BDEV_STATE_DIRTY && !dirty_ok)
		return "Origin bcache superblock is dirty: its cache holds data the origin lacks";
	*layout = BCH_LAYOUT_BACKING;
	*data_offset = info->sb.data_offset;
	return NULL;
}

const char *bch_origin_choose(enum bch_origin_request req,
			      const struct bch_origin_info *info, bool dirty_ok,
			      enum bch_origin_layout *layout, u64 *data_offset)
{
	*layout = BCH_LAYOUT_RAW;
	*data_offset = 0;

	if (req == BCH_ORIGIN_RAW)
		return NULL;

	switch (info->probe) {
	case BCH_PROBE_BACKING:
		return choose_backing(info, dirty_ok, layout, data_offset);
	case BCH_PROBE_NONE:
		if (req == BCH_ORIGIN_BACKING)
			return "Origin has no bcache backing superblock";
		return NULL;
	case BCH_PROBE_CACHE:
		return "Origin holds a bcache cache superblock (origin_layout raw overrides)";
	case BCH_PROBE_INVALID:
	default:
		return "Origin has an invalid bcache superblock (origin_layout raw overrides)";
	}
}

void bch_origin_raw_uuid(const u8 set_uuid[16], u8 uuid[16])
{
	memcpy(uuid, set_uuid, 16);
	uuid[15] ^= 0xdb;
}

bool bch_origin_attached(const struct bch_sb *sb, const u8 set_uuid[16])
{
	return (bch_sb_bdev_state(sb) == BCH_BDEV_STATE_CLEAN ||
		bch_sb_bdev_state(sb) == BCH_BDEV_STATE_DIRTY) &&
	       !memcmp(sb->set_uuid, set_uuid, 16);
}

void bch_origin_record(struct bch_sb *sb, const u8 set_uuid[16],
		       enum bch_bdev_state state)
{
	memcpy(sb->set_uuid, set_uuid, 16);
	sb->flags &= ~((u64)BCH_BDEV_STATE_MASK << BCH_BDEV_STATE_SHIFT);
	sb->flags |= (u64)state << BCH_BDEV_STATE_SHIFT;
	sb->seq++;
}
