/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace devices and images for the tools: open a block device or an
 * image file, learn its size and logical block size, and expose it to the
 * core as a struct bch_meta_io over pread/pwrite/fsync.  Also the UUID
 * text form the tools print and accept.
 */
#ifndef DM_BCACHE_USER_DEVIO_H
#define DM_BCACHE_USER_DEVIO_H

#include "platform.h"

struct bch_dev {
	int fd;
	const char *path;
	u64 sectors;
	unsigned int lbs;
	unsigned int blksize;	/* st_blksize, make-bcache's default for files */
	bool is_file;
	struct bch_meta_io io;
};

/* 0 on success; on failure prints "PROG: PATH: reason" and returns -1. */
int bch_dev_open(struct bch_dev *d, const char *prog, const char *path,
		 bool writable);
void bch_dev_close(struct bch_dev *d);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; @out holds 37 bytes. */
void bch_uuid_unparse(const u8 uuid[16], char *out);
int bch_uuid_parse(const char *s, u8 uuid[16]);
void bch_uuid_generate(u8 uuid[16]);

/* A label as printable text: stops at NUL, escapes the rest. */
void bch_label_text(const u8 *label, size_t len, char *out, size_t outlen);

#endif
