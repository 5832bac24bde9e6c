/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Address-to-name table: filled from an /etc/hosts-style file, or on demand
 * from reverse DNS (getnameinfo), whose answers, failures included, are cached
 * so that a trace of millions of records asks once per address.
 */

#include "th_export.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "th_sat.h"

struct host_ent {
	struct th_addr addr; /**< key */
	char *name;          /**< NULL: looked up, no name */
	bool is_used;        /**< slot taken */
};

struct th_export_hosts {
	struct host_ent *e; /**< open addressing, power-of-two size */
	size_t size;        /**< slots */
	size_t used;        /**< slots taken */
	bool is_resolve;    /**< ask reverse DNS for addresses not in the table */
};

struct th_export_hosts *
th_export_hosts_create(bool is_resolve)
{
	struct th_export_hosts *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->size = 256;
	h->e = calloc(h->size, sizeof(*h->e));
	if (h->e == NULL) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	h->is_resolve = is_resolve;
	return h;
}

void
th_export_hosts_free(struct th_export_hosts *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->size; i++)
		free(h->e[i].name);
	free(h->e);
	free(h);
}

static struct host_ent *
slot(const struct th_export_hosts *h, const struct th_addr *a)
{
	size_t mask = h->size - 1, j;

	for (j = th_sat_hash(a->b, sizeof(a->b)) & mask; h->e[j].is_used; j = (j + 1) & mask)
		if (memcmp(&h->e[j].addr, a, sizeof(*a)) == 0)
			break;
	return &h->e[j];
}

static int
grow(struct th_export_hosts *h)
{
	struct th_export_hosts n = *h;

	n.size = h->size * 2;
	n.e = calloc(n.size, sizeof(*n.e));
	if (n.e == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < h->size; i++)
		if (h->e[i].is_used)
			*slot(&n, &h->e[i].addr) = h->e[i];
	free(h->e);
	*h = n;
	return 0;
}

/* Insert unless present (the first name for an address wins). name NULL: a cached miss. */
static struct host_ent *
insert(struct th_export_hosts *h, const struct th_addr *a, const char *name)
{
	struct host_ent *e;

	if ((h->used + 1) * 2 > h->size && grow(h) < 0)
		return NULL;
	e = slot(h, a);
	if (e->is_used)
		return e;
	e->name = name != NULL ? strdup(name) : NULL;
	if (name != NULL && e->name == NULL)
		return NULL;
	e->addr = *a;
	e->is_used = true;
	h->used++;
	return e;
}

static bool
parse_addr(const char *s, struct th_addr *out)
{
	char tmp[64];
	const char *pct = strchr(s, '%');

	/* fe80::1%eth0 in a hosts file: the zone does not take part in the match. Only IPv6
	 * text (a ':' before the '%') has one. */
	if (pct != NULL && (size_t)(pct - s) < sizeof(tmp) &&
		memchr(s, ':', (size_t)(pct - s)) != NULL) {
		memcpy(tmp, s, (size_t)(pct - s));
		tmp[pct - s] = '\0';
		s = tmp;
	}
	return th_addr_parse(s, out) > 0;
}

int
th_export_hosts_load(struct th_export_hosts *h, const char *path, unsigned int *line)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	unsigned int n = 0;
	int rc = 0;

	if (f == NULL)
		return -errno;
	/* Whole lines, however many aliases they list: a piece of one is not an entry. */
	for (errno = 0; getline(&buf, &cap, f) >= 0; errno = 0) {
		char *save = NULL, *addr, *name, *line_start = buf;
		char *hash_mark = strchr(buf, '#');
		struct th_addr a;

		n++;
		/* Editors on Windows start a UTF-8 file with a byte-order mark: not part of line 1
		 * (it would make its address "expected an address" though the line reads well). */
		if (n == 1 && strncmp(buf, "\xef\xbb\xbf", 3) == 0)
			line_start += 3;
		if (hash_mark != NULL)
			*hash_mark = '\0';
		addr = strtok_r(line_start, " \t\r\n", &save);
		if (addr == NULL)
			continue;
		name = strtok_r(NULL, " \t\r\n", &save);
		if (!parse_addr(addr, &a) || name == NULL) {
			if (line != NULL)
				*line = n;
			rc = -EINVAL;
			break;
		}
		if (insert(h, &a, name) == NULL) {
			rc = -ENOMEM;
			break;
		}
	}
	/* getline() stops at the end of the file, out of memory, or on a read error. */
	if (rc == 0 && !feof(f))
		rc = errno != 0 ? -errno : -EIO; /* EISDIR for a directory, ENOMEM, EIO */
	free(buf);
	fclose(f);
	return rc;
}

static const char *
resolve(struct th_export_hosts *h, const struct th_addr *a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char name[NI_MAXHOST];
	struct host_ent *e;

	memset(&ss, 0, sizeof(ss));
	if (th_addr_is_v4(a)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, a->b + 12, 4);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, a->b, 16);
		len = sizeof(*sin6);
	}
	/* NI_NAMEREQD: no answer means the number is printed, not getnameinfo's copy of it. */
	if (getnameinfo((struct sockaddr *)&ss, len, name, sizeof(name), NULL, 0, NI_NAMEREQD) != 0)
		name[0] = '\0';
	e = insert(h, a, name[0] != '\0' ? name : NULL);
	return e != NULL ? e->name : NULL;
}

const char *
th_export_hosts_lookup(struct th_export_hosts *h, const struct th_addr *a)
{
	const struct host_ent *e = slot(h, a);

	if (e->is_used)
		return e->name;
	return h->is_resolve ? resolve(h, a) : NULL;
}
