/* The growable array: the caller keeps a pointer, a count and a capacity
 * (size_t) in its own structure; imc_vec_reserve makes room.
 *
 *	if (IMC_VEC_RESERVE(&t->ents, &t->cap, t->n + 1))
 *		return -ENOMEM;
 *	t->ents[t->n++] = e;
 *
 * Capacity doubles (from 8), so n appends cost O(n) copies in all; a size
 * whose bytes overflow size_t is refused with -EOVERFLOW instead of
 * wrapping to a small allocation. On failure the array is unchanged.
 */
#ifndef IMC_UTIL_VEC_H
#define IMC_UTIL_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IMC_VEC_MIN 8

/* Capacity for need elements of elem bytes grown from cap, or 0 when its
 * bytes do not fit in size_t. */
static inline size_t imc_vec_grown(size_t cap, size_t need, size_t elem)
{
	size_t max = SIZE_MAX / (elem ? elem : 1);
	size_t c = cap ? cap : IMC_VEC_MIN;

	if (need > max)
		return 0;
	while (c < need)
		c = c > max / 2 ? max : c * 2;
	return c > max ? max : c;
}

/* Reallocates the array whose pointer is at parr (a T ** passed as
 * void *) to n (> 0) elements of elem bytes, for arrays whose size the
 * caller decides (parallel arrays sharing one capacity, say). 0,
 * -EOVERFLOW or -ENOMEM; on failure the array is unchanged; new
 * elements are not initialized. */
static inline int imc_vec_resize(void *parr, size_t n, size_t elem)
{
	void *p, *np;

	if (elem && n > SIZE_MAX / elem)
		return -EOVERFLOW;
	/* T * and void * share a representation on every target this
	 * builds for; memcpy keeps the access within the aliasing rules. */
	memcpy(&p, parr, sizeof(p));
	np = realloc(p, n * elem);
	if (!np)
		return -ENOMEM;
	memcpy(parr, &np, sizeof(np));
	return 0;
}

#define IMC_VEC_RESIZE(parr, n) \
	imc_vec_resize((parr), (n), sizeof(**(parr)))

/* Grows the array whose pointer is at parr (a T ** passed as void *) and
 * whose capacity is *cap to hold at least need elements of elem bytes.
 * 0, -EOVERFLOW or -ENOMEM; new elements are not initialized. */
static inline int imc_vec_reserve(void *parr, size_t *cap, size_t need,
				  size_t elem)
{
	size_t c;
	int rc;

	if (need <= *cap)
		return 0;
	c = imc_vec_grown(*cap, need, elem);
	if (!c)
		return -EOVERFLOW;
	rc = imc_vec_resize(parr, c, elem);
	if (!rc)
		*cap = c;
	return rc;
}

#define IMC_VEC_RESERVE(parr, cap, need) \
	imc_vec_reserve((parr), (cap), (need), sizeof(**(parr)))

/* Moves the ring whose pointer is at parr (a T ** passed as void *) of
 * cap elements of elem bytes, len of them from index head on (wrapping
 * past the end), to a new array of newcap (>= len) elements, those len
 * first and in order: the caller then sets its capacity to newcap and
 * its head to 0. 0 or -ENOMEM (the ring unchanged). */
static inline int imc_ring_grow(void *parr, size_t elem, size_t head,
				size_t len, size_t cap, size_t newcap)
{
	size_t first = len < cap - head ? len : cap - head;
	char *p, *np;

	if (len > newcap || (elem && newcap > SIZE_MAX / elem))
		return -ENOMEM;
	np = malloc(newcap * elem);
	if (!np)
		return -ENOMEM;
	memcpy(&p, parr, sizeof(p));
	if (len) {
		memcpy(np, p + head * elem, first * elem);
		memcpy(np + first * elem, p, (len - first) * elem);
	}
	free(p);
	memcpy(parr, &np, sizeof(np));
	return 0;
}

/* Bisects the n elements of elem bytes at base, sorted as cmp(key,
 * element) orders them, for key: the index of an element equal to key,
 * or -(insertion point) - 1. */
static inline long imc_vec_bsearch(const void *base, size_t n, size_t elem,
				   const void *key,
				   int (*cmp)(const void *key, const void *e))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(key, (const char *)base + mid * elem);

		if (c == 0)
			return (long)mid;
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

#endif
