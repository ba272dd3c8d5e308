/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Journal entries (struct jset): a 240-byte header followed by packed
 * extent keys, written back to back on block boundaries inside the
 * journal buckets listed in the superblock.  Every entry names the current
 * btree root, UUID table and prio chain.  ondisk-format section 6.
 */
#ifndef DM_BCACHE_CORE_JSET_H
#define DM_BCACHE_CORE_JSET_H

#include "format/geometry.h"

#define BCH_JSET_VERSION	1

struct bch_jset_disk {
	__le64	csum;
	__le64	magic;
	__le64	seq;
	__le32	version;
	__le32	keys;			/* u64 words after the header */
	__le64	last_seq;
	__le64	uuid_bucket[BCH_BKEY_PAD_U64S];
	__le64	btree_root[BCH_BKEY_PAD_U64S];
	__le16	btree_level;
	__le16	pad[3];
	__le64	prio_bucket[BCH_MAX_CACHES];
	__le64	d[];
};

/* Bytes the entry occupies before block rounding. */
static inline size_t bch_jset_bytes(const struct bch_jset_disk *j)
{
	return sizeof(*j) + 8 * (size_t)le32_to_cpu(j->keys);
}

u64 bch_jset_csum(const struct bch_jset_disk *j);

/*
 * Check the header at @j, which has @avail bytes readable after it: magic,
 * size (at most 32 KiB and @avail) and checksum, in the order the driver's
 * journal reader tests them.  NULL when valid.  "bad magic" means there is
 * no entry here at all; the other reasons mean a damaged or torn one.
 */
const char *bch_jset_validate(const struct bch_jset_disk *j, size_t avail,
			      const struct bch_geom *g);

/* The reason bch_jset_validate() gives for "no entry here". */
extern const char *const bch_jset_no_entry;
#define BCH_JSET_NO_ENTRY bch_jset_no_entry

#endif
