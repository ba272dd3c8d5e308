// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_probe: say what the bcache target would decide about an origin,
 * using the same rule (core/format/origin.h) as the module's constructor.
 *
 *   bcache_probe [--layout auto|raw|backing] DEVICE-OR-IMAGE
 *
 * Prints the layout, the data offset and the data area's size (the longest
 * table the target accepts), or the refusal the target would give.
 * Exit codes: 0 usable, 1 the target would refuse it, 2 usage error, the
 * device is in use (see --force) or cannot be read.
 */
#include "util/crc64.h"
#include "mkfs/format.h"
#include "format/origin.h"
#include "devio.h"

#define PROG "bcache_probe"

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] DEVICE-OR-IMAGE\n"
"Say how the bcache target would use DEVICE as its origin: the layout it\n"
"would choose and the data offset, or the refusal it would give.\n"
"\n"
"  -l, --layout auto|raw|backing  the table's origin_layout (default auto)\n"
"      --force              probe a device in use (held by a table, mounted)\n"
BCH_CLI_COMMON_HELP
"\n"
"Exit status: 0 usable, 1 the target would refuse it, 2 usage error,\n"
"device in use or I/O error.\n");
}

int main(int argc, char **argv)
{
	enum { OPT_FORCE = 256 };
	static const struct option opts[] = {
		{ "layout", required_argument, NULL, 'l' },
		{ "force", no_argument, NULL, OPT_FORCE },
		BCH_CLI_COMMON_OPTS
	};
	enum bch_origin_request req = BCH_ORIGIN_AUTO;
	struct bch_origin_info info;
	enum bch_origin_layout layout;
	unsigned int flags = 0;
	int i;
	struct bch_cli cli;
	struct bch_dev d;
	const char *err;
	char sig[256], uuid[128];
	bool have_sig;
	u8 *buf;
	u64 off, sectors;
	int c, r;

	bch_cli_init(&cli, PROG, usage);
	while ((c = getopt_long(argc, argv, "l:" BCH_CLI_COMMON_SHORT, opts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
			i = bch_cli_choice("--layout", optarg,
					   bch_origin_request_names,
					   BCH_NR_ORIGIN_REQUESTS);
			if (i < 0)
				return BCH_EXIT_USAGE;
			req = i;
			break;
		case OPT_FORCE:
			flags |= BCH_OPEN_FORCE;
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
	bch_crc64_init();
	if (bch_dev_open(&d, argv[optind], flags))
		return BCH_EXIT_USAGE;
	/* Too small to hold a superblock: probed as if it held none. */
	buf = bch_zalloc(BCH_SB_BYTES);
	if (!buf) {
		bch_dev_close(&d);
		return BCH_EXIT_USAGE;
	}
	if (d.sectors >= BCH_SB_SECTOR + BCH_SB_BYTES / 512 &&
	    bch_sb_read(&d.io, buf)) {
		bch_err("%s: cannot read the superblock: %s", d.path,
			strerror(errno));
		bch_free(buf);
		bch_dev_close(&d);
		return BCH_EXIT_USAGE;
	}
	sectors = d.sectors;
	bch_origin_probe((struct bch_sb_disk *)buf, d.sectors, d.lbs, &info);
	bch_free(buf);
	have_sig = bch_dev_signature(&d, sig, sizeof(sig), uuid, sizeof(uuid));
	bch_dev_close(&d);
	if (info.probe == BCH_PROBE_INVALID)
		bch_out("superblock: invalid (%s)\n", info.invalid_reason);
	err = bch_origin_choose(req, &info, false, &layout, &off);
	if (err) {
		bch_out("refused: %s\n", err);
		return BCH_EXIT_REFUSED;
	}
	if (off >= sectors) {
		bch_out("refused: no data area: the device holds %llu sectors, data would start at %llu\n",
			(unsigned long long)sectors, (unsigned long long)off);
		return BCH_EXIT_REFUSED;
	}
	/* data_sectors is the longest table the target accepts. */
	bch_out("layout: %s\ndata_offset: %llu\ndata_sectors: %llu\n",
		bch_origin_layout_name(layout), (unsigned long long)off,
		(unsigned long long)(sectors - off));
	/*
	 * Raw, the origin shows the cached device's own file system: a mount
	 * by UUID or label could pick the origin, stale while data is dirty.
	 */
	if (layout == BCH_LAYOUT_RAW && have_sig)
		bch_out("note: the origin holds %s%s%s; the cached device shows the same, so mount it by its dm name (/dev/mapper/...), not by UUID or label\n",
			sig, uuid[0] ? " with UUID " : "", uuid);
	return BCH_EXIT_OK;
}
