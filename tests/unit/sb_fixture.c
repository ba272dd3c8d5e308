// SPDX-License-Identifier: GPL-2.0
/* Superblock fixtures for the unit tests. */
#include <string.h>

#include "sb_fixture.h"

static const unsigned char set_uuid[16] = {
	0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
	0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
};

void fixture_reseal(struct bch_sb_disk *d)
{
	d->csum = cpu_to_le64(bch_sb_csum(d));
}

/* Zeroes, then the fields both kinds share, with uuid bytes first..+15. */
static void fixture_header(struct bch_sb_disk *d, u64 version, u8 first)
{
	int i;

	memset(d, 0, sizeof(*d));
	d->offset = cpu_to_le64(8);
	d->version = cpu_to_le64(version);
	memcpy(d->magic, bch_sb_magic, 16);
	for (i = 0; i < 16; i++)
		d->uuid[i] = first + i;
	d->block_size = cpu_to_le16(1);
	d->bucket_size = cpu_to_le16(1024);
}

void fixture_cache_sb(struct bch_sb_disk *d)
{
	int i;

	fixture_header(d, 3, 0);
	memcpy(d->set_uuid, set_uuid, 16);
	d->flags = cpu_to_le64(1);
	d->seq = cpu_to_le64(1);
	d->nbuckets = cpu_to_le64(2048);
	d->nr_in_set = cpu_to_le16(1);
	d->first_bucket = cpu_to_le16(1);
	d->keys = cpu_to_le16(16);
	for (i = 0; i < 16; i++)
		d->d[i] = cpu_to_le64(1 + i);
	fixture_reseal(d);
}

void fixture_backing_sb(struct bch_sb_disk *d)
{
	fixture_header(d, 1, 0xa0);
	fixture_reseal(d);
}
