/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prio/gen buckets (struct prio_set): the persistent generation and
 * priority of every bucket, in a chain of buckets whose head the journal
 * names.  Each holds a 40-byte header and 3-byte entries (u16 prio, u8
 * gen) for prios_per_bucket consecutive buckets, counted from bucket 0.
 * Only the first meta_bucket_bytes of each bucket are used and checksummed.
 * ondisk-format section 3.4.
 */
#ifndef DM_BCACHE_CORE_PRIO_H
#define DM_BCACHE_CORE_PRIO_H

#include "format/geometry.h"

struct bch_prio_set_disk {
	__le64	csum;
	__le64	magic;
	__le64	seq;
	__le32	version;
	__le32	pad;
	__le64	next_bucket;
	u8	data[];
} __packed;

struct bch_prio_entry {
	u16 prio;
	u8 gen;
};

static inline void bch_prio_get(const struct bch_prio_set_disk *p,
				unsigned int i, struct bch_prio_entry *e)
{
	const u8 *d = p->data + 3 * (size_t)i;

	e->prio = d[0] | (d[1] << 8);
	e->gen = d[2];
}

static inline void bch_prio_put(struct bch_prio_set_disk *p, unsigned int i,
				const struct bch_prio_entry *e)
{
	u8 *d = p->data + 3 * (size_t)i;

	d[0] = e->prio & 0xff;
	d[1] = e->prio >> 8;
	d[2] = e->gen;
}

u64 bch_prio_csum(const struct bch_prio_set_disk *p,
		  const struct bch_geom *g);

/* Checksum, then magic, as the driver checks them.  NULL when valid. */
const char *bch_prio_validate(const struct bch_prio_set_disk *p,
			      const struct bch_geom *g);

#endif
