/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_EXPORT_PRIVATE_H
#define TH_EXPORT_PRIVATE_H

/* Between the files of lib/export (the join and the exporter); not part of th_export.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_export.h"

/**
 * th_export_names_path() into @p path, and into @p apath what
 * th_export_anon_path() with @p a makes of that path (*@p apath_len bytes).
 * Each name's pseudonym is computed on its first use and kept in the table, so
 * a table must only ever see one key.
 * @return the path's length (0: no name known; @p apath is then empty), and
 * the file's st_mode in *@p mode (0 unknown).
 */
size_t th_export__names_path_anon(struct th_export_names *n, const struct th_export_anon *a,
	const struct th_addr *server, const uint8_t *fh, unsigned int fh_len, uint64_t t_ns,
	char *path, size_t path_size, char *apath, size_t apath_size, size_t *apath_len,
	uint32_t *mode);

/*
 * The name map listed (export --names): every name kept, in order of the start
 * of its validity, with the path the join makes of it there.
 */

/**
 * A join table as th_export_names_create(), whose budget also holds the key
 * th_export__names_sort() needs for each name (16 bytes). @return NULL
 * (ENOMEM).
 */
struct th_export_names *th_export__names_create_listing(uint64_t max_bytes);

/**
 * Order the names added so far by the start of their validity; of names that
 * start together, the one added first comes first. Only for a table made by
 * th_export__names_create_listing().
 * @return the names in that order (th_export__names_listed()'s @p i below it),
 * -ENOMEM, or -EINVAL for another table.
 */
long th_export__names_sort(struct th_export_names *n);

/** The @p i-th name in th_export__names_sort()'s order, into @p r (its name NUL-terminated). */
void th_export__names_listed(const struct th_export_names *n, size_t i, struct th_trace_name *r);

/**
 * Start loading the @p i-th name's entry, or once it has arrived (@p is_dir),
 * its name and its directory's bucket: rows taken in order of start visit the
 * table at random.
 */
void th_export__names_listed_prefetch(const struct th_export_names *n, size_t i, bool is_dir);

/**
 * The path of the @p i-th name at its start into @p path: its directories'
 * names valid then, joined as th_export__names_path_anon() joins them for an
 * open of its handle at that time, but walked up from this name (of two
 * names a handle got at once, each row has its own). With @p a, the path's
 * pseudonym into @p apath (*@p apath_len bytes), made as for an open, so that
 * the two are equal. @return the path's length (0: none).
 */
size_t th_export__names_listed_path(struct th_export_names *n, const struct th_export_anon *a,
	size_t i, char *path, size_t path_size, char *apath, size_t apath_size, size_t *apath_len);

/*
 * Loading ahead (the exporter's prefetch_ahead()): lookups one record at a
 * time in tables larger than the caches each wait for memory; started a few
 * records ahead, in two steps (the set or bucket, then once it has arrived
 * the entry it names), the loads overlap. Nothing is computed or changed.
 */

/** The table hashes of a record's client address, server address and handle pseudonyms. */
void th_export__anon_hashes(const struct th_addr *client, const struct th_addr *server,
	const uint8_t *fh, unsigned int fh_len, uint32_t h[3]);
/** Start loading their table sets, or (@p is_entries) their matching entries. */
void th_export__anon_prefetch(const struct th_export_anon *a, const uint32_t h[3], bool is_entries);
/** The join's hash of @p fh on @p server. */
uint32_t th_export__names_hash(
	const struct th_addr *server, const uint8_t *fh, unsigned int fh_len);
/** Start loading its bucket, or (@p is_entry) the first entry the bucket names. */
void th_export__names_prefetch(const struct th_export_names *n, uint32_t h, bool is_entry);

#endif /* TH_EXPORT_PRIVATE_H */
