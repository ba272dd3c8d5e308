// SPDX-License-Identifier: GPL-2.0
/*
 * The formatter and the checker together on an in-memory device: a set
 * formatted for several geometries checks clean with the expected counts,
 * its superblock decodes back to what was encoded, and the formatter's
 * refusals carry their reasons.
 */
#include <stdlib.h>

#include "unit.h"
#include "check/check.h"
#include "mkfs/format.h"
#include "journal/journal_read.h"

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
	/* Mainline's minimum: roundup_pow_of_two(nbuckets) >> 10 != 0. */
	p.dev_sectors = 513 * 1024;
	CHECK(!bch_format_cache_sb(&p, &sb) && sb.nbuckets == 513);
	p.dev_sectors = 513 * 1024 - 1;
	CHECK_STR(bch_format_cache_sb(&p, &sb),
		  "device too small: a cache set needs at least 513 buckets");
	CHECK(bch_set_nbuckets_err(512) && !bch_set_nbuckets_err(513));
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
	/* Blank (sectors 0-15 zero) is what the target formats: no damage. */
	memset(m.data, 0, 1 << 16);
	CHECK(!bch_check(&io, &o, NULL, &res));
	CHECK(res.blank && res.nr_damage == 0);
	/* One stray byte in the head: not blank, and no superblock. */
	((u8 *)m.data)[100] = 1;
	CHECK(!bch_check(&io, &o, NULL, &res));
	CHECK(!res.blank && res.damage[BCH_DMG_SUPERBLOCK] == 1);
	/* A valid superblock with too few buckets for a set is damage. */
	p.dev_sectors = 600 * 8;
	p.bucket_size = 8;
	CHECK(!bch_format_cache_sb(&p, &sb));
	sb.nbuckets = 512;
	CHECK(!bch_sb_write(&io, &sb));
	CHECK(!bch_check(&io, &o, NULL, &res));
	CHECK(res.damage[BCH_DMG_SUPERBLOCK] == 1 && res.nr_damage == 1);
	free(m.data);
}

/*
 * Masking across bsets: an old dirty extent whose bucket has since been
 * reused is dead when a newer bset covers it entirely (as the driver's
 * merged view has it), and stale dirty data when any part is uncovered.
 */
struct leaf_fixture {
	struct mem_dev m;
	struct bch_meta_io io;
	struct bch_sb sb;
	struct bch_geom g;
	u64 root_sector, root_ptr, seq;
	u32 written;		/* blocks used in the root */
};

static void leaf_setup(struct leaf_fixture *f)
{
	struct bch_format_params p = { .dev_sectors = 1024 * 8,
				       .block_size = 1, .bucket_size = 8 };
	struct bch_bset_disk *b;

	mem_open(&f->m, &f->io, p.dev_sectors);
	p.uuid[0] = p.set_uuid[0] = 1;
	CHECK(!bch_format_cache_sb(&p, &f->sb));
	CHECK(!bch_sb_write(&f->io, &f->sb));
	CHECK(!bch_format_cache_set(&f->io, &f->sb));
	bch_geom_init(&f->g, &f->sb);
	/* format.c's layout: journal, prios, UUID table, root. */
	f->root_sector = bch_bucket_sector(&f->g, f->sb.first_bucket +
					   f->sb.keys + f->g.nr_prio_buckets + 1);
	f->root_ptr = bch_make_ptr(0, f->root_sector, 1);
	b = (void *)(f->m.data + f->root_sector * 512);
	f->seq = le64_to_cpu(b->seq);
	f->written = 1;
}

static void leaf_append(struct leaf_fixture *f, const struct bch_key *keys,
			unsigned int nr)
{
	struct bch_bset_disk *b = (void *)(f->m.data +
					   (f->root_sector + f->written) * 512);
	unsigned int i, at = 0;

	b->magic = cpu_to_le64(f->g.bset_magic);
	b->seq = cpu_to_le64(f->seq);
	b->version = cpu_to_le32(1);
	for (i = 0; i < nr; i++)
		at += bch_key_encode(&keys[i], b->d + at);
	b->keys = cpu_to_le32(at);
	b->csum = cpu_to_le64(bch_bset_csum(b, f->root_ptr));
	f->written++;
}

/* Raise bucket @bucket's gen in the (single) prio bucket. */
static void bump_gen(struct leaf_fixture *f, u64 bucket)
{
	u64 prio = bch_bucket_sector(&f->g, f->sb.first_bucket + f->sb.keys);
	struct bch_prio_set_disk *p = (void *)(f->m.data + prio * 512);
	struct bch_prio_entry e;

	bch_prio_get(p, bucket, &e);
	e.gen++;
	bch_prio_put(p, bucket, &e);
	p->csum = cpu_to_le64(bch_prio_csum(p, &f->g));
}

static u32 stale_findings(u64 mask_end)
{
	struct leaf_fixture f;
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_key k[2];

	leaf_setup(&f);
	/* Dirty data [100, 108) in bucket 900, then a hole over [96, end). */
	bch_key_init(&k[0], 0, 108, 8, true);
	bch_key_add_ptr(&k[0], bch_make_ptr(0, 900 * 8, 0));
	leaf_append(&f, k, 1);
	bch_key_init(&k[1], 0, mask_end, mask_end - 96, false);
	leaf_append(&f, &k[1], 1);
	bump_gen(&f, 900);
	CHECK(!bch_check(&f.io, &o, NULL, &res));
	free(f.m.data);
	return res.damage[BCH_DMG_PTR_STALE] + 100 * (res.nr_damage -
		res.damage[BCH_DMG_PTR_STALE]);
}

UNIT_TEST(check_masked_dirty_extent_is_dead)
{
	CHECK(stale_findings(108) == 0);	/* wholly covered */
	CHECK(stale_findings(120) == 0);
	CHECK(stale_findings(104) == 1);	/* [104, 108) still live */
	CHECK(stale_findings(97) == 1);
}

/*
 * The journal scan: entries follow each other on block boundaries; a
 * damaged one ends its bucket; the newest valid header is kept.
 */
static void add_jset(struct leaf_fixture *f, u64 sector, u64 seq, bool ok)
{
	struct bch_jset_disk *j = (void *)(f->m.data + sector * 512);

	memcpy(j, f->m.data + bch_bucket_sector(&f->g, f->sb.d[0]) * 512,
	       sizeof(*j));
	j->seq = cpu_to_le64(seq);
	j->csum = cpu_to_le64(bch_jset_csum(j) ^ (ok ? 0 : 1));
}

UNIT_TEST(journal_scan_entries)
{
	struct leaf_fixture f;
	struct bch_jscan s;
	u64 base;

	leaf_setup(&f);
	base = bch_bucket_sector(&f.g, f.sb.d[0]);
	add_jset(&f, base + 1, 2, true);	/* right after seq 1 */
	add_jset(&f, base + 2, 3, false);	/* damaged: ends the bucket */
	add_jset(&f, base + 3, 4, true);	/* never reached */
	add_jset(&f, bch_bucket_sector(&f.g, f.sb.d[2]), 5, true);
	CHECK(!bch_jscan_run(&f.io, &f.sb, &f.g, &s, NULL, NULL));
	CHECK(s.nr == 4);
	CHECK(s.have_newest && s.newest_seq == 5);
	bch_jscan_sort(&s);
	CHECK(s.e[0].seq == 1 && s.e[1].seq == 2 && s.e[3].seq == 5);
	CHECK(!s.e[2].valid && s.e[2].seq == 3 && s.e[2].block == 2);
	CHECK(s.e[3].ring == 2 && s.e[3].block == 0);
	bch_jscan_free(&s);
	free(f.m.data);
}
