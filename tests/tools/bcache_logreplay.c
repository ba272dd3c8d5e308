// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_logreplay: replay a dm-log-writes log onto a device, one flush
 * point at a time, so a test can look at every state the logged device
 * could have been left in by a power cut.
 *
 *   bcache_logreplay info LOG
 *   bcache_logreplay list LOG
 *   bcache_logreplay replay LOG DEV FROM TO_FLUSH
 *
 * info: checks the whole log and prints "key value" lines: entries,
 * writes, write_sectors, flushes, fua, discards, marks, metadata,
 * log_sectors (used), log_size, sectorsize, closed (1 if the log ends
 * with the kernel's end mark), then "mark INDEX TEXT" for each mark.
 *
 * list: one line per entry: index, log sector, flags, sector,
 * nr_sectors (and a mark's text), for debugging a failing point.
 *
 * replay: applies entries onto DEV, starting at position FROM, up to
 * flush point TO_FLUSH (1 is the log's first flush entry; "end" means
 * every entry), and prints the position reached as ENTRY:SECTOR:FLUSHES:
 * the index of the next entry to apply, its log sector, and how many
 * flush entries lie before it.  FROM is 0 (the log's start) or a
 * position an earlier replay printed, so a test steps from point to
 * point without rescanning the log; DEV must then hold what that replay
 * left.  A flush point is the state when that flush completed: every
 * entry before the flush entry, and the entry itself unless it carries
 * data without FUA (data after a preflush is not durable when the flush
 * completes; dm core sends such a bio's flush and data apart before any
 * target sees them, log-writes included, but the rule costs nothing).  Writes to DEV are buffered and synced
 * (fsync) before the position is printed.
 *
 * Discards are replayed as zeroes: what a discarded range reads back as
 * is undefined, and zeroes are the least the device may return, so a
 * reader that relies on discarded data fails on the replay rather than
 * being saved by stale bytes.  (Nothing dm-bcache writes is discarded
 * today; the rule is for completeness.)
 *
 * Exit codes: 0 done, 1 the log is bad, does not fit DEV or ends before
 * TO_FLUSH, 2 usage or I/O error.
 *
 * The log format, as drivers/md/dm-log-writes.c writes it (read from the
 * 6.1 source; 6.12's logs replay the same way).  Documentation/admin-
 * guide/device-mapper/log-writes.rst describes the ordering but not the
 * layout, and the magic is the source's 7-byte value below, not the
 * 0x6A736677736A7573 sometimes quoted:
 *
 *   The log device is addressed in 512-byte sectors; every field is
 *   little-endian.  Sector 0 holds the super block, padded to one
 *   "sectorsize" block:
 *
 *	struct log_write_super {
 *		__le64 magic;		0x6a736677736872
 *		__le64 version;		1
 *		__le64 nr_entries;
 *		__le32 sectorsize;	logical block size of the logged device
 *	};
 *
 *   Entries follow back to back from log sector sectorsize / 512.  Each
 *   is one sectorsize block holding
 *
 *	struct log_write_entry {
 *		__le64 sector;		on the logged device, in sectorsize units
 *		__le64 nr_sectors;	in sectorsize units
 *		__le64 flags;		FLUSH 1, FUA 2, DISCARD 4, MARK 8, META 16
 *		__le64 data_len;	a mark's text length, else 0
 *	};
 *
 *   (the rest of the block zero, or a mark's text right after the 32
 *   header bytes), then the write's nr_sectors * sectorsize bytes of
 *   data.  Discards carry no data; marks have nr_sectors 0.  A flush
 *   without data is an entry with nr_sectors 0.
 *
 *   Order: the kernel logs a plain write only when a flush issued after
 *   the write completed finishes (the writes that had completed when the
 *   flush was issued, then the flush entry), a FUA write as soon as it
 *   completes,
 *   discards like writes, marks when the message arrives.  So every
 *   prefix of the log is a state the device may hold after a power cut,
 *   the most pessimistic one for that moment.
 *
 *   nr_entries in the super is rewritten after every FUA or mark entry
 *   and at teardown, which first logs the writes still waiting for a
 *   flush and then the mark "dm-log-writes-end".  Entries past
 *   nr_entries are not trusted.  A log without that final mark was not
 *   closed: the machine stopped, or the log device filled up (the kernel
 *   then stops logging: "Ran out of space on the logdev").
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#define PROG		"bcache_logreplay"

#define LW_MAGIC	0x6a736677736872ULL
#define LW_VERSION	1
#define LW_FLUSH	(1 << 0)
#define LW_FUA		(1 << 1)
#define LW_DISCARD	(1 << 2)
#define LW_MARK		(1 << 3)
#define LW_META		(1 << 4)
#define LW_KNOWN	(LW_FLUSH | LW_FUA | LW_DISCARD | LW_MARK | LW_META)
#define LW_ENTRY_BYTES	32
#define LW_END_MARK	"dm-log-writes-end"

#define ZERO_CHUNK	(1 << 20)

struct entry {
	uint64_t sector, nr_sectors, flags, data_len;
	char mark[4096];		/* a mark's text, NUL-terminated */
};

struct logf {
	const char *path;
	int fd;
	uint64_t size;			/* bytes */
	uint32_t ss;			/* sectorsize */
	uint64_t nr_entries;
	uint8_t *blk;			/* one sectorsize block */
};

/* A place in the log: what replay prints and takes back. */
struct pos {
	uint64_t entry, sector, flushes;
};

static int bad(const struct logf *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct logf *l, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s: ", l->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int dev_size(int fd, uint64_t *bytes)
{
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, bytes) ? -1 : 0;
	*bytes = st.st_size;
	return 0;
}

static int read_full(int fd, void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, off);

		if (r <= 0)
			return -1;
		buf = (char *)buf + r;
		len -= r;
		off += r;
	}
	return 0;
}

/* Open LOG and check its super block.  0, 1 (bad log) or 2 (I/O). */
static int log_open(struct logf *l, const char *path)
{
	uint8_t sb[LW_ENTRY_BYTES];
	uint64_t magic, version;

	memset(l, 0, sizeof(*l));
	l->path = path;
	l->fd = open(path, O_RDONLY | O_CLOEXEC);	/* log_close() closes it, failed or not */
	if (l->fd < 0 || dev_size(l->fd, &l->size)) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (l->size < 512 || read_full(l->fd, sb, sizeof(sb), 0)) {
		fprintf(stderr, PROG ": %s: cannot read the super block\n", path);
		return 2;
	}
	memcpy(&magic, sb, 8);
	memcpy(&version, sb + 8, 8);
	memcpy(&l->nr_entries, sb + 16, 8);
	memcpy(&l->ss, sb + 24, 4);
	magic = le64toh(magic);
	version = le64toh(version);
	l->nr_entries = le64toh(l->nr_entries);
	l->ss = le32toh(l->ss);
	if (magic != LW_MAGIC)
		return bad(l, "not a dm-log-writes log (magic %#" PRIx64 ", want %#llx)",
			   magic, LW_MAGIC);
	if (version != LW_VERSION)
		return bad(l, "log version %" PRIu64 " unsupported (want %d)",
			   version, LW_VERSION);
	/* The logged device's logical block size: a power of two, >= 512. */
	if (l->ss < 512 || l->ss > 65536 || (l->ss & (l->ss - 1)))
		return bad(l, "bad sectorsize %u in the super block", l->ss);
	l->blk = malloc(l->ss);
	if (!l->blk)
		return 2;
	return 0;
}

static uint64_t ss_sectors(const struct logf *l)
{
	return l->ss / 512;
}

/* Log sectors the entry at @sector takes, header block included. */
static uint64_t entry_span(const struct logf *l, const struct entry *e)
{
	uint64_t blocks = 1;

	if (!(e->flags & LW_DISCARD))
		blocks += e->nr_sectors;
	return blocks * ss_sectors(l);
}

/*
 * Read and check the header of entry @idx at log sector @sector.
 * 0, 1 (bad entry) or 2 (I/O error).
 */
static int read_entry(struct logf *l, uint64_t idx, uint64_t sector,
		      struct entry *e)
{
	uint64_t f[4];

	if ((sector + ss_sectors(l)) * 512 > l->size)
		return bad(l, "entry %" PRIu64 " at log sector %" PRIu64 " lies past the end of the log (%" PRIu64 " sectors): super block says %" PRIu64 " entries",
			   idx, sector, l->size / 512, l->nr_entries);
	if (read_full(l->fd, l->blk, l->ss, sector * 512)) {
		fprintf(stderr, PROG ": %s: read at sector %" PRIu64 ": %s\n",
			l->path, sector, strerror(errno));
		return 2;
	}
	memcpy(f, l->blk, sizeof(f));
	e->sector = le64toh(f[0]);
	e->nr_sectors = le64toh(f[1]);
	e->flags = le64toh(f[2]);
	e->data_len = le64toh(f[3]);
	e->mark[0] = 0;
	if (e->flags & ~(uint64_t)LW_KNOWN)
		return bad(l, "entry %" PRIu64 " at log sector %" PRIu64 ": unknown flags %#" PRIx64,
			   idx, sector, e->flags);
	if (e->flags & LW_MARK) {
		/* The kernel keeps a mark within the header block, NUL-ended. */
		if (e->nr_sectors || e->data_len >= l->ss - LW_ENTRY_BYTES ||
		    e->data_len >= sizeof(e->mark))
			return bad(l, "entry %" PRIu64 ": malformed mark (data_len %" PRIu64 ", nr_sectors %" PRIu64 ")",
				   idx, e->data_len, e->nr_sectors);
		memcpy(e->mark, l->blk + LW_ENTRY_BYTES, e->data_len);
		e->mark[e->data_len] = 0;
		return 0;
	}
	/* Only marks carry private data in 6.1 and 6.12 (once: DAX). */
	if (e->data_len)
		return bad(l, "entry %" PRIu64 ": inline data (data_len %" PRIu64 ") is not supported",
			   idx, e->data_len);
	if ((e->flags & LW_DISCARD) && (e->flags & (LW_FLUSH | LW_FUA)))
		return bad(l, "entry %" PRIu64 ": a discard with FLUSH or FUA", idx);
	if (!e->nr_sectors && !(e->flags & LW_FLUSH))
		return bad(l, "entry %" PRIu64 ": empty write without FLUSH", idx);
	if (e->nr_sectors > l->size / l->ss || e->sector > UINT64_MAX / l->ss ||
	    e->sector + e->nr_sectors > UINT64_MAX / l->ss)
		return bad(l, "entry %" PRIu64 ": implausible range %" PRIu64 "+%" PRIu64,
			   idx, e->sector, e->nr_sectors);
	if ((sector + entry_span(l, e)) * 512 > l->size)
		return bad(l, "entry %" PRIu64 " at log sector %" PRIu64 ": its data runs past the end of the log",
			   idx, sector);
	return 0;
}

static void flag_text(uint64_t flags, char *out)
{
	static const char *const names[] = { "FLUSH", "FUA", "DISCARD", "MARK", "META" };
	unsigned int i;

	out[0] = 0;
	for (i = 0; i < 5; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (out[0])
			strcat(out, "|");
		strcat(out, names[i]);
	}
	if (!out[0])
		strcpy(out, "WRITE");
}

static void log_close(struct logf *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->blk);
}

static int do_scan(const char *path, bool list)
{
	struct logf l;
	struct entry e;
	uint64_t i, sector, writes = 0, wsec = 0, flushes = 0, fua = 0;
	uint64_t discards = 0, marks = 0, meta = 0;
	bool closed = false;
	char fl[64];
	int r;

	r = log_open(&l, path);
	if (r)
		goto out;
	sector = ss_sectors(&l);
	for (i = 0; i < l.nr_entries; i++) {
		r = read_entry(&l, i, sector, &e);
		if (r)
			goto out;
		if (list) {
			flag_text(e.flags, fl);
			printf("%" PRIu64 " %" PRIu64 " %s %" PRIu64 " %" PRIu64 "%s%s\n",
			       i, sector, fl, e.sector, e.nr_sectors,
			       e.mark[0] ? " " : "", e.mark);
		}
		closed = false;
		if (e.flags & LW_MARK) {
			marks++;
			closed = !strcmp(e.mark, LW_END_MARK);
		} else if (e.flags & LW_DISCARD) {
			discards++;
		} else if (e.nr_sectors) {
			writes++;
			wsec += e.nr_sectors;
		}
		flushes += !!(e.flags & LW_FLUSH);
		fua += !!(e.flags & LW_FUA);
		meta += !!(e.flags & LW_META);
		sector += entry_span(&l, &e);
	}
	if (list)
		goto out;
	printf("entries %" PRIu64 "\nwrites %" PRIu64 "\nwrite_sectors %" PRIu64 "\n"
	       "flushes %" PRIu64 "\nfua %" PRIu64 "\ndiscards %" PRIu64 "\n"
	       "marks %" PRIu64 "\nmetadata %" PRIu64 "\nlog_sectors %" PRIu64 "\n"
	       "log_size %" PRIu64 "\nsectorsize %u\nclosed %d\n",
	       l.nr_entries, writes, wsec * l.ss / 512, flushes, fua, discards,
	       marks, meta, sector, l.size / 512, l.ss, closed);
	/*
	 * The marks in a second pass: there are few, and the key lines
	 * above stay together for the tests' awk.
	 */
	sector = ss_sectors(&l);
	for (i = 0; i < l.nr_entries && !r; i++) {
		r = read_entry(&l, i, sector, &e);
		if (!r && (e.flags & LW_MARK))
			printf("mark %" PRIu64 " %s\n", i, e.mark);
		sector += entry_span(&l, &e);
	}
out:
	log_close(&l);
	return r;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

static int parse_pos(const char *s, struct pos *p)
{
	char *end;

	memset(p, 0, sizeof(*p));
	if (!strcmp(s, "0"))
		return 0;
	errno = 0;
	p->entry = strtoull(s, &end, 10);
	if (*end != ':')
		return -1;
	p->sector = strtoull(end + 1, &end, 10);
	if (*end != ':')
		return -1;
	p->flushes = strtoull(end + 1, &end, 10);
	return errno || *end ? -1 : 0;
}

/* Write zeroes over @len bytes of @fd at @off (a discard). */
static int zero_range(int fd, uint64_t off, uint64_t len)
{
	void *zeroes = calloc(1, ZERO_CHUNK);
	int r = zeroes ? 0 : -1;

	while (len && !r) {
		size_t n = len < ZERO_CHUNK ? len : ZERO_CHUNK;

		if (pwrite(fd, zeroes, n, off) != (ssize_t)n)
			r = -1;
		off += n;
		len -= n;
	}
	free(zeroes);
	return r;
}

/* Apply entry @i (header @e, at log sector @sector) to @fd. 0, 1 or 2. */
static int apply_entry(struct logf *l, uint64_t i, uint64_t sector,
		       const struct entry *e, int fd, const char *dev,
		       uint64_t dev_bytes, void **buf, size_t *buf_len)
{
	uint64_t off = e->sector * l->ss, len = e->nr_sectors * l->ss;

	if (!len)
		return 0;
	if (off + len > dev_bytes) {
		fprintf(stderr, PROG ": entry %" PRIu64 " writes bytes %" PRIu64 "+%" PRIu64 ", past the end of %s (%" PRIu64 ")\n",
			i, off, len, dev, dev_bytes);
		return 1;
	}
	if (e->flags & LW_DISCARD) {
		if (!zero_range(fd, off, len))
			return 0;
		goto io_error;
	}
	if (len > *buf_len) {
		free(*buf);
		*buf_len = 0;
		*buf = malloc(len);
		if (!*buf)
			return 2;
		*buf_len = len;
	}
	if (read_full(l->fd, *buf, len, (sector + ss_sectors(l)) * 512)) {
		fprintf(stderr, PROG ": %s: reading entry %" PRIu64 "'s data: %s\n",
			l->path, i, strerror(errno));
		return 2;
	}
	if (pwrite(fd, *buf, len, off) == (ssize_t)len)
		return 0;
io_error:
	fprintf(stderr, PROG ": %s: write: %s\n", dev, strerror(errno));
	return 2;
}

static int do_replay(const char *path, const char *dev, const char *from,
		     const char *to)
{
	struct logf l;
	struct entry e;
	struct pos p;
	uint64_t target = UINT64_MAX, dev_bytes, i, sector, flushes;
	void *buf = NULL;
	size_t buf_len = 0;
	bool all = !strcmp(to, "end"), reached = false;
	int fd = -1, r;

	if (parse_pos(from, &p)) {
		fprintf(stderr, PROG ": bad position '%s' (want 0 or ENTRY:SECTOR:FLUSHES)\n", from);
		return 2;
	}
	if (!all && (parse_u64(to, &target) || !target)) {
		fprintf(stderr, PROG ": bad flush point '%s' (want 1.. or end)\n", to);
		return 2;
	}
	r = log_open(&l, path);
	if (r)
		goto out;
	r = 2;
	if (!p.sector)
		p.sector = ss_sectors(&l);
	if (p.entry > l.nr_entries || p.flushes > p.entry ||
	    p.sector % ss_sectors(&l) || p.sector * 512 > l.size) {
		fprintf(stderr, PROG ": position %s does not fit this log\n", from);
		goto out;
	}
	if (!all && target <= p.flushes) {
		fprintf(stderr, PROG ": flush point %" PRIu64 " is behind position %s\n",
			target, from);
		goto out;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 || dev_size(fd, &dev_bytes)) {
		fprintf(stderr, PROG ": %s: %s\n", dev, strerror(errno));
		goto out;
	}
	sector = p.sector;
	flushes = p.flushes;
	for (i = p.entry; i < l.nr_entries; i++) {
		r = read_entry(&l, i, sector, &e);
		if (r)
			goto out;
		if (e.flags & LW_FLUSH) {
			/* This is flush point flushes + 1. */
			if (flushes + 1 == target && e.nr_sectors &&
			    !(e.flags & LW_FUA)) {
				/*
				 * Its data is not durable yet: stop before
				 * it, and the next step starts with it.
				 */
				reached = true;
				break;
			}
			flushes++;
		}
		r = apply_entry(&l, i, sector, &e, fd, dev, dev_bytes, &buf,
				&buf_len);
		if (r)
			goto out;
		sector += entry_span(&l, &e);
		if (flushes == target) {
			reached = true;
			i++;
			break;
		}
	}
	r = 2;
	if (fsync(fd)) {
		fprintf(stderr, PROG ": %s: fsync: %s\n", dev, strerror(errno));
		goto out;
	}
	r = 1;
	if (!all && !reached) {
		fprintf(stderr, PROG ": %s: the log has only %" PRIu64 " flush entries, not %" PRIu64 "\n",
			path, flushes, target);
		goto out;
	}
	printf("%" PRIu64 ":%" PRIu64 ":%" PRIu64 "\n", i, sector, flushes);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	log_close(&l);
	return r;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " info LOG\n"
		"       " PROG " list LOG\n"
		"       " PROG " replay LOG DEV FROM TO_FLUSH\n"
		"FROM: 0, or the ENTRY:SECTOR:FLUSHES an earlier replay printed\n"
		"TO_FLUSH: the flush entry to stop after (1-based), or end\n");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "info"))
		return do_scan(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "list"))
		return do_scan(argv[2], true);
	if (argc == 6 && !strcmp(argv[1], "replay"))
		return do_replay(argv[2], argv[3], argv[4], argv[5]);
	usage(stderr);
	return 2;
}
