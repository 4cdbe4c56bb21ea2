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
 */
#ifndef IMC_UTIL_HASH_H
#define IMC_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* An empty table of at least min_buckets buckets (16 at least). 0 or
 * -ENOMEM. */
int imc_htab_init(struct imc_htab *t, size_t min_buckets);
/* Frees the buckets (not the entries: the caller owns them). */
void imc_htab_fini(struct imc_htab *t);
/* Adds n under hash; n must not be in a table. Equal keys may coexist:
 * the caller looks up first when keys must be unique. */
void imc_htab_insert(struct imc_htab *t, struct imc_hnode *n, uint64_t hash);
/* Takes n (which must be in t) out. */
void imc_htab_remove(struct imc_htab *t, struct imc_hnode *n);
/* Takes some entry out without shrinking and returns it, or NULL when t
 * is empty: for emptying a table whose entries are freed one by one.
 * *pos is a cursor set to 0 before the first call, so that emptying a
 * table costs O(buckets + entries) in all. */
struct imc_hnode *imc_htab_take(struct imc_htab *t, size_t *pos);

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

/* Every entry once, in bucket order (see above), *pos the cursor. The
 * table must not change during the walk. */
struct imc_hnode *imc_htab_first(const struct imc_htab *t, size_t *pos);
struct imc_hnode *imc_htab_next(const struct imc_htab *t,
				const struct imc_hnode *n, size_t *pos);

#define imc_htab_foreach(n, pos, t)                                   \
	for ((n) = imc_htab_first((t), &(pos)); (n);                   \
	     (n) = imc_htab_next((t), (n), &(pos)))

#endif
