/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal unit-test harness for the core: tests register themselves,
 * the runner prints PASS/FAIL per test and "N passed, N failed" last.
 */
#ifndef DM_BCACHE_UNIT_H
#define DM_BCACHE_UNIT_H

#include <stdio.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

void unit_register(const struct unit_test *t);
void unit_fail(const char *file, int line, const char *expr);

#define UNIT_TEST(name)							\
	static void name(void);						\
	static const struct unit_test name##_desc = { #name, name };	\
	__attribute__((constructor)) static void name##_reg(void)	\
	{ unit_register(&name##_desc); }				\
	static void name(void)

#define CHECK(expr) do {						\
	if (!(expr))							\
		unit_fail(__FILE__, __LINE__, #expr);			\
} while (0)

#define CHECK_STR(got, want) do {					\
	const char *g_ = (got), *w_ = (want);				\
	if (!g_ != !w_ || (g_ && strcmp(g_, w_))) {			\
		fprintf(stderr, "  got \"%s\", want \"%s\"\n",		\
			g_ ? g_ : "(null)", w_ ? w_ : "(null)");	\
		unit_fail(__FILE__, __LINE__, #got " == " #want);	\
	}								\
} while (0)

#endif
