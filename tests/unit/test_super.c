// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock validation: the reference example validates and has the
 * documented checksum; each broken field is refused with its own reason.
 */
#include <string.h>

#include "unit.h"
#include "sb_fixture.h"

static const char *validate(struct bch_sb_disk *d, struct bch_sb *sb)
{
	return bch_sb_validate(d, FIXTURE_DEV_SECTORS, 512, sb);
}

UNIT_TEST(sb_example_checksum)
{
	struct bch_sb_disk d;

	fixture_cache_sb(&d);
	CHECK(le64_to_cpu(d.csum) == 0x2F7D4FD4B92F90F8ULL);
	d.keys = 0;
	CHECK(bch_sb_csum(&d) == 0x0F0F16752D524147ULL);
}

UNIT_TEST(sb_example_cache_valid)
{
	struct bch_sb_disk d;
	struct bch_sb sb;

	fixture_cache_sb(&d);
	CHECK_STR(validate(&d, &sb), NULL);
	CHECK(sb.kind == BCH_SB_KIND_CACHE);
	CHECK(sb.nbuckets == 2048 && sb.bucket_size == 1024);
	CHECK(sb.keys == 16 && sb.d[15] == 16);
}

UNIT_TEST(sb_backing_versions)
{
	struct bch_sb_disk d;
	struct bch_sb sb;

	fixture_backing_sb(&d);
	CHECK_STR(validate(&d, &sb), NULL);
	CHECK(sb.kind == BCH_SB_KIND_BACKING && sb.data_offset == 16);

	/* Version 1 ignores the stored offset. */
	d.nbuckets = cpu_to_le64(4096);
	fixture_reseal(&d);
	CHECK_STR(validate(&d, &sb), NULL);
	CHECK(sb.data_offset == 16);

	d.version = cpu_to_le64(4);
	fixture_reseal(&d);
	CHECK_STR(validate(&d, &sb), NULL);
	CHECK(sb.data_offset == 4096);

	d.version = cpu_to_le64(6);
	fixture_reseal(&d);
	CHECK_STR(validate(&d, &sb), NULL);
	CHECK(sb.data_offset == 4096);
}

struct breakage {
	const char *what;
	void (*setup)(struct bch_sb_disk *d);
	void (*breaker)(struct bch_sb_disk *d);
	int reseal;
	const char *reason;
};

static void bad_offset(struct bch_sb_disk *d) { d->offset = cpu_to_le64(9); }
static void bad_magic(struct bch_sb_disk *d) { d->magic[15] ^= 1; }
static void bad_csum(struct bch_sb_disk *d) { d->label[0] = 'x'; }
static void zero_uuid(struct bch_sb_disk *d) { memset(d->uuid, 0, 16); }
static void big_keys(struct bch_sb_disk *d) { d->keys = cpu_to_le16(257); }
static void version2(struct bch_sb_disk *d) { d->version = cpu_to_le64(2); }
static void version7(struct bch_sb_disk *d) { d->version = cpu_to_le64(7); }
static void bdev_offset(struct bch_sb_disk *d)
{
	d->version = cpu_to_le64(4);
	d->nbuckets = cpu_to_le64(15);
}

static void bdev_offset_end(struct bch_sb_disk *d)
{
	d->version = cpu_to_le64(4);
	d->nbuckets = cpu_to_le64(FIXTURE_DEV_SECTORS);
}

static void block_zero(struct bch_sb_disk *d) { d->block_size = 0; }
static void few_buckets(struct bch_sb_disk *d) { d->nbuckets = cpu_to_le64(127); }
static void many_buckets(struct bch_sb_disk *d) { d->nbuckets = cpu_to_le64(~0ULL); }
static void block_npow2(struct bch_sb_disk *d) { d->block_size = cpu_to_le16(3); }
static void block_big(struct bch_sb_disk *d) { d->block_size = cpu_to_le16(16); }
static void bucket_npow2(struct bch_sb_disk *d) { d->bucket_size = cpu_to_le16(1000); }
static void bucket_small(struct bch_sb_disk *d) { d->bucket_size = cpu_to_le16(4); }
static void dev_small(struct bch_sb_disk *d) { d->nbuckets = cpu_to_le64(4096); }
static void zero_set(struct bch_sb_disk *d) { memset(d->set_uuid, 0, 16); }
static void nr_in_set0(struct bch_sb_disk *d) { d->nr_in_set = 0; }
static void nr_this_dev(struct bch_sb_disk *d) { d->nr_this_dev = cpu_to_le16(1); }
static void nr_in_set9(struct bch_sb_disk *d)
{
	d->nr_in_set = cpu_to_le16(9);
}

static void journal_gap(struct bch_sb_disk *d) { d->d[3] = cpu_to_le64(77); }
static void journal_past(struct bch_sb_disk *d)
{
	int i;

	d->first_bucket = cpu_to_le16(2040);
	for (i = 0; i < 16; i++)
		d->d[i] = cpu_to_le64(2040 + i);
}

static void first_bucket0(struct bch_sb_disk *d)
{
	int i;

	d->first_bucket = 0;
	for (i = 0; i < 16; i++)
		d->d[i] = cpu_to_le64(i);
}

static void v5(struct bch_sb_disk *d) { d->version = cpu_to_le64(5); }
static void feat_compat(struct bch_sb_disk *d)
{
	v5(d);
	d->feature_compat = cpu_to_le64(1);
}

static void feat_ro(struct bch_sb_disk *d)
{
	v5(d);
	d->feature_ro_compat = cpu_to_le64(4);
}

static void feat_incompat(struct bch_sb_disk *d)
{
	v5(d);
	d->feature_incompat = cpu_to_le64(4);
}

static void log_bucket_overflow(struct bch_sb_disk *d)
{
	v5(d);
	d->feature_incompat = cpu_to_le64(2);
	d->bucket_size = cpu_to_le16(40);
}

static const struct breakage breakages[] = {
	{ "offset", fixture_cache_sb, bad_offset, 1,
	  "Not a bcache superblock (bad offset)" },
	{ "magic", fixture_cache_sb, bad_magic, 1,
	  "Not a bcache superblock (bad magic)" },
	{ "csum", fixture_cache_sb, bad_csum, 0, "Bad checksum" },
	{ "keys>256", fixture_cache_sb, big_keys, 1, "Too many journal buckets" },
	{ "uuid", fixture_cache_sb, zero_uuid, 1, "Bad UUID" },
	{ "version 2", fixture_cache_sb, version2, 1,
	  "Unsupported superblock version" },
	{ "version 7", fixture_cache_sb, version7, 1,
	  "Unsupported superblock version" },
	{ "bdev offset", fixture_backing_sb, bdev_offset, 1, "Bad data offset" },
	{ "bdev offset end", fixture_backing_sb, bdev_offset_end, 1,
	  "Bad data offset (beyond end of device)" },
	{ "block 0", fixture_cache_sb, block_zero, 1,
	  "Superblock block size smaller than device block size" },
	{ "few buckets", fixture_cache_sb, few_buckets, 1, "Not enough buckets" },
	{ "many buckets", fixture_cache_sb, many_buckets, 1, "Too many buckets" },
	{ "block npow2", fixture_cache_sb, block_npow2, 1,
	  "Bad block size (not power of 2)" },
	{ "block big", fixture_cache_sb, block_big, 1,
	  "Bad block size (larger than page size)" },
	{ "bucket npow2", fixture_cache_sb, bucket_npow2, 1,
	  "Bad bucket size (not power of 2)" },
	{ "bucket small", fixture_cache_sb, bucket_small, 1,
	  "Bad bucket size (smaller than page size)" },
	{ "device small", fixture_cache_sb, dev_small, 1,
	  "Invalid superblock: device too small" },
	{ "set uuid", fixture_cache_sb, zero_set, 1, "Bad UUID" },
	{ "nr_in_set 0", fixture_cache_sb, nr_in_set0, 1,
	  "Bad cache device number in set" },
	{ "nr_this_dev", fixture_cache_sb, nr_this_dev, 1,
	  "Bad cache device number in set" },
	{ "nr_in_set 9", fixture_cache_sb, nr_in_set9, 1,
	  "Bad cache device number in set" },
	{ "journal gap", fixture_cache_sb, journal_gap, 1,
	  "Journal buckets not sequential" },
	{ "journal past end", fixture_cache_sb, journal_past, 1,
	  "Too many journal buckets" },
	{ "first bucket 0", fixture_cache_sb, first_bucket0, 1,
	  "Invalid superblock: first bucket comes before end of super" },
	{ "compat feature", fixture_cache_sb, feat_compat, 1,
	  "Unsupported compatible feature found" },
	{ "ro feature", fixture_cache_sb, feat_ro, 1,
	  "Unsupported read-only compatible feature found" },
	{ "incompat feature", fixture_cache_sb, feat_incompat, 1,
	  "Unsupported incompatible feature found" },
	{ "log bucket overflow", fixture_cache_sb, log_bucket_overflow, 1,
	  "Bad bucket size (overflow)" },
};

UNIT_TEST(sb_each_breakage_refused)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(breakages); i++) {
		const struct breakage *b = &breakages[i];
		struct bch_sb_disk d;
		struct bch_sb sb;
		const char *got;

		b->setup(&d);
		b->breaker(&d);
		if (b->reseal)
			fixture_reseal(&d);
		got = validate(&d, &sb);
		if (!got || strcmp(got, b->reason))
			fprintf(stderr, "  case: %s\n", b->what);
		CHECK_STR(got, b->reason);
	}
}

/* A 4 KiB logical block device needs block_size 8. */
UNIT_TEST(sb_block_size_vs_device)
{
	struct bch_sb_disk d;
	struct bch_sb sb;

	fixture_cache_sb(&d);
	CHECK_STR(bch_sb_validate(&d, FIXTURE_DEV_SECTORS, 4096, &sb),
		  "Superblock block size smaller than device block size");
	d.block_size = cpu_to_le16(8);
	fixture_reseal(&d);
	CHECK_STR(bch_sb_validate(&d, FIXTURE_DEV_SECTORS, 4096, &sb), NULL);
}

UNIT_TEST(sb_large_bucket_features)
{
	struct bch_sb_disk d;
	struct bch_sb sb;

	fixture_cache_sb(&d);
	d.version = cpu_to_le64(5);
	d.feature_incompat = cpu_to_le64(2);
	d.bucket_size = cpu_to_le16(10);
	fixture_reseal(&d);
	CHECK_STR(validate(&d, &sb), NULL);
	CHECK(sb.bucket_size == 1024);

	d.feature_incompat = cpu_to_le64(1);
	d.bucket_size = 0;
	d.obso_bucket_size_hi = cpu_to_le16(1);
	d.nbuckets = cpu_to_le64(128);
	fixture_reseal(&d);
	CHECK_STR(bch_sb_validate(&d, 128 * 65536, 512, &sb), NULL);
	CHECK(sb.bucket_size == 65536);
}
