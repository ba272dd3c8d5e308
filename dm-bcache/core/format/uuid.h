/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The UUID table: one slot per cached device (backing device or flash
 * volume) of a cache set; slot i is key inode i.  No checksum and no
 * magic: the pointer's generation is its only protection.  Entries are
 * 128 bytes, or 64 in the legacy format that jset version 0 selects.
 * ondisk-format section 7.
 */
#ifndef DM_BCACHE_CORE_UUID_H
#define DM_BCACHE_CORE_UUID_H

#include "format/geometry.h"

#define BCH_UUID_FLASH_ONLY	0x1U

struct bch_uuid_entry_disk {
	u8	uuid[16];
	u8	label[BCH_SB_LABEL_SIZE];
	__le32	first_reg;
	__le32	last_reg;
	__le32	invalidated;
	__le32	flags;
	__le64	sectors;		/* flash-only volume size */
	u8	pad[56];
};

struct bch_uuid_entry_v0_disk {
	u8	uuid[16];
	u8	label[BCH_SB_LABEL_SIZE];
	__le32	first_reg;
	__le32	last_reg;
	__le32	invalidated;
	__le32	pad;
};

/* A retired slot's UUID; such slots are never reused. */
extern const u8 bch_invalid_uuid[16];

enum bch_uuid_slot {
	BCH_UUID_FREE,
	BCH_UUID_RETIRED,
	BCH_UUID_IN_USE,
};

enum bch_uuid_slot bch_uuid_slot_kind(const u8 uuid[16]);

/*
 * Turn the legacy table in @buf (64-byte entries) into the current layout
 * in place: the first @nr entries (the current layout's count, half the
 * legacy one's) keep their fields, flags and size zero, as the driver
 * converts it.
 */
void bch_uuid_table_from_v0(void *buf, u32 nr);

/* Reason a slot in the current format is malformed, or NULL. */
const char *bch_uuid_entry_validate(const struct bch_uuid_entry_disk *e);

#endif
