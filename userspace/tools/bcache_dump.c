// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_dump: print a bcache device's metadata, as text or as JSON.
 *
 * For a cache device: the superblock, every journal entry found and the
 * keys of those in the replay range, the prio/gen chain (buckets whose
 * prio or gen is not zero), the UUID table's used slots, and every btree
 * node with its bsets and keys in walk order.  For a backing device: its
 * superblock.  The walk is the checker's (core/check/check.c), so what is shown
 * is what bcache_check judged; its findings are listed at the end.
 *
 * JSON strings escape every byte outside printable ASCII, and '"' and
 * '\\', as \u00XX: a label's bytes are never taken for UTF-8, and a
 * decoder gets them back as the code points U+0000-U+00FF.
 *
 * Exit codes: 0 dumped, 2 usage error, device in use (see --force) or I/O
 * error.
 */
#include <getopt.h>

#include "util/crc64.h"
#include "check/check.h"
#include "devio.h"

#define PROG "bcache_dump"

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options] DEVICE-OR-IMAGE\n"
"Print the metadata of a bcache cache or backing device.\n"
"\n"
"  -j, --json               one JSON document instead of text\n"
"      --force              dump a device in use (held by a table,\n"
"                           mounted): what is read may be inconsistent\n"
BCH_CLI_COMMON_HELP
"\n"
"Exit status: 0 dumped, 2 usage error, device in use or I/O error.\n");
}

/* A minimal JSON writer: comma placement by nesting depth. */
struct dump {
	bool json;
	int depth;
	bool first[16];
	const char *section;		/* open top-level array, JSON only */
	char findings[64][320];
	const char *kinds[64];
	const char *prefix[64];	/* text: "damage: ", "tolerated: " or "" */
	int nr_findings;
	int dropped;
};

static void j_sep(struct dump *d)
{
	if (!d->first[d->depth])
		putchar(',');
	d->first[d->depth] = false;
}

static void j_open(struct dump *d, const char *name, char bracket)
{
	j_sep(d);
	if (name)
		printf("\"%s\":", name);
	putchar(bracket);
	d->first[++d->depth] = true;
}

static void j_close(struct dump *d, char bracket)
{
	putchar(bracket);
	d->depth--;
}

static void j_num(struct dump *d, const char *name, unsigned long long v)
{
	j_sep(d);
	printf("\"%s\":%llu", name, v);
}

/* RFC 8259 string of @len bytes of @v (to a NUL), escaped as the header says. */
static void j_quote(const u8 *v, size_t len)
{
	size_t i;

	putchar('"');
	for (i = 0; i < len && v[i]; i++) {
		if (v[i] >= 0x20 && v[i] < 0x7f && v[i] != '"' && v[i] != '\\')
			putchar(v[i]);
		else
			printf("\\u%04x", v[i]);
	}
	putchar('"');
}

static void j_bytes(struct dump *d, const char *name, const u8 *v,
		    size_t len)
{
	j_sep(d);
	printf("\"%s\":", name);
	j_quote(v, len);
}

static void j_str(struct dump *d, const char *name, const char *v)
{
	j_bytes(d, name, (const u8 *)v, strlen(v));
}

static void j_bool(struct dump *d, const char *name, bool v)
{
	j_sep(d);
	printf("\"%s\":%s", name, v ? "true" : "false");
}

/* Enter the top-level array @name, closing the previous one. */
static void section(struct dump *d, const char *name)
{
	if (name && d->section && !strcmp(d->section, name))
		return;
	if (d->section)
		j_close(d, ']');
	d->section = name;
	if (name)
		j_open(d, name, '[');
}

static void j_key(struct dump *d, const char *name, const struct bch_key *k)
{
	unsigned int i;

	j_open(d, name, '{');
	j_num(d, "inode", bch_key_inode(k));
	j_num(d, "offset", k->low);
	j_num(d, "size", bch_key_size(k));
	j_bool(d, "dirty", bch_key_dirty(k));
	j_open(d, "ptrs", '[');
	for (i = 0; i < bch_key_ptrs(k); i++) {
		j_open(d, NULL, '{');
		j_num(d, "dev", bch_ptr_dev(k->ptr[i]));
		j_num(d, "offset", bch_ptr_offset(k->ptr[i]));
		j_num(d, "gen", bch_ptr_gen(k->ptr[i]));
		j_close(d, '}');
	}
	j_close(d, ']');
	j_close(d, '}');
}

static void t_key(const char *prefix, const struct bch_key *k, bool extent,
		  const char *suffix)
{
	char kt[160];

	bch_key_to_text(kt, sizeof(kt), k, extent);
	printf("%s%s%s\n", prefix, kt, suffix);
}

/*
 * Close what a replay entry or node left open, down to @depth.  Depth 1 is
 * the document, 2 a section array; below that objects sit at odd depths
 * and arrays at even ones.
 */
static void close_to(struct dump *d, int depth)
{
	while (d->json && d->depth > depth)
		j_close(d, d->depth % 2 ? '}' : ']');
}

static void unwind(struct dump *d)
{
	close_to(d, 2);
}

static void on_sb(void *ctx, const struct bch_sb *sb)
{
	struct dump *d = ctx;
	char u[37], s[37], label[140];
	bool cache = sb->kind == BCH_SB_KIND_CACHE;

	bch_uuid_unparse(sb->uuid, u);
	bch_uuid_unparse(sb->set_uuid, s);
	bch_label_text(sb->label, sizeof(sb->label), label, sizeof(label));
	if (!d->json) {
		printf("superblock: %s device, version %llu\n",
		       cache ? "cache" : "backing", sb->version);
		printf("  uuid %s\n  set_uuid %s\n  label \"%s\"\n", u, s, label);
		printf("  flags %#llx seq %llu last_mount %u block_size %u\n",
		       sb->flags, sb->seq, sb->last_mount, sb->block_size);
		if (cache)
			printf("  nbuckets %llu bucket_size %u first_bucket %u nr_in_set %u nr_this_dev %u journal_buckets %u\n",
			       sb->nbuckets, sb->bucket_size, sb->first_bucket,
			       sb->nr_in_set, sb->nr_this_dev, sb->keys);
		else
			printf("  data_offset %llu\n", sb->data_offset);
		return;
	}
	j_open(d, "superblock", '{');
	j_str(d, "kind", cache ? "cache" : "backing");
	j_num(d, "version", sb->version);
	j_str(d, "uuid", u);
	j_str(d, "set_uuid", s);
	j_bytes(d, "label", sb->label, sizeof(sb->label));
	j_num(d, "flags", sb->flags);
	j_num(d, "seq", sb->seq);
	j_num(d, "last_mount", sb->last_mount);
	j_num(d, "block_size", sb->block_size);
	if (cache) {
		unsigned int i;

		j_num(d, "nbuckets", sb->nbuckets);
		j_num(d, "bucket_size", sb->bucket_size);
		j_num(d, "first_bucket", sb->first_bucket);
		j_num(d, "nr_in_set", sb->nr_in_set);
		j_num(d, "nr_this_dev", sb->nr_this_dev);
		j_open(d, "journal_buckets", '[');
		for (i = 0; i < sb->keys; i++) {
			j_sep(d);
			printf("%llu", sb->d[i]);
		}
		j_close(d, ']');
	} else {
		j_num(d, "data_offset", sb->data_offset);
	}
	j_close(d, '}');
}

static void on_jset(void *ctx, const struct bch_jset_disk *j, u32 ring,
		    u64 bucket, u32 block, bool in_replay)
{
	struct dump *d = ctx;
	struct bch_key root, uuid;

	bch_key_decode(j->btree_root, BCH_BKEY_PAD_U64S, &root);
	bch_key_decode(j->uuid_bucket, BCH_BKEY_PAD_U64S, &uuid);
	if (!d->json) {
		printf("%s seq %llu: ring %u bucket %llu block %u last_seq %llu version %u keys %u level %u prio %llu\n",
		       in_replay ? "replay entry" : "journal entry",
		       le64_to_cpu(j->seq), ring, bucket, block,
		       le64_to_cpu(j->last_seq), le32_to_cpu(j->version),
		       le32_to_cpu(j->keys), le16_to_cpu(j->btree_level),
		       le64_to_cpu(j->prio_bucket[0]));
		if (!in_replay) {
			t_key("  root ", &root, false, "");
			t_key("  uuids ", &uuid, false, "");
		}
		return;
	}
	unwind(d);
	section(d, in_replay ? "replay" : "journal");
	j_open(d, NULL, '{');
	j_num(d, "seq", le64_to_cpu(j->seq));
	j_num(d, "ring", ring);
	j_num(d, "bucket", bucket);
	j_num(d, "block", block);
	j_num(d, "last_seq", le64_to_cpu(j->last_seq));
	j_num(d, "version", le32_to_cpu(j->version));
	j_num(d, "u64s", le32_to_cpu(j->keys));
	if (in_replay) {
		j_open(d, "keys", '[');
		return;		/* closed by the next entry or section */
	}
	j_num(d, "btree_level", le16_to_cpu(j->btree_level));
	j_key(d, "btree_root", &root);
	j_key(d, "uuid_bucket", &uuid);
	j_num(d, "prio_bucket", le64_to_cpu(j->prio_bucket[0]));
	j_close(d, '}');
}

static void on_jkey(void *ctx, const struct bch_key *k)
{
	struct dump *d = ctx;

	if (d->json)
		j_key(d, NULL, k);
	else
		t_key("  key ", k, true, "");
}

static void on_prio(void *ctx, u64 bucket, u64 first, u32 count,
		    const struct bch_prio_set_disk *p)
{
	struct dump *d = ctx;
	u32 i;

	unwind(d);
	if (d->json) {
		section(d, "prios");
		j_open(d, NULL, '{');
		j_num(d, "bucket", bucket);
		j_num(d, "seq", le64_to_cpu(p->seq));
		j_num(d, "next_bucket", le64_to_cpu(p->next_bucket));
		j_num(d, "first", first);
		j_num(d, "count", count);
		j_open(d, "entries", '[');
	} else {
		printf("prio bucket %llu: buckets %llu-%llu seq %llu next %llu\n",
		       bucket, first, first + count - 1,
		       le64_to_cpu(p->seq), le64_to_cpu(p->next_bucket));
	}
	for (i = 0; i < count; i++) {
		struct bch_prio_entry e;

		bch_prio_get(p, i, &e);
		if (!e.prio && !e.gen)
			continue;
		if (d->json) {
			j_sep(d);
			printf("[%llu,%u,%u]", first + i, e.prio, e.gen);
		} else {
			printf("  bucket %llu prio %u gen %u\n", first + i,
			       e.prio, e.gen);
		}
	}
	if (d->json) {
		j_close(d, ']');
		j_close(d, '}');
	}
}

static void on_uuid(void *ctx, u32 slot, const u8 *uuid, const u8 *label,
		    u32 flags, u64 sectors)
{
	struct dump *d = ctx;
	char u[37], l[140];

	bch_uuid_unparse(uuid, u);
	bch_label_text(label, BCH_SB_LABEL_SIZE, l, sizeof(l));
	unwind(d);
	if (!d->json) {
		printf("uuid slot %u: %s label \"%s\" flags %#x sectors %llu\n",
		       slot, u, l, flags, sectors);
		return;
	}
	section(d, "uuids");
	j_open(d, NULL, '{');
	j_num(d, "slot", slot);
	j_str(d, "uuid", u);
	j_bytes(d, "label", label, BCH_SB_LABEL_SIZE);
	j_num(d, "flags", flags);
	j_num(d, "sectors", sectors);
	j_close(d, '}');
}

static void on_node(void *ctx, const struct bch_key *k, u32 level)
{
	struct dump *d = ctx;

	unwind(d);
	if (!d->json) {
		printf("node level %u: ", level);
		t_key("", k, false, "");
		return;
	}
	section(d, "btree");
	j_open(d, NULL, '{');
	j_num(d, "level", level);
	j_key(d, "key", k);
	j_open(d, "bsets", '[');
}

static void on_bset(void *ctx, u32 index, u32 block, u64 seq, u32 version,
		    u32 u64s)
{
	struct dump *d = ctx;

	if (!d->json) {
		printf("  bset %u: block %u seq %016llx version %u u64s %u\n",
		       index, block, seq, version, u64s);
		return;
	}
	close_to(d, 4);		/* the previous bset */
	j_open(d, NULL, '{');
	j_num(d, "index", index);
	j_num(d, "block", block);
	j_num(d, "seq", seq);
	j_num(d, "version", version);
	j_num(d, "u64s", u64s);
	j_open(d, "keys", '[');
}

static void on_key(void *ctx, const struct bch_key *k, u32 level, bool live)
{
	struct dump *d = ctx;

	if (!d->json) {
		t_key("    key ", k, !level, live ? "" : " (not live)");
		return;
	}
	j_open(d, NULL, '{');
	j_key(d, "key", k);
	j_bool(d, "live", live);
	j_close(d, '}');
}

static void on_node_end(void *ctx, const struct bch_node_info *info)
{
	struct dump *d = ctx;

	if (!d->json) {
		printf("  written %u of %u blocks%s%s\n", info->written,
		       info->blocks, info->err ? ": " : "",
		       info->err ? info->err : "");
		return;
	}
	close_to(d, 4);
	j_close(d, ']');	/* bsets */
	j_num(d, "written", info->written);
	j_num(d, "blocks", info->blocks);
	j_close(d, '}');
}

static void keep(struct dump *d, const char *prefix, const char *kind,
		 const char *msg)
{
	if (d->nr_findings == (int)ARRAY_SIZE(d->findings)) {
		d->dropped++;
		return;
	}
	d->prefix[d->nr_findings] = prefix;
	d->kinds[d->nr_findings] = kind;
	snprintf(d->findings[d->nr_findings++], sizeof(d->findings[0]),
		 "%s", msg);
}

static void on_finding(void *ctx, enum bch_damage cls, const char *msg)
{
	keep(ctx, bch_damage_tolerated(cls) ? "tolerated: " : "damage: ",
	     bch_damage_names[cls], msg);
}

static void on_note(void *ctx, const char *msg)
{
	keep(ctx, "", "note", msg);
}

static void print_findings(struct dump *d)
{
	int i;

	if (!d->json) {
		for (i = 0; i < d->nr_findings; i++)
			printf("%s%s: %s\n", d->prefix[i], d->kinds[i],
			       d->findings[i]);
		if (d->dropped)
			printf("(%d more findings not shown)\n", d->dropped);
		return;
	}
	unwind(d);
	section(d, "findings");
	for (i = 0; i < d->nr_findings; i++) {
		j_open(d, NULL, '{');
		j_str(d, "class", d->kinds[i]);
		j_str(d, "message", d->findings[i]);
		j_close(d, '}');
	}
	section(d, NULL);
}

int main(int argc, char **argv)
{
	enum { OPT_FORCE = 256 };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, OPT_FORCE },
		BCH_CLI_COMMON_OPTS
	};
	static struct dump d;
	struct bch_check_ops ops = {
		.ctx = &d, .finding = on_finding, .note = on_note,
		.sb = on_sb, .jset = on_jset, .jkey = on_jkey,
		.prio = on_prio, .uuid = on_uuid, .node = on_node,
		.bset = on_bset, .key = on_key, .node_end = on_node_end,
	};
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	unsigned int flags = 0;
	struct bch_cli cli;
	struct bch_dev dev;
	int c, r;

	bch_cli_init(&cli, PROG, usage);
	bch_crc64_init();
	while ((c = getopt_long(argc, argv, "j" BCH_CLI_COMMON_SHORT, opts,
				NULL)) != -1) {
		switch (c) {
		case 'j':
			d.json = true;
			break;
		case OPT_FORCE:
			flags |= BCH_OPEN_FORCE;
			break;
		default:
			r = bch_cli_common(&cli, c);
			if (r >= 0)
				return r;
		}
	}
	r = bch_cli_operands(&cli, argc - optind, 1, 1,
			     "DEVICE-OR-IMAGE (exactly one)");
	if (r >= 0)
		return r;
	if (bch_dev_open(&dev, argv[optind], flags))
		return BCH_EXIT_USAGE;
	d.first[0] = true;
	if (d.json) {
		j_open(&d, NULL, '{');
		j_str(&d, "device", argv[optind]);
	}
	r = bch_check(&dev.io, &o, &ops, &res);
	bch_dev_close(&dev);
	if (res.blank && !d.json)
		printf("blank (sectors 0-15 are zero): no bcache metadata\n");
	print_findings(&d);
	if (d.json) {
		j_bool(&d, "blank", res.blank);
		j_num(&d, "damage", res.nr_damage);
		j_num(&d, "tolerated", res.nr_tolerated);
		j_close(&d, '}');
		putchar('\n');
	}
	if (r) {
		bch_err("%s: %s", argv[optind], strerror(-r));
		return BCH_EXIT_USAGE;
	}
	return BCH_EXIT_OK;
}
