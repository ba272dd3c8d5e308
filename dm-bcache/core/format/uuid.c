// SPDX-License-Identifier: GPL-2.0
/* UUID table entries; see uuid.h. */
#include "format/uuid.h"

static_assert(sizeof(struct bch_uuid_entry_disk) == 128, "uuid_entry");
static_assert(offsetof(struct bch_uuid_entry_disk, first_reg) == 48, "reg");
static_assert(offsetof(struct bch_uuid_entry_disk, flags) == 60, "flags");
static_assert(offsetof(struct bch_uuid_entry_disk, sectors) == 64, "sect");
static_assert(sizeof(struct bch_uuid_entry_v0_disk) == 64, "uuid_entry_v0");

const u8 bch_invalid_uuid[16] = {
	0xa0, 0x3e, 0xf8, 0xed, 0x3e, 0xe1, 0xb8, 0x78,
	0xc8, 0x50, 0xfc, 0x5e, 0xcb, 0x16, 0xcd, 0x99,
};

enum bch_uuid_slot bch_uuid_slot_kind(const u8 uuid[16])
{
	static const u8 zero[16];

	if (!memcmp(uuid, zero, 16))
		return BCH_UUID_FREE;
	if (!memcmp(uuid, bch_invalid_uuid, 16))
		return BCH_UUID_RETIRED;
	return BCH_UUID_IN_USE;
}

void bch_uuid_table_from_v0(void *buf, u32 nr)
{
	struct bch_uuid_entry_disk *e = buf;
	const struct bch_uuid_entry_v0_disk *v0 = buf;
	u32 i = nr;

	/* Back to front: entry i grows over legacy entries 2i and 2i + 1. */
	while (i--) {
		memmove(&e[i], &v0[i], offsetof(struct bch_uuid_entry_v0_disk,
						pad));
		memset((u8 *)&e[i] + offsetof(struct bch_uuid_entry_disk,
					      flags), 0,
		       sizeof(e[i]) - offsetof(struct bch_uuid_entry_disk,
					       flags));
	}
}

const char *bch_uuid_entry_validate(const struct bch_uuid_entry_disk *e)
{
	u32 flags = le32_to_cpu(e->flags);

	if (flags & ~BCH_UUID_FLASH_ONLY)
		return "unknown flag bits";
	if (bch_uuid_slot_kind(e->uuid) == BCH_UUID_FREE && flags)
		return "free slot with flags set";
	if (bch_uuid_slot_kind(e->uuid) == BCH_UUID_IN_USE &&
	    !(flags & BCH_UUID_FLASH_ONLY) && le64_to_cpu(e->sectors))
		return "size set on a slot that is not a flash volume";
	return NULL;
}
