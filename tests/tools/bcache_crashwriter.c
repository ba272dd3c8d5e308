// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_crashwriter: a writer for power-cut tests that records which of
 * its writes a completed flush made durable, and a checker for after the
 * cut.
 *
 *   bcache_crashwriter write DEV LOG BLOCKS SEED [SECONDS]
 *   bcache_crashwriter verify DEV LOG BLOCKS
 *
 * write: 4 KiB O_DIRECT writes of random blocks among the first BLOCKS of
 * DEV, each block filled with copies of (magic, block, generation), the
 * generation being the write's number.  After every BATCH writes it
 * calls fdatasync(DEV); once that returns, it appends a record naming
 * the batch's (block, generation) pairs to LOG (O_DIRECT | O_DSYNC, one
 * 4 KiB record per batch, numbered), so the log lists exactly the writes
 * acknowledged before a completed flush.  It runs until SECONDS pass (or
 * forever: the test cuts the power under it).
 *
 * verify: replays LOG to learn each block's newest durable generation,
 * then reads every block of DEV: a block must hold one whole write of
 * its own (no torn or foreign data) at least as new as its durable
 * generation; blocks never made durable may hold anything older too.
 * Prints the counts; exit 0 if no block is lost or stale, 1 if some is,
 * 2 on usage or I/O errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK		4096
#define BATCH		16
#define MAGIC		0x6463627772697465ULL	/* "dcbwrite" */
#define LOG_MAGIC	0x6463626c6f677265ULL

struct stamp {
	uint64_t magic, block, gen;
};

struct record {
	uint64_t magic, seq, count;
	struct { uint64_t block, gen; } e[BATCH];
};

static void *block_buf(void)
{
	void *p;

	if (posix_memalign(&p, BLOCK, BLOCK))
		exit(2);
	memset(p, 0, BLOCK);
	return p;
}

static void fill(void *buf, uint64_t block, uint64_t gen)
{
	struct stamp s = { MAGIC, block, gen };
	size_t i;

	for (i = 0; i < BLOCK / sizeof(s); i++)
		memcpy((char *)buf + i * sizeof(s), &s, sizeof(s));
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int do_write(const char *dev, const char *log, uint64_t blocks,
		    uint64_t seed, long seconds)
{
	int fd = open(dev, O_RDWR | O_DIRECT);
	int lfd = open(log, O_RDWR | O_DIRECT | O_DSYNC);
	struct record *rec = block_buf();
	void *buf = block_buf();
	time_t end = time(NULL) + seconds;
	uint64_t gen = 0, seq = 0;

	if (fd < 0 || lfd < 0) {
		perror("open");
		return 2;
	}
	rng ^= seed * 0x9e3779b97f4a7c15ULL;
	while (!seconds || time(NULL) < end) {
		uint32_t i;

		memset(rec, 0, BLOCK);
		for (i = 0; i < BATCH; i++) {
			uint64_t b = next_rand() % blocks;

			fill(buf, b, ++gen);
			if (pwrite(fd, buf, BLOCK, b * BLOCK) != BLOCK) {
				perror("write");
				return 2;
			}
			rec->e[i].block = b;
			rec->e[i].gen = gen;
		}
		if (fdatasync(fd)) {
			perror("fdatasync");
			return 2;
		}
		rec->magic = LOG_MAGIC;
		rec->seq = ++seq;
		rec->count = BATCH;
		if (pwrite(lfd, rec, BLOCK, seq * BLOCK) != BLOCK) {
			perror("log write");
			return 2;
		}
	}
	printf("wrote %" PRIu64 " blocks in %" PRIu64 " flushed batches\n",
	       gen, seq);
	return 0;
}

static int do_verify(const char *dev, const char *log, uint64_t blocks)
{
	int fd = open(dev, O_RDONLY | O_DIRECT);
	int lfd = open(log, O_RDONLY | O_DIRECT);
	uint64_t *durable = calloc(blocks, sizeof(*durable));
	struct record *rec = block_buf();
	void *buf = block_buf();
	uint64_t seq, b, bad = 0, stale = 0, newer = 0, checked = 0;
	uint32_t i;

	if (fd < 0 || lfd < 0 || !durable) {
		perror("open");
		return 2;
	}
	for (seq = 1;; seq++) {
		if (pread(lfd, rec, BLOCK, seq * BLOCK) != BLOCK ||
		    rec->magic != LOG_MAGIC || rec->seq != seq ||
		    rec->count > BATCH)
			break;
		for (i = 0; i < rec->count; i++)
			if (rec->e[i].block < blocks &&
			    rec->e[i].gen > durable[rec->e[i].block])
				durable[rec->e[i].block] = rec->e[i].gen;
	}
	printf("log: %" PRIu64 " flushed batches\n", seq - 1);
	for (b = 0; b < blocks; b++) {
		struct stamp s;
		size_t k;

		if (pread(fd, buf, BLOCK, b * BLOCK) != BLOCK) {
			fprintf(stderr, "read block %" PRIu64 ": %s\n", b,
				strerror(errno));
			return 2;
		}
		memcpy(&s, buf, sizeof(s));
		for (k = 1; k < BLOCK / sizeof(s); k++)
			if (memcmp((char *)buf + k * sizeof(s), &s, sizeof(s)))
				break;
		if (!durable[b])
			continue;
		checked++;
		if (k < BLOCK / sizeof(s) || s.magic != MAGIC || s.block != b) {
			if (bad++ < 10)
				fprintf(stderr, "block %" PRIu64 ": not a whole write of its own (durable gen %" PRIu64 ")\n",
					b, durable[b]);
		} else if (s.gen < durable[b]) {
			if (stale++ < 10)
				fprintf(stderr, "block %" PRIu64 ": gen %" PRIu64 " older than durable %" PRIu64 "\n",
					b, s.gen, durable[b]);
		} else if (s.gen > durable[b]) {
			newer++;
		}
	}
	printf("checked %" PRIu64 " durable blocks: %" PRIu64 " lost, %" PRIu64 " stale, %" PRIu64 " newer than their flush\n",
	       checked, bad, stale, newer);
	return bad || stale || !checked ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "write"))
		return do_write(argv[2], argv[3], strtoull(argv[4], NULL, 0),
				strtoull(argv[5], NULL, 0),
				argc > 6 ? atol(argv[6]) : 0);
	if (argc == 5 && !strcmp(argv[1], "verify"))
		return do_verify(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: %s write DEV LOG BLOCKS SEED [SECONDS]\n"
		"       %s verify DEV LOG BLOCKS\n", argv[0], argv[0]);
	return 2;
}
