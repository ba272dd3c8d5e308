// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_tab: bring the caches listed in /etc/bcachetab up and down, as
 * cryptsetup does for /etc/crypttab: the systemd unit (dm-bcache.service)
 * runs "start" at boot and "stop" at shutdown; the udev rules run
 * "start --device DEV" when a device appears and "udev DEV" to learn
 * whether a device is a member of a listed cache (to hide an origin).
 *
 * A line of the file:  NAME  CACHE  ORIGIN  [OPTIONS]
 *   CACHE    UUID=<cache set UUID> or a device path
 *   ORIGIN   UUID=<backing device UUID> (a make-bcache -B origin) or a
 *            device path (a raw origin: use a stable /dev/disk/by-id path)
 *   OPTIONS  comma-separated: a mode (writethrough, writeback,
 *            writearound, passthrough), noauto, flush_on_stop, and
 *            <option>=<value> for any table option (docs/dm-bcache.rst)
 *
 * Exit codes: 0 done, 1 an entry failed or was refused, 2 usage error or
 * the file could not be read.
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/fs.h>

#include "util/crc64.h"
#include "mkfs/format.h"
#include "format/origin.h"
#include "devio.h"

#define PROG "bcache_tab"
#define TAB_DEFAULT "/etc/bcachetab"
#define MAX_OPTS 32

struct entry {
	int line;
	char name[128];
	char cache[256], origin[256];	/* as written */
	char cache_dev[300], origin_dev[300];	/* resolved, or "" */
	char *opt[MAX_OPTS];		/* table options, "name value" words */
	int nr_opt;
	char *words;			/* storage for opt[] */
	bool noauto, flush_on_stop;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] start|stop|list|table [NAME...]\n"
"       " PROG " [options] start --device DEV\n"
"       " PROG " [options] udev DEV\n"
"Bring the caches listed in " TAB_DEFAULT " up (start) and down (stop).\n"
"\n"
"  -c, --config FILE        the table of caches (default " TAB_DEFAULT ")\n"
"  -d, --device DEV         start: only entries with DEV as cache or origin\n"
"  -n, --dry-run            print the dmsetup commands instead of running them\n"
BCH_CLI_COMMON_HELP
"\n"
"list prints each entry, its devices and whether it is active; table\n"
"prints the table line start would load; udev prints DM_BCACHE_NAME= and\n"
"DM_BCACHE_ROLE= (cache|origin) for a member of an entry.\n"
"Exit status: 0 done, 1 an entry failed, 2 usage error or unreadable file.\n");
}

/* Is "UUID=..." @want the set UUID (cache) or UUID (backing) on @path? */
static bool dev_has_uuid(const char *path, const char *want, bool cache)
{
	struct bch_sb_disk *d = bch_zalloc(BCH_SB_BYTES);
	struct bch_origin_info info;
	unsigned long long bytes = 0;
	int lbs = 512, fd = open(path, O_RDONLY | O_CLOEXEC);
	char u[37];
	bool ok = false;

	if (d && fd >= 0 && !ioctl(fd, BLKGETSIZE64, &bytes) &&
	    !ioctl(fd, BLKSSZGET, &lbs) &&
	    pread(fd, d, BCH_SB_BYTES, BCH_SB_SECTOR * 512) == BCH_SB_BYTES) {
		bch_origin_probe(d, bytes / 512, lbs, &info);
		if (info.probe == (cache ? BCH_PROBE_CACHE : BCH_PROBE_BACKING)) {
			bch_uuid_unparse(cache ? info.sb.set_uuid : info.sb.uuid,
					 u);
			ok = !strcasecmp(u, want);
		}
	}
	if (fd >= 0)
		close(fd);
	bch_free(d);
	return ok;
}

/* Does block device @upper hold @lower (stacked on it)? */
static bool holds(const char *upper, const char *lower)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/block/%.63s/holders/%.63s", lower,
		 upper);
	return !lstat(path, &st);
}

/*
 * @spec to a device node in @out.  UUID= matches the bcache superblock of
 * every block device; one stacked on another (a dm-linear over the whole
 * cache) shows the same superblock, so a match held by another match is
 * dropped for the top of the stack, and two that remain make the entry
 * ambiguous.
 */
static int resolve(const char *spec, bool cache, char *out, size_t len)
{
	char path[300], found[8][64];
	struct dirent *e;
	int n = 0, i, k, left = 0, pick = -1;
	DIR *dir;

	if (strncmp(spec, "UUID=", 5)) {
		struct stat st;

		if (stat(spec, &st) || !S_ISBLK(st.st_mode))
			return -1;
		snprintf(out, len, "%s", spec);
		return 0;
	}
	dir = opendir("/sys/class/block");
	while (dir && (e = readdir(dir)) && n < 8) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= 64)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (dev_has_uuid(path, spec + 5, cache))
			snprintf(found[n++], sizeof(found[0]), "%.63s", e->d_name);
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < n; i++) {
		for (k = 0; k < n && !(k != i && holds(found[k], found[i])); k++)
			;
		if (k == n) {
			left++;
			pick = i;
		}
	}
	if (left > 1)
		bch_err("%s: %d devices carry it (/dev/%s, ...)", spec, left,
			found[pick]);
	if (left != 1)
		return left ? -2 : -1;
	snprintf(out, len, "/dev/%s", found[pick]);
	return 0;
}

static bool is_mode(const char *w)
{
	return !strcmp(w, "writethrough") || !strcmp(w, "writeback") ||
	       !strcmp(w, "writearound") || !strcmp(w, "passthrough");
}

static int parse_options(struct entry *e, const char *opts)
{
	char *p, *tok, *save = NULL;

	e->words = strdup(opts);
	if (!e->words)
		return -1;
	for (tok = strtok_r(e->words, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "noauto")) {
			e->noauto = true;
		} else if (!strcmp(tok, "flush_on_stop")) {
			e->flush_on_stop = true;
		} else if (is_mode(tok) && e->nr_opt < MAX_OPTS) {
			e->opt[e->nr_opt++] = tok;
		} else if ((p = strchr(tok, '=')) && p != tok && p[1] &&
			   e->nr_opt + 2 <= MAX_OPTS) {
			*p = 0;
			e->opt[e->nr_opt++] = tok;
			e->opt[e->nr_opt++] = p + 1;
		} else {
			bch_err("line %d: option '%s' is not a mode, noauto, flush_on_stop or name=value",
				e->line, tok);
			return -1;
		}
	}
	return 0;
}

/* Entries of @path; *nr set.  NULL after an error message. */
static struct entry *read_tab(const char *path, int *nr)
{
	char line[1024], opts[512];
	struct entry *v = NULL, *e;
	int lineno = 0, n = 0, k, f;
	FILE *fp = fopen(path, "re");

	struct stat st;

	if (!fp || fstat(fileno(fp), &st) || S_ISDIR(st.st_mode)) {
		bch_err("%s: %s", path, fp ? "is a directory, not a file" :
			strerror(errno));
		if (fp)
			fclose(fp);
		return NULL;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = 0;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		e = realloc(v, (n + 1) * sizeof(*v));
		if (!e)
			goto fail;
		v = e;
		e = &v[n];
		memset(e, 0, sizeof(*e));
		e->line = lineno;
		opts[0] = 0;
		f = sscanf(line, "%127s %255s %255s %511s", e->name, e->cache,
			   e->origin, opts);
		if (f < 3 || (opts[0] && parse_options(e, opts))) {
			if (f < 3)
				bch_err("%s: line %d: want NAME CACHE ORIGIN [OPTIONS]",
					path, lineno);
			goto fail_n;
		}
		for (k = 0; k < n; k++) {
			if (!strcmp(v[k].name, e->name)) {
				bch_err("%s: line %d: name %s also on line %d",
					path, lineno, e->name, v[k].line);
				goto fail_n;
			}
		}
		n++;
	}
	if (ferror(fp)) {
		bch_err("%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(fp);
	*nr = n;
	return v ? v : calloc(1, sizeof(*v));
fail_n:
	n++;
fail:
	for (k = 0; v && k < n; k++)
		free(v[k].words);
	free(v);
	fclose(fp);
	return NULL;
}

static bool active(const char *name)
{
	char path[300], dm[256];
	struct dirent *e;
	bool found = false;
	DIR *dir = opendir("/sys/class/block");
	FILE *f;

	while (dir && !found && (e = readdir(dir))) {
		if (strncmp(e->d_name, "dm-", 3))
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/dm/name",
			 e->d_name);
		f = fopen(path, "re");
		if (f && fgets(dm, sizeof(dm), f)) {
			dm[strcspn(dm, "\n")] = 0;
			found = !strcmp(dm, name);
		}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

/* Resolve both devices; false (said why, unless @quiet) if one is absent. */
static bool present(struct entry *e, bool quiet)
{
	int rc = resolve(e->cache, true, e->cache_dev, sizeof(e->cache_dev));
	int ro = resolve(e->origin, false, e->origin_dev,
			 sizeof(e->origin_dev));

	if (rc == -1 && !quiet)
		bch_out("%s: cache %s not present\n", e->name, e->cache);
	if (ro == -1 && !quiet)
		bch_out("%s: origin %s not present\n", e->name, e->origin);
	if (rc == -2 || ro == -2)
		bch_err("%s: ambiguous device; name it by path", e->name);
	return !rc && !ro;
}

/* The table line for @e (devices resolved); -1 if the origin is refused. */
static int table_line(struct entry *e, char *out, size_t len)
{
	enum bch_origin_request req = BCH_ORIGIN_AUTO;
	struct bch_origin_info info;
	enum bch_origin_layout layout;
	const char *err;
	struct bch_dev d;
	u8 *buf;
	u64 off, data, round = 8;
	int i, o;

	for (i = 0; i + 1 < e->nr_opt; i++) {
		if (!strcmp(e->opt[i], "origin_layout")) {
			if (!strcmp(e->opt[i + 1], "raw"))
				req = BCH_ORIGIN_RAW;
			else if (!strcmp(e->opt[i + 1], "backing"))
				req = BCH_ORIGIN_BACKING;
		}
		if (!strcmp(e->opt[i], "block_size"))
			round = strtoull(e->opt[i + 1], NULL, 10) ?: 8;
	}
	if (bch_dev_open(&d, e->origin_dev, BCH_OPEN_FORCE))
		return -1;
	buf = bch_zalloc(BCH_SB_BYTES);
	if (!buf || (d.sectors >= BCH_SB_SECTOR + BCH_SB_BYTES / 512 &&
		     bch_sb_read(&d.io, buf))) {
		bch_free(buf);
		bch_dev_close(&d);
		bch_err("%s: cannot read %s", e->name, e->origin_dev);
		return -1;
	}
	bch_origin_probe((struct bch_sb_disk *)buf, d.sectors, d.lbs, &info);
	bch_free(buf);
	err = bch_origin_choose(req, &info, false, &layout, &off);
	data = off < d.sectors ? (d.sectors - off) / round * round : 0;
	bch_dev_close(&d);
	if (err || !data) {
		bch_err("%s: origin %s refused: %s", e->name, e->origin_dev,
			err ? err : "no data area");
		return -1;
	}
	o = snprintf(out, len, "0 %llu bcache %s %s %d",
		     (unsigned long long)data, e->cache_dev, e->origin_dev,
		     e->nr_opt);
	for (i = 0; i < e->nr_opt && o < (int)len; i++)
		o += snprintf(out + o, len - o, " %s", e->opt[i]);
	return o < (int)len ? 0 : -1;
}

static bool dry_run;

static int dmsetup(char *const argv[])
{
	pid_t pid;
	int st, i;

	if (dry_run || !bch_cli_quiet()) {
		for (i = 0; argv[i]; i++)
			bch_out(i ? (strchr(argv[i], ' ') ? " '%s'" : " %s") :
				"%s", argv[i]);
		bch_out("\n");
	}
	if (dry_run)
		return 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execvp("dmsetup", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static bool named(struct entry *e, char **names, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(names[i], e->name))
			return true;
	return false;
}

static bool same_dev(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && bch_same_file(&sa, &sb);
}

static int start(struct entry *e, const char *device)
{
	char table[1024];
	char *argv[] = { "dmsetup", "create", e->name, "--table", table, NULL };

	if (active(e->name))
		return 0;
	if (!present(e, device != NULL))
		return device ? 0 : 1;
	if (device && !same_dev(device, e->cache_dev) &&
	    !same_dev(device, e->origin_dev))
		return 0;
	if (table_line(e, table, sizeof(table)))
		return 1;
	if (dmsetup(argv)) {
		bch_err("%s: dmsetup create failed", e->name);
		return 1;
	}
	return 0;
}

static int stop(struct entry *e)
{
	char *flush[] = { "dmsetup", "message", e->name, "0", "flush", NULL };
	char *rm[] = { "dmsetup", "remove", e->name, NULL };

	if (!active(e->name))
		return 0;
	if (e->flush_on_stop && dmsetup(flush)) {
		bch_err("%s: flush failed; left active so no dirty data is lost",
			e->name);
		return 1;
	}
	if (dmsetup(rm)) {
		bch_err("%s: dmsetup remove failed", e->name);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'n' },
		BCH_CLI_COMMON_OPTS
	};
	const char *tab = TAB_DEFAULT, *device = NULL, *cmd;
	struct bch_cli cli;
	struct entry *v;
	char table[1024];
	int c, r, i, n, bad = 0;

	bch_cli_init(&cli, PROG, usage);
	bch_crc64_init();
	while ((c = getopt_long(argc, argv, "c:d:n" BCH_CLI_COMMON_SHORT, opts,
				NULL)) != -1) {
		switch (c) {
		case 'c':
			tab = optarg;
			break;
		case 'd':
			device = optarg;
			break;
		case 'n':
			dry_run = true;
			break;
		default:
			r = bch_cli_common(&cli, c);
			if (r >= 0)
				return r;
		}
	}
	r = bch_cli_operands(&cli, argc - optind, 1, 64,
			     "command: start, stop, list, table or udev");
	if (r >= 0)
		return r;
	cmd = argv[optind++];
	if (strcmp(cmd, "start") && strcmp(cmd, "stop") &&
	    strcmp(cmd, "list") && strcmp(cmd, "table") && strcmp(cmd, "udev")) {
		bch_err("unknown command '%s'", cmd);
		return BCH_EXIT_USAGE;
	}
	if (!strcmp(cmd, "udev") && argc - optind != 1) {
		bch_err("udev: name exactly one device");
		return BCH_EXIT_USAGE;
	}
	v = read_tab(tab, &n);
	if (!v)
		return BCH_EXIT_USAGE;
	for (i = 0; i < n; i++) {
		struct entry *e = &v[i];
		bool chosen = optind < argc ? named(e, argv + optind,
						    argc - optind) : true;

		if (!strcmp(cmd, "udev")) {
			/* Quiet about absent devices: udev asks for every one. */
			resolve(e->cache, true, e->cache_dev,
				sizeof(e->cache_dev));
			resolve(e->origin, false, e->origin_dev,
				sizeof(e->origin_dev));
			if (same_dev(argv[optind], e->cache_dev) ||
			    same_dev(argv[optind], e->origin_dev))
				printf("DM_BCACHE_NAME=%s\nDM_BCACHE_ROLE=%s\n",
				       e->name,
				       same_dev(argv[optind], e->cache_dev) ?
				       "cache" : "origin");
			continue;
		}
		if (!chosen)
			continue;
		if (!strcmp(cmd, "list")) {
			present(e, true);
			bch_out("%s %s %s %s%s\n", e->name,
				e->cache_dev[0] ? e->cache_dev : "(absent)",
				e->origin_dev[0] ? e->origin_dev : "(absent)",
				active(e->name) ? "active" : "inactive",
				e->noauto ? " noauto" : "");
		} else if (!strcmp(cmd, "table")) {
			if (!present(e, false) || table_line(e, table, sizeof(table)))
				bad = 1;
			else
				bch_out("%s\n", table);
		} else if (!strcmp(cmd, "start")) {
			if (e->noauto && optind == argc)
				continue;
			bad |= start(e, device);
		} else {
			bad |= stop(e);
		}
	}
	/* A name asked for that the file does not list is an error. */
	for (i = optind; i < argc && strcmp(cmd, "udev"); i++) {
		for (c = 0; c < n && strcmp(v[c].name, argv[i]); c++)
			;
		if (c == n) {
			bch_err("%s: no entry %s", tab, argv[i]);
			bad = 1;
		}
	}
	for (i = 0; i < n; i++)
		free(v[i].words);
	free(v);
	return bad ? BCH_EXIT_REFUSED : BCH_EXIT_OK;
}
