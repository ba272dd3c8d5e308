// SPDX-License-Identifier: GPL-2.0
/* The tools' command-line convention; see cli.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/version.h"

static struct bch_cli *cur;

void bch_cli_init(struct bch_cli *cli, const char *prog,
		  void (*usage)(FILE *f))
{
	memset(cli, 0, sizeof(*cli));
	cli->prog = prog;
	cli->usage = usage;
	cur = cli;
}

bool bch_cli_quiet(void)
{
	return cur && cur->quiet;
}

void bch_err(const char *fmt, ...)
{
	va_list args;

	if (bch_cli_quiet())
		return;
	fprintf(stderr, "%s: ", cur ? cur->prog : "bcache");
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

void bch_out(const char *fmt, ...)
{
	va_list args;

	if (bch_cli_quiet())
		return;
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
}

int bch_cli_common(struct bch_cli *cli, int c)
{
	switch (c) {
	case 'q':
		cli->quiet = true;
		return -1;
	case 'h':
		cli->usage(stdout);
		return BCH_EXIT_OK;
	case 'V':
		printf("%s (dm-bcache) %s\n", cli->prog, DMB_VERSION_STRING);
		return BCH_EXIT_OK;
	default:
		/* getopt has named the bad option on stderr already. */
		if (!cli->quiet)
			cli->usage(stderr);
		return BCH_EXIT_USAGE;
	}
}

int bch_cli_operands(struct bch_cli *cli, int have, int want_min,
		     int want_max, const char *what)
{
	if (have >= want_min && have <= want_max) {
		/* Quiet means nothing at all on stdout, whoever prints. */
		if (cli->quiet && !freopen("/dev/null", "w", stdout))
			return BCH_EXIT_USAGE;
		return -1;
	}
	bch_err("%s %s", have < want_min ? "missing" : "too many arguments; want",
		what);
	if (!cli->quiet)
		cli->usage(stderr);
	return BCH_EXIT_USAGE;
}

static int parse_decimal(const char *arg, const char **end, u64 *v)
{
	const char *p = arg;
	u64 n = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (~0ULL - (u64)(*p - '0')) / 10)
			return -1;		/* overflow */
		n = n * 10 + (u64)(*p - '0');
	}
	*end = p;
	*v = n;
	return 0;
}

int bch_cli_number(const char *opt, const char *arg, u64 min, u64 max,
		   const char *unit, u64 *out)
{
	const char *end;
	u64 v;

	if (parse_decimal(arg, &end, &v) || *end || v < min || v > max) {
		bch_err("%s: '%s' is not a number of %s from %llu to %llu",
			opt, arg, unit, (unsigned long long)min,
			(unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static void size_text(u64 bytes, char *buf, size_t len)
{
	static const char units[] = "kMG";
	int i = -1;

	while (bytes >= 1024 && !(bytes & 1023) && i < 2) {
		bytes >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes,
			 units[i]);
}

int bch_cli_size(const char *opt, const char *arg, u64 min_bytes,
		 u64 max_bytes, u32 *sectors)
{
	const char *end;
	char lo[32], hi[32];
	u64 v;
	int shift = 0;

	if (!parse_decimal(arg, &end, &v)) {
		switch (*end) {
		case 'k': case 'K':
			shift = 10; end++; break;
		case 'm': case 'M':
			shift = 20; end++; break;
		case 'g': case 'G':
			shift = 30; end++; break;
		}
		if (v >> (63 - shift))
			end = "overflow";
		v <<= shift;
	} else {
		end = "x";
	}
	if (*end || !v || (v & (v - 1)) || v < min_bytes || v > max_bytes) {
		size_text(min_bytes, lo, sizeof(lo));
		size_text(max_bytes, hi, sizeof(hi));
		bch_err("%s: '%s' is not a size in bytes that is a power of two from %s to %s (suffix k, M or G)",
			opt, arg, lo, hi);
		return -1;
	}
	*sectors = v / 512;
	return 0;
}

int bch_cli_choice(const char *opt, const char *arg,
		   const char *const *names, unsigned int n)
{
	char list[256] = "";
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? ", " : "", names[i]);
	bch_err("%s: '%s' is not one of %s", opt, arg, list);
	return -1;
}
