// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_check: check a bcache cache device's metadata offline, read-only.
 * Options and exit codes follow thin-provisioning-tools' cache_check.
 *
 *   0  no damage found
 *   1  damage found (each finding is printed with its class)
 *   2  usage error, or the device could not be read
 */
#include <getopt.h>

#include "crc64.h"
#include "check.h"
#include "devio.h"

#define PROG "bcache_check"

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] DEVICE-OR-IMAGE\n"
"Check the metadata of a bcache cache device without writing to it.\n"
"\n"
"  -q, --quiet              print nothing; the exit status says it all\n"
"      --super-block-only   check only the superblock\n"
"      --skip-journal       stop after the superblock (the journal leads to\n"
"                           everything else)\n"
"      --skip-prios         do not read the prio/gen chain (no stale checks)\n"
"      --skip-uuids         do not read the UUID table\n"
"      --skip-btree         do not walk the btree\n"
"  -h, --help               this text\n"
"  -V, --version            print the version\n"
"\n"
"Exit status: 0 clean, 1 damage found, 2 usage or I/O error.\n");
}

struct out {
	bool quiet;
};

static void on_finding(void *ctx, enum bch_damage cls, const char *msg)
{
	struct out *o = ctx;

	if (!o->quiet)
		printf("damage: %s: %s\n", bch_damage_names[cls], msg);
}

static void on_note(void *ctx, const char *msg)
{
	struct out *o = ctx;

	if (!o->quiet)
		printf("note: %s\n", msg);
}

static void summary(const struct bch_check_result *r)
{
	char set[37];

	bch_uuid_unparse(r->sb.set_uuid, set);
	printf("set %s: %llu buckets of %u sectors, block %u sectors\n", set,
	       r->sb.nbuckets, r->sb.bucket_size, r->sb.block_size);
	if (!r->synchronous)
		return;
	printf("journal: %llu entries, replay %llu-%llu with %llu keys\n",
	       r->journal_entries, r->last_seq, r->newest_seq,
	       r->journal_keys);
	printf("prios: %llu buckets; uuids: %llu in use\n", r->prio_buckets,
	       r->uuids_in_use);
	printf("btree: root level %u, %llu nodes, %llu keys; buckets: %llu btree, %llu data, %llu dirty\n",
	       r->root_level, r->btree_nodes, r->btree_keys, r->buckets_btree,
	       r->buckets_data, r->buckets_dirty);
}

int main(int argc, char **argv)
{
	enum { OPT_SB = 256, OPT_SKIP_J, OPT_SKIP_P, OPT_SKIP_U, OPT_SKIP_B };
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "super-block-only", no_argument, NULL, OPT_SB },
		{ "skip-journal", no_argument, NULL, OPT_SKIP_J },
		{ "skip-prios", no_argument, NULL, OPT_SKIP_P },
		{ "skip-uuids", no_argument, NULL, OPT_SKIP_U },
		{ "skip-btree", no_argument, NULL, OPT_SKIP_B },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct out out = { 0 };
	struct bch_check_ops ops = {
		.ctx = &out, .finding = on_finding, .note = on_note,
	};
	struct bch_dev d;
	int c, r;

	bch_crc64_init();
	while ((c = getopt_long(argc, argv, "qhV", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			out.quiet = true;
			break;
		case OPT_SB:
			o.super_block_only = true;
			break;
		case OPT_SKIP_J:
			o.skip_journal = true;
			break;
		case OPT_SKIP_P:
			o.skip_prios = true;
			break;
		case OPT_SKIP_U:
			o.skip_uuids = true;
			break;
		case OPT_SKIP_B:
			o.skip_btree = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(PROG " 1.0.0\n");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": name exactly one device or image\n");
		usage(stderr);
		return 2;
	}
	if (bch_dev_open(&d, PROG, argv[optind], false))
		return 2;
	r = bch_check(&d.io, &o, &ops, &res);
	bch_dev_close(&d);
	if (r) {
		fprintf(stderr, PROG ": %s: %s while checking\n", argv[optind],
			strerror(-r));
		return 2;
	}
	if (!out.quiet) {
		if (!res.damage[BCH_DMG_SUPERBLOCK])
			summary(&res);
		printf("%s: %u damage findings, %u notes\n", argv[optind],
		       res.nr_damage, res.nr_notes);
	}
	return res.nr_damage ? 1 : 0;
}
