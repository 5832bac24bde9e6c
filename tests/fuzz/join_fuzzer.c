/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The handle-to-name join on arbitrary name records and lookups: a table
 * asked again and again (keeping each file's path between lookups) must
 * answer every lookup as a fresh table asked once does, with and without
 * pseudonyms, whatever the records say (loops, overlapping names, names
 * that end, a budget that refuses some).
 *
 * The listing (export --names) of the same records: in order of their
 * start, and each name's path the one a lookup of its handle at its start
 * gets where no other name of the handle starts then, pseudonym and all.
 *
 * Input: one byte choosing the budget, then six-byte items. An item with
 * its first byte even is a name record; odd, a lookup. Names are all added
 * before the lookups are made, as the export's names pass does.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export_private.h"
#include "th_export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAMES_MAX 24
#define LOOKUPS_MAX 12
#define S 1000000000ull

struct lookup {
	uint8_t fh0;
	uint64_t t;
	bool is_anon;
};

static void
handle(uint8_t *fh, uint8_t fh0)
{
	fh[0] = fh0, fh[1] = 0xbe, fh[2] = 0xef, fh[3] = 0x01;
}

static struct th_export_names *
table(uint64_t budget, const struct th_trace_name *names, unsigned int count, bool is_listing)
{
	struct th_export_names *n = is_listing ? th_export__names_create_listing(budget)
					       : th_export_names_create(budget);

	if (n == NULL)
		abort();
	for (unsigned int i = 0; i < count; i++) {
		int rc = th_export_names_add(n, &names[i]);

		if (rc != 0 && rc != -ENOSPC)
			abort();
	}
	return n;
}

/* The listing of @p names in order, each path as a lookup at its start makes it. */
static void
check_listing(uint64_t budget, const struct th_trace_name *names, unsigned int nn,
	const struct th_export_anon *anon, const struct th_addr *server)
{
	struct th_export_names *list = table(budget, names, nn, true);
	struct th_export_names *fresh = table(budget, names, nn, true);
	static struct th_trace_name got[NAMES_MAX];
	long count = th_export__names_sort(list);

	if (count < 0 || count > nn)
		abort();
	for (long i = 0; i < count; i++) {
		char a[1024], b[1024], aa[1024], ab[1024];
		size_t la, lb, aal = 0, abl = 0;
		uint32_t mb;
		bool is_tie = false;

		th_export__names_listed(list, (size_t)i, &got[i]);
		if (i > 0 && got[i].from_ns < got[i - 1].from_ns)
			abort();
		for (long j = 0; j < count; j++) {
			struct th_trace_name other;

			th_export__names_listed(list, (size_t)j, &other);
			is_tie |= j != i && other.from_ns == got[i].from_ns &&
				  other.fh[0] == got[i].fh[0];
		}
		la = th_export__names_listed_path(list, (i & 1) != 0 ? anon : NULL, (size_t)i, a,
			sizeof(a), aa, sizeof(aa), &aal);
		if (strlen(a) != la || la == 0 || ((i & 1) != 0 && strlen(aa) != aal))
			abort();
		if (is_tie)
			continue;
		if ((i & 1) != 0) {
			lb = th_export__names_path_anon(fresh, anon, server, got[i].fh,
				got[i].fh_len, got[i].from_ns, b, sizeof(b), ab, sizeof(ab), &abl,
				&mb);
			if (aal != abl || memcmp(aa, ab, aal) != 0)
				abort();
		} else {
			lb = th_export_names_path(fresh, server, got[i].fh, got[i].fh_len,
				got[i].from_ns, b, sizeof(b), &mb);
		}
		if (la != lb || strcmp(a, b) != 0 || mb != got[i].mode)
			abort();
	}
	th_export_names_free(list);
	th_export_names_free(fresh);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t key[32] = "join fuzzer key, thirty-two byt";
	static struct th_export_anon *anon;
	static struct th_trace_name names[NAMES_MAX];
	struct lookup look[LOOKUPS_MAX];
	struct th_export_names *kept;
	struct th_addr server;
	unsigned int nn = 0, nl = 0;
	uint64_t budget;

	if (size < 1)
		return 0;
	if (anon == NULL && (anon = th_export_anon_create(key, sizeof(key), false)) == NULL)
		abort();
	/* 0: no limit worth speaking of; else from 256 bytes (nothing fits) to 8 MiB. */
	budget = data[0] == 0 ? 1ull << 40 : 256ull << (data[0] % 16);
	memset(&server, 0, sizeof(server));
	server.b[10] = server.b[11] = 0xff, server.b[12] = 10, server.b[15] = 1;
	for (size_t at = 1; at + 6 <= size; at += 6) {
		const uint8_t *p = data + at;

		if ((p[0] & 1) == 0 && nn < NAMES_MAX) {
			struct th_trace_name *r = &names[nn++];

			memset(r, 0, sizeof(*r));
			r->server = server;
			r->fh_len = 4;
			handle(r->fh, p[1] % 8);
			if (p[2] % 9 != 0) {
				r->dir_fh_len = 4;
				handle(r->dir_fh, (uint8_t)(p[2] % 9 - 1));
			}
			r->from_ns = (uint64_t)p[3] * S;
			r->to_ns = p[4] == 0 ? 0 : r->from_ns + (uint64_t)p[4] * S;
			/* A mount path now and then, so both joining rules are met. */
			r->name_len = (uint16_t)(p[5] % 5 == 0 ? 4 : 2);
			memcpy(r->name, p[5] % 5 == 0 ? "/mnt" : "ab", r->name_len);
			r->name[1] = (char)(r->name[1] + p[5] % 3);
			r->mode = p[0] & 2 ? 0100600 | (uint32_t)p[3] : 0;
		} else if ((p[0] & 1) == 1 && nl < LOOKUPS_MAX) {
			look[nl].fh0 = p[1] % 8;
			look[nl].t = ((uint64_t)p[2] + (p[3] & 1)) * S;
			look[nl].is_anon = (p[4] & 1) != 0;
			nl++;
		}
	}
	kept = table(budget, names, nn, false);
	for (unsigned int i = 0; i < nl; i++) {
		struct th_export_names *fresh = table(budget, names, nn, false);
		char a[1024], b[1024], aa[1024], ab[1024];
		size_t la, lb, aal = 0, abl = 0;
		uint32_t ma, mb;
		uint8_t fh[4];

		handle(fh, look[i].fh0);
		if (look[i].is_anon) {
			la = th_export__names_path_anon(kept, anon, &server, fh, sizeof(fh),
				look[i].t, a, sizeof(a), aa, sizeof(aa), &aal, &ma);
			lb = th_export__names_path_anon(fresh, anon, &server, fh, sizeof(fh),
				look[i].t, b, sizeof(b), ab, sizeof(ab), &abl, &mb);
			if (aal != abl || memcmp(aa, ab, aal) != 0 || strlen(aa) != aal)
				abort();
		} else {
			la = th_export_names_path(
				kept, &server, fh, sizeof(fh), look[i].t, a, sizeof(a), &ma);
			lb = th_export_names_path(
				fresh, &server, fh, sizeof(fh), look[i].t, b, sizeof(b), &mb);
		}
		if (la != lb || strcmp(a, b) != 0 || strlen(a) != la || ma != mb)
			abort();
		th_export_names_free(fresh);
	}
	th_export_names_free(kept);
	check_listing(budget, names, nn, anon, &server);
	return 0;
}
