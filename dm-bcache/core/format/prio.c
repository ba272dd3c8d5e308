// SPDX-License-Identifier: GPL-2.0
/* Prio bucket layout, checksum and validation; see prio.h. */
#include "format/prio.h"
#include "util/crc64.h"

static_assert(sizeof(struct bch_prio_set_disk) == 40, "prio_set header");
static_assert(offsetof(struct bch_prio_set_disk, seq) == 16, "prio seq");
static_assert(offsetof(struct bch_prio_set_disk, version) == 24, "version");
static_assert(offsetof(struct bch_prio_set_disk, next_bucket) == 32, "next");

u64 bch_prio_csum(const struct bch_prio_set_disk *p,
		  const struct bch_geom *g)
{
	return bch_crc64((const u8 *)p + 8, g->meta_bucket_bytes - 8);
}

const char *bch_prio_validate(const struct bch_prio_set_disk *p,
			      const struct bch_geom *g)
{
	if (le64_to_cpu(p->csum) != bch_prio_csum(p, g))
		return "bad csum reading priorities";
	if (le64_to_cpu(p->magic) != g->pset_magic)
		return "bad magic reading priorities";
	return NULL;
}
