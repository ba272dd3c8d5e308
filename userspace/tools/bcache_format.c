// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_format: format cache and backing devices in the mainline bcache
 * format, with make-bcache's options and defaults.
 *
 * Unlike make-bcache, a cache device also gets its set's metadata (an
 * empty journal, prio chain, UUID table and root), so that bcache_check
 * can verify it at once and the mainline driver registers it as an
 * existing set.  --superblock-only writes just the superblock, exactly
 * as make-bcache does; the driver (or dm-bcache) then creates the set on
 * first use.
 *
 * Nothing is written until every device named has been opened
 * exclusively and probed: a device in use is refused with its holder
 * named, and one holding a file system, partition table or any other
 * signature libblkid knows is refused unless --force (--wipe-bcache for an
 * old bcache superblock); with permission those signatures are wiped.
 *
 * Exit codes: 0 formatted, 1 refused (in use, a signature found, too
 * small, bad geometry), 2 usage or I/O error.
 */
#include <getopt.h>
#include <unistd.h>

#include "util/crc64.h"
#include "mkfs/format.h"
#include "devio.h"
#include "util/version.h"

#define PROG "bcache_format"
#define MAX_BDEVS 16

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] -C CACHE_DEV | -B BACKING_DEV ...\n"
"Format a cache device and/or backing devices for bcache (mainline format).\n"
"\n"
"  -C, --cache DEV          format DEV as the cache device of a new set\n"
"  -B, --bdev DEV           format DEV as a backing device (repeatable)\n"
"  -b, --bucket SIZE        bucket size in bytes, a power of two from 4k\n"
"                           to 16M, k/M suffix (default 512k)\n"
"  -w, --block SIZE         block size in bytes, a power of two from 512\n"
"                           to 4k (default: the largest logical block\n"
"                           size of the devices; for files their file\n"
"                           system's block size)\n"
"  -o, --data-offset N      backing data offset in sectors, at least 16\n"
"                           (default 16)\n"
"      --cset-uuid UUID     cache set UUID (default: random)\n"
"  -l, --label LABEL        label, up to 32 bytes\n"
"      --writeback          backing devices start in writeback mode\n"
"      --discard            the cache discards buckets it frees\n"
"      --cache_replacement_policy lru|fifo|random   (default lru)\n"
"      --wipe-bcache        overwrite an existing bcache superblock\n"
"  -f, --force              overwrite any other signature (file system,\n"
"                           partition table, LVM, RAID, swap...)\n"
"      --superblock-only    cache: write only the superblock (as make-bcache)\n"
BCH_CLI_COMMON_HELP
"\n"
"A cache set needs at least 513 buckets (the mainline driver's minimum):\n"
"choose a smaller --bucket for a small device.  A device in use (mounted,\n"
"held by a dm table, md or the bcache driver) is never written.\n"
"Exit status: 0 formatted, 1 refused, 2 usage or I/O error.\n");
}

static void print_sb(const struct bch_dev *d, const struct bch_sb *sb)
{
	char u[37], s[37];

	bch_uuid_unparse(sb->uuid, u);
	bch_uuid_unparse(sb->set_uuid, s);
	bch_out("%s: %s device\n  UUID:\t\t\t%s\n  Set UUID:\t\t%s\n",
		d->path, sb->kind == BCH_SB_KIND_CACHE ? "cache" : "backing",
		u, s);
	bch_out("  version:\t\t%llu\n  block_size:\t\t%u\n", sb->version,
		sb->block_size);
	if (sb->kind == BCH_SB_KIND_CACHE)
		bch_out("  bucket_size:\t\t%u\n  nbuckets:\t\t%llu\n  first_bucket:\t\t%u\n  journal buckets:\t%u\n",
			sb->bucket_size, sb->nbuckets, sb->first_bucket,
			sb->keys);
	else
		bch_out("  data_offset:\t\t%llu\n", sb->data_offset);
}

struct target {
	const char *path;
	bool cache;
	struct bch_dev d;
	struct bch_sb sb;
};

struct job {
	struct target t[MAX_BDEVS + 1];
	int nr;
	struct bch_format_params p;
	bool block_given, wipe, force, sb_only;
};

/* An old bcache superblock libblkid does not report (a bad checksum). */
static int refuse_old_bcache(struct job *j, struct bch_dev *d)
{
	struct bch_sb_disk *sb;
	int r = 0;

	if (j->wipe || j->force || d->sectors < BCH_SB_SECTOR + BCH_SB_BYTES / 512)
		return 0;
	sb = bch_zalloc(BCH_SB_BYTES);
	if (!sb || bch_sb_read(&d->io, sb)) {
		bch_err("%s: cannot read the superblock area", d->path);
		r = BCH_EXIT_USAGE;
	} else if (bch_sb_has_magic(sb)) {
		bch_err("%s: holds a bcache superblock; use --wipe-bcache to overwrite it",
			d->path);
		r = BCH_EXIT_REFUSED;
	}
	bch_free(sb);
	return r;
}

/* The largest bucket that gives a set enough buckets, if any does. */
static void suggest_bucket(const char *path, u64 sectors, u32 bucket)
{
	u32 b = BCH_FORMAT_MAX_BUCKET;

	while (b > BCH_PAGE_SECTORS && bch_set_nbuckets_err(sectors / b))
		b >>= 1;
	if (bch_set_nbuckets_err(sectors / b))
		bch_err("%s: %llu bytes cannot hold %u buckets of the smallest size (4k): a cache needs at least %u KiB",
			path, sectors * 512, BCH_SET_MIN_NBUCKETS,
			BCH_SET_MIN_NBUCKETS * 4);
	else
		bch_err("%s: %llu bytes hold %llu buckets of %u KiB; use --bucket %uk or smaller",
			path, sectors * 512, sectors / bucket, bucket / 2,
			b / 2);
}

/* Probe and plan one opened device; writes nothing. */
static int prepare(struct job *j, struct target *t)
{
	struct bch_format_params p = j->p;
	const char *err;
	int r;

	r = bch_dev_claim(&t->d, j->force, j->wipe);
	if (!r)
		r = refuse_old_bcache(j, &t->d);
	if (r)
		return r;
	p.dev_sectors = t->d.sectors;
	bch_uuid_generate(p.uuid);
	err = t->cache ? bch_format_cache_sb(&p, &t->sb) :
			 bch_format_backing_sb(&p, &t->sb);
	if (err) {
		bch_err("%s: %s", t->path, err);
		if (t->cache && bch_set_nbuckets_err(p.dev_sectors / p.bucket_size))
			suggest_bucket(t->path, p.dev_sectors, p.bucket_size);
		return BCH_EXIT_REFUSED;
	}
	return 0;
}

static int write_head(struct bch_dev *d, const struct bch_sb *sb)
{
	static u8 zero[4096];

	if (pwrite(d->fd, zero, sizeof(zero), 0) != sizeof(zero) ||
	    bch_sb_write(&d->io, sb) || fsync(d->fd)) {
		bch_err("%s: write failed: %s", d->path, strerror(errno));
		return BCH_EXIT_USAGE;
	}
	return 0;
}

static int format_one(struct job *j, struct target *t)
{
	int r;

	r = bch_dev_wipe(&t->d);
	if (!r)
		r = write_head(&t->d, &t->sb);
	if (!r && t->cache && !j->sb_only) {
		r = bch_format_cache_set(&t->d.io, &t->sb);
		if (r) {
			bch_err("%s: writing the cache set failed: %s",
				t->path, strerror(-r));
			r = BCH_EXIT_USAGE;
		}
	}
	if (!r)
		print_sb(&t->d, &t->sb);
	return r;
}

/* Block devices: logical block size; files: st_blksize. */
static u32 default_block(struct job *j)
{
	u32 block = 1, b;
	int i;

	for (i = 0; i < j->nr; i++) {
		struct bch_dev *d = &j->t[i].d;

		b = (d->is_file ? d->blksize : d->lbs) / 512;
		if (b > block)
			block = b;
	}
	return min_t(u32, block, BCH_PAGE_SECTORS);
}

static int add_target(struct job *j, const char *path, bool cache)
{
	int i;

	for (i = 0; i < j->nr; i++) {
		if (cache && j->t[i].cache) {
			bch_err("only one cache device per set is supported");
			return BCH_EXIT_USAGE;
		}
		if (!strcmp(j->t[i].path, path)) {
			bch_err("%s: named twice", path);
			return BCH_EXIT_USAGE;
		}
	}
	if (j->nr == MAX_BDEVS + 1) {
		bch_err("too many devices (at most %d backing devices)",
			MAX_BDEVS);
		return BCH_EXIT_USAGE;
	}
	j->t[j->nr].path = path;
	j->t[j->nr].cache = cache;
	j->t[j->nr].d.fd = -1;
	j->nr++;
	return -1;
}

static int run(struct job *j)
{
	int i, k, r = 0;

	for (i = 0; i < j->nr && !r; i++) {
		r = bch_dev_open(&j->t[i].d, j->t[i].path, BCH_OPEN_WRITE);
		for (k = 0; k < i && !r; k++) {
			if (bch_same_file(&j->t[k].d.st, &j->t[i].d.st)) {
				bch_err("%s and %s are the same device",
					j->t[k].path, j->t[i].path);
				r = BCH_EXIT_USAGE;
			}
		}
	}
	if (!r && !j->block_given)
		j->p.block_size = default_block(j);
	/* Every device is checked before any is written. */
	for (i = 0; i < j->nr && !r; i++)
		r = prepare(j, &j->t[i]);
	for (i = 0; i < j->nr && !r; i++)
		r = format_one(j, &j->t[i]);
	for (i = 0; i < j->nr; i++)
		bch_dev_close(&j->t[i].d);
	return r;
}

int main(int argc, char **argv)
{
	enum { OPT_CSET = 256, OPT_WB, OPT_DISCARD, OPT_POLICY, OPT_WIPE,
	       OPT_SBONLY };
	static const struct option opts[] = {
		{ "cache", required_argument, NULL, 'C' },
		{ "bdev", required_argument, NULL, 'B' },
		{ "bucket", required_argument, NULL, 'b' },
		{ "block", required_argument, NULL, 'w' },
		{ "data-offset", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, 'l' },
		{ "cset-uuid", required_argument, NULL, OPT_CSET },
		{ "writeback", no_argument, NULL, OPT_WB },
		{ "discard", no_argument, NULL, OPT_DISCARD },
		{ "cache_replacement_policy", required_argument, NULL,
		  OPT_POLICY },
		{ "wipe-bcache", no_argument, NULL, OPT_WIPE },
		{ "force", no_argument, NULL, 'f' },
		{ "superblock-only", no_argument, NULL, OPT_SBONLY },
		BCH_CLI_COMMON_OPTS
	};
	static const char * const policies[] = { "lru", "fifo", "random" };
	static struct job j;
	struct bch_cli cli;
	bool cset = false;
	u64 v;
	int c, i, r;

	bch_cli_init(&cli, PROG, usage);
	bch_crc64_init();
	j.p.bucket_size = BCH_FORMAT_DEF_BUCKET;
	j.p.data_offset = BCH_BDEV_DATA_START;
	while ((c = getopt_long(argc, argv, "C:B:b:w:o:l:f" BCH_CLI_COMMON_SHORT,
				opts, NULL)) != -1) {
		r = -1;
		switch (c) {
		case 'C':
			r = add_target(&j, optarg, true);
			break;
		case 'B':
			r = add_target(&j, optarg, false);
			break;
		case 'b':
			if (bch_cli_size("--bucket", optarg, 4096,
					 BCH_FORMAT_MAX_BUCKET * 512ULL,
					 &j.p.bucket_size))
				r = BCH_EXIT_USAGE;
			break;
		case 'w':
			if (bch_cli_size("--block", optarg, 512,
					 BCH_PAGE_SECTORS * 512, &j.p.block_size))
				r = BCH_EXIT_USAGE;
			j.block_given = true;
			break;
		case 'o':
			if (bch_cli_number("--data-offset", optarg,
					   BCH_BDEV_DATA_START, BCH_S64_MAX / 512,
					   "sectors", &v))
				r = BCH_EXIT_USAGE;
			j.p.data_offset = v;
			break;
		case 'l':
			if (strlen(optarg) > BCH_SB_LABEL_SIZE) {
				bch_err("--label: '%s' is longer than %d bytes",
					optarg, BCH_SB_LABEL_SIZE);
				r = BCH_EXIT_USAGE;
				break;
			}
			memcpy(j.p.label, optarg, strlen(optarg));
			break;
		case OPT_CSET:
			if (bch_uuid_parse(optarg, j.p.set_uuid)) {
				bch_err("--cset-uuid: '%s' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
					optarg);
				r = BCH_EXIT_USAGE;
			}
			cset = true;
			break;
		case OPT_WB:
			j.p.writeback = true;
			break;
		case OPT_DISCARD:
			j.p.discard = true;
			break;
		case OPT_POLICY:
			i = bch_cli_choice("--cache_replacement_policy", optarg,
					   policies, 3);
			if (i < 0)
				r = BCH_EXIT_USAGE;
			j.p.policy = i;
			break;
		case OPT_WIPE:
			j.wipe = true;
			break;
		case 'f':
			j.force = true;
			break;
		case OPT_SBONLY:
			j.sb_only = true;
			break;
		default:
			r = bch_cli_common(&cli, c);
		}
		if (r >= 0)
			return r;
	}
	if (optind != argc) {
		bch_err("unexpected argument '%s'; devices follow -C or -B",
			argv[optind]);
		if (!cli.quiet)
			usage(stderr);
		return BCH_EXIT_USAGE;
	}
	r = bch_cli_operands(&cli, j.nr, 1, MAX_BDEVS + 1,
			     "device: name a cache (-C) or backing (-B) device");
	if (r >= 0)
		return r;
	if (!cset)
		bch_uuid_generate(j.p.set_uuid);
	return run(&j);
}
