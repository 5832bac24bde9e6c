/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The users workload: people at Linux NFSv3 clients running ls -l, touch, cp,
 * cat, wc and programs (the seed's mix), or also stat, edit-and-save, mkdir and
 * rm (the full mix), over the export's tree, and the RPCs their client sends
 * for it, decided by a model of the client's caches:
 *
 *  - attributes: per file, valid for attrtimeo after they arrived (any reply
 *    carrying them); attrtimeo starts at acregmin (acdirmin for directories),
 *    doubles up to acregmax (acdirmax) each time a revalidation finds nothing
 *    changed, and falls back to the minimum on a change (Linux nfs_update_inode);
 *  - close-to-open: open() of a regular file or a directory (opendir, ls -l)
 *    always revalidates: GETATTR, or LOOKUP when the name itself has to be
 *    looked up (Linux's nfs_lookup_verify_inode() forces a GETATTR of a cached
 *    dentry's inode when LOOKUP_OPEN is set, for S_IFREG and S_IFDIR; a fresh
 *    LOOKUP brings the attributes with it). Path components on the way are
 *    revalidated only when expired;
 *  - dentries: a cached name is trusted while its directory's mtime is the one
 *    seen when it was looked up; path components are checked root first
 *    (GETATTR of an expired directory, LOOKUP of an unverified name, ACCESS when
 *    the access cache holds no answer for that user since the last change);
 *  - data: 4 KiB pages per file, valid until attributes from the server show
 *    another mtime or size than the client knew (its own WRITE and SETATTR
 *    replies do not invalidate: Linux compares the wcc pre-attributes); written
 *    pages stay cached; a client's cache holds --cache-mb, least recently used
 *    files lose their last pages first (so files end up partially cached);
 *  - directories: a listing is cached while the directory's mtime is the one
 *    listed; otherwise ls -l sends READDIRPLUS (32 entries per call), which
 *    also refreshes every entry's attributes and name, or with nordirplus
 *    READDIR (what fits 32 KiB), names only: ls -l's lstat then LOOKUPs each
 *    name whose dentry is not verified and GETATTRs expired attributes.
 *
 * Each RPC of an open is attributed to it, and the open's truth record (the
 * seed's nfstrace line plus its class) is written when it closes.
 */

#include "gen_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u
#define WIN 65536u /* demand paging reads around a fault in this window */
#define STEPS_MAX 24
#define DEPTH_MAX 16
#define NONE UINT32_MAX
#define NS 1000000000ull

/* What the client knows about one node of one mount. */
struct u_entry {
	uint64_t attr_ns;       /**< attributes arrived then; 0: none */
	uint64_t timeo_ns;      /**< current attribute timeout */
	uint64_t mtime_ns;      /**< cached mtime */
	uint64_t size;          /**< cached size */
	uint64_t dent_verf;     /**< parent's mtime when the name was verified; 0: no dentry */
	uint64_t access_ns;     /**< ACCESS answers cached since; 0: none */
	uint32_t access_uid[4]; /**< users with an answer (Linux caches one per credential) */
	uint32_t n_access;      /**< answers, ever; the oldest is replaced */
	uint64_t list_mtime;    /**< directory: mtime of the cached listing; 0: none */
	struct u_data *data;    /**< cached pages, NULL: none */
};

/* Cached pages of a file, on the client's LRU list. */
struct u_data {
	uint64_t *bits;      /**< one bit per page */
	uint32_t n_words;    /**< words in bits */
	uint32_t n_pages;    /**< pages cached */
	struct u_data *prev; /**< LRU: more recently used */
	struct u_data *next; /**< LRU: less recently used */
};

struct u_mcache {
	struct u_entry *ents; /**< by node index of the mount's export */
	uint32_t n;           /**< entries allocated */
};

enum u_kind {
	U_WALK,       /**< resolve a node's ancestors (and itself with F_SELF) */
	U_OPEN,       /**< open: close-to-open revalidation; directories only when expired */
	U_ACCESS,     /**< permission check for the open */
	U_READ,       /**< read windows (whole file, or demand-paged windows) */
	U_CLOSE,      /**< emit the record */
	U_LOOKUP_NEG, /**< the name to create does not exist yet */
	U_CREATE,     /**< CREATE or MKDIR (F_DIR) a name; the node goes to slot b */
	U_TRUNC,      /**< SETATTR size 0 (O_TRUNC) */
	U_WRITE,      /**< write the whole file, wsize at a time */
	U_COMMIT,     /**< on close after unstable writes */
	U_TOUCH,      /**< SETATTR times to the server's */
	U_RENAME,     /**< slot b over slot a's name */
	U_REMOVE,     /**< unlink */
	U_STAT,       /**< lstat/stat: LOOKUP or GETATTR when needed */
	U_READDIR,    /**< READDIRPLUS (READDIR) unless the listing is cached */
	U_STATALL,    /**< ls -l: lstat of every entry */
	U_PAUSE,      /**< the user edits for a while */
};

enum {
	F_SELF = 1 << 0, /**< U_WALK: the node itself too */
	F_DIR = 1 << 1,  /**< U_CREATE: MKDIR */
	F_EXCL = 1 << 2, /**< U_CREATE: GUARDED, no LOOKUP before */
	F_EXEC = 1 << 3, /**< U_READ: demand paging; U_ACCESS: execute */
};

/* Slots: the nodes a command works on. */
enum { SA = 0, SB = 1, SD = 2, N_SLOTS = 3 };

struct u_step {
	uint8_t kind;  /**< enum u_kind */
	uint8_t flags; /**< F_* */
	uint8_t slot;  /**< node it works on */
	int8_t rec;    /**< open record it belongs to, -1: none */
};

/* Commands are enum gen_user_cmd (gen_private.h); weights among the non-ls ones. */
#define C_LS GEN_CMD_LS
#define C_STAT GEN_CMD_STAT
#define C_CAT GEN_CMD_CAT
#define C_WC GEN_CMD_WC
#define C_TOUCH GEN_CMD_TOUCH
#define C_CP GEN_CMD_CP
#define C_EDIT GEN_CMD_EDIT
#define C_EXEC GEN_CMD_EXEC
#define C_MKDIR GEN_CMD_MKDIR
#define C_RM GEN_CMD_RM
#define C__COUNT GEN__CMD_COUNT
#define u_cmd gen_user_cmd

/* Weights in enum gen_user_cmd order: ls (drawn by ls_share instead), stat, cat, wc, touch,
 * cp, edit, exec, mkdir, rm. */
static const uint32_t cmd_weight[TH_GEN__USER_MIX_COUNT][C__COUNT] = {
	/* The seed's test (seed 000 §4): ls -l, touch, cp and wc (and cat, which reads the
	 * same way), at random; and programs, demand paged, which the seed names as where
	 * partly cached files come from most (§3), so the cache model's partial reads are
	 * scored too. */
	[TH_GEN_USER_MIX_SEED] = {0, 0, 5, 10, 10, 10, 0, 6, 0, 0},
	[TH_GEN_USER_MIX_FULL] = {0, 20, 18, 12, 8, 10, 8, 12, 2, 4},
};

struct u_rec {
	struct th_gen_open o; /**< the record */
	bool is_active;       /**< opened, not yet closed */
	uint32_t node;        /**< object node */
};

struct gen_user {
	uint32_t uid, gid;
	uint64_t next_ns; /**< acts next then */
	bool is_busy;     /**< a command is running */
	bool is_retired;  /**< the run's end passed */
	uint32_t mount;   /**< mount index of the command */
	struct u_step steps[STEPS_MAX];
	uint32_t n_steps, pc;
	uint32_t slot[N_SLOTS]; /**< node indices */
	char new_name[24];      /**< name to create */
	uint64_t write_size;    /**< U_WRITE target size */
	uint64_t pause_ns;      /**< U_PAUSE */
	/* Step-local iteration. */
	bool is_step_started;
	uint64_t step_ns; /**< U_WALK: when the walk began */
	uint64_t pos; /**< byte offset, READDIR cookie, STATALL index */
	uint32_t sub; /**< window index */
	uint32_t n_win;
	uint64_t win_off[10], win_len[10];
	bool has_unstable;   /**< WRITEs waiting for COMMIT */
	bool is_step_done;   /**< the step finished with the RPC just built */
	struct u_rec rec[2]; /**< [0] read side, [1] write side */
	uint32_t recent[8];  /**< files this user worked on lately (mount 0 or 1 in the
				top bit), so files are read again and caches hit */
	uint32_t n_recent;   /**< entries written to recent, ever */
	uint32_t force_cmd;  /**< gen_users_force(): command + 1, 0: draw one */
	uint32_t force_node; /**< ... on this node */
	/* The RPC in flight. */
	int pend_rec;        /**< record it belongs to, -1: none */
	uint64_t pend_bytes; /**< bytes it moves for that record */
};

struct gen_uclient {
	struct u_mcache *mc; /**< per mount */
	struct gen_user *users;
	uint32_t n_users;
	uint32_t acting;         /**< user of the RPC in flight */
	uint64_t pages;          /**< pages cached */
	uint64_t max_pages;      /**< capacity */
	struct u_data *lru_head; /**< most recently used */
	struct u_data *lru_tail;
};

/* ---- client cache ---- */

static struct u_entry *
ent_get(struct gen_uclient *uc, uint32_t mount, uint32_t node)
{
	struct u_mcache *mc = &uc->mc[mount];

	if (node >= mc->n) {
		uint32_t n = mc->n ? mc->n : 256;
		struct u_entry *p;

		while (n <= node)
			n *= 2;
		p = realloc(mc->ents, (size_t)n * sizeof(*p));
		if (p == NULL)
			return NULL;
		memset(p + mc->n, 0, (size_t)(n - mc->n) * sizeof(*p));
		mc->ents = p;
		mc->n = n;
	}
	return &mc->ents[node];
}

static void
lru_unlink(struct gen_uclient *uc, struct u_data *d)
{
	if (d->prev != NULL)
		d->prev->next = d->next;
	else
		uc->lru_head = d->next;
	if (d->next != NULL)
		d->next->prev = d->prev;
	else
		uc->lru_tail = d->prev;
	d->prev = d->next = NULL;
}

static void
lru_front(struct gen_uclient *uc, struct u_data *d)
{
	if (uc->lru_head == d)
		return;
	if (d->prev != NULL || d->next != NULL || uc->lru_tail == d)
		lru_unlink(uc, d);
	d->next = uc->lru_head;
	d->prev = NULL;
	if (uc->lru_head != NULL)
		uc->lru_head->prev = d;
	uc->lru_head = d;
	if (uc->lru_tail == NULL)
		uc->lru_tail = d;
}

static void
data_drop(struct gen_uclient *uc, struct u_entry *e)
{
	struct u_data *d = e->data;

	if (d == NULL)
		return;
	lru_unlink(uc, d);
	uc->pages -= d->n_pages;
	free(d->bits);
	free(d);
	e->data = NULL;
}

static bool
page_has(const struct u_entry *e, uint64_t page)
{
	const struct u_data *d = e->data;

	return d != NULL && page / 64 < d->n_words && (d->bits[page / 64] >> (page % 64) & 1);
}

/* Least recently used files give up their last pages until the cache fits. */
static void
evict(struct gen_uclient *uc, const struct u_data *keep)
{
	struct u_data *d = uc->lru_tail;

	while (uc->pages > uc->max_pages && d != NULL) {
		struct u_data *prev = d->prev;
		int64_t w;

		if (d == keep) {
			d = prev;
			continue;
		}
		for (w = (int64_t)d->n_words - 1; w >= 0 && uc->pages > uc->max_pages; w--) {
			while (d->bits[w] != 0 && uc->pages > uc->max_pages) {
				int b = 63 - __builtin_clzll(d->bits[w]);

				d->bits[w] &= ~(1ull << b);
				d->n_pages--;
				uc->pages--;
			}
		}
		if (d->n_pages == 0)
			lru_unlink(uc, d); /* stays allocated, owned by its entry, off the list */
		d = prev;
	}
}

static int
pages_add(struct gen_uclient *uc, struct u_entry *e, uint64_t first, uint64_t count)
{
	struct u_data *d = e->data;
	uint64_t p;

	if (count == 0)
		return 0;
	if (d == NULL) {
		d = calloc(1, sizeof(*d));
		if (d == NULL)
			return -ENOMEM;
		e->data = d;
	}
	if ((first + count + 63) / 64 > d->n_words) {
		uint32_t n = (uint32_t)((first + count + 63) / 64);
		uint64_t *b = realloc(d->bits, (size_t)n * sizeof(*b));

		if (b == NULL)
			return -ENOMEM;
		memset(b + d->n_words, 0, (size_t)(n - d->n_words) * sizeof(*b));
		d->bits = b;
		d->n_words = n;
	}
	for (p = first; p < first + count; p++) {
		if (!(d->bits[p / 64] >> (p % 64) & 1)) {
			d->bits[p / 64] |= 1ull << (p % 64);
			d->n_pages++;
			uc->pages++;
		}
	}
	lru_front(uc, d);
	evict(uc, d);
	return 0;
}

static void
pages_truncate(struct gen_uclient *uc, struct u_entry *e, uint64_t size)
{
	struct u_data *d = e->data;
	uint64_t p, first = (size + PAGE - 1) / PAGE;

	if (d == NULL)
		return;
	for (p = first; p < (uint64_t)d->n_words * 64; p++) {
		if (d->bits[p / 64] >> (p % 64) & 1) {
			d->bits[p / 64] &= ~(1ull << (p % 64));
			d->n_pages--;
			uc->pages--;
		}
	}
}

static bool
attr_valid(const struct u_entry *e, uint64_t now)
{
	return e->attr_ns != 0 && now - e->attr_ns < e->timeo_ns;
}

/*
 * Attributes of @p n arrived at @p now. A change the client did not make
 * itself drops cached pages and access rights; a revalidation that finds
 * nothing changed after the timeout doubles it.
 */
static void
attr_update(const struct th_gen_config *cfg, struct gen_uclient *uc, struct u_entry *e,
	const struct gen_node *n, uint64_t now, bool is_own)
{
	bool is_dir = n->type == TH_NFS_DIR;
	uint64_t min = (uint64_t)(is_dir ? cfg->acdirmin_s : cfg->acregmin_s) * NS;
	uint64_t max = (uint64_t)(is_dir ? cfg->acdirmax_s : cfg->acregmax_s) * NS;
	bool is_changed = e->attr_ns != 0 && (e->mtime_ns != n->mtime_ns || e->size != n->size);

	if (e->attr_ns == 0 || is_changed) {
		if (is_changed && !is_own) {
			data_drop(uc, e);
			e->access_ns = 0;
		}
		e->timeo_ns = min;
	} else if (now - e->attr_ns >= e->timeo_ns) {
		e->timeo_ns = e->timeo_ns * 2 > max ? max : e->timeo_ns * 2;
	}
	if (e->timeo_ns == 0)
		e->timeo_ns = 1; /* acregmin 0: never valid, but not "no attributes" */
	e->attr_ns = now;
	e->mtime_ns = n->mtime_ns;
	e->size = n->size;
}

/* ---- world set-up ---- */

/* Home-directory sizes: mostly small files, a tail to a few MB (the seed's trace). */
static uint64_t
user_file_size(struct th_rng *rng)
{
	double u = th_rng_unit(rng);

	if (u < 0.5)
		return 1 + th_rng_below(rng, 8192);
	if (u < 0.9)
		return th_rng_range(rng, 8192, 262144);
	return th_rng_range(rng, 262144, 4u << 20);
}

static int
export_prepare(struct gen_world *w, struct gen_export *e)
{
	/* A week before the start, or 1 s after the epoch for a --start earlier than that (a
	 * time of 0 is "none" to the clients' caches). */
	uint64_t week = 86400ull * 7 * NS;
	uint64_t now = w->cfg->start_ns > week + NS ? w->cfg->start_ns - week : NS;
	int64_t bin, x;
	uint32_t i, n;
	char name[24];

	for (i = 0; i < e->n_files; i++)
		e->nodes[e->files[i]].size = user_file_size(&w->rng);
	bin = gen_model_node_add(e, &w->rng, 0, TH_NFS_DIR, "bin", now, 0, 0);
	if (bin < 0)
		return -ENOMEM;
	n = 8 + th_rng_below(&w->rng, 8);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "prog%u", i);
		x = gen_model_node_add(e, &w->rng, (uint32_t)bin, TH_NFS_REG, name, now, 0, 0);
		if (x < 0)
			return -ENOMEM;
		e->nodes[x].is_exec = true;
		e->nodes[x].mode = 0755;
		e->nodes[x].size = th_rng_range(&w->rng, 65536, 4u << 20);
	}
	return 0;
}

int
gen_users_init(struct gen_world *w)
{
	const struct th_gen_config *cfg = w->cfg;
	uint32_t i, k;

	w->end_ns = cfg->start_ns + (uint64_t)(cfg->hours * 3600.0 * 1e9);
	for (i = 0; i < w->n_servers; i++)
		for (k = 0; k < w->servers[i].n_exports; k++)
			if (export_prepare(w, &w->servers[i].exports[k]) != 0)
				return -ENOMEM;
	for (i = 0; i < w->n_clients; i++) {
		struct gen_client *c = &w->clients[i];
		struct gen_uclient *uc = calloc(1, sizeof(*uc));

		if (uc == NULL)
			return -ENOMEM;
		c->u = uc;
		uc->mc = calloc(c->n_mounts, sizeof(*uc->mc));
		uc->users = calloc(cfg->users_per_client, sizeof(*uc->users));
		if (uc->mc == NULL || uc->users == NULL)
			return -ENOMEM;
		uc->n_users = cfg->users_per_client;
		uc->max_pages = (uint64_t)cfg->cache_mb * (1048576 / PAGE);
		for (k = 0; k < uc->n_users; k++) {
			struct gen_user *u = &uc->users[k];

			/* Distinct users per client; the same uid may work at several clients. */
			u->uid = 1000 + (i * 7 + k * 13) % 40;
			u->gid = 100 + u->uid % 3;
			/* The mount comes first; users start within the first minute. */
			u->next_ns = cfg->start_ns + 10000000 +
				     th_rng_below(&w->rng, 60000) * 1000000ull;
			u->pend_rec = -1;
		}
	}
	return 0;
}

void
gen_users_free(struct gen_world *w)
{
	uint32_t i, k, n;

	for (i = 0; w->clients != NULL && i < w->n_clients; i++) {
		struct gen_uclient *uc = w->clients[i].u;

		if (uc == NULL)
			continue;
		for (k = 0; uc->mc != NULL && k < w->clients[i].n_mounts; k++) {
			for (n = 0; n < uc->mc[k].n; n++) {
				if (uc->mc[k].ents[n].data != NULL) {
					free(uc->mc[k].ents[n].data->bits);
					free(uc->mc[k].ents[n].data);
				}
			}
			free(uc->mc[k].ents);
		}
		free(uc->mc);
		free(uc->users);
		free(uc);
		w->clients[i].u = NULL;
	}
}

/* ---- RPCs ---- */

struct ctx {
	struct gen_world *w;
	struct gen_client *c;
	struct gen_uclient *uc;
	struct gen_user *u;
	struct gen_mount *m;
	struct gen_export *e;
	uint32_t mi; /**< mount index */
	uint64_t now;
	struct gen_rpc *rpc;
};

static void
begin(struct ctx *x, uint32_t proc)
{
	gen_model_begin(x->w, x->c, &x->m->nfs, TH_PROG_NFS, 3, proc, x->rpc);
	x->rpc->exp = x->e;
	x->rpc->verf = x->w->servers[x->m->server_idx].write_verf;
	x->rpc->op.uid = x->u->uid;
	x->rpc->op.gid = x->u->gid;
}

static struct u_entry *
ent(struct ctx *x, uint32_t node)
{
	return ent_get(x->uc, x->mi, node);
}

static void
rpc_getattr(struct ctx *x, uint32_t node)
{
	begin(x, TH_NFS3_GETATTR);
	gen_model_fh(x->e, node, &x->rpc->op.call.fh);
	gen_model_attr(&x->e->nodes[node], &x->rpc->op.reply.attr);
	attr_update(x->w->cfg, x->uc, ent(x, node), &x->e->nodes[node], x->now, false);
}

static void
rpc_access(struct ctx *x, uint32_t node, uint32_t mask)
{
	const struct gen_node *n = &x->e->nodes[node];
	struct u_entry *en;

	begin(x, TH_NFS3_ACCESS);
	gen_model_fh(x->e, node, &x->rpc->op.call.fh);
	gen_model_attr(n, &x->rpc->op.reply.attr);
	x->rpc->op.call.access = mask;
	/* Owners get what they ask; others read, look up and execute. */
	x->rpc->access_granted = x->u->uid == n->uid ? mask : mask & 0x23;
	attr_update(x->w->cfg, x->uc, ent(x, node), n, x->now, false);
	en = ent(x, node);
	if (en->access_ns == 0)
		en->n_access = 0;
	en->access_ns = x->now;
	en->access_uid[en->n_access++ % 4] = x->u->uid;
}

/* LOOKUP of @p name in @p dir; @p node NONE when it does not exist. */
static void
rpc_lookup(struct ctx *x, uint32_t dir, const char *name, uint32_t node)
{
	struct th_op *op;
	struct u_entry *de;

	begin(x, TH_NFS3_LOOKUP);
	op = &x->rpc->op;
	gen_model_fh(x->e, dir, &op->call.fh);
	gen_model_set_name(&op->call.name, name);
	gen_model_attr(&x->e->nodes[dir], &op->reply.dir_attr);
	de = ent(x, dir);
	attr_update(x->w->cfg, x->uc, de, &x->e->nodes[dir], x->now, false);
	if (node == NONE) {
		op->reply.status = 2; /* NFS3ERR_NOENT */
		return;
	}
	gen_model_fh(x->e, node, &op->reply.fh);
	gen_model_attr(&x->e->nodes[node], &op->reply.attr);
	attr_update(x->w->cfg, x->uc, ent(x, node), &x->e->nodes[node], x->now, false);
	ent(x, node)->dent_verf = ent(x, dir)->mtime_ns;
}

static void
rpc_read(struct ctx *x, uint32_t node, uint64_t off, uint32_t count)
{
	const struct gen_node *n = &x->e->nodes[node];
	struct th_op *op;

	begin(x, TH_NFS3_READ);
	op = &x->rpc->op;
	gen_model_fh(x->e, node, &op->call.fh);
	op->call.offset = off;
	op->call.count = count;
	op->reply.count =
		n->size > off ? (uint32_t)(n->size - off < count ? n->size - off : count) : 0;
	op->reply.eof = off + op->reply.count >= n->size;
	gen_model_attr(n, &op->reply.attr);
	x->rpc->latency_ns += op->reply.count;
	attr_update(x->w->cfg, x->uc, ent(x, node), n, x->now, false);
	x->u->pend_bytes = op->reply.count;
}

static void
rpc_write(struct ctx *x, uint32_t node, uint64_t off, uint32_t count)
{
	struct gen_node *n = &x->e->nodes[node];
	struct th_op *op;

	begin(x, TH_NFS3_WRITE);
	op = &x->rpc->op;
	gen_model_fh(x->e, node, &op->call.fh);
	op->call.offset = off;
	op->call.count = count;
	op->call.stable = 0; /* UNSTABLE: the COMMIT on close makes it durable */
	gen_model_pre_attr(n, &op->reply.pre);
	if (off + count > n->size)
		n->size = off + count;
	n->mtime_ns = x->now;
	n->ctime_ns = x->now;
	gen_model_attr(n, &op->reply.attr);
	op->reply.count = count;
	op->reply.committed = 0;
	x->rpc->latency_ns += count * 2;
	attr_update(x->w->cfg, x->uc, ent(x, node), n, x->now, true);
	x->u->pend_bytes = count;
}

static void
rpc_commit(struct ctx *x, uint32_t node)
{
	struct gen_node *n = &x->e->nodes[node];

	begin(x, TH_NFS3_COMMIT);
	gen_model_fh(x->e, node, &x->rpc->op.call.fh);
	gen_model_pre_attr(n, &x->rpc->op.reply.pre);
	gen_model_attr(n, &x->rpc->op.reply.attr);
	attr_update(x->w->cfg, x->uc, ent(x, node), n, x->now, true);
}

/* SETATTR: size 0 (truncate) or both times to the server's clock (touch). */
static void
rpc_setattr(struct ctx *x, uint32_t node, bool is_truncate)
{
	struct gen_node *n = &x->e->nodes[node];
	struct th_op *op;

	begin(x, TH_NFS3_SETATTR);
	op = &x->rpc->op;
	gen_model_fh(x->e, node, &op->call.fh);
	gen_model_pre_attr(n, &op->reply.pre);
	if (is_truncate) {
		op->call.has_set_size = true;
		op->call.set_size = 0;
		n->size = 0;
		pages_truncate(x->uc, ent(x, node), 0);
	} else {
		x->rpc->is_set_times = true;
	}
	n->mtime_ns = x->now;
	n->ctime_ns = x->now;
	gen_model_attr(n, &op->reply.attr);
	attr_update(x->w->cfg, x->uc, ent(x, node), n, x->now, true);
}

/* CREATE or MKDIR @p name in @p dir. @return the new node, or NONE (out of memory). */
static uint32_t
rpc_create(struct ctx *x, uint32_t dir, const char *name, bool is_dir, bool is_excl)
{
	struct th_op *op;
	struct gen_node *d;
	int64_t made;

	begin(x, is_dir ? TH_NFS3_MKDIR : TH_NFS3_CREATE);
	op = &x->rpc->op;
	gen_model_fh(x->e, dir, &op->call.fh);
	gen_model_set_name(&op->call.name, name);
	op->call.has_set_mode = true;
	op->call.set_mode = is_dir ? 0755 : 0644;
	if (!is_dir)
		op->call.stable = is_excl ? 1 : 0; /* GUARDED or UNCHECKED */
	gen_model_pre_attr(&x->e->nodes[dir], &op->reply.pre);
	made = gen_model_node_add(x->e, &x->w->rng, dir, is_dir ? TH_NFS_DIR : TH_NFS_REG, name,
		x->now, x->u->uid, x->u->gid);
	d = &x->e->nodes[dir];
	if (made < 0) {
		op->reply.status = 28; /* NFS3ERR_NOSPC */
		gen_model_attr(d, &op->reply.dir_attr);
		return NONE;
	}
	gen_model_touch_dir(d, x->now);
	x->e->nodes[made].mode = op->call.set_mode;
	gen_model_fh(x->e, (uint32_t)made, &op->reply.fh);
	gen_model_attr(&x->e->nodes[made], &op->reply.attr);
	gen_model_attr(d, &op->reply.dir_attr);
	attr_update(x->w->cfg, x->uc, ent(x, dir), d, x->now, true);
	attr_update(x->w->cfg, x->uc, ent(x, (uint32_t)made), &x->e->nodes[made], x->now, true);
	ent(x, (uint32_t)made)->dent_verf = d->mtime_ns;
	return (uint32_t)made;
}

/* RENAME @p from over @p to's name (same or another directory). */
static void
rpc_rename(struct ctx *x, uint32_t from, uint32_t to)
{
	struct gen_export *e = x->e;
	uint32_t fd = e->nodes[from].parent, td = e->nodes[to].parent;
	struct th_op *op;
	char name[24];

	begin(x, TH_NFS3_RENAME);
	op = &x->rpc->op;
	gen_model_fh(e, fd, &op->call.fh);
	gen_model_set_name(&op->call.name, e->nodes[from].name);
	gen_model_fh(e, td, &op->call.fh2);
	gen_model_set_name(&op->call.name2, e->nodes[to].name);
	gen_model_pre_attr(&e->nodes[fd], &op->reply.pre);
	snprintf(name, sizeof(name), "%s", e->nodes[to].name);
	data_drop(x->uc, ent(x, to));
	ent(x, to)->attr_ns = 0;
	ent(x, to)->dent_verf = 0;
	gen_model_file_remove(e, to);
	gen_model_child_unlink(e, fd, from);
	if (gen_model_grow((void **)&e->nodes[td].children, &e->nodes[td].cap_children,
		    e->nodes[td].n_children + 1, sizeof(uint32_t)) != 0) {
		/* Cannot happen after the removal freed a slot in td; keep the tree sane. */
		e->nodes[fd].children[e->nodes[fd].n_children++] = from;
		td = fd;
	} else {
		e->nodes[td].children[e->nodes[td].n_children++] = from;
	}
	e->nodes[from].parent = td;
	snprintf(e->nodes[from].name, sizeof(e->nodes[from].name), "%s", name);
	e->nodes[from].name_len = (uint8_t)strlen(name);
	e->nodes[from].ctime_ns = x->now;
	gen_model_touch_dir(&e->nodes[fd], x->now);
	gen_model_touch_dir(&e->nodes[td], x->now);
	gen_model_attr(&e->nodes[fd], &op->reply.attr);
	gen_model_attr(&e->nodes[td], &op->reply.dir_attr);
	attr_update(x->w->cfg, x->uc, ent(x, fd), &e->nodes[fd], x->now, true);
	attr_update(x->w->cfg, x->uc, ent(x, td), &e->nodes[td], x->now, true);
	ent(x, from)->dent_verf = e->nodes[td].mtime_ns;
}

static void
rpc_remove(struct ctx *x, uint32_t node)
{
	struct gen_export *e = x->e;
	uint32_t d = e->nodes[node].parent;
	struct th_op *op;

	begin(x, TH_NFS3_REMOVE);
	op = &x->rpc->op;
	gen_model_fh(e, d, &op->call.fh);
	gen_model_set_name(&op->call.name, e->nodes[node].name);
	gen_model_pre_attr(&e->nodes[d], &op->reply.pre);
	data_drop(x->uc, ent(x, node));
	ent(x, node)->attr_ns = 0;
	ent(x, node)->dent_verf = 0;
	gen_model_file_remove(e, node);
	gen_model_touch_dir(&e->nodes[d], x->now);
	gen_model_attr(&e->nodes[d], &op->reply.attr);
	attr_update(x->w->cfg, x->uc, ent(x, d), &e->nodes[d], x->now, true);
}

/*
 * The call of a listing of @p dir from @p cookie, asking 32 KiB as Linux does.
 * @return the first entry's index.
 */
static uint32_t
listing_begin(struct ctx *x, uint32_t proc, uint32_t dir, uint64_t cookie)
{
	const struct gen_node *d = &x->e->nodes[dir];
	struct gen_rpc *rpc = x->rpc;
	uint32_t i = cookie < d->n_children ? (uint32_t)cookie : d->n_children;

	begin(x, proc);
	gen_model_fh(x->e, dir, &rpc->op.call.fh);
	rpc->op.call.count = 32768;
	rpc->op.call.offset = i;
	rpc->dir_cookie_base = i;
	return i;
}

/*
 * The reply of a listing of @p dir whose entries end before entry @p next, @p bytes of
 * them. @return true at the end of the directory.
 */
static bool
listing_end(struct ctx *x, uint32_t dir, uint32_t next, uint64_t bytes)
{
	const struct gen_node *d = &x->e->nodes[dir];
	struct gen_rpc *rpc = x->rpc;

	rpc->op.reply.count = rpc->n_entries;
	rpc->op.reply.eof = next >= d->n_children;
	gen_model_attr(d, &rpc->op.reply.attr);
	attr_update(x->w->cfg, x->uc, ent(x, dir), d, x->now, false);
	x->u->pend_bytes = bytes;
	x->u->pos = next;
	return rpc->op.reply.eof;
}

/* One READDIRPLUS from @p cookie. @return true at the end of the directory. */
static bool
rpc_readdirplus(struct ctx *x, uint32_t dir, uint64_t cookie)
{
	struct gen_export *e = x->e;
	const struct gen_node *d = &e->nodes[dir];
	struct gen_rpc *rpc = x->rpc;
	uint64_t bytes = 0;
	uint32_t i;

	for (i = listing_begin(x, TH_NFS3_READDIRPLUS, dir, cookie);
		i < d->n_children && rpc->n_entries < GEN_DIRENT_MAX; i++) {
		uint32_t c = d->children[i];
		struct u_entry *ce = ent(x, c);

		rpc->entries[rpc->n_entries++] = c;
		attr_update(x->w->cfg, x->uc, ce, &e->nodes[c], x->now, false);
		ce->dent_verf = d->mtime_ns;
		/* XDR of one entry3plus: follows, fileid, name, cookie, attributes, handle. */
		bytes += 4 + 8 + 4 + ((e->nodes[c].name_len + 3u) & ~3u) + 8 + 4 + 84 + 4 + 4 +
			 e->fh_len;
	}
	return listing_end(x, dir, i, bytes);
}

/*
 * One plain READDIR from @p cookie (nordirplus): as many entries as fit the
 * 32 KiB the Linux client asks, names and fileids only, so neither the
 * entries' attributes nor their dentries are refreshed (Linux primes the
 * dcache from READDIRPLUS entries alone). @return true at the end.
 */
static bool
rpc_readdir(struct ctx *x, uint32_t dir, uint64_t cookie)
{
	struct gen_export *e = x->e;
	const struct gen_node *d = &e->nodes[dir];
	struct gen_rpc *rpc = x->rpc;
	/* READDIR3resok around the entries: dir_attributes, cookieverf, the
	 * list's end and eof. */
	const uint64_t around = 4 + 84 + 8 + 4 + 4;
	uint64_t bytes = 0;
	uint32_t i;

	i = listing_begin(x, TH_NFS3_READDIR, dir, cookie);
	rpc->dir = dir; /* its entries are encoded from the directory's children */
	for (; i < d->n_children; i++) {
		/* XDR of one entry3: follows, fileid, name, cookie. */
		uint32_t entry = 4 + 8 + 4 + ((e->nodes[d->children[i]].name_len + 3u) & ~3u) + 8;

		if (around + bytes + entry > rpc->op.call.count)
			break;
		bytes += entry;
		rpc->n_entries++;
	}
	return listing_end(x, dir, i, bytes);
}

/* ---- steps ---- */

static void remember(struct ctx *x, uint32_t node);

static bool
dentry_valid(struct ctx *x, uint32_t node)
{
	uint32_t p = x->e->nodes[node].parent;

	if (p == node)
		return true; /* the root came with the mount */
	return ent(x, node)->dent_verf != 0 && ent(x, node)->dent_verf == ent(x, p)->mtime_ns;
}

/*
 * Linux keeps ACCESS answers per user until the attributes show a change
 * (NFS_INO_INVALID_ACCESS); the model remembers the last user of each file.
 */
static bool
access_valid(struct ctx *x, uint32_t node)
{
	const struct u_entry *en = ent(x, node);
	uint32_t i;

	if (en->access_ns == 0)
		return false;
	for (i = 0; i < en->n_access && i < 4; i++)
		if (en->access_uid[i] == x->u->uid)
			return true;
	return false;
}

static void
rec_begin(struct ctx *x, int r, uint32_t node, bool is_write, bool is_dir)
{
	struct u_rec *rec = &x->u->rec[r];

	memset(rec, 0, sizeof(*rec));
	rec->is_active = true;
	rec->node = node;
	rec->o.is_write = is_write;
	rec->o.is_directory = is_dir;
	rec->o.uid = x->u->uid;
	rec->o.gid = x->u->gid;
	rec->o.client = x->c->addr;
	rec->o.server = x->c->is_v6 ? x->w->servers[x->m->server_idx].addr6
				    : x->w->servers[x->m->server_idx].addr4;
	rec->o.open_ns = x->now; /* until an RPC says better */
	rec->o.close_ns = x->now;
}

static void
rec_object(struct ctx *x, int r, uint32_t node)
{
	struct th_nfs_fh fh;

	gen_model_fh(x->e, node, &fh);
	x->u->rec[r].node = node;
	x->u->rec[r].o.fh_len = (uint8_t)fh.len;
	memcpy(x->u->rec[r].o.fh, fh.data, fh.len);
}

static int
rec_close(struct ctx *x, int r)
{
	struct u_rec *rec = &x->u->rec[r];
	struct th_gen_open *o = &rec->o;
	const struct gen_node *n;

	if (!rec->is_active)
		return 0;
	rec->is_active = false;
	if (rec->node == NONE)
		return 0; /* the create failed: no file was opened */
	n = &x->e->nodes[rec->node];
	o->size = o->is_write ? n->size : ent(x, rec->node)->size;
	if (o->is_directory)
		o->cls = o->is_write ? TH_GEN_OPEN_DIR_WRITE : TH_GEN_OPEN_DIR_READ;
	else if (o->is_write)
		o->cls = TH_GEN_OPEN_WRITE;
	else if (o->transferred == 0)
		o->cls = TH_GEN_OPEN_CACHED_READ;
	else if (o->transferred >= o->touched)
		o->cls = TH_GEN_OPEN_UNCACHED_READ;
	else
		o->cls = TH_GEN_OPEN_PARTIAL_READ;
	if (o->is_directory && !o->is_write)
		o->size = n->size;
	x->w->stats->opens[o->cls]++;
	return x->w->open_cb != NULL ? x->w->open_cb(x->w->open_ctx, o) : 0;
}

/* The path from the root to @p node: out[0] is the root. @return components. */
static uint32_t
path_of(const struct gen_export *e, uint32_t node, uint32_t *out)
{
	uint32_t tmp[DEPTH_MAX], n = 0, i;

	while (n < DEPTH_MAX) {
		tmp[n++] = node;
		if (e->nodes[node].parent == node)
			break;
		node = e->nodes[node].parent;
	}
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* Path walk: the first component that needs an RPC gets it. @return 1 RPC built, 0 done. */
static int
step_walk(struct ctx *x, uint32_t node, bool is_self)
{
	uint32_t path[DEPTH_MAX], n = path_of(x->e, node, path), i;
	struct gen_user *u = x->u;

	if (!u->is_step_started) {
		u->is_step_started = true;
		u->step_ns = x->now;
	}
	if (!is_self)
		n--;
	for (i = 0; i < n; i++) {
		uint32_t d = path[i];
		const struct u_entry *en = ent(x, d);

		if (i > 0 && !dentry_valid(x, d)) {
			rpc_lookup(x, path[i - 1], x->e->nodes[d].name, d);
			return 1;
		}
		/* Attributes fetched during this walk serve it, even with a timeout of 0
		 * (actimeo=0): one GETATTR per component, as Linux revalidates a lookup. */
		if (!attr_valid(en, x->now) && !(en->attr_ns != 0 && en->attr_ns >= u->step_ns)) {
			rpc_getattr(x, d);
			x->w->stats->phantom_getattrs++;
			return 1;
		}
		if (!access_valid(x, d)) {
			rpc_access(x, d, 0x1f);
			return 1;
		}
	}
	return 0;
}

static bool
node_ok(const struct gen_export *e, uint32_t node)
{
	return node != NONE && node < e->n_nodes && e->nodes[node].is_live;
}

/* Plan the read windows once the open told the client the size. */
static void
plan_windows(struct ctx *x, bool is_exec)
{
	struct gen_user *u = x->u;
	uint64_t size = ent(x, u->slot[SA])->size;
	uint32_t i, k, n_w = (uint32_t)((size + WIN - 1) / WIN);

	u->n_win = 0;
	if (size == 0)
		return;
	if (!is_exec) {
		u->win_off[0] = 0;
		u->win_len[0] = size;
		u->n_win = 1;
		return;
	}
	/* The ELF header first, then faults wherever the program jumps: out of order. */
	k = 2 + th_rng_below(&x->w->rng, 7);
	u->win_off[u->n_win++] = 0;
	for (i = 0; i < k && u->n_win < 10; i++) {
		uint64_t off = (uint64_t)th_rng_below(&x->w->rng, n_w) * WIN;
		uint32_t j;

		for (j = 0; j < u->n_win && u->win_off[j] != off; j++)
			;
		if (j == u->n_win)
			u->win_off[u->n_win++] = off;
	}
	for (i = 0; i < u->n_win; i++)
		u->win_len[i] = size - u->win_off[i] < WIN ? size - u->win_off[i] : WIN;
}

/* Next READ of the uncached pages in the windows. @return 1 RPC built, 0 done. */
static int
step_read(struct ctx *x, bool is_exec)
{
	struct gen_user *u = x->u;
	uint32_t node = u->slot[SA];
	struct u_entry *en = ent(x, node);
	uint32_t rsize = x->w->cfg->rsize;

	if (x->c->is_udp && rsize > 32768)
		rsize = 32768;
	if (!u->is_step_started) {
		uint32_t i;

		u->is_step_started = true;
		plan_windows(x, is_exec);
		u->sub = 0;
		u->pos = u->n_win ? u->win_off[0] : 0;
		for (i = 0; i < u->n_win; i++)
			u->rec[0].o.touched += u->win_len[i];
	}
	while (u->sub < u->n_win) {
		uint64_t end = u->win_off[u->sub] + u->win_len[u->sub];
		uint64_t p = u->pos / PAGE, last = (end + PAGE - 1) / PAGE, q;

		while (p < last && page_has(en, p))
			p++;
		if (p >= last) {
			if (++u->sub < u->n_win)
				u->pos = u->win_off[u->sub];
			continue;
		}
		for (q = p; q < last && !page_has(en, q) && (q - p + 1) * PAGE <= rsize; q++)
			;
		rpc_read(x, node, p * PAGE, (uint32_t)((q - p) * PAGE));
		en = ent(x, node); /* attr_update may have dropped the pages: nothing to keep */
		if (pages_add(x->uc, en, p, q - p) != 0)
			return -ENOMEM;
		/* What the user gets of it counts against the window, not past its end. */
		u->pos = q * PAGE;
		return 1;
	}
	return 0;
}

static int
step_write(struct ctx *x)
{
	struct gen_user *u = x->u;
	uint32_t node = u->slot[SB];
	uint32_t wsize = x->w->cfg->wsize;
	uint64_t left;

	if (x->c->is_udp && wsize > 32768)
		wsize = 32768;
	if (!u->is_step_started) {
		u->is_step_started = true;
		u->pos = 0;
		u->rec[1].o.touched = u->write_size;
	}
	if (u->pos >= u->write_size)
		return 0;
	left = u->write_size - u->pos;
	rpc_write(x, node, u->pos, left < wsize ? (uint32_t)left : wsize);
	if (pages_add(x->uc, ent(x, node), u->pos / PAGE,
		    (x->rpc->op.call.count + PAGE - 1) / PAGE) != 0)
		return -ENOMEM;
	u->pos += x->rpc->op.call.count;
	u->has_unstable = true;
	return 1;
}

/*
 * Evaluate the current step. @return 1 with an RPC built, 0 when the step is
 * finished without one, 2 when the user pauses, -1 to abort the command (a
 * node another client removed), or a negative errno below -1... as -ENOMEM.
 */
static int
step_eval(struct ctx *x, const struct u_step *s)
{
	struct gen_user *u = x->u;
	uint32_t node = u->slot[s->slot];
	struct u_entry *en;
	int rc;

	if (s->kind != U_CLOSE && s->kind != U_PAUSE && s->kind != U_LOOKUP_NEG &&
		!(s->kind == U_CREATE) && !node_ok(x->e, node))
		return -1;
	switch (s->kind) {
	case U_WALK:
		return step_walk(x, node, s->flags & F_SELF);
	case U_OPEN:
		if (!dentry_valid(x, node)) {
			rpc_lookup(x, x->e->nodes[node].parent, x->e->nodes[node].name, node);
			u->is_step_done = true;
			return 1;
		}
		/* Linux's nfs_lookup_verify_inode() forces a revalidation on LOOKUP_OPEN
		 * for regular files and directories alike (close-to-open; ls -l opens its
		 * directory), cached attributes or not. */
		rpc_getattr(x, node);
		u->is_step_done = true;
		return 1;
	case U_ACCESS:
		if (access_valid(x, node))
			return 0;
		/* Directories: everything; programs: read and execute; files: read, modify. */
		rpc_access(x, node,
			x->e->nodes[node].type == TH_NFS_DIR ? 0x1f
							     : (s->flags & F_EXEC ? 0x21 : 0x2d));
		u->is_step_done = true;
		return 1;
	case U_READ:
		return step_read(x, s->flags & F_EXEC);
	case U_CLOSE:
		rc = rec_close(x, s->rec);
		return rc < 0 ? rc : 0;
	case U_LOOKUP_NEG:
		if (!node_ok(x->e, node))
			return -1;
		rpc_lookup(x, node, u->new_name, NONE);
		u->is_step_done = true;
		return 1;
	case U_CREATE:
		if (!node_ok(x->e, u->slot[SD]))
			return -1;
		u->slot[SB] = rpc_create(
			x, u->slot[SD], u->new_name, s->flags & F_DIR, s->flags & F_EXCL);
		if (s->rec >= 0) {
			if (!u->rec[s->rec].is_active)
				rec_begin(x, s->rec, u->slot[SB], true, s->flags & F_DIR);
			u->rec[s->rec].o.is_directory = s->flags & F_DIR;
			if (u->slot[SB] != NONE)
				rec_object(x, s->rec, u->slot[SB]);
			else
				u->rec[s->rec].node = NONE;
		}
		u->is_step_done = true;
		return 1;
	case U_TRUNC:
	case U_TOUCH:
		rpc_setattr(x, node, s->kind == U_TRUNC);
		u->is_step_done = true;
		return 1;
	case U_WRITE:
		return step_write(x);
	case U_COMMIT:
		if (!u->has_unstable)
			return 0;
		u->has_unstable = false;
		rpc_commit(x, node);
		u->is_step_done = true;
		return 1;
	case U_RENAME:
		if (!node_ok(x->e, u->slot[SA]))
			return -1;
		rpc_rename(x, u->slot[SB], u->slot[SA]);
		remember(x, u->slot[SB]); /* the saved file is the one to come back to */
		u->is_step_done = true;
		return 1;
	case U_REMOVE:
		rpc_remove(x, node);
		u->is_step_done = true;
		return 1;
	case U_STAT:
		if (!dentry_valid(x, node)) {
			rpc_lookup(x, x->e->nodes[node].parent, x->e->nodes[node].name, node);
			x->w->stats->phantom_lookups++;
		} else if (!attr_valid(ent(x, node), x->now)) {
			rpc_getattr(x, node);
			x->w->stats->phantom_getattrs++;
		} else {
			return 0;
		}
		u->is_step_done = true;
		return 1;
	case U_READDIR:
		en = ent(x, node);
		if (!u->is_step_started) {
			u->is_step_started = true;
			u->pos = 0;
			if (en->list_mtime != 0 && en->list_mtime == en->mtime_ns)
				return 0; /* the listing is cached and the directory unchanged */
		}
		if (x->w->cfg->is_nordirplus ? rpc_readdir(x, node, u->pos)
					     : rpc_readdirplus(x, node, u->pos)) {
			ent(x, node)->list_mtime = x->e->nodes[node].mtime_ns;
			u->is_step_done = true;
		}
		return 1;
	case U_STATALL: {
		const struct gen_node *d = &x->e->nodes[node];

		if (!u->is_step_started) {
			u->is_step_started = true;
			u->pos = 0;
		}
		while (u->pos < d->n_children) {
			uint32_t c = d->children[u->pos++];

			/* After READDIRPLUS every dentry is verified; after READDIR, lstat
			 * looks up each name whose dentry is missing or older than the
			 * directory, and the LOOKUP brings the attributes along. */
			if (x->w->cfg->is_nordirplus && !dentry_valid(x, c)) {
				rpc_lookup(x, node, x->e->nodes[c].name, c);
				x->w->stats->phantom_lookups++;
				return 1;
			}
			if (!attr_valid(ent(x, c), x->now)) {
				rpc_getattr(x, c);
				x->w->stats->phantom_getattrs++;
				return 1;
			}
		}
		return 0;
	}
	case U_PAUSE:
		return 2;
	default:
		return 0;
	}
}

/* ---- commands ---- */

static void
push(struct gen_user *u, uint8_t kind, uint8_t slot, int8_t rec, uint8_t flags)
{
	if (u->n_steps < STEPS_MAX)
		u->steps[u->n_steps++] = (struct u_step){kind, flags, slot, rec};
}

/* A regular file that is not a program (programs are only run). */
static uint32_t
pick_data_file(struct ctx *x)
{
	struct th_rng *rng = &x->w->rng;
	const struct gen_export *e = x->e;
	struct gen_user *u = x->u;
	uint32_t i, f = NONE;

	/* People come back to what they worked on: most picks are recent files. */
	if (u->n_recent > 0 && gen_rng_chance(rng, 0.6)) {
		uint32_t n = u->n_recent < 8 ? u->n_recent : 8;
		uint32_t r = u->recent[th_rng_below(rng, n)];

		if (r >> 31 == x->mi && node_ok(e, r & 0x7fffffff) &&
			e->nodes[r & 0x7fffffff].type == TH_NFS_REG &&
			!e->nodes[r & 0x7fffffff].is_exec)
			return r & 0x7fffffff;
	}
	for (i = 0; i < 8 && e->n_files > 0; i++) {
		f = gen_model_pick_file(rng, e);
		if (!e->nodes[f].is_exec)
			return f;
	}
	return NONE;
}

static void
remember(struct ctx *x, uint32_t node)
{
	struct gen_user *u = x->u;

	if (node != NONE)
		u->recent[u->n_recent++ % 8] = node | (x->mi ? 1u << 31 : 0);
}

static uint32_t
pick_exec(struct th_rng *rng, const struct gen_export *e)
{
	uint32_t i, bin = NONE;

	for (i = 0; i < e->nodes[0].n_children; i++) {
		uint32_t c = e->nodes[0].children[i];

		if (e->nodes[c].type == TH_NFS_DIR && strcmp(e->nodes[c].name, "bin") == 0)
			bin = c;
	}
	if (bin == NONE || e->nodes[bin].n_children == 0)
		return NONE;
	i = e->nodes[bin].children[th_rng_below(rng, e->nodes[bin].n_children)];
	return e->nodes[i].is_exec ? i : NONE;
}

static void
new_name(struct ctx *x, const char *prefix)
{
	char tmp[24];

	if (prefix == NULL) {
		gen_model_make_name(x->e, &x->w->rng, false, tmp, sizeof(tmp));
		snprintf(x->u->new_name, sizeof(x->u->new_name), "%s", tmp);
	} else {
		snprintf(x->u->new_name, sizeof(x->u->new_name), "%s%u", prefix, x->e->name_seq++);
	}
}

static enum u_cmd
draw_cmd(struct ctx *x)
{
	const uint32_t *weight = cmd_weight[x->w->cfg->user_mix];
	uint32_t total = 0, r, i;

	if (gen_rng_chance(&x->w->rng, x->w->cfg->ls_share))
		return C_LS;
	for (i = 0; i < C__COUNT; i++)
		total += weight[i];
	r = th_rng_below(&x->w->rng, total);
	for (i = 0; i < C__COUNT; i++) {
		if (r < weight[i])
			return (enum u_cmd)i;
		r -= weight[i];
	}
	return C_WC;
}

/* Plan a command: its steps, and the nodes they work on. */
static void
plan(struct ctx *x)
{
	struct gen_user *u = x->u;
	struct gen_export *e = x->e;
	struct th_rng *rng = &x->w->rng;
	enum u_cmd cmd;
	uint32_t a = NONE, b = NONE, d = NONE;
	uint32_t n_files = e->n_files;
	bool is_forced = u->force_cmd != 0;

	u->n_steps = 0;
	u->pc = 0;
	u->is_step_started = false;
	u->has_unstable = false;
	u->rec[0].is_active = u->rec[1].is_active = false;
	if (is_forced) {
		cmd = (enum u_cmd)(u->force_cmd - 1);
		a = u->force_node;
		u->force_cmd = 0;
		goto planned;
	}
	cmd = draw_cmd(x);
	if (cmd == C_EXEC && (a = pick_exec(rng, e)) == NONE)
		cmd = C_CAT;
	if (cmd == C_MKDIR && e->n_dirs > 200)
		cmd = C_LS;
	if (cmd == C_RM && n_files < 500)
		cmd = C_STAT;
	if (cmd != C_LS && cmd != C_MKDIR && cmd != C_EXEC && (a = pick_data_file(x)) == NONE)
		cmd = C_LS;
planned:
	x->w->stats->commands++;
	switch (cmd) {
	case C_LS:
		if (!is_forced)
			a = gen_model_pick_dir(rng, e);
		push(u, U_WALK, SA, -1, 0);
		push(u, U_OPEN, SA, 0, 0);
		push(u, U_ACCESS, SA, 0, 0);
		push(u, U_READDIR, SA, 0, 0);
		push(u, U_CLOSE, SA, 0, 0);
		push(u, U_STATALL, SA, -1, 0);
		break;
	case C_STAT:
		push(u, U_WALK, SA, -1, 0);
		push(u, U_STAT, SA, -1, 0);
		break;
	case C_CAT:
	case C_WC:
	case C_EXEC:
		push(u, U_WALK, SA, -1, 0);
		push(u, U_OPEN, SA, 0, 0);
		push(u, U_ACCESS, SA, 0, cmd == C_EXEC ? F_EXEC : 0);
		push(u, U_READ, SA, 0, cmd == C_EXEC ? F_EXEC : 0);
		push(u, U_CLOSE, SA, 0, 0);
		break;
	case C_TOUCH:
		if (gen_rng_chance(rng, 0.25) && n_files < 3000) {
			d = gen_model_pick_dir(rng, e);
			new_name(x, NULL);
			push(u, U_WALK, SD, -1, F_SELF);
			push(u, U_LOOKUP_NEG, SD, 1, 0);
			push(u, U_CREATE, SD, 1, 0);
			push(u, U_TOUCH, SB, 1, 0);
			push(u, U_CLOSE, SB, 1, 0);
		} else {
			b = a;
			push(u, U_WALK, SB, -1, 0);
			push(u, U_OPEN, SB, 1, 0);
			push(u, U_ACCESS, SB, 1, 0);
			push(u, U_TOUCH, SB, 1, 0);
			push(u, U_CLOSE, SB, 1, 0);
		}
		break;
	case C_CP:
		push(u, U_WALK, SA, -1, 0);
		push(u, U_OPEN, SA, 0, 0);
		push(u, U_ACCESS, SA, 0, 0);
		if (n_files < 3000 && gen_rng_chance(rng, 0.6)) {
			d = gen_model_pick_dir(rng, e);
			new_name(x, NULL);
			push(u, U_WALK, SD, -1, F_SELF);
			push(u, U_LOOKUP_NEG, SD, 1, 0);
			push(u, U_CREATE, SD, 1, 0);
		} else {
			b = pick_data_file(x);
			if (b == a || b == NONE) {
				/* No other file to copy over: the user just reads this one. */
				u->n_steps = 0;
				push(u, U_WALK, SA, -1, 0);
				push(u, U_OPEN, SA, 0, 0);
				push(u, U_ACCESS, SA, 0, 0);
				push(u, U_READ, SA, 0, 0);
				push(u, U_CLOSE, SA, 0, 0);
				break;
			}
			push(u, U_WALK, SB, -1, 0);
			push(u, U_OPEN, SB, 1, 0);
			push(u, U_ACCESS, SB, 1, 0);
			push(u, U_TRUNC, SB, 1, 0);
		}
		push(u, U_READ, SA, 0, 0);
		push(u, U_CLOSE, SA, 0, 0);
		push(u, U_WRITE, SB, 1, 0);
		push(u, U_COMMIT, SB, 1, 0);
		push(u, U_CLOSE, SB, 1, 0);
		u->write_size = e->nodes[a].size;
		break;
	case C_EDIT:
		d = e->nodes[a].parent;
		new_name(x, ".tmp");
		push(u, U_WALK, SA, -1, 0);
		push(u, U_OPEN, SA, 0, 0);
		push(u, U_ACCESS, SA, 0, 0);
		push(u, U_READ, SA, 0, 0);
		push(u, U_CLOSE, SA, 0, 0);
		push(u, U_PAUSE, SA, -1, 0);
		push(u, U_WALK, SD, -1, F_SELF);
		push(u, U_CREATE, SD, 1, F_EXCL);
		push(u, U_WRITE, SB, 1, 0);
		push(u, U_COMMIT, SB, 1, 0);
		push(u, U_CLOSE, SB, 1, 0);
		push(u, U_RENAME, SB, -1, 0);
		u->pause_ns = (uint64_t)(gen_rng_exp(rng, 20.0) * 1e9) + NS;
		{
			uint64_t s = e->nodes[a].size;
			int64_t delta = (int64_t)th_rng_below(rng, (uint32_t)(s / 10 + 200)) -
					(int64_t)(s / 20);

			u->write_size = (int64_t)s + delta > 0 ? (uint64_t)((int64_t)s + delta) : 1;
		}
		break;
	case C_MKDIR:
		d = is_forced ? a : gen_model_pick_dir(rng, e);
		{
			char tmp[24];

			gen_model_make_name(e, rng, true, tmp, sizeof(tmp));
			snprintf(u->new_name, sizeof(u->new_name), "%s", tmp);
		}
		push(u, U_WALK, SD, -1, F_SELF);
		push(u, U_LOOKUP_NEG, SD, 1, 0);
		push(u, U_CREATE, SD, 1, F_DIR);
		push(u, U_CLOSE, SB, 1, 0);
		break;
	case C_RM:
		push(u, U_WALK, SA, -1, 0);
		push(u, U_STAT, SA, -1, 0);
		push(u, U_REMOVE, SA, -1, 0);
		break;
	default:
		break;
	}
	u->slot[SA] = a;
	u->slot[SB] = b;
	u->slot[SD] = d;
	if (cmd != C_LS && cmd != C_MKDIR && cmd != C_EXEC && cmd != C_RM)
		remember(x, a);
}

/* Begin the records of steps that open something, at their first evaluation. */
static void
maybe_begin_rec(struct ctx *x, const struct u_step *s)
{
	struct gen_user *u = x->u;
	uint32_t node = u->slot[s->slot];

	if (s->rec < 0 || u->rec[s->rec].is_active || s->kind == U_CLOSE || s->kind == U_CREATE)
		return;
	if (s->kind == U_LOOKUP_NEG) {
		/* The object is not there yet: the CREATE names it. */
		rec_begin(x, s->rec, NONE, true, false);
		u->rec[s->rec].node = NONE;
		return;
	}
	if (!node_ok(x->e, node))
		return;
	rec_begin(x, s->rec, node, s->rec == 1, x->e->nodes[node].type == TH_NFS_DIR);
	rec_object(x, s->rec, node);
}

static void
end_command(struct ctx *x, uint64_t when)
{
	struct gen_user *u = x->u;

	u->is_busy = false;
	u->next_ns =
		when + (uint64_t)(gen_rng_exp(&x->w->rng, x->w->cfg->user_think_s) * 1e9) + 1000000;
}

/* Advance one user. @return 1 RPC built, 0 nothing now (u->next_ns moved), <0 error. */
static int
user_step(struct ctx *x)
{
	struct gen_user *u = x->u;
	int rc;

	if (!u->is_busy) {
		if (x->now >= x->w->end_ns) {
			u->is_retired = true;
			u->next_ns = UINT64_MAX;
			return 0;
		}
		if (u->force_cmd == 0)
			u->mount = th_rng_below(&x->w->rng, x->c->n_mounts);
		x->mi = u->mount;
		x->m = &x->c->mounts[u->mount];
		x->e = &x->w->servers[x->m->server_idx].exports[x->m->export_idx];
		plan(x);
		u->is_busy = true;
	}
	while (u->pc < u->n_steps) {
		const struct u_step *s = &u->steps[u->pc];

		maybe_begin_rec(x, s);
		u->is_step_done = false;
		u->pend_rec = -1;
		u->pend_bytes = 0;
		rc = step_eval(x, s);
		if (rc == 1) {
			u->pend_rec = s->rec;
			if (u->is_step_done) {
				u->pc++;
				u->is_step_started = false;
			}
			return 1;
		}
		if (rc == 2) {
			u->pc++;
			u->is_step_started = false;
			u->next_ns = x->now + u->pause_ns;
			return 0;
		}
		if (rc < -1)
			return rc;
		if (rc == -1) {
			/* Another client removed a node: the user gives up; opens close. */
			rc = rec_close(x, 0);
			if (rc == 0)
				rc = rec_close(x, 1);
			if (rc != 0)
				return rc;
			end_command(x, x->now);
			return 0;
		}
		u->pc++;
		u->is_step_started = false;
	}
	end_command(x, x->now);
	return 0;
}

static void
client_next(struct gen_client *c)
{
	struct gen_uclient *uc = c->u;
	uint64_t t = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < uc->n_users; i++)
		if (uc->users[i].next_ns < t)
			t = uc->users[i].next_ns;
	c->next_ns = t;
}

int
gen_users_next(struct gen_world *w, struct gen_client *c, uint64_t now, struct gen_rpc *rpc)
{
	struct gen_uclient *uc = c->u;
	struct ctx x;
	uint32_t i;
	int rc;

	for (i = 0; i < c->n_mounts; i++) {
		struct gen_mount *m = &c->mounts[i];

		if (m->state != GEN_MOUNT_READY) {
			bool is_fsinfo = m->state == GEN_MOUNT_FSINFO;

			gen_model_session(w, c, m, now, rpc);
			if (is_fsinfo) {
				/* FSINFO's attributes are the root's: the mount caches them. */
				struct gen_export *e =
					&w->servers[m->server_idx].exports[m->export_idx];

				attr_update(
					w->cfg, uc, ent_get(uc, i, 0), &e->nodes[0], now, false);
			}
			uc->acting = NONE;
			return 1;
		}
	}
	memset(&x, 0, sizeof(x));
	x.w = w;
	x.c = c;
	x.uc = uc;
	x.now = now;
	x.rpc = rpc;
	for (;;) {
		struct gen_user *u = NULL;

		for (i = 0; i < uc->n_users; i++)
			if (u == NULL || uc->users[i].next_ns < u->next_ns)
				u = &uc->users[i];
		if (u == NULL || u->next_ns > now) {
			client_next(c);
			return 0;
		}
		x.u = u;
		x.mi = u->mount;
		x.m = &c->mounts[u->mount];
		x.e = &w->servers[x.m->server_idx].exports[x.m->export_idx];
		rc = user_step(&x);
		if (rc != 0) {
			uc->acting = (uint32_t)(u - uc->users);
			return rc;
		}
	}
}

int
gen_users_done(struct gen_world *w, struct gen_client *c, const struct gen_rpc *rpc)
{
	struct gen_uclient *uc = c->u;
	const struct th_op *op = &rpc->op;
	uint64_t done = op->reply_last_ns;

	(void)w;
	if (uc->acting == NONE) {
		c->next_ns = done + 50000; /* mount steps follow each other */
		return 0;
	}
	{
		struct gen_user *u = &uc->users[uc->acting];

		if (u->pend_rec >= 0 && u->rec[u->pend_rec].is_active) {
			struct th_gen_open *o = &u->rec[u->pend_rec].o;

			if (o->ops == 0)
				o->open_ns = op->call_first_ns;
			o->ops++;
			o->close_ns = op->reply_first_ns;
			o->transferred += u->pend_bytes;
		}
		/* The client turns a reply into the next call in tens of microseconds. */
		u->next_ns = done + 20000 + th_rng_below(&w->rng, 60000);
	}
	client_next(c);
	return 0;
}

void
gen_users_force(struct gen_client *c, uint32_t user, enum gen_user_cmd cmd, uint32_t mount,
	uint32_t node, uint64_t now)
{
	struct gen_user *u = &c->u->users[user];

	u->force_cmd = (uint32_t)cmd + 1;
	u->force_node = node;
	u->mount = mount < c->n_mounts ? mount : 0;
	u->next_ns = now;
	client_next(c);
}

bool
gen_users_is_busy(const struct gen_client *c, uint32_t user)
{
	return c->u->users[user].is_busy;
}
