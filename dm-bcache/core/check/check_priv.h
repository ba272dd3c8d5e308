/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by the checker's files: check.c (superblock, prios, UUID
 * table, bucket accounting), check_journal.c and check_btree.c.
 */
#ifndef DM_BCACHE_CORE_CHECK_PRIV_H
#define DM_BCACHE_CORE_CHECK_PRIV_H

#include "check/check.h"

/* What the journal and superblock say a bucket holds. */
enum bch_owner {
	BCH_OWN_NONE,
	BCH_OWN_SUPER,
	BCH_OWN_JOURNAL,
	BCH_OWN_PRIO,
	BCH_OWN_UUID,
};

/*
 * Claims the btree makes on a bucket.  A claim counts only if its gen is
 * the bucket's final gen, which is known once the whole tree is walked,
 * so each kind keeps the newest gen seen and the count at that gen.
 */
#define BCH_USE_BTREE	0x1
#define BCH_USE_DATA	0x2
#define BCH_USE_DIRTY	0x4

struct bch_bucket_use {
	u8 flags;
	u8 btree_gen;
	u8 btree_count;
	u8 data_gen;
	u8 dirty_gen;		/* the oldest dirty claim */
};

struct bch_chk {
	const struct bch_meta_io *io;
	const struct bch_check_opts *o;
	const struct bch_check_ops *ops;
	struct bch_check_result *res;
	struct bch_geom g;
	u8 *gens;
	u8 *owner;
	struct bch_bucket_use *use;
	bool gens_known;		/* prio chain read successfully */
	bool have_newest;
	char msg[320];
	/* The newest journal entry's header: root, UUID and prio pointers. */
	struct bch_jset_disk newest;
};

__printf(3, 4)
void bch_chk_damage(struct bch_chk *c, enum bch_damage cls,
		    const char *fmt, ...);
__printf(2, 3)
void bch_chk_note(struct bch_chk *c, const char *fmt, ...);

/* Read @sectors at @sector into a new buffer; NULL on error (noted). */
void *bch_chk_read(struct bch_chk *c, u64 sector, size_t bytes);

/* Apply the recovery rule: a pointer newer than its bucket sets its gen. */
void bch_chk_adopt_gen(struct bch_chk *c, u64 ptr);
bool bch_chk_ptr_stale(struct bch_chk *c, u64 ptr);
/* Does @bucket lie inside the device, past the superblock? */
bool bch_chk_bucket_ok(struct bch_chk *c, u64 bucket);

int bch_chk_journal(struct bch_chk *c);
int bch_chk_btree(struct bch_chk *c);

#endif
