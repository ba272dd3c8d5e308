// SPDX-License-Identifier: GPL-2.0
/*
 * The formatter and the checker together on an in-memory device: a set
 * formatted for several geometries checks clean with the expected counts,
 * its superblock decodes back to what was encoded, and the formatter's
 * refusals carry their reasons.
 */
#include <stdlib.h>

#include "unit.h"
#include "check.h"
#include "format.h"

struct mem_dev {
	u8 *data;
	u64 sectors;
};

static int mem_read(void *ctx, u64 sector, void *buf, size_t len)
{
	struct mem_dev *m = ctx;

	if (sector * 512 + len > m->sectors * 512)
		return -EIO;
	memcpy(buf, m->data + sector * 512, len);
	return 0;
}

static int mem_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	struct mem_dev *m = ctx;

	if (sector * 512 + len > m->sectors * 512)
		return -EIO;
	memcpy(m->data + sector * 512, buf, len);
	return 0;
}

static void mem_open(struct mem_dev *m, struct bch_meta_io *io, u64 sectors)
{
	m->sectors = sectors;
	m->data = calloc(sectors, 512);
	memset(io, 0, sizeof(*io));
	io->ctx = m;
	io->sectors = sectors;
	io->lbs = 512;
	io->read = mem_read;
	io->write = mem_write;
}

static void format_and_check(u64 sectors, u32 block, u32 bucket)
{
	struct bch_format_params p = { .dev_sectors = sectors,
				       .block_size = block,
				       .bucket_size = bucket };
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_meta_io io;
	struct mem_dev m;
	struct bch_sb sb, back;
	struct bch_geom g;

	mem_open(&m, &io, sectors);
	p.uuid[0] = 1;
	p.set_uuid[0] = 2;
	CHECK(!bch_format_cache_sb(&p, &sb));
	CHECK(!bch_sb_write(&io, &sb));
	CHECK(!bch_format_cache_set(&io, &sb));
	CHECK(!bch_sb_validate((void *)(m.data + 4096), sectors, 512, &back));
	CHECK(back.nbuckets == sectors / bucket && back.bucket_size == bucket);
	CHECK(back.keys == sb.keys && back.flags == BCH_CACHE_SYNC);
	CHECK(back.version == BCH_SB_VERSION_CDEV_WITH_UUID);
	CHECK(back.first_bucket == 23 / bucket + 1);

	CHECK(!bch_check(&io, &o, NULL, &res));
	bch_geom_init(&g, &sb);
	CHECK(res.nr_damage == 0 && res.nr_notes == 0);
	CHECK(res.synchronous);
	CHECK(res.journal_entries == 1 && res.newest_seq == 1);
	CHECK(res.prio_buckets == g.nr_prio_buckets);
	CHECK(res.root_level == 0 && res.btree_nodes == 1);
	CHECK(res.buckets_btree == 1 && res.buckets_data == 0);
	free(m.data);
}

UNIT_TEST(format_then_check_geometries)
{
	format_and_check(1024 * 8, 1, 8);		/* 4 MiB, 1024 buckets */
	format_and_check(1024 * 8, 8, 8);
	format_and_check(8192 * 16, 2, 16);		/* many prio buckets */
	format_and_check(2048 * 256, 1, 256);
	format_and_check(1024 * 1024, 8, 1024);
	format_and_check(1024 * 8192, 1, 8192);		/* 4 MiB meta buckets */
}

UNIT_TEST(format_refusals)
{
	struct bch_format_params p = { .dev_sectors = 1 << 20,
				       .block_size = 1, .bucket_size = 1024 };
	struct bch_sb sb;

	CHECK(!bch_format_cache_sb(&p, &sb));
	p.dev_sectors = 1023 * 1024;
	CHECK_STR(bch_format_cache_sb(&p, &sb),
		  "device too small: the mainline driver needs at least 1024 buckets");
	p.dev_sectors = 1 << 20;
	p.bucket_size = 4;
	CHECK_STR(bch_format_cache_sb(&p, &sb),
		  "bucket size must be at least 8 sectors (a page)");
	p.bucket_size = 1000;
	CHECK_STR(bch_format_cache_sb(&p, &sb),
		  "bucket size must be a power of two of at most 32768 sectors");
	p.bucket_size = 1024;
	p.block_size = 16;
	CHECK_STR(bch_format_cache_sb(&p, &sb),
		  "block size must be a power of two from 1 to 8 sectors");
	p.block_size = 1;
	p.data_offset = 8;
	CHECK_STR(bch_format_backing_sb(&p, &sb),
		  "data offset must be at least 16 sectors");
	p.data_offset = 2048;
	CHECK(!bch_format_backing_sb(&p, &sb));
	CHECK(sb.version == BCH_SB_VERSION_BDEV_WITH_OFFSET);
}

UNIT_TEST(backing_sb_round_trip)
{
	struct bch_format_params p = { .dev_sectors = 1 << 20, .block_size = 8,
				       .bucket_size = 1024,
				       .data_offset = 16, .writeback = true };
	struct bch_sb_disk *d = calloc(1, BCH_SB_BYTES);
	struct bch_sb sb, back;

	p.uuid[3] = 9;
	p.set_uuid[5] = 7;
	memcpy(p.label, "backing label", 13);
	CHECK(!bch_format_backing_sb(&p, &sb));
	bch_sb_encode(&sb, d);
	CHECK(!bch_sb_validate(d, 1 << 20, 512, &back));
	CHECK(back.kind == BCH_SB_KIND_BACKING);
	CHECK(back.version == BCH_SB_VERSION_BDEV && back.data_offset == 16);
	CHECK((back.flags & BCH_BDEV_MODE_MASK) == 1);
	CHECK(bch_sb_bdev_state(&back) == BCH_BDEV_STATE_NONE);
	CHECK(!memcmp(back.label, "backing label", 13));
	CHECK(le16_to_cpu(d->bucket_size) == 1024);
	free(d);
}

UNIT_TEST(check_not_synchronous_and_backing)
{
	struct bch_format_params p = { .dev_sectors = 1 << 16,
				       .block_size = 1, .bucket_size = 8,
				       .data_offset = 16 };
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_meta_io io;
	struct mem_dev m;
	struct bch_sb sb;

	mem_open(&m, &io, 1 << 16);
	p.uuid[0] = p.set_uuid[0] = 1;
	CHECK(!bch_format_cache_sb(&p, &sb));
	CHECK(!bch_sb_write(&io, &sb));
	CHECK(!bch_check(&io, &o, NULL, &res));
	CHECK(!res.synchronous && res.nr_damage == 0 && res.nr_notes == 1);
	CHECK(!bch_format_backing_sb(&p, &sb));
	CHECK(!bch_sb_write(&io, &sb));
	CHECK(!bch_check(&io, &o, NULL, &res));
	CHECK(res.sb.kind == BCH_SB_KIND_BACKING && res.nr_damage == 0);
	memset(m.data, 0, 1 << 16);
	CHECK(!bch_check(&io, &o, NULL, &res));
	CHECK(res.damage[BCH_DMG_SUPERBLOCK] == 1);
	free(m.data);
}
