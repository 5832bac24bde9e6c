/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PROBE_PRIVATE_H
#define PROBE_PRIVATE_H

/* Shared between the probe's target handling and its I/O loop. */

#include <stdarg.h>
#include <stdint.h>

#include "th_probe.h"

/* An opened target, ready for I/O. */
struct probe_target {
	int fd;                  /* opened with O_DIRECT unless buffered; -1 when closed */
	enum th_probe_kind kind; /* what the path was */
	uint64_t size;           /* bytes */
	uint32_t dio_align;      /* offset/size alignment O_DIRECT needs */
	uint32_t mem_align;      /* buffer alignment O_DIRECT needs */
	bool is_direct;          /* O_DIRECT is set on fd */
	const char *memory_fs;   /* "tmpfs" or "ramfs": its blocks are memory; else NULL */
};

/* Write a message into r->error and return -err (err > 0). */
int probe__fail(struct th_probe_result *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Open c->target for the probe: stat it, refuse what must be refused
 * (writes to a mounted or held device), create and fill the temporary file
 * for a directory. Returns 0 or -errno with r->error set.
 */
int probe__open_target(
	const struct th_probe_config *c, struct probe_target *t, struct th_probe_result *r);

/* Close the target; a temporary file disappears with its last descriptor. */
void probe__close_target(struct probe_target *t);

/*
 * Why @p dev (a block device number) must not be written: mounted, used as
 * swap, or held by another device (dm, md, ...), itself or one of its
 * partitions. Returns 0 when free, -EBUSY with the reason in @p why.
 */
int probe__check_device_free(uint64_t rdev, const char *path, char *why, size_t why_size);

#endif /* PROBE_PRIVATE_H */
