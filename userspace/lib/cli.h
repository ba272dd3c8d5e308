/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command-line convention every tool follows (thin-provisioning-tools'
 * and util-linux's): -h/--help prints the full usage and exits 0,
 * -V/--version prints the project version (core/util/version.h, the same
 * number the module registers) and exits 0, -q/--quiet prints nothing at
 * all, usage errors exit 2 with a reason, and every number is validated
 * with its unit and range named in the refusal.
 *
 * Messages for the user go through bch_err() and bch_out(), which honour
 * --quiet; nothing else in the tools writes to stdout or stderr.
 */
#ifndef DM_BCACHE_USER_CLI_H
#define DM_BCACHE_USER_CLI_H

#include <getopt.h>
#include "util/platform.h"

/* Exit codes shared by every tool; each man page lists its own meaning. */
enum {
	BCH_EXIT_OK = 0,
	BCH_EXIT_REFUSED = 1,	/* damage found, or the tool refused */
	BCH_EXIT_USAGE = 2,	/* bad arguments, or the input cannot be read */
};

/* The getopt_long entries of the common options; end a tool's table. */
#define BCH_CLI_COMMON_OPTS						\
	{ "help", no_argument, NULL, 'h' },				\
	{ "version", no_argument, NULL, 'V' },				\
	{ "quiet", no_argument, NULL, 'q' },				\
	{ NULL, 0, NULL, 0 }
#define BCH_CLI_COMMON_SHORT	"hVq"

/* The lines every usage text ends its option list with. */
#define BCH_CLI_COMMON_HELP						\
"  -q, --quiet              print nothing; the exit status says it all\n" \
"  -h, --help               this text\n"					\
"  -V, --version            print the version\n"

struct bch_cli {
	const char *prog;
	bool quiet;
	void (*usage)(FILE *f);
};

void bch_cli_init(struct bch_cli *cli, const char *prog,
		  void (*usage)(FILE *f));

/*
 * Handle option @c if it is one of the common ones (or getopt's '?').
 * Returns -1 when parsing should go on, else the exit code to leave with.
 */
int bch_cli_common(struct bch_cli *cli, int c);

/*
 * After parsing: a wrong number of operands gives a reason and the usage
 * (returns the exit code); else --quiet takes effect and -1 is returned.
 */
int bch_cli_operands(struct bch_cli *cli, int have, int want_min,
		     int want_max, const char *what);

/* "PROG: message\n" on stderr unless quiet. */
void bch_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* On stdout unless quiet. */
void bch_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool bch_cli_quiet(void);

/*
 * A decimal number for option @opt in [@min, @max] of @unit ("sectors"):
 * no sign, no suffix, no trailing text.  0, or -1 after saying why.
 */
int bch_cli_number(const char *opt, const char *arg, u64 min, u64 max,
		   const char *unit, u64 *out);

/*
 * A word for option @opt that is one of @names[0..@n): its index, or -1
 * after saying why ("--layout: 'x' is not one of auto, raw, backing").
 */
int bch_cli_choice(const char *opt, const char *arg,
		   const char *const *names, unsigned int n);

/*
 * A size in bytes with an optional k/M/G suffix that is a power of two in
 * [@min_bytes, @max_bytes]; stored in sectors.  0, or -1 after saying why.
 */
int bch_cli_size(const char *opt, const char *arg, u64 min_bytes,
		 u64 max_bytes, u32 *sectors);

#endif
