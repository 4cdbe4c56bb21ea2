/* The seed selection shared by the sweep tests: one seed (IMC_SEED,
 * --seed N) or a range (IMC_SEED_FIRST / --first N, IMC_SEEDS /
 * --seeds N), numbers in any base strtoull accepts. Each sweep adds its
 * own options around these. */
#ifndef IMC_TESTS_SWEEP_SEEDS_H
#define IMC_TESTS_SWEEP_SEEDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sweep_seeds {
	uint64_t seed;  /* the one seed, when one */
	uint64_t first; /* else the range first .. first + count - 1 */
	uint64_t count;
	bool one;
};

/* s is a whole number; an empty or partly numeric string is not. */
static inline bool sweep_num(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s)
		return false;
	*out = strtoull(s, &end, 0);
	return *end == '\0';
}

/* Reads IMC_SEED, IMC_SEED_FIRST and IMC_SEEDS; false on a bad value. */
static inline bool sweep_seeds_env(struct sweep_seeds *s)
{
	const char *e;

	if ((e = getenv("IMC_SEED")) && *e) {
		if (!sweep_num(e, &s->seed))
			return false;
		s->one = true;
	}
	if ((e = getenv("IMC_SEED_FIRST")) && *e && !sweep_num(e, &s->first))
		return false;
	if ((e = getenv("IMC_SEEDS")) && *e && !sweep_num(e, &s->count))
		return false;
	return true;
}

/* Takes --seed N, --first N or --seeds N at argv[*i], advancing *i past
 * the value: 1 if taken, 0 if argv[*i] is none of them, -1 on a bad or
 * missing value. */
static inline int sweep_seeds_arg(struct sweep_seeds *s, int argc,
				  char **argv, int *i)
{
	uint64_t *to;

	if (!strcmp(argv[*i], "--seed"))
		to = &s->seed;
	else if (!strcmp(argv[*i], "--first"))
		to = &s->first;
	else if (!strcmp(argv[*i], "--seeds"))
		to = &s->count;
	else
		return 0;
	if (*i + 1 >= argc || !sweep_num(argv[++*i], to))
		return -1;
	if (to == &s->seed)
		s->one = true;
	return 1;
}

#endif
