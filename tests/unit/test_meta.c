// SPDX-License-Identifier: GPL-2.0
/*
 * Known-answer vectors from docs/ondisk-format.md for keys, bsets and
 * journal entries; geometry (appendix B); encode/decode round trips; and
 * each structure validator rejecting each bad field.
 */
#include <stdlib.h>

#include "unit.h"
#include "format/bkey.h"
#include "format/bset.h"
#include "util/crc64.h"
#include "format/geometry.h"
#include "format/jset.h"
#include "format/prio.h"
#include "format/uuid.h"

/* Set UUID 11111111-2222-3333-4444-555555555555, as in the spec. */
static void spec_geom(struct bch_geom *g, u32 bucket_size)
{
	static const u8 set[16] = {
		0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
		0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
	};
	struct bch_sb sb = { 0 };

	memcpy(sb.set_uuid, set, 16);
	sb.nbuckets = 2048;
	sb.bucket_size = bucket_size;
	sb.block_size = 1;
	sb.first_bucket = 1;
	bch_geom_init(g, &sb);
}

UNIT_TEST(geometry_magics)
{
	struct bch_geom g;

	spec_geom(&g, 1024);
	CHECK(g.set_magic == 0x3333222211111111ULL);
	CHECK(g.jset_magic == 0x176117e3b2734123ULL);
	CHECK(g.pset_magic == 0x5463c37d96226e80ULL);
	CHECK(g.bset_magic == 0xa3207e5aa88f16e4ULL);
}

UNIT_TEST(geometry_appendix_b)
{
	static const struct { u32 bucket, meta, btree, uuids, ppb; } t[] = {
		{ 8, 4096, 8, 32, 1352 },
		{ 16, 8192, 16, 64, 2717 },
		{ 64, 32768, 64, 256, 10909 },
		{ 1024, 524288, 512, 4096, 174749 },
		{ 2048, 1048576, 512, 8192, 349512 },
		{ 4096, 2097152, 1024, 16384, 699037 },
		{ 32768, 4194304, 2048, 32768, 1398088 },
	};
	struct bch_geom g;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		spec_geom(&g, t[i].bucket);
		CHECK(g.meta_bucket_bytes == t[i].meta);
		CHECK(g.btree_sectors == t[i].btree);
		CHECK(g.nr_uuids == t[i].uuids);
		CHECK(g.prios_per_bucket == t[i].ppb);
	}
}

UNIT_TEST(bkey_spec_example)
{
	struct bch_key k, d;
	__le64 w[BCH_KEY_MAX_U64S];

	/* Root key: MAX_KEY, size 512, bucket 20 of 1024, gen 1, dev 0. */
	bch_key_init(&k, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET, 512, false);
	bch_key_add_ptr(&k, bch_make_ptr(0, 20 * 1024, 1));
	CHECK(k.high == 0x90000000200fffffULL);
	CHECK(k.low == 0x7fffffffffffffffULL);
	CHECK(k.ptr[0] == 0x0000000000500001ULL);
	CHECK(bch_key_encode(&k, w) == 3);
	CHECK(bch_key_decode(w, 3, &d) == 3);
	CHECK(!memcmp(&k, &d, sizeof(k)));
	CHECK(bch_key_decode(w, 2, &d) == 0);	/* pointer cut off */
	CHECK(!bch_key_cmp(&k, &bch_max_key));
}

UNIT_TEST(bkey_fields_round_trip)
{
	struct bch_key k, d;
	__le64 w[BCH_KEY_MAX_U64S];

	bch_key_init(&k, 0x12345, 1000000, 65535, true);
	bch_key_add_ptr(&k, bch_make_ptr(7, (1ULL << 43) - 1, 255));
	bch_key_add_ptr(&k, bch_make_ptr(4095, 8, 0));
	CHECK(bch_key_inode(&k) == 0x12345);
	CHECK(bch_key_size(&k) == 65535);
	CHECK(bch_key_dirty(&k));
	CHECK(bch_key_start(&k) == 1000000 - 65535);
	CHECK(bch_key_ptrs(&k) == 2);
	CHECK(bch_ptr_dev(k.ptr[0]) == 7 && bch_ptr_gen(k.ptr[0]) == 255);
	CHECK(bch_ptr_offset(k.ptr[0]) == (1ULL << 43) - 1);
	CHECK(bch_ptr_dev(k.ptr[1]) == BCH_PTR_CHECK_DEV);
	CHECK(bch_key_encode(&k, w) == 4);
	CHECK(bch_key_decode(w, 4, &d) == 4);
	CHECK(!memcmp(&k, &d, sizeof(k)));
}

UNIT_TEST(gen_staleness)
{
	CHECK(!bch_gen_stale(5, 5));
	CHECK(bch_gen_stale(6, 5));
	CHECK(bch_gen_stale(5 + 128, 5));
	CHECK(!bch_gen_stale(5 + 129, 5));	/* pointer counts as newer */
	CHECK(bch_gen_stale(0, 255));		/* wraps */
	CHECK(bch_gen_lag(1, 0) == 1 && bch_gen_lag(0, 1) == 255);
}

static struct bch_key_geom kg = { .nbuckets = 2048, .bucket_size = 1024,
				  .first_bucket = 1 };

static const char *extent(u64 end, u32 size, u64 bucket, u32 off)
{
	struct bch_key k;

	bch_key_init(&k, 0, end, size, false);
	bch_key_add_ptr(&k, bch_make_ptr(0, bucket * 1024 + off, 0));
	return bch_extent_invalid(&k, &kg);
}

UNIT_TEST(extent_validator)
{
	struct bch_key k;

	CHECK(!extent(100, 8, 5, 0));
	CHECK_STR(extent(4, 8, 5, 0), "bad, size larger than offset");
	CHECK_STR(extent(100, 8, 5, 1020), "bad, length too big");
	CHECK_STR(extent(100, 8, 0, 0), "bad, short offset");
	CHECK_STR(extent(100, 8, 2048, 0), "bad, offset past end of device");
	CHECK(!extent(100, 8, 2047, 1016));
	/* Unavailable devices are not examined; no pointers is a hole. */
	bch_key_init(&k, 0, 100, 8, false);
	CHECK(!bch_extent_invalid(&k, &kg));
	bch_key_add_ptr(&k, bch_make_ptr(BCH_PTR_CHECK_DEV, 1ULL << 40, 3));
	CHECK(!bch_extent_invalid(&k, &kg));
	bch_key_init(&k, 0, 100, 8, false);
	k.high |= 1ULL << 56;
	CHECK_STR(bch_extent_invalid(&k, &kg), "bad, data checksum type set");
}

UNIT_TEST(btree_ptr_validator)
{
	struct bch_key k;

	bch_key_init(&k, 0, 100, 512, false);
	CHECK_STR(bch_btree_ptr_invalid(&k, &kg), "bad, no pointers");
	bch_key_add_ptr(&k, bch_make_ptr(0, 5 * 1024, 1));
	CHECK(!bch_btree_ptr_invalid(&k, &kg));
	k.high |= 1ULL << 36;
	CHECK_STR(bch_btree_ptr_invalid(&k, &kg), "bad, dirty btree pointer");
	bch_key_init(&k, 0, 100, 0, false);
	bch_key_add_ptr(&k, bch_make_ptr(0, 5 * 1024, 1));
	CHECK_STR(bch_btree_ptr_invalid(&k, &kg), "bad, zero size");
	bch_key_init(&k, 0, 100, 512, false);
	bch_key_add_ptr(&k, bch_make_ptr(0, 5 * 1024 + 600, 1));
	CHECK_STR(bch_btree_ptr_invalid(&k, &kg), "bad, length too big");
}

UNIT_TEST(bset_spec_vectors)
{
	static const u8 want[32] = {
		0x59, 0xb1, 0xe3, 0x76, 0x19, 0x25, 0x1c, 0x9b,
		0xe4, 0x16, 0x8f, 0xa8, 0x5a, 0x7e, 0x20, 0xa3,
		0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct bch_bset_disk *b = calloc(1, 4096);
	struct bch_node_info info;
	struct bch_geom g;

	CHECK(~bch_crc64_update(0x40001, "123456789", 9) ==
	      0x6dda1b136e9055a8ULL);
	spec_geom(&g, 1024);
	b->magic = cpu_to_le64(g.bset_magic);
	b->seq = cpu_to_le64(0x0123456789abcdefULL);
	b->version = cpu_to_le32(1);
	b->csum = cpu_to_le64(bch_bset_csum(b, 0x500001));
	CHECK(le64_to_cpu(b->csum) == 0x9b1c251976e3b159ULL);
	CHECK(!memcmp(b, want, 32));
	CHECK(!bch_node_parse(b, 8, 0x500001, &g, &info, NULL, NULL));
	CHECK(info.nr_bsets == 1 && info.written == 1 && info.blocks == 8);
	free(b);
}

/* A node of 8 one-sector blocks, checked after one change each. */
static const char *node_after(void (*change)(u8 *node, struct bch_geom *g))
{
	static u8 node[4096];
	struct bch_bset_disk *b = (void *)node;
	struct bch_node_info info;
	struct bch_geom g;

	spec_geom(&g, 1024);
	memset(node, 0, sizeof(node));
	b->magic = cpu_to_le64(g.bset_magic);
	b->seq = cpu_to_le64(42);
	b->version = cpu_to_le32(1);
	b->csum = cpu_to_le64(bch_bset_csum(b, 0x500001));
	change(node, &g);
	return bch_node_parse(node, 8, 0x500001, &g, &info, NULL, NULL);
}

static void reseal(struct bch_bset_disk *b)
{
	b->csum = cpu_to_le64(bch_bset_csum(b, 0x500001));
}

static void n_none(u8 *n, struct bch_geom *g) { (void)n; (void)g; }
static void n_seq0(u8 *n, struct bch_geom *g)
{
	((struct bch_bset_disk *)n)->seq = 0;
	(void)g;
}
static void n_version(u8 *n, struct bch_geom *g)
{
	((struct bch_bset_disk *)n)->version = cpu_to_le32(2);
	reseal((void *)n);
	(void)g;
}
static void n_magic(u8 *n, struct bch_geom *g)
{
	((struct bch_bset_disk *)n)->magic ^= cpu_to_le64(1);
	reseal((void *)n);
	(void)g;
}
static void n_csum(u8 *n, struct bch_geom *g)
{
	((struct bch_bset_disk *)n)->csum ^= cpu_to_le64(1);
	(void)g;
}
static void n_too_big(u8 *n, struct bch_geom *g)
{
	/* Past the node: refused before the checksum is computed. */
	((struct bch_bset_disk *)n)->keys = cpu_to_le32(600);
	(void)g;
}
static void n_empty_second(u8 *n, struct bch_geom *g)
{
	struct bch_bset_disk *b = (void *)(n + 512);

	memcpy(b, n, 32);
	reseal(b);
	(void)g;
}
static void n_same_seq_later(u8 *n, struct bch_geom *g)
{
	struct bch_bset_disk *b = (void *)(n + 1536);

	memcpy(b, n, 32);
	b->magic = 0;	/* block 1 ends the log; block 3 carries the seq */
	(void)g;
}
static void n_v0(u8 *n, struct bch_geom *g)
{
	struct bch_bset_disk *b = (void *)n;

	b->version = 0;
	b->csum = cpu_to_le64(bch_crc64((u8 *)b + 8, 24));
	(void)g;
}

UNIT_TEST(node_validator)
{
	CHECK(!node_after(n_none));
	CHECK(!node_after(n_v0));
	CHECK_STR(node_after(n_seq0), "bad btree header");
	CHECK_STR(node_after(n_version), "unsupported bset version");
	CHECK_STR(node_after(n_magic), "bad magic");
	CHECK_STR(node_after(n_csum), "bad checksum");
	CHECK_STR(node_after(n_too_big), "bad btree header");
	CHECK_STR(node_after(n_empty_second), "empty set");
	CHECK_STR(node_after(n_same_seq_later), "corrupted btree");
}

/* The spec's worked journal example, then each bad field. */
static struct bch_jset_disk *spec_jset(struct bch_geom *g)
{
	struct bch_jset_disk *j = calloc(1, 4096);
	struct bch_key uuid, root;

	spec_geom(g, 1024);
	bch_key_init(&uuid, 0, 0, 1024, false);
	bch_key_add_ptr(&uuid, bch_make_ptr(0, 10 * 1024, 1));
	bch_key_init(&root, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET, 512, false);
	bch_key_add_ptr(&root, bch_make_ptr(0, 20 * 1024, 1));
	j->magic = cpu_to_le64(g->jset_magic);
	j->seq = cpu_to_le64(1);
	j->last_seq = cpu_to_le64(1);
	j->version = cpu_to_le32(1);
	bch_key_encode(&uuid, j->uuid_bucket);
	bch_key_encode(&root, j->btree_root);
	j->prio_bucket[0] = cpu_to_le64(2);
	j->csum = cpu_to_le64(bch_jset_csum(j));
	return j;
}

UNIT_TEST(jset_spec_vector_and_validator)
{
	struct bch_geom g;
	struct bch_jset_disk *j = spec_jset(&g);

	CHECK(le64_to_cpu(j->uuid_bucket[0]) == 0x9000000040000000ULL);
	CHECK(le64_to_cpu(j->uuid_bucket[2]) == 0x280001ULL);
	CHECK(le64_to_cpu(j->csum) == 0x0c690ba6bab84fd4ULL);
	CHECK(!bch_jset_validate(j, 4096, &g));
	CHECK(bch_jset_validate(j, 100, &g) == BCH_JSET_NO_ENTRY);
	j->keys = cpu_to_le32(10);
	CHECK_STR(bch_jset_validate(j, 4096, &g), "bad csum");
	CHECK_STR(bch_jset_validate(j, 300, &g), "too big");
	j->keys = cpu_to_le32(5000);
	CHECK_STR(bch_jset_validate(j, 1 << 20, &g), "too big");
	j->magic ^= cpu_to_le64(1);
	CHECK(bch_jset_validate(j, 4096, &g) == BCH_JSET_NO_ENTRY);
	free(j);
}

UNIT_TEST(prio_round_trip_and_validator)
{
	struct bch_geom g;
	struct bch_prio_set_disk *p;
	struct bch_prio_entry e = { 65535, 200 }, d;

	spec_geom(&g, 8);
	p = calloc(1, g.meta_bucket_bytes);
	p->magic = cpu_to_le64(g.pset_magic);
	bch_prio_put(p, 1351, &e);
	bch_prio_get(p, 1351, &d);
	CHECK(d.prio == 65535 && d.gen == 200);
	CHECK(p->data[3 * 1351] == 0xff && p->data[3 * 1351 + 2] == 200);
	p->csum = cpu_to_le64(bch_prio_csum(p, &g));
	CHECK(!bch_prio_validate(p, &g));
	p->data[0] ^= 1;
	CHECK_STR(bch_prio_validate(p, &g), "bad csum reading priorities");
	p->data[0] ^= 1;
	p->magic ^= cpu_to_le64(1);
	p->csum = cpu_to_le64(bch_prio_csum(p, &g));
	CHECK_STR(bch_prio_validate(p, &g), "bad magic reading priorities");
	free(p);
}

UNIT_TEST(uuid_entry_validator)
{
	struct bch_uuid_entry_disk e = { 0 };

	CHECK(bch_uuid_slot_kind(e.uuid) == BCH_UUID_FREE);
	CHECK(!bch_uuid_entry_validate(&e));
	e.flags = cpu_to_le32(1);
	CHECK_STR(bch_uuid_entry_validate(&e), "free slot with flags set");
	memcpy(e.uuid, bch_invalid_uuid, 16);
	CHECK(bch_uuid_slot_kind(e.uuid) == BCH_UUID_RETIRED);
	e.flags = cpu_to_le32(4);
	CHECK_STR(bch_uuid_entry_validate(&e), "unknown flag bits");
	e.uuid[0] = 1;
	e.flags = 0;
	e.sectors = cpu_to_le64(100);
	CHECK(bch_uuid_slot_kind(e.uuid) == BCH_UUID_IN_USE);
	CHECK_STR(bch_uuid_entry_validate(&e),
		  "size set on a slot that is not a flash volume");
	e.flags = cpu_to_le32(BCH_UUID_FLASH_ONLY);
	CHECK(!bch_uuid_entry_validate(&e));
}
