/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_EXPORT_H
#define TH_EXPORT_H

/**
 * @file
 * Batch export of trace records: k-way merge of many record streams (one per
 * segment file: many lcores, many boxes) into timestamp order, filters, the
 * handle-to-name join, host names, keyed anonymisation, and the three output
 * formats (the seed's 7-field text, CSV, JSON Lines).
 *
 * Nothing here knows the segment container: a stream is a struct
 * th_export_source (a callback that yields decoded records), so the library
 * is tested with in-memory streams and the command plugs in the segment reader.
 *
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104) are implemented here
 * because the appliance links no crypto library; they key the pseudonyms.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "th_pkt.h"
#include "th_trace.h"

struct th_srt;

/* ---- SHA-256 and HMAC-SHA-256 ---- */

#define TH_EXPORT_SHA256_SIZE 32
#define TH_EXPORT_SHA256_BLOCK 64

struct th_export_sha256 {
	uint32_t h[8];   /**< chaining state */
	uint64_t total;  /**< bytes hashed so far */
	uint8_t buf[64]; /**< partial block */
	size_t buf_size; /**< bytes in buf */
};

void th_export_sha256_init(struct th_export_sha256 *s);
void th_export_sha256_update(struct th_export_sha256 *s, const void *data, size_t size);
void th_export_sha256_final(struct th_export_sha256 *s, uint8_t out[TH_EXPORT_SHA256_SIZE]);
void th_export_sha256(const void *data, size_t size, uint8_t out[TH_EXPORT_SHA256_SIZE]);
/**
 * The block function in use: "sha-ni" (x86-64 SHA extensions, chosen at load
 * time when the CPU has them) or "portable".
 */
const char *th_export_sha256_engine(void);
/**
 * Use block function @p name ("sha-ni" or "portable") from now on, in every
 * thread: for tests and benchmarks, before hashing starts. @return 0,
 * -ENOTSUP when this CPU or build lacks it, -EINVAL for another name.
 */
int th_export_sha256_set_engine(const char *name);

/** A key prepared once: the inner and outer states after the padded key block. */
struct th_export_hmac_key {
	struct th_export_sha256 inner;
	struct th_export_sha256 outer;
};

void th_export_hmac_init(struct th_export_hmac_key *k, const void *key, size_t key_size);
/** HMAC of the concatenation of two parts (a domain tag and the value), either may be empty. */
void th_export_hmac2(const struct th_export_hmac_key *k, const void *a, size_t a_size,
	const void *b, size_t b_size, uint8_t out[TH_EXPORT_SHA256_SIZE]);
void th_export_hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
	uint8_t out[TH_EXPORT_SHA256_SIZE]);

/* ---- Anonymisation ---- */

struct th_export_anon;

/**
 * Pseudonyms keyed by @p key: the same value and key give the same pseudonym
 * in every run and on every box. With @p is_prefix_preserving, two addresses
 * that share an n-bit prefix get pseudonyms that share an n-bit prefix (each
 * output bit is the input bit XOR a bit of the HMAC of the preceding input bits).
 * Address, uid, gid and handle pseudonyms are computed once and kept in tables
 * of a fixed size (32 MB in all, mapped in as they fill): 262144 addresses,
 * 4096 uids and gids, 262144 handles; beyond that the oldest of a few entries
 * gives way (counted), and is computed again if it comes back.
 * @return NULL with errno EINVAL (empty key) or ENOMEM.
 */
struct th_export_anon *th_export_anon_create(
	const void *key, size_t key_size, bool is_prefix_preserving);
void th_export_anon_free(struct th_export_anon *a);

/**
 * Read a key file (any bytes, at least 16). @return 0, -ENOENT/-EACCES/...
 * from open, -EINVAL when shorter than 16 bytes, -EFBIG over 4096.
 */
int th_export_anon_load_key(const char *path, uint8_t *key, size_t size, size_t *key_size);

/** Address pseudonym; an IPv4(-mapped) address stays IPv4. */
void th_export_anon_addr(struct th_export_anon *a, const struct th_addr *in, struct th_addr *out);
uint32_t th_export_anon_uid(struct th_export_anon *a, uint32_t uid);
uint32_t th_export_anon_gid(struct th_export_anon *a, uint32_t gid);
/** Handle pseudonym: always TH_EXPORT_ANON_FH_SIZE bytes (the length would say which server). */
#define TH_EXPORT_ANON_FH_SIZE 16
void th_export_anon_fh(struct th_export_anon *a, const uint8_t *fh, unsigned int fh_len,
	uint8_t out[TH_EXPORT_ANON_FH_SIZE]);

/** Pseudonym counters. */
struct th_export_anon_counters {
	uint64_t addrs;    /**< address pseudonyms computed */
	uint64_t ids;      /**< uid and gid pseudonyms computed */
	uint64_t fhs;      /**< handle pseudonyms computed */
	uint64_t replaced; /**< kept pseudonyms that gave way to newer ones (a full set) */
};

/**
 * The counters since th_export_anon_create(): pseudonyms computed and kept
 * (a handle longer than TH_TRACE_FH_MAX, which no trace holds, is neither).
 */
void th_export_anon_counters(const struct th_export_anon *a, struct th_export_anon_counters *c);
/**
 * Path pseudonym: every '/'-separated component replaced by 16 hex digits of
 * its HMAC; separators (and a leading '/') kept, so the tree keeps its shape.
 * @return length written (NUL-terminated, truncated to @p size - 1).
 */
size_t th_export_anon_path(
	const struct th_export_anon *a, const char *path, size_t path_len, char *out, size_t size);

/* ---- Host names ---- */

struct th_export_hosts;

/** An empty table; names come from th_export_hosts_load() or, with is_resolve, reverse DNS. */
struct th_export_hosts *th_export_hosts_create(bool is_resolve);
void th_export_hosts_free(struct th_export_hosts *h);
/**
 * Add the entries of an /etc/hosts-style file (address, canonical name,
 * aliases; '#' comments). The first name given for an address wins.
 * @return 0; -errno from fopen; -EINVAL with @p line set to a line whose
 * address does not parse.
 */
int th_export_hosts_load(struct th_export_hosts *h, const char *path, unsigned int *line);
/** Name for @p a, or NULL (print the number). With is_resolve, every answer is cached. */
const char *th_export_hosts_lookup(struct th_export_hosts *h, const struct th_addr *a);

/* ---- Handle-to-name join ---- */

struct th_export_names;

/** A join table taking at most @p max_bytes (entries, their index, names). */
struct th_export_names *th_export_names_create(uint64_t max_bytes);
void th_export_names_free(struct th_export_names *n);
/** Keep a name record. @return 0; -ENOSPC when it does not fit the budget; -EINVAL; -ENOMEM. */
int th_export_names_add(struct th_export_names *n, const struct th_trace_name *r);
/**
 * The path of @p fh on @p server at @p t_ns: its name valid at that time,
 * preceded by its directory's names as far as they are known (a mount path
 * starts with '/'; otherwise the path is relative to the first unknown
 * directory). The path is kept with the file's name while it holds, so
 * asking again costs one lookup. @return length (0: no name known),
 * NUL-terminated in @p out; *@p mode (when not NULL) the file's st_mode as
 * its name record had it, 0 when unknown.
 */
size_t th_export_names_path(struct th_export_names *n, const struct th_addr *server,
	const uint8_t *fh, unsigned int fh_len, uint64_t t_ns, char *out, size_t size,
	uint32_t *mode);

/* ---- Record streams and merge ---- */

/**
 * Yield the next record of a stream into @p type / @p open / @p name (the
 * stream writes only the struct its type names; rpc records may be yielded
 * through @p rpc or skipped by the stream).
 * @return 1 for a record, 0 at the end, -errno when the stream is damaged
 * (the stream ends there and export goes on with the others; the caller, who
 * knows what the stream is read from, reports the damage).
 */
typedef int (*th_export_next_fn)(void *ctx, int *type, struct th_trace_open *open,
	struct th_trace_name *name, struct th_trace_rpc *rpc);

struct th_export_source {
	const char *label;      /**< what reports call it (the segment's path) */
	th_export_next_fn next; /**< yields its records */
	void *ctx;              /**< for next */
	/** Called between passes to start again from the first record (-errno on failure). */
	int (*rewind)(void *ctx);
	/** The stream holds no name records (opens or RPCs only): the names pass skips it. */
	bool is_nameless;
	/**
	 * Only the stream's name records are wanted (a names segment; with is_rpcs, one of
	 * opens and names too): when there is a names pass, the merge pass skips it, and it
	 * is not rewound (it is read once).
	 */
	bool is_names_only;
};

/* ---- Export ---- */

#define TH_EXPORT_FORMAT_LIST(X)                                                                   \
	X(TEXT, "text")                                                                            \
	X(CSV, "csv")                                                                              \
	X(JSON, "json")

enum th_export_format {
#define TH_EXPORT_X(name, text) TH_EXPORT_FORMAT_##name,
	TH_EXPORT_FORMAT_LIST(TH_EXPORT_X)
#undef TH_EXPORT_X
		TH_EXPORT_FORMAT_COUNT
};

/** Parse "text", "csv", "json"/"jsonl". @return the format or -EINVAL. */
int th_export_format_parse(const char *s);

/** "text", "csv" or "json" (what th_export_format_parse() reads back). */
const char *th_export_format_name(enum th_export_format f);

/** An address with a prefix length (a filter on server or client). */
struct th_export_net {
	struct th_addr addr;
	unsigned int prefix_len; /**< bits compared, over the 128-bit (IPv4-mapped) form */
};

/** Parse "ADDR" or "ADDR/LEN" (IPv4 LEN 0-32, IPv6 0-128). @return 0 or -EINVAL. */
int th_export_net_parse(const char *s, struct th_export_net *out);

/**
 * Parse a time: seconds since the epoch with an optional fraction
 * ("1700000000.25"), or UTC "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.frac]]" with
 * 'T' or a space and an optional trailing 'Z', up to 2554-07-21T23:34:32Z (the
 * last second in 64-bit nanoseconds). @return 0 or -EINVAL.
 */
int th_export_time_parse(const char *s, uint64_t *ns);

#define TH_EXPORT_FILTER_MAX 64

struct th_export_config {
	enum th_export_format format;
	/** Write RPC records (a decode lcore's per-call log, by call time) instead of opens;
	 * direction does not apply. */
	bool is_rpcs;
	/** With is_rpcs: add each RPC that passes the filters and has its call and reply
	 * to this table (the call's first segment to the reply's first) instead of
	 * writing it; NULL: write. */
	struct th_srt *srt;
	/**
	 * Write the name records themselves instead of opens: one row per binding, in order
	 * of the start of its validity, with its path (is_names_on). Every name is read and
	 * held (names_bytes) before the first row; names past the budget are not listed. A
	 * binding passes the time filter when its validity overlaps [from_ns, to_ns); the
	 * client, uid and direction filters do not apply (a name has none), nor the window.
	 */
	bool is_names;
	uint64_t from_ns;           /**< records with open (call) time >= this ... */
	uint64_t to_ns;             /**< ... and < this (0: no upper bound) */
	unsigned int servers_count; /**< any of these servers (0: all) */
	struct th_export_net servers[TH_EXPORT_FILTER_MAX];
	unsigned int clients_count; /**< any of these clients (0: all) */
	struct th_export_net clients[TH_EXPORT_FILTER_MAX];
	unsigned int uids_count; /**< any of these uids (0: all) */
	uint32_t uids[TH_EXPORT_FILTER_MAX];
	int direction;            /**< -1 both, else enum th_sess_dir (0 read, 1 write) */
	/** handle hex equal to, path containing, or "fh=" and the handle's CRC-32 (8 hex digits,
	 *  as --rpcs text shows it; with pseudonyms, also the pseudonym's) equal to, any of these
	 */
	unsigned int files_count;
	const char *files[TH_EXPORT_FILTER_MAX];
	bool is_names_on;              /**< join names (CSV/JSON path column, --file substrings) */
	uint64_t window_ns;            /**< a stream may be this much out of time order */
	/** Memory all streams may hold back for the window together (each an equal share,
	 * at least 1024 records); a stream at its share lets its head go early. */
	uint64_t window_bytes;
	/** Memory for the name join (about 260 bytes a name); names past it are not kept. */
	uint64_t names_bytes;
	struct th_export_hosts *hosts; /**< host names, or NULL: numeric */
	struct th_export_anon *anon;   /**< pseudonyms, or NULL */
	/** Called every few thousand records with records read so far (progress), may be NULL. */
	void (*progress)(void *ctx, uint64_t records);
	void *progress_ctx;
};

void th_export_config_defaults(struct th_export_config *c);

/** Counters of one th_export_run(). */
struct th_export_counters {
	uint64_t records_in;   /**< open (RPC; with is_names, name) records read */
	uint64_t records_out;  /**< records written */
	uint64_t filtered;     /**< records left out by the filters */
	uint64_t names_in;     /**< name records read */
	uint64_t names_dropped; /**< name records not kept: the join's memory was full */
	uint64_t out_of_order;  /**< records written after a later one written (late for the window)
				 */
	/**
	 * Furthest a record of a stream came after a later one of the same stream (ns): a
	 * window of at least this holds every record back long enough, memory permitting.
	 */
	uint64_t max_disorder_ns;
	uint64_t released_early; /**< records let go before their window had passed (memory) */
};

/**
 * Does the export read name records (a path column, --file substrings, or the
 * names themselves)? Without, streams of names alone need not be given.
 */
bool th_export_needs_names(const struct th_export_config *c);

/**
 * Merge, filter and write @p count streams to @p out. A damaged stream ends
 * where the damage is (its records before it are kept) and the export goes
 * on with the rest; reporting it is the caller's. A stream that cannot be
 * rewound for the merge pass is named on @p err.
 * @return 0; -EIO when writing failed; -ENOMEM.
 */
int th_export_run(const struct th_export_config *c, struct th_export_source *sources,
	unsigned int count, FILE *out, FILE *err, struct th_export_counters *ctr);

#endif /* TH_EXPORT_H */
