/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_op.h"

#include <stddef.h>
#include <string.h>

/*
 * Lines are built by hand rather than with printf: formatting runs once per
 * RPC on the decode lcore, and vsnprintf per field cost ~1.5 us per line
 * (bench_decode, metadata mix: 924 ns/packet with it, see tests/bench).
 */

#define LINE_MAX_SIZE 4096 /* two escaped 255-byte names and every field fit */

struct out {
	char *p;   /* next byte */
	char *end; /* LINE_MAX_SIZE past the start: never reached by one line */
};

static inline void
put_c(struct out *o, char c)
{
	*o->p++ = c;
}

static inline void
put_s(struct out *o, const char *s)
{
	size_t n = strlen(s);

	memcpy(o->p, s, n);
	o->p += n;
}

/* " key=" for a string literal key, its length known at compile time. */
#define put_key(o, key) put_lit((o), " " key "=", sizeof(" " key "=") - 1)

static inline void
put_lit(struct out *o, const char *s, size_t n)
{
	memcpy(o->p, s, n);
	o->p += n;
}

/* " key=" for a key known only at run time. */
static inline void
put_key_s(struct out *o, const char *key)
{
	put_c(o, ' ');
	put_s(o, key);
	put_c(o, '=');
}

/* "00" "01" ... "99": two digits per division. */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline int
decimal_digits(uint64_t v)
{
	int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Written from the end backwards, straight into the line: no temporary, no memcpy call. */
static void
put_u(struct out *o, uint64_t v)
{
	int n = decimal_digits(v);
	char *p = o->p + n;

	while (v >= 100) {
		p -= 2;
		p[0] = digit_pairs[(v % 100) * 2];
		p[1] = digit_pairs[(v % 100) * 2 + 1];
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		p[0] = digit_pairs[v * 2];
		p[1] = digit_pairs[v * 2 + 1];
	} else {
		*--p = (char)('0' + v);
	}
	o->p += n;
}

/* v < 10^digits as exactly @p digits decimal digits, zero-padded. */
static void
put_fixed(struct out *o, uint64_t v, int digits)
{
	int i = digits;

	while (i >= 2) {
		i -= 2;
		o->p[i] = digit_pairs[(v % 100) * 2];
		o->p[i + 1] = digit_pairs[(v % 100) * 2 + 1];
		v /= 100;
	}
	if (i == 1)
		o->p[0] = (char)('0' + v % 10);
	o->p += digits;
}

static const char hex_digits[] = "0123456789abcdef";

static void
put_hex32(struct out *o, uint32_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		o->p[i] = hex_digits[v & 15];
		v >>= 4;
	}
	o->p += 8;
}

static void
put_octal_mode(struct out *o, uint32_t mode)
{
	put_fixed(o, (mode >> 9) & 7, 1);
	put_fixed(o, (mode >> 6) & 7, 1);
	put_fixed(o, (mode >> 3) & 7, 1);
	put_fixed(o, mode & 7, 1);
}

static void
put_time(struct out *o, uint64_t ns)
{
	put_u(o, ns / 1000000000u);
	put_c(o, '.');
	put_fixed(o, ns % 1000000000u, 9);
}

static void
put_endpoint(struct out *o, const struct th_addr *a, uint16_t port)
{
	put_c(o, ' ');
	if (th_addr_is_v4(a)) {
		o->p = th_addr_put_v4(o->p, a);
	} else {
		char ip[64];

		th_addr_format(a, ip, sizeof(ip));
		put_c(o, '[');
		put_s(o, ip);
		put_c(o, ']');
	}
	put_c(o, ':');
	put_u(o, port);
}

static void
put_latency(struct out *o, uint64_t from, uint64_t to)
{
	uint64_t d;

	put_c(o, ' ');
	if (from == 0 || to == 0) {
		put_c(o, '-');
		return;
	}
	/* A reply stamped before its call happens with clock steps; show it signed. */
	if (to >= from) {
		d = to - from;
	} else {
		d = from - to;
		put_c(o, '-');
	}
	put_u(o, d / 1000);
	put_c(o, '.');
	put_fixed(o, d % 1000, 3);
}

/* Names go out escaped so that a line always splits on spaces and '='. */
static void
put_escaped(struct out *o, const char *key, const char *s, size_t len, bool is_cut)
{
	size_t i;

	put_key_s(o, key);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c >= 0x7f || c == '=' || c == '\\') {
			put_s(o, "\\x");
			put_c(o, hex_digits[c >> 4]);
			put_c(o, hex_digits[c & 15]);
		} else {
			put_c(o, (char)c);
		}
	}
	if (is_cut)
		put_s(o, "\\...");
}

static void
put_name(struct out *o, const char *key, const struct th_nfs_name *n)
{
	/* An empty name the call carried is shown empty: left out, it would read as unread. */
	if (n->len > 0 || n->is_cut || n->is_present)
		put_escaped(o, key, n->s, n->len, n->is_cut);
}

static void
put_fh(struct out *o, const char *key, const struct th_nfs_fh *fh)
{
	if (fh->len == 0)
		return;
	put_key_s(o, key);
	put_hex32(o, th_nfs_fh_hash(fh));
}

static const char *const accept_names[] = {
	"OK",
	"PROG_UNAVAIL",
	"PROG_MISMATCH",
	"PROC_UNAVAIL",
	"GARBAGE_ARGS",
	"SYSTEM_ERR",
};

static const char *const kind_names[] = {"RPC", "CALL", "REPLY"};

static const char *const stable_names[] = {"unstable", "data_sync", "file_sync"};

/* STATUS of an RPC-level failure, or NULL for a reply accepted with SUCCESS. */
static const char *
rpc_error_name(uint32_t reply_stat, uint32_t reject_stat, uint32_t accept_stat)
{
	if (reply_stat == 1)
		return reject_stat == 0 ? "RPC_MISMATCH" : "AUTH_ERROR";
	if (accept_stat != 0)
		return accept_stat < 6 ? accept_names[accept_stat] : "SYSTEM_ERR";
	return NULL;
}

/*
 * Does the procedure's result carry a status word other than success to
 * name? Not for programs without one (portmap, NULL procs), nor an NFSv4
 * COMPOUND that succeeded.
 */
static bool
has_status_word(uint32_t prog, uint32_t vers, uint32_t proc, uint32_t status)
{
	return th_nfs_is_known(prog, vers) && prog != TH_PROG_PORTMAP && proc != 0 &&
	       !(vers == 4 && prog == TH_PROG_NFS && status == 0);
}

/* The op's reply was accepted but its procedure's status word not seen: STATUS is '?'. */
static bool
is_status_unseen(const struct th_op *op)
{
	return has_status_word(op->prog, op->vers, op->proc, op->reply.status) &&
	       (op->reply.is_status_missing || op->is_opaque);
}

/*
 * STATUS of an accepted reply whose procedure returned @p status: "OK" where
 * there is no status word to name, its name, or its number in @p buf.
 */
static const char *
result_name(uint32_t prog, uint32_t vers, uint32_t proc, uint32_t status, char *buf, size_t size)
{
	const char *name;
	struct out o;

	if (!has_status_word(prog, vers, proc, status))
		return "OK";
	name = th_nfs_status_name(prog, vers, status);
	if (name != NULL || size < 12)
		return name != NULL ? name : "?";
	o.p = buf;
	o.end = buf + size;
	put_u(&o, status);
	*o.p = '\0';
	return buf;
}

const char *
th_op_status_str(const struct th_op *op, char *buf, size_t size)
{
	const char *err;

	if (op->kind == TH_OP_CALL_ONLY)
		return "-";
	err = rpc_error_name(op->reply_stat, op->reject_stat, op->accept_stat);
	if (err != NULL)
		return err;
	/* Accepted at the RPC level, but the procedure's own status was not seen. */
	if (is_status_unseen(op))
		return "?";
	return result_name(op->prog, op->vers, op->proc, op->reply.status, buf, size);
}

static void
put_attr(struct out *o, const struct th_nfs_attr *a)
{
	if (!a->is_present)
		return;
	put_key(o, "type");
	put_u(o, a->type);
	put_key(o, "mode");
	put_octal_mode(o, a->mode);
	put_key(o, "size");
	put_u(o, a->size);
	put_key(o, "fileid");
	put_u(o, a->fileid);
	put_key(o, "uid_f");
	put_u(o, a->uid);
	put_key(o, "gid_f");
	put_u(o, a->gid);
	put_key(o, "mtime");
	put_time(o, a->mtime_ns);
}

bool
th_op_has_offset_count(uint32_t prog, uint32_t vers, uint32_t proc)
{
	if (prog != TH_PROG_NFS)
		return false;
	if (vers == 3)
		return proc == TH_NFS3_READ || proc == TH_NFS3_WRITE || proc == TH_NFS3_COMMIT ||
		       proc == TH_NFS3_READDIR || proc == TH_NFS3_READDIRPLUS;
	if (vers == 2)
		return proc == TH_NFS2_READ || proc == TH_NFS2_WRITE || proc == TH_NFS2_READDIR;
	return false;
}

bool
th_op_has_done(uint32_t prog, uint32_t vers, uint32_t proc)
{
	/* Only what the wire carries: v2 READ has no eof, v2 WRITE no count. */
	return prog == TH_PROG_NFS &&
	       ((vers == 3 && (proc == TH_NFS3_READ || proc == TH_NFS3_WRITE)) ||
		       (vers == 2 && proc == TH_NFS2_READ));
}

/* rpcbind v4's GETVERSADDR (RFC 1833 section 2.2.1): GETADDR for exactly that version. */
#define RPCB4_GETVERSADDR 9

bool
th_op_returns_port(uint32_t prog, uint32_t vers, uint32_t proc)
{
	return prog == TH_PROG_PORTMAP &&
	       (proc == TH_PMAP_GETPORT || (vers == 4 && proc == RPCB4_GETVERSADDR));
}

bool
th_op_is_listing(uint32_t prog, uint32_t vers, uint32_t proc)
{
	return prog == TH_PROG_NFS &&
	       ((vers == 3 && (proc == TH_NFS3_READDIR || proc == TH_NFS3_READDIRPLUS)) ||
		       (vers == 2 && proc == TH_NFS2_READDIR));
}

/*
 * The count the reply gives is not all of it: a listing's entries before a cut, or a
 * READ/WRITE reply that ended early. The RPC record's TH_TRACE_RPC_DONE_PARTIAL.
 */
static bool
is_done_partial(const struct th_op *op)
{
	return op->reply.is_count_partial ||
	       (op->reply_decode == TH_NFS_SHORT &&
		       (th_op_has_done(op->prog, op->vers, op->proc) ||
			       th_op_is_listing(op->prog, op->vers, op->proc)));
}

/*
 * A successful listing's entry count: done= when it is every entry, done_min= when
 * the capture kept only part of the listing (the entries before the cut), so that a
 * done= is always exact, as a cut READ's absent done= is. Export decides the same
 * from the RPC record's flags (th_op_rpc_record()).
 */
static void
put_listing_count(struct out *o, const struct th_op *op)
{
	if (op->reply.status != 0 || is_status_unseen(op))
		return;
	if (is_done_partial(op))
		put_key(o, "done_min");
	else
		put_key(o, "done");
	put_u(o, op->reply.count);
}

/* Procedures whose wcc_data describes the object itself, not its directory. */
static bool
has_object_wcc(const struct th_op *op)
{
	return op->prog == TH_PROG_NFS && op->vers == 3 &&
	       (op->proc == TH_NFS3_SETATTR || op->proc == TH_NFS3_WRITE ||
		       op->proc == TH_NFS3_COMMIT);
}

static void
put_call(struct out *o, const struct th_op *op)
{
	const struct th_nfs_call *c = &op->call;

	if (op->auth == TH_AUTH_SYS) {
		put_key(o, "uid");
		put_u(o, op->uid);
		put_key(o, "gid");
		put_u(o, op->gid);
		put_escaped(o, "machine", op->machine, strnlen(op->machine, sizeof(op->machine)),
			false);
	} else {
		put_key(o, "auth");
		if (op->auth == TH_AUTH_GSS)
			put_s(o, op->is_opaque ? "gss-wrapped" : "gss");
		else if (op->auth == TH_AUTH_UNSEEN)
			put_c(o, '?');
		else if (op->auth == TH_AUTH_NONE)
			put_s(o, "none");
		else
			put_u(o, op->auth);
	}
	put_fh(o, "fh", &c->fh);
	put_name(o, "name", &c->name);
	put_fh(o, "fh2", &c->fh2);
	put_name(o, "name2", &c->name2);
	if (op->prog == TH_PROG_PORTMAP && c->pmap_prog != 0) {
		put_key(o, "prog");
		put_u(o, c->pmap_prog);
		put_key(o, "vers");
		put_u(o, c->pmap_vers);
	}
	/* A cut record leaves some of these unread: an unread value is left out, not shown as 0. */
	if (th_op_has_offset_count(op->prog, op->vers, op->proc) &&
		!(c->missing & TH_NFS_MISSING_OFFSET)) {
		put_key(o, "off");
		put_u(o, c->offset);
	}
	if (th_op_has_offset_count(op->prog, op->vers, op->proc) &&
		!(c->missing & TH_NFS_MISSING_COUNT)) {
		put_key(o, "count");
		put_u(o, c->count);
	}
	if (op->prog == TH_PROG_NFS && op->vers == 3 && op->proc == TH_NFS3_WRITE &&
		c->stable < 3 && !(c->missing & TH_NFS_MISSING_STABLE)) {
		put_key(o, "stable");
		put_s(o, stable_names[c->stable]);
	}
	if (c->has_set_size) {
		put_key(o, "setsize");
		put_u(o, c->set_size);
	}
	if (c->has_set_mode) {
		put_key(o, "setmode");
		put_octal_mode(o, c->set_mode);
	}
}

static void
put_reply(struct out *o, const struct th_op *op)
{
	const struct th_nfs_reply *r = &op->reply;
	bool is_v3 = op->prog == TH_PROG_NFS && op->vers == 3;
	bool is_v2 = op->prog == TH_PROG_NFS && op->vers == 2;

	if (op->kind == TH_OP_CALL_ONLY || op->reply_stat != 0 || op->accept_stat != 0)
		return;
	if (op->prog == TH_PROG_PORTMAP) {
		if (th_op_returns_port(op->prog, op->vers, op->proc)) {
			put_key(o, "port");
			put_u(o, r->port);
		}
		return;
	}
	if (op->prog == TH_PROG_NFS && op->vers == 4) {
		/* Procedure 1, COMPOUND; NULL (0) has no results. */
		if (op->proc == 1) {
			put_key(o, "ops");
			put_u(o, r->v4_ops);
		}
		return;
	}
	put_fh(o, "newfh", &r->fh);
	if (th_op_is_listing(op->prog, op->vers, op->proc))
		put_listing_count(o, op);
	/*
	 * Counts and eof sit at the end of their results: when the record was
	 * cut, or the results were not read (wrapped, or the status word cut), they
	 * are unknown, and an unknown value is left out, not guessed.
	 */
	if (r->status == 0 && op->reply_decode != TH_NFS_SHORT && !is_status_unseen(op)) {
		if (th_op_has_done(op->prog, op->vers, op->proc)) {
			put_key(o, "done");
			put_u(o, r->count);
		}
		if ((is_v3 && (op->proc == TH_NFS3_READ || op->proc == TH_NFS3_READDIR ||
				      op->proc == TH_NFS3_READDIRPLUS)) ||
			(is_v2 && op->proc == TH_NFS2_READDIR)) {
			put_key(o, "eof");
			put_c(o, r->eof ? '1' : '0');
		}
		if (is_v3 && op->proc == TH_NFS3_WRITE && r->committed < 3) {
			put_key(o, "committed");
			put_s(o, stable_names[r->committed]);
		}
	}
	if (r->pre.is_present && has_object_wcc(op)) {
		put_key(o, "pre_size");
		put_u(o, r->pre.size);
		put_key(o, "pre_mtime");
		put_time(o, r->pre.mtime_ns);
	}
	put_attr(o, &r->attr);
}

static void
clear_fh(struct th_nfs_fh *fh)
{
	fh->len = 0;
}

static void
clear_name(struct th_nfs_name *n)
{
	n->len = 0;
	n->is_cut = false;
	n->is_present = false;
	n->s[0] = '\0';
}

/* th_op_clear() zeroes from these members to the end: they must follow the arrays. */
_Static_assert(offsetof(struct th_nfs_call, offset) > offsetof(struct th_nfs_call, name2),
	"th_nfs_call: scalars must follow the handles and names");
_Static_assert(offsetof(struct th_nfs_reply, attr) > offsetof(struct th_nfs_reply, fh),
	"th_nfs_reply: attributes must follow the handle");

void
th_op_clear(struct th_op *op)
{
	struct th_nfs_call *c = &op->call;
	struct th_nfs_reply *r = &op->reply;

	memset(op, 0, offsetof(struct th_op, call));
	clear_fh(&c->fh);
	clear_name(&c->name);
	clear_fh(&c->fh2);
	clear_name(&c->name2);
	memset(&c->offset, 0, sizeof(*c) - offsetof(struct th_nfs_call, offset));
	r->status = 0;
	clear_fh(&r->fh);
	memset(&r->attr, 0, sizeof(*r) - offsetof(struct th_nfs_reply, attr));
}

int
th_op_format(const struct th_op *op, char *buf, size_t size)
{
	char line[LINE_MAX_SIZE], status[16];
	/* Straight into the caller's buffer when any line fits it (the capture's, 8 KiB). */
	char *start = size > LINE_MAX_SIZE ? buf : line;
	struct out o = {start, start + LINE_MAX_SIZE};
	bool call_cut, reply_cut;
	size_t len;

	put_time(&o, op->kind == TH_OP_REPLY_ONLY ? op->reply_first_ns : op->call_first_ns);
	put_c(&o, ' ');
	put_s(&o, kind_names[op->kind < 3 ? op->kind : 0]);
	put_s(&o, op->transport == TH_PKT_L4_TCP ? " tcp" : " udp");
	put_endpoint(&o, &op->client, op->client_port);
	put_endpoint(&o, &op->server, op->server_port);
	put_s(&o, " 0x");
	put_hex32(&o, op->xid);
	put_c(&o, ' ');
	if (op->kind == TH_OP_REPLY_ONLY)
		put_s(&o, "? ?"); /* the program is in the call, which was not seen */
	else
		o.p = th_nfs_label(o.p, op->prog, op->vers, op->proc);
	put_c(&o, ' ');
	put_s(&o, th_op_status_str(op, status, sizeof(status)));
	put_latency(&o, op->call_first_ns, op->kind == TH_OP_MATCHED ? op->reply_first_ns : 0);
	put_latency(&o, op->call_last_ns, op->kind == TH_OP_MATCHED ? op->reply_first_ns : 0);

	if (op->kind != TH_OP_REPLY_ONLY)
		put_call(&o, op);
	put_reply(&o, op);
	if (op->dup_calls > 0) {
		put_key(&o, "dup");
		put_u(&o, op->dup_calls);
	}
	call_cut = op->kind != TH_OP_REPLY_ONLY && op->call_decode == TH_NFS_SHORT;
	reply_cut = op->kind != TH_OP_CALL_ONLY && op->reply_decode == TH_NFS_SHORT;
	if (call_cut || reply_cut) {
		put_key(&o, "cut");
		put_s(&o, call_cut && reply_cut ? "both" : call_cut ? "call" : "reply");
	}
	put_c(&o, '\n');

	len = (size_t)(o.p - start);
	if (start == buf) {
		buf[len] = '\0';
		return (int)len;
	}
	if (size > 0) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(buf, line, n);
		buf[n] = '\0';
	}
	return (int)len;
}

void
th_op_rpc_record(const struct th_op *op, struct th_trace_rpc *r)
{
	const struct th_nfs_attr *a = &op->reply.attr;
	unsigned int len = op->call.fh.len <= TH_TRACE_FH_MAX ? op->call.fh.len : TH_TRACE_FH_MAX;

	/* Field by field, no memset of the whole record first: 'rep stos' of its 168 bytes was
	 * a fifth of what keeping RPC records costs (perf, bench_decode -R). */
	r->call_ns = op->kind == TH_OP_REPLY_ONLY ? 0 : op->call_first_ns;
	r->reply_ns = op->kind == TH_OP_CALL_ONLY ? 0 : op->reply_first_ns;
	r->client = op->client;
	r->server = op->server;
	r->client_port = op->client_port;
	r->server_port = op->server_port;
	r->xid = op->xid;
	r->prog = op->prog;
	r->vers = (uint16_t)op->vers;
	r->proc = (uint16_t)op->proc;
	r->uid = op->uid;
	r->gid = op->gid;
	r->offset = op->call.offset;
	r->count = op->call.count;
	r->done = op->reply.count;
	r->size = a->size;
	r->flags = (uint8_t)((op->transport == TH_PKT_L4_TCP ? TH_TRACE_RPC_TCP : 0) |
			     (a->is_present ? TH_TRACE_RPC_HAS_SIZE : 0) |
			     (is_done_partial(op) ? TH_TRACE_RPC_DONE_PARTIAL : 0));
	if (op->reply_stat != 0 || op->accept_stat != 0) {
		/* An accept_stat, or 100 + a reject_stat: th_op_rpc_status_name() reads it back. */
		r->flags |= TH_TRACE_RPC_RPC_ERROR;
		r->status = op->reply_stat != 0 ? 100 + op->reject_stat : op->accept_stat;
	} else {
		r->status = op->reply.status;
		if (op->kind != TH_OP_CALL_ONLY && is_status_unseen(op))
			r->flags |= TH_TRACE_RPC_STATUS_UNSEEN;
	}
	r->fh_len = (uint8_t)len;
	memcpy(r->fh, op->call.fh.data, sizeof(r->fh));
	memset(r->fh + len, 0, sizeof(r->fh) - len);
}

const char *
th_op_rpc_status_name(const struct th_trace_rpc *r, char *buf, size_t size)
{
	const char *err;

	if (r->reply_ns == 0)
		return "-";
	if (r->flags & TH_TRACE_RPC_STATUS_UNSEEN)
		return "?";
	if (!(r->flags & TH_TRACE_RPC_RPC_ERROR))
		return result_name(r->prog, r->vers, r->proc, r->status, buf, size);
	err = r->status >= 100 ? rpc_error_name(1, r->status - 100, 0)
			       : rpc_error_name(0, 0, r->status);
	return err != NULL ? err : "?";
}
