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
 * Exit codes: 0 formatted, 1 refused (device in use by bcache, too small,
 * bad geometry), 2 usage or I/O error.
 */
#include <getopt.h>
#include <unistd.h>

#include "crc64.h"
#include "format.h"
#include "devio.h"

#define PROG "bcache_format"
#define MAX_BDEVS 16

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] -C CACHE_DEV | -B BACKING_DEV ... \n"
"Format a cache device and/or backing devices for bcache (mainline format).\n"
"\n"
"  -C, --cache DEV              format DEV as the cache device of a new set\n"
"  -B, --bdev DEV               format DEV as a backing device (repeatable)\n"
"  -b, --bucket SIZE            bucket size, bytes with k/M suffix (default 512k)\n"
"  -w, --block SIZE             block size, bytes with k suffix\n"
"                               (default: largest logical block size, 4k for files)\n"
"  -o, --data-offset SECTORS    backing data offset (default 16)\n"
"      --cset-uuid UUID         cache set UUID (default: random)\n"
"  -l, --label LABEL            label, up to 32 bytes\n"
"      --writeback              backing devices start in writeback mode\n"
"      --discard                the cache discards buckets it frees\n"
"      --cache_replacement_policy lru|fifo|random   (default lru)\n"
"      --wipe-bcache            overwrite an existing bcache superblock\n"
"      --superblock-only        cache: write only the superblock (as make-bcache)\n"
"  -h, --help                   this text\n"
"\n"
"The cache needs at least 1024 buckets (the mainline driver's practical\n"
"minimum): choose a smaller --bucket for a small device.\n"
"Exit status: 0 formatted, 1 refused, 2 usage or I/O error.\n");
}

/* make-bcache's size rule: bytes (k, M, G suffix), power of two, to sectors. */
static int parse_size(const char *s, const char *what, u32 *sectors)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K':
		v <<= 10; end++; break;
	case 'm': case 'M':
		v <<= 20; end++; break;
	case 'g': case 'G':
		v <<= 30; end++; break;
	}
	if (*end || end == s || !v) {
		fprintf(stderr, PROG ": invalid %s '%s'\n", what, s);
		return -1;
	}
	if (v & (v - 1) || v < 512 || v / 512 > 65535) {
		fprintf(stderr, PROG ": %s must be a power of two from 512 bytes to 32M, got '%s'\n",
			what, s);
		return -1;
	}
	*sectors = v / 512;
	return 0;
}

static int check_existing(struct bch_dev *d, bool wipe)
{
	struct bch_sb_disk *sb = bch_zalloc(BCH_SB_BYTES);
	int r = 0;

	if (!sb || bch_sb_read(&d->io, sb)) {
		fprintf(stderr, PROG ": %s: cannot read the superblock area\n",
			d->path);
		r = 2;
	} else if (bch_sb_has_magic(sb) && !wipe) {
		fprintf(stderr, PROG ": %s: already has a bcache superblock; use --wipe-bcache to overwrite it\n",
			d->path);
		r = 1;
	}
	bch_free(sb);
	return r;
}

static int write_head(struct bch_dev *d, const struct bch_sb *sb)
{
	static u8 zero[4096];

	if (pwrite(d->fd, zero, sizeof(zero), 0) != sizeof(zero) ||
	    bch_sb_write(&d->io, sb) || fsync(d->fd)) {
		fprintf(stderr, PROG ": %s: write failed: %s\n", d->path,
			strerror(errno));
		return 2;
	}
	return 0;
}

static void print_sb(const struct bch_dev *d, const struct bch_sb *sb)
{
	char u[37], s[37];

	bch_uuid_unparse(sb->uuid, u);
	bch_uuid_unparse(sb->set_uuid, s);
	printf("%s: %s device\n  UUID:\t\t\t%s\n  Set UUID:\t\t%s\n",
	       d->path, sb->kind == BCH_SB_KIND_CACHE ? "cache" : "backing",
	       u, s);
	printf("  version:\t\t%llu\n  block_size:\t\t%u\n", sb->version,
	       sb->block_size);
	if (sb->kind == BCH_SB_KIND_CACHE)
		printf("  bucket_size:\t\t%u\n  nbuckets:\t\t%llu\n  first_bucket:\t\t%u\n  journal buckets:\t%u\n",
		       sb->bucket_size, sb->nbuckets, sb->first_bucket,
		       sb->keys);
	else
		printf("  data_offset:\t\t%llu\n", sb->data_offset);
}

struct job {
	const char *cache;
	const char *bdev[MAX_BDEVS];
	int nr_bdev;
	struct bch_format_params p;
	bool block_given, wipe, sb_only;
};

static int format_one(struct job *j, const char *path, bool cache)
{
	struct bch_format_params p = j->p;
	struct bch_dev d;
	struct bch_sb sb;
	const char *err;
	int r;

	if (bch_dev_open(&d, PROG, path, true))
		return 2;
	r = check_existing(&d, j->wipe);
	if (r)
		goto out;
	p.dev_sectors = d.sectors;
	bch_uuid_generate(p.uuid);
	err = cache ? bch_format_cache_sb(&p, &sb) :
		      bch_format_backing_sb(&p, &sb);
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", path, err);
		if (cache && p.dev_sectors / p.bucket_size < BCH_FORMAT_MIN_NBUCKETS)
			fprintf(stderr, PROG ": %s: %llu sectors hold %llu buckets of %u sectors; use a --bucket of at most %llu bytes\n",
				path, p.dev_sectors,
				p.dev_sectors / p.bucket_size, p.bucket_size,
				p.dev_sectors / BCH_FORMAT_MIN_NBUCKETS * 512);
		r = 1;
		goto out;
	}
	r = write_head(&d, &sb);
	if (!r && cache && !j->sb_only) {
		r = bch_format_cache_set(&d.io, &sb);
		if (r) {
			fprintf(stderr, PROG ": %s: writing the cache set failed: %s\n",
				path, strerror(-r));
			r = 2;
		}
	}
	if (!r)
		print_sb(&d, &sb);
out:
	bch_dev_close(&d);
	return r;
}

static u32 default_block(struct job *j)
{
	u32 block = 1;
	int i;

	for (i = -1; i < j->nr_bdev; i++) {
		const char *path = i < 0 ? j->cache : j->bdev[i];
		struct bch_dev d;
		u32 b;

		if (!path || bch_dev_open(&d, PROG, path, false))
			continue;
		/* Block devices: logical block size; files: st_blksize. */
		b = (d.is_file ? d.blksize : d.lbs) / 512;
		if (b > block)
			block = b;
		bch_dev_close(&d);
	}
	return min_t(u32, block, BCH_PAGE_SECTORS);
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
		{ "superblock-only", no_argument, NULL, OPT_SBONLY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char * const policies[] = { "lru", "fifo", "random" };
	struct job j = { 0 };
	bool cset = false;
	char *end;
	int c, i, r = 0;

	bch_crc64_init();
	j.p.bucket_size = BCH_FORMAT_DEF_BUCKET;
	j.p.data_offset = BCH_BDEV_DATA_START;
	while ((c = getopt_long(argc, argv, "C:B:b:w:o:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			if (j.cache) {
				fprintf(stderr, PROG ": only one cache device per set is supported\n");
				return 2;
			}
			j.cache = optarg;
			break;
		case 'B':
			if (j.nr_bdev == MAX_BDEVS) {
				fprintf(stderr, PROG ": too many backing devices\n");
				return 2;
			}
			j.bdev[j.nr_bdev++] = optarg;
			break;
		case 'b':
			if (parse_size(optarg, "bucket size", &j.p.bucket_size))
				return 2;
			break;
		case 'w':
			if (parse_size(optarg, "block size", &j.p.block_size))
				return 2;
			j.block_given = true;
			break;
		case 'o':
			j.p.data_offset = strtoull(optarg, &end, 10);
			if (*end || end == optarg) {
				fprintf(stderr, PROG ": invalid data offset '%s'\n", optarg);
				return 2;
			}
			break;
		case 'l':
			if (strlen(optarg) > BCH_SB_LABEL_SIZE) {
				fprintf(stderr, PROG ": label longer than %d bytes\n",
					BCH_SB_LABEL_SIZE);
				return 2;
			}
			memcpy(j.p.label, optarg, strlen(optarg));
			break;
		case OPT_CSET:
			if (bch_uuid_parse(optarg, j.p.set_uuid)) {
				fprintf(stderr, PROG ": invalid UUID '%s'\n", optarg);
				return 2;
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
			for (i = 0; i < 3 && strcmp(optarg, policies[i]); i++)
				;
			if (i == 3) {
				fprintf(stderr, PROG ": unknown cache replacement policy '%s'\n",
					optarg);
				return 2;
			}
			j.p.policy = i;
			break;
		case OPT_WIPE:
			j.wipe = true;
			break;
		case OPT_SBONLY:
			j.sb_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (!j.cache && !j.nr_bdev)) {
		fprintf(stderr, PROG ": %s\n", optind != argc ?
			"unexpected argument; devices follow -C or -B" :
			"name a cache (-C) or backing (-B) device");
		usage(stderr);
		return 2;
	}
	if (!cset)
		bch_uuid_generate(j.p.set_uuid);
	if (!j.block_given)
		j.p.block_size = default_block(&j);

	if (j.cache)
		r = format_one(&j, j.cache, true);
	for (i = 0; i < j.nr_bdev && !r; i++)
		r = format_one(&j, j.bdev[i], false);
	return r;
}
