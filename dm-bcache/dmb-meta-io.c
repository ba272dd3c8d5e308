// SPDX-License-Identifier: GPL-2.0
/*
 * Synchronous metadata reads, for the constructor.  Only process context
 * may call these: they sleep until the I/O completes.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>

#include "dmb-target.h"

/* Read @len bytes (at most a page, a multiple of 512) at @sector. */
int dmb_read_sectors(struct block_device *bdev, sector_t sector,
		     void *buf, unsigned int len)
{
	struct page *page;
	struct bio *bio;
	int r;

	if (WARN_ON_ONCE(len > PAGE_SIZE || len & (SECTOR_SIZE - 1)))
		return -EINVAL;

	page = alloc_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	bio = bio_alloc(bdev, 1, REQ_OP_READ | REQ_META | REQ_SYNC, GFP_KERNEL);
	bio->bi_iter.bi_sector = sector;
	__bio_add_page(bio, page, len, 0);

	r = submit_bio_wait(bio);
	if (!r)
		memcpy_from_page(buf, page, 0, len);
	bio_put(bio);
	__free_page(page);
	return r;
}
