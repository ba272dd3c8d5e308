// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_writeback: copy a cache's dirty data to its origin, offline.
 *
 *   bcache_writeback [options] CACHE ORIGIN
 *
 * The cache set is opened as the target opens it (core/set/set.h:
 * journal, prio chain and btree read, the journal replayed), the
 * origin's UUID slot is looked up by the origin layout rule the table
 * uses (core/format/origin.h), and the dirty pieces are found in origin
 * order by the walk the target's write-back worker makes
 * (bch_set_dirty_scan()).  Each piece is read from the cache and written
 * to the origin; after each batch the origin is flushed, and only then
 * are the copied pieces marked clean in the cache and journalled
 * (bch_set_clean_pieces(), the rule the worker follows), so an
 * interrupted run leaves a cache that a second run, or the target,
 * carries on from.  When nothing dirty is left, a backing origin's
 * superblock is marked clean, as the mainline driver marks it.
 *
 * A cache read that fails is tried again; a piece that still fails is
 * narrowed to the logical blocks that cannot be read, those are left
 * dirty in the cache, and their origin sectors are listed at the end.
 * An origin write or flush that fails stops the run (exit 2): what was
 * copied before it is marked clean if the origin still flushes, the
 * rest stays dirty.
 *
 * The cache must check clean (bcache_check; a torn journal tail is
 * tolerated): a damaged index could name the wrong data.  Nothing is
 * written before every dirty piece is known to lie inside ORIGIN.
 *
 * Exit codes: 0 every dirty sector copied (or none was dirty), 1
 * refused, or some dirty sectors could not be read (listed), 2 usage or
 * I/O error.
 */
#define _GNU_SOURCE			/* O_DIRECT */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "util/crc64.h"
#include "check/check.h"
#include "format/origin.h"
#include "set/set.h"
#include "devio.h"

#define PROG "bcache_writeback"

#define WB_PIECES	64		/* pieces one scan returns */
#define WB_LOOKUPS	4096		/* lookups one scan makes */
#define WB_CHUNK	2048		/* sectors one read and write move */
#define WB_BATCH	(64 << 11)	/* sectors copied between two flushes */
#define WB_STOP		1		/* copy_piece(): --stop-after reached */

static struct bch_dev cache, origin;
static struct bch_set set;
static struct bch_sb osb;		/* a backing origin's superblock */
static enum bch_origin_layout layout;
static int slot;
static u64 data_offset;			/* where the origin's data starts */

static struct {
	bool list, no_update;
	unsigned int retries;
	u64 stop_after;
	enum bch_origin_request request;
} opt = { .retries = 3 };

/* What the survey found, then what the copy did. */
static struct {
	u64 pieces, sectors, start, end;
	u64 copied, lost, lost_ranges;
	u64 lost_start, lost_len;	/* the range being merged */
	u64 next_report;
} st;

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] CACHE ORIGIN\n"
"Copy every dirty sector CACHE holds for ORIGIN to ORIGIN, offline, and\n"
"mark it clean in CACHE.  Neither device may be in use.\n"
"\n"
"  -l, --list                 print the dirty pieces (origin sector,\n"
"                             sectors, cache sector) and write nothing\n"
"  -n, --no-metadata-update   copy, but leave CACHE as it is (its data\n"
"                             stays dirty)\n"
"  -L, --origin-layout MODE   auto (default), raw or backing: the rule of\n"
"                             the table's origin_layout option\n"
"  -r, --retries N            read a failing cache block N more times\n"
"                             before giving it up (default 3)\n"
"  -s, --stop-after SECTORS   stop once this many dirty sectors are done\n"
"                             (a write-back in stages: the next run goes on)\n"
"      --cache-device CACHE   the same as the first operand\n"
"      --origin-device ORIGIN the same as the second operand\n"
BCH_CLI_COMMON_HELP
"\n"
"Sectors are the origin device's (a backing origin's data starts at its\n"
"data offset).  Exit status: 0 all copied, 1 refused or some dirty\n"
"sectors unreadable (listed), 2 usage or I/O error.\n");
}

static int refuse(const char *msg)
{
	bch_err("%s", msg);
	return BCH_EXIT_REFUSED;
}

/*
 * The origin layout, by the rule the table applies, and the UUID the
 * cache records the origin's data under.
 */
static int choose_origin(const struct bch_sb *csb, u8 uuid[16])
{
	struct bch_sb_disk *d = calloc(1, BCH_SB_BYTES);
	struct bch_origin_info info;
	const char *err;

	if (!d || bch_sb_read(&origin.io, d)) {
		free(d);
		bch_err("%s: cannot read sector 8", origin.path);
		return BCH_EXIT_USAGE;
	}
	bch_origin_probe(d, origin.sectors, origin.lbs, &info);
	free(d);
	err = bch_origin_choose(opt.request, &info, true, &layout,
				&data_offset);
	if (err) {
		bch_err("%s: %s", origin.path, err);
		return BCH_EXIT_REFUSED;
	}
	if (layout == BCH_LAYOUT_RAW) {
		bch_origin_raw_uuid(csb->set_uuid, uuid);
		return 0;
	}
	osb = info.sb;
	if (!bch_origin_attached(&osb, csb->set_uuid)) {
		bch_err("%s: its superblock does not record this cache set: what the cache holds for it is stale",
			origin.path);
		return BCH_EXIT_REFUSED;
	}
	memcpy(uuid, osb.uuid, 16);
	return 0;
}

/*
 * Walk the dirty pieces in origin order, calling @fn on each; the walk
 * the target's write-back worker makes.  0, or what @fn returned.
 */
static int walk_dirty(int (*fn)(const struct bch_key *k))
{
	struct bch_key keys[WB_PIECES];
	u64 pos = 0;
	u32 n, i;
	int r;

	while (pos < BCH_KEY_MAX_OFFSET) {
		n = bch_set_dirty_scan(&set, slot, &pos, BCH_KEY_MAX_OFFSET,
				       keys, WB_PIECES, WB_LOOKUPS);
		for (i = 0; i < n; i++) {
			r = fn(&keys[i]);
			if (r)
				return r;
		}
	}
	return 0;
}

static int survey(const struct bch_key *k)
{
	st.start = st.pieces ? min_t(u64, st.start, bch_key_start(k)) :
		   bch_key_start(k);
	st.pieces++;
	st.sectors += bch_key_size(k);
	st.end = max_t(u64, st.end, bch_key_offset(k));
	return 0;
}

static u64 left;

static int count_left(const struct bch_key *k)
{
	left += bch_key_size(k);
	return 0;
}

static int list_piece(const struct bch_key *k)
{
	bch_out("%llu %u %llu\n", bch_key_start(k), bch_key_size(k),
		bch_ptr_offset(k->ptr[0]));
	return 0;
}

static void lost_flush(void)
{
	if (!st.lost_len)
		return;
	bch_out("lost: origin sectors %llu-%llu (%llu sectors)\n",
		st.lost_start, st.lost_start + st.lost_len - 1, st.lost_len);
	st.lost_ranges++;
	st.lost_len = 0;
}

static void lost(u64 start, u64 len)
{
	if (st.lost_len && st.lost_start + st.lost_len == start) {
		st.lost_len += len;
	} else {
		lost_flush();
		st.lost_start = start;
		st.lost_len = len;
	}
	st.lost += len;
}

/* A cache read, past the page cache, tried opt.retries more times. */
static int read_cache(u64 sector, void *buf, u64 sectors)
{
	unsigned int i;

	for (i = 0; i <= opt.retries; i++)
		if (!bch_dev_read_direct(&cache, sector, buf, sectors * 512))
			return 0;
	return -EIO;
}

/* The cache sector holding origin sector @sector of piece @k. */
static u64 cache_sector(const struct bch_key *k, u64 sector)
{
	return bch_ptr_offset(k->ptr[0]) + sector - bch_key_start(k);
}

static u8 *buf;				/* WB_CHUNK sectors, aligned */

/* The copied runs of the batch, to be marked clean after the flush. */
static struct bch_key *done;
static u32 nr_done, cap_done;
static u64 batch_sectors;

static int done_add(const struct bch_key *k, u64 start, u64 n)
{
	struct bch_key piece = *k;

	if (nr_done == cap_done) {
		u32 cap = cap_done ? cap_done * 2 : 256;
		struct bch_key *p = realloc(done, cap * sizeof(*done));

		if (!p)
			return -ENOMEM;
		done = p;
		cap_done = cap;
	}
	bch_key_init(&piece, bch_key_inode(k), start + n, n, true);
	bch_key_add_ptr(&piece, bch_make_ptr(bch_ptr_dev(k->ptr[0]),
					     cache_sector(k, start),
					     bch_ptr_gen(k->ptr[0])));
	done[nr_done++] = piece;
	return 0;
}

/*
 * Flush the origin, then mark the batch's pieces clean where they still
 * hold the data that was copied, and journal the clean keys.
 */
static int batch_end(void)
{
	struct bch_key out[8], *keys = NULL;
	u32 i, j, m, nr = 0;
	u64 cleaned = 0;
	int r;

	r = origin.io.flush(origin.io.ctx);
	if (r || opt.no_update || !nr_done)
		goto out;
	keys = calloc((size_t)nr_done * ARRAY_SIZE(out), sizeof(*keys));
	if (!keys) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr_done && !r; i++) {
		m = bch_set_clean_pieces(&set, &done[i], out, ARRAY_SIZE(out));
		for (j = 0; j < m && !r; j++) {
			r = bch_set_insert(&set, &out[j]);
			if (!r) {
				keys[nr++] = out[j];
				cleaned += bch_key_size(&out[j]);
			}
		}
	}
	bch_alloc_cleaned(&set.a, cleaned);
	if (!r && nr)
		r = bch_set_journal(&set, keys, nr);
out:
	free(keys);
	nr_done = 0;
	batch_sectors = 0;
	return r;
}

static void progress(void)
{
	if (opt.list || st.copied + st.lost < st.next_report)
		return;
	bch_out("%llu of %llu dirty sectors done (%llu%%)\n",
		st.copied + st.lost, st.sectors,
		(st.copied + st.lost) * 100 / st.sectors);
	st.next_report += max_t(u64, st.sectors / 10, 1);
}

/*
 * Copy piece @k in chunks.  A chunk that cannot be read is narrowed to
 * the logical blocks that cannot: those are listed as lost and split the
 * piece, and each stretch around them that copied is queued to be
 * marked clean on its own.  0, or -errno when the origin refuses a
 * write.
 */
static int copy_piece(const struct bch_key *k)
{
	u64 s = bch_key_start(k), end = bch_key_offset(k), run = s, b, m;
	u64 blk = max_t(u64, cache.lbs / 512, 1);
	int r;

	for (; s < end; s += m) {
		m = min_t(u64, end - s, WB_CHUNK);
		if (!read_cache(cache_sector(k, s), buf, m)) {
			if (origin.io.write(origin.io.ctx, s, buf, m * 512))
				return -EIO;
			st.copied += m;
			progress();
			continue;
		}
		for (b = s; b < s + m; b += blk) {
			u64 n = min_t(u64, blk, s + m - b);

			if (read_cache(cache_sector(k, b), buf, n)) {
				if (b > run) {
					r = done_add(k, run, b - run);
					if (r)
						return r;
				}
				lost(b, n);
				run = b + n;
				continue;
			}
			if (origin.io.write(origin.io.ctx, b, buf, n * 512))
				return -EIO;
			st.copied += n;
		}
		progress();
	}
	if (end > run) {
		r = done_add(k, run, end - run);
		if (r)
			return r;
	}
	batch_sectors += bch_key_size(k);
	if (opt.stop_after && st.copied + st.lost >= opt.stop_after)
		return WB_STOP;
	return batch_sectors >= WB_BATCH ? batch_end() : 0;
}

static int open_devices(const char *cpath, const char *opath)
{
	unsigned int cflags = opt.list || opt.no_update ? 0 : BCH_OPEN_WRITE;
	struct stat st;
	int r;

	r = bch_dev_open(&cache, cpath, cflags);
	/* Before the second open, which the first's O_EXCL would refuse. */
	if (!r && !stat(opath, &st) && bch_same_file(&cache.st, &st)) {
		bch_err("CACHE and ORIGIN are the same device");
		return BCH_EXIT_USAGE;
	}
	if (!r)
		r = bch_dev_open(&origin, opath, opt.list ? 0 : BCH_OPEN_WRITE);
	return r;
}

/* The set opened and the origin's slot found: 0, or an exit code. */
static int open_set(void)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	u8 uuid[16];
	int r;

	if (bch_check(&cache.io, &o, NULL, &res)) {
		bch_err("%s: cannot read the cache", cache.path);
		return BCH_EXIT_USAGE;
	}
	if (res.blank)
		return refuse("CACHE is blank: it holds nothing");
	if (res.nr_damage || !res.synchronous)
		return refuse("the cache does not check clean (bcache_check lists the damage)");
	r = choose_origin(&res.sb, uuid);
	if (r)
		return r;
	r = bch_set_open(&set, &cache.io, &res.sb);
	if (r) {
		bch_err("%s: cannot open the cache set: %s", cache.path,
			strerror(-r));
		return BCH_EXIT_USAGE;
	}
	slot = bch_set_uuid_lookup(&set, uuid);
	if (slot == -ENOENT)
		return 0;
	if (slot < 0) {
		bch_err("%s: cannot read the UUID table: %s", cache.path,
			strerror(-slot));
		bch_set_close(&set);
		return BCH_EXIT_USAGE;
	}
	return 0;
}

/* Everything copied: a backing origin's superblock says clean again. */
static int origin_clean(void)
{
	if (layout != BCH_LAYOUT_BACKING ||
	    bch_sb_bdev_state(&osb) != BCH_BDEV_STATE_DIRTY)
		return 0;
	bch_origin_record(&osb, set.sb.set_uuid, BCH_BDEV_STATE_CLEAN);
	if (bch_sb_write(&origin.io, &osb) || origin.io.flush(origin.io.ctx))
		return -EIO;
	bch_out("%s: superblock marked clean\n", origin.path);
	return 0;
}

static int copy_all(void)
{
	int r;

	if (posix_memalign((void **)&buf, 4096, WB_CHUNK * 512))
		return -ENOMEM;
	st.next_report = max_t(u64, st.sectors / 10, 1);
	r = walk_dirty(copy_piece);
	if (r == WB_STOP)
		r = 0;
	/*
	 * After a failed origin write too: what the batch copied is marked
	 * clean if the origin still flushes.
	 */
	if (r != -ENOMEM)
		r = batch_end() ?: r;
	lost_flush();
	if (!r && !opt.no_update)
		r = bch_set_commit(&set);
	/* Clean only when a walk finds nothing dirty: --stop-after, losses. */
	if (!r && !opt.no_update) {
		left = 0;
		walk_dirty(count_left);
		if (!left)
			r = origin_clean();
	}
	free(buf);
	free(done);
	return r;
}

int main(int argc, char **argv)
{
	enum { OPT_CACHE = 256, OPT_ORIGIN };
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "no-metadata-update", no_argument, NULL, 'n' },
		{ "origin-layout", required_argument, NULL, 'L' },
		{ "retries", required_argument, NULL, 'r' },
		{ "stop-after", required_argument, NULL, 's' },
		{ "cache-device", required_argument, NULL, OPT_CACHE },
		{ "origin-device", required_argument, NULL, OPT_ORIGIN },
		BCH_CLI_COMMON_OPTS
	};
	const char *cpath = NULL, *opath = NULL;
	struct bch_cli cli;
	u64 n;
	int c, r, i;

	bch_cli_init(&cli, PROG, usage);
	while ((c = getopt_long(argc, argv, "lnL:r:s:" BCH_CLI_COMMON_SHORT,
				opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			opt.list = true;
			break;
		case 'n':
			opt.no_update = true;
			break;
		case 'L':
			i = bch_cli_choice("--origin-layout", optarg,
					   bch_origin_request_names,
					   BCH_NR_ORIGIN_REQUESTS);
			if (i < 0)
				return BCH_EXIT_USAGE;
			opt.request = i;
			break;
		case 'r':
			if (bch_cli_number("--retries", optarg, 0, 100, "tries",
					   &n))
				return BCH_EXIT_USAGE;
			opt.retries = n;
			break;
		case 's':
			if (bch_cli_number("--stop-after", optarg, 1,
					   BCH_KEY_MAX_OFFSET, "sectors",
					   &opt.stop_after))
				return BCH_EXIT_USAGE;
			break;
		case OPT_CACHE:
			cpath = optarg;
			break;
		case OPT_ORIGIN:
			opath = optarg;
			break;
		default:
			r = bch_cli_common(&cli, c);
			if (r >= 0)
				return r;
		}
	}
	n = !cpath + !opath;
	r = bch_cli_operands(&cli, argc - optind, n, n,
			     "operands: CACHE ORIGIN (or --cache-device and --origin-device)");
	if (r >= 0)
		return r;
	if (!cpath)
		cpath = argv[optind++];
	if (!opath)
		opath = argv[optind++];

	bch_crc64_init();
	r = open_devices(cpath, opath);
	if (!r)
		r = open_set();
	if (r)
		return r;
	if (slot < 0) {
		bch_out("%s: the cache holds nothing for it\n", origin.path);
		r = opt.list || opt.no_update ? 0 : origin_clean();
		bch_set_close(&set);
		return r ? BCH_EXIT_USAGE : 0;
	}
	r = walk_dirty(survey);
	if (!r && st.pieces &&
	    (st.end > origin.sectors || st.start < data_offset)) {
		bch_err("%s: its data is sectors %llu-%llu, but the cache has dirty data in %llu-%llu: the wrong origin?",
			origin.path, data_offset, origin.sectors - 1, st.start,
			st.end - 1);
		bch_set_close(&set);
		return BCH_EXIT_REFUSED;
	}
	bch_out("%s: %llu dirty sectors in %llu pieces (slot %d, %s origin)\n",
		cache.path, st.sectors, st.pieces, slot,
		bch_origin_layout_name(layout));
	if (opt.list)
		r = walk_dirty(list_piece);
	else if (st.sectors)
		r = copy_all();
	else if (!opt.no_update)
		r = origin_clean();
	bch_set_close(&set);
	if (r) {
		bch_err("write-back stopped: %s%s", strerror(-r),
			opt.no_update ? "" :
			" (what the origin flushed before is marked clean)");
		return BCH_EXIT_USAGE;
	}
	if (opt.list)
		return 0;
	bch_out("%llu sectors copied to %s%s\n", st.copied, origin.path,
		opt.no_update ? " (the cache left as it was)" :
		st.copied + st.lost < st.sectors ? " (--stop-after: the rest stays dirty)" : "");
	if (st.lost) {
		bch_err("%llu dirty sectors in %llu ranges could not be read from the cache; they stay dirty in it",
			st.lost, st.lost_ranges);
		return BCH_EXIT_REFUSED;
	}
	return 0;
}
