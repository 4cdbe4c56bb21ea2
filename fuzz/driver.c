/* Replay driver for fuzz targets built without libFuzzer.
 *
 * Usage: fuzz_NAME [CORPUS_DIR] [ITERATIONS] [SEED]
 * Runs every file of CORPUS_DIR, then ITERATIONS inputs made by truncating,
 * bit-flipping and splicing those files (or random bytes when there are
 * none), from a fixed seed so that a failure replays. Under the sanitizer
 * build this catches out-of-bounds reads the same way libFuzzer would.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXLEN 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	uint8_t *data;
	size_t len;
};

static uint64_t rng_state;

static uint64_t next(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int load(const char *dir, struct input **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		char path[4096];
		FILE *f;
		long len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		if (len < 0 || len > MAXLEN) {
			fclose(f);
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = realloc(*out, cap * sizeof(**out));
			if (!*out)
				abort();
		}
		(*out)[*n].data = malloc((size_t)len + 1);
		(*out)[*n].len = fread((*out)[*n].data, 1, (size_t)len, f);
		fclose(f);
		(*n)++;
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "";
	long iters = argc > 2 ? strtol(argv[2], NULL, 0) : 50000;
	struct input *in;
	size_t n, i;
	uint8_t buf[MAXLEN];

	rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	if (load(dir, &in, &n) < 0) {
		fprintf(stderr, "cannot read corpus %s\n", dir);
		return 1;
	}
	for (i = 0; i < n; i++) {
		/* Exact-size heap copies so that ASan sees any overread. */
		uint8_t *copy = malloc(in[i].len ? in[i].len : 1);
		memcpy(copy, in[i].data, in[i].len);
		LLVMFuzzerTestOneInput(copy, in[i].len);
		free(copy);
	}
	for (long k = 0; k < iters; k++) {
		size_t len;
		uint8_t *copy;

		if (n && next() % 4) {
			struct input *src = &in[next() % n];
			len = src->len;
			memcpy(buf, src->data, len);
			if (len && next() % 2)
				len = next() % (len + 1); /* truncate */
			for (int f = (int)(next() % 4); f >= 0 && len; f--)
				buf[next() % len] ^= (uint8_t)(1u << (next() % 8));
			if (len && next() % 8 == 0)
				buf[next() % len] = (uint8_t)next();
		} else {
			len = next() % 600;
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)next();
		}
		copy = malloc(len ? len : 1);
		memcpy(copy, buf, len);
		LLVMFuzzerTestOneInput(copy, len);
		free(copy);
	}
	printf("fuzz replay: %zu corpus inputs, %ld mutations, seed %llu: ok\n",
	       n, iters, (unsigned long long)(argc > 3 ? strtoull(argv[3], NULL, 0) : 1));
	for (i = 0; i < n; i++)
		free(in[i].data);
	free(in);
	return 0;
}
