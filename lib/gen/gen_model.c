/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The world the generator simulates: servers with exports holding a tree
 * of files and directories, clients with their identity and mounts. Each
 * operation is built here as the th_op a perfect decoder reports (with the
 * object's attributes before and after) and applied to the model, so
 * later operations see its effect: a CREATE'd file can be read, a REMOVE'd
 * one is gone, a WRITE grows the file.
 */

#include "gen_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_bytes.h"

/* ---- Random draws ---- */

bool
gen_rng_chance(struct th_rng *r, double p)
{
	return th_rng_unit(r) < p;
}

double
gen_rng_exp(struct th_rng *r, double mean)
{
	return -mean * log(1.0 - th_rng_unit(r));
}

double
gen_rng_lognormal(struct th_rng *r, double median, double sigma)
{
	double u1 = 1.0 - th_rng_unit(r), u2 = th_rng_unit(r);
	double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);

	return median * exp(sigma * z);
}

/* ---- nodes ---- */

int
gen_model_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n;
	void *p;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	p = realloc(*arr, (size_t)n * elem);
	if (p == NULL)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

static int
list_add(uint32_t **list, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (gen_model_grow((void **)list, cap, *n + 1, sizeof(**list)) != 0)
		return -ENOMEM;
	(*list)[(*n)++] = v;
	return 0;
}

void
gen_model_fh(const struct gen_export *e, uint32_t node, struct th_nfs_fh *fh)
{
	const struct gen_node *n = &e->nodes[node];
	uint8_t *p = fh->data;
	uint64_t mix = n->fileid * 0x9e3779b97f4a7c15ull ^ e->fsid;
	unsigned int i;

	/* Shaped like a Linux knfsd handle: version, fsid type, fsid, inode, generation. */
	fh->len = e->fh_len;
	memset(p, 0, TH_NFS_FH_MAX);
	p[0] = 1;
	p[1] = 0;
	p[2] = 7;
	p[3] = 1;
	for (i = 0; i < 4; i++)
		p[4 + i] = (uint8_t)(e->fsid >> (24 - 8 * i));
	for (i = 0; i < 8; i++)
		p[8 + i] = (uint8_t)(n->fileid >> (56 - 8 * i));
	for (i = 0; i < 4; i++)
		p[16 + i] = (uint8_t)(n->generation >> (24 - 8 * i));
	for (i = 20; i < e->fh_len; i++)
		p[i] = (uint8_t)(mix >> (8 * (i % 8)));
}

void
gen_model_attr(const struct gen_node *n, struct th_nfs_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->is_present = true;
	a->type = n->type;
	a->mode = n->mode;
	a->nlink = n->nlink;
	a->uid = n->uid;
	a->gid = n->gid;
	a->size = n->size;
	a->fileid = n->fileid;
	a->mtime_ns = n->mtime_ns;
	a->ctime_ns = n->ctime_ns;
}

void
gen_model_pre_attr(const struct gen_node *n, struct th_nfs_pre_attr *p)
{
	p->is_present = true;
	p->size = n->size;
	p->mtime_ns = n->mtime_ns;
	p->ctime_ns = n->ctime_ns;
}

void
gen_model_set_name(struct th_nfs_name *dst, const char *s)
{
	size_t len = strlen(s);

	if (len > TH_NFS_NAME_MAX)
		len = TH_NFS_NAME_MAX;
	memcpy(dst->s, s, len);
	dst->s[len] = '\0';
	dst->len = (uint16_t)len;
	dst->is_cut = false;
}

static const char *const stems[] = {"data", "log", "notes", "build", "report", "img", "core",
	"index", "run", "src", "db", "tmp"};
static const char *const exts[] = {".txt", ".dat", ".c", ".o", ".log", ".csv", ".bin", ""};

void
gen_model_make_name(struct gen_export *e, struct th_rng *rng, bool is_dir, char *out, size_t size)
{
	uint32_t seq = e->name_seq++;

	if (is_dir)
		snprintf(out, size, "%s%u", stems[th_rng_below(rng, 12)], seq);
	else
		snprintf(out, size, "%s%u%s", stems[th_rng_below(rng, 12)], seq,
			exts[th_rng_below(rng, 8)]);
}

/* File sizes: many small, some medium, a few large, as file system surveys find. */
static uint64_t
draw_size(struct th_rng *rng)
{
	double u = th_rng_unit(rng);

	if (u < 0.4)
		return th_rng_below(rng, 4096);
	if (u < 0.85)
		return (uint64_t)exp(log(4096.0) + th_rng_unit(rng) * log(256.0));
	return (uint64_t)exp(log(1048576.0) + th_rng_unit(rng) * log(64.0));
}

/* Add a node under @p parent (or the root when parent is UINT32_MAX). @return index or -1. */
int64_t
gen_model_node_add(struct gen_export *e, struct th_rng *rng, uint32_t parent, uint32_t type,
	const char *name, uint64_t now, uint32_t uid, uint32_t gid)
{
	struct gen_node *n;
	uint32_t idx = e->n_nodes;

	if (gen_model_grow((void **)&e->nodes, &e->cap_nodes, idx + 1, sizeof(*e->nodes)) != 0)
		return -1;
	n = &e->nodes[idx];
	memset(n, 0, sizeof(*n));
	n->fileid = e->next_fileid;
	e->next_fileid += 1 + th_rng_below(rng, 3);
	n->type = type;
	n->mode = type == TH_NFS_DIR ? 0755 : (gen_rng_chance(rng, 0.8) ? 0644 : 0600);
	n->nlink = type == TH_NFS_DIR ? 2 : 1;
	n->uid = uid;
	n->gid = gid;
	n->mtime_ns = now;
	n->ctime_ns = now;
	n->generation = (uint32_t)th_rng_u64(rng);
	n->is_live = true;
	n->parent = parent == UINT32_MAX ? idx : parent;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->name_len = (uint8_t)strlen(n->name);
	e->n_nodes++;
	if (type == TH_NFS_DIR) {
		n->size = 4096;
		n->pos = e->n_dirs;
		if (list_add(&e->dirs, &e->n_dirs, &e->cap_dirs, idx) != 0)
			return -1;
	} else {
		n->pos = e->n_files;
		if (list_add(&e->files, &e->n_files, &e->cap_files, idx) != 0)
			return -1;
	}
	if (parent != UINT32_MAX) {
		struct gen_node *p = &e->nodes[parent];

		if (gen_model_grow((void **)&p->children, &p->cap_children, p->n_children + 1,
			    sizeof(uint32_t)) != 0)
			return -1;
		p->children[p->n_children++] = idx;
		if (type == TH_NFS_DIR)
			p->nlink++;
	}
	return idx;
}

void
gen_model_child_unlink(struct gen_export *e, uint32_t parent, uint32_t idx)
{
	struct gen_node *p = &e->nodes[parent];
	uint32_t i;

	for (i = 0; i < p->n_children; i++) {
		if (p->children[i] == idx) {
			/* Keep the order: READDIRPLUS cookies are positions. */
			memmove(&p->children[i], &p->children[i + 1],
				(p->n_children - i - 1) * sizeof(uint32_t));
			p->n_children--;
			return;
		}
	}
}

void
gen_model_file_remove(struct gen_export *e, uint32_t idx)
{
	struct gen_node *n = &e->nodes[idx];
	uint32_t last = e->files[e->n_files - 1];

	gen_model_child_unlink(e, n->parent, idx);
	e->files[n->pos] = last;
	e->nodes[last].pos = n->pos;
	e->n_files--;
	n->is_live = false;
}

/* @p ago_ns before @p now, or 1 s after the epoch: a --start within a year of it must not
 * wrap the seed files' times past 2554 (nfstime3 would then carry only their low bits), and a
 * time of 0 is "none" to the users workload's caches. */
static uint64_t
before(uint64_t now, uint64_t ago_ns)
{
	return now > ago_ns + 1000000000u ? now - ago_ns : 1000000000u;
}

static int
export_init(
	struct gen_export *e, struct th_rng *rng, const char *path, uint32_t fh_len, uint64_t now)
{
	uint32_t n_dirs = 8 + th_rng_below(rng, 17), n_files = 200 + th_rng_below(rng, 400);
	char name[24];
	uint32_t i;
	int64_t idx;

	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->fsid = (uint32_t)th_rng_u64(rng);
	e->fh_len = (uint8_t)fh_len;
	e->next_fileid = 2 + th_rng_below(rng, 1000);
	if (gen_model_node_add(e, rng, UINT32_MAX, TH_NFS_DIR, "",
		    before(now, 86400ull * 1000000000u * 365), 0, 0) < 0)
		return -ENOMEM;
	for (i = 0; i < n_dirs; i++) {
		/* Two levels: top-level directories and some below them. */
		uint32_t parent = i < 4 ? 0 : e->dirs[th_rng_below(rng, e->n_dirs)];

		gen_model_make_name(e, rng, true, name, sizeof(name));
		if (gen_model_node_add(e, rng, parent, TH_NFS_DIR, name,
			    before(now, th_rng_range(rng, 1, 86400ull * 30) * 1000000000u),
			    1000 + th_rng_below(rng, 20), 100) < 0)
			return -ENOMEM;
	}
	for (i = 0; i < n_files; i++) {
		uint32_t parent = e->dirs[th_rng_below(rng, e->n_dirs)];

		gen_model_make_name(e, rng, false, name, sizeof(name));
		idx = gen_model_node_add(e, rng, parent, TH_NFS_REG, name,
			before(now, th_rng_range(rng, 1, 86400ull * 30) * 1000000000u),
			1000 + th_rng_below(rng, 20), 100 + th_rng_below(rng, 3));
		if (idx < 0)
			return -ENOMEM;
		e->nodes[idx].size = draw_size(rng);
	}
	return 0;
}

static void
addr_v4(struct th_addr *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	memset(a->b, 0, 16);
	a->b[10] = 0xff;
	a->b[11] = 0xff;
	a->b[12] = b0;
	a->b[13] = b1;
	a->b[14] = b2;
	a->b[15] = b3;
}

static void
addr_v6(struct th_addr *a, uint16_t net, uint32_t host)
{
	memset(a->b, 0, 16);
	a->b[0] = 0xfd;
	a->b[1] = 0x00;
	th_be_put16(a->b + 6, net);
	th_be_put32(a->b + 12, host);
}

/* Spread a share over indices evenly: exactly floor(n * share) of n get it. */
static bool
has_share(uint32_t i, double share, double phase)
{
	return floor((i + 1) * share + phase) > floor(i * share + phase);
}

static uint16_t
take_port(struct gen_client *c)
{
	uint16_t p = c->next_port;

	/* Linux NFS clients bind reserved ports, counting down from 1023. */
	c->next_port = c->next_port > 600 ? c->next_port - 1 : 1023;
	return p;
}

static void
flow_init(struct gen_flow *f, struct th_rng *rng, struct gen_client *c, uint32_t ci, uint32_t si,
	uint16_t server_port)
{
	int d;

	memset(f, 0, sizeof(*f));
	f->client_idx = ci;
	f->server_idx = si;
	f->client_port = take_port(c);
	f->server_port = server_port;
	f->l4 = c->is_udp ? TH_PKT_L4_UDP : TH_PKT_L4_TCP;
	for (d = 0; d < 2; d++) {
		f->half[d].isn = (uint32_t)th_rng_u64(rng);
		f->half[d].snd_next = f->half[d].isn;
		f->half[d].emitted_end = f->half[d].isn;
		f->half[d].ip_id = (uint16_t)th_rng_u64(rng);
	}
}

static const char *const hostnames[] = {"ws", "build", "lab", "node", "render", "dev"};

int
gen_world_init(struct gen_world *w, const struct th_gen_config *cfg)
{
	uint64_t now = cfg->start_ns;
	uint32_t i, k;
	char path[48];

	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	th_rng_seed(&w->rng, cfg->seed);
	w->servers = calloc(cfg->servers, sizeof(*w->servers));
	w->clients = calloc(cfg->clients, sizeof(*w->clients));
	if (w->servers == NULL || w->clients == NULL)
		goto fail;
	w->n_servers = cfg->servers;
	w->n_clients = cfg->clients;
	for (i = 0; i < w->n_servers; i++) {
		struct gen_server *s = &w->servers[i];

		addr_v4(&s->addr4, 10, 0, 0, (uint8_t)(i + 1));
		addr_v6(&s->addr6, 0, i + 1);
		memcpy(s->mac, (const uint8_t[6]){0x02, 0x00, 0x5e, 0x00, 0x01, (uint8_t)i}, 6);
		/* Where rpc.mountd listens on Red Hat and on Debian systems. */
		s->mountd_port = i % 2 ? 892 : 20048;
		s->write_verf = th_rng_u64(&w->rng);
		s->n_exports = 1 + th_rng_below(&w->rng, 2);
		for (k = 0; k < s->n_exports; k++) {
			snprintf(path, sizeof(path), k ? "/export/data%u" : "/srv/nfs/home%u", i);
			if (export_init(&s->exports[k], &w->rng, path, 28 + 4 * ((i + k) % 4),
				    now) != 0)
				goto fail;
		}
	}
	for (i = 0; i < w->n_clients; i++) {
		struct gen_client *c = &w->clients[i];
		uint32_t n_mounts = w->n_servers > 1 && gen_rng_chance(&w->rng, 0.5) ? 2 : 1;

		c->is_udp = has_share(i, cfg->udp_share, 0.0);
		c->is_v6 = has_share(i, cfg->ipv6_share, 0.5);
		if (c->is_v6)
			addr_v6(&c->addr, 1, i + 1);
		else
			addr_v4(&c->addr, 10, 1, (uint8_t)((i + 1) >> 8), (uint8_t)(i + 1));
		memcpy(c->mac,
			(const uint8_t[6]){0x02, 0x00, 0x5e, 0x10, (uint8_t)(i >> 8), (uint8_t)i},
			6);
		c->vlan[0] = (uint16_t)(100 + i % 8);
		c->vlan[1] = (uint16_t)(10 + i % 16);
		c->uid = 1000 + th_rng_below(&w->rng, 20);
		c->gid = 100 + th_rng_below(&w->rng, 3);
		snprintf(c->machine, sizeof(c->machine), "%s%u", hostnames[i % 6], i + 1);
		c->xid = (uint32_t)th_rng_u64(&w->rng);
		c->next_port = (uint16_t)(1023 - th_rng_below(&w->rng, 100));
		c->mounts = calloc(n_mounts, sizeof(*c->mounts));
		if (c->mounts == NULL)
			goto fail;
		c->n_mounts = n_mounts;
		for (k = 0; k < n_mounts; k++) {
			struct gen_mount *m = &c->mounts[k];
			uint32_t si = (i + k) % w->n_servers;
			struct gen_server *s = &w->servers[si];

			m->server_idx = si;
			m->export_idx = th_rng_below(&w->rng, s->n_exports);
			flow_init(&m->pmap, &w->rng, c, i, si, 111);
			flow_init(&m->mount, &w->rng, c, i, si, s->mountd_port);
			flow_init(&m->nfs, &w->rng, c, i, si, 2049);
		}
	}
	return 0;

fail:
	gen_world_free(w);
	return -ENOMEM;
}

void
gen_world_free(struct gen_world *w)
{
	uint32_t i, k, n;

	for (i = 0; w->servers != NULL && i < w->n_servers; i++) {
		for (k = 0; k < w->servers[i].n_exports; k++) {
			struct gen_export *e = &w->servers[i].exports[k];

			for (n = 0; n < e->n_nodes; n++)
				free(e->nodes[n].children);
			free(e->nodes);
			free(e->files);
			free(e->dirs);
		}
	}
	for (i = 0; w->clients != NULL && i < w->n_clients; i++)
		free(w->clients[i].mounts);
	free(w->servers);
	free(w->clients);
	memset(w, 0, sizeof(*w));
}

/* ---- operations ---- */

/* Median server time per procedure, microseconds (before size-dependent time). */
static double
base_latency_us(uint32_t prog, uint32_t proc)
{
	if (prog == TH_PROG_PORTMAP)
		return 40;
	if (prog == TH_PROG_MOUNT)
		return 400;
	switch (proc) {
	case TH_NFS3_NULL:
		return 20;
	case TH_NFS3_GETATTR:
	case TH_NFS3_ACCESS:
	case TH_NFS3_FSINFO:
		return 50;
	case TH_NFS3_LOOKUP:
		return 80;
	case TH_NFS3_READ:
		return 150;
	case TH_NFS3_WRITE:
		return 200;
	case TH_NFS3_COMMIT:
		return 2000;
	case TH_NFS3_READDIR:
		return 200; /* names only: no inode to read per entry */
	case TH_NFS3_READDIRPLUS:
		return 300;
	default:
		return 400;
	}
}

void
gen_model_begin(struct gen_world *w, struct gen_client *c, struct gen_flow *f, uint32_t prog,
	uint32_t vers, uint32_t proc, struct gen_rpc *rpc)
{
	const struct gen_server *s = &w->servers[f->server_idx];
	struct th_op *op = &rpc->op;

	memset(rpc, 0, sizeof(*rpc));
	rpc->flow = f;
	op->kind = TH_OP_MATCHED;
	op->transport = f->l4;
	op->client = c->addr;
	op->server = c->is_v6 ? s->addr6 : s->addr4;
	op->client_port = f->client_port;
	op->server_port = f->server_port;
	op->call_decode = TH_NFS_OK;
	op->reply_decode = TH_NFS_OK;
	op->xid = c->xid++;
	op->prog = prog;
	op->vers = vers;
	op->proc = proc;
	op->auth = TH_AUTH_SYS;
	op->uid = c->uid;
	op->gid = c->gid;
	snprintf(op->machine, sizeof(op->machine), "%s", c->machine);
	rpc->latency_ns =
		(uint32_t)(gen_rng_lognormal(&w->rng, base_latency_us(prog, proc), 0.5) * 1000.0);
}

void
gen_model_session(struct gen_world *w, struct gen_client *c, struct gen_mount *m, uint64_t now,
	struct gen_rpc *rpc)
{
	struct gen_server *s = &w->servers[m->server_idx];
	struct gen_export *e = &s->exports[m->export_idx];
	struct th_op *op = &rpc->op;

	(void)now;
	switch (m->state) {
	case GEN_MOUNT_GETPORT:
		/* Where is mountd? Asked without credentials, as mount.nfs does. */
		gen_model_begin(w, c, &m->pmap, TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT, rpc);
		op->auth = TH_AUTH_NONE;
		op->uid = 0;
		op->gid = 0;
		op->machine[0] = '\0';
		op->call.pmap_prog = TH_PROG_MOUNT;
		op->call.pmap_vers = 3;
		op->call.pmap_prot = c->is_udp ? 17 : 6;
		op->reply.port = s->mountd_port;
		rpc->is_close_after = true;
		break;
	case GEN_MOUNT_MNT:
		gen_model_begin(w, c, &m->mount, TH_PROG_MOUNT, 3, TH_MOUNT_MNT, rpc);
		op->uid = 0; /* mount runs as root */
		op->gid = 0;
		gen_model_set_name(&op->call.name, e->path);
		gen_model_fh(e, 0, &op->reply.fh);
		rpc->is_close_after = true;
		break;
	default:
		gen_model_begin(w, c, &m->nfs, TH_PROG_NFS, 3, TH_NFS3_FSINFO, rpc);
		rpc->exp = e;
		gen_model_fh(e, 0, &op->call.fh);
		gen_model_attr(&e->nodes[0], &op->reply.attr);
		break;
	}
	m->state++;
}

uint32_t
gen_model_pick_file(struct th_rng *rng, const struct gen_export *e)
{
	/* Squaring the draw skews toward the first files: some files are hot. */
	double u = th_rng_unit(rng);

	return e->files[(uint32_t)(u * u * e->n_files)];
}

uint32_t
gen_model_pick_dir(struct th_rng *rng, const struct gen_export *e)
{
	return e->dirs[th_rng_below(rng, e->n_dirs)];
}

/* I/O sizes: the data mix moves 32 KB to 1 MB, others mostly page-sized pieces. */
static uint32_t
io_size(struct gen_world *w, const struct gen_client *c)
{
	uint32_t kb;

	if (w->cfg->mix == TH_GEN_MIX_DATA)
		kb = 32u << th_rng_below(&w->rng, 6);
	else
		kb = 4u << th_rng_below(&w->rng, 5);
	if (c->is_udp && kb > 32)
		kb = 32; /* UDP mounts cap rsize/wsize at 32 KB */
	return kb * 1024;
}

void
gen_model_touch_dir(struct gen_node *d, uint64_t now)
{
	d->mtime_ns = now;
	d->ctime_ns = now;
}

void
gen_model_nfs(struct gen_world *w, struct gen_client *c, struct gen_mount *m, uint32_t proc,
	uint64_t now, struct gen_rpc *rpc)
{
	struct gen_export *e = &w->servers[m->server_idx].exports[m->export_idx];
	struct th_rng *rng = &w->rng;
	struct th_op *op = &rpc->op;
	struct th_nfs_call *call = &op->call;
	struct th_nfs_reply *rep = &op->reply;
	struct gen_node *n, *d, *d2;
	uint32_t idx, didx, i;
	char name[24];
	int64_t made;

	/* Keep the tree from emptying or exploding: turn the op into its opposite. */
	if (proc == TH_NFS3_REMOVE && e->n_files < 100)
		proc = TH_NFS3_CREATE;
	if (proc == TH_NFS3_CREATE && e->n_files > 5000)
		proc = TH_NFS3_REMOVE;
	if (proc == TH_NFS3_MKDIR && e->n_dirs > 500)
		proc = TH_NFS3_LOOKUP;

	gen_model_begin(w, c, &m->nfs, TH_PROG_NFS, 3, proc, rpc);
	rpc->exp = e;
	rpc->verf = w->servers[m->server_idx].write_verf;
	switch (proc) {
	case TH_NFS3_NULL:
		op->auth = TH_AUTH_NONE; /* a ping carries no identity */
		op->uid = 0;
		op->gid = 0;
		op->machine[0] = '\0';
		break;
	case TH_NFS3_GETATTR:
	case TH_NFS3_ACCESS:
		idx = gen_rng_chance(rng, 0.2) ? gen_model_pick_dir(rng, e)
					       : gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		gen_model_fh(e, idx, &call->fh);
		gen_model_attr(n, &rep->attr);
		if (proc == TH_NFS3_ACCESS) {
			/* What Linux asks: all bits for directories, read/modify/execute
			 * for files. */
			call->access = n->type == TH_NFS_DIR ? 0x1f : 0x2d;
			rpc->access_granted = c->uid == n->uid ? call->access : call->access & 0x03;
		}
		break;
	case TH_NFS3_LOOKUP:
		didx = gen_model_pick_dir(rng, e);
		d = &e->nodes[didx];
		gen_model_fh(e, didx, &call->fh);
		if (d->n_children > 0 && gen_rng_chance(rng, 0.8)) {
			idx = d->children[th_rng_below(rng, d->n_children)];
			n = &e->nodes[idx];
			gen_model_set_name(&call->name, n->name);
			gen_model_fh(e, idx, &rep->fh);
			gen_model_attr(n, &rep->attr);
		} else {
			/* A miss: editors and shells probe names that do not exist. */
			char miss[40];

			snprintf(miss, sizeof(miss), ".%s.swp", d->name_len ? d->name : "x");
			gen_model_set_name(&call->name, miss);
			rep->status = 2; /* NFS3ERR_NOENT */
		}
		gen_model_attr(d, &rep->dir_attr);
		break;
	case TH_NFS3_SETATTR:
		idx = gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		gen_model_fh(e, idx, &call->fh);
		gen_model_pre_attr(n, &rep->pre);
		if (gen_rng_chance(rng, 0.6)) {
			call->has_set_size = true;
			call->set_size = gen_rng_chance(rng, 0.7) ? 0 : n->size / 2;
			n->size = call->set_size;
			n->mtime_ns = now;
		} else {
			call->has_set_mode = true;
			call->set_mode = n->mode == 0644 ? 0600 : 0644;
			n->mode = call->set_mode;
		}
		n->ctime_ns = now;
		gen_model_attr(n, &rep->attr);
		break;
	case TH_NFS3_READ:
		idx = gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		gen_model_fh(e, idx, &call->fh);
		call->count = io_size(w, c);
		call->offset = 0;
		if (n->size > call->count) {
			uint32_t blocks = (uint32_t)((n->size - 1) / call->count + 1);

			call->offset = (uint64_t)call->count * th_rng_below(rng, blocks);
		}
		rep->count = n->size > call->offset
				     ? (uint32_t)(n->size - call->offset < call->count
							  ? n->size - call->offset
							  : call->count)
				     : 0;
		rep->eof = call->offset + rep->count >= n->size;
		gen_model_attr(n, &rep->attr);
		rpc->latency_ns += rep->count; /* about 1 GB/s from the server's cache */
		break;
	case TH_NFS3_WRITE:
		idx = gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		gen_model_fh(e, idx, &call->fh);
		call->count = io_size(w, c);
		/* Appends mostly, rewrites of a block sometimes. */
		call->offset = gen_rng_chance(rng, 0.7) || n->size < call->count
				       ? n->size
				       : (n->size / call->count - 1) * (uint64_t)call->count;
		call->stable = gen_rng_chance(rng, 0.75) ? 0 : 2; /* UNSTABLE or FILE_SYNC */
		gen_model_pre_attr(n, &rep->pre);
		if (call->offset + call->count > n->size)
			n->size = call->offset + call->count;
		n->mtime_ns = now;
		n->ctime_ns = now;
		gen_model_attr(n, &rep->attr);
		rep->count = call->count;
		rep->committed = call->stable;
		rpc->latency_ns += call->count * 2 + (call->stable ? 1500000u : 0);
		break;
	case TH_NFS3_COMMIT:
		idx = gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		gen_model_fh(e, idx, &call->fh);
		if (gen_rng_chance(rng, 0.5)) {
			call->offset = 0;
			call->count = 0; /* the whole file, as Linux usually asks */
		} else {
			call->count = io_size(w, c);
			call->offset = n->size >= call->count ? n->size - call->count : 0;
		}
		gen_model_pre_attr(n, &rep->pre);
		gen_model_attr(n, &rep->attr);
		break;
	case TH_NFS3_CREATE:
	case TH_NFS3_MKDIR:
		didx = gen_model_pick_dir(rng, e);
		d = &e->nodes[didx];
		gen_model_fh(e, didx, &call->fh);
		gen_model_make_name(e, rng, proc == TH_NFS3_MKDIR, name, sizeof(name));
		gen_model_set_name(&call->name, name);
		call->has_set_mode = true;
		call->set_mode = proc == TH_NFS3_MKDIR ? 0755 : 0644;
		if (proc == TH_NFS3_CREATE)
			call->stable = gen_rng_chance(rng, 0.5) ? 1 : 0; /* GUARDED or UNCHECKED */
		gen_model_pre_attr(d, &rep->pre);
		made = gen_model_node_add(e, rng, didx,
			proc == TH_NFS3_MKDIR ? TH_NFS_DIR : TH_NFS_REG, name, now, c->uid, c->gid);
		d = &e->nodes[didx]; /* nodes may have moved */
		if (made < 0) {
			rep->status = 28; /* NFS3ERR_NOSPC: the model is out of memory */
			gen_model_attr(d, &rep->dir_attr);
			break;
		}
		gen_model_touch_dir(d, now);
		n = &e->nodes[made];
		n->mode = call->set_mode;
		gen_model_fh(e, (uint32_t)made, &rep->fh);
		gen_model_attr(n, &rep->attr);
		gen_model_attr(d, &rep->dir_attr);
		break;
	case TH_NFS3_REMOVE:
		idx = gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		didx = n->parent;
		d = &e->nodes[didx];
		gen_model_fh(e, didx, &call->fh);
		gen_model_set_name(&call->name, n->name);
		gen_model_pre_attr(d, &rep->pre);
		gen_model_file_remove(e, idx);
		gen_model_touch_dir(d, now);
		gen_model_attr(d, &rep->attr);
		break;
	case TH_NFS3_RENAME:
		idx = gen_model_pick_file(rng, e);
		n = &e->nodes[idx];
		didx = n->parent;
		d = &e->nodes[didx];
		i = gen_rng_chance(rng, 0.5) ? didx : gen_model_pick_dir(rng, e);
		d2 = &e->nodes[i];
		gen_model_fh(e, didx, &call->fh);
		gen_model_set_name(&call->name, n->name);
		gen_model_fh(e, i, &call->fh2);
		gen_model_make_name(e, rng, false, name, sizeof(name));
		gen_model_set_name(&call->name2, name);
		gen_model_pre_attr(d, &rep->pre);
		gen_model_child_unlink(e, didx, idx);
		if (gen_model_grow((void **)&d2->children, &d2->cap_children, d2->n_children + 1,
			    sizeof(uint32_t)) != 0) {
			/* Put it back where it was: the rename fails like a full disk. */
			d->children[d->n_children++] = idx;
			rep->status = 28;
			gen_model_attr(d, &rep->attr);
			break;
		}
		d2->children[d2->n_children++] = idx;
		n->parent = i;
		snprintf(n->name, sizeof(n->name), "%s", name);
		n->name_len = (uint8_t)strlen(n->name);
		n->ctime_ns = now;
		gen_model_touch_dir(d, now);
		gen_model_touch_dir(d2, now);
		gen_model_attr(d, &rep->attr);
		gen_model_attr(d2, &rep->dir_attr);
		break;
	case TH_NFS3_READDIRPLUS:
		didx = gen_model_pick_dir(rng, e);
		d = &e->nodes[didx];
		gen_model_fh(e, didx, &call->fh);
		call->count = 32768;
		/* Continue a listing now and then, as a client does for a big directory. */
		i = 0;
		if (d->n_children > GEN_DIRENT_MAX && gen_rng_chance(rng, 0.3))
			i = GEN_DIRENT_MAX * th_rng_below(rng, d->n_children / GEN_DIRENT_MAX + 1);
		if (i > d->n_children)
			i = 0;
		call->offset = i;
		rpc->dir_cookie_base = i;
		for (; i < d->n_children && rpc->n_entries < GEN_DIRENT_MAX; i++)
			rpc->entries[rpc->n_entries++] = d->children[i];
		rep->count = rpc->n_entries;
		rep->eof = i >= d->n_children;
		gen_model_attr(d, &rep->attr);
		break;
	case TH_NFS3_FSINFO:
	default:
		op->proc = TH_NFS3_FSINFO;
		gen_model_fh(e, 0, &call->fh);
		gen_model_attr(&e->nodes[0], &rep->attr);
		break;
	}
}
