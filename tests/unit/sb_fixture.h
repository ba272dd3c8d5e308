/* SPDX-License-Identifier: GPL-2.0 */
/* Valid superblocks to start each test from, then break one field. */
#ifndef DM_BCACHE_SB_FIXTURE_H
#define DM_BCACHE_SB_FIXTURE_H

#include "format/super.h"

/* The example cache superblock of docs/ondisk-format.md section 1.4. */
void fixture_cache_sb(struct bch_sb_disk *d);
/* A make-bcache -B style backing superblock, version 1. */
void fixture_backing_sb(struct bch_sb_disk *d);
/* Recompute the checksum after a test changed a field. */
void fixture_reseal(struct bch_sb_disk *d);

#define FIXTURE_DEV_SECTORS (2048ULL * 1024)

#endif
