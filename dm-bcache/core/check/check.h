/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metadata checker: reads a cache device's superblock, journal, prio
 * chain, UUID table and btree the way the mainline driver does at
 * registration, and reports every inconsistency it finds as a finding of
 * one damage class, naming the structure, where it is, and the expected
 * and found values.  Read-only.
 *
 * One walker serves three users: bcache_check (findings only), bcache_dump
 * (the visitor callbacks print every structure) and the target's
 * constructor (refuses a damaged cache).
 */
#ifndef DM_BCACHE_CORE_CHECK_H
#define DM_BCACHE_CORE_CHECK_H

#include "format/geometry.h"
#include "format/jset.h"
#include "format/prio.h"
#include "format/bset.h"
#include "format/uuid.h"

enum bch_damage {
	BCH_DMG_SUPERBLOCK,
	BCH_DMG_JOURNAL_EMPTY,
	BCH_DMG_JOURNAL_ENTRY,
	BCH_DMG_JOURNAL_TAIL,		/* the newest entry is torn or damaged */
	BCH_DMG_JOURNAL_SEQ,
	BCH_DMG_JOURNAL_KEY,
	BCH_DMG_PRIO,
	BCH_DMG_UUID,
	BCH_DMG_ROOT,
	BCH_DMG_NODE,
	BCH_DMG_KEY_INVALID,
	BCH_DMG_KEY_ORDER,
	BCH_DMG_KEY_OVERLAP,
	BCH_DMG_KEY_BOUNDS,
	BCH_DMG_PTR_STALE,
	BCH_DMG_BUCKET_CONFLICT,
	BCH_NR_DAMAGE
};

/* Short class names, used in messages and by the damage tests. */
extern const char * const bch_damage_names[BCH_NR_DAMAGE];

/*
 * Findings the target accepts a cache with, because the mainline driver
 * does too: a torn journal tail is what a power cut during a journal
 * write leaves, and replay ignores it.  They are reported, counted in
 * nr_tolerated and damage[], but not in nr_damage.
 */
bool bch_damage_tolerated(enum bch_damage cls);

struct bch_check_opts {
	bool super_block_only;
	bool skip_journal;	/* and everything the journal leads to */
	bool skip_prios;
	bool skip_uuids;
	bool skip_btree;
};

struct bch_check_result {
	u32 damage[BCH_NR_DAMAGE];	/* findings per class */
	u32 nr_damage;			/* findings the target refuses */
	u32 nr_tolerated;		/* findings it accepts */
	u32 nr_notes;			/* suspicious, but not damage */
	bool blank;			/* all zero: bch_sb_area_blank() */
	bool synchronous;		/* metadata present (CACHE_SYNC) */
	bool needs_check;		/* BCH_CACHE_NEEDS_CHECK */
	struct bch_sb sb;
	u64 journal_entries;		/* valid entries found */
	u64 newest_seq, last_seq;
	u64 journal_keys;		/* keys in the replay range */
	u64 prio_buckets;
	u64 uuids_in_use;
	u32 root_level;
	u64 btree_nodes;
	u64 btree_keys;
	u64 buckets_btree;		/* holding a live node */
	u64 buckets_data;		/* holding live extents */
	u64 buckets_dirty;
};

/*
 * Optional callbacks for a caller that wants to see the metadata (the
 * dump tool).  Every one may be NULL.  Structures are passed as read from
 * the device; @live says whether a key is current (not stale).
 */
struct bch_check_ops {
	void *ctx;
	void (*finding)(void *ctx, enum bch_damage cls, const char *msg);
	void (*note)(void *ctx, const char *msg);
	void (*sb)(void *ctx, const struct bch_sb *sb);
	void (*jset)(void *ctx, const struct bch_jset_disk *j, u32 ring,
		     u64 bucket, u32 block, bool in_replay);
	void (*jkey)(void *ctx, const struct bch_key *k);
	void (*prio)(void *ctx, u64 bucket, u64 first, u32 count,
		     const struct bch_prio_set_disk *p);
	void (*uuid)(void *ctx, u32 slot, const u8 *uuid, const u8 *label,
		     u32 flags, u64 sectors);
	/* A node: node(), then bset() and key() per bset, then node_end(). */
	void (*node)(void *ctx, const struct bch_key *k, u32 level);
	void (*bset)(void *ctx, u32 index, u32 block, u64 seq, u32 version,
		     u32 u64s);
	void (*key)(void *ctx, const struct bch_key *k, u32 level, bool live);
	void (*node_end)(void *ctx, const struct bch_node_info *info);
};

/*
 * Check the cache device behind @io.  Returns 0 when the walk completed
 * (findings, if any, are counted in @res), or a negative errno when the
 * device could not be read or memory ran out.
 */
int bch_check(const struct bch_meta_io *io, const struct bch_check_opts *o,
	      const struct bch_check_ops *ops, struct bch_check_result *res);

#endif
