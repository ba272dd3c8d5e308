// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_export: write out what a cached device holds now, offline.
 *
 *   bcache_export [--sectors N] CACHE BACKING OUTPUT
 *
 * The cache's index is read the way the target reads it: the prio chain
 * gives the gens, the btree is loaded (core/btree/btree_load.c) and the journal
 * entries of the replay range are replayed into it (core/journal/journal_read.c).
 * Then every sector of BACKING's data area comes from the cache where a
 * live extent of BACKING's UUID slot holds it (dirty data included), and
 * from BACKING itself elsewhere.  OUTPUT (a file or device) receives the
 * result from its sector 0.  This is how data can be recovered from a
 * cache whose origin is behind, and how the tests compare our reading of
 * a mainline-written cache with what the mainline driver serves.
 *
 * The cache must check clean (a torn journal tail is tolerated).  OUTPUT
 * may not be CACHE or BACKING; an existing file is truncated first, a
 * block device must be large enough, not in use, and hold no signature
 * unless --force.
 *
 * Exit codes: 0 written, 1 refused (the cache does not check clean, the
 * output is an input or holds a signature, a device is in use), 2 usage
 * or I/O error.
 */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "util/crc64.h"
#include "btree/btree_load.h"
#include "check/check.h"
#include "mkfs/format.h"
#include "journal/journal_read.h"
#include "alloc/prio_read.h"
#include "format/uuid.h"
#include "devio.h"

#define PROG "bcache_export"

static struct bch_dev cache, backing;
static struct bch_geom g;

static int die(int code, const char *msg)
{
	bch_err("%s", msg);
	return code;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] CACHE BACKING OUTPUT\n"
"Write what the cached device BACKING holds now (its data as the cache\n"
"serves it, dirty data included) to OUTPUT, from OUTPUT's sector 0.\n"
"\n"
"  -s, --sectors N          export the first N sectors of the data area\n"
"                           (default: all of it)\n"
"  -f, --force              read devices in use; overwrite a signature on\n"
"                           an OUTPUT block device\n"
BCH_CLI_COMMON_HELP
"\n"
"OUTPUT may not be CACHE or BACKING.  An existing OUTPUT file is truncated.\n"
"Exit status: 0 written, 1 refused, 2 usage or I/O error.\n");
}

/*
 * Open OUTPUT for @sectors of data: never one of the inputs, a file
 * truncated, a block device large enough and, without @force, blank.
 */
static int open_output(struct bch_dev *out, const char *path, u64 sectors,
		       bool force)
{
	struct stat st;
	int fd, r;

	if (stat(path, &st) && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			bch_err("%s: %s", path, strerror(errno));
			return BCH_EXIT_USAGE;
		}
		close(fd);
	}
	r = bch_dev_open(out, path, BCH_OPEN_WRITE);
	if (r)
		return r;
	if (bch_same_file(&out->st, &cache.st) ||
	    bch_same_file(&out->st, &backing.st)) {
		bch_err("%s: is %s itself; export to another device or file",
			path, bch_same_file(&out->st, &cache.st) ? "CACHE" :
			"BACKING");
		return BCH_EXIT_REFUSED;
	}
	if (out->is_file) {
		if (ftruncate(out->fd, 0)) {
			bch_err("%s: cannot truncate: %s", path,
				strerror(errno));
			return BCH_EXIT_USAGE;
		}
		return 0;
	}
	if (out->sectors < sectors) {
		bch_err("%s: holds %llu sectors, the export needs %llu", path,
			out->sectors, sectors);
		return BCH_EXIT_REFUSED;
	}
	r = bch_dev_claim(out, force, false);
	if (!r && force)
		r = bch_dev_wipe(out);
	return r;
}

/*
 * Nodes made here are never written: the tree is loaded, then only grows
 * by replay, with no node limits, so the only node made is the empty root
 * that bch_btree_init() replaces.
 */
static int no_placement(void *ctx, struct bch_key *key)
{
	(void)ctx;
	(void)key;
	return 0;
}

/* The UUID slot holding @uuid, or -1. */
static int find_slot(const struct bch_jset_disk *newest, const u8 *uuid)
{
	struct bch_uuid_entry_disk *tbl = calloc(1, g.meta_bucket_bytes);
	struct bch_key k;
	int slot = -1;
	u32 i;

	bch_key_decode(newest->uuid_bucket, BCH_BKEY_PAD_U64S, &k);
	if (tbl && !cache.io.read(cache.io.ctx, bch_ptr_offset(k.ptr[0]), tbl,
				  g.meta_bucket_bytes))
		for (i = 0; i < g.nr_uuids && slot < 0; i++)
			if (!memcmp(tbl[i].uuid, uuid, 16))
				slot = i;
	free(tbl);
	return slot;
}

static int replay_key(void *ctx, const struct bch_key *k)
{
	return bch_btree_insert(ctx, k);
}

static int copy_out(struct bch_btree *t, const u8 *gens, u64 inode,
		    u64 data_offset, u64 sectors, int out)
{
	u8 *buf = malloc(1 << 20);
	u64 s = data_offset, end = data_offset + sectors;

	if (!buf)
		return -ENOMEM;
	while (s < end) {
		u64 next;
		const struct bch_key *k = bch_btree_lookup(t, inode, s, &next);
		u64 n = min_t(u64, min_t(u64, next, end) - s, 2048);
		struct bch_dev *from = k && bch_key_live(&g, gens, k) ?
				      &cache : &backing;
		u64 at = from == &cache ?
			 bch_ptr_offset(k->ptr[0]) + s - bch_key_start(k) : s;

		if (from->io.read(from->io.ctx, at, buf, n * 512) ||
		    pwrite(out, buf, n * 512, (s - data_offset) * 512) !=
		    (ssize_t)(n * 512)) {
			free(buf);
			return -EIO;
		}
		s += n;
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sectors", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		BCH_CLI_COMMON_OPTS
	};
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_sb csb, bsb;
	struct bch_sb_disk *d;
	struct bch_btree t;
	struct bch_jscan s;
	struct bch_key root;
	u64 sectors = 0, area;
	unsigned int flags = 0;
	struct bch_cli cli;
	struct bch_dev out = { .fd = -1 };
	u8 *gens;
	int c, slot, r;

	bch_cli_init(&cli, PROG, usage);
	while ((c = getopt_long(argc, argv, "s:f" BCH_CLI_COMMON_SHORT, opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			if (bch_cli_number("--sectors", optarg, 1,
					   BCH_S64_MAX / 512, "sectors",
					   &sectors))
				return BCH_EXIT_USAGE;
			break;
		case 'f':
			flags |= BCH_OPEN_FORCE;
			break;
		default:
			r = bch_cli_common(&cli, c);
			if (r >= 0)
				return r;
		}
	}
	r = bch_cli_operands(&cli, argc - optind, 3, 3,
			     "operands: CACHE BACKING OUTPUT");
	if (r >= 0)
		return r;
	bch_crc64_init();
	r = bch_dev_open(&cache, argv[optind], flags);
	if (!r)
		r = bch_dev_open(&backing, argv[optind + 1], flags);
	if (!r && bch_same_file(&cache.st, &backing.st))
		r = die(BCH_EXIT_USAGE, "CACHE and BACKING are the same device");
	if (r)
		return r;
	if (bch_check(&cache.io, &o, NULL, &res))
		return die(BCH_EXIT_USAGE, "cannot read the cache");
	if (res.blank)
		return die(BCH_EXIT_REFUSED, "CACHE is blank: there is nothing to export");
	if (res.nr_damage || !res.synchronous)
		return die(BCH_EXIT_REFUSED, "the cache does not check clean; run bcache_check");
	csb = res.sb;
	bch_geom_init(&g, &csb);
	d = calloc(1, BCH_SB_BYTES);
	if (!d || bch_sb_read(&backing.io, d) ||
	    bch_sb_validate(d, backing.sectors, backing.lbs, &bsb) ||
	    bsb.kind != BCH_SB_KIND_BACKING)
		return die(BCH_EXIT_REFUSED, "BACKING has no valid backing superblock");
	free(d);
	area = backing.sectors - bsb.data_offset;
	if (sectors > area) {
		bch_err("--sectors %llu: BACKING's data area holds only %llu",
			sectors, area);
		return BCH_EXIT_USAGE;
	}
	if (!sectors)
		sectors = area;

	gens = calloc(csb.nbuckets, 1);
	if (!gens || bch_jscan_run(&cache.io, &csb, &g, &s, NULL, NULL) ||
	    bch_prio_read(&cache.io, &g,
			  le64_to_cpu(s.newest.prio_bucket[g.nr_this_dev]),
			  gens, NULL, NULL, NULL))
		return die(BCH_EXIT_USAGE, "cannot read the journal or the prios");
	slot = find_slot(&s.newest, bsb.uuid);
	if (slot < 0) {
		bch_jscan_free(&s);
		free(gens);
		return die(BCH_EXIT_REFUSED, "BACKING has no slot in the cache's UUID table");
	}
	/* Loaded whole, no node limits: replay only adds keys. */
	bch_key_decode(s.newest.btree_root, BCH_BKEY_PAD_U64S, &root);
	if (bch_btree_init(&t, ~0U, ~0U, g.btree_sectors, no_placement, NULL) ||
	    bch_btree_load(&t, &cache.io, &g, &root,
			   le16_to_cpu(s.newest.btree_level), gens) ||
	    bch_jscan_replay(&cache.io, &csb, &g, &s, replay_key, &t))
		return die(BCH_EXIT_USAGE, "cannot load the index");
	/* Last: a refusal above leaves an existing OUTPUT as it was. */
	r = open_output(&out, argv[optind + 2], sectors,
			flags & BCH_OPEN_FORCE);
	if (r) {
		bch_dev_close(&out);
		bch_btree_free(&t);
		bch_jscan_free(&s);
		free(gens);
		return r;
	}
	if (copy_out(&t, gens, slot, bsb.data_offset, sectors, out.fd) ||
	    fsync(out.fd))
		return die(BCH_EXIT_USAGE, "writing OUTPUT failed");
	bch_dev_close(&out);
	bch_out("%s: %llu sectors of slot %d exported (%llu nodes)\n",
		argv[optind + 1], sectors, slot, t.nr_nodes);
	bch_btree_free(&t);
	bch_jscan_free(&s);
	free(gens);
	return 0;
}
