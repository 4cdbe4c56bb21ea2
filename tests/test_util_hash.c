/* util/hash.h: lookups after 100k inserts and removals, doubling and
 * halving, cursor walks that see every entry once, teardown by take. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/mix.h"

struct ent {
	struct imc_hnode node;
	uint64_t key;
	int in;
};

#define N 100000

static bool ent_eq(const struct imc_hnode *n, const void *key)
{
	return imc_container_of(n, struct ent, node)->key ==
	       *(const uint64_t *)key;
}

static uint64_t hash_of(uint64_t key)
{
	return imc_mix2(key, 0, 0x1234);
}

static struct ent *find(const struct imc_htab *t, uint64_t key)
{
	struct imc_hnode *n = imc_htab_find(t, hash_of(key), ent_eq, &key);

	return n ? imc_container_of(n, struct ent, node) : NULL;
}

static void test_insert_find_remove_100k(void **state)
{
	struct imc_htab t;
	struct ent *e = calloc(N, sizeof(*e));

	assert_non_null(e);
	assert_int_equal(imc_htab_init(&t, 0), 0);
	assert_int_equal(t.mask + 1, 16);
	for (size_t i = 0; i < N; i++) {
		e[i].key = i * 7919 + 3;
		imc_htab_insert(&t, &e[i].node, hash_of(e[i].key));
		/* load at most 1 after every insert */
		assert_true(imc_htab_count(&t) <= t.mask + 1);
	}
	assert_int_equal(imc_htab_count(&t), N);
	assert_int_equal(t.mask + 1, 131072);
	for (size_t i = 0; i < N; i++)
		assert_ptr_equal(find(&t, i * 7919 + 3), &e[i]);
	assert_null(find(&t, 5)); /* 5 - 3 is not a multiple of 7919 */
	/* remove the odd ones: the even ones stay findable */
	for (size_t i = 1; i < N; i += 2)
		imc_htab_remove(&t, &e[i].node);
	assert_int_equal(imc_htab_count(&t), N / 2);
	for (size_t i = 0; i < N; i++) {
		if (i & 1)
			assert_null(find(&t, e[i].key));
		else
			assert_ptr_equal(find(&t, e[i].key), &e[i]);
	}
	/* remove the rest: the table halves back to its first size */
	for (size_t i = 0; i < N; i += 2)
		imc_htab_remove(&t, &e[i].node);
	assert_int_equal(imc_htab_count(&t), 0);
	assert_int_equal(t.mask + 1, 16);
	assert_null(find(&t, e[0].key));
	imc_htab_fini(&t);
	free(e);
}

static void test_min_buckets_kept(void **state)
{
	struct imc_htab t;
	struct ent e[200];

	assert_int_equal(imc_htab_init(&t, 100), 0);
	assert_int_equal(t.mask + 1, 128);
	for (size_t i = 0; i < 200; i++) {
		e[i].key = i;
		imc_htab_insert(&t, &e[i].node, hash_of(i));
	}
	assert_int_equal(t.mask + 1, 256);
	for (size_t i = 0; i < 200; i++)
		imc_htab_remove(&t, &e[i].node);
	assert_int_equal(t.mask + 1, 128); /* not under the first size */
	imc_htab_fini(&t);
}

/* Equal hashes share a chain: the equality function tells them apart. */
static void test_colliding_hashes(void **state)
{
	struct imc_htab t;
	struct ent e[64];

	assert_int_equal(imc_htab_init(&t, 16), 0);
	for (size_t i = 0; i < 64; i++) {
		e[i].key = i;
		imc_htab_insert(&t, &e[i].node, 42);
	}
	for (uint64_t k = 0; k < 64; k++) {
		struct imc_hnode *n = imc_htab_find(&t, 42, ent_eq, &k);

		assert_ptr_equal(n, &e[k].node);
	}
	imc_htab_remove(&t, &e[10].node);
	{
		uint64_t k = 10;

		assert_null(imc_htab_find(&t, 42, ent_eq, &k));
	}
	imc_htab_fini(&t);
}

static void test_walk_and_take(void **state)
{
	struct imc_htab t;
	struct ent *e = calloc(5000, sizeof(*e));
	struct imc_hnode *n;
	size_t pos, seen = 0;

	assert_non_null(e);
	assert_int_equal(imc_htab_init(&t, 0), 0);
	imc_htab_foreach(n, pos, &t)
		fail(); /* empty */
	for (size_t i = 0; i < 5000; i++) {
		e[i].key = i;
		imc_htab_insert(&t, &e[i].node, hash_of(i));
	}
	imc_htab_foreach(n, pos, &t) {
		struct ent *x = imc_container_of(n, struct ent, node);

		assert_int_equal(x->in, 0);
		x->in = 1;
		seen++;
	}
	assert_int_equal(seen, 5000);
	pos = 0;
	seen = 0;
	while ((n = imc_htab_take(&t, &pos))) {
		struct ent *x = imc_container_of(n, struct ent, node);

		assert_int_equal(x->in, 1);
		x->in = 2;
		seen++;
	}
	assert_int_equal(seen, 5000);
	assert_int_equal(imc_htab_count(&t), 0);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(e[i].in, 2);
	imc_htab_fini(&t);
	free(e);
}

/* splitmix64 reference outputs from state 0 (Vigna's splitmix64.c), and
 * the step agreeing with the library's generator. */
static void test_mix_step(void **state)
{
	static const uint64_t want[] = {
		0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull,
		0x06c45d188009454full, 0xf88bb8a8724c81ecull,
	};
	uint64_t s = 0;

	for (size_t i = 0; i < 4; i++)
		assert_int_equal(imc_mix_step(&s), want[i]);
	assert_int_equal(imc_mix64(0), 0);
	/* the seed changes the hash of the same key */
	assert_int_not_equal(imc_mix2(1, 2, 3), imc_mix2(1, 2, 4));
	assert_int_not_equal(imc_mix2(1, 2, 3), imc_mix2(2, 1, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_find_remove_100k),
		cmocka_unit_test(test_min_buckets_kept),
		cmocka_unit_test(test_colliding_hashes),
		cmocka_unit_test(test_walk_and_take),
		cmocka_unit_test(test_mix_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
