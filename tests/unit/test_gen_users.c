/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The users workload's client model: what a Linux NFSv3 client sends for a
 * user's command, given its attribute and data caches, and the ground truth
 * of opens it reports. Commands are forced on one user of one client and the
 * RPCs collected without the wire (reply = call + the server's latency).
 * Then the whole generator: same seed, same bytes.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_private.h"
#include "th_gen.h"

#define MAX_RPCS 256
#define MAX_OPENS 16
#define SEC 1000000000ull

struct bench {
	struct th_gen_config cfg;
	struct th_gen_stats st;
	struct gen_world w;
	struct gen_client *c;
	struct gen_export *e;
	uint64_t now;
	struct gen_rpc rpc;
	struct th_op ops[MAX_RPCS]; /**< RPCs of the last command */
	uint32_t n_ops;
	struct th_gen_open opens[MAX_OPENS]; /**< opens closed by the last command */
	uint32_t n_opens;
};

static int
on_open(void *ctx, const struct th_gen_open *o)
{
	struct bench *b = ctx;

	if (b->n_opens < MAX_OPENS)
		b->opens[b->n_opens++] = *o;
	return 0;
}

/* Answer every RPC due up to the client's idle point; @return RPCs sent. */
static uint32_t
drive(struct bench *b)
{
	uint32_t n = 0;

	b->n_ops = 0;
	b->n_opens = 0;
	for (;;) {
		int rc = gen_users_next(&b->w, b->c, b->now, &b->rpc);

		assert_true(rc >= 0);
		if (rc == 0) {
			if (!gen_users_is_busy(b->c, 0) || b->c->next_ns == UINT64_MAX)
				break;
			b->now = b->c->next_ns; /* a pause inside the command */
			continue;
		}
		b->rpc.op.call_first_ns = b->now;
		b->rpc.op.call_last_ns = b->now;
		b->rpc.op.reply_first_ns = b->now + b->rpc.latency_ns;
		b->rpc.op.reply_last_ns = b->now + b->rpc.latency_ns;
		assert_int_equal(gen_users_done(&b->w, b->c, &b->rpc), 0);
		if (b->n_ops < MAX_RPCS)
			b->ops[b->n_ops++] = b->rpc.op;
		n++;
		b->now = b->c->next_ns;
	}
	return n;
}

static int
setup_cache(void **state, uint32_t cache_mb)
{
	struct bench *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	th_gen_config_init(&b->cfg);
	b->cfg.cache_mb = cache_mb;
	b->cfg.workload = TH_GEN_WORKLOAD_USERS;
	b->cfg.clients = 1;
	b->cfg.servers = 1;
	b->cfg.users_per_client = 1;
	b->cfg.udp_share = 0;
	b->cfg.ipv6_share = 0;
	assert_int_equal(gen_world_init(&b->w, &b->cfg), 0);
	b->w.stats = &b->st;
	b->w.open_cb = on_open;
	b->w.open_ctx = b;
	assert_int_equal(gen_users_init(&b->w), 0);
	b->c = &b->w.clients[0];
	b->e = &b->w.servers[b->c->mounts[0].server_idx].exports[b->c->mounts[0].export_idx];
	/* The mount (GETPORT, MNT, FSINFO) runs first; the user waits. */
	b->now = b->cfg.start_ns;
	drive(b);
	assert_int_equal(b->c->mounts[0].state, GEN_MOUNT_READY);
	*state = b;
	return 0;
}

static int
setup(void **state)
{
	return setup_cache(state, 64);
}

static int
setup_tiny_cache(void **state)
{
	return setup_cache(state, 1);
}

static int
teardown(void **state)
{
	struct bench *b = *state;

	gen_users_free(&b->w);
	gen_world_free(&b->w);
	free(b);
	return 0;
}

static void
run(struct bench *b, enum gen_user_cmd cmd, uint32_t node, uint64_t after_ns)
{
	b->now += after_ns;
	gen_users_force(b->c, 0, cmd, 0, node, b->now);
	drive(b);
}

/* A file of the export with a size in [lo, hi), not a program. */
static uint32_t
file_sized(const struct gen_export *e, uint64_t lo, uint64_t hi)
{
	uint32_t i;

	for (i = 0; i < e->n_files; i++) {
		const struct gen_node *n = &e->nodes[e->files[i]];

		if (n->size >= lo && n->size < hi && !n->is_exec)
			return e->files[i];
	}
	fail_msg("no file of %llu..%llu bytes", (unsigned long long)lo, (unsigned long long)hi);
	return 0;
}

static uint32_t
count_proc(const struct bench *b, uint32_t proc)
{
	uint32_t i, n = 0;

	for (i = 0; i < b->n_ops; i++)
		n += b->ops[i].proc == proc;
	return n;
}

static uint64_t
read_bytes(const struct bench *b)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < b->n_ops; i++)
		if (b->ops[i].proc == TH_NFS3_READ)
			sum += b->ops[i].reply.count;
	return sum;
}

static bool
same_fh(const struct th_nfs_fh *fh, const struct gen_export *e, uint32_t node)
{
	struct th_nfs_fh want;

	gen_model_fh(e, node, &want);
	return fh->len == want.len && memcmp(fh->data, want.data, want.len) == 0;
}

static bool
open_is_of(const struct th_gen_open *o, const struct gen_export *e, uint32_t node)
{
	struct th_nfs_fh want;

	gen_model_fh(e, node, &want);
	return o->fh_len == want.len && memcmp(o->fh, want.data, want.len) == 0;
}

/* The first cat reads the file; a second one, unchanged, sends only the GETATTR. */
static void
test_second_cat_is_getattr_only(void **state)
{
	struct bench *b = *state;
	uint32_t f = file_sized(b->e, 20000, 200000);

	run(b, GEN_CMD_CAT, f, SEC);
	assert_true(count_proc(b, TH_NFS3_READ) >= 1);
	assert_int_equal(read_bytes(b), b->e->nodes[f].size);
	assert_int_equal(b->n_opens, 1);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_UNCACHED_READ);
	assert_int_equal(b->opens[0].transferred, b->e->nodes[f].size);
	assert_false(b->opens[0].is_write);

	run(b, GEN_CMD_CAT, f, 2 * SEC);
	assert_int_equal(b->n_ops, 1);
	assert_int_equal(b->ops[0].proc, TH_NFS3_GETATTR);
	assert_true(same_fh(&b->ops[0].call.fh, b->e, f));
	assert_int_equal(b->n_opens, 1);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_CACHED_READ);
	assert_int_equal(b->opens[0].transferred, 0);
	assert_true(open_is_of(&b->opens[0], b->e, f));
	/* Open at the GETATTR's call, closed at its reply. */
	assert_int_equal(b->opens[0].open_ns, b->ops[0].call_first_ns);
	assert_int_equal(b->opens[0].close_ns, b->ops[0].reply_first_ns);
}

/* Once another client changed the file, the GETATTR shows it and the data is read again. */
static void
test_changed_file_is_read_again(void **state)
{
	struct bench *b = *state;
	uint32_t f = file_sized(b->e, 20000, 200000);
	struct gen_node *n = &b->e->nodes[f];

	run(b, GEN_CMD_CAT, f, SEC);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_UNCACHED_READ);
	n->size += 5000;
	n->mtime_ns = b->now + SEC;
	run(b, GEN_CMD_CAT, f, 2 * SEC);
	assert_int_equal(b->ops[0].proc, TH_NFS3_GETATTR);
	assert_true(count_proc(b, TH_NFS3_READ) >= 1);
	assert_int_equal(read_bytes(b), n->size);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_UNCACHED_READ);
	assert_int_equal(b->opens[0].size, n->size);
}

/* ls -l lists with READDIRPLUS and reads no file; the listing is a dir-read. */
static void
test_ls_sends_readdirplus_no_read(void **state)
{
	struct bench *b = *state;
	uint32_t d = b->e->files[0], i, n_reg = 0;

	d = b->e->nodes[d].parent;
	for (i = 0; i < b->e->nodes[d].n_children; i++)
		n_reg += b->e->nodes[b->e->nodes[d].children[i]].type == TH_NFS_REG;
	run(b, GEN_CMD_LS, d, SEC);
	assert_true(count_proc(b, TH_NFS3_READDIRPLUS) >= 1);
	assert_int_equal(count_proc(b, TH_NFS3_READ), 0);
	assert_int_equal(b->n_opens, 1);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_DIR_READ);
	assert_true(b->opens[0].is_directory);
	assert_true(open_is_of(&b->opens[0], b->e, d));
	/* READDIRPLUS brought every entry's attributes: no GETATTR on an entry. */
	for (i = 0; i < b->n_ops; i++)
		if (b->ops[i].proc == TH_NFS3_GETATTR)
			assert_false(same_fh(&b->ops[i].call.fh, b->e, b->e->nodes[d].children[0]));

	/* Ten seconds on: listing cached, the files' attributes (acregmin 3 s) expired,
	 * the subdirectories' (acdirmin 30 s) not: the directory's close-to-open GETATTR
	 * (opendir revalidates it, fresh attributes or not), then the phantom GETATTR
	 * burst, one per file, and still no READ and no READDIRPLUS. */
	run(b, GEN_CMD_LS, d, 10 * SEC);
	assert_int_equal(count_proc(b, TH_NFS3_READDIRPLUS), 0);
	assert_int_equal(count_proc(b, TH_NFS3_READ), 0);
	assert_int_equal(b->ops[0].proc, TH_NFS3_GETATTR);
	assert_true(same_fh(&b->ops[0].call.fh, b->e, d));
	assert_int_equal(count_proc(b, TH_NFS3_GETATTR), n_reg + 1);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_DIR_READ);
}

/* With nordirplus, ls -l lists with READDIR, then looks up every name it lists: LOOKUPs that
 * belong to no open, which the summary counts. */
static void
test_ls_nordirplus_looks_up_each_name(void **state)
{
	struct bench *b = *state;
	uint32_t d = b->e->nodes[b->e->files[0]].parent;

	b->cfg.is_nordirplus = true;
	run(b, GEN_CMD_LS, d, SEC);
	assert_true(count_proc(b, TH_NFS3_READDIR) >= 1);
	assert_int_equal(count_proc(b, TH_NFS3_READDIRPLUS), 0);
	/* The walk to the directory looks its own name up too: that one is no phantom. */
	assert_int_equal(b->st.phantom_lookups, b->e->nodes[d].n_children);
	assert_true(count_proc(b, TH_NFS3_LOOKUP) > b->e->nodes[d].n_children);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_DIR_READ);
}

/* stat of a known file inside its attribute timeout sends nothing; after it, one GETATTR. */
static void
test_stat_phantom_getattr(void **state)
{
	struct bench *b = *state;
	uint32_t f = file_sized(b->e, 1, 1u << 30);

	/* The first stat looks the name up: a LOOKUP that belongs to no open. */
	run(b, GEN_CMD_STAT, f, SEC);
	assert_true(b->n_ops >= 1);
	assert_int_equal(b->ops[b->n_ops - 1].proc, TH_NFS3_LOOKUP);
	assert_int_equal(b->st.phantom_lookups, 1);
	run(b, GEN_CMD_STAT, f, SEC / 2);
	assert_int_equal(b->n_ops, 0);
	run(b, GEN_CMD_STAT, f, 5 * SEC);
	assert_int_equal(b->n_ops, 1);
	assert_int_equal(b->ops[0].proc, TH_NFS3_GETATTR);
	assert_int_equal(b->n_opens, 0); /* stat opens nothing */
}

/* Edit-and-save: read, then a write open of a new temp file and a RENAME over the name. */
static void
test_edit_and_save(void **state)
{
	struct bench *b = *state;
	uint32_t f = file_sized(b->e, 5000, 100000), i, n_write = 0;
	char name[32];
	bool has_rename = false;

	snprintf(name, sizeof(name), "%s", b->e->nodes[f].name);
	run(b, GEN_CMD_EDIT, f, SEC);
	assert_int_equal(b->n_opens, 2);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_UNCACHED_READ);
	assert_true(open_is_of(&b->opens[0], b->e, f));
	assert_int_equal(b->opens[1].cls, TH_GEN_OPEN_WRITE);
	assert_false(open_is_of(&b->opens[1], b->e, f)); /* the new file, not the old one */
	assert_true(b->opens[1].transferred > 0);
	for (i = 0; i < b->n_ops; i++) {
		if (b->ops[i].proc == TH_NFS3_WRITE)
			n_write++;
		if (b->ops[i].proc == TH_NFS3_RENAME) {
			has_rename = true;
			assert_string_equal(b->ops[i].call.name2.s, name);
			assert_int_equal(i, b->n_ops - 1);
		}
	}
	assert_true(n_write >= 1);
	assert_int_equal(count_proc(b, TH_NFS3_CREATE), 1);
	assert_int_equal(count_proc(b, TH_NFS3_COMMIT), 1);
	assert_true(has_rename);
	assert_false(b->e->nodes[f].is_live); /* the old inode is gone */
}

/* A program is demand paged: a few windows, not all in file order, partly cached later. */
static void
test_exec_reads_out_of_order(void **state)
{
	struct bench *b = *state;
	uint32_t i, k, bin = UINT32_MAX, prog = UINT32_MAX, backwards = 0;

	for (i = 0; i < b->e->nodes[0].n_children; i++)
		if (strcmp(b->e->nodes[b->e->nodes[0].children[i]].name, "bin") == 0)
			bin = b->e->nodes[0].children[i];
	assert_true(bin != UINT32_MAX);
	for (i = 0; i < b->e->nodes[bin].n_children; i++) {
		uint32_t c = b->e->nodes[bin].children[i];

		if (b->e->nodes[c].size >= 2u << 20)
			prog = c;
	}
	if (prog == UINT32_MAX)
		skip();
	for (k = 0; k < 6; k++) {
		uint64_t last = 0;

		run(b, GEN_CMD_EXEC, prog, SEC);
		for (i = 0; i < b->n_ops; i++) {
			if (b->ops[i].proc != TH_NFS3_READ)
				continue;
			if (b->ops[i].call.offset < last)
				backwards++;
			last = b->ops[i].call.offset;
		}
		assert_true(b->opens[0].touched < b->e->nodes[prog].size);
		assert_true(b->opens[0].cls != TH_GEN_OPEN_WRITE);
	}
	assert_true(backwards > 0);
}

/* A tiny cache leaves big files partly cached: the next read is partial. */
static void
test_small_cache_partial_read(void **state)
{
	struct bench *b = *state;
	uint32_t f = file_sized(b->e, 700000, 4u << 20);
	uint32_t g = file_sized(b->e, 400000, 700000);

	run(b, GEN_CMD_CAT, f, SEC);
	run(b, GEN_CMD_CAT, g, SEC);
	run(b, GEN_CMD_CAT, f, SEC);
	assert_int_equal(b->opens[0].cls, TH_GEN_OPEN_PARTIAL_READ);
	assert_true(b->opens[0].transferred > 0);
	assert_true(b->opens[0].transferred < b->e->nodes[f].size);
}

/* ---- the whole generator ---- */

struct digest {
	uint64_t frames; /**< FNV-1a of frames and times */
	uint64_t opens;  /**< FNV-1a of open lines */
	uint64_t n_frames;
	uint64_t n_rpcs;
};

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static int
dg_frame(void *ctx, uint64_t ts, const uint8_t *frame, uint32_t size)
{
	struct digest *d = ctx;

	d->frames = fnv(fnv(d->frames, &ts, sizeof(ts)), frame, size);
	d->n_frames++;
	return 0;
}

static int
dg_op(void *ctx, const struct th_op *op, unsigned int tap_lost)
{
	struct digest *d = ctx;

	(void)op;
	(void)tap_lost;
	d->n_rpcs++;
	return 0;
}

static int
dg_open(void *ctx, const struct th_gen_open *o)
{
	struct digest *d = ctx;
	char line[512];
	int n = th_gen_open_format(o, line, sizeof(line));

	assert_true(n > 0 && (size_t)n < sizeof(line));
	d->opens = fnv(d->opens, line, (size_t)n);
	return 0;
}

static void
digest_of(const struct th_gen_config *cfg, struct digest *d, struct th_gen_stats *st)
{
	struct th_gen_sink sink = {dg_frame, dg_op, d, dg_open};

	memset(d, 0, sizeof(*d));
	d->frames = d->opens = 0xcbf29ce484222325ull;
	assert_int_equal(th_gen_run(cfg, &sink, st), 0);
}

static void
test_same_seed_same_bytes(void **state)
{
	struct th_gen_config cfg;
	struct th_gen_stats st1, st2, st3;
	struct digest a, b2, c;
	uint64_t total = 0;
	unsigned int i;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.workload = TH_GEN_WORKLOAD_USERS;
	cfg.hours = 0.05;
	cfg.clients = 4;
	cfg.udp_share = 0.25;
	cfg.loss = 0.01;
	digest_of(&cfg, &a, &st1);
	digest_of(&cfg, &b2, &st2);
	assert_true(a.n_frames > 1000);
	assert_int_equal(a.frames, b2.frames);
	assert_int_equal(a.opens, b2.opens);
	assert_int_equal(st1.rpcs, a.n_rpcs);
	assert_true(st1.lost_frames > 0);
	for (i = 0; i < TH_GEN__OPEN_CLASS_COUNT; i++)
		total += st1.opens[i];
	assert_true(total > 50);
	cfg.seed = 2;
	digest_of(&cfg, &c, &st3);
	assert_true(c.frames != a.frames);
	assert_true(c.opens != a.opens);
}

/* The seed's mix runs no stat, edit, mkdir or rm, so it makes no directory and renames
 * nothing; programs leave partly cached files. The full mix makes directories. */
static void
test_user_mix(void **state)
{
	struct th_gen_config cfg;
	struct th_gen_stats st_seed, st_full;
	struct digest d;
	enum th_gen_user_mix mix;

	(void)state;
	th_gen_config_init(&cfg);
	assert_int_equal(cfg.user_mix, TH_GEN_USER_MIX_SEED);
	cfg.workload = TH_GEN_WORKLOAD_USERS;
	cfg.hours = 0.5;
	digest_of(&cfg, &d, &st_seed);
	assert_int_equal(st_seed.opens[TH_GEN_OPEN_DIR_WRITE], 0);
	assert_true(st_seed.opens[TH_GEN_OPEN_PARTIAL_READ] > 0);
	assert_true(st_seed.opens[TH_GEN_OPEN_CACHED_READ] > 0);
	assert_true(st_seed.opens[TH_GEN_OPEN_WRITE] > 0);
	cfg.user_mix = TH_GEN_USER_MIX_FULL;
	digest_of(&cfg, &d, &st_full);
	assert_true(st_full.opens[TH_GEN_OPEN_DIR_WRITE] > 0);
	assert_int_equal(th_gen_user_mix_parse("full", &mix), 0);
	assert_int_equal(mix, TH_GEN_USER_MIX_FULL);
	assert_int_equal(th_gen_user_mix_parse("all", &mix), -EINVAL);
	assert_string_equal(th_gen_user_mix_name(TH_GEN_USER_MIX_SEED), "seed");
	cfg.user_mix = TH_GEN__USER_MIX_COUNT;
	assert_int_equal(th_gen_config_check(&cfg, NULL, 0), -EINVAL);
}

/* The record layout of the seed, then the class. */
static void
test_open_format(void **state)
{
	struct th_gen_open o;
	char line[512];

	(void)state;
	memset(&o, 0, sizeof(o));
	o.open_ns = 690691919593442000ull;
	o.close_ns = o.open_ns + 17734000ull;
	o.server.b[10] = o.server.b[11] = 0xff;
	o.server.b[12] = 10;
	o.server.b[15] = 1;
	o.client.b[10] = o.client.b[11] = 0xff;
	o.client.b[12] = 10;
	o.client.b[13] = 1;
	o.client.b[15] = 3;
	o.uid = 321;
	o.fh_len = 8;
	memcpy(o.fh, "\x7b\x1f\x00\x00\x00\x00\x40\x0f", 8);
	o.size = 24576;
	o.cls = TH_GEN_OPEN_CACHED_READ;
	th_gen_open_format(&o, line, sizeof(line));
	assert_string_equal(line, "690691919.593442 | 17734 | read | 10.0.0.1:7b1f00000000400f | "
				  "10.1.0.3.321 | 0 | 24576 | cached-read\n");
}

static void
test_config_checks(void **state)
{
	struct th_gen_config cfg;
	char err[128];
	enum th_gen_workload wl;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.loss = 0.1;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	cfg.workload = TH_GEN_WORKLOAD_USERS;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), 0);
	cfg.acregmin_s = 100;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	th_gen_config_init(&cfg);
	cfg.rsize = 5000;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_int_equal(th_gen_workload_parse("users", &wl), 0);
	assert_int_equal(wl, TH_GEN_WORKLOAD_USERS);
	assert_int_equal(th_gen_workload_parse("people", &wl), -EINVAL);
	assert_string_equal(th_gen_open_class_name(TH_GEN_OPEN_PARTIAL_READ), "partial-read");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_second_cat_is_getattr_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_file_is_read_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ls_sends_readdirplus_no_read, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ls_nordirplus_looks_up_each_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stat_phantom_getattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_edit_and_save, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_reads_out_of_order, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_small_cache_partial_read, setup_tiny_cache, teardown),
		cmocka_unit_test(test_same_seed_same_bytes),
		cmocka_unit_test(test_user_mix),
		cmocka_unit_test(test_open_format),
		cmocka_unit_test(test_config_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
