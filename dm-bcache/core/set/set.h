/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An open cache set: the index, the allocator and the journal of one
 * cache device, kept consistent on disk.  The target runs one of these;
 * the unit tests run the same code over an in-memory device.
 *
 * Opening reads what a checked cache holds (journal, prio chain, UUID
 * table, btree), replays the journal into the tree and learns which
 * buckets hold what.  After that:
 *   - bch_set_insert() changes the index in memory;
 *   - bch_set_journal() logs keys so that they survive a crash;
 *   - bch_set_commit() writes the changed btree nodes and a journal entry
 *     naming the new root, after which replay no longer needs the older
 *     entries (last_seq moves up);
 *   - bch_set_refill() reclaims buckets for new data: raises their gens,
 *     writes a new prio chain and a journal entry naming it, and only then
 *     lets the buckets be written.
 * Every structure is written to fresh buckets and named by a journal
 * entry before the old copy's bucket is released, so a crash at any point
 * leaves the last committed state readable.  The journal keeps room for a
 * commit: whatever writes an entry outside one (journalling keys, a
 * refill, saving prios, a UUID update) commits first when fewer than two
 * journal buckets are free, and a set opens after its newest entry, so a
 * cache that crashes before every commit never runs out of journal.
 *
 * Locking: one caller at a time changes the set (the target's index
 * worker), but readers of the in-memory index (lookups, data
 * allocation) may run alongside it while it writes metadata.  The caller
 * holds its lock shared around every call here except bch_set_insert()
 * (exclusive); the set takes it exclusive through excl() only around
 * changes readers could see, never across I/O.  The allocator's own
 * lock (alloc.h) covers what readers allocate.
 */
#ifndef DM_BCACHE_CORE_SET_H
#define DM_BCACHE_CORE_SET_H

#include "alloc/alloc.h"
#include "btree/btree_write.h"
#include "journal/journal_write.h"

struct bch_set {
	const struct bch_meta_io *io;
	struct bch_sb sb;
	struct bch_geom g;
	struct bch_alloc a;
	struct bch_btree t;
	struct bch_jwriter jw;
	struct bch_btree_writer bw;
	u64 *prio_chain;		/* the chain the journal names */
	u64 uuid_bucket;
	void *buf;			/* a prio or UUID bucket */
	u64 prio_seq;			/* the newest chain's, read or written */
	u64 replayed;			/* keys replayed at open */
	u64 commits, refills, gcs;
	u64 reclaimed;			/* buckets refills reclaimed, in all */
	u64 uncommitted;		/* keys inserted since the last commit */
	bool in_commit;			/* its entries may use the spare */
	/* A gc pass in steps: the position after the last leaf visited. */
	bool gc_running;
	u64 gc_inode, gc_offset;
	/* A leaf's merged view, for counting; kept through a pass. */
	struct bch_extents view, view_tmp;
	bool no_view;			/* tests: count by lookups instead */
	/* See "Locking" above; NULL when the caller has no readers. */
	void (*excl)(void *ctx, bool on);
	void *excl_ctx;
	/*
	 * A refill raises the reclaimed buckets' gens, so no new lookup
	 * reads them, then calls reuse_fence() (still exclusive) and
	 * reuse_wait() (shared) before anything is written to them (the new
	 * prio chain may be): the target waits there for data I/O begun
	 * before the fence, which may still address their old contents.
	 * Either may be NULL.
	 */
	void (*reuse_fence)(void *ctx);
	void (*reuse_wait)(void *ctx);
	void *reuse_ctx;
};

/* Open the set on @io, whose superblock @sb has been checked.  0 or -errno. */
int bch_set_open(struct bch_set *s, const struct bch_meta_io *io,
		 const struct bch_sb *sb);
/* Free the memory; the caller commits first if it wants to. */
void bch_set_close(struct bch_set *s);

/*
 * After keys went into a set's index by bch_set_insert() other than as
 * the target's writes (bcache_repair fills an empty set it just wrote
 * with what it salvaged): mark the buckets they hold data in, clean and
 * dirty, as opening marks those of the tree it loads, so the allocator
 * never takes them for free.
 */
void bch_set_mark_index(struct bch_set *s);

/* Let readers in during metadata I/O: see "Locking" above. */
void bch_set_readers(struct bch_set *s, void (*excl_fn)(void *, bool),
		     void *ctx);

/*
 * Insert extent @k into the index (newest).  0 or -errno.  During a gc
 * pass, the part of @k before the pass's position (in leaves the pass
 * has visited) is counted into the pass's counts here, so that dirty data
 * inserted behind the walk is never taken for garbage (alloc.h).  Dirty
 * data's caller reports it to bch_alloc_dirty_done() after this returns.
 */
int bch_set_insert(struct bch_set *s, const struct bch_key *k);

/*
 * Log @n keys already inserted, in the order they were inserted, after
 * a flush makes the data they address durable.  When
 * the journal runs short of free buckets this commits instead, which
 * makes them durable in the nodes.  0 or -errno.
 */
int bch_set_journal(struct bch_set *s, const struct bch_key *keys, u32 n);

/* Write what changed and name it in the journal; then flush.  0 or -errno. */
int bch_set_commit(struct bch_set *s);

/*
 * Reclaim up to @want buckets (their data is dropped from the cache) and
 * make them writable.  0, or -ENOSPC when reclaim found no more buckets
 * than the new prio chain takes (the rest hold dirty data or metadata).
 */
int bch_set_refill(struct bch_set *s, u64 want);

/*
 * Buckets one refill reclaims: enough that refills (each a prio chain
 * and a journal entry) stay rare, few enough that little cached data is
 * dropped at once.
 */
u64 bch_set_refill_batch(const struct bch_set *s);

/*
 * Write the buckets' current priorities (and gens) as a new prio chain,
 * so the next user of the cache (the mainline driver too) evicts in the
 * order this one would have.  0 or -errno.
 */
int bch_set_save_prios(struct bch_set *s);

/*
 * Garbage collection: recount every bucket's live data and oldest
 * pointer gen from the index, drop stale keys from leaves that hold
 * many, and merge nodes that fit in one (bch_btree_coalesce()); what
 * changed is rewritten by the commit gc makes, and the buckets of merged
 * away nodes are freed after it.  0 or -errno.
 */
int bch_set_gc(struct bch_set *s);

/*
 * gc in steps, so that a caller can serve inserts, journal writes and
 * reclaims in between: each call visits up to @leaves more leaves in key
 * order (stale keys dropped, live data counted beside the allocator's
 * own counts), and the call that reaches the last leaf merges nodes,
 * installs the counts and commits.  Keys inserted between steps are
 * counted by the walk if they go in ahead of it and by bch_set_insert()
 * if behind it.  Clean counts may still err either way until the next
 * pass, which costs cached data, never correctness (reclaim raises gens,
 * and a bucket reclaimed during the pass keeps its live count); dirty
 * counts err only high (alloc.h gives the cases).
 * 1 while the pass goes on, 0 when it ended, or -errno (pass dropped).
 */
int bch_set_gc_step(struct bch_set *s, u32 leaves);

/*
 * Write-back support.  Both helpers only read the index: the caller holds
 * its lock shared.
 *
 * bch_set_dirty_scan(): the dirty data of @inode from sector *@pos up to
 * @end, as lookups see it, in origin order: each piece in @out is the
 * live dirty key a lookup answered, clipped to the range that answer
 * holds (start, size and pointer offsets adjusted).  At most @max pieces
 * and @max_lookups lookups (gaps and clean keys cost lookups too); *@pos
 * is left where the next call goes on, @end when the range is done.
 * Returns the number of pieces.
 *
 * bch_set_clean_pieces(): @k is a piece bch_set_dirty_scan() returned,
 * since copied to the origin.  @out gets, as clean keys, every part of
 * @k's range that is still dirty with the same data (the same pointer
 * device and gen, at the same place relative to the key's start), at
 * most @max of them; parts overwritten since are left alone.  Returns the
 * count.  The caller then inserts each (bch_set_insert()), journals them
 * and reports their sectors to bch_alloc_cleaned().  Nothing else may be
 * inserted between this call and those inserts (the one writer of the
 * index makes both, or the lock is held exclusive across them): a clean
 * key inserted after a newer write would mask it.
 */
u32 bch_set_dirty_scan(const struct bch_set *s, u64 inode, u64 *pos, u64 end,
		       struct bch_key *out, u32 max, u32 max_lookups);
u32 bch_set_clean_pieces(const struct bch_set *s, const struct bch_key *k,
			 struct bch_key *out, u32 max);

/* Dirty data in the cache, as the allocator estimates it (alloc.h). */
static inline u64 bch_set_dirty_sectors(const struct bch_set *s)
{
	return s->a.dirty_sectors;
}

/*
 * The UUID slot (key inode) holding @uuid, adding it to the table (a new
 * table written and committed) when absent.  With @fresh, what the cache
 * holds under @uuid is not to be trusted (the device was not attached to
 * this set when last used): its slot is retired, as the mainline driver
 * retires it, and a new one taken.  >= 0, or -errno.
 */
int bch_set_uuid_slot(struct bch_set *s, const u8 uuid[16],
		      const char *label, bool fresh);

/*
 * The UUID slot holding @uuid, found without writing anything (a
 * read-only table): >= 0, -ENOENT, or another -errno.
 */
int bch_set_uuid_lookup(struct bch_set *s, const u8 uuid[16]);

#endif
