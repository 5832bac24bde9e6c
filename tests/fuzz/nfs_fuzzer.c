/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Fuzz target for the procedure decoders.
 *
 * Input layout: a 12-byte header, then the procedure body.
 *   byte 0      bit 0: decode as reply (else call); bits 1-7: index into
 *               the table of known (prog, vers, proc) triples below; an
 *               index past the table takes the triple from bytes 4-11
 *   byte 1      with a raw triple: index into the program table
 *   bytes 4-7   with a raw triple: version (big-endian)
 *   bytes 8-11  with a raw triple: procedure (big-endian)
 * Besides "no crash, no read past the end", the outputs must keep their
 * invariants: handle lengths within bounds, names NUL-terminated. Replies are
 * decoded twice, the second time walking READDIRPLUS entries: every entry
 * handed on lies inside the body with a name and a handle within bounds, only
 * READDIRPLUS hands any on, and the walk changes nothing else the reply says.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "th_nfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct triple {
	uint32_t prog, vers, proc;
};

/* clang-format off */
static const struct triple known[] = {
#define V3_ENTRY(name, num) {TH_PROG_NFS, 3, num},
	TH_NFS3_PROC_LIST(V3_ENTRY)
#define V2_ENTRY(name, num) {TH_PROG_NFS, 2, num},
	TH_NFS2_PROC_LIST(V2_ENTRY)
	{TH_PROG_NFS, 4, 0},
	{TH_PROG_NFS, 4, 1},
	{TH_PROG_MOUNT, 1, TH_MOUNT_MNT},
	{TH_PROG_MOUNT, 1, TH_MOUNT_DUMP},
	{TH_PROG_MOUNT, 1, TH_MOUNT_UMNT},
	{TH_PROG_MOUNT, 1, TH_MOUNT_EXPORT},
	{TH_PROG_MOUNT, 3, TH_MOUNT_MNT},
	{TH_PROG_MOUNT, 3, TH_MOUNT_DUMP},
	{TH_PROG_MOUNT, 3, TH_MOUNT_UMNT},
	{TH_PROG_MOUNT, 3, TH_MOUNT_EXPORT},
	{TH_PROG_PORTMAP, 2, TH_PMAP_SET},
	{TH_PROG_PORTMAP, 2, TH_PMAP_UNSET},
	{TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT},
	{TH_PROG_PORTMAP, 2, TH_PMAP_DUMP},
	{TH_PROG_PORTMAP, 2, TH_PMAP_CALLIT},
	{TH_PROG_PORTMAP, 3, 3}, /* rpcbind GETADDR */
	{TH_PROG_PORTMAP, 4, 3},
	{TH_PROG_PORTMAP, 4, 9}, /* GETVERSADDR */
	{TH_PROG_PORTMAP, 4, TH_PMAP_SET},
};
/* clang-format on */

static const uint32_t progs[] = {
	TH_PROG_PORTMAP, TH_PROG_NFS, TH_PROG_MOUNT, TH_PROG_NLM, TH_PROG_NFSACL};

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The body being decoded, for the entry callback's bounds checks. */
struct walk {
	const uint8_t *body;
	size_t size;
	uint32_t entries;
};

static void
on_entry(void *ctx, const struct th_nfs_dirent *e)
{
	struct walk *w = ctx;

	if (e->name == NULL || e->fh == NULL || e->name_len == 0 || e->name_len > 4096 ||
		e->fh_len == 0 || e->fh_len > TH_NFS_FH_MAX)
		abort();
	if (e->name < w->body || e->name + e->name_len > w->body + w->size || e->fh < w->body ||
		e->fh + e->fh_len > w->body + w->size)
		abort();
	w->entries++;
}

static void
check_name(const struct th_nfs_name *n)
{
	if (n->len > TH_NFS_NAME_MAX || n->s[n->len] != '\0' || strlen(n->s) > n->len)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct triple t;
	unsigned int idx;
	bool is_reply;
	enum th_nfs_status st;
	const uint8_t *body;
	size_t body_size;

	if (size < 12)
		return 0;
	is_reply = data[0] & 1;
	idx = data[0] >> 1;
	if (idx < sizeof(known) / sizeof(known[0])) {
		t = known[idx];
	} else {
		t.prog = progs[data[1] % (sizeof(progs) / sizeof(progs[0]))];
		t.vers = be32(data + 4);
		t.proc = be32(data + 8);
	}
	/* The body ends where the input does, so a read past it shows under ASan. */
	body_size = size - 12;
	body = body_size ? data + 12 : NULL;

	if (is_reply) {
		struct th_nfs_reply r, r2;
		struct walk w = {body, body_size, 0};

		memset(&r, 0, sizeof(r));
		memset(&r2, 0, sizeof(r2));
		st = th_nfs_decode_reply(t.prog, t.vers, t.proc, body, body_size, &r);
		if (r.fh.len > TH_NFS_FH_MAX)
			abort();
		if (th_nfs_decode_reply_entries(
			    t.prog, t.vers, t.proc, body, body_size, &r2, on_entry, &w) != st ||
			memcmp(&r, &r2, sizeof(r)) != 0)
			abort();
		if (w.entries > r.count ||
			(w.entries > 0 && (t.prog != TH_PROG_NFS || t.vers != 3 ||
						  t.proc != TH_NFS3_READDIRPLUS || r.status != 0)))
			abort();
		(void)th_nfs_status_name(t.prog, t.vers, r.status);
		(void)th_nfs_fh_hash(&r.fh);
	} else {
		struct th_nfs_call c;

		memset(&c, 0, sizeof(c));
		st = th_nfs_decode_call(t.prog, t.vers, t.proc, body, body_size, &c);
		if (c.fh.len > TH_NFS_FH_MAX || c.fh2.len > TH_NFS_FH_MAX)
			abort();
		check_name(&c.name);
		check_name(&c.name2);
		(void)th_nfs_fh_hash(&c.fh);
	}
	if (st > TH_NFS_V4_COMPOUND)
		abort();
	if (!th_nfs_is_known(t.prog, t.vers) && st != TH_NFS_UNKNOWN_PROG)
		abort();
	(void)th_nfs_proc_name(t.prog, t.vers, t.proc);
	(void)th_nfs_prog_name(t.prog);
	return 0;
}
