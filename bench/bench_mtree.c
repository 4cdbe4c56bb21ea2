/* Cost of incremental multicast trees (mtree.h): joins and leaves as one
 * group grows from 10 to 100,000 members, and with 10,000 groups.
 *
 * Usage: bench_mtree [OPS]   (default 100000 churn operations per row)
 *
 * Fabrics (imc_topo_generate, three-level fat trees):
 *   10k   "fat-tree:pods=10,leaves=20,hosts=50,aggs=10,spines=40"
 *         10,000 HCAs, 340 switches;
 *   102k  "fat-tree:pods=32,leaves=64,hosts=50,aggs=16,spines=64"
 *         102,400 HCAs, 2,624 switches, for the 100,000-member group
 *         (no 10,000-HCA fabric has 100,000 member ports; nor can one
 *         subnet at LMC 0 give them LIDs, IBA 4.1.3, but the tree's cost
 *         does not depend on LIDs).
 * Rows:
 *   fill    random distinct HCAs join one by one up to N members;
 *   churn   OPS times: a random member leaves, a random non-member joins
 *           (the figure is per operation, leave and join counted apart);
 *   drain   every member leaves;
 *   rebuild imc_mtree_rebuild_all() of the whole state as is (nothing
 *           changes: on a fat tree the grafts take the same lowest-port
 *           paths in any join order); a full recomputation per join or
 *           leave would cost this much each time;
 *   cable   the first leaf-to-aggregation cable goes down, and from the
 *           same trees imc_mtree_repair_all() and imc_mtree_rebuild_all()
 *           bring them in line: the repair rewrites the entries around
 *           the cable, the rebuild reroutes every tree through that leaf.
 * "entries/op" is the number of MFT entries (switch, MLID) written per
 * operation: an incremental join or leave writes O(depth) of them, a
 * recomputation as many as the tree has switches. The sink only counts
 * them. CLOCK_MONOTONIC measures; the trees depend on the seed alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/mtree.h"
#include "ibmcast/rng.h"

#define MLID0 0xc000

struct sink {
	uint64_t n;
	uint64_t x;
};

static void sink_set(void *ctx, uint32_t sw, uint16_t mlid,
		     const struct imc_mtree_mask *m)
{
	struct sink *s = ctx;

	s->n++;
	s->x ^= sw ^ mlid ^ m->bits[0] ^ m->bits[1];
}

static bool *down;      /* [node * 256 + port], switch cables */

static bool sink_link_up(void *ctx, uint32_t node, unsigned port)
{
	(void)ctx;
	return !down[(size_t)node * 256 + port];
}

static const struct imc_mtree_ops sink_ops = {
	.link_up = sink_link_up,
	.mft_set = sink_set,
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, long err)
{
	fprintf(stderr, "bench_mtree: %s failed (%ld)\n", what, err);
	exit(1);
}

struct fab {
	struct imc_topo *t;
	uint32_t nhca;        /* HCAs are nodes 0 .. nhca-1 (generator order) */
};

static void fab_load(struct fab *f, const char *spec)
{
	char err[128];
	int rc = imc_topo_generate(spec, &f->t, err, sizeof(err));

	if (rc)
		die(err, rc);
	imc_topo_counts(f->t, &f->nhca, NULL, NULL);
	for (uint32_t i = 0; i < f->nhca; i++)
		if (f->t->node[i].type != IMC_NODE_HCA)
			die("HCAs first", i);
	down = calloc((size_t)f->t->nnodes * 256, 1);
	if (!down)
		die("calloc", 0);
}

static void fab_free(struct fab *f)
{
	imc_topo_destroy(f->t);
	free(down);
	down = NULL;
}

static bool quiet;

static void row(const char *what, uint64_t ops, double sec, uint64_t entries)
{
	if (quiet)
		return;
	printf("  %-22s %10llu ops %10.0f ns/op %8.2f entries/op\n", what,
	       (unsigned long long)ops, ops ? sec * 1e9 / (double)ops : 0.0,
	       ops ? (double)entries / (double)ops : 0.0);
}

/* Sets the cable between the first leaf and the first aggregation switch
 * down or up; every tree through that leaf uses it, since the generator
 * and the search both take the lowest port first. */
static void agg_cable(const struct imc_topo *t, bool is_down)
{
	uint32_t a;

	if (imc_topo_find(t, "A-0001", &a))
		die("no A-0001", 0);
	for (unsigned p = 1; p <= t->node[a].nports; p++) {
		const struct imc_topo_port *tp = &t->node[a].port[p];

		if (tp->peer == IMC_TOPO_NONE)
			continue;
		down[(size_t)a * 256 + p] = is_down;
		down[(size_t)tp->peer * 256 + tp->peer_port] = is_down;
		return;
	}
}

static void timed(struct imc_mtree *mt, struct sink *sk, const char *what,
		  int (*fn)(struct imc_mtree *))
{
	uint64_t e0 = sk->n;
	double t0 = seconds();
	int rc = fn(mt);

	if (rc < 0)
		die(what, rc);
	if (what)
		row(what, 1, seconds() - t0, sk->n - e0);
}

static void rebuild_rows(struct imc_mtree *mt, struct sink *sk,
			 const struct imc_topo *t)
{
	/* The first rebuild after a fill pays for cold caches. */
	timed(mt, sk, NULL, imc_mtree_rebuild_all);
	timed(mt, sk, "rebuild (as is)", imc_mtree_rebuild_all);
	agg_cable(t, true);
	timed(mt, sk, "repair (cable down)", imc_mtree_repair_all);
	agg_cable(t, false);
	timed(mt, sk, NULL, imc_mtree_rebuild_all);
	agg_cable(t, true);
	timed(mt, sk, "rebuild (cable down)", imc_mtree_rebuild_all);
}

/* One group of n members. */
static void one_group(const char *spec, uint32_t n, uint64_t ops)
{
	struct fab f;
	struct imc_mtree *mt;
	struct sink sk = { 0 };
	struct imc_rng rng;
	struct imc_mtree_group_info gi;
	uint32_t *perm;
	uint64_t e0, joins = 0, leaves = 0, ej = 0, el = 0;
	double t0, tj = 0, tl = 0;
	int rc;

	fab_load(&f, spec);
	if (n > f.nhca)
		die("group larger than the fabric", n);
	imc_rng_seed(&rng, n);
	rc = imc_mtree_create(f.t, &sink_ops, &sk, &mt);
	if (rc)
		die("imc_mtree_create", rc);
	/* perm[0..n) are the members; a random permutation of the HCAs. */
	perm = malloc(f.nhca * sizeof(*perm));
	if (!perm)
		die("malloc", 0);
	for (uint32_t i = 0; i < f.nhca; i++)
		perm[i] = i;
	for (uint32_t i = f.nhca - 1; i > 0; i--) {
		uint32_t j = (uint32_t)imc_rng_below(&rng, i + 1), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}

	if (!quiet)
		printf("%u members, %s\n", n, spec);
	t0 = seconds();
	for (uint32_t i = 0; i < n; i++) {
		rc = imc_mtree_add(mt, MLID0, perm[i], 1);
		if (rc < 0)
			die("add", rc);
	}
	row("fill (join)", n, seconds() - t0, sk.n);
	if (imc_mtree_group_info(mt, MLID0, &gi))
		die("group_info", 0);
	if (!quiet)
		printf("  tree: %u switches, %u edges\n", gi.switches,
		       gi.edges);

	for (uint64_t k = 0; k < ops; k++) {
		uint32_t a = (uint32_t)imc_rng_below(&rng, n);
		uint32_t b = n < f.nhca ?
			n + (uint32_t)imc_rng_below(&rng, f.nhca - n) : a;
		uint32_t x = perm[a], y = perm[b];

		e0 = sk.n;
		t0 = seconds();
		rc = imc_mtree_remove(mt, MLID0, x, 1);
		tl += seconds() - t0;
		if (rc < 0)
			die("remove", rc);
		el += sk.n - e0;
		leaves++;
		e0 = sk.n;
		t0 = seconds();
		rc = imc_mtree_add(mt, MLID0, y, 1);
		tj += seconds() - t0;
		if (rc < 0)
			die("add", rc);
		ej += sk.n - e0;
		joins++;
		perm[a] = y;
		perm[b] = x;
	}
	row("churn (leave)", leaves, tl, el);
	row("churn (join)", joins, tj, ej);
	rebuild_rows(mt, &sk, f.t);

	e0 = sk.n;
	t0 = seconds();
	for (uint32_t i = 0; i < n; i++) {
		rc = imc_mtree_remove(mt, MLID0, perm[i], 1);
		if (rc < 0)
			die("remove", rc);
	}
	row("drain (leave)", n, seconds() - t0, sk.n - e0);
	imc_mtree_destroy(mt);
	free(perm);
	fab_free(&f);
}

/* g groups of m random members each. */
static void many_groups(const char *spec, uint32_t g, uint32_t m,
			uint64_t ops)
{
	struct fab f;
	struct imc_mtree *mt;
	struct sink sk = { 0 };
	struct imc_rng rng;
	struct imc_mtree_stats st;
	uint32_t *mem;
	uint64_t e0, ej = 0, el = 0, joins = 0;
	double t0, tj = 0, tl = 0;
	int rc;

	fab_load(&f, spec);
	imc_rng_seed(&rng, g);
	rc = imc_mtree_create(f.t, &sink_ops, &sk, &mt);
	mem = malloc((size_t)g * m * sizeof(*mem));
	if (rc || !mem)
		die("setup", rc);
	printf("%u groups of %u members, %s\n", g, m, spec);
	t0 = seconds();
	for (uint32_t i = 0; i < g; i++)
		for (uint32_t k = 0; k < m; k++) {
			do {
				mem[i * m + k] = (uint32_t)imc_rng_below(&rng,
								    f.nhca);
				rc = imc_mtree_add(mt, (uint16_t)(MLID0 + i),
						   mem[i * m + k], 1);
			} while (rc == -EEXIST);
			if (rc < 0)
				die("add", rc);
		}
	row("fill (join)", (uint64_t)g * m, seconds() - t0, sk.n);
	imc_mtree_stats(mt, &st);
	printf("  trees: %llu switch entries, %.1f per group\n",
	       (unsigned long long)st.tree_switches,
	       (double)st.tree_switches / g);

	for (uint64_t k = 0; k < ops; k++) {
		uint32_t i = (uint32_t)imc_rng_below(&rng, g);
		uint32_t *x = &mem[i * m + imc_rng_below(&rng, m)];
		uint16_t mlid = (uint16_t)(MLID0 + i);

		e0 = sk.n;
		t0 = seconds();
		rc = imc_mtree_remove(mt, mlid, *x, 1);
		tl += seconds() - t0;
		if (rc < 0)
			die("remove", rc);
		el += sk.n - e0;
		do
			*x = (uint32_t)imc_rng_below(&rng, f.nhca);
		while (imc_mtree_is_member(mt, mlid, *x, 1));
		e0 = sk.n;
		t0 = seconds();
		rc = imc_mtree_add(mt, mlid, *x, 1);
		tj += seconds() - t0;
		if (rc < 0)
			die("add", rc);
		ej += sk.n - e0;
		joins++;
	}
	row("churn (leave)", joins, tl, el);
	row("churn (join)", joins, tj, ej);
	rebuild_rows(mt, &sk, f.t);

	e0 = sk.n;
	t0 = seconds();
	for (uint32_t i = 0; i < g; i++) {
		rc = imc_mtree_clear(mt, (uint16_t)(MLID0 + i));
		if (rc < 0)
			die("clear", rc);
	}
	row("clear (per group)", g, seconds() - t0, sk.n - e0);
	imc_mtree_destroy(mt);
	free(mem);
	fab_free(&f);
}

int main(int argc, char **argv)
{
	static const char ft10k[] =
		"fat-tree:pods=10,leaves=20,hosts=50,aggs=10,spines=40";
	static const char ft102k[] =
		"fat-tree:pods=32,leaves=64,hosts=50,aggs=16,spines=64";
	long ops = argc > 1 ? atol(argv[1]) : 100000;

	if (ops <= 0) {
		fprintf(stderr, "usage: bench_mtree [OPS]\n");
		return 2;
	}
	/* Warm up the allocator and caches. */
	quiet = true;
	one_group(ft10k, 1000, (uint64_t)ops / 10 + 1);
	quiet = false;
	one_group(ft10k, 10, (uint64_t)ops);
	one_group(ft10k, 1000, (uint64_t)ops);
	one_group(ft102k, 100000, (uint64_t)ops);
	many_groups(ft10k, 10000, 16, (uint64_t)ops);
	return 0;
}
