/* util/vec.h and util/list.h: growth by doubling, contents kept across
 * growth, sizes that overflow refused, exact resizes, bisection of a
 * sorted array (found, and the insertion point of what is not), list
 * order and safe deletion. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/list.h"
#include "util/vec.h"

static void test_vec_growth(void **state)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t i = 0; i < 100000; i++) {
		size_t before = cap;

		assert_int_equal(IMC_VEC_RESERVE(&v, &cap, n + 1), 0);
		if (before != cap)
			assert_int_equal(cap, before ? 2 * before : 8);
		v[n++] = i * 3;
	}
	assert_int_equal(cap, 131072);
	for (uint32_t i = 0; i < 100000; i++)
		assert_int_equal(v[i], i * 3);
	/* a reservation within capacity changes nothing */
	{
		uint32_t *old = v;

		assert_int_equal(IMC_VEC_RESERVE(&v, &cap, 5), 0);
		assert_ptr_equal(v, old);
		assert_int_equal(cap, 131072);
	}
	/* a jump past twice the capacity takes the next doubling past it */
	assert_int_equal(IMC_VEC_RESERVE(&v, &cap, 300000), 0);
	assert_int_equal(cap, 524288);
	assert_int_equal(v[99999], 99999 * 3);
	free(v);
}

static void test_vec_overflow_refused(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	assert_int_equal(IMC_VEC_RESERVE(&v, &cap, 4), 0);
	v[3] = 77;
	/* SIZE_MAX / 8 + 1 elements of 8 bytes wrap size_t */
	assert_int_equal(IMC_VEC_RESERVE(&v, &cap, SIZE_MAX / 8 + 1),
			 -EOVERFLOW);
	assert_int_equal(cap, 8);
	assert_int_equal(v[3], 77);
	assert_int_equal(imc_vec_reserve(&v, &cap, SIZE_MAX, 2), -EOVERFLOW);
	assert_int_equal(imc_vec_grown(0, SIZE_MAX / 16 + 1, 16), 0);
	assert_int_equal(imc_vec_grown(0, 1, 1), 8);
	/* doubling that would pass the limit stops at it */
	assert_int_equal(imc_vec_grown(SIZE_MAX / 2 - 1, SIZE_MAX / 2, 2),
			 SIZE_MAX / 2);
	free(v);
}

static void test_vec_resize(void **state)
{
	uint16_t *v = NULL;

	assert_int_equal(IMC_VEC_RESIZE(&v, 3), 0);
	v[0] = 1, v[1] = 2, v[2] = 3;
	assert_int_equal(IMC_VEC_RESIZE(&v, 1000), 0);
	assert_int_equal(v[2], 3);
	v[999] = 9;
	assert_int_equal(IMC_VEC_RESIZE(&v, 2), 0);
	assert_int_equal(v[1], 2);
	/* too many bytes for size_t: refused, the array as it was */
	assert_int_equal(IMC_VEC_RESIZE(&v, SIZE_MAX / 2 + 1), -EOVERFLOW);
	assert_int_equal(v[0], 1);
	free(v);
}

struct keyed {
	int key;
	int payload;
};

static int keyed_cmp(const void *key, const void *e)
{
	int k = *(const int *)key, x = ((const struct keyed *)e)->key;

	return k < x ? -1 : k > x;
}

static void test_vec_bsearch(void **state)
{
	const struct keyed v[] = { { 2, 20 }, { 4, 40 }, { 6, 60 }, { 8, 80 } };
	int k;

	for (int i = 0; i < 4; i++) {
		k = v[i].key;
		assert_int_equal(imc_vec_bsearch(v, 4, sizeof(*v), &k,
						 keyed_cmp), i);
	}
	/* absent keys: -(insertion point) - 1, at both ends and between */
	k = 1;
	assert_int_equal(imc_vec_bsearch(v, 4, sizeof(*v), &k, keyed_cmp), -1);
	k = 5;
	assert_int_equal(imc_vec_bsearch(v, 4, sizeof(*v), &k, keyed_cmp), -3);
	k = 9;
	assert_int_equal(imc_vec_bsearch(v, 4, sizeof(*v), &k, keyed_cmp), -5);
	assert_int_equal(imc_vec_bsearch(v, 0, sizeof(*v), &k, keyed_cmp), -1);
}

struct item {
	struct imc_list link;
	int v;
};

/* A ring that wraps comes out in order from index 0 of the new array;
 * an empty one and a full one that does not wrap grow too; a capacity
 * below the count is refused with the ring left as it was. */
static void test_ring_grow(void **state)
{
	uint16_t *q = malloc(5 * sizeof(*q));
	uint16_t *e = NULL;

	(void)state;
	assert_non_null(q);
	/* cap 5, head 3, len 4: 30 40 | 10 20 in ring order */
	q[3] = 30, q[4] = 40, q[0] = 10, q[1] = 20, q[2] = 0xdead;
	assert_int_equal(imc_ring_grow(&q, sizeof(*q), 3, 4, 5, 3), -ENOMEM);
	assert_int_equal(q[3], 30);
	assert_int_equal(imc_ring_grow(&q, sizeof(*q), 3, 4, 5, 10), 0);
	assert_int_equal(q[0], 30);
	assert_int_equal(q[1], 40);
	assert_int_equal(q[2], 10);
	assert_int_equal(q[3], 20);
	/* head 0, full, no wrap */
	q[4] = 50;
	assert_int_equal(imc_ring_grow(&q, sizeof(*q), 0, 5, 10, 20), 0);
	assert_int_equal(q[4], 50);
	assert_int_equal(q[0], 30);
	free(q);
	assert_int_equal(imc_ring_grow(&e, sizeof(*e), 0, 0, 0, 4), 0);
	assert_non_null(e);
	free(e);
}

static void test_list(void **state)
{
	struct imc_list head, other, *l, *nx;
	struct item it[6];
	int want[] = { 0, 2, 4, 5 };
	size_t k = 0;

	imc_list_init(&head);
	imc_list_init(&other);
	assert_true(imc_list_empty(&head));
	for (int i = 0; i < 5; i++) {
		it[i].v = i;
		imc_list_add_tail(&head, &it[i].link);
		assert_true(imc_list_linked(&it[i].link));
	}
	/* deleting the entry being visited is allowed */
	imc_list_foreach_safe(l, nx, &head) {
		struct item *x = imc_list_entry(l, struct item, link);

		if (x->v & 1)
			imc_list_del(l);
	}
	assert_false(imc_list_linked(&it[1].link));
	imc_list_del(&it[1].link); /* twice is harmless */
	it[5].v = 5;
	imc_list_add_tail(&other, &it[5].link);
	imc_list_splice(&head, &other);
	assert_true(imc_list_empty(&other));
	imc_list_foreach(l, &head)
		assert_int_equal(imc_list_entry(l, struct item, link)->v,
				 want[k++]);
	assert_int_equal(k, 4);
	imc_list_add_head(&head, &it[1].link);
	assert_ptr_equal(head.next, &it[1].link);
	assert_ptr_equal(head.prev, &it[5].link);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vec_growth),
		cmocka_unit_test(test_vec_overflow_refused),
		cmocka_unit_test(test_vec_resize),
		cmocka_unit_test(test_vec_bsearch),
		cmocka_unit_test(test_ring_grow),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
