// SPDX-License-Identifier: GPL-2.0
/* The origin layout rule of core/format/origin.h, case by case. */
#include <string.h>

#include "unit.h"
#include "format/origin.h"
#include "sb_fixture.h"

static const char *decide(struct bch_sb_disk *d, enum bch_origin_request req,
			  enum bch_origin_layout *layout, u64 *off)
{
	struct bch_origin_info info;

	bch_origin_probe(d, FIXTURE_DEV_SECTORS, 512, &info);
	return bch_origin_choose(req, &info, false, layout, off);
}

UNIT_TEST(origin_zeroes_are_raw)
{
	struct bch_sb_disk d;
	enum bch_origin_layout layout;
	u64 off = 99;

	memset(&d, 0, sizeof(d));
	CHECK_STR(decide(&d, BCH_ORIGIN_AUTO, &layout, &off), NULL);
	CHECK(layout == BCH_LAYOUT_RAW && off == 0);
	CHECK_STR(decide(&d, BCH_ORIGIN_BACKING, &layout, &off),
		  "Origin has no bcache backing superblock");
}

UNIT_TEST(origin_backing_detected)
{
	struct bch_sb_disk d;
	enum bch_origin_layout layout;
	u64 off;

	fixture_backing_sb(&d);
	d.version = cpu_to_le64(4);
	d.nbuckets = cpu_to_le64(2048);
	fixture_reseal(&d);
	CHECK_STR(decide(&d, BCH_ORIGIN_AUTO, &layout, &off), NULL);
	CHECK(layout == BCH_LAYOUT_BACKING && off == 2048);
	CHECK_STR(decide(&d, BCH_ORIGIN_BACKING, &layout, &off), NULL);
	CHECK(layout == BCH_LAYOUT_BACKING && off == 2048);
	/* raw ignores the superblock entirely */
	CHECK_STR(decide(&d, BCH_ORIGIN_RAW, &layout, &off), NULL);
	CHECK(layout == BCH_LAYOUT_RAW && off == 0);
}

UNIT_TEST(origin_dirty_backing_refused)
{
	struct bch_sb_disk d;
	enum bch_origin_layout layout;
	u64 off;

	fixture_backing_sb(&d);
	d.flags = cpu_to_le64((u64)BCH_BDEV_STATE_DIRTY << BCH_BDEV_STATE_SHIFT);
	fixture_reseal(&d);
	CHECK_STR(decide(&d, BCH_ORIGIN_AUTO, &layout, &off),
		  "Origin bcache superblock is dirty: its cache holds data the origin lacks");
	/* The constructor, which brings the cache up too, takes it. */
	{
		struct bch_origin_info info;

		bch_origin_probe(&d, FIXTURE_DEV_SECTORS, 512, &info);
		CHECK_STR(bch_origin_choose(BCH_ORIGIN_AUTO, &info, true,
					    &layout, &off), NULL);
		CHECK(layout == BCH_LAYOUT_BACKING);
	}
	d.flags = cpu_to_le64((u64)BCH_BDEV_STATE_CLEAN << BCH_BDEV_STATE_SHIFT);
	fixture_reseal(&d);
	CHECK_STR(decide(&d, BCH_ORIGIN_AUTO, &layout, &off), NULL);
}

UNIT_TEST(origin_cache_or_damaged_refused)
{
	struct bch_sb_disk d;
	enum bch_origin_layout layout;
	u64 off;

	fixture_cache_sb(&d);
	CHECK_STR(decide(&d, BCH_ORIGIN_AUTO, &layout, &off),
		  "Origin holds a bcache cache superblock (origin_layout raw overrides)");
	CHECK_STR(decide(&d, BCH_ORIGIN_RAW, &layout, &off), NULL);

	fixture_backing_sb(&d);
	d.label[0] = 'x';	/* checksum no longer matches */
	CHECK_STR(decide(&d, BCH_ORIGIN_AUTO, &layout, &off),
		  "Origin has an invalid bcache superblock (origin_layout raw overrides)");
	CHECK_STR(decide(&d, BCH_ORIGIN_BACKING, &layout, &off),
		  "Origin has an invalid bcache superblock (origin_layout raw overrides)");
}

/*
 * The attachment record: the state and set a backing superblock names,
 * written as the driver writes it, read back by the rule that decides
 * whether the cache's copy is current; and the raw origin's UUID, the
 * same for the same set and different from the set's own.
 */
UNIT_TEST(origin_attachment_record)
{
	u8 set_a[16], set_b[16], none[16] = { 0 }, raw1[16], raw2[16];
	struct bch_sb sb;
	u64 seq;

	memset(&sb, 0, sizeof(sb));
	memset(set_a, 0xa5, sizeof(set_a));
	memset(set_b, 0x5a, sizeof(set_b));
	sb.flags = 1;			/* other flag bits survive */
	seq = sb.seq;
	CHECK(!bch_origin_attached(&sb, set_a));
	bch_origin_record(&sb, set_a, BCH_BDEV_STATE_CLEAN);
	CHECK(bch_sb_bdev_state(&sb) == BCH_BDEV_STATE_CLEAN);
	CHECK(sb.seq == seq + 1 && (sb.flags & 1));
	CHECK(bch_origin_attached(&sb, set_a));
	CHECK(!bch_origin_attached(&sb, set_b));
	bch_origin_record(&sb, set_a, BCH_BDEV_STATE_DIRTY);
	CHECK(bch_sb_bdev_state(&sb) == BCH_BDEV_STATE_DIRTY);
	CHECK(bch_origin_attached(&sb, set_a));
	bch_origin_record(&sb, set_a, BCH_BDEV_STATE_STALE);
	CHECK(!bch_origin_attached(&sb, set_a));
	bch_origin_record(&sb, none, BCH_BDEV_STATE_NONE);
	CHECK(!bch_origin_attached(&sb, set_a) && !bch_origin_attached(&sb, none));
	CHECK(sb.seq == seq + 4 && (sb.flags & 1));

	bch_origin_raw_uuid(set_a, raw1);
	bch_origin_raw_uuid(set_a, raw2);
	CHECK(!memcmp(raw1, raw2, 16));
	CHECK(memcmp(raw1, set_a, 16));
	bch_origin_raw_uuid(set_b, raw2);
	CHECK(memcmp(raw1, raw2, 16));
}
