// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_repair: rebuild a damaged cache's metadata, offline.
 *
 *   bcache_repair [options] -i INPUT -o OUTPUT
 *   bcache_repair [options] --in-place --undo-file UNDO DEVICE
 *   bcache_repair --rollback UNDO DEVICE
 *
 * The first form writes a repaired copy and never writes INPUT
 * (thin-provisioning-tools' cache_repair convention); the second repairs
 * DEVICE itself after saving every block it overwrites to UNDO, which
 * the third writes back.
 *
 * What the cache still proves is salvaged (core/repair/salvage.h: the
 * newest valid journal entry's root, prio chain and UUID table, every
 * node that verifies, the journal's keys) and written as a fresh set
 * (core/repair/rebuild.h), the live data copied (or, in place, read) on
 * the way: unreadable dirty data, the ranges of damaged nodes and
 * missing journal entries are what is lost, and it is listed.  The
 * result must then check clean, or the tool says so and fails.
 *
 * A cache that checks clean is not rebuilt: in place nothing is
 * written, and the copy is a plain copy, so repairing a repaired cache
 * changes nothing.
 *
 * Exit codes: 0 repaired, nothing lost; 1 repaired, losses listed;
 * 2 usage, a device in use, or an I/O error writing; 3 nothing usable
 * (no valid superblock, journal entry or prio chain).
 */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "util/crc64.h"
#include "check/check.h"
#include "format/uuid.h"
#include "repair/rebuild.h"
#include "devio.h"

#define PROG "bcache_repair"

#define EXIT_LOST	1
#define EXIT_NOTHING	3
#define CHUNK		2048		/* sectors one data read moves */
#define UNDO_MAGIC	"DMBUNDO1"
#define UNDO_REC	0x5245434f444e55ULL	/* "UNDOREC" */
#define UNDO_DONE	0x454e4f444f444e55ULL	/* "UNDODONE" */

static struct bch_dev in, out;
static struct {
	const char *input, *output, *undo, *rollback;
	bool in_place, dry_run, force;
	struct bch_salvage_given given;
} opt;

/*
 * Reads of the damaged device.  What fails reads as zeroes for the
 * checker, which then reports damage where the walk needs it
 * (check_io); the salvage is told besides (in_io: -EIO after the zeroes),
 * so that an unreadable table or node counts as lost, never as an empty
 * one.  The journal or prio chain failing to read then leaves nothing
 * usable rather than an older state.
 */
static u64 bad_meta_sectors;

/*
 * Read @sectors at @sector of @d into @buf; if that fails, logical block
 * by logical block, each one that fails zeroed and handed to @bad (its
 * sector and length).  -EIO when any block failed.  The metadata reads
 * and the data reads both go through here.
 */
static int read_by_block(struct bch_dev *d, u64 sector, u8 *buf, u64 sectors,
			 void (*bad)(void *ctx, u64 sector, u64 n), void *ctx)
{
	u64 lb = max_t(u64, d->lbs / 512, 1), i;
	int r = 0;

	if (!bch_dev_read_direct(d, sector, buf, sectors * 512))
		return 0;
	for (i = 0; i < sectors; i += lb) {
		u64 n = min_t(u64, lb, sectors - i);

		if (!bch_dev_read_direct(d, sector + i, buf + i * 512, n * 512))
			continue;
		memset(buf + i * 512, 0, n * 512);
		bad(ctx, sector + i, n);
		r = -EIO;
	}
	return r;
}

static void meta_bad(void *ctx, u64 sector, u64 n)
{
	struct bch_dev *d = ctx;

	if (!bad_meta_sectors)
		bch_err("%s: read error at sector %llu", d->path, sector);
	bad_meta_sectors += n;
}

static int zero_fill_read(struct bch_dev *d, u64 sector, void *buf, size_t len)
{
	return read_by_block(d, sector, buf, DIV_ROUND_UP(len, 512), meta_bad,
			     d);
}

static int check_read(void *ctx, u64 sector, void *buf, size_t len)
{
	zero_fill_read(ctx, sector, buf, len);
	return 0;
}

static int salvage_read(void *ctx, u64 sector, void *buf, size_t len)
{
	return zero_fill_read(ctx, sector, buf, len);
}

static struct bch_meta_io check_io, in_io;

/*
 * In place, every write goes through here: the blocks it overwrites are
 * appended to the undo file, and the undo file made durable, first.
 */
static int undo_fd = -1;
static u64 undo_records;
static int (*device_write)(void *ctx, u64 sector, const void *buf, size_t len);

static int undo_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	struct bch_dev *d = ctx;
	u64 hdr[3] = { UNDO_REC, sector, len };
	void *old = malloc(len);
	int r = -EIO;

	if (!old)
		return -ENOMEM;
	if (pread(d->fd, old, len, (off_t)(sector * 512)) == (ssize_t)len &&
	    write(undo_fd, hdr, sizeof(hdr)) == sizeof(hdr) &&
	    write(undo_fd, old, len) == (ssize_t)len && !fdatasync(undo_fd)) {
		undo_records++;
		r = device_write(d, sector, buf, len);
	} else {
		bch_err("%s: cannot save sectors %llu+%zu to the undo file: %s",
			d->path, sector, len / 512, strerror(errno));
	}
	free(old);
	return r;
}

static int dev_flush(void *ctx)
{
	struct bch_dev *d = ctx;

	return d->io.flush ? d->io.flush(d) : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] -i INPUT -o OUTPUT\n"
"       " PROG " [options] --in-place --undo-file UNDO DEVICE\n"
"       " PROG " --rollback UNDO DEVICE\n"
"Rebuild the metadata of a damaged bcache cache device from what it still\n"
"proves, keeping all data that still reads back, and list what is lost.\n"
"\n"
"  -i, --input INPUT        the damaged cache (never written)\n"
"  -o, --output OUTPUT      where the repaired copy goes: a block device or\n"
"                           an image file (created if missing) at least\n"
"                           as large as INPUT\n"
"      --in-place           repair DEVICE itself ...\n"
"      --undo-file UNDO     ... saving every block it overwrites to UNDO\n"
"                           (a new file) first\n"
"      --rollback UNDO      write the blocks UNDO saved back to DEVICE\n"
"  -n, --dry-run            report what would be saved and lost; write\n"
"                           nothing\n"
"      --force              write OUTPUT even if it holds a signature\n"
"      --prio-bucket N      read the prio chain from bucket N, not from the\n"
"                           bucket the journal names or the scan finds\n"
"      --uuid-bucket N      with the journal lost: take the UUID table in\n"
"                           bucket N, not the one the scan finds\n"
BCH_CLI_COMMON_HELP
"\n"
"Lost ranges are printed as 'lost: slot N (UUID) sectors A-B: why', in\n"
"the sectors of the origin's data.  Exit status: 0 repaired, nothing\n"
"lost; 1 repaired, losses listed; 2 usage or I/O error; 3 nothing\n"
"usable (no valid superblock, journal entry or prio chain).\n");
}

static void note(void *ctx, const char *msg)
{
	(void)ctx;
	bch_out("salvage: %s\n", msg);
}

/* Copy (or, in place, read) a live extent; report what did not read. */
static u8 *data_buf;
static u64 copied;

/* The unreadable runs of one extent, in origin sectors, merged. */
struct bad_runs {
	struct bch_range *r;
	int n;
	u64 delta;		/* origin sector less cache sector */
};

static void data_bad(void *ctx, u64 sector, u64 n)
{
	struct bad_runs *b = ctx;
	struct bch_range *last = b->n ? &b->r[b->n - 1] : NULL;
	u64 start = sector + b->delta;

	if (last && last->end == start)
		last->end += n;
	else if (b->n < BCH_REBUILD_MAX_BAD)
		b->r[b->n++] = (struct bch_range){ start, start + n };
	else
		last->end = start + n;
}

static int data_hook(void *ctx, const struct bch_key *k, struct bch_range *bad)
{
	u64 at = bch_ptr_offset(k->ptr[0]), left = bch_key_size(k);
	/* Unsigned wrap-around keeps the sum right when start < at. */
	struct bad_runs runs = { bad, 0, bch_key_start(k) - at };

	(void)ctx;
	while (left) {
		u64 n = min_t(u64, left, CHUNK);

		read_by_block(&in, at, data_buf, n, data_bad, &runs);
		if (!opt.in_place &&
		    out.io.write(&out, at, data_buf, n * 512))
			return -EIO;
		copied += n;
		at += n;
		left -= n;
	}
	return runs.n;
}

static const char *slot_uuid(const struct bch_salvage *sv, u64 inode,
			     char *buf)
{
	const struct bch_uuid_entry_disk *t = sv->uuids;
	u32 nr = sv->g.meta_bucket_bytes / sizeof(*t);

	/* A legacy table's slots are half the size: convert a copy. */
	if (sv->jset_version < 1 || inode >= nr || !t) {
		strcpy(buf, "?");
		return buf;
	}
	bch_uuid_unparse(t[inode].uuid, buf);
	return buf;
}

static int report(const struct bch_salvage *sv)
{
	char uuid[40], end[24];
	u32 i;

	for (i = 0; i < sv->nr_lost; i++) {
		const struct bch_lost *l = &sv->lost[i];

		if (l->end == BCH_LOST_TO_END)
			strcpy(end, "end");
		else
			snprintf(end, sizeof(end), "%llu", l->end - 1);
		bch_out("lost: slot %llu (%s) sectors %llu-%s: %s\n", l->inode,
			slot_uuid(sv, l->inode, uuid), l->start, end, l->why);
	}
	if (sv->journal_missing)
		bch_out("lost: the writes logged in %llu missing journal entries (their ranges are unknown)\n",
			sv->journal_missing);
	if (sv->journal_cut)
		bch_out("lost: the writes logged after a key that does not decode, in %u journal entries (their ranges are unknown)\n",
			sv->journal_cut);
	return sv->nr_lost || sv->journal_missing || sv->journal_cut ?
	       EXIT_LOST : 0;
}

/* The input checked: 0 damaged, 1 clean (nothing to do), else exit code. */
static int check_input(struct bch_check_result *res)
{
	struct bch_check_opts o = { 0 };

	if (bch_check(&check_io, &o, NULL, res)) {
		bch_err("%s: cannot read it", in.path);
		return BCH_EXIT_USAGE;
	}
	if (res->blank) {
		bch_err("%s: blank: there is nothing to repair", in.path);
		return EXIT_NOTHING;
	}
	if (res->damage[BCH_DMG_SUPERBLOCK]) {
		bch_err("%s: the superblock is damaged; rebuilding it is not supported: nothing usable",
			in.path);
		return EXIT_NOTHING;
	}
	if (!res->nr_damage && !res->needs_check && !bad_meta_sectors) {
		bch_out("%s: checks clean: nothing to repair\n", in.path);
		return 1;
	}
	if (bad_meta_sectors)
		bch_out("%s: %llu metadata sectors do not read\n", in.path,
			bad_meta_sectors);
	bch_out("%s: %u findings; salvaging\n", in.path, res->nr_damage);
	return 0;
}

/* OUTPUT, created as a file if it does not exist, and claimed. */
static int open_output(void)
{
	struct stat st;
	int fd, r;

	if (!stat(opt.output, &st) && bch_same_file(&in.st, &st)) {
		bch_err("INPUT and OUTPUT are the same device (use --in-place)");
		return BCH_EXIT_USAGE;
	}
	fd = open(opt.output, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 && errno != EISDIR) {
		bch_err("%s: %s", opt.output, strerror(errno));
		return BCH_EXIT_USAGE;
	}
	if (fd >= 0) {
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    (u64)st.st_size < in.sectors * 512 &&
		    ftruncate(fd, (off_t)(in.sectors * 512)))
			bch_err("%s: cannot extend it: %s", opt.output,
				strerror(errno));
		close(fd);
	}
	r = bch_dev_open(&out, opt.output, BCH_OPEN_WRITE);
	if (r)
		return BCH_EXIT_USAGE;
	if (out.sectors < in.sectors) {
		bch_err("%s: %llu sectors, smaller than INPUT's %llu",
			out.path, out.sectors, in.sectors);
		return BCH_EXIT_USAGE;
	}
	return bch_dev_claim(&out, opt.force, false) ? BCH_EXIT_USAGE : 0;
}

static bool all_zero(const u8 *p, size_t len)
{
	return !p[0] && !memcmp(p, p + 1, len - 1);
}

/*
 * A clean input's copy: every sector, as is.  An image file is emptied
 * first and its zero chunks left as holes.  COPY_UNREADABLE when part of
 * the input does not read: a copy would then map zeroes as cached data,
 * so the caller rebuilds instead, checking every extent's data.
 */
#define COPY_UNREADABLE	(-1)

static int plain_copy(void)
{
	off_t size = (off_t)(out.sectors * 512);
	bool holes = out.is_file && !ftruncate(out.fd, 0) &&
		     !ftruncate(out.fd, size);
	u64 at, n;

	for (at = 0; at < in.sectors; at += n) {
		n = min_t(u64, CHUNK, in.sectors - at);
		if (bch_dev_read_direct(&in, at, data_buf, n * 512)) {
			bch_out("%s: sectors %llu-%llu do not read: rebuilding instead of copying\n",
				in.path, at, at + n - 1);
			return COPY_UNREADABLE;
		}
		if (holes && all_zero(data_buf, n * 512))
			continue;
		if (out.io.write(&out, at, data_buf, n * 512)) {
			bch_err("copy failed at sector %llu", at);
			return BCH_EXIT_USAGE;
		}
	}
	return dev_flush(&out) ? BCH_EXIT_USAGE : 0;
}

/* The new file's directory entry made durable too. */
static int sync_dir(const char *path)
{
	char *copy = strdup(path), *slash;
	int fd, r;

	if (!copy)
		return -1;
	slash = strrchr(copy, '/');
	if (slash)
		*(slash == copy ? slash + 1 : slash) = 0;
	fd = open(slash ? copy : ".", O_RDONLY | O_DIRECTORY);
	r = fd < 0 || fsync(fd) ? -1 : 0;
	if (fd >= 0)
		close(fd);
	free(copy);
	return r;
}

static int open_undo(void)
{
	char hdr[32] = UNDO_MAGIC;

	undo_fd = open(opt.undo, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (undo_fd < 0) {
		bch_err("%s: %s (the undo file must be new)", opt.undo,
			strerror(errno));
		return BCH_EXIT_USAGE;
	}
	memcpy(hdr + 8, &in.sectors, 8);
	if (write(undo_fd, hdr, sizeof(hdr)) != sizeof(hdr) ||
	    fdatasync(undo_fd) || sync_dir(opt.undo)) {
		bch_err("%s: %s", opt.undo, strerror(errno));
		return BCH_EXIT_USAGE;
	}
	return 0;
}

/*
 * The last record: the newest journal seq the repair left, so a rollback
 * can tell whether the repaired cache has been used since.
 */
static int undo_done(u64 seq)
{
	u64 rec[3] = { UNDO_DONE, seq, 0 };

	return write(undo_fd, rec, sizeof(rec)) == sizeof(rec) &&
	       !fdatasync(undo_fd) ? 0 : -EIO;
}

/* Write the saved blocks back, newest record first, so the oldest wins. */
static int rollback(const char *dev)
{
	struct { u64 magic, sector, len; } rec;
	char hdr[32];
	off_t *pos = NULL;
	struct stat st;
	u64 nr = 0, cap = 0, sectors, i, done_seq = 0;
	void *buf = NULL;
	bool done = false;
	int fd, r;

	fd = open(opt.rollback, O_RDONLY);
	if (fd < 0 || read(fd, hdr, sizeof(hdr)) != sizeof(hdr) ||
	    memcmp(hdr, UNDO_MAGIC, 8)) {
		bch_err("%s: not an undo file of " PROG, opt.rollback);
		return BCH_EXIT_USAGE;
	}
	r = bch_dev_open(&in, dev, BCH_OPEN_WRITE);
	if (r)
		return BCH_EXIT_USAGE;
	if (fstat(fd, &st)) {
		bch_err("%s: %s", opt.rollback, strerror(errno));
		return BCH_EXIT_USAGE;
	}
	r = BCH_EXIT_USAGE;
	memcpy(&sectors, hdr + 8, 8);
	if (sectors != in.sectors) {
		bch_err("%s: %llu sectors, but the undo file was made on a device of %llu",
			dev, in.sectors, sectors);
		return BCH_EXIT_USAGE;
	}
	for (;;) {
		off_t at = lseek(fd, 0, SEEK_CUR);
		ssize_t got = read(fd, &rec, sizeof(rec));

		if (!got)
			break;
		if (got == sizeof(rec) && rec.magic == UNDO_DONE &&
		    at + (off_t)sizeof(rec) == st.st_size) {
			done = true;
			done_seq = rec.sector;
			break;
		}
		/*
		 * Only the last record may be torn (the repair stopped while
		 * writing it, before the block it saves was written); one
		 * damaged before the end means the file cannot be trusted.
		 */
		if (got != sizeof(rec) || (rec.magic == UNDO_REC &&
		    at + (off_t)(sizeof(rec) + rec.len) > st.st_size)) {
			bch_out("%s: the last record is torn: its block was not written\n",
				opt.rollback);
			break;
		}
		if (rec.magic != UNDO_REC || rec.len % 512 ||
		    rec.sector * 512 + rec.len > in.sectors * 512 ||
		    lseek(fd, (off_t)rec.len, SEEK_CUR) < 0) {
			bch_err("%s: record %llu is damaged: nothing written back",
				opt.rollback, nr);
			goto out;
		}
		if (nr == cap) {
			off_t *more = realloc(pos, (cap ? cap * 2 : 64) *
					      sizeof(*pos));

			if (!more)
				goto out;
			pos = more;
			cap = cap ? cap * 2 : 64;
		}
		pos[nr++] = at;
	}
	if (done && !opt.force) {
		struct bch_check_result res;

		if (bch_check(&in.io, &(struct bch_check_opts){ 0 }, NULL, &res) ||
		    res.newest_seq != done_seq) {
			bch_err("%s: the repaired cache has been used since (journal seq %llu, the repair left %llu): rolling back would pair the old index with newer data; --force to do it anyway",
				dev, res.newest_seq, done_seq);
			goto out;
		}
	}
	for (i = nr; i-- > 0;) {
		void *more = NULL;

		if (pread(fd, &rec, sizeof(rec), pos[i]) != sizeof(rec) ||
		    !(more = realloc(buf, rec.len)) ||
		    pread(fd, more, rec.len, pos[i] + sizeof(rec)) !=
		    (ssize_t)rec.len ||
		    in.io.write(&in, rec.sector, more, rec.len)) {
			bch_err("%s: cannot write back record %llu", dev, i);
			if (more)
				buf = more;
			goto out;
		}
		buf = more;
	}
	if (!dev_flush(&in)) {
		bch_out("%s: %llu saved blocks written back\n", dev, nr);
		r = 0;
	}
out:
	free(buf);
	free(pos);
	close(fd);
	return r;
}

static int repair(void)
{
	struct bch_rebuild_ops ops = { .data = data_hook };
	struct bch_check_result res;
	struct bch_rebuild_result rb;
	struct bch_meta_io *dst;
	struct bch_salvage sv;
	int r, lost;

	r = check_input(&res);
	if (r > 1)
		return r;
	if (r == 1) {
		if (opt.given.prio || opt.given.uuids)
			bch_out("the buckets given are not used: nothing to repair\n");
		if (opt.in_place || opt.dry_run)
			return 0;
		r = open_output();
		if (!r)
			r = plain_copy();
		if (r != COPY_UNREADABLE)
			return r;
	}
	r = bch_salvage_read_given(&sv, &in_io, &res.sb, &opt.given, note,
				   NULL);
	if (r == -ENODATA) {
		bch_err("%s: nothing usable is left", in.path);
		return EXIT_NOTHING;
	}
	if (r == -EINVAL) {
		bch_err("%s: a bucket given cannot be used here (see above)",
			in.path);
		return BCH_EXIT_USAGE;
	}
	if (r) {
		bch_err("%s: salvage failed: %s", in.path, strerror(-r));
		return BCH_EXIT_USAGE;
	}
	bch_out("salvaged: %u keys from %llu btree nodes (%llu damaged), %u from the journal\n",
		sv.tree_keys, sv.nodes, sv.nodes_damaged,
		sv.nr_keys - sv.tree_keys);
	if (opt.dry_run) {
		lost = report(&sv);
		bch_salvage_free(&sv);
		return lost;
	}
	if (!opt.in_place) {
		r = out.path ? 0 : open_output();
		if (r) {
			bch_salvage_free(&sv);
			return r;
		}
		dst = &out.io;
	} else {
		r = open_undo();
		if (r) {
			bch_salvage_free(&sv);
			return r;
		}
		device_write = in.io.write;
		in.io.write = undo_write;
		dst = &in.io;
	}
	/*
	 * In place, the device says needs_check until the rebuild is done:
	 * the target refuses it meanwhile (the old journal is already gone
	 * once the base is written, and the new tree not yet there).
	 */
	r = 0;
	if (opt.in_place) {
		struct bch_sb held = sv.sb;

		held.flags |= BCH_CACHE_NEEDS_CHECK;
		r = bch_sb_write(dst, &held) ?: dev_flush(dst->ctx);
	}
	if (!r)
		r = bch_rebuild_write(&sv, dst, &ops, &rb);
	sv.sb.flags &= ~BCH_CACHE_NEEDS_CHECK;
	if (!r)
		r = bch_sb_write(dst, &sv.sb);
	if (!r)
		r = dev_flush(dst->ctx);
	if (r) {
		bch_err("writing the repaired cache failed: %s%s", strerror(-r),
			opt.in_place ? " (--rollback with the undo file restores the device)" : "");
		bch_salvage_free(&sv);
		return BCH_EXIT_USAGE;
	}
	bch_out("written: %llu live extents, %llu sectors (%llu dirty), %llu btree nodes; %llu sectors unreadable\n",
		rb.keys, rb.sectors, rb.dirty_sectors, rb.nodes, rb.unreadable);
	lost = report(&sv);
	bch_salvage_free(&sv);
	r = bch_check(dst, &(struct bch_check_opts){ 0 }, NULL, &res);
	if (r || res.nr_damage) {
		bch_err("the repaired cache does not check clean (%u findings): a bug, please report it",
			res.nr_damage);
		return BCH_EXIT_USAGE;
	}
	if (opt.in_place && undo_done(res.newest_seq)) {
		bch_err("%s: %s", opt.undo, strerror(errno));
		return BCH_EXIT_USAGE;
	}
	return lost;
}

int main(int argc, char **argv)
{
	enum {
		OPT_IN_PLACE = 256, OPT_UNDO, OPT_ROLLBACK, OPT_FORCE,
		OPT_PRIO, OPT_UUIDS,
	};
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "in-place", no_argument, NULL, OPT_IN_PLACE },
		{ "undo-file", required_argument, NULL, OPT_UNDO },
		{ "rollback", required_argument, NULL, OPT_ROLLBACK },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "prio-bucket", required_argument, NULL, OPT_PRIO },
		{ "uuid-bucket", required_argument, NULL, OPT_UUIDS },
		BCH_CLI_COMMON_OPTS
	};
	struct bch_cli cli;
	int c, r, want;

	bch_cli_init(&cli, PROG, usage);
	while ((c = getopt_long(argc, argv, "i:o:n" BCH_CLI_COMMON_SHORT,
				opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			opt.input = optarg;
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'n':
			opt.dry_run = true;
			break;
		case OPT_IN_PLACE:
			opt.in_place = true;
			break;
		case OPT_UNDO:
			opt.undo = optarg;
			break;
		case OPT_ROLLBACK:
			opt.rollback = optarg;
			break;
		case OPT_FORCE:
			opt.force = true;
			break;
		case OPT_PRIO:
			if (bch_cli_number("--prio-bucket", optarg, 1, ~0ULL,
					   "buckets", &opt.given.prio_bucket))
				return BCH_EXIT_USAGE;
			opt.given.prio = true;
			break;
		case OPT_UUIDS:
			if (bch_cli_number("--uuid-bucket", optarg, 1, ~0ULL,
					   "buckets", &opt.given.uuid_bucket))
				return BCH_EXIT_USAGE;
			opt.given.uuids = true;
			break;
		default:
			r = bch_cli_common(&cli, c);
			if (r >= 0)
				return r;
		}
	}
	want = opt.rollback || opt.in_place ? 1 : 0;
	r = bch_cli_operands(&cli, argc - optind, want, want,
			     want ? "operand: DEVICE" :
			     "no operands: INPUT and OUTPUT are -i and -o");
	if (r >= 0)
		return r;
	bch_crc64_init();
	if (opt.rollback) {
		if (opt.in_place || opt.input || opt.output || opt.undo ||
		    opt.given.prio || opt.given.uuids) {
			bch_err("--rollback takes only an undo file and DEVICE");
			return BCH_EXIT_USAGE;
		}
		return rollback(argv[optind]);
	}
	if (opt.in_place) {
		if (opt.input || opt.output) {
			bch_err("--in-place repairs DEVICE: no -i or -o");
			return BCH_EXIT_USAGE;
		}
		if (!opt.undo && !opt.dry_run) {
			bch_err("--in-place needs --undo-file UNDO (a new file for the blocks it overwrites)");
			return BCH_EXIT_USAGE;
		}
		opt.input = argv[optind];
	} else if (!opt.input || (!opt.output && !opt.dry_run)) {
		bch_err("missing -i INPUT and -o OUTPUT: both are needed (or --in-place DEVICE)");
		return BCH_EXIT_USAGE;
	} else if (opt.undo) {
		bch_err("--undo-file goes with --in-place");
		return BCH_EXIT_USAGE;
	}

	r = bch_dev_open(&in, opt.input,
			 opt.in_place && !opt.dry_run ? BCH_OPEN_WRITE : 0);
	if (r)
		return BCH_EXIT_USAGE;
	in_io = in.io;
	in_io.read = salvage_read;
	in_io.write = NULL;		/* INPUT is written through in.io only */
	in_io.ctx = &in;
	check_io = in_io;
	check_io.read = check_read;
	data_buf = aligned_alloc(4096, CHUNK * 512);
	if (!data_buf)
		return BCH_EXIT_USAGE;
	r = repair();
	free(data_buf);
	if (undo_fd >= 0) {
		close(undo_fd);
		bch_out("%s: %llu blocks saved\n", opt.undo, undo_records);
	}
	return r;
}
