/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_conf.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONF_MAX_ENTRIES 1024
#define CONF_MAX_FILE (1 << 20)

struct entry {
	char *section; /* section name, "" before the first header */
	char *key;     /* key */
	char *value;   /* value, trimmed */
	unsigned line; /* where it was set */
	bool is_used;  /* asked for by a getter */
};

/* A [section] header as written. */
struct header {
	char *name;    /* section name, trimmed */
	unsigned line; /* where it is */
	bool is_asked; /* a getter asked for a key of the section, there or not */
};

struct th_conf {
	char *name;         /* file name for messages */
	char *text;         /* owned copy; entries point into it */
	unsigned count;     /* entries in use */
	unsigned hdr_count; /* headers in hdr */
	bool has_top;       /* keys come before the first header (section "") */
	bool is_top_asked;  /* a getter asked for a key before any header */
	struct entry e[CONF_MAX_ENTRIES];
	struct header hdr[CONF_MAX_ENTRIES]; /* the headers, in file order, each name once */
};

static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

void
th_conf_free(struct th_conf *c)
{
	if (c == NULL)
		return;
	free(c->text);
	free(c->name);
	free(c);
}

const char *
th_conf_printable(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < size; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	if (s[i] != '\0' && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

/* The header of @p section, or NULL (no such header, or the keys before any). */
static struct header *
header_of(const struct th_conf *c, const char *section)
{
	unsigned i;

	for (i = 0; i < c->hdr_count; i++)
		if (strcmp(c->hdr[i].name, section) == 0)
			return (struct header *)&c->hdr[i];
	return NULL;
}

struct th_conf *
th_conf_parse(const char *text, const char *name, char *err, size_t err_size)
{
	struct th_conf *c = calloc(1, sizeof(*c));
	char *section = "", *line, *next, key_shown[64], sec_shown[64];
	unsigned lineno = 0, i;
	struct header *h;

	/* Editors on Windows start a UTF-8 file with a byte-order mark: not part of line 1. */
	if (strncmp(text, "\xef\xbb\xbf", 3) == 0)
		text += 3;
	if (c == NULL || (c->text = strdup(text)) == NULL || (c->name = strdup(name)) == NULL) {
		th_conf_free(c);
		snprintf(err, err_size, "%s: out of memory", name);
		errno = ENOMEM;
		return NULL;
	}
	for (line = c->text; line != NULL; line = next) {
		char *eq, *s, *key;

		lineno++;
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		s = trim(line);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (close == NULL || *trim(close + 1) != '\0') {
				snprintf(err, err_size, "%s:%u: section header needs a closing ']'",
					name, lineno);
				goto invalid;
			}
			*close = '\0';
			section = trim(s + 1);
			if (*section == '\0') {
				snprintf(err, err_size, "%s:%u: section header without a name",
					name, lineno);
				goto invalid;
			}
			/* A second header of a section would add to the first one's keys out of
			 * sight of it (a pasted block, a second [workload]): no format here
			 * spreads a section over the file. */
			if ((h = header_of(c, section)) != NULL) {
				snprintf(err, err_size, "%s:%u: [%s] already begun on line %u",
					name, lineno,
					th_conf_printable(section, sec_shown, sizeof(sec_shown)),
					h->line);
				goto invalid;
			}
			if (c->hdr_count == CONF_MAX_ENTRIES) {
				snprintf(err, err_size, "%s:%u: more than %d sections", name,
					lineno, CONF_MAX_ENTRIES);
				goto invalid;
			}
			c->hdr[c->hdr_count].name = section;
			c->hdr[c->hdr_count].line = lineno;
			c->hdr_count++;
			continue;
		}
		eq = strchr(s, '=');
		if (eq == NULL) {
			char shown[64];

			snprintf(err, err_size, "%s:%u: expected 'key = value', got '%s'", name,
				lineno, th_conf_printable(s, shown, sizeof(shown)));
			goto invalid;
		}
		*eq = '\0';
		key = trim(s);
		if (*key == '\0') {
			snprintf(err, err_size, "%s:%u: missing key before '='", name, lineno);
			goto invalid;
		}
		for (i = 0; i < c->count; i++) {
			if (strcmp(c->e[i].section, section) != 0)
				continue;
			if (strcmp(c->e[i].key, key) == 0) {
				snprintf(err, err_size, "%s:%u: %s%s%s already set on line %u",
					name, lineno,
					th_conf_printable(section, sec_shown, sizeof(sec_shown)),
					*section ? "." : "",
					th_conf_printable(key, key_shown, sizeof(key_shown)),
					c->e[i].line);
				goto invalid;
			}
		}
		if (c->count == CONF_MAX_ENTRIES) {
			snprintf(err, err_size, "%s:%u: more than %d keys", name, lineno,
				CONF_MAX_ENTRIES);
			goto invalid;
		}
		if (c->hdr_count == 0)
			c->has_top = true;
		c->e[c->count].section = section;
		c->e[c->count].key = key;
		c->e[c->count].value = trim(eq + 1);
		/* "x = 5 # why" or "x = ; off" would make the comment part of a name or a path. */
		for (const char *v = c->e[c->count].value; *v != '\0'; v++) {
			if ((*v == '#' || *v == ';') &&
				(v == c->e[c->count].value || v[-1] == ' ' || v[-1] == '\t')) {
				snprintf(err, err_size,
					"%s:%u: %s: a comment goes on a line of its own "
					"('%c' after the value)",
					name, lineno,
					th_conf_printable(key, key_shown, sizeof(key_shown)), *v);
				goto invalid;
			}
		}
		c->e[c->count].line = lineno;
		c->count++;
	}
	return c;

invalid:
	th_conf_free(c);
	errno = EINVAL;
	return NULL;
}

struct th_conf *
th_conf_load(const char *path, char *err, size_t err_size)
{
	struct th_conf *c;
	char *text;
	size_t n;
	FILE *f;
	int saved;

	f = fopen(path, "r");
	if (f == NULL) {
		saved = errno;
		snprintf(err, err_size, "%s: cannot open: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	text = malloc(CONF_MAX_FILE + 1);
	if (text == NULL) {
		fclose(f);
		snprintf(err, err_size, "%s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	n = fread(text, 1, CONF_MAX_FILE + 1, f);
	if (ferror(f)) {
		/* A directory opens but does not read (EISDIR): not an empty config. */
		saved = errno != 0 ? errno : EIO;
		fclose(f);
		free(text);
		snprintf(err, err_size, "%s: cannot read: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	fclose(f);
	if (n > CONF_MAX_FILE) {
		free(text);
		snprintf(err, err_size, "%s: larger than %d bytes; is it a config file?", path,
			CONF_MAX_FILE);
		errno = EFBIG;
		return NULL;
	}
	text[n] = '\0';
	if (memchr(text, '\0', n) != NULL) {
		free(text);
		snprintf(err, err_size, "%s: contains NUL bytes; is it a config file?", path);
		errno = EINVAL;
		return NULL;
	}
	c = th_conf_parse(text, path, err, err_size);
	free(text);
	return c;
}

static struct entry *
find(const struct th_conf *c, const char *section, const char *key)
{
	unsigned i;

	for (i = 0; i < c->count; i++)
		if (strcmp(c->e[i].section, section) == 0 && strcmp(c->e[i].key, key) == 0)
			return (struct entry *)&c->e[i];
	return NULL;
}

/*
 * find() for a getter: the section is one the program reads, whether or not
 * the key is there, so th_conf_check_unused() does not call it unknown.
 */
static struct entry *
lookup(const struct th_conf *c, const char *section, const char *key)
{
	struct header *h;

	if (c == NULL)
		return NULL;
	h = header_of(c, section);
	if (h != NULL)
		h->is_asked = true;
	if (section[0] == '\0') /* bookkeeping, as is_asked and is_used are */
		((struct th_conf *)c)->is_top_asked = true;
	return find(c, section, key);
}

const char *
th_conf_get(const struct th_conf *c, const char *section, const char *key)
{
	struct entry *e = lookup(c, section, key);

	if (e == NULL)
		return NULL;
	e->is_used = true;
	return e->value;
}

int
th_conf_parse_u64(const char *s, uint64_t min, uint64_t max, bool is_hex_ok, uint64_t *out)
{
	bool is_hex = is_hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	unsigned long long v;
	char *end;

	/* strtoull also takes a sign ("-1" as 2^64 - 1, "+5") and white space before the
	 * digits: a whole number starts with a digit. A leading zero is not octal. */
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, is_hex ? 16 : 10);
	if (errno != 0 || end == s || *end != '\0' || (is_hex && !isxdigit((unsigned char)s[2])) ||
		v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int
th_conf_parse_double(const char *s, double min, double max, double *out)
{
	const char *p = s[0] == '-' ? s + 1 : s;
	char *end;
	double v;

	/* strtod also reads "+5", white space, hex ("0x1p4"), "inf" and "nan": numbers are
	 * decimal, with a minus sign at most ("-0.5", "1e-3", "1e+3"), and that only where the
	 * range has negative numbers ("-0" is no way to write 0). */
	if (p != s && !(min < 0))
		return -EINVAL;
	if (*p == '.')
		p++;
	if (!isdigit((unsigned char)*p) || strpbrk(s, "xX") != NULL)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min) || !(v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

int
th_conf_get_u64(const struct th_conf *c, const char *section, const char *key, uint64_t min,
	uint64_t max, uint64_t *out, char *err, size_t err_size)
{
	struct entry *e = lookup(c, section, key);
	uint64_t v;
	char shown[64];

	if (e == NULL)
		return 0;
	e->is_used = true;
	if (th_conf_parse_u64(e->value, min, max, true, &v) != 0) {
		snprintf(err, err_size,
			"%s:%u: %s%s%s = '%s': expected a whole number from %" PRIu64
			" to %" PRIu64,
			c->name, e->line, section, section[0] ? "." : "", key,
			th_conf_printable(e->value, shown, sizeof(shown)), min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Read a number in [min, max] into *out; NULL entry: absent, 0. @p want names it in errors. */
static int
get_number(const struct th_conf *c, struct entry *e, const char *section, const char *key,
	double min, double max, const char *want, double *out, char *err, size_t err_size)
{
	double v;
	char shown[64];

	if (e == NULL)
		return 0;
	e->is_used = true;
	if (th_conf_parse_double(e->value, min, max, &v) != 0) {
		snprintf(err, err_size, "%s:%u: %s%s%s = '%s': expected %s", c->name, e->line,
			section, section[0] ? "." : "", key,
			th_conf_printable(e->value, shown, sizeof(shown)), want);
		return -EINVAL;
	}
	*out = v;
	return 1;
}

int
th_conf_get_seconds(const struct th_conf *c, const char *section, const char *key, uint64_t *out_ns,
	char *err, size_t err_size)
{
	double v;
	int rc = get_number(c, lookup(c, section, key), section, key, 0, 1e9,
		"seconds from 0 to 1e9 (e.g. 0.5, 30)", &v, err, err_size);

	if (rc > 0 && v > 0 && v < 1e-9) /* would round to 0, which means something else */
		rc = get_number(c, find(c, section, key), section, key, 1e-9, 1e9,
			"seconds from 0.000000001 (a nanosecond) to 1e9", &v, err, err_size);
	if (rc > 0)
		*out_ns = (uint64_t)(v * 1e9 + 0.5); /* 1.001 s is 1001000000 ns, not ...999 */
	return rc < 0 ? rc : 0;
}

int
th_conf_get_double(const struct th_conf *c, const char *section, const char *key, double min,
	double max, double *out, char *err, size_t err_size)
{
	char want[80];
	int rc;

	snprintf(want, sizeof(want), "a number from %g to %g", min, max);
	rc = get_number(
		c, lookup(c, section, key), section, key, min, max, want, out, err, err_size);
	return rc < 0 ? rc : 0;
}

int
th_conf_where(const struct th_conf *c, const char *section, const char *key, char *buf, size_t size)
{
	const struct entry *e = c != NULL && key != NULL ? find(c, section, key) : NULL;
	const struct header *h = c != NULL && key == NULL ? header_of(c, section) : NULL;

	if (e != NULL)
		return snprintf(buf, size, "%s:%u", c->name, e->line);
	if (h != NULL)
		return snprintf(buf, size, "%s:%u", c->name, h->line);
	return snprintf(buf, size, "%s", c != NULL ? c->name : "?");
}

const char *
th_conf_section(const struct th_conf *c, unsigned n)
{
	/* Keys before the first header come first; each header names its section once. */
	if (c == NULL)
		return NULL;
	if (c->has_top && n-- == 0)
		return "";
	return n < c->hdr_count ? c->hdr[n].name : NULL;
}

/* Edits (insert, delete, replace) from @p a to @p b, both under 64 bytes; else 99. */
static unsigned
edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	unsigned row[64], diag, up;

	if (la >= 64 || lb >= 64)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

int
th_conf_missing(const struct th_conf *c, const char *section, const char *key, const char *why,
	char *err, size_t err_size)
{
	const struct entry *near = NULL, *other = NULL;
	const struct header *hdr = c != NULL ? header_of(c, section) : NULL;
	bool has_section = hdr != NULL;
	char a[64], b[64];
	/* A typo: one edit in a short key, two from six letters on. */
	unsigned i, best = strlen(key) >= 6 ? 3 : 2;

	for (i = 0; c != NULL && i < c->count; i++) {
		const struct entry *e = &c->e[i];
		unsigned d;

		if (strcmp(e->section, section) != 0) {
			if (!e->is_used && other == NULL)
				other = e;
			continue;
		}
		has_section = true;
		d = e->is_used ? 99 : edits(e->key, key);
		if (d < best) {
			best = d;
			near = e;
		}
	}
	if (near != NULL)
		snprintf(err, err_size, "%s:%u: unknown key '%s.%s' ([%s] needs '%s')", c->name,
			near->line, section, th_conf_printable(near->key, a, sizeof(a)), section,
			key);
	else if (!has_section && other != NULL && other->section[0] == '\0')
		snprintf(err, err_size, "%s: no [%s] section (line %u is before any [section])",
			c->name, section, other->line);
	else if (!has_section && other != NULL)
		snprintf(err, err_size, "%s: no [%s] section (line %u is in [%s])", c->name,
			section, other->line, th_conf_printable(other->section, b, sizeof(b)));
	else if (!has_section && c != NULL && c->hdr_count > 0) /* headers without keys */
		snprintf(err, err_size, "%s: no [%s] section (line %u is [%s])", c->name, section,
			c->hdr[0].line, th_conf_printable(c->hdr[0].name, b, sizeof(b)));
	else if (!has_section)
		snprintf(err, err_size, "%s: no [%s] section", c != NULL ? c->name : "?", section);
	else if (hdr != NULL) /* the block that lacks it */
		snprintf(err, err_size, "%s:%u: [%s] needs '%s' %s", c->name, hdr->line, section,
			key, why);
	else
		snprintf(err, err_size, "%s: [%s] needs '%s' %s", c->name, section, key, why);
	return -EINVAL;
}

int
th_conf_check_unused(const struct th_conf *c, char *err, size_t err_size)
{
	const struct entry *e = NULL;
	const struct header *h = NULL;
	char sec[64], key[64];
	unsigned i;

	if (c == NULL)
		return 0;
	for (i = 0; i < c->count && e == NULL; i++)
		if (!c->e[i].is_used)
			e = &c->e[i];
	/* A section no getter asked about is not one of the file's, with keys or without:
	 * said once at its header rather than at each of its keys. */
	for (i = 0; i < c->hdr_count && h == NULL; i++)
		if (!c->hdr[i].is_asked)
			h = &c->hdr[i];
	/* The first in the file. */
	if (h != NULL && (e == NULL || h->line < e->line)) {
		snprintf(err, err_size, "%s:%u: unknown section [%s]", c->name, h->line,
			th_conf_printable(h->name, sec, sizeof(sec)));
		return -EINVAL;
	}
	/* Where no getter reads keys before a header, such a key is not misspelt but misplaced
	 * (a forgotten or later header): calling it unknown would send the user to the docs. */
	if (e != NULL && e->section[0] == '\0' && !c->is_top_asked) {
		snprintf(err, err_size, "%s:%u: '%s' is before any [section]", c->name, e->line,
			th_conf_printable(e->key, key, sizeof(key)));
		return -EINVAL;
	}
	if (e != NULL) {
		snprintf(err, err_size, "%s:%u: unknown key '%s%s%s'", c->name, e->line,
			th_conf_printable(e->section, sec, sizeof(sec)), e->section[0] ? "." : "",
			th_conf_printable(e->key, key, sizeof(key)));
		return -EINVAL;
	}
	return 0;
}
