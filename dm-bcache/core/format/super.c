// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock checksum, validation and decoding.
 *
 * The checks and their order follow the mainline 6.1 driver's registration
 * path, so that a superblock we accept is one the mainline driver accepts,
 * and the reason we give for a refusal is the first one it would give.
 * One deliberate difference: a keys count above 256 is refused before the
 * checksum is computed, because the checksum would then cover bytes past
 * the structure.
 */
#include "format/super.h"
#include "util/crc64.h"

const u8 bch_sb_magic[16] = {
	0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca,
	0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
};

static_assert(sizeof(struct bch_sb_disk) == 2264, "bch_sb_disk size");
static_assert(offsetof(struct bch_sb_disk, offset) == 8, "offset");
static_assert(offsetof(struct bch_sb_disk, version) == 16, "version");
static_assert(offsetof(struct bch_sb_disk, magic) == 24, "magic");
static_assert(offsetof(struct bch_sb_disk, uuid) == 40, "uuid");
static_assert(offsetof(struct bch_sb_disk, set_uuid) == 56, "set_uuid");
static_assert(offsetof(struct bch_sb_disk, label) == 72, "label");
static_assert(offsetof(struct bch_sb_disk, flags) == 104, "flags");
static_assert(offsetof(struct bch_sb_disk, seq) == 112, "seq");
static_assert(offsetof(struct bch_sb_disk, feature_compat) == 120, "fc");
static_assert(offsetof(struct bch_sb_disk, feature_incompat) == 128, "fi");
static_assert(offsetof(struct bch_sb_disk, feature_ro_compat) == 136, "fr");
static_assert(offsetof(struct bch_sb_disk, nbuckets) == 184, "nbuckets");
static_assert(offsetof(struct bch_sb_disk, block_size) == 192, "block");
static_assert(offsetof(struct bch_sb_disk, bucket_size) == 194, "bucket");
static_assert(offsetof(struct bch_sb_disk, nr_in_set) == 196, "nr_in_set");
static_assert(offsetof(struct bch_sb_disk, nr_this_dev) == 198, "nr_this");
static_assert(offsetof(struct bch_sb_disk, last_mount) == 200, "mount");
static_assert(offsetof(struct bch_sb_disk, first_bucket) == 204, "first");
static_assert(offsetof(struct bch_sb_disk, keys) == 206, "keys");
static_assert(offsetof(struct bch_sb_disk, d) == 208, "d");
static_assert(offsetof(struct bch_sb_disk, obso_bucket_size_hi) == 2256,
	      "obso_bucket_size_hi");

static bool is_zero(const u8 *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

static bool is_power_of_two(u64 v)
{
	return v && !(v & (v - 1));
}

bool bch_sb_has_magic(const struct bch_sb_disk *d)
{
	return le64_to_cpu(d->offset) == BCH_SB_SECTOR &&
	       !memcmp(d->magic, bch_sb_magic, sizeof(bch_sb_magic));
}

u64 bch_sb_csum(const struct bch_sb_disk *d)
{
	unsigned int keys = le16_to_cpu(d->keys);

	if (keys > BCH_SB_JOURNAL_MAX)
		keys = BCH_SB_JOURNAL_MAX;
	return bch_crc64((const u8 *)d + 8,
			 offsetof(struct bch_sb_disk, d) - 8 + 8 * keys);
}

static void decode_common(const struct bch_sb_disk *d, struct bch_sb *sb)
{
	unsigned int i;

	memset(sb, 0, sizeof(*sb));
	sb->version = le64_to_cpu(d->version);
	memcpy(sb->uuid, d->uuid, sizeof(sb->uuid));
	memcpy(sb->set_uuid, d->set_uuid, sizeof(sb->set_uuid));
	memcpy(sb->label, d->label, sizeof(sb->label));
	sb->flags = le64_to_cpu(d->flags);
	sb->seq = le64_to_cpu(d->seq);
	sb->block_size = le16_to_cpu(d->block_size);
	sb->nr_in_set = le16_to_cpu(d->nr_in_set);
	sb->nr_this_dev = le16_to_cpu(d->nr_this_dev);
	sb->last_mount = le32_to_cpu(d->last_mount);
	sb->first_bucket = le16_to_cpu(d->first_bucket);
	sb->keys = le16_to_cpu(d->keys);
	for (i = 0; i < sb->keys && i < BCH_SB_JOURNAL_MAX; i++)
		sb->d[i] = le64_to_cpu(d->d[i]);
}

static const char *validate_backing(const struct bch_sb_disk *d,
				    u64 dev_sectors, struct bch_sb *sb)
{
	sb->kind = BCH_SB_KIND_BACKING;
	if (sb->version == BCH_SB_VERSION_BDEV) {
		sb->data_offset = BCH_BDEV_DATA_START;
	} else {
		sb->data_offset = le64_to_cpu(d->nbuckets);
		if (sb->data_offset < BCH_BDEV_DATA_START)
			return "Bad data offset";
	}
	if (dev_sectors && sb->data_offset >= dev_sectors)
		return "Bad data offset (beyond end of device)";
	return NULL;
}

static const char *decode_features(const struct bch_sb_disk *d,
				   struct bch_sb *sb)
{
	u32 field = le16_to_cpu(d->bucket_size);

	sb->bucket_size = field;
	if (sb->version < BCH_SB_VERSION_CDEV_WITH_FEATURES)
		return NULL;

	sb->feature_compat = le64_to_cpu(d->feature_compat);
	sb->feature_incompat = le64_to_cpu(d->feature_incompat);
	sb->feature_ro_compat = le64_to_cpu(d->feature_ro_compat);
	if (sb->feature_compat)
		return "Unsupported compatible feature found";
	if (sb->feature_ro_compat)
		return "Unsupported read-only compatible feature found";
	if (sb->feature_incompat & ~BCH_FEATURE_INCOMPAT_SUPPORTED)
		return "Unsupported incompatible feature found";

	if (sb->feature_incompat & BCH_FEATURE_INCOMPAT_LOG_LARGE_BUCKET) {
		if (field > 31)
			return "Bad bucket size (overflow)";
		sb->bucket_size = 1U << field;
	} else if (sb->feature_incompat &
		   BCH_FEATURE_INCOMPAT_OBSO_LARGE_BUCKET) {
		sb->bucket_size = field +
			((u32)le16_to_cpu(d->obso_bucket_size_hi) << 16);
	}
	return NULL;
}

static const char *validate_cache(const struct bch_sb_disk *d,
				  u64 dev_sectors, struct bch_sb *sb)
{
	const char *err;
	unsigned int i;

	sb->kind = BCH_SB_KIND_CACHE;
	sb->nbuckets = le64_to_cpu(d->nbuckets);

	err = decode_features(d, sb);
	if (err)
		return err;
	if (sb->nbuckets > (u64)BCH_S64_MAX)
		return "Too many buckets";
	if (sb->nbuckets < BCH_MIN_NBUCKETS)
		return "Not enough buckets";
	if (!is_power_of_two(sb->block_size))
		return "Bad block size (not power of 2)";
	if (sb->block_size > BCH_PAGE_SECTORS)
		return "Bad block size (larger than page size)";
	if (!is_power_of_two(sb->bucket_size))
		return "Bad bucket size (not power of 2)";
	if (sb->bucket_size < BCH_PAGE_SECTORS)
		return "Bad bucket size (smaller than page size)";
	if (dev_sectors / sb->bucket_size < sb->nbuckets)
		return "Invalid superblock: device too small";
	if (is_zero(sb->set_uuid, sizeof(sb->set_uuid)))
		return "Bad UUID";
	if (!sb->nr_in_set || sb->nr_in_set <= sb->nr_this_dev ||
	    sb->nr_in_set > 8)
		return "Bad cache device number in set";
	for (i = 0; i < sb->keys; i++)
		if (sb->d[i] != (u64)sb->first_bucket + i)
			return "Journal buckets not sequential";
	if ((u64)sb->first_bucket + sb->keys > sb->nbuckets)
		return "Too many journal buckets";
	if ((u64)sb->first_bucket * sb->bucket_size < 16)
		return "Invalid superblock: first bucket comes before end of super";
	return NULL;
}

const char *bch_sb_validate(const struct bch_sb_disk *d, u64 dev_sectors,
			    unsigned int dev_lbs, struct bch_sb *sb)
{
	if (le64_to_cpu(d->offset) != BCH_SB_SECTOR)
		return "Not a bcache superblock (bad offset)";
	if (memcmp(d->magic, bch_sb_magic, sizeof(bch_sb_magic)))
		return "Not a bcache superblock (bad magic)";
	if (le16_to_cpu(d->keys) > BCH_SB_JOURNAL_MAX)
		return "Too many journal buckets";
	if (le64_to_cpu(d->csum) != bch_sb_csum(d))
		return "Bad checksum";

	decode_common(d, sb);
	if (is_zero(sb->uuid, sizeof(sb->uuid)))
		return "Bad UUID";
	if ((u64)sb->block_size * 512 < dev_lbs)
		return "Superblock block size smaller than device block size";

	switch (sb->version) {
	case BCH_SB_VERSION_BDEV:
	case BCH_SB_VERSION_BDEV_WITH_OFFSET:
	case BCH_SB_VERSION_BDEV_WITH_FEATURES:
		return validate_backing(d, dev_sectors, sb);
	case BCH_SB_VERSION_CDEV:
	case BCH_SB_VERSION_CDEV_WITH_UUID:
	case BCH_SB_VERSION_CDEV_WITH_FEATURES:
		return validate_cache(d, dev_sectors, sb);
	default:
		return "Unsupported superblock version";
	}
}

void bch_sb_encode(const struct bch_sb *sb, struct bch_sb_disk *d)
{
	unsigned int i;

	d->offset = cpu_to_le64(BCH_SB_SECTOR);
	d->version = cpu_to_le64(sb->version);
	memcpy(d->magic, bch_sb_magic, sizeof(d->magic));
	memcpy(d->uuid, sb->uuid, sizeof(d->uuid));
	memcpy(d->set_uuid, sb->set_uuid, sizeof(d->set_uuid));
	memcpy(d->label, sb->label, sizeof(d->label));
	d->flags = cpu_to_le64(sb->flags);
	d->seq = cpu_to_le64(sb->seq);
	if (sb->version >= BCH_SB_VERSION_CDEV_WITH_FEATURES) {
		d->feature_compat = cpu_to_le64(sb->feature_compat);
		d->feature_incompat = cpu_to_le64(sb->feature_incompat);
		d->feature_ro_compat = cpu_to_le64(sb->feature_ro_compat);
	}
	if (sb->kind == BCH_SB_KIND_CACHE)
		d->nbuckets = cpu_to_le64(sb->nbuckets);
	else if (sb->version != BCH_SB_VERSION_BDEV)
		d->nbuckets = cpu_to_le64(sb->data_offset);
	d->block_size = cpu_to_le16(sb->block_size);
	d->bucket_size = cpu_to_le16(sb->bucket_size);
	d->nr_in_set = cpu_to_le16(sb->nr_in_set);
	d->nr_this_dev = cpu_to_le16(sb->nr_this_dev);
	d->last_mount = cpu_to_le32(sb->last_mount);
	d->first_bucket = cpu_to_le16(sb->first_bucket);
	d->keys = cpu_to_le16(sb->keys);
	for (i = 0; i < sb->keys && i < BCH_SB_JOURNAL_MAX; i++)
		d->d[i] = cpu_to_le64(sb->d[i]);
	d->csum = cpu_to_le64(bch_sb_csum(d));
}

bool bch_sb_area_blank(const void *area)
{
	const u64 *p = area;
	size_t i;

	for (i = 0; i < BCH_SB_AREA_BYTES / sizeof(*p); i++)
		if (p[i])
			return false;
	return true;
}

int bch_sb_read(const struct bch_meta_io *io, void *buf)
{
	return io->read(io->ctx, BCH_SB_SECTOR, buf, BCH_SB_BYTES);
}

int bch_sb_write(const struct bch_meta_io *io, const struct bch_sb *sb)
{
	struct bch_sb_disk *d = bch_zalloc(BCH_SB_BYTES);
	int r;

	if (!d)
		return -ENOMEM;
	bch_sb_encode(sb, d);
	r = io->write(io->ctx, BCH_SB_SECTOR, d, BCH_SB_BYTES);
	bch_free(d);
	return r;
}
