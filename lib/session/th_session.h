/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SESSION_H
#define TH_SESSION_H

/**
 * @file
 * Open/close inference (seed 000 §3, nfstrace): per-core session tables
 * that turn a stream of matched NFS operations into one record per
 * plausible user-level open, and a handle-to-name map with validity times.
 *
 * One table per session lcore; every operation on a file reaches the same
 * table (the caller hashes server and handle with th_sess_op_owner()), so
 * nothing is shared and nothing is locked. Memory is allocated once: a
 * file table (handle, size, last-read times per client) and a session
 * table (one open in progress), both bounded, aged by a timer wheel, and
 * evicting the least recently used entry under pressure, counted.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_op.h"
#include "th_pkt.h"

/** What an operation is, for inference (NFS v2 and v3 normalised). */
enum th_sess_kind {
	TH_SESS_OTHER = 0,
	TH_SESS_READ,
	TH_SESS_WRITE,
	TH_SESS_COMMIT,
	TH_SESS_GETATTR,
	TH_SESS_SETATTR,
	TH_SESS_ACCESS,
	TH_SESS_LOOKUP,
	TH_SESS_CREATE,
	TH_SESS_MKDIR,
	TH_SESS_SYMLINK,
	TH_SESS_MKNOD,
	TH_SESS_REMOVE,
	TH_SESS_RMDIR,
	TH_SESS_RENAME,
	TH_SESS_LINK,
	TH_SESS_READDIR,
	TH_SESS_READDIRPLUS,
	TH_SESS_MNT,
	TH_SESS_DIRENT,     /**< not an operation: a READDIRPLUS entry's name binding */
	TH_SESS_CLOCK_BACK, /**< not an operation: the capture's clock went back to call_ns */
};

/** th_sess_op.flags */
enum {
	TH_SESS_F_OK = 1 << 0,       /**< the server answered with status 0 */
	TH_SESS_F_EOF = 1 << 1,      /**< READ/READDIR reached the end */
	TH_SESS_F_HAS_SIZE = 1 << 2, /**< size/fileid/type come from attributes after the call */
	TH_SESS_F_TRUNCATE = 1 << 3, /**< SETATTR/CREATE set the size (set_size) */
	TH_SESS_F_IS_DIR = 1 << 4,   /**< the object is a directory */
	TH_SESS_F_NO_REPLY = 1 << 5, /**< the reply was never seen */
	TH_SESS_F_SET_MODE = 1 << 6, /**< SETATTR/CREATE set the mode (chmod is no open) */
};

#define TH_SESS_FH_MAX 64
#define TH_SESS_NAME_MAX 255

/**
 * One matched operation, reduced to what inference and the name map need.
 * Built on the decode lcore from a struct th_op (th_sess_op_from_op), sent
 * to the session lcore that owns the file.
 */
struct th_sess_op {
	uint64_t seq;               /**< the caller's order for ops from several sources (a
				       capture: the frame it came from) */
	uint32_t source;            /**< which source (a capture: the decode lcore); inference
				       reads neither */
	uint64_t call_ns;           /**< call's first segment */
	uint64_t reply_ns;          /**< reply's first segment; 0 without a reply */
	struct th_addr client;      /**< caller */
	struct th_addr server;      /**< server */
	uint32_t uid;               /**< AUTH_SYS uid (0 when unknown) */
	uint32_t gid;               /**< AUTH_SYS gid */
	uint8_t kind;               /**< enum th_sess_kind */
	uint8_t vers;               /**< NFS version (2, 3); MOUNT: 1 or 3 */
	uint8_t flags;              /**< TH_SESS_F_* */
	uint8_t fh_len;             /**< bytes in fh */
	uint32_t count;             /**< READ/WRITE: bytes the server moved; READDIR: entries */
	uint64_t offset;            /**< READ/WRITE/COMMIT offset */
	uint64_t size;              /**< file size after the call (TH_SESS_F_HAS_SIZE) */
	uint64_t set_size;          /**< size a SETATTR/CREATE set (TH_SESS_F_TRUNCATE) */
	uint64_t fileid;            /**< inode number (TH_SESS_F_HAS_SIZE) */
	uint8_t fh[TH_SESS_FH_MAX]; /**< the object; the directory for name operations */
	/* Name operations only (LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME,
	 * LINK, MNT, DIRENT). */
	uint8_t fh2_len;                  /**< bytes in fh2 */
	uint8_t fh2[TH_SESS_FH_MAX];      /**< LOOKUP/CREATE/MKDIR/SYMLINK/MKNOD/MNT result handle,
					       DIRENT entry handle; RENAME/LINK target directory */
	uint16_t name_len;                /**< bytes in name */
	uint16_t name2_len;               /**< bytes in name2 */
	char name[TH_SESS_NAME_MAX + 1];  /**< component name (RENAME from, LINK new, MNT path) */
	char name2[TH_SESS_NAME_MAX + 1]; /**< RENAME to-name */
	uint32_t mode;                    /**< the named object's type and permission bits as an
					       st_mode (S_IFREG | 0644), from the reply's
					       attributes; 0 when it carried none */
	uint64_t mtime_ns;                /**< modification time after the call
					       (TH_SESS_F_HAS_SIZE) */
};

/**
 * Reduce a decoded op. @return false when it is nothing inference uses
 * (not NFS v2/v3 or MOUNT, no call seen, an RPC-level failure).
 */
bool th_sess_op_from_op(const struct th_op *op, struct th_sess_op *out);

/**
 * The name binding one READDIRPLUS entry carries, as a TH_SESS_DIRENT event:
 * directory op->call.fh, the entry's name and handle, valid from the call's
 * time, as a LOOKUP of that name answered with that handle. It goes to the
 * directory's owner (th_sess_op_owner()) like the listing itself, and only
 * the name map uses it. Fills only what th_sess_input() reads for it.
 * @return false when it binds nothing: @p op is not a successful READDIRPLUS
 * whose call was seen, or the entry is "." or "..", has a '/' in its name,
 * an empty name or handle, or a handle or directory handle over
 * TH_SESS_FH_MAX bytes. A name over TH_SESS_NAME_MAX bytes is cut, as a
 * LOOKUP's is.
 */
bool th_sess_op_from_dirent(
	const struct th_op *op, const struct th_nfs_dirent *e, struct th_sess_op *out);

/** Whether th_sess_op_from_op() would take @p op (without reducing it). */
bool th_sess_op_is_used(const struct th_op *op);

/** Which of @p n session lcores owns the file: hash(server, handle) mod n. */
unsigned int th_sess_op_owner(const struct th_sess_op *op, unsigned int n);

/** Direction of a record. */
enum th_sess_dir {
	TH_SESS_DIR_READ = 0,
	TH_SESS_DIR_WRITE = 1,
};

/** One inferred open (the seed's record, plus what the binary form carries). */
struct th_sess_record {
	uint64_t open_ns;      /**< when the open occurred (first operation's call) */
	uint64_t close_ns;     /**< when it closed (last operation's reply) */
	uint64_t first_op_ns;  /**< first operation's call */
	uint64_t last_op_ns;   /**< last operation's reply */
	struct th_addr server; /**< file-id: server ... */
	uint8_t fh_len;        /**< ... and handle */
	uint8_t fh[TH_SESS_FH_MAX];
	struct th_addr client; /**< client ... */
	uint32_t uid;          /**< ... and user */
	uint32_t gid;          /**< group */
	uint8_t dir;           /**< enum th_sess_dir (mkdir counts as write, readdir as read) */
	uint8_t vers;          /**< NFS version */
	bool is_cache_hit;     /**< served by the client cache: transferred is 0 */
	bool is_directory;     /**< a directory read (READDIR) or write (MKDIR) */
	uint32_t ops;          /**< operations in the session */
	uint64_t transferred;  /**< bytes read or written; 0 for a directory read (a READDIR
				    op carries its entries, not its bytes) */
	uint64_t seq_bytes;    /**< bytes at the offset where the previous op ended */
	uint64_t rand_bytes;   /**< the rest */
	uint64_t size;         /**< file size at close (last known) */
};

/** A name valid for a handle during [from_ns, to_ns); to_ns 0: still valid at the record. */
struct th_sess_name {
	struct th_addr server;
	uint8_t dir_fh_len;
	uint8_t dir_fh[TH_SESS_FH_MAX];
	uint8_t fh_len;
	uint8_t fh[TH_SESS_FH_MAX];
	uint64_t from_ns;
	uint64_t to_ns;
	uint32_t mode; /**< st_mode-style type and permissions seen for it; 0 unknown */
	uint16_t name_len;
	char name[TH_SESS_NAME_MAX + 1];
};

/** Level of detail. */
enum th_sess_detail {
	TH_SESS_OPENS = 0,      /**< opens only (default) */
	TH_SESS_OPENS_DIRS = 1, /**< opens and directory reads/writes */
};

/** Thresholds; th_sess_config_defaults() documents each default. */
struct th_sess_config {
	uint32_t files;             /**< files tracked per table */
	uint32_t sessions;          /**< opens in progress per table */
	uint64_t idle_ns;           /**< a session with no operation this long is closed */
	uint64_t cache_window_ns;   /**< a GETATTR within this of the client's last read can be
				       a cache read */
	enum th_sess_detail detail; /**< level of detail */
	bool is_names_on;           /**< keep the handle-to-name map (off: privacy) */
	/* Added by the session library (see th_sess_config_defaults()). */
	uint32_t clients;          /**< client addresses tracked per table */
	uint32_t names;            /**< handle-to-name entries per table */
	uint64_t confirm_ns;       /**< a GETATTR/ACCESS waits this long for a READ before it
				      counts as a cache read */
	uint64_t listing_ns;       /**< GETATTRs this long after a client's READDIR or
				      LOOKUP burst, or after a GETATTR that was one, are
				      listing phantoms (ls -l) */
	uint64_t lookup_burst_ns;  /**< LOOKUPs this close together form a burst ... */
	uint32_t lookup_burst;     /**< ... when there are at least this many */
	uint64_t write_settle_ns;  /**< GETATTRs sooner than this after the client's own write
				      are its write-back revalidation, not a read-back, unless
				      an ACCESS came with them (0, the default: off) */
	bool is_access_open;       /**< ACCESS counts as open evidence like GETATTR, and
				      rescues a GETATTR from the listing rule */
	uint32_t core_index;       /**< this table's owner index ... */
	uint32_t cores;            /**< ... among this many (th_sess_op_owner); 1: one table */
	uint64_t getattr_burst_ns; /**< GETATTRs of one user on different files this close
				      together form a burst (ls -l on a cached listing) ... */
	uint32_t getattr_burst;    /**< ... when there are at least this many */
	bool is_touch_open;        /**< a SETATTR of times (no size, no mode) is a write open
				      of 0 bytes: touch opens the file O_WRONLY|O_CREAT */
	bool is_access_mirror;     /**< a GETATTR without ACCESS is an open only for a user
				      whose access rights the client has cached */
};

void th_sess_config_defaults(struct th_sess_config *c);

/** Counters. X-macro: field, description. */
#define TH_SESS_COUNTER_LIST(X)                                                                    \
	X(ops, "operations in")                                                                    \
	X(ops_ignored, "operations that start or end no open")                                     \
	X(records, "open records out")                                                             \
	X(records_cache_hit, "records that are cache reads")                                       \
	X(sessions_evicted, "sessions closed early: table full")                                   \
	X(files_evicted, "files forgotten early: table full")                                      \
	X(bad_ops, "operations with impossible values (counted, skipped)")                         \
	X(names, "name records out")                                                               \
	X(names_evicted, "names forgotten early: name map full (emitted still valid)")             \
	X(dirents, "READDIRPLUS entries in (name bindings; not operations)")                       \
	X(history_evicted, "read/write histories forgotten early: table full")                     \
	X(clients_full, "operations skipped: client table full of clients with state")             \
	X(cache_reads_confirmed, "GETATTR/ACCESS followed by READs: an uncached open, not a hit")  \
	X(phantoms_listing, "GETATTR/ACCESS dropped as ls -l (listing) phantoms")                  \
	X(phantoms_write_settle, "GETATTRs dropped: right after the client's own write")           \
	X(getattr_no_history, "GETATTRs ignored: no read/write by the client in the window")       \
	X(phantoms_burst, "GETATTRs dropped as a burst over different files (ls -l)")              \
	X(phantoms_no_access, "GETATTRs dropped: no ACCESS and none cached for the user (stat)")   \
	X(history_changed, "cache histories dropped: attributes changed by someone else")          \
	X(touch_opens, "SETATTRs of times counted as write opens (touch)")                         \
	X(no_reply_attrs, "GETATTR/ACCESS without a reply: no attributes, no open")                \
	X(no_reply_joined, "calls without a reply joined to their open in progress")               \
	X(no_reply_reported, "calls without a reply dropped: their open was already reported")     \
	X(no_reply_opens, "opens begun by a call without a reply (bytes not seen)")                \
	X(no_reply_dirs, "directory reads without a reply and no listing in progress (dropped)")   \
	X(write_from_getattr, "write opens begun at their GETATTR (truncate or touch not seen)")   \
	X(read_gaps_joined, "READs after a gap in offsets kept in their open (RPCs lost)")         \
	X(clock_back, "capture clock went back: opens closed, GETATTRs decided there")

struct th_sess_counters {
#define TH_SESS_X(name, text) uint64_t name;
	TH_SESS_COUNTER_LIST(TH_SESS_X)
#undef TH_SESS_X
};

typedef void (*th_sess_record_cb)(void *ctx, const struct th_sess_record *r);
typedef void (*th_sess_name_cb)(void *ctx, const struct th_sess_name *n);

struct th_sess_table;

/** @return NULL with errno EINVAL or ENOMEM. name_cb may be NULL. */
struct th_sess_table *th_sess_create(const struct th_sess_config *c, th_sess_record_cb record_cb,
	th_sess_name_cb name_cb, void *ctx);
void th_sess_free(struct th_sess_table *t);

/**
 * Feed one operation (in roughly the order the replies arrived). Time first
 * moves to the op's call (th_sess_tick()): without ticks of its own (a
 * replay), a caller gets the same records from the same ops every time.
 * A TH_SESS_CLOCK_BACK event says the capture's clock went back to its
 * call_ns (two captures end to end, a clock step): ageing takes its lists
 * in time order, so what is pending is decided and what is open closed
 * there, as at the end of a capture (histories stay), and time goes on
 * from call_ns.
 */
void th_sess_input(struct th_sess_table *t, const struct th_sess_op *op);

/**
 * Advance time: decide GETATTRs whose confirm_ns is over, close sessions idle
 * past idle_ns, forget histories past cache_window_ns. A live capture calls it
 * every few ms with the host clock, so that idle time counts without ops.
 */
void th_sess_tick(struct th_sess_table *t, uint64_t now_ns);

/**
 * Close every open session (end of capture): pending cache reads are decided
 * as if their confirmation delay had passed, then every name still valid is
 * emitted with to_ns 0. Read/write histories are kept.
 */
void th_sess_flush(struct th_sess_table *t);

/**
 * True for operations whose context matters to every table, not only the
 * owner of op->fh: READDIR/READDIRPLUS and LOOKUP (a client listing a
 * directory, whose entries' GETATTRs land on other tables) and CREATE/MKDIR
 * (the new handle fh2 may be owned by another table). With cores > 1 the
 * caller hands these to every table; each table acts only on the handles it
 * owns (config core_index/cores) and records the client's listing context.
 */
bool th_sess_op_is_broadcast(const struct th_sess_op *op);

/** Owner of a handle, the hash th_sess_op_owner() uses. */
unsigned int th_sess_fh_owner(
	const struct th_addr *server, const uint8_t *fh, unsigned int fh_len, unsigned int n);

/** Text name of an enum th_sess_kind ("READ", ...), "?" when out of range. */
const char *th_sess_kind_name(unsigned int kind);

/**
 * The name record as text, one line with the trailing newline:
 *   server | dir-handle-hex | name | handle-hex | from s.us | to s.us (- while valid) | mode
 * with the mode as ls writes it ("-rw-r--r--", "drwxr-xr-x"), "-" when unknown.
 * Name bytes outside printable ASCII, '|' and '\\' as \xHH. @return as snprintf.
 */
int th_sess_name_format(const struct th_sess_name *n, char *buf, size_t size);

const struct th_sess_counters *th_sess_counters(const struct th_sess_table *t);

/** Bytes allocated, and bytes per session and per file entry. */
size_t th_sess_memory(const struct th_sess_table *t);
size_t th_sess_session_size(void);
size_t th_sess_file_size(void);

/**
 * The seed's text record:
 *   timestamp | command-time | direction | file-id | client | transferred | size
 * e.g. "690691919.593442 | 17734 | read | 10.0.0.1:7b1f00000000400f | 10.1.0.3.321 | 0 | 24576"
 * (timestamp s.us; command-time µs; file-id server:handle-hex, an IPv6 server in
 * brackets; client address.uid).
 * With the trailing newline. @return as snprintf.
 */
int th_sess_record_format(const struct th_sess_record *r, char *buf, size_t size);

#endif /* TH_SESSION_H */
