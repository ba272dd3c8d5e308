// SPDX-License-Identifier: GPL-2.0
/*
 * The unit-test runner: runs every registered test, or those named, or
 * with "--shard K/N" every Nth from the Kth on (tests/unit/run.sh runs
 * the shards side by side).
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "util/crc64.h"

#define MAX_TESTS 512

static const struct unit_test *tests[MAX_TESTS];
static int nr_tests;
static int current_failed;

void unit_register(const struct unit_test *t)
{
	if (nr_tests == MAX_TESTS)
		abort();
	tests[nr_tests++] = t;
}

void unit_fail(const char *file, int line, const char *expr)
{
	fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", file, line, expr);
	current_failed = 1;
}

static int selected(int idx, const char *name, int argc, char **argv)
{
	unsigned int k, n;
	int i;

	if (argc < 2)
		return 1;
	if (argc == 3 && !strcmp(argv[1], "--shard")) {
		if (sscanf(argv[2], "%u/%u", &k, &n) != 2 || !n || k >= n) {
			fprintf(stderr, "unit-tests: bad shard '%s' (want K/N, K < N)\n",
				argv[2]);
			exit(2);
		}
		return idx % n == k;
	}
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int i, passed = 0, failed = 0;

	bch_crc64_init();
	for (i = 0; i < nr_tests; i++) {
		if (!selected(i, tests[i]->name, argc, argv))
			continue;
		current_failed = 0;
		tests[i]->fn();
		printf("%s unit/%s\n", current_failed ? "FAIL" : "PASS",
		       tests[i]->name);
		fflush(stdout);
		if (current_failed)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
