/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Replay driver for fuzz targets when libFuzzer is not available (gcc builds).
 *
 *     <name>_fuzzer [-runs=N] [-seed=S] PATH...
 *
 * Every file under each PATH (a file or a directory, not recursive) is fed to
 * LLVMFuzzerTestOneInput as it is, then N mutated copies are fed in turn:
 * bit flips, byte overwrites with boundary values, truncation, duplication of
 * a slice. Mutations are seeded, so a crash reproduces with the same seed.
 * This is a smoke run, not coverage-guided fuzzing: use -Dfuzzing=true with
 * clang for the real thing.
 */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (256 * 1024)
#define MAX_FILES 4096

struct input {
	uint8_t *data;
	size_t size;
};

static struct input inputs[MAX_FILES];
static unsigned int n_inputs;
static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* xorshift64*: enough for picking mutations. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int
load_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct input *in;

	if (f == NULL) {
		fprintf(stderr, "fuzz: cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (n_inputs == MAX_FILES) {
		fclose(f);
		return 0;
	}
	in = &inputs[n_inputs];
	in->data = malloc(FUZZ_MAX_INPUT);
	if (in->data == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	in->size = fread(in->data, 1, FUZZ_MAX_INPUT, f);
	fclose(f);
	n_inputs++;
	return 0;
}

static int
load_path(const char *path)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	char sub[4096];
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return load_file(path);
	d = opendir(path);
	if (d == NULL)
		return -errno;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode))
			rc = load_file(sub);
	}
	closedir(d);
	return rc;
}

static size_t
mutate(uint8_t *buf, size_t size, size_t cap)
{
	static const uint8_t boundary[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x10};
	unsigned int i, n = 1 + rng() % 4;

	for (i = 0; i < n; i++) {
		switch (rng() % 5) {
		case 0: /* flip a bit */
			if (size > 0)
				buf[rng() % size] ^= (uint8_t)(1u << (rng() % 8));
			break;
		case 1: /* boundary byte */
			if (size > 0)
				buf[rng() % size] = boundary[rng() % sizeof(boundary)];
			break;
		case 2: /* truncate */
			if (size > 0)
				size = rng() % size;
			break;
		case 3: /* 32-bit big-endian boundary value (XDR lengths) */
			if (size >= 4) {
				size_t at = (rng() % (size / 4)) * 4;
				uint32_t v = (rng() & 1) ? 0xffffffffu : (uint32_t)(rng() % 2048);

				buf[at] = (uint8_t)(v >> 24);
				buf[at + 1] = (uint8_t)(v >> 16);
				buf[at + 2] = (uint8_t)(v >> 8);
				buf[at + 3] = (uint8_t)v;
			}
			break;
		default: /* duplicate a slice at the end */
			if (size > 0 && size < cap) {
				size_t from = rng() % size;
				size_t len = 1 + rng() % (size - from);

				if (len > cap - size)
					len = cap - size;
				memcpy(buf + size, buf + from, len);
				size += len;
			}
			break;
		}
	}
	return size;
}

int
main(int argc, char **argv)
{
	unsigned long runs = 0, r;
	uint64_t seed = 0x7ace4011d;
	uint8_t *buf;
	int i;

	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-runs=", 6) == 0)
			runs = strtoul(argv[i] + 6, NULL, 10);
		else if (strncmp(argv[i], "-seed=", 6) == 0)
			seed = strtoull(argv[i] + 6, NULL, 0);
		else if (argv[i][0] == '-')
			continue; /* libFuzzer flags that mean nothing here */
		else if (load_path(argv[i]) != 0)
			return 1;
	}
	if (n_inputs == 0) {
		fprintf(stderr, "fuzz: no inputs (give corpus files or directories)\n");
		return 1;
	}
	rng_state = seed ? seed : 1;
	buf = malloc(FUZZ_MAX_INPUT);
	if (buf == NULL)
		return 1;

	for (r = 0; r < n_inputs; r++) {
		/* A fresh copy so an input that reads past its end shows under ASan. */
		uint8_t *copy = malloc(inputs[r].size ? inputs[r].size : 1);

		memcpy(copy, inputs[r].data, inputs[r].size);
		LLVMFuzzerTestOneInput(copy, inputs[r].size);
		free(copy);
	}
	for (r = 0; r < runs; r++) {
		const struct input *in = &inputs[rng() % n_inputs];
		size_t size;
		uint8_t *copy;

		memcpy(buf, in->data, in->size);
		size = mutate(buf, in->size, FUZZ_MAX_INPUT);
		copy = malloc(size ? size : 1);
		memcpy(copy, buf, size);
		LLVMFuzzerTestOneInput(copy, size);
		free(copy);
	}
	printf("fuzz: %u corpus inputs, %lu mutations, seed 0x%llx: no crash\n", n_inputs, runs,
		(unsigned long long)seed);
	free(buf);
	for (r = 0; r < n_inputs; r++)
		free(inputs[r].data);
	return 0;
}
