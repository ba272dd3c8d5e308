// SPDX-License-Identifier: GPL-2.0
/* Devices, images and UUID text for the tools; see devio.h. */
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

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

int bch_dev_open(struct bch_dev *d, const char *prog, const char *path,
		 bool writable)
{
	struct stat st;
	int ssz = 512;

	memset(d, 0, sizeof(*d));
	d->path = path;
	d->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (d->fd < 0 || fstat(d->fd, &st)) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		if (d->fd >= 0)
			close(d->fd);
		return -1;
	}
	if (S_ISBLK(st.st_mode)) {
		unsigned long long bytes;

		if (ioctl(d->fd, BLKGETSIZE64, &bytes) ||
		    ioctl(d->fd, BLKSSZGET, &ssz)) {
			fprintf(stderr, "%s: %s: cannot get size: %s\n", prog,
				path, strerror(errno));
			close(d->fd);
			return -1;
		}
		d->sectors = bytes / 512;
	} else if (S_ISREG(st.st_mode)) {
		d->sectors = st.st_size / 512;
		d->is_file = true;
	} else {
		fprintf(stderr, "%s: %s: not a block device or regular file\n",
			prog, path);
		close(d->fd);
		return -1;
	}
	d->lbs = ssz;
	d->blksize = st.st_blksize;
	d->io.ctx = d;
	d->io.sectors = d->sectors;
	d->io.lbs = d->lbs;
	d->io.read = dev_read;
	d->io.write = writable ? dev_write : NULL;
	d->io.flush = writable ? dev_flush : NULL;
	return 0;
}

void bch_dev_close(struct bch_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
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
