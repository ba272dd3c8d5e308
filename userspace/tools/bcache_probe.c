// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_probe: say what the bcache target would decide about an origin,
 * using the same rule (core/origin.h) as the module's constructor.
 *
 *   bcache_probe [--layout auto|raw|backing] DEVICE-OR-IMAGE
 *
 * Prints the layout and data offset, or the refusal the target would give.
 * Exit codes: 0 usable, 1 the target would refuse it, 2 usage or I/O error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "crc64.h"
#include "origin.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: bcache_probe [--layout auto|raw|backing] DEVICE\n");
}

static int dev_geometry(int fd, unsigned long long *sectors, unsigned int *lbs)
{
	struct stat st;
	int ssz = 512;

	if (fstat(fd, &st))
		return -1;
	if (S_ISBLK(st.st_mode)) {
		unsigned long long bytes;

		if (ioctl(fd, BLKGETSIZE64, &bytes) || ioctl(fd, BLKSSZGET, &ssz))
			return -1;
		*sectors = bytes / 512;
	} else {
		*sectors = st.st_size / 512;
	}
	*lbs = ssz;
	return 0;
}

int main(int argc, char **argv)
{
	enum bch_origin_request req = BCH_ORIGIN_AUTO;
	static unsigned char buf[BCH_SB_BYTES];
	struct bch_origin_info info;
	enum bch_origin_layout layout;
	unsigned long long sectors;
	unsigned int lbs, i;
	const char *err, *path;
	u64 off;
	int fd, found;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "--layout")) {
		found = 0;
		for (i = 0; i < BCH_NR_ORIGIN_REQUESTS; i++) {
			if (!strcmp(argv[2], bch_origin_request_names[i])) {
				req = i;
				found = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "bcache_probe: unknown layout '%s'\n", argv[2]);
			return 2;
		}
		path = argv[3];
	} else if (argc == 2 && argv[1][0] != '-') {
		path = argv[1];
	} else {
		usage(stderr);
		return 2;
	}

	bch_crc64_init();
	fd = open(path, O_RDONLY);
	if (fd < 0 || dev_geometry(fd, &sectors, &lbs)) {
		perror(path);
		return 2;
	}
	memset(buf, 0, sizeof(buf));
	if (sectors >= BCH_SB_SECTOR + BCH_SB_BYTES / 512 &&
	    pread(fd, buf, sizeof(buf), BCH_SB_SECTOR * 512) != sizeof(buf)) {
		perror(path);
		return 2;
	}
	close(fd);

	bch_origin_probe((struct bch_sb_disk *)buf, sectors, lbs, &info);
	if (info.probe == BCH_PROBE_INVALID)
		printf("superblock: invalid (%s)\n", info.invalid_reason);
	err = bch_origin_choose(req, &info, false, &layout, &off);
	if (err) {
		printf("refused: %s\n", err);
		return 1;
	}
	printf("layout: %s\ndata_offset: %llu\n", bch_origin_layout_name(layout),
	       (unsigned long long)off);
	return 0;
}
