/* The intrusive chained hash table.
 *
 * An entry embeds a struct imc_hnode; the caller computes the 64-bit hash
 * (for keys that come from the wire, with a seeded mix from util/mix.h, so
 * that a peer cannot choose keys that share a bucket) and compares keys
 * itself: imc_htab_find takes an equality function, or the caller walks
 * imc_htab_bucket comparing n->hash first.
 *
 * Buckets are a power of two. The table doubles when an insert would take
 * the load above 1 and halves when a remove takes it below 1/8, never
 * under the size it was created with: lookups, inserts and removes are
 * O(1) expected, and memory follows the load. Nodes keep their hash, so a
 * resize never calls back into the caller. When memory for a resize is
 * missing the table keeps its buckets and chains get longer: insert and
 * remove never fail.
 *
 * Order: bucket order depends on the hashes (and so on the seed), never
 * on insertion. Callers whose output depends on order either keep the
 * entries on an imc_list as well (insertion order) or sort what they
 * collect; imc_htab_first/imc_htab_next are for teardown and for
 * collecting, not for printing.
 *
 * Everything is static inline: the table is used on both sides of the
 * host/simulator library split and exports no symbol of its own.
 */
#ifndef IMC_UTIL_HASH_H
#define IMC_UTIL_HASH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ibmcast/common.h" /* imc_container_of */

struct imc_hnode {
	struct imc_hnode *next;
	uint64_t hash;
};

struct imc_htab {
	struct imc_hnode **b;
	size_t mask;      /* buckets - 1 */
	size_t n;         /* entries */
	size_t min_mask;  /* never shrinks below this */
};

#define IMC_HTAB_MIN 16

/* Bucket arrays of 2 MiB and more are aligned to 2 MiB and offered to
 * the kernel for huge pages: a probe of a large table then costs a cache
 * miss but seldom a TLB miss as well. */
#define IMC_HTAB_HUGE_PAGE (2u << 20)

static inline struct imc_hnode **imc_htab_alloc_(size_t n)
{
	size_t bytes;
	void *p;

	if (n > SIZE_MAX / sizeof(struct imc_hnode *))
		return NULL;
	bytes = n * sizeof(struct imc_hnode *);
	if (bytes < IMC_HTAB_HUGE_PAGE)
		return calloc(n, sizeof(struct imc_hnode *));
	if (posix_memalign(&p, IMC_HTAB_HUGE_PAGE, bytes))
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE);
	memset(p, 0, bytes);
	return p;
}

/* An empty table of at least min_buckets buckets (16 at least). 0 or
 * -ENOMEM. */
static inline int imc_htab_init(struct imc_htab *t, size_t min_buckets)
{
	size_t n = IMC_HTAB_MIN;

	while (n < min_buckets && n <= SIZE_MAX / 4)
		n <<= 1;
	t->b = imc_htab_alloc_(n);
	if (!t->b)
		return -ENOMEM;
	t->mask = n - 1;
	t->min_mask = n - 1;
	t->n = 0;
	return 0;
}

/* Frees the buckets (not the entries: the caller owns them). */
static inline void imc_htab_fini(struct imc_htab *t)
{
	free(t->b);
	t->b = NULL;
	t->mask = t->min_mask = 0;
	t->n = 0;
}

/* Moves every entry to n buckets; without memory, keeps the old ones. */
static inline void imc_htab_resize_(struct imc_htab *t, size_t n)
{
	struct imc_hnode **b = imc_htab_alloc_(n);

	if (!b)
		return;
	for (size_t i = 0; i <= t->mask; i++) {
		struct imc_hnode *e = t->b[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = n - 1;
}

/* Adds n under hash; n must not be in a table. Equal keys may coexist:
 * the caller looks up first when keys must be unique. */
static inline void imc_htab_insert(struct imc_htab *t, struct imc_hnode *n,
				   uint64_t hash)
{
	struct imc_hnode **head;

	if (t->n > t->mask && t->mask < SIZE_MAX / 4)
		imc_htab_resize_(t, (t->mask + 1) * 2);
	n->hash = hash;
	head = &t->b[hash & t->mask];
	n->next = *head;
	*head = n;
	t->n++;
}

static inline bool imc_htab_unlink_(struct imc_htab *t, struct imc_hnode *n)
{
	struct imc_hnode **p = &t->b[n->hash & t->mask];

	while (*p && *p != n)
		p = &(*p)->next;
	if (!*p) {
		n->next = NULL;
		return false;
	}
	*p = n->next;
	n->next = NULL;
	t->n--;
	return true;
}

/* Takes n out. A node that is not in t (taken by imc_htab_take, say)
 * is left as it is, apart from n->next, which becomes NULL, and the
 * table does not resize: an entry's own free function may remove it
 * while imc_htab_take empties the table. */
static inline void imc_htab_remove(struct imc_htab *t, struct imc_hnode *n)
{
	if (imc_htab_unlink_(t, n) && t->mask > t->min_mask &&
	    t->n < (t->mask + 1) / 8)
		imc_htab_resize_(t, (t->mask + 1) / 2);
}

/* Forgets every entry (not freeing them) and keeps the buckets: for a
 * caller whose entries moved (an array of nodes reallocated), before it
 * inserts them again. Never fails. */
static inline void imc_htab_clear(struct imc_htab *t)
{
	memset(t->b, 0, (t->mask + 1) * sizeof(*t->b));
	t->n = 0;
}

/* The chain hash falls in; entries of other hashes share it. */
static inline struct imc_hnode *imc_htab_bucket(const struct imc_htab *t,
						uint64_t hash)
{
	return t->b[hash & t->mask];
}

typedef bool imc_htab_eq_fn(const struct imc_hnode *n, const void *key);

/* The first entry of hash for which eq(n, key) holds, or NULL. */
static inline struct imc_hnode *imc_htab_find(const struct imc_htab *t,
					      uint64_t hash,
					      imc_htab_eq_fn *eq,
					      const void *key)
{
	for (struct imc_hnode *n = imc_htab_bucket(t, hash); n; n = n->next)
		if (n->hash == hash && eq(n, key))
			return n;
	return NULL;
}

static inline size_t imc_htab_count(const struct imc_htab *t)
{
	return t->n;
}

/* The first entry in bucket i or after, with *pos set to its bucket. */
static inline struct imc_hnode *imc_htab_scan_(const struct imc_htab *t,
					       size_t i, size_t *pos)
{
	for (; t->b && i <= t->mask; i++) {
		if (t->b[i]) {
			*pos = i;
			return t->b[i];
		}
	}
	*pos = i;
	return NULL;
}

/* Every entry once, in bucket order (see above), *pos the cursor. The
 * table must not change during the walk. */
static inline struct imc_hnode *imc_htab_first(const struct imc_htab *t,
					       size_t *pos)
{
	return t->n ? imc_htab_scan_(t, 0, pos) : NULL;
}

static inline struct imc_hnode *imc_htab_next(const struct imc_htab *t,
					      const struct imc_hnode *n,
					      size_t *pos)
{
	if (n->next)
		return n->next;
	return imc_htab_scan_(t, *pos + 1, pos);
}

#define imc_htab_foreach(n, pos, t)                                   \
	for ((n) = imc_htab_first((t), &(pos)); (n);                   \
	     (n) = imc_htab_next((t), (n), &(pos)))

/* Takes some entry out without shrinking and returns it, or NULL when t
 * is empty: for emptying a table whose entries are freed one by one.
 * *pos is a cursor set to 0 before the first call, so that emptying a
 * table costs O(buckets + entries) in all. */
static inline struct imc_hnode *imc_htab_take(struct imc_htab *t, size_t *pos)
{
	struct imc_hnode *n = t->n ? imc_htab_scan_(t, *pos, pos) : NULL;

	if (n)
		imc_htab_unlink_(t, n);
	return n;
}

#endif
