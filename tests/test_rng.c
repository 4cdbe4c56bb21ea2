/* PRNG: published reference outputs, determinism, unbiased ranges, split. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ibmcast/common.h"
#include "ibmcast/rng.h"

/* splitmix64 from state 0: the first outputs of Vigna's splitmix64.c
 * (prng.di.unimi.it), the same values java.util.SplittableRandom and the
 * xoshiro seeding code produce. */
static void test_splitmix64_seed0(void **state)
{
	static const uint64_t want[] = {
		0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull,
		0x06c45d188009454full, 0xf88bb8a8724c81ecull,
	};
	uint64_t s = 0;

	for (size_t i = 0; i < 4; i++)
		assert_int_equal(imc_rng_splitmix64(&s), want[i]);
	assert_int_equal(s, 4 * 0x9e3779b97f4a7c15ull);
}

/* splitmix64 from state 1234567: the reference values of the Rosetta Code
 * task "Pseudo-random numbers/Splitmix64". */
static void test_splitmix64_seed1234567(void **state)
{
	static const uint64_t want[] = {
		6457827717110365317ull, 3203168211198807973ull,
		9817491932198370423ull, 4593380528125082431ull,
		16408922859458223821ull,
	};
	uint64_t s = 1234567;

	for (size_t i = 0; i < 5; i++)
		assert_int_equal(imc_rng_splitmix64(&s), want[i]);
}

/* Seeding fills the state with the splitmix64 stream of the seed. */
static void test_seed_state(void **state)
{
	struct imc_rng r;

	imc_rng_seed(&r, 0);
	assert_int_equal(r.s[0], 0xe220a8397b1dcdafull);
	assert_int_equal(r.s[1], 0x6e789e6aa1b965f4ull);
	assert_int_equal(r.s[2], 0x06c45d188009454full);
	assert_int_equal(r.s[3], 0xf88bb8a8724c81ecull);
}

/* xoshiro256** from state {1, 2, 3, 4}: outputs of the reference C code
 * (prng.di.unimi.it/xoshiro256starstar.c) as checked by the rand_xoshiro
 * crate's test suite. */
static void test_xoshiro_reference(void **state)
{
	static const uint64_t want[] = {
		11520ull, 0ull, 1509978240ull, 1215971899390074240ull,
		1216172134540287360ull, 607988272756665600ull,
		16172922978634559625ull, 8476171486693032832ull,
		10595114339597558777ull, 2904607092377533576ull,
	};
	struct imc_rng r = { .s = { 1, 2, 3, 4 } };

	for (size_t i = 0; i < IMC_ARRAY_SIZE(want); i++)
		assert_int_equal(imc_rng_next(&r), want[i]);
}

static void test_same_seed_same_sequence(void **state)
{
	struct imc_rng a, b, c;
	int same_pos = 0;

	imc_rng_seed(&a, 42);
	imc_rng_seed(&b, 42);
	imc_rng_seed(&c, 43);
	for (int i = 0; i < 10000; i++) {
		uint64_t x = imc_rng_next(&a);

		assert_int_equal(x, imc_rng_next(&b));
		same_pos += x == imc_rng_next(&c);
	}
	assert_int_equal(same_pos, 0);
}

/* Seeds 0 and 1 (adjacent splitmix64 states) give unrelated streams. */
static void test_different_seeds_differ(void **state)
{
	struct imc_rng a, b;

	imc_rng_seed(&a, 0);
	imc_rng_seed(&b, 1);
	assert_memory_not_equal(a.s, b.s, sizeof(a.s));
	for (int i = 0; i < 1000; i++)
		assert_int_not_equal(imc_rng_next(&a), imc_rng_next(&b));
}

static void test_below_range(void **state)
{
	static const uint64_t ns[] = {
		1, 2, 3, 7, 10, 1000, 1ull << 32, (1ull << 32) + 1,
		(1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX,
	};
	struct imc_rng r;

	imc_rng_seed(&r, 7);
	for (size_t k = 0; k < IMC_ARRAY_SIZE(ns); k++) {
		uint64_t max = 0;

		for (int i = 0; i < 20000; i++) {
			uint64_t v = imc_rng_below(&r, ns[k]);

			assert_true(v < ns[k]);
			if (v > max)
				max = v;
		}
		/* The top value is reachable: max is n - 1 for small n and
		 * within the top 0.1% for large n. */
		if (ns[k] <= 1000)
			assert_int_equal(max, ns[k] - 1);
		else
			assert_true(max >= ns[k] - ns[k] / 1000);
	}
	assert_int_equal(imc_rng_below(&r, 0), 0);
	assert_int_equal(imc_rng_below(&r, 1), 0);
}

/* Chi-square of 100,000 draws over 10 bins, fixed seed. With 9 degrees of
 * freedom the statistic lies in [2.088, 21.666] with probability 0.98;
 * outside means skewed (or suspiciously flat) output. */
static void test_below_chi_square(void **state)
{
	enum { N = 100000, BINS = 10 };
	unsigned int count[BINS] = { 0 };
	struct imc_rng r;
	double chi = 0, expect = (double)N / BINS;

	imc_rng_seed(&r, 2024);
	for (int i = 0; i < N; i++)
		count[imc_rng_below(&r, BINS)]++;
	for (int b = 0; b < BINS; b++) {
		double d = count[b] - expect;

		chi += d * d / expect;
	}
	print_message("chi-square over %d bins: %.3f\n", BINS, chi);
	assert_true(chi > 2.088);
	assert_true(chi < 21.666);
}

/* n = 0xaaaaaaaaaaaaaaab is about 2/3 of 2^64, so each result has one or
 * two 64-bit preimages. A plain x % n puts 2/3 of the draws below n/2, and
 * a multiply-shift without rejection makes even results 2/3 likely; an
 * unbiased draw gives 1/2 for both (s.d. 0.0016 at 100,000 draws). */
static void test_below_no_bias_large_n(void **state)
{
	enum { N = 100000 };
	const uint64_t n = 0xaaaaaaaaaaaaaaabull;
	struct imc_rng r;
	int low = 0, even = 0;

	imc_rng_seed(&r, 99);
	for (int i = 0; i < N; i++) {
		uint64_t v = imc_rng_below(&r, n);

		assert_true(v < n);
		low += v < n / 2;
		even += (v & 1) == 0;
	}
	assert_true(low > N * 0.49 && low < N * 0.51);
	assert_true(even > N * 0.49 && even < N * 0.51);
}

static void test_double(void **state)
{
	struct imc_rng r = { .s = { 1, 2, 3, 4 } };
	double sum = 0, min = 1, max = 0;

	/* First output 11520 >> 11 == 5: the top 53 bits scaled by 2^-53. */
	assert_true(imc_rng_double(&r) == 5 * 0x1.0p-53);
	imc_rng_seed(&r, 5);
	for (int i = 0; i < 100000; i++) {
		double u = imc_rng_double(&r);

		assert_true(u >= 0.0 && u < 1.0);
		sum += u;
		if (u < min)
			min = u;
		if (u > max)
			max = u;
	}
	assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
	assert_true(min < 0.001 && max > 0.999);
}

static void test_chance(void **state)
{
	struct imc_rng r, ref;
	int hits = 0;

	imc_rng_seed(&r, 11);
	imc_rng_seed(&ref, 11);
	for (int i = 0; i < 1000; i++) {
		assert_false(imc_rng_chance(&r, 0.0));
		assert_false(imc_rng_chance(&r, -1.0));
		assert_true(imc_rng_chance(&r, 1.0));
		assert_true(imc_rng_chance(&r, 2.0));
	}
	/* Each call consumed exactly one output whatever p was. */
	for (int i = 0; i < 4000; i++)
		imc_rng_next(&ref);
	assert_memory_equal(r.s, ref.s, sizeof(r.s));

	for (int i = 0; i < 100000; i++)
		hits += imc_rng_chance(&r, 0.25);
	assert_true(hits > 24000 && hits < 26000);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* No value shared between two 1,000-output windows (a collision would
 * have probability about 2^-44 for independent streams). */
static void assert_disjoint(struct imc_rng *a, struct imc_rng *b)
{
	enum { N = 1000 };
	uint64_t *v = malloc(2 * N * sizeof(*v));

	assert_non_null(v);
	for (int i = 0; i < N; i++) {
		v[i] = imc_rng_next(a);
		v[N + i] = imc_rng_next(b);
	}
	qsort(v, 2 * N, sizeof(*v), cmp_u64);
	for (int i = 1; i < 2 * N; i++)
		assert_int_not_equal(v[i - 1], v[i]);
	free(v);
}

static void test_split(void **state)
{
	struct imc_rng parent, again, c1, again_c1, c2, g1, want;
	uint64_t first;

	/* The child is seeded from the parent's next output. */
	imc_rng_seed(&want, 1);
	first = imc_rng_next(&want);
	imc_rng_seed(&want, first);

	imc_rng_seed(&parent, 1);
	imc_rng_split(&parent, &c1);
	assert_memory_equal(c1.s, want.s, sizeof(c1.s));

	/* Deterministic: the same parent seed gives the same child and
	 * leaves the parent in the same state. */
	imc_rng_seed(&again, 1);
	imc_rng_split(&again, &again_c1);
	assert_memory_equal(c1.s, again_c1.s, sizeof(c1.s));
	assert_memory_equal(parent.s, again.s, sizeof(parent.s));

	imc_rng_split(&parent, &c2);
	imc_rng_split(&c1, &g1);
	assert_memory_not_equal(c1.s, parent.s, sizeof(c1.s));
	assert_memory_not_equal(c1.s, c2.s, sizeof(c1.s));

	assert_disjoint(&parent, &c1);
	assert_disjoint(&c1, &c2);
	assert_disjoint(&c2, &g1);
	assert_disjoint(&parent, &g1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splitmix64_seed0),
		cmocka_unit_test(test_splitmix64_seed1234567),
		cmocka_unit_test(test_seed_state),
		cmocka_unit_test(test_xoshiro_reference),
		cmocka_unit_test(test_same_seed_same_sequence),
		cmocka_unit_test(test_different_seeds_differ),
		cmocka_unit_test(test_below_range),
		cmocka_unit_test(test_below_chi_square),
		cmocka_unit_test(test_below_no_bias_large_n),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_chance),
		cmocka_unit_test(test_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
