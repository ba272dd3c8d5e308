// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_check: check a bcache cache device's metadata offline, read-only
 * unless asked to clear the needs_check flag of a cache that checks clean.
 * Options and exit codes follow thin-provisioning-tools' cache_check.
 *
 *   0  no damage found (tolerated findings, such as a torn journal tail,
 *      are printed but do not count), or the device is blank
 *   1  damage found (each finding is printed with its class), or
 *      needs_check not cleared because of it
 *   2  usage error, the device is in use (see --force), or it could not
 *      be read
 */
#include <getopt.h>
#include <unistd.h>

#include "util/crc64.h"
#include "check/check.h"
#include "devio.h"

#define PROG "bcache_check"

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] DEVICE-OR-IMAGE\n"
"Check the metadata of a bcache cache device without writing to it.\n"
"\n"
"      --clear-needs-check-flag\n"
"                           when the cache checks clean, clear the flag a\n"
"                           failed table left (the one write this tool\n"
"                           makes: the superblock); the target refuses a\n"
"                           cache with the flag set\n"
"      --super-block-only   check only the superblock\n"
"      --skip-journal       stop after the superblock (the journal leads to\n"
"                           everything else)\n"
"      --skip-prios         do not read the prio/gen chain (no stale checks)\n"
"      --skip-uuids         do not read the UUID table\n"
"      --skip-btree         do not walk the btree\n"
"      --skip-mappings      the same (thin-provisioning-tools' name)\n"
"      --force              check a device in use (held by a table,\n"
"                           mounted): what is read may be inconsistent\n"
BCH_CLI_COMMON_HELP
"\n"
"A blank device (sectors 0-15 all zero) is reported as such: the target\n"
"formats it on first use.  A torn journal tail is reported as tolerated.\n"
"Exit status: 0 clean or blank, 1 damage found (needs_check then stays\n"
"set), 2 usage error, device in use or I/O error.\n");
}

static void on_finding(void *ctx, enum bch_damage cls, const char *msg)
{
	(void)ctx;
	bch_out("%s: %s: %s\n", bch_damage_tolerated(cls) ? "tolerated" :
		"damage", bch_damage_names[cls], msg);
}

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	bch_out("note: %s\n", msg);
}

/*
 * Clear needs_check in the superblock @r read, on a device opened for
 * writing (so not in use).  The superblock's seq goes up, as with every
 * superblock the target writes.
 */
static int clear_needs_check(const char *path, const struct bch_check_result *r)
{
	struct bch_sb sb = r->sb;
	struct bch_dev d;
	int err;

	if (bch_dev_open(&d, path, BCH_OPEN_WRITE))
		return BCH_EXIT_USAGE;
	sb.flags &= ~BCH_CACHE_NEEDS_CHECK;
	sb.seq++;
	err = bch_sb_write(&d.io, &sb);
	if (!err && fsync(d.fd))
		err = -errno;
	bch_dev_close(&d);
	if (err) {
		bch_err("%s: %s while clearing needs_check", path, strerror(-err));
		return BCH_EXIT_USAGE;
	}
	bch_out("%s: needs_check cleared\n", path);
	return BCH_EXIT_OK;
}

static void summary(const struct bch_check_result *r)
{
	char set[37];

	bch_uuid_unparse(r->sb.set_uuid, set);
	bch_out("set %s: %llu buckets of %u sectors, block %u sectors\n", set,
		r->sb.nbuckets, r->sb.bucket_size, r->sb.block_size);
	if (!r->synchronous)
		return;
	bch_out("journal: %llu entries, replay %llu-%llu with %llu keys\n",
		r->journal_entries, r->last_seq, r->newest_seq,
		r->journal_keys);
	bch_out("prios: %llu buckets; uuids: %llu in use\n", r->prio_buckets,
		r->uuids_in_use);
	bch_out("btree: root level %u, %llu nodes, %llu keys; buckets: %llu btree, %llu data, %llu dirty\n",
		r->root_level, r->btree_nodes, r->btree_keys, r->buckets_btree,
		r->buckets_data, r->buckets_dirty);
}

int main(int argc, char **argv)
{
	enum { OPT_SB = 256, OPT_SKIP_J, OPT_SKIP_P, OPT_SKIP_U, OPT_SKIP_B,
	       OPT_FORCE, OPT_CLEAR };
	static const struct option opts[] = {
		{ "super-block-only", no_argument, NULL, OPT_SB },
		{ "skip-journal", no_argument, NULL, OPT_SKIP_J },
		{ "skip-prios", no_argument, NULL, OPT_SKIP_P },
		{ "skip-uuids", no_argument, NULL, OPT_SKIP_U },
		{ "skip-btree", no_argument, NULL, OPT_SKIP_B },
		{ "skip-mappings", no_argument, NULL, OPT_SKIP_B },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "clear-needs-check-flag", no_argument, NULL, OPT_CLEAR },
		BCH_CLI_COMMON_OPTS
	};
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_check_ops ops = {
		.finding = on_finding, .note = on_note,
	};
	unsigned int flags = 0;
	bool clear = false;
	struct bch_cli cli;
	struct bch_dev d;
	int c, r;

	bch_cli_init(&cli, PROG, usage);
	bch_crc64_init();
	while ((c = getopt_long(argc, argv, BCH_CLI_COMMON_SHORT, opts,
				NULL)) != -1) {
		switch (c) {
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
		case OPT_FORCE:
			flags |= BCH_OPEN_FORCE;
			break;
		case OPT_CLEAR:
			clear = true;
			break;
		default:
			r = bch_cli_common(&cli, c);
			if (r >= 0)
				return r;
		}
	}
	r = bch_cli_operands(&cli, argc - optind, 1, 1,
			     "DEVICE-OR-IMAGE (exactly one)");
	if (r >= 0)
		return r;
	if (clear && (flags & BCH_OPEN_FORCE || o.super_block_only ||
		      o.skip_journal || o.skip_prios || o.skip_uuids ||
		      o.skip_btree)) {
		bch_err("--clear-needs-check-flag needs a whole check of a device not in use: not with --force or --skip-*/--super-block-only");
		return BCH_EXIT_USAGE;
	}
	if (bch_dev_open(&d, argv[optind], flags))
		return BCH_EXIT_USAGE;
	r = bch_check(&d.io, &o, &ops, &res);
	bch_dev_close(&d);
	if (r) {
		bch_err("%s: %s while checking", argv[optind], strerror(-r));
		return BCH_EXIT_USAGE;
	}
	if (res.blank) {
		bch_out("%s: blank (sectors 0-15 are zero): no bcache metadata; the target formats it on first use\n",
			argv[optind]);
		return BCH_EXIT_OK;
	}
	if (!res.damage[BCH_DMG_SUPERBLOCK])
		summary(&res);
	bch_out("%s: %u damage findings, %u tolerated, %u notes\n",
		argv[optind], res.nr_damage, res.nr_tolerated, res.nr_notes);
	if (res.nr_damage) {
		if (clear && res.needs_check)
			bch_err("%s: damage found: needs_check stays set",
				argv[optind]);
		return BCH_EXIT_REFUSED;
	}
	if (clear && res.needs_check)
		return clear_needs_check(argv[optind], &res);
	if (clear)
		bch_out("%s: needs_check is not set\n", argv[optind]);
	return BCH_EXIT_OK;
}
