// SPDX-License-Identifier: GPL-2.0
/* Devices, images and UUID text for the tools; see devio.h. */
#define _GNU_SOURCE			/* O_DIRECT */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <blkid/blkid.h>

#include "devio.h"

static int dev_read(void *ctx, u64 sector, void *buf, size_t len)
{
	struct bch_dev *d = ctx;
	ssize_t r = pread(d->fd, buf, len, (off_t)(sector * 512));

	return r == (ssize_t)len ? 0 : -EIO;
}

static int dev_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	struct bch_dev *d = ctx;
	ssize_t r = pwrite(d->fd, buf, len, (off_t)(sector * 512));

	return r == (ssize_t)len ? 0 : -EIO;
}

static int dev_flush(void *ctx)
{
	struct bch_dev *d = ctx;

	return fsync(d->fd) ? -EIO : 0;
}

/* The dm name of block device @name ("dm-3"), if it is one. */
static bool dm_name(const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/sys/block/%s/dm/name", name);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(out, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\n")] = 0;
	return ok;
}

/* Where device @dev is mounted, from mountinfo's major:minor field. */
static bool mount_point(dev_t dev, char *out, size_t len)
{
	char line[4096], want[32], mnt[PATH_MAX];
	unsigned int id, parent;
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "%u:%u", major(dev), minor(dev));
	while (!found && fgets(line, sizeof(line), f)) {
		char mm[32];

		if (sscanf(line, "%u %u %31s %*s %4095s", &id, &parent, mm,
			   mnt) == 4 && !strcmp(mm, want)) {
			snprintf(out, len, "%s", mnt);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Why block device @dev refuses an exclusive open, as well as we can tell. */
static void describe_holder(dev_t dev, char *out, size_t len)
{
	char path[PATH_MAX], name[128], mnt[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders",
		 major(dev), minor(dev));
	dir = opendir(path);
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		if (dm_name(e->d_name, name, sizeof(name)))
			snprintf(out, len, "held by dm device %s (%s)", name,
				 e->d_name);
		else
			snprintf(out, len, "held by %s", e->d_name);
		closedir(dir);
		return;
	}
	if (dir)
		closedir(dir);
	if (mount_point(dev, mnt, sizeof(mnt)))
		snprintf(out, len, "mounted on %s", mnt);
	else
		snprintf(out, len,
			 "in use (opened exclusively: swap, the bcache driver or another program)");
}

/* Block device @path in use? Tried with an exclusive open, then closed. */
static bool blk_busy(const char *path, char *why, size_t len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (errno != EBUSY || stat(path, &st))
		return false;
	describe_holder(st.st_rdev, why, len);
	return true;
}

/*
 * A loop device reading the same file as @st, as "/dev/loopN"; @busy says
 * whether that loop device is itself in use (a table or a mount on it).
 */
static bool file_loop(const struct stat *st, char *loop, size_t len,
		      bool *busy, char *why, size_t wlen)
{
	char path[PATH_MAX], file[PATH_MAX];
	struct dirent *e;
	struct stat bst;
	bool found = false;
	DIR *dir = opendir("/sys/block");
	FILE *f;

	while (dir && !found && (e = readdir(dir))) {
		if (strncmp(e->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file",
			 e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(file, sizeof(file), f)) {
			file[strcspn(file, "\n")] = 0;
			if (!stat(file, &bst) && bch_same_file(&bst, st)) {
				snprintf(loop, len, "/dev/%s", e->d_name);
				found = true;
			}
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	if (found) {
		*busy = blk_busy(loop, why, wlen);
		if (!*busy)
			snprintf(why, wlen, "not in use");
	}
	return found;
}

bool bch_same_file(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) || S_ISBLK(b->st_mode))
		return S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode) &&
		       a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* 0 if @path may be opened as @flags asks, else the exit code, said why. */
static int refuse_in_use(struct bch_dev *d, unsigned int flags)
{
	bool writer = flags & BCH_OPEN_WRITE;
	char why[PATH_MAX + 512], loop[300], inner[PATH_MAX + 64];
	bool busy = false;

	if (S_ISBLK(d->st.st_mode)) {
		if (!blk_busy(d->path, why, sizeof(why)))
			return 0;
		busy = true;
	} else if (file_loop(&d->st, loop, sizeof(loop), &busy, inner,
			     PATH_MAX)) {
		if (writer && !busy) {
			bch_err("%s: is read by loop device %s; detach it (losetup -d) before writing",
				d->path, loop);
			return BCH_EXIT_REFUSED;
		}
		if (busy)
			snprintf(why, sizeof(why), "read by loop device %.32s, %s",
				 loop, inner);
	}
	if (!busy)
		return 0;
	if (writer) {
		bch_err("%s: is %s; refusing to write a device in use", d->path,
			why);
		return BCH_EXIT_REFUSED;
	}
	if (!(flags & BCH_OPEN_FORCE)) {
		bch_err("%s: is %s; a live cache changes under the reader, so what it reads may be inconsistent (--force reads it anyway)",
			d->path, why);
		return BCH_EXIT_REFUSED;
	}
	bch_err("warning: %s: is %s; reading it anyway (--force)", d->path,
		why);
	return 0;
}

int bch_dev_open(struct bch_dev *d, const char *path, unsigned int flags)
{
	bool writable = flags & BCH_OPEN_WRITE;
	int ssz = 512, r;

	memset(d, 0, sizeof(*d));
	d->path = path;
	d->fd = -1;
	d->direct_fd = -1;
	if (stat(path, &d->st)) {
		bch_err("%s: %s", path, strerror(errno));
		return BCH_EXIT_USAGE;
	}
	if (!S_ISBLK(d->st.st_mode) && !S_ISREG(d->st.st_mode)) {
		bch_err("%s: %s, not a block device or image file", path,
			S_ISDIR(d->st.st_mode) ? "is a directory" :
			"is a special file");
		return BCH_EXIT_USAGE;
	}
	r = refuse_in_use(d, flags);
	if (r)
		return r;
	/*
	 * A writer keeps its exclusive claim while it writes, so nothing can
	 * mount or map the device in between.
	 */
	d->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC |
		     (writable && S_ISBLK(d->st.st_mode) ? O_EXCL : 0));
	if (d->fd < 0 || fstat(d->fd, &d->st)) {
		bch_err("%s: %s", path, errno == EBUSY ?
			"became busy while opening it" : strerror(errno));
		if (d->fd >= 0)
			close(d->fd);
		d->fd = -1;
		return errno == EBUSY ? BCH_EXIT_REFUSED : BCH_EXIT_USAGE;
	}
	if (S_ISBLK(d->st.st_mode)) {
		unsigned long long bytes;

		if (ioctl(d->fd, BLKGETSIZE64, &bytes) ||
		    ioctl(d->fd, BLKSSZGET, &ssz)) {
			bch_err("%s: cannot get size: %s", path,
				strerror(errno));
			bch_dev_close(d);
			return BCH_EXIT_USAGE;
		}
		d->sectors = bytes / 512;
	} else {
		d->sectors = d->st.st_size / 512;
		d->is_file = true;
	}
	d->lbs = ssz;
	d->blksize = d->st.st_blksize;
	d->io.ctx = d;
	d->io.sectors = d->sectors;
	d->io.lbs = d->lbs;
	d->io.read = dev_read;
	d->io.write = writable ? dev_write : NULL;
	d->io.flush = writable ? dev_flush : NULL;
	return 0;
}

/* "an ext4 file system (LABEL=x)" for what libblkid reported. */
static void signature_text(blkid_probe pr, char *out, size_t len)
{
	const char *type = NULL, *usage = NULL, *label = NULL;

	if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
		snprintf(out, len, "a %s partition table", type);
		return;
	}
	blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
	if (type && !strcmp(type, "bcache")) {
		snprintf(out, len, "a bcache superblock");
		return;
	}
	blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
	blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
	snprintf(out, len, "a%s %s %s%s%s%s", type && strchr("aeiou", type[0]) ?
		 "n" : "", type ? type : "unknown",
		 usage && !strcmp(usage, "filesystem") ? "file system" :
		 usage && !strcmp(usage, "raid") ? "RAID member" :
		 usage && !strcmp(usage, "crypto") ? "encrypted volume" :
		 "signature", label ? " (label \"" : "", label ? label : "",
		 label ? "\")" : "");
}

static blkid_probe new_probe(struct bch_dev *d)
{
	blkid_probe pr = blkid_new_probe();

	if (!pr || blkid_probe_set_device(pr, d->fd, 0, 0)) {
		if (pr)
			blkid_free_probe(pr);
		return NULL;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					  BLKID_SUBLKS_USAGE |
					  BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
					  BLKID_SUBLKS_MAGIC);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	return pr;
}

int bch_dev_claim(struct bch_dev *d, bool force, bool wipe_bcache)
{
	char what[256];
	const char *type;
	int r;
	blkid_probe pr = new_probe(d);

	if (!pr) {
		bch_err("%s: cannot probe for signatures", d->path);
		return BCH_EXIT_USAGE;
	}
	r = blkid_do_safeprobe(pr);
	if (r == -2 && !force) {
		bch_err("%s: holds more than one signature (see wipefs %s); use --force to overwrite them",
			d->path, d->path);
		r = BCH_EXIT_REFUSED;
		goto out;
	}
	if (r == 0) {
		bool bcache = !blkid_probe_lookup_value(pr, "TYPE", &type,
							NULL) &&
			      !strcmp(type, "bcache");

		signature_text(pr, what, sizeof(what));
		if (!force && !(bcache && wipe_bcache)) {
			bch_err("%s: holds %s; use %s to overwrite it", d->path,
				what, bcache ? "--wipe-bcache" : "--force");
			r = BCH_EXIT_REFUSED;
			goto out;
		}
	} else if (r < 0 && r != -2) {
		bch_err("%s: probing for signatures failed", d->path);
		r = BCH_EXIT_USAGE;
		goto out;
	}
	r = 0;
out:
	blkid_free_probe(pr);
	return r;
}

bool bch_dev_signature(struct bch_dev *d, char *what, size_t len,
		       char *uuid, size_t ulen)
{
	blkid_probe pr = new_probe(d);
	const char *u = NULL;
	bool found;

	if (!pr)
		return false;
	found = blkid_do_safeprobe(pr) == 0;
	if (found) {
		signature_text(pr, what, len);
		blkid_probe_lookup_value(pr, "UUID", &u, NULL);
		snprintf(uuid, ulen, "%s", u ? u : "");
	}
	blkid_free_probe(pr);
	return found;
}

int bch_dev_wipe(struct bch_dev *d)
{
	blkid_probe pr = new_probe(d);
	char what[256];
	int r = 0, wiped = 0;

	if (!pr) {
		bch_err("%s: cannot probe for signatures", d->path);
		return BCH_EXIT_USAGE;
	}
	while (blkid_do_probe(pr) == 0 && wiped++ < 64) {
		signature_text(pr, what, sizeof(what));
		if (blkid_do_wipe(pr, 0)) {
			bch_err("%s: cannot wipe %s: %s", d->path, what,
				strerror(errno));
			r = BCH_EXIT_USAGE;
			break;
		}
		bch_out("%s: wiped %s\n", d->path, what);
	}
	blkid_free_probe(pr);
	return r;
}

void bch_dev_close(struct bch_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->direct_fd >= 0)
		close(d->direct_fd);
	d->fd = -1;
	d->direct_fd = -1;
}

int bch_dev_read_direct(struct bch_dev *d, u64 sector, void *buf, size_t len)
{
	size_t align = max_t(size_t, d->lbs, 4096);
	void *bounce = buf;
	ssize_t r;

	if (!d->direct_tried) {
		d->direct_tried = true;
		d->direct_fd = open(d->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	}
	if (d->direct_fd < 0)
		return d->io.read(d, sector, buf, len);
	if ((uintptr_t)buf % align) {
		bounce = aligned_alloc(align, DIV_ROUND_UP(len, align) * align);
		if (!bounce)
			return -EIO;
	}
	r = pread(d->direct_fd, bounce, len, (off_t)(sector * 512));
	if (r < 0 && errno == EINVAL) {
		/* Alignment O_DIRECT will not take: the plain descriptor. */
		close(d->direct_fd);
		d->direct_fd = -1;
		if (bounce != buf)
			free(bounce);
		return d->io.read(d, sector, buf, len);
	}
	if (bounce != buf) {
		if (r == (ssize_t)len)
			memcpy(buf, bounce, len);
		free(bounce);
	}
	return r == (ssize_t)len ? 0 : -EIO;
}

void bch_uuid_unparse(const u8 uuid[16], char *out)
{
	static const char hex[] = "0123456789abcdef";
	int i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[uuid[i] >> 4];
		out[o++] = hex[uuid[i] & 15];
	}
	out[o] = 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int bch_uuid_parse(const char *s, u8 uuid[16])
{
	int i, n = 0;

	if (strlen(s) != 36)
		return -1;
	for (i = 0; i < 36; i++) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			continue;
		}
		hi = hexval(s[i]);
		lo = hexval(s[++i]);
		if (hi < 0 || lo < 0)
			return -1;
		uuid[n++] = hi << 4 | lo;
	}
	return 0;
}

void bch_uuid_generate(u8 uuid[16])
{
	u64 a = bch_random_u64(), b = bch_random_u64();

	memcpy(uuid, &a, 8);
	memcpy(uuid + 8, &b, 8);
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
}

void bch_label_text(const u8 *label, size_t len, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < len && label[i] && o + 5 < outlen; i++) {
		if (label[i] >= 0x20 && label[i] < 0x7f && label[i] != '"' &&
		    label[i] != '\\')
			out[o++] = label[i];
		else
			o += snprintf(out + o, outlen - o, "\\x%02x", label[i]);
	}
	out[o] = 0;
}
