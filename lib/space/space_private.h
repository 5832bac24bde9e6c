/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SPACE_PRIVATE_H
#define TH_SPACE_PRIVATE_H

#include <stddef.h>

#include "th_space.h"

/**
 * th_wl_check() that also says which feature is at fault, so workload files
 * can point at its line. @return the enum th_feat at fault, or -1 when valid.
 */
int th_wl__check_feat(const struct th_wl *wl, const struct th_limits *l, char *err,
	size_t err_size);

#endif /* TH_SPACE_PRIVATE_H */
