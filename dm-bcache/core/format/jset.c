// SPDX-License-Identifier: GPL-2.0
/* Journal entry layout, checksum and validation; see jset.h. */
#include "format/jset.h"
#include "util/crc64.h"

static_assert(sizeof(struct bch_jset_disk) == 240, "jset header size");
static_assert(offsetof(struct bch_jset_disk, magic) == 8, "jset magic");
static_assert(offsetof(struct bch_jset_disk, seq) == 16, "jset seq");
static_assert(offsetof(struct bch_jset_disk, version) == 24, "jset version");
static_assert(offsetof(struct bch_jset_disk, keys) == 28, "jset keys");
static_assert(offsetof(struct bch_jset_disk, last_seq) == 32, "last_seq");
static_assert(offsetof(struct bch_jset_disk, uuid_bucket) == 40, "uuid");
static_assert(offsetof(struct bch_jset_disk, btree_root) == 104, "root");
static_assert(offsetof(struct bch_jset_disk, btree_level) == 168, "level");
static_assert(offsetof(struct bch_jset_disk, prio_bucket) == 176, "prio");

const char *const bch_jset_no_entry = "bad magic";

u64 bch_jset_csum(const struct bch_jset_disk *j)
{
	return bch_crc64((const u8 *)j + 8, bch_jset_bytes(j) - 8);
}

const char *bch_jset_validate(const struct bch_jset_disk *j, size_t avail,
			      const struct bch_geom *g)
{
	size_t bytes;

	if (avail < sizeof(*j) || le64_to_cpu(j->magic) != g->jset_magic)
		return BCH_JSET_NO_ENTRY;
	bytes = bch_jset_bytes(j);
	if (bytes > BCH_JSET_MAX_BYTES || bytes > avail)
		return "too big";
	if (le64_to_cpu(j->csum) != bch_jset_csum(j))
		return "bad csum";
	return NULL;
}
