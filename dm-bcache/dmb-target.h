/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bcache target's per-instance state, shared by the files that
 * implement the target: dmb-ctr.c (table line), dmb-main.c (I/O mapping,
 * suspend/resume, registration), dmb-status.c and dmb-message.c.
 *
 * Glossary:
 *   cache    the fast device (SSD) that holds cached data and metadata
 *   origin   the slow device whose data is cached
 *   data offset
 *            where the origin's data starts: 0 for a raw origin, the
 *            superblock's data_offset when the origin carries a mainline
 *            bcache backing superblock (see core/format/origin.h)
 *   bypass   an I/O sent to the origin without touching the cache
 */
#ifndef DM_BCACHE_TARGET_H
#define DM_BCACHE_TARGET_H

#include <linux/device-mapper.h>
#include <linux/bio.h>
#include <linux/rwsem.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <linux/dm-io.h>

#include "dmb-options.h"
#include "dmb-stats.h"
#include "dmb-op.h"
#include "core/format/origin.h"
#include "core/check/check.h"
#include "core/set/set.h"

#define DM_MSG_PREFIX "bcache"

/* Enough for every option once, each with a value, plus a mode keyword. */
#define DMB_MAX_OPT_ARGS (2 * DMB_NR_OPTS)

/*
 * Metadata state, ordered by degradation (as dm-cache and dm-thin do).
 * RO is an index opened for a table loaded read-only: it serves what the
 * cache holds and writes nothing to either device, for as long as it
 * lives.  FAIL is entered when a metadata write fails.
 */
enum dmb_state {
	DMB_STATE_RW,
	DMB_STATE_RO,
	DMB_STATE_FAIL,
};

/*
 * Spans (dmb-span.c): the origin ranges that writes in flight cover, and
 * those that data on its way into the cache (a read miss's fill, a
 * write-through write) covers.  A write that starts marks every span it
 * overlaps contended; a contended span's data is not indexed (a write-
 * through's range is invalidated instead), so the cache never keeps data
 * older than what the origin holds or is about to hold.  A fill is not
 * even started while an overlapping write is in flight.
 *
 * Write-back copies (dmb-writeback.c) have spans too: one starts only
 * where no write is in flight, and a write that finds one is parked
 * until it ends (then deferred), so the copy of older data never reaches
 * the origin after the newer write does.
 */
enum dmb_span_kind {
	DMB_SPAN_FILL,			/* data on its way into the cache */
	DMB_SPAN_WRITE,			/* a user write */
	DMB_SPAN_WB,			/* dirty data on its way to the origin */
};

struct dmb_span {
	struct list_head node;
	sector_t start, end;
	u8 kind;			/* enum dmb_span_kind */
	bool contended;
	bool on;			/* in the index's list */
};

/* Cache pieces one write-through write may be spread over. */
#define DMB_MAX_PIECES		8

/* Largest read miss sent to the origin as one piece (and filled). */
#define DMB_FILL_MAX_SECTORS	2048

/* Per-bio state (ti->per_io_data_size). */
struct dmb_io {
	struct dmb_op op;
	struct dmb_cache *dc;
	struct bio *bio;
	struct list_head list;
	/* write-through: where the pieces of the bio go in the cache */
	u64 piece[DMB_MAX_PIECES];
	u32 piece_len[DMB_MAX_PIECES];
	u32 nr_pieces;
	struct bvec_iter iter;		/* read miss: the data in the bio */
	struct dmb_span span;		/* a write, or a miss to fill */
	unsigned int epoch;		/* of its cache I/O (cache_io) */
	u64 start_ns;			/* when its cache I/O was sent */
	sector_t origin_sector;		/* read hit: where to retry it */
	unsigned short bi_flags;	/* read hit: the bio's, to retry it */
	u32 flags;
	enum dmb_counter why;		/* a write: why not cached, or none */
	bool cache_error;		/* write-through: a cache piece failed */
	bool mapped;			/* between map and its end_io */
};

#define DMB_IO_CACHE		BIT(0)	/* counted in cache_io */
#define DMB_IO_FILL		BIT(1)	/* a miss to fill on completion */
#define DMB_IO_DIRTY		BIT(2)	/* a write-back write, to the cache only */
#define DMB_IO_DIRTY_HIT	BIT(3)	/* a hit on data only the cache holds */
#define DMB_IO_ORIGIN_FIRST	BIT(4)	/* to the origin, then invalidate */
#define DMB_IO_OVER_DIRTY	BIT(5)	/* a write-through write over dirty data */
#define DMB_IO_NO_WB		BIT(6)	/* mapped while write-back was off or draining */

/* A device the constructor reads and writes metadata on, over dm-io. */
struct dmb_meta_dev {
	struct dm_io_client *client;
	struct block_device *bdev;
	struct bch_meta_io io;
	/*
	 * Flushed before bdev when flush_first_due (dmb-meta-io.c): the
	 * cache's origin, once clean keys went into the index.
	 */
	struct block_device *flush_first;
	bool flush_first_due;
};

/*
 * Write-back (dmb-writeback.c): one worker per index copies dirty data to
 * the origin in origin order, at a rate a PI controller sets from how far
 * the dirty data is above its target, flat out when draining or idle.
 */
#define DMB_WB_PIECES		64	/* dirty pieces one batch copies */

struct dmb_writeback {
	struct delayed_work work;
	struct workqueue_struct *wq;
	u64 pos;			/* next origin sector to scan */
	bool pass_found;		/* dirty data seen since pos was 0 */
	u64 pass_seq;			/* ix->dirty_seq when the pass began */
	u64 clean_passes;		/* passes that found nothing dirty */
	/* tunables, copied from the active table (dmb_wb_tune()) */
	u32 percent;
	u64 rate_min;
	bool writeback_mode;
	bool cleaner;
	/* the controller */
	u64 rate;			/* sectors per second */
	s64 integral;
	unsigned long last_update;	/* jiffies */
	unsigned long last_io;		/* jiffies of the last user I/O */
	atomic_t drain;			/* flush messages waiting */
	bool stopped;			/* suspended or going away */
	atomic64_t written;		/* sectors written back */
	atomic64_t errors;		/* copies that failed */
	wait_queue_head_t wait;		/* flush messages */
	bool was_clean;			/* found nothing dirty last time */
	unsigned long start_at;		/* jiffies: writeback_delay ends */
	u32 delay;			/* writeback_delay, seconds */
	struct dm_io_client *client;
	struct block_device *origin;
	struct bch_key keys[DMB_WB_PIECES];
	struct dmb_span spans[DMB_WB_PIECES];	/* a run's, at its first piece */
	u32 run_len[DMB_WB_PIECES];	/* pieces in the run starting there */
	void *buf;			/* one run's data */
};

/*
 * The cache index (dmb-index.c): one per cache device, shared by the
 * tables that use it, so that a table reload (whose constructor runs
 * while the old table still serves I/O) takes over the live index rather
 * than reading a second copy from disk.
 *
 * index_lock is held for reading to look up and to allocate data space
 * (with alloc_lock), for writing to change the index; the map path only
 * ever try-locks it.
 */
struct dmb_index {
	struct list_head node;		/* in the list of open indexes */
	unsigned int users;
	spinlock_t tables_lock;		/* tables: see dmb-events.c */
	struct list_head tables;	/* struct dmb_cache, by ix_node */
	dev_t cache_dev, origin_dev;
	struct block_device *cache_bdev;
	sector_t data_offset;
	char name[BDEVNAME_SIZE];	/* the cache device, for messages */
	struct dmb_meta_dev meta;
	/* A backing origin's superblock, which records the attachment. */
	struct dmb_meta_dev origin_meta;
	struct bch_sb origin_sb;
	bool origin_backing;
	enum dmb_state state;
	bool needs_check;
	/*
	 * Failed without dirty data: the origin alone holds everything and
	 * the cache is marked untrusted (or, if its superblock could not be
	 * written, the log says it must be wiped before reuse), so a write
	 * needs no index change to stay visible.  Under work_mutex.
	 */
	bool origin_only;
	/* The failure is recorded in the cache superblock.  work_mutex. */
	bool failure_on_disk;

	struct bch_set set;
	bool set_open;
	bool started;			/* index_start() succeeded */
	u64 inode;			/* the origin's UUID slot */
	struct rw_semaphore index_lock;
	spinlock_t alloc_lock;		/* the allocator (core/alloc/alloc.h) */
	struct bch_key *jkeys;		/* inserted, not yet journalled */
	u32 nr_jkeys, cap_jkeys;
	u32 refills_since_gc;
	u64 sectors_since_gc;		/* indexed over since a pass began */
	bool gc_requested;		/* reclaim found nothing */
	bool reclaim_dry;		/* ... or too little: wait for gc */
	/* gc messages: requests made, and the last one a finished pass served */
	u64 gc_req, gc_done_req, gc_pass_req;
	wait_queue_head_t gc_wait;

	struct workqueue_struct *wq;	/* ordered: every index change */
	struct workqueue_struct *fill_wq;
	struct workqueue_struct *defer_wq;	/* deferred and retried bios */
	struct work_struct index_work;
	struct delayed_work journal_work;
	spinlock_t lock;		/* the lists below */
	struct list_head done_writes;	/* dmb_io: write-through finished */
	struct list_head fills;		/* struct dmb_fill: data in the cache */
	struct bio_list invalidate;	/* writes to invalidate, then send */
	struct bio_list flushes;
	struct bio_list deferred;	/* parked writes whose copy ended */
	struct work_struct defer_work;	/* on defer_wq */
	bool journal_due;
	bool refill_due;
	bool synced;			/* durable since the last suspend */
	bool quiet;			/* suspended: no reclaim, no gc pass */
	bool stopping;			/* being freed: no work re-queued */

	/*
	 * Data I/O to the cache in flight, counted in two epochs: a refill
	 * flips the epoch (index_lock exclusive) after raising gens, then
	 * waits only for the old epoch's I/O, which alone can address the
	 * reclaimed buckets; I/O started since goes on meanwhile.
	 */
	atomic_t cache_io[2];
	unsigned int io_epoch;		/* changed under index_lock (write) */
	struct mutex work_mutex;	/* one changer of the set at a time */
	wait_queue_head_t cache_io_wait;
	struct bio_set bs;
	spinlock_t span_lock;		/* the span list, parked */
	struct list_head spans;
	struct bio_list parked;		/* writes a write-back copy holds back */
	atomic_t latency_us[2];		/* cache reads, writes: moving average */
	atomic64_t cache_errors;	/* data I/O to the cache that failed */
	atomic64_t nr_deferred;		/* writes parked behind a write-back copy */
	atomic64_t lock_waits;		/* bios map waited for index_lock for */
	atomic_t fills_pending;		/* fills queued, not yet indexed or dropped */
	atomic_t fill_pages;		/* the pages they hold or will hold */
	struct bio_list retries;	/* failed hits, to read from the origin */
	u64 dirty_seq;			/* dirty keys inserted (work_mutex) */
	bool origin_dirty;		/* the backing superblock says dirty */
	struct dmb_writeback wb;
};

/* Sequential streams the bypass policy tracks (dmb-bypass.c). */
#define DMB_STREAMS		16

struct dmb_stream {
	sector_t end;			/* where its next I/O would start */
	u64 run;			/* sectors so far */
	unsigned long last;		/* jiffies of its last I/O */
};

struct dmb_cache {
	struct dm_target *ti;
	struct dm_dev *cache_dev;
	struct dm_dev *origin_dev;

	/* Option values and which of them the table line gave, in order. */
	u64 opt_val[DMB_NR_OPTS];
	u8 opt_order[DMB_NR_OPTS];
	unsigned int nr_opts_given;

	enum dmb_mode mode;		/* current; opt_val holds the table's */

	struct bch_origin_info origin_info;
	enum bch_origin_layout layout;
	sector_t data_offset;		/* origin sector of target sector 0 */
	unsigned int block_size;	/* sectors */

	/* The cache device: its superblock and what ctr found on it. */
	struct dmb_meta_dev cache_meta;
	struct dmb_meta_dev origin_meta;
	struct bch_sb cache_sb;
	bool formatted;			/* this ctr formatted the cache */
	bool read_only;			/* loaded read-only: writes nothing */

	struct dmb_stats stats;

	struct dmb_index *ix;		/* shared by every table on this cache */
	struct list_head ix_node;	/* in ix->tables */
	struct work_struct event_work;	/* raises this table's dm event */
	spinlock_t stream_lock;
	struct dmb_stream streams[DMB_STREAMS];
};

/* dmb-events.c */
void dmb_events_init(struct dmb_index *ix);
void dmb_events_attach(struct dmb_cache *dc);
void dmb_events_detach(struct dmb_cache *dc);
void dmb_table_changed(struct dmb_cache *dc);
void dmb_index_changed(struct dmb_index *ix);

/* dmb-ctr.c */
int dmb_ctr(struct dm_target *ti, unsigned int argc, char **argv);
void dmb_dtr(struct dm_target *ti);
bool dmb_opt_given(struct dmb_cache *dc, enum dmb_opt opt);

/* dmb-status.c */
void dmb_status(struct dm_target *ti, status_type_t type,
		unsigned int status_flags, char *result, unsigned int maxlen);

/* dmb-message.c */
int dmb_message(struct dm_target *ti, unsigned int argc, char **argv,
		char *result, unsigned int maxlen);

/* dmb-meta-io.c */
int dmb_dev_rw(struct dm_io_client *client, struct block_device *bdev,
	       blk_opf_t opf, u64 sector, void *buf, size_t len);
int dmb_meta_dev_init(struct dmb_meta_dev *m, struct block_device *bdev);
void dmb_meta_dev_exit(struct dmb_meta_dev *m);

/* dmb-cache-meta.c */
int dmb_cache_meta_open(struct dmb_cache *dc);
int dmb_cache_match_geometry(struct dmb_cache *dc);

/* dmb-index.c */
int dmb_index_init(void);
void dmb_index_exit(void);
int dmb_index_get(struct dmb_cache *dc);
void dmb_index_put(struct dmb_cache *dc);
int dmb_index_sync(struct dmb_index *ix);
void dmb_index_resume(struct dmb_index *ix);
int dmb_index_gc(struct dmb_index *ix);
void dmb_index_recount_dirty(struct dmb_index *ix);
void dmb_index_kick(struct dmb_index *ix);
u32 dmb_alloc_pieces(struct dmb_index *ix, u32 sectors, u64 *piece,
		     u32 *len, u32 *nr, bool dirty);
void dmb_index_write_done(struct dmb_op *op);
void dmb_index_queue_fill(struct dmb_index *ix, struct dmb_io *io);
unsigned int dmb_cache_io_start(struct dmb_index *ix, unsigned int n);
void dmb_cache_io_end(struct dmb_index *ix, unsigned int epoch);
void dmb_free_pieces(struct dmb_index *ix, const u64 *piece, const u32 *len,
		     u32 nr, bool dirty);
int dmb_index_clean(struct dmb_index *ix, const struct bch_key *keys, u32 n);
int dmb_index_origin_clean(struct dmb_index *ix, u64 seq);
int dmb_index_detach(struct dmb_index *ix, sector_t start, sector_t len,
		     bool force);

/* dmb-writeback.c */
int dmb_wb_init(struct dmb_index *ix);
void dmb_wb_exit(struct dmb_index *ix);
void dmb_wb_tune(struct dmb_index *ix, struct dmb_cache *dc);
void dmb_wb_start(struct dmb_index *ix);
void dmb_wb_stop(struct dmb_index *ix);
void dmb_wb_kick(struct dmb_index *ix);
int dmb_wb_flush(struct dmb_index *ix);
int dmb_wb_flush_suspended(struct dmb_index *ix);
bool dmb_wb_full(struct dmb_index *ix);

/* dmb-span.c */
bool dmb_span_write(struct dmb_index *ix, struct dmb_span *sp,
		    sector_t start, u32 sectors, struct bio *bio);
bool dmb_span_repark(struct dmb_index *ix, struct dmb_span *sp,
		     struct bio *bio);
bool dmb_span_writeback(struct dmb_index *ix, struct dmb_span *sp,
			sector_t start, u32 sectors);
bool dmb_span_fill(struct dmb_index *ix, struct dmb_span *sp,
		   sector_t start, u32 sectors);
void dmb_span_move(struct dmb_index *ix, struct dmb_span *from,
		   struct dmb_span *to);
bool dmb_span_end(struct dmb_index *ix, struct dmb_span *sp);

/* dmb-bypass.c */
enum dmb_counter dmb_bypass_why(struct dmb_cache *dc, sector_t sector,
				u32 sectors, bool write);
void dmb_bypass_count(struct dmb_cache *dc, bool write, enum dmb_counter why);
void dmb_note_latency(struct dmb_index *ix, bool write, u64 ns);

/* dmb-io.c */
int dmb_map(struct dm_target *ti, struct bio *bio);
void dmb_io_deferred(struct work_struct *work);
void dmb_io_defer_list(struct dmb_index *ix, struct bio_list *bios);
int dmb_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error);
void dmb_origin_then_invalidate(struct dmb_cache *dc, struct dmb_io *io,
				sector_t sector);

#endif
