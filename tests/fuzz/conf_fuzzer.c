/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The INI parser on arbitrary text, against a second reading of the lines
 * made here: a parse that fails names the file and a line; a text with a
 * section header that repeats or has no name fails; one that succeeds
 * holds exactly the keys the lines set, each with its trimmed value, finds
 * each one where it was set, lists "" (keys before any header) and then
 * every header's section in file order, calls the first header whose
 * section no getter asked about unknown, and every typed getter either
 * reads a value or says where and why it did not.
 */

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "th_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.ini"
#define KEYS_MAX 64

struct key {
	char section[256];
	char key[256];
	char value[512];
	unsigned line;
};

/* The headers of the text scanned last, and whether keys come before the first. */
static struct {
	char name[256];
	unsigned line;
	bool has_keys;
} headers[KEYS_MAX];
static unsigned n_headers;
static bool has_top;

/* [from, to) without white space at either end, as a string in @p out. */
static bool
trimmed(const char *from, const char *to, char *out, size_t size)
{
	while (from < to && isspace((unsigned char)*from))
		from++;
	while (to > from && isspace((unsigned char)to[-1]))
		to--;
	if ((size_t)(to - from) >= size)
		return false;
	memcpy(out, from, (size_t)(to - from));
	out[to - from] = '\0';
	return true;
}

/* What scan() says of a text whose parse must fail: a header with no name or a repeated one. */
#define MUST_REFUSE (-2)

/*
 * The key lines of @p text, or -1 when the text is beyond this check (a line
 * over 1 KiB, more than KEYS_MAX keys or headers, a header without its ']'),
 * or MUST_REFUSE.
 */
static int
scan(const char *text, struct key *k)
{
	char section[256] = "", s[1024];
	unsigned line = 0;
	int n = 0;

	n_headers = 0;
	has_top = false;
	if (strncmp(text, "\xef\xbb\xbf", 3) == 0) /* a byte-order mark, skipped */
		text += 3;
	for (const char *p = text;; p++) {
		const char *end = strchr(p, '\n'), *eq;

		if (end == NULL)
			end = p + strlen(p);
		line++;
		if (!trimmed(p, end, s, sizeof(s)))
			return -1;
		if (s[0] == '[') {
			char *close = strchr(s, ']');

			if (close == NULL || !trimmed(s + 1, close, section, sizeof(section)) ||
				n_headers == KEYS_MAX)
				return -1;
			if (section[0] == '\0')
				return MUST_REFUSE;
			for (unsigned i = 0; i < n_headers; i++)
				if (strcmp(headers[i].name, section) == 0)
					return MUST_REFUSE;
			memcpy(headers[n_headers].name, section, sizeof(section));
			headers[n_headers].line = line;
			headers[n_headers++].has_keys = false;
		} else if (s[0] != '\0' && s[0] != '#' && s[0] != ';' &&
			   (eq = memchr(p, '=', (size_t)(end - p))) != NULL) {
			if (n == KEYS_MAX || !trimmed(p, eq, k[n].key, sizeof(k[n].key)) ||
				!trimmed(eq + 1, end, k[n].value, sizeof(k[n].value)))
				return -1;
			memcpy(k[n].section, section, sizeof(section));
			k[n].line = line;
			n++;
			if (n_headers == 0)
				has_top = true;
			else
				headers[n_headers - 1].has_keys = true;
		}
		if (*end == '\0')
			return n;
		p = end;
	}
}

static void
check_error(const char *err)
{
	unsigned line;
	char colon;

	/* "fuzz.ini:LINE: ..." */
	if (strncmp(err, NAME ":", sizeof(NAME)) != 0 ||
		sscanf(err + sizeof(NAME), "%u%c", &line, &colon) != 2 || colon != ':' || line == 0)
		abort();
}

static void
check_getters(struct th_conf *c, const struct key *k)
{
	char err[1024], where[1024], want[1024];
	uint64_t u = 0;
	double d = 0;

	snprintf(want, sizeof(want), NAME ":%u", k->line);
	th_conf_where(c, k->section, k->key, where, sizeof(where));
	if (strcmp(where, want) != 0)
		abort();
	err[0] = '\0';
	if (th_conf_get_u64(c, k->section, k->key, 1, UINT64_MAX - 1, &u, err, sizeof(err)) != 0)
		check_error(err);
	else if (u == 0 || u == UINT64_MAX)
		abort();
	err[0] = '\0';
	if (th_conf_get_seconds(c, k->section, k->key, &u, err, sizeof(err)) != 0)
		check_error(err);
	else if (u > 1000000000ull * 1000000000ull)
		abort();
	err[0] = '\0';
	if (th_conf_get_double(c, k->section, k->key, -1, 1, &d, err, sizeof(err)) != 0)
		check_error(err);
	else if (!(d >= -1 && d <= 1))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct key keys[KEYS_MAX];
	char *text, err[1024];
	struct th_conf *c;
	int n;

	text = fuzz_text(data, size, 16 * 1024);
	if (text == NULL)
		return 0;
	err[0] = '\0';
	c = th_conf_parse(text, NAME, err, sizeof(err));
	n = scan(text, keys);
	if (c == NULL) {
		check_error(err);
	} else if (n == MUST_REFUSE) {
		abort(); /* a repeated header or one without a name was taken */
	} else if (n >= 0) {
		unsigned top = has_top ? 1 : 0;
		const char *s;

		/* "" first when keys come before any header, then each header, in order. */
		if (has_top && ((s = th_conf_section(c, 0)) == NULL || s[0] != '\0'))
			abort();
		for (unsigned i = 0; i < n_headers; i++)
			if ((s = th_conf_section(c, top + i)) == NULL ||
				strcmp(s, headers[i].name) != 0)
				abort();
		if (th_conf_section(c, top + n_headers) != NULL)
			abort();
		for (int i = 0; i < n; i++) {
			const char *v = th_conf_get(c, keys[i].section, keys[i].key);

			if (v == NULL || strcmp(v, keys[i].value) != 0)
				abort();
			check_getters(c, &keys[i]);
		}
		/* Every key was asked for: what is left is a header without keys, at its line. */
		for (unsigned i = 0; i < n_headers; i++) {
			char want[64];

			if (headers[i].has_keys)
				continue;
			snprintf(
				want, sizeof(want), NAME ":%u: unknown section [", headers[i].line);
			if (th_conf_check_unused(c, err, sizeof(err)) == 0 ||
				strncmp(err, want, strlen(want)) != 0)
				abort();
			(void)th_conf_get(c, headers[i].name, "absent");
		}
		if (th_conf_check_unused(c, err, sizeof(err)) != 0)
			abort();
		if (th_conf_get(c, "no such section", "no such key") != NULL)
			abort();
	}
	th_conf_free(c);
	free(text);
	return 0;
}
