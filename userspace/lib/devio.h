/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace devices and images for the tools: open a block device or an
 * image file, learn its size and logical block size, and expose it to the
 * core as a struct bch_meta_io over pread/pwrite/fsync.  Also the UUID
 * text form the tools print and accept.
 */
#ifndef DM_BCACHE_USER_DEVIO_H
#define DM_BCACHE_USER_DEVIO_H

#include <sys/stat.h>
#include "util/platform.h"
#include "cli.h"

struct bch_dev {
	int fd;
	const char *path;
	u64 sectors;
	unsigned int lbs;
	unsigned int blksize;	/* st_blksize, make-bcache's default for files */
	bool is_file;
	struct stat st;
	struct bch_meta_io io;
	int direct_fd;		/* bch_dev_read_direct()'s; -1 none */
	bool direct_tried;
};

/* How a tool means to use a device; see bch_dev_open(). */
enum {
	BCH_OPEN_WRITE = 1 << 0,	/* the tool writes it */
	BCH_OPEN_FORCE = 1 << 1,	/* a reader may read a device in use */
};

/*
 * Open a block device or image file.  Block devices are opened O_EXCL, so
 * a device that is mounted, held by a dm table, md or the bcache driver is
 * refused with its holder named; a file is treated as in use when a loop
 * device in use reads it (a writer refuses any loop device over it).  A
 * reader with BCH_OPEN_FORCE reads a device in use after a warning; a
 * writer never writes one.
 *
 * Returns 0, or BCH_EXIT_REFUSED (in use) or BCH_EXIT_USAGE (cannot be
 * opened, a directory, ...) after saying why via bch_err().
 */
int bch_dev_open(struct bch_dev *d, const char *path, unsigned int flags);
void bch_dev_close(struct bch_dev *d);

/*
 * Before a writer overwrites @d: probe it with libblkid for any signature
 * (file system, partition table, LVM PV, md member, swap, ... and an old
 * bcache superblock).  A bcache superblock needs @wipe_bcache or @force,
 * anything else @force.  Returns 0, or BCH_EXIT_REFUSED / BCH_EXIT_USAGE
 * after naming what was found.  Writes nothing.
 */
int bch_dev_claim(struct bch_dev *d, bool force, bool wipe_bcache);

/*
 * Wipe every signature libblkid finds on @d (as mkfs does, so that no
 * stale one survives beside the new format), saying what it wiped.
 * Call only after bch_dev_claim() gave permission.
 */
int bch_dev_wipe(struct bch_dev *d);

/*
 * The signature libblkid finds on @d, described as bch_dev_claim() names
 * it ("an ext4 file system (label "x")"), with its UUID if it has one.
 * false when there is none (or the probe fails).
 */
bool bch_dev_signature(struct bch_dev *d, char *what, size_t len,
		       char *uuid, size_t ulen);

/*
 * Read @len bytes at @sector past the page cache (O_DIRECT, through an
 * aligned bounce buffer when @buf is not aligned): a read error then
 * costs only the logical blocks that fail, not the page or readahead
 * window around them, and a retry reads the device again.  Where
 * O_DIRECT is refused (an image on tmpfs) the plain descriptor serves.
 * 0 or -EIO.
 */
int bch_dev_read_direct(struct bch_dev *d, u64 sector, void *buf, size_t len);

/* Whether @a and @b name the same device or file. */
bool bch_same_file(const struct stat *a, const struct stat *b);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; @out holds 37 bytes. */
void bch_uuid_unparse(const u8 uuid[16], char *out);
int bch_uuid_parse(const char *s, u8 uuid[16]);
void bch_uuid_generate(u8 uuid[16]);

/* A label as printable text: stops at NUL, escapes the rest. */
void bch_label_text(const u8 *label, size_t len, char *out, size_t outlen);

#endif
