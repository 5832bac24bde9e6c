/* SPDX-License-Identifier: BSD-3-Clause */

/* Command-line values of export: formats, address prefixes, times. */

#include "th_export.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const format_names[] = {
#define TH_EXPORT_X(name, text) text,
	TH_EXPORT_FORMAT_LIST(TH_EXPORT_X)
#undef TH_EXPORT_X
};

int
th_export_format_parse(const char *s)
{
	for (int i = 0; i < TH_EXPORT_FORMAT_COUNT; i++)
		if (strcmp(s, format_names[i]) == 0)
			return i;
	if (strcmp(s, "jsonl") == 0)
		return TH_EXPORT_FORMAT_JSON;
	return -EINVAL;
}

const char *
th_export_format_name(enum th_export_format f)
{
	return (unsigned)f < TH_EXPORT_FORMAT_COUNT ? format_names[f] : "?";
}

int
th_export_net_parse(const char *s, struct th_export_net *out)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);
	unsigned long bits = 0;
	bool is_v4;
	int family;

	if (len == 0 || len >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, len);
	addr[len] = '\0';
	/* The text's family, not the address's: "::ffff:10.0.0.0/104" is an IPv6 prefix. */
	family = th_addr_parse(addr, &out->addr);
	if (family < 0)
		return -EINVAL;
	is_v4 = family == 4;
	if (slash != NULL) {
		char *end;

		if (!isdigit((unsigned char)slash[1]))
			return -EINVAL;
		errno = 0;
		bits = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || errno != 0 || bits > (is_v4 ? 32u : 128u))
			return -EINVAL;
	} else {
		bits = is_v4 ? 32 : 128;
	}
	/* Prefixes are compared on the 128-bit form; an IPv4 prefix also covers the mapping. */
	out->prefix_len = (unsigned int)bits + (is_v4 ? 96u : 0u);
	return 0;
}

/*
 * Times are nanoseconds in 64 bits: the last whole second that fits is
 * 2554-07-21T23:34:32Z. A later one is refused rather than wrapped into the
 * past, which would filter out what the user meant to keep.
 */
#define TIME_MAX_S (UINT64_MAX / 1000000000u - 1)

/* Up to 9 fraction digits after the '.' at *p, as nanoseconds. */
static bool
fraction(const char **p, uint64_t *ns)
{
	uint64_t scale = 100000000;
	const char *s = *p;

	*ns = 0;
	if (*s != '.')
		return true;
	s++;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		*ns += (uint64_t)(*s - '0') * scale;
		scale /= 10;
	}
	*p = s;
	return true;
}

static bool
digits(const char **p, unsigned int n, int *v)
{
	*v = 0;
	for (unsigned int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char)**p))
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

int
th_export_time_parse(const char *s, uint64_t *ns)
{
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, sec = 0;
	uint64_t frac = 0;
	time_t t;
	const char *p = s;

	if (*s == '\0')
		return -EINVAL;
	/* Seconds since the epoch: only digits (and a fraction), at most 11 of them (year 5138). */
	if (strspn(s, "0123456789") == strcspn(s, ".") && strspn(s, "0123456789") <= 11) {
		uint64_t secs = 0;

		for (; isdigit((unsigned char)*p); p++)
			secs = secs * 10 + (uint64_t)(*p - '0');
		if (p == s || !fraction(&p, &frac) || *p != '\0' || secs > TIME_MAX_S)
			return -EINVAL;
		*ns = secs * 1000000000u + frac;
		return 0;
	}
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
		!digits(&p, 2, &d))
		return -EINVAL;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
			return -EINVAL;
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &sec) || !fraction(&p, &frac))
				return -EINVAL;
		}
	}
	if (*p == 'Z')
		p++;
	if (*p != '\0' || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
		sec > 60)
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	/* timegm normalises 2024-02-31 to March 2: a day the month does not have is an error. */
	if (t < 0 || tm.tm_mday != d || (uint64_t)t > TIME_MAX_S)
		return -EINVAL;
	*ns = (uint64_t)t * 1000000000u + frac;
	return 0;
}
