/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * LD_PRELOAD shim for the export tests: closing a file whose name ends in
 * $CLOSE_EIO_SUFFIX closes it and then fails with EIO, as close() does on NFS
 * when a write it delayed fails, or over a quota. Both close() and fclose()
 * (glibc's fclose closes without calling close()) are wrapped.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int close(int fd);
int fclose(FILE *f);

/* Whether descriptor @p fd is a file whose name ends in $CLOSE_EIO_SUFFIX. */
static bool
is_failing(int fd)
{
	const char *suffix = getenv("CLOSE_EIO_SUFFIX");
	char link[64], to[4096];
	ssize_t n;
	size_t m;

	if (fd < 0 || suffix == NULL || suffix[0] == '\0')
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, to, sizeof(to) - 1);
	if (n <= 0)
		return false;
	to[n] = '\0';
	m = strlen(suffix);
	return (size_t)n >= m && strcmp(to + n - m, suffix) == 0;
}

int
close(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "close");
	bool is_fail = is_failing(fd);
	int rc = real(fd);

	if (rc == 0 && is_fail) {
		errno = EIO;
		return -1;
	}
	return rc;
}

int
fclose(FILE *f)
{
	int (*real)(FILE *) = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
	bool is_fail = is_failing(fileno(f));
	int rc = real(f);

	if (rc == 0 && is_fail) {
		errno = EIO;
		return EOF;
	}
	return rc;
}
