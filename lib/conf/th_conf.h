/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_CONF_H
#define TH_CONF_H

/**
 * @file
 * INI configuration files: [section] headers, key = value lines, '#' and
 * ';' comments; a UTF-8 byte-order mark at the start is skipped. Every
 * problem is reported as "file:line: what is wrong" so a user can fix the
 * file without reading the code. A section is one
 * block: a header that repeats an earlier one ("file:line: [s] already
 * begun on line N"), a header without a name and a key set twice are
 * refused.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct th_conf;

/**
 * Parse @p path. On failure returns NULL, sets errno, and writes the
 * reason (with file:line) to @p err.
 */
struct th_conf *th_conf_load(const char *path, char *err, size_t err_size);

/** Parse INI text held in memory; @p name stands for the file in messages. */
struct th_conf *th_conf_parse(const char *text, const char *name, char *err, size_t err_size);

void th_conf_free(struct th_conf *c);

/** The value of section.key, or NULL when absent. */
const char *th_conf_get(const struct th_conf *c, const char *section, const char *key);

/**
 * Parse all of @p s as an unsigned integer within [min, max]: decimal digits
 * ("010" is ten), or hex with 0x where @p is_hex_ok; no sign, no white
 * space. Command lines read numbers as configuration files do.
 * @return 0, or -EINVAL (*out untouched).
 */
int th_conf_parse_u64(const char *s, uint64_t min, uint64_t max, bool is_hex_ok, uint64_t *out);

/**
 * Parse all of @p s as a decimal number within [min, max] (0.25, -1, .5,
 * 1e-3): a minus sign at most, no white space, hex, inf or nan.
 * @return 0, or -EINVAL (*out untouched).
 */
int th_conf_parse_double(const char *s, double min, double max, double *out);

/**
 * Read section.key as an unsigned integer within [min, max] into *out:
 * decimal ("010" is ten) or hex with 0x, digits only, no sign ("+5" and
 * "-1" are refused). Absent keys leave *out alone and return 0.
 * @return 0, or -EINVAL with the reason (file:line) in @p err.
 */
int th_conf_get_u64(const struct th_conf *c, const char *section, const char *key, uint64_t min,
	uint64_t max, uint64_t *out, char *err, size_t err_size);

/** Same for a non-negative decimal number of seconds, returned in ns. */
int th_conf_get_seconds(const struct th_conf *c, const char *section, const char *key,
	uint64_t *out_ns, char *err, size_t err_size);

/**
 * Same for a decimal number (e.g. 0.25, -1, 1e-3) within [min, max]: a
 * minus sign at most before it ("+5" is refused), no hex, inf or nan.
 */
int th_conf_get_double(const struct th_conf *c, const char *section, const char *key, double min,
	double max, double *out, char *err, size_t err_size);

/**
 * Write "file:line" of section.key (just "file" when it is absent) to
 * @p buf, for messages about values that parse but do not fit together.
 * @p key NULL: the line of the section's header, for what is wrong with
 * the section itself (its name).
 * @return what snprintf returns.
 */
int th_conf_where(const struct th_conf *c, const char *section, const char *key, char *buf,
	size_t size);

/**
 * The @p n-th section name, in file order: "" first when keys come before
 * any header, then every header's, with keys or without. NULL past the last.
 * Listing a section is not reading it (th_conf_check_unused()).
 */
const char *th_conf_section(const struct th_conf *c, unsigned n);

/**
 * @p s as a message may show it: bytes outside printable ASCII as '?' (no
 * terminal escapes from a file), cut to fit @p buf with "...". @return @p buf.
 */
const char *th_conf_printable(const char *s, char *buf, size_t size);

/**
 * Say that section.key is absent, as "file:line: [section] needs 'key'
 * @p why" at the section's header ("file: ..." for keys before any header).
 * When the likely reason is in the file, point at its line instead: a key
 * of that section no getter asked for, spelled within an edit of @p key
 * (two from six letters on: "file:line: unknown key 'section.kye'
 * ([section] needs 'key')"), or a file without that section at all ("file:
 * no [section] section (line N is in [sectoin])", "(line N is before any
 * [section])"). @return -EINVAL.
 */
int th_conf_missing(const struct th_conf *c, const char *section, const char *key, const char *why,
	char *err, size_t err_size);

/**
 * Report what no th_conf_get* call asked for (typos), the first in the file
 * to @p err: a section none asked any key of, with keys or without, as
 * "file:line: unknown section [name]" at its header; else a key, as
 * "file:line: unknown key 'section.key'", or, for a key before any header
 * where no getter asked for any such key, "file:line: 'key' is before any
 * [section]".
 * @return 0 when every section and key was used, -EINVAL otherwise.
 */
int th_conf_check_unused(const struct th_conf *c, char *err, size_t err_size);

#endif /* TH_CONF_H */
