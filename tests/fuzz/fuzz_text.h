/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FUZZ_TEXT_H
#define FUZZ_TEXT_H

/* Fuzz input as a NUL-terminated string for the text parsers. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/** A malloc'd copy of @p data with a NUL after it; NULL when over @p max or out of memory. */
static inline char *
fuzz_text(const uint8_t *data, size_t size, size_t max)
{
	char *text = size <= max ? malloc(size + 1) : NULL;

	if (text != NULL) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif /* FUZZ_TEXT_H */
