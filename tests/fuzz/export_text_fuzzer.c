/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What export reads as text besides traces, on arbitrary input. The first
 * byte chooses the reader, the rest is its text:
 * - 0: a time (--from, --to): one that parses is the instant written, to
 *   the second (formatted back with gmtime), never a value that wrapped;
 * - 1: an address with a prefix (--server, --client): one that parses
 *   formats back to an address that parses to the same bytes;
 * - 2: a hosts file (--hosts): loaded, it names each address of its lines
 *   by the first name given for it; refused, it says which line.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_text.h"
#include "th_export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NS 1000000000ull

static void
check_time(const char *s)
{
	uint64_t ns;
	char back[32];
	time_t t;
	struct tm tm;

	if (th_export_time_parse(s, &ns) != 0)
		return;
	t = (time_t)(ns / NS);
	if (strlen(s) > 4 && s[4] == '-') {
		/* "YYYY-MM-DD...": the same day comes back. */
		if (gmtime_r(&t, &tm) == NULL ||
			strftime(back, sizeof(back), "%Y-%m-%d", &tm) != 10 ||
			strncmp(back, s, 10) != 0)
			abort();
	} else if (strtoull(s, NULL, 10) != ns / NS) {
		abort(); /* seconds since the epoch: the same seconds */
	}
}

static void
check_net(const char *s)
{
	struct th_export_net n, again;
	char text[64];

	if (th_export_net_parse(s, &n) != 0)
		return;
	if (n.prefix_len > 128)
		abort();
	if (th_addr_format(&n.addr, text, sizeof(text)) <= 0 ||
		th_export_net_parse(text, &again) != 0 ||
		memcmp(&again.addr, &n.addr, sizeof(n.addr)) != 0)
		abort();
}

/* Line by line as a hosts file reads: the first name given for each address. */
static void
check_names(struct th_export_hosts *h, char *text, size_t lines)
{
	struct th_addr *named = malloc((lines + 1) * sizeof(*named));
	char *save_line = NULL;
	size_t count = 0;

	if (named == NULL)
		abort();
	for (char *line = strtok_r(text, "\n", &save_line); line != NULL;
		line = strtok_r(NULL, "\n", &save_line)) {
		char *save = NULL, *hash = strchr(line, '#'), *addr, *name, *zone;
		struct th_export_net n;
		const char *got;
		size_t i;

		if (hash != NULL)
			*hash = '\0';
		addr = strtok_r(line, " \t\r", &save);
		name = addr != NULL ? strtok_r(NULL, " \t\r", &save) : NULL;
		/* fe80::1%eth0 names fe80::1 */
		if (addr != NULL && (zone = strchr(addr, '%')) != NULL &&
			memchr(addr, ':', (size_t)(zone - addr)) != NULL)
			*zone = '\0';
		if (name == NULL || strchr(addr, '/') != NULL || th_export_net_parse(addr, &n) != 0)
			continue; /* not an entry: the loader refused the file */
		for (i = 0; i < count; i++)
			if (memcmp(&named[i], &n.addr, sizeof(n.addr)) == 0)
				break;
		if (i < count)
			continue;
		got = th_export_hosts_lookup(h, &n.addr);
		if (got == NULL || strcmp(got, name) != 0)
			abort();
		named[count++] = n.addr;
	}
	free(named);
}

static void
check_hosts(const char *text, size_t len)
{
	struct th_export_hosts *h = th_export_hosts_create(false);
	unsigned int line = 0;
	char path[64];
	int fd, rc;

	fd = memfd_create("hosts", MFD_CLOEXEC);
	if (h == NULL || fd < 0 || write(fd, text, len) != (ssize_t)len)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = th_export_hosts_load(h, path, &line);
	if (rc == -EINVAL && line == 0)
		abort(); /* a refusal names the line */
	if (rc != 0 && rc != -EINVAL && rc != -ENOMEM)
		abort();
	if (rc == 0 && memchr(text, '\0', len) == NULL) {
		char *copy = strdup(text);

		if (copy == NULL)
			abort();
		check_names(h, copy, len);
		free(copy);
	}
	th_export_hosts_free(h);
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size == 0)
		return 0;
	text = fuzz_text(data + 1, size - 1, 64 * 1024);
	if (text == NULL)
		return 0;
	switch (data[0] % 3) {
	case 0:
		check_time(text);
		break;
	case 1:
		check_net(text);
		break;
	default:
		check_hosts(text, size - 1);
		break;
	}
	free(text);
	return 0;
}
