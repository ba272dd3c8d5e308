/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bcache superblock: its on-disk layout, its decoded form, its
 * validator and encoder, and reading and writing it.  One 4 KiB block at
 * sector 8 of both kinds of device; the version field says whether it
 * describes a cache device (0, 3, 5) or a backing device (1, 4, 6).
 * See docs/ondisk-format.md section 1.
 *
 * Vocabulary: a "backing" superblock sits on an origin and shifts its data
 * start to data_offset; a "cache" superblock describes a cache device.
 */
#ifndef DM_BCACHE_CORE_SUPER_H
#define DM_BCACHE_CORE_SUPER_H

#include "util/platform.h"

#define BCH_SB_SECTOR		8	/* where the superblock lives */
#define BCH_SB_BYTES		4096	/* what is read and written */
#define BCH_SB_JOURNAL_MAX	256	/* entries in d[] */
#define BCH_SB_LABEL_SIZE	32
#define BCH_SB_MAX_VERSION	6
#define BCH_BDEV_DATA_START	16	/* default backing data offset, sectors */
#define BCH_PAGE_SECTORS	8	/* x86-64 page, fixed by the format */
#define BCH_MIN_NBUCKETS	128	/* the driver's superblock minimum */
#define BCH_S64_MAX		0x7fffffffffffffffULL

enum bch_sb_version {
	BCH_SB_VERSION_CDEV			= 0,
	BCH_SB_VERSION_BDEV			= 1,
	BCH_SB_VERSION_CDEV_WITH_UUID		= 3,
	BCH_SB_VERSION_BDEV_WITH_OFFSET		= 4,
	BCH_SB_VERSION_CDEV_WITH_FEATURES	= 5,
	BCH_SB_VERSION_BDEV_WITH_FEATURES	= 6,
};

/* Incompatible feature bits understood by the 6.1 driver (version 5). */
#define BCH_FEATURE_INCOMPAT_OBSO_LARGE_BUCKET	0x1ULL
#define BCH_FEATURE_INCOMPAT_LOG_LARGE_BUCKET	0x2ULL
#define BCH_FEATURE_INCOMPAT_SUPPORTED \
	(BCH_FEATURE_INCOMPAT_OBSO_LARGE_BUCKET | \
	 BCH_FEATURE_INCOMPAT_LOG_LARGE_BUCKET)

/* Backing superblock flags: bits 0-3 cache mode, 61-62 state. */
#define BCH_BDEV_MODE_MASK	0xfULL
#define BCH_BDEV_STATE_SHIFT	61
#define BCH_BDEV_STATE_MASK	0x3ULL

enum bch_bdev_state {
	BCH_BDEV_STATE_NONE	= 0,
	BCH_BDEV_STATE_CLEAN	= 1,
	BCH_BDEV_STATE_DIRTY	= 2,
	BCH_BDEV_STATE_STALE	= 3,
};

/* Cache superblock flags: bit 0 sync, bit 1 discard, bits 2-4 policy. */
#define BCH_CACHE_SYNC			0x1ULL
#define BCH_CACHE_DISCARD		0x2ULL
#define BCH_CACHE_REPLACEMENT_SHIFT	2
#define BCH_CACHE_REPLACEMENT_MASK	0x7ULL
/*
 * dm-bcache's own, in a bit the format leaves unused (ondisk-format 1.6;
 * the mainline driver neither reads nor clears it): a table on this
 * cache failed, so the cache must be checked before it is used again.
 * The target refuses a cache that has it; bcache_check
 * --clear-needs-check-flag clears it once the metadata checks clean.
 */
#define BCH_CACHE_NEEDS_CHECK		BIT_ULL(63)

/* The replacement policy field (BCH_CACHE_REPLACEMENT_*). */
enum bch_replacement {
	BCH_REPLACEMENT_LRU,
	BCH_REPLACEMENT_FIFO,
	BCH_REPLACEMENT_RANDOM,
};

extern const u8 bch_sb_magic[16];

/* On-disk layout, little-endian.  Offsets are asserted in super.c. */
struct bch_sb_disk {
	__le64	csum;
	__le64	offset;		/* sector of this superblock: 8 */
	__le64	version;
	u8	magic[16];
	u8	uuid[16];
	u8	set_uuid[16];
	u8	label[BCH_SB_LABEL_SIZE];
	__le64	flags;
	__le64	seq;
	__le64	feature_compat;
	__le64	feature_incompat;
	__le64	feature_ro_compat;
	__le64	pad[5];
	__le64	nbuckets;	/* cache: bucket count; backing: data_offset */
	__le16	block_size;	/* sectors */
	__le16	bucket_size;	/* sectors, or log2 with a feature bit */
	__le16	nr_in_set;
	__le16	nr_this_dev;
	__le32	last_mount;
	__le16	first_bucket;
	__le16	keys;		/* journal buckets in d[] */
	__le64	d[BCH_SB_JOURNAL_MAX];
	__le16	obso_bucket_size_hi;
	u8	pad_end[6];
};

enum bch_sb_kind {
	BCH_SB_KIND_CACHE,
	BCH_SB_KIND_BACKING,
};

/* The decoded superblock, host order, with derived values filled in. */
struct bch_sb {
	enum bch_sb_kind kind;
	u64	version;
	u8	uuid[16];
	u8	set_uuid[16];
	u8	label[BCH_SB_LABEL_SIZE];
	u64	flags;
	u64	seq;
	u64	feature_compat;
	u64	feature_incompat;
	u64	feature_ro_compat;
	u64	nbuckets;	/* cache only */
	u64	data_offset;	/* backing only, sectors */
	u32	block_size;	/* sectors */
	u32	bucket_size;	/* sectors, after feature decoding */
	u16	nr_in_set;
	u16	nr_this_dev;
	u32	last_mount;
	u16	first_bucket;
	u16	keys;
	u64	d[BCH_SB_JOURNAL_MAX];
};

/* True when @d carries the bcache magic at the right offset. */
bool bch_sb_has_magic(const struct bch_sb_disk *d);

/* The checksum the superblock should carry, from its own keys count. */
u64 bch_sb_csum(const struct bch_sb_disk *d);

/*
 * Validate @d the way the mainline 6.1 driver does at registration, in the
 * same order, and decode it into @sb.  @dev_sectors and @dev_lbs are the
 * device's size in sectors and logical block size in bytes.  Returns NULL
 * when valid, else a static string naming the first failed check.
 */
const char *bch_sb_validate(const struct bch_sb_disk *d, u64 dev_sectors,
			    unsigned int dev_lbs, struct bch_sb *sb);

static inline enum bch_bdev_state bch_sb_bdev_state(const struct bch_sb *sb)
{
	return (sb->flags >> BCH_BDEV_STATE_SHIFT) & BCH_BDEV_STATE_MASK;
}

/* Encode @sb into @d (BCH_SB_BYTES, zeroed by the caller) with its csum. */
void bch_sb_encode(const struct bch_sb *sb, struct bch_sb_disk *d);

/*
 * A blank device: sectors 0-15 (the head make-bcache zeroes and the
 * superblock) all zero.  The target formats a blank cache on first use and
 * the checker reports it as blank, not as damage.  @area holds
 * BCH_SB_AREA_BYTES from sector 0.
 */
#define BCH_SB_AREA_BYTES	(2 * BCH_SB_BYTES)
bool bch_sb_area_blank(const void *area);

/* Read and write the superblock block at sector 8. */
/* @buf holds BCH_SB_BYTES. */
int bch_sb_read(const struct bch_meta_io *io, void *buf);
int bch_sb_write(const struct bch_meta_io *io, const struct bch_sb *sb);

#endif
