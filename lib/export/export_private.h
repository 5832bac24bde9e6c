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
