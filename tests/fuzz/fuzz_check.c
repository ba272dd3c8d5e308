// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the metadata validators and the checker's walk.
 *
 * A cache set is formatted once into memory (4 MiB: 1024 buckets of
 * 8 sectors, 512-byte blocks, set UUID 11111111-2222-3333-4444-555555555555).
 * Each input picks a structure with its first byte, says with its second
 * whether to recompute that structure's checksum (so the fuzzer reaches
 * the checks behind it), and supplies the structure's new bytes.  The
 * patched image then goes through bch_check(), which must neither crash
 * nor trip ASan/UBSan, whatever it finds.  What the checker passes, the
 * target then loads: so the set is opened on it too, every sector of the
 * first inodes looked up, gc run and the result committed, none of which
 * may crash; and the loader may not refuse what the checker passed (the
 * target would then fail with no precise error), so that aborts.  What
 * the checker finds damaged (superblock apart), bcache_repair's core
 * salvages and rebuilds into a second image: either it refuses cleanly
 * (nothing usable, no room, no memory) or the rebuilt image checks
 * clean, else that aborts too.
 *
 * Structures: 0 superblock, 1 newest journal entry, 2 root node's first
 * bset, 3 first prio bucket, 4 UUID table, 5 a bset appended to the root.
 * tests/fuzz/corpus holds one sound seed per structure.
 */
#include <stdint.h>
#include <stdlib.h>

#include <stdio.h>

#include "util/crc64.h"
#include "check/check.h"
#include "mkfs/format.h"
#include "set/set.h"
#include "repair/rebuild.h"

#define IMG_SECTORS (1024 * 8)

static u8 template_img[IMG_SECTORS * 512];
static u8 img[IMG_SECTORS * 512];
static u8 out_img[IMG_SECTORS * 512];	/* what repair rebuilds */
static struct bch_sb sb;
static struct bch_geom geom;

/* An image in memory: @ctx is img or out_img, both IMG_SECTORS long. */
static int mem_read(void *ctx, u64 sector, void *buf, size_t len)
{
	if (sector * 512 + len > sizeof(img))
		return -EIO;
	memcpy(buf, (u8 *)ctx + sector * 512, len);
	return 0;
}

static int mem_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	if (sector * 512 + len > sizeof(img))
		return -EIO;
	memcpy((u8 *)ctx + sector * 512, buf, len);
	return 0;
}

static struct bch_meta_io io = {
	.sectors = IMG_SECTORS, .lbs = 512,
	.read = mem_read, .write = mem_write, .ctx = img,
};

static struct bch_meta_io out_io = {
	.sectors = IMG_SECTORS, .lbs = 512,
	.read = mem_read, .write = mem_write, .ctx = out_img,
};

static void setup(void)
{
	static const u8 set[16] = {
		0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
		0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
	};
	struct bch_format_params p = { .dev_sectors = IMG_SECTORS,
				       .block_size = 1, .bucket_size = 8 };

	bch_crc64_init();
	memcpy(p.set_uuid, set, 16);
	p.uuid[0] = 1;
	if (bch_format_cache_sb(&p, &sb) || bch_sb_write(&io, &sb) ||
	    bch_format_cache_set(&io, &sb))
		abort();
	bch_geom_init(&geom, &sb);
	memcpy(template_img, img, sizeof(img));
}

/* Sector of each structure in the template (see format.c's layout). */
static u64 where(unsigned int what)
{
	u64 prio = sb.first_bucket + sb.keys;

	switch (what) {
	case 0: return BCH_SB_SECTOR;
	case 1: return bch_bucket_sector(&geom, sb.d[0]);
	case 3: return bch_bucket_sector(&geom, prio);
	case 4: return bch_bucket_sector(&geom, prio + geom.nr_prio_buckets);
	default: return bch_bucket_sector(&geom, prio + geom.nr_prio_buckets + 1);
	}
}

static void reseal(unsigned int what, u8 *p, size_t room)
{
	u64 root_ptr = bch_make_ptr(0, where(2), 1);

	switch (what) {
	case 0: {
		struct bch_sb_disk *d = (void *)p;

		if (le16_to_cpu(d->keys) <= BCH_SB_JOURNAL_MAX)
			d->csum = cpu_to_le64(bch_sb_csum(d));
		break;
	}
	case 1: {
		struct bch_jset_disk *j = (void *)p;

		if (bch_jset_bytes(j) <= room)
			j->csum = cpu_to_le64(bch_jset_csum(j));
		break;
	}
	case 2:
	case 5: {
		struct bch_bset_disk *b = (void *)p;

		if (bch_bset_bytes(b) <= room)
			b->csum = cpu_to_le64(bch_bset_csum(b, root_ptr));
		break;
	}
	case 3:
		if (room >= geom.meta_bucket_bytes)
			((struct bch_prio_set_disk *)p)->csum =
				cpu_to_le64(bch_prio_csum((void *)p, &geom));
		break;
	}
}

/* Lookups per inode: enough to walk every key a fuzzed node can hold. */
#define LOOKUPS	4096

/* The target's use of what the checker passed: open, read, gc, commit. */
static void load(const struct bch_check_result *res)
{
	struct bch_set s;
	u64 inode, sector, next;
	u32 n;
	int r;

	if (res->nr_damage || !res->synchronous)
		return;
	r = bch_set_open(&s, &io, &res->sb);
	if (r == -ENOMEM)
		return;
	if (r) {
		fprintf(stderr, "the checker passed a cache the loader refuses (%d)\n",
			r);
		abort();
	}
	for (inode = 0; inode < 4; inode++)
		for (sector = 0, n = 0; n < LOOKUPS && sector < ~0ULL >> 24;
		     n++, sector = max(next, sector + 1))
			bch_btree_lookup(&s.t, inode, sector, &next);
	if (!bch_set_gc(&s))
		bch_set_commit(&s);
	bch_set_close(&s);
}

/* bcache_repair's -o: live data copied; past the image it is unreadable. */
static int copy_data(void *ctx, const struct bch_key *k, struct bch_range *bad)
{
	u64 at = bch_ptr_offset(k->ptr[0]), n = bch_key_size(k);

	(void)ctx;
	if (at + n > IMG_SECTORS) {
		bad[0] = (struct bch_range){ bch_key_start(k), k->low };
		return 1;
	}
	memcpy(out_img + at * 512, img + at * 512, n * 512);
	return 0;
}

static void print_finding(void *ctx, enum bch_damage cls, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "%s: %s\n", bch_damage_names[cls], msg);
}

/* A damaged cache repaired: refused cleanly, or rebuilt checking clean. */
static void repair(const struct bch_check_result *res)
{
	struct bch_rebuild_ops ops = { .data = copy_data };
	struct bch_check_opts o = { 0 };
	struct bch_rebuild_result rb;
	struct bch_check_result out;
	struct bch_salvage sv;
	int r;

	if (!res->nr_damage || res->damage[BCH_DMG_SUPERBLOCK] || res->blank)
		return;
	if (bch_salvage_read(&sv, &io, &res->sb, NULL, NULL))
		return;
	memset(out_img, 0, sizeof(out_img));
	r = bch_rebuild_write(&sv, &out_io, &ops, &rb);
	if (!r)
		r = bch_sb_write(&out_io, &sv.sb);
	bch_salvage_free(&sv);
	if (r)
		return;
	if (bch_check(&out_io, &o, NULL, &out) || out.nr_damage) {
		struct bch_check_ops show = { .finding = print_finding };

		fprintf(stderr, "a repaired cache does not check clean (%u findings)\n",
			out.nr_damage);
		bch_check(&out_io, &o, &show, &out);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	unsigned int what;
	size_t len, room;
	u8 *at;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size < 2)
		return 0;
	what = data[0] % 6;
	len = min_t(size_t, size - 2, 4096);
	memcpy(img, template_img, sizeof(img));
	at = img + where(what) * 512 + (what == 5 ? 512 : 0);
	room = sizeof(img) - (at - img);
	/* Metadata lives in the first buckets; keep within one bucket. */
	room = min_t(size_t, room, (size_t)geom.kg.bucket_size * 512);
	len = min(len, room);
	memcpy(at, data + 2, len);
	if (what == 5)
		((struct bch_bset_disk *)at)->seq =
			((struct bch_bset_disk *)(at - 512))->seq;
	if (data[1] & 1)
		reseal(what, at, room);
	if (!bch_check(&io, &o, NULL, &res)) {
		load(&res);
		repair(&res);
	}
	return 0;
}
