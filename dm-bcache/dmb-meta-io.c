// SPDX-License-Identifier: GPL-2.0
/*
 * Synchronous metadata I/O over dm-io, for the constructor and for the
 * core's formatter and checker (struct bch_meta_io); and the synchronous
 * data I/O of write-back (dmb_dev_rw()).  Buffers may be
 * kmalloc'ed or vmalloc'ed (core buffers come from kvmalloc).  Only
 * process context may call these: they sleep until the I/O completes.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/dm-io.h>
#include <linux/mm.h>

#include "dmb-target.h"

int dmb_dev_rw(struct dm_io_client *client, struct block_device *bdev,
	       blk_opf_t opf, u64 sector, void *buf, size_t len)
{
	struct dm_io_region where = {
		.bdev = bdev,
		.sector = sector,
		.count = len >> SECTOR_SHIFT,
	};
	struct dm_io_request req = {
		.bi_opf = opf | REQ_SYNC,
		.notify.fn = NULL,
		.client = client,
	};
	unsigned long error_bits = 0;
	int r;

	if (WARN_ON_ONCE(len & (SECTOR_SIZE - 1)))
		return -EINVAL;
	if (is_vmalloc_addr(buf)) {
		req.mem.type = DM_IO_VMA;
		req.mem.ptr.vma = buf;
	} else {
		req.mem.type = DM_IO_KMEM;
		req.mem.ptr.addr = buf;
	}
	r = dm_io(&req, 1, &where, &error_bits, IOPRIO_DEFAULT);
	if (!r && error_bits)
		r = -EIO;
	return r;
}

static int meta_rw(struct dmb_meta_dev *m, blk_opf_t opf, u64 sector,
		   void *buf, size_t len)
{
	return dmb_dev_rw(m->client, m->bdev, opf | REQ_META, sector, buf, len);
}

static int meta_read(void *ctx, u64 sector, void *buf, size_t len)
{
	return meta_rw(ctx, REQ_OP_READ, sector, buf, len);
}

static int meta_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	return meta_rw(ctx, REQ_OP_WRITE | REQ_FUA, sector, (void *)buf, len);
}

/*
 * The core flushes before every journal entry and commit, so that no key
 * reaches the disk before the data it names.  A clean key names the
 * origin's copy too: were the cache's journal durable and the origin's
 * write still in its volatile cache, a power cut would leave the cache
 * serving data the origin lost, until the bucket is reclaimed and the
 * range silently reverts.  So the origin is flushed first when clean
 * keys went in since its last flush.
 */
static int meta_flush(void *ctx)
{
	struct dmb_meta_dev *m = ctx;
	int r;

	if (m->flush_first && READ_ONCE(m->flush_first_due)) {
		WRITE_ONCE(m->flush_first_due, false);
		r = blkdev_issue_flush(m->flush_first);
		if (r) {
			WRITE_ONCE(m->flush_first_due, true);
			return r;
		}
	}
	return blkdev_issue_flush(m->bdev);
}

int dmb_meta_dev_init(struct dmb_meta_dev *m, struct block_device *bdev)
{
	m->client = dm_io_client_create();
	if (IS_ERR(m->client)) {
		int r = PTR_ERR(m->client);

		m->client = NULL;
		return r;
	}
	m->bdev = bdev;
	m->io.ctx = m;
	m->io.sectors = bdev_nr_sectors(bdev);
	m->io.lbs = bdev_logical_block_size(bdev);
	m->io.read = meta_read;
	m->io.write = meta_write;
	m->io.flush = meta_flush;
	return 0;
}

void dmb_meta_dev_exit(struct dmb_meta_dev *m)
{
	if (m->client)
		dm_io_client_destroy(m->client);
	m->client = NULL;
}
