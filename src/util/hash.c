/* The intrusive chained hash table: see util/hash.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/hash.h"

#define HT_MIN 16

/* Bucket arrays of 2 MiB and more are aligned to 2 MiB and offered to
 * the kernel for huge pages: a probe of a large table then costs a cache
 * miss but seldom a TLB miss as well. */
#define HUGE_PAGE (2u << 20)

static struct imc_hnode **buckets_alloc(size_t n)
{
	size_t bytes;
	void *p;

	if (n > SIZE_MAX / sizeof(struct imc_hnode *))
		return NULL;
	bytes = n * sizeof(struct imc_hnode *);
	if (bytes < HUGE_PAGE)
		return calloc(n, sizeof(struct imc_hnode *));
	if (posix_memalign(&p, HUGE_PAGE, bytes))
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE);
	memset(p, 0, bytes);
	return p;
}

int imc_htab_init(struct imc_htab *t, size_t min_buckets)
{
	size_t n = HT_MIN;

	while (n < min_buckets && n <= SIZE_MAX / 4)
		n <<= 1;
	t->b = buckets_alloc(n);
	if (!t->b)
		return -ENOMEM;
	t->mask = n - 1;
	t->min_mask = n - 1;
	t->n = 0;
	return 0;
}

void imc_htab_fini(struct imc_htab *t)
{
	free(t->b);
	t->b = NULL;
	t->mask = t->min_mask = 0;
	t->n = 0;
}

/* Moves every entry to n buckets; without memory, keeps the old ones. */
static void resize(struct imc_htab *t, size_t n)
{
	struct imc_hnode **b = buckets_alloc(n);

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

void imc_htab_insert(struct imc_htab *t, struct imc_hnode *n, uint64_t hash)
{
	struct imc_hnode **head;

	if (t->n > t->mask && t->mask < SIZE_MAX / 4)
		resize(t, (t->mask + 1) * 2);
	n->hash = hash;
	head = &t->b[hash & t->mask];
	n->next = *head;
	*head = n;
	t->n++;
}

static void unlink_node(struct imc_htab *t, struct imc_hnode *n)
{
	struct imc_hnode **p = &t->b[n->hash & t->mask];

	while (*p && *p != n)
		p = &(*p)->next;
	if (*p) {
		*p = n->next;
		t->n--;
	}
	n->next = NULL;
}

void imc_htab_remove(struct imc_htab *t, struct imc_hnode *n)
{
	unlink_node(t, n);
	if (t->mask > t->min_mask && t->n < (t->mask + 1) / 8)
		resize(t, (t->mask + 1) / 2);
}

static struct imc_hnode *scan(const struct imc_htab *t, size_t i, size_t *pos);

struct imc_hnode *imc_htab_take(struct imc_htab *t, size_t *pos)
{
	struct imc_hnode *n = t->n ? scan(t, *pos, pos) : NULL;

	if (n)
		unlink_node(t, n);
	return n;
}

static struct imc_hnode *scan(const struct imc_htab *t, size_t i, size_t *pos)
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

struct imc_hnode *imc_htab_first(const struct imc_htab *t, size_t *pos)
{
	return t->n ? scan(t, 0, pos) : NULL;
}

struct imc_hnode *imc_htab_next(const struct imc_htab *t,
				const struct imc_hnode *n, size_t *pos)
{
	if (n->next)
		return n->next;
	return scan(t, *pos + 1, pos);
}
