/* Incremental multicast spanning trees (see ibmcast/mtree.h).
 *
 * Per MLID a group holds two util/hash.h tables: the member ports
 * (node:port -> the switch port it hangs off) and the tree switches
 * (node -> member ports, tree-edge ports). Only switches on the tree have
 * a record, so 10,000 small groups on a large fabric cost little.
 *
 * Cost (docs/performance.md, "One hash table, one list"): records live
 * behind the buckets, not in the slots of an open-addressing array, so a
 * probe costs one load more, a repair copies the tree record by record
 * and a clear frees each record: in the trees' own benchmark rebuilds and
 * repairs cost 1.25-2x what in-slot records cost, leaves in large groups
 * about 1.6x, a clear 2-4.6x. The SA engine's benchmarks do not see it,
 * and peak memory is lower (a group starts with two 16-bucket arrays).
 *
 * Invariants, kept by every call:
 *  - the tree switches and edges form a forest;
 *  - every switch with at most one tree edge carries a member port, so no
 *    branch leads nowhere;
 *  - a member on the tree has its bit on the switch recorded for it;
 *  - after a rebuild or repair, and as long as no cable changes, there is
 *    one tree per connected part of the switches that carry members, and
 *    every edge runs over a cable that is up.
 *
 * Join: breadth first from the member's switch over switch cables that
 * are up, each switch's ports in increasing order, until a tree switch is
 * reached; that shortest path is grafted on. Leave: while the member's
 * switch has no member and one edge, it drops off and the walk moves to
 * its neighbour. Both report only the switches they touched. Rebuild:
 * a fresh tree from the members in (node, port) order. Repair: the old
 * tree with broken parts cut and the pieces joined again.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mtree.h"
#include "ibmcast/packet.h"
#include "util/hash.h"
#include "util/mix.h"

#define NMLID (IMC_MLID_MAX - IMC_MLID_MIN + 1)

struct tsw {
	struct imc_hnode hn;  /* hash: tab_hash(node) */
	uint32_t node;
	uint16_t nmembers;
	uint16_t nedges;
	struct imc_mtree_mask members;
	struct imc_mtree_mask edges;
};

struct mem {
	struct imc_hnode hn;  /* hash: tab_hash(key) */
	uint64_t key;         /* node << 8 | port */
	uint32_t sw;          /* switch it hangs off, IMC_TOPO_NONE: off tree */
	uint8_t swport;       /* that switch's port toward it (0: itself) */
};

struct group {
	uint16_t mlid;
	uint32_t attached;
	uint32_t edges;
	struct imc_htab sw;   /* struct tsw by node */
	struct imc_htab mem;  /* struct mem by key */
};

struct imc_mtree {
	const struct imc_topo *topo;
	struct imc_mtree_ops ops;
	void *ctx;
	struct group *group[NMLID];

	/* Search scratch, indexed by node; grown with the topology. */
	uint32_t cap;
	uint32_t epoch;
	uint32_t *mark;
	uint32_t *parent;
	uint8_t *pport;       /* parent's port toward the node */
	uint32_t *queue;
	uint32_t *done;       /* fragments finished by a repair */
	uint32_t done_epoch;
	uint32_t *frag;

	/* Switches touched by the running call, in report order. */
	uint32_t *touched;
	size_t ntouched, touched_cap;

	/* Tree switch records set aside by sw_reserve and sw_del. */
	struct imc_hnode *spare;
	uint32_t nspare;

	struct imc_mtree_stats st;
};

/* ---- small helpers ---- */

static void mask_set(struct imc_mtree_mask *m, unsigned port)
{
	m->bits[(port >> 6) & 3] |= 1ull << (port & 63);
}

static void mask_clear(struct imc_mtree_mask *m, unsigned port)
{
	m->bits[(port >> 6) & 3] &= ~(1ull << (port & 63));
}

static void mask_or(struct imc_mtree_mask *d, const struct imc_mtree_mask *a,
		    const struct imc_mtree_mask *b)
{
	for (int i = 0; i < 4; i++)
		d->bits[i] = a->bits[i] | b->bits[i];
}

/* The lowest port in m; m must not be empty. */
static unsigned mask_first(const struct imc_mtree_mask *m)
{
	for (unsigned i = 0; i < 4; i++)
		if (m->bits[i])
			return i * 64 + (unsigned)__builtin_ctzll(m->bits[i]);
	return 0;
}

static bool is_switch(const struct imc_topo *t, uint32_t node)
{
	return node < t->nnodes && t->node[node].type == IMC_NODE_SWITCH;
}

static bool link_up(const struct imc_mtree *mt, uint32_t node, unsigned port)
{
	return !mt->ops.link_up || mt->ops.link_up(mt->ctx, node, port);
}

/* ---- tree switch and member tables ---- */

/* Keys are node numbers and (node, port) pairs of the topology, not
 * input a peer chooses, so no seed is mixed in. The finalizer is a
 * bijection of 64 bits: equal hashes mean equal keys, and a probe
 * compares hashes alone. */
static uint64_t tab_hash(uint64_t key)
{
	return imc_mix64(key);
}

/* Tables are created by their first reservation: an empty group or
 * scratch tree holds no buckets. */
static int tab_open(struct imc_htab *t)
{
	return t->b ? 0 : imc_htab_init(t, 0);
}

/* The record of key in t, or NULL. */
static struct imc_hnode *tab_find(const struct imc_htab *t, uint64_t key)
{
	uint64_t h = tab_hash(key);

	if (!t->n)
		return NULL;
	for (struct imc_hnode *n = imc_htab_bucket(t, h); n; n = n->next)
		if (n->hash == h)
			return n;
	return NULL;
}

static struct tsw *sw_find(const struct imc_htab *t, uint32_t node)
{
	struct imc_hnode *n = tab_find(t, node);

	return n ? imc_container_of(n, struct tsw, hn) : NULL;
}

/* Room for extra more records: the buckets, and records set aside in
 * mt->spare so that a graft, once started, cannot fail half way. */
static int sw_reserve(struct imc_mtree *mt, struct imc_htab *t,
		      uint32_t extra)
{
	int err = tab_open(t);

	if (err)
		return err;
	while (mt->nspare < extra) {
		struct tsw *r = malloc(sizeof(*r));

		if (!r)
			return -ENOMEM;
		r->hn.next = mt->spare;
		mt->spare = &r->hn;
		mt->nspare++;
	}
	return 0;
}

/* The record of node, created empty when absent; needs sw_reserve first. */
static struct tsw *sw_get(struct imc_mtree *mt, struct imc_htab *t,
			  uint32_t node)
{
	struct tsw *r = sw_find(t, node);

	if (r)
		return r;
	r = imc_container_of(mt->spare, struct tsw, hn);
	mt->spare = r->hn.next;
	mt->nspare--;
	memset(r, 0, sizeof(*r));
	r->node = node;
	imc_htab_insert(t, &r->hn, tab_hash(node));
	return r;
}

/* A few deleted records are kept for the next grafts: a join after a
 * leave then reuses them instead of going back to malloc. */
#define SPARE_MAX 64

static void sw_del(struct imc_mtree *mt, struct imc_htab *t, struct tsw *r)
{
	imc_htab_remove(t, &r->hn);
	if (mt->nspare >= SPARE_MAX) {
		free(r);
		return;
	}
	r->hn.next = mt->spare;
	mt->spare = &r->hn;
	mt->nspare++;
}

/* Frees the records of t and its buckets; t is left empty. */
static void tab_free(struct imc_htab *t, size_t off)
{
	struct imc_hnode *n;
	size_t pos = 0;

	while ((n = imc_htab_take(t, &pos)))
		free((char *)n - off);
	imc_htab_fini(t);
}

static void sw_free(struct imc_htab *t)
{
	tab_free(t, offsetof(struct tsw, hn));
}

/* A copy of src's records in dst (empty). 0 or -ENOMEM (dst empty). */
static int sw_copy(struct imc_htab *dst, const struct imc_htab *src)
{
	const struct imc_hnode *n;
	size_t pos;
	int err = imc_htab_init(dst, src->n);

	if (err)
		return err;
	imc_htab_foreach(n, pos, src) {
		struct tsw *r = malloc(sizeof(*r));

		if (!r) {
			sw_free(dst);
			return -ENOMEM;
		}
		memcpy(r, imc_container_of(n, struct tsw, hn), sizeof(*r));
		imc_htab_insert(dst, &r->hn, n->hash);
	}
	return 0;
}

static uint64_t mem_key(uint32_t node, unsigned port)
{
	return (uint64_t)node << 8 | port;
}

static struct mem *mem_find(const struct imc_htab *t, uint64_t key)
{
	struct imc_hnode *n = tab_find(t, key);

	return n ? imc_container_of(n, struct mem, hn) : NULL;
}

static void mem_del(struct imc_htab *t, struct mem *m)
{
	imc_htab_remove(t, &m->hn);
	free(m);
}

/* ---- scratch ---- */

/* Grows one scratch array (parr: a T ** passed as void *) from old to
 * cap elements of elem bytes; when zero, the new elements start at 0. */
static int grow(void *parr, uint32_t old, uint32_t cap, size_t elem,
		bool zero)
{
	void *p;

	memcpy(&p, parr, sizeof(p));
	p = realloc(p, (size_t)cap * elem);
	if (!p)
		return -ENOMEM;
	if (zero)
		memset((char *)p + (size_t)old * elem, 0,
		       (size_t)(cap - old) * elem);
	memcpy(parr, &p, sizeof(p));
	return 0;
}

/* Grows the per-node scratch to the topology's current size. mark and
 * done start at 0, an epoch never used. */
static int fit(struct imc_mtree *mt)
{
	uint32_t n = mt->topo->nnodes, old = mt->cap, cap = old;

	if (n <= cap)
		return 0;
	while (cap < n)
		cap = cap ? (cap > UINT32_MAX / 2 ? n : cap * 2) : 64;
	if (cap < n)
		cap = n;
	if (grow(&mt->mark, old, cap, sizeof(*mt->mark), true) ||
	    grow(&mt->parent, old, cap, sizeof(*mt->parent), false) ||
	    grow(&mt->pport, old, cap, sizeof(*mt->pport), false) ||
	    grow(&mt->queue, old, cap, sizeof(*mt->queue), false) ||
	    grow(&mt->frag, old, cap, sizeof(*mt->frag), false) ||
	    grow(&mt->done, old, cap, sizeof(*mt->done), true))
		return -ENOMEM;
	mt->cap = cap;
	return 0;
}

static uint32_t next_epoch(struct imc_mtree *mt)
{
	if (++mt->epoch == 0) {
		memset(mt->mark, 0, (size_t)mt->cap * sizeof(*mt->mark));
		mt->epoch = 1;
	}
	return mt->epoch;
}

static void next_done_epoch(struct imc_mtree *mt)
{
	if (++mt->done_epoch == 0) {
		memset(mt->done, 0, (size_t)mt->cap * sizeof(*mt->done));
		mt->done_epoch = 1;
	}
}

/* Room for n more touched switches. */
static int touch_reserve(struct imc_mtree *mt, size_t n)
{
	size_t cap = mt->touched_cap;
	uint32_t *p;

	if (mt->ntouched + n <= cap)
		return 0;
	while (cap < mt->ntouched + n)
		cap = cap ? cap * 2 : 64;
	p = realloc(mt->touched, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	mt->touched = p;
	mt->touched_cap = cap;
	return 0;
}

/* ---- groups ---- */

static struct group *group_of(const struct imc_mtree *mt, uint16_t mlid)
{
	return mt->group[mlid - IMC_MLID_MIN];
}

static void group_free(struct imc_mtree *mt, struct group *g)
{
	mt->group[g->mlid - IMC_MLID_MIN] = NULL;
	mt->st.groups--;
	mt->st.members -= imc_htab_count(&g->mem);
	mt->st.tree_switches -= imc_htab_count(&g->sw);
	sw_free(&g->sw);
	tab_free(&g->mem, offsetof(struct mem, hn));
	free(g);
}

static void entry(const struct imc_htab *t, uint32_t node,
		  struct imc_mtree_mask *out)
{
	const struct tsw *r = sw_find(t, node);

	memset(out, 0, sizeof(*out));
	if (r)
		mask_or(out, &r->members, &r->edges);
}

/* Reports the current entry of every touched switch, in touch order. */
static void report(struct imc_mtree *mt, const struct group *g)
{
	for (size_t i = 0; i < mt->ntouched; i++) {
		struct imc_mtree_mask m;

		entry(&g->sw, mt->touched[i], &m);
		mt->ops.mft_set(mt->ctx, mt->touched[i], g->mlid, &m);
	}
}

/* Where node:port hangs off the switches now: the switch and its port
 * toward the member. False when the member is off the tree. */
static bool attach(const struct imc_mtree *mt, uint32_t node, unsigned port,
		   uint32_t *sw, unsigned *swport)
{
	const struct imc_topo *t = mt->topo;
	const struct imc_topo_port *tp;

	if (t->node[node].type == IMC_NODE_SWITCH) {
		*sw = node;
		*swport = 0;
		return true;
	}
	tp = &t->node[node].port[port];
	if (tp->peer == IMC_TOPO_NONE || !is_switch(t, tp->peer) ||
	    !link_up(mt, node, port))
		return false;
	*sw = tp->peer;
	*swport = tp->peer_port;
	return true;
}

/* Breadth first from the nsrc switches in src over switch cables that
 * are up, each switch's ports in increasing order, until it reaches a
 * switch of tab; with excl, switches already in a finished fragment
 * (done[] == the done epoch) neither count nor lead on. Sources get no
 * parent; every other switch reached gets parent and pport. Returns the
 * switch met or IMC_TOPO_NONE. */
static uint32_t search(struct imc_mtree *mt, const struct imc_htab *tab,
		       const uint32_t *src, size_t nsrc, bool excl)
{
	const struct imc_topo *t = mt->topo;
	uint32_t epoch = next_epoch(mt);
	size_t head = 0, tail = 0;

	for (size_t i = 0; i < nsrc; i++) {
		mt->mark[src[i]] = epoch;
		mt->parent[src[i]] = IMC_TOPO_NONE;
		mt->queue[tail++] = src[i];
	}
	while (head < tail) {
		uint32_t u = mt->queue[head++];
		const struct imc_topo_node *un = &t->node[u];

		mt->st.search_visits++;
		for (unsigned p = 1; p <= un->nports; p++) {
			uint32_t v = un->port[p].peer;

			if (v == IMC_TOPO_NONE || t->node[v].type !=
			    IMC_NODE_SWITCH || mt->mark[v] == epoch ||
			    !link_up(mt, u, p))
				continue;
			mt->mark[v] = epoch;
			mt->parent[v] = u;
			mt->pport[v] = (uint8_t)p;
			if (sw_find(tab, v)) {
				if (!excl || mt->done[v] != mt->done_epoch)
					return v;
				continue;
			}
			mt->queue[tail++] = v;
		}
	}
	return IMC_TOPO_NONE;
}

/* Cables on the path search() found from a source to meet. */
static uint32_t path_len(const struct imc_mtree *mt, uint32_t meet)
{
	uint32_t len = 0;

	for (uint32_t v = meet; mt->parent[v] != IMC_TOPO_NONE;
	     v = mt->parent[v])
		len++;
	return len;
}

/* Adds the edges of that path to tab, which must have room for len + 1
 * new records. With out, writes the switches after the source into
 * out[0..len), source side first. */
static void link_path(struct imc_mtree *mt, struct imc_htab *tab, uint32_t meet,
		      uint32_t len, uint32_t *out)
{
	const struct imc_topo *t = mt->topo;

	/* v is reached from u = parent[v] by u's port pport[v]. */
	for (uint32_t v = meet, k = 0; mt->parent[v] != IMC_TOPO_NONE; k++) {
		uint32_t u = mt->parent[v];
		unsigned up = mt->pport[v];
		unsigned vp = t->node[u].port[up].peer_port;
		struct tsw *r;

		r = sw_get(mt, tab, v);
		mask_set(&r->edges, vp);
		r->nedges++;
		r = sw_get(mt, tab, u);
		mask_set(&r->edges, up);
		r->nedges++;
		if (out)
			out[len - 1 - k] = v;
		v = u;
	}
}

/* Puts member port swport of switch sw on the trees in tab, grafting sw
 * by a shortest path when it is not on them; when touch, records the
 * switches changed, sw first. Returns the number changed or -ENOMEM
 * (tab unchanged then). */
static int graft(struct imc_mtree *mt, struct imc_htab *tab, uint32_t sw,
		 unsigned swport, bool touch)
{
	uint32_t meet = IMC_TOPO_NONE, len = 0;
	struct tsw *r;
	int err;

	if (tab->n && !sw_find(tab, sw))
		meet = search(mt, tab, &sw, 1, false);
	if (meet != IMC_TOPO_NONE)
		len = path_len(mt, meet);
	/* Reserve everything first so that failure leaves tab as it was. */
	err = sw_reserve(mt, tab, len + 1);
	if (err)
		return err;
	if (touch) {
		err = touch_reserve(mt, len + 1);
		if (err)
			return err;
		mt->touched[mt->ntouched++] = sw;
	}
	r = sw_get(mt, tab, sw);
	if (!imc_mtree_mask_test(&r->members, swport)) {
		mask_set(&r->members, swport);
		r->nmembers++;
	}
	if (meet != IMC_TOPO_NONE)
		link_path(mt, tab, meet, len,
			  touch ? mt->touched + mt->ntouched : NULL);
	if (touch)
		mt->ntouched += len;
	return (int)len + 1;
}

/* Removes sw from tab while it has no member port and at most one tree
 * edge, walking on to its neighbour, so that no branch leads nowhere;
 * when touch, records each neighbour changed. Returns the edges cut. */
static uint32_t drop(struct imc_mtree *mt, struct imc_htab *tab, uint32_t sw,
		     bool touch)
{
	const struct imc_topo *t = mt->topo;
	struct tsw *r = sw_find(tab, sw);
	uint32_t cut = 0;

	while (r && r->nmembers == 0 && r->nedges <= 1) {
		unsigned p = r->nedges ? mask_first(&r->edges) : 0;

		sw_del(mt, tab, r);
		if (!p)
			break;
		r = sw_find(tab, t->node[sw].port[p].peer);
		if (!r)
			break;
		mask_clear(&r->edges, t->node[sw].port[p].peer_port);
		r->nedges--;
		cut++;
		sw = r->node;
		if (touch)
			mt->touched[mt->ntouched++] = sw;
	}
	return cut;
}

static int check(const struct imc_mtree *mt, uint16_t mlid, uint32_t node,
		 unsigned port)
{
	const struct imc_topo *t = mt->topo;

	if (!imc_lid_is_mcast(mlid) || node >= t->nnodes)
		return -EINVAL;
	if (t->node[node].type == IMC_NODE_SWITCH)
		return port == 0 ? 0 : -EINVAL;
	return port >= 1 && port <= t->node[node].nports ? 0 : -EINVAL;
}

/* Counts an add or a remove that wrote n entries. */
static void count_op(uint64_t *ops, uint64_t *entries, uint32_t *max, int n)
{
	(*ops)++;
	*entries += (uint64_t)n;
	if ((uint32_t)n > *max)
		*max = (uint32_t)n;
}

/* ---- API ---- */

int imc_mtree_create(const struct imc_topo *topo,
		     const struct imc_mtree_ops *ops, void *ctx,
		     struct imc_mtree **out)
{
	struct imc_mtree *mt;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!topo || !ops || !ops->mft_set)
		return -EINVAL;
	mt = calloc(1, sizeof(*mt));
	if (!mt)
		return -ENOMEM;
	mt->topo = topo;
	mt->ops = *ops;
	mt->ctx = ctx;
	if (fit(mt)) {
		imc_mtree_destroy(mt);
		return -ENOMEM;
	}
	*out = mt;
	return 0;
}

void imc_mtree_destroy(struct imc_mtree *mt)
{
	if (!mt)
		return;
	for (size_t i = 0; i < NMLID; i++)
		if (mt->group[i])
			group_free(mt, mt->group[i]);
	free(mt->mark);
	free(mt->parent);
	free(mt->pport);
	free(mt->queue);
	free(mt->frag);
	free(mt->done);
	free(mt->touched);
	while (mt->spare) {
		struct imc_hnode *n = mt->spare;

		mt->spare = n->next;
		free(imc_container_of(n, struct tsw, hn));
	}
	free(mt);
}

int imc_mtree_add(struct imc_mtree *mt, uint16_t mlid, uint32_t node,
		  unsigned port)
{
	uint64_t key = mem_key(node, port);
	struct group *g;
	struct mem *m;
	uint32_t sw = IMC_TOPO_NONE;
	unsigned swport = 0;
	bool on;
	int n = 0, err;

	err = check(mt, mlid, node, port);
	if (err)
		return err;
	err = fit(mt);
	if (err)
		return err;
	g = group_of(mt, mlid);
	if (g && mem_find(&g->mem, key))
		return -EEXIST;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		g->mlid = mlid;
		mt->group[mlid - IMC_MLID_MIN] = g;
		mt->st.groups++;
	}
	m = malloc(sizeof(*m));
	err = m ? tab_open(&g->mem) : -ENOMEM;
	if (err)
		goto fail;

	on = attach(mt, node, port, &sw, &swport);
	mt->ntouched = 0;
	if (on) {
		uint32_t before = imc_htab_count(&g->sw);

		n = graft(mt, &g->sw, sw, swport, true);
		if (n < 0) {
			err = n;
			goto fail;
		}
		mt->st.tree_switches += imc_htab_count(&g->sw) - before;
		g->edges += n - 1;
		g->attached++;
	}
	m->key = key;
	imc_htab_insert(&g->mem, &m->hn, tab_hash(key));
	m->sw = on ? sw : IMC_TOPO_NONE;
	m->swport = (uint8_t)swport;
	mt->st.members++;
	report(mt, g);

	count_op(&mt->st.adds, &mt->st.add_entries, &mt->st.max_add_entries,
		 n);
	return n;
fail:
	free(m);
	if (!imc_htab_count(&g->mem))
		group_free(mt, g);
	return err;
}

int imc_mtree_remove(struct imc_mtree *mt, uint16_t mlid, uint32_t node,
		     unsigned port)
{
	struct group *g;
	struct mem *m;
	uint32_t before;
	int err, n = 0;

	err = check(mt, mlid, node, port);
	if (err)
		return err;
	g = group_of(mt, mlid);
	m = g ? mem_find(&g->mem, mem_key(node, port)) : NULL;
	if (!m)
		return -ENOENT;
	mt->ntouched = 0;
	before = imc_htab_count(&g->sw);
	if (m->sw != IMC_TOPO_NONE) {
		struct tsw *r = sw_find(&g->sw, m->sw);

		/* A prune touches each tree switch at most once. */
		err = touch_reserve(mt, imc_htab_count(&g->sw) + 1);
		if (err)
			return err;
		mt->touched[mt->ntouched++] = m->sw;
		if (r && imc_mtree_mask_test(&r->members, m->swport)) {
			mask_clear(&r->members, m->swport);
			r->nmembers--;
		}
		g->edges -= drop(mt, &g->sw, m->sw, true);
		g->attached--;
		n = (int)mt->ntouched;
	}
	mt->st.tree_switches -= before - imc_htab_count(&g->sw);
	mem_del(&g->mem, m);
	mt->st.members--;
	report(mt, g);
	if (!imc_htab_count(&g->mem))
		group_free(mt, g);

	count_op(&mt->st.removes, &mt->st.remove_entries,
		 &mt->st.max_remove_entries, n);
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The switches of tab in increasing order, appended to touched. */
static int collect(struct imc_mtree *mt, const struct imc_htab *tab)
{
	const struct imc_hnode *n;
	size_t start = mt->ntouched, pos;
	int err = touch_reserve(mt, imc_htab_count(tab));

	if (err)
		return err;
	imc_htab_foreach(n, pos, tab)
		mt->touched[mt->ntouched++] =
			imc_container_of(n, const struct tsw, hn)->node;
	qsort(mt->touched + start, mt->ntouched - start, sizeof(uint32_t),
	      cmp_u32);
	return 0;
}

int imc_mtree_clear(struct imc_mtree *mt, uint16_t mlid)
{
	struct group *g;
	int err, n;

	if (!imc_lid_is_mcast(mlid))
		return -EINVAL;
	g = group_of(mt, mlid);
	if (!g)
		return 0;
	mt->ntouched = 0;
	err = collect(mt, &g->sw);
	if (err)
		return err;
	n = (int)mt->ntouched;
	for (size_t i = 0; i < mt->ntouched; i++) {
		static const struct imc_mtree_mask none;

		mt->ops.mft_set(mt->ctx, mt->touched[i], mlid, &none);
	}
	group_free(mt, g);
	mt->st.clears++;
	mt->st.remove_entries += (uint64_t)n;
	return n;
}

/* Member attachments computed by a rebuild, before they are kept. */
struct placed {
	uint64_t key;
	struct mem *m;        /* the member's record, found once by gather */
	uint32_t sw;          /* IMC_TOPO_NONE: off the tree */
	uint8_t swport;
};

static int cmp_placed(const void *a, const void *b)
{
	uint64_t x = ((const struct placed *)a)->key;
	uint64_t y = ((const struct placed *)b)->key;

	return x < y ? -1 : x > y;
}

/* The members of g in increasing (node, port) order with the switch
 * each hangs off now. Returns how many. */
static uint32_t gather(const struct imc_mtree *mt, struct group *g,
		       struct placed *pl)
{
	struct imc_hnode *n;
	uint32_t nm = 0;
	size_t pos;

	imc_htab_foreach(n, pos, &g->mem) {
		pl[nm].m = imc_container_of(n, struct mem, hn);
		pl[nm].key = pl[nm].m->key;
		nm++;
	}
	qsort(pl, nm, sizeof(*pl), cmp_placed);
	for (uint32_t i = 0; i < nm; i++) {
		uint32_t node = (uint32_t)(pl[i].key >> 8), sw;
		unsigned port = (unsigned)(pl[i].key & 0xff), swport;

		pl[i].sw = IMC_TOPO_NONE;
		pl[i].swport = 0;
		if (attach(mt, node, port, &sw, &swport)) {
			pl[i].sw = sw;
			pl[i].swport = (uint8_t)swport;
		}
	}
	return nm;
}

/* Reports every entry that differs between g's tree and nt, in switch
 * order, then makes nt g's tree and pl its members' attachments.
 * Returns the number reported or -ENOMEM (g unchanged, nt freed). */
static int commit(struct imc_mtree *mt, struct group *g, struct imc_htab *nt,
		  const struct placed *pl, uint32_t nm)
{
	const struct imc_hnode *e;
	uint32_t attached = 0, ends = 0;
	size_t pos;
	int n = 0, err;

	mt->ntouched = 0;
	err = collect(mt, &g->sw);
	if (!err)
		err = collect(mt, nt);
	if (err) {
		sw_free(nt);
		return err;
	}
	qsort(mt->touched, mt->ntouched, sizeof(uint32_t), cmp_u32);
	for (size_t i = 0; i < mt->ntouched; i++) {
		struct imc_mtree_mask a, b;
		uint32_t sw = mt->touched[i];

		if (i && mt->touched[i - 1] == sw)
			continue;
		entry(&g->sw, sw, &a);
		entry(nt, sw, &b);
		if (memcmp(&a, &b, sizeof(a))) {
			mt->ops.mft_set(mt->ctx, sw, g->mlid, &b);
			n++;
		}
	}
	for (uint32_t i = 0; i < nm; i++) {
		struct mem *m = pl[i].m;

		m->sw = pl[i].sw;
		m->swport = pl[i].swport;
		attached += pl[i].sw != IMC_TOPO_NONE;
	}
	imc_htab_foreach(e, pos, nt)
		ends += imc_container_of(e, const struct tsw, hn)->nedges;
	mt->st.tree_switches = mt->st.tree_switches -
			       imc_htab_count(&g->sw) + imc_htab_count(nt);
	sw_free(&g->sw);
	g->sw = *nt;
	g->attached = attached;
	g->edges = ends / 2;
	return n;
}

/* A fresh tree: members grafted one by one in (node, port) order. */
static int rebuild(struct imc_mtree *mt, struct group *g, struct placed *pl)
{
	struct imc_htab nt = { 0 };
	uint32_t nm = gather(mt, g, pl);

	for (uint32_t i = 0; i < nm; i++) {
		int len;

		if (pl[i].sw == IMC_TOPO_NONE)
			continue;
		len = graft(mt, &nt, pl[i].sw, pl[i].swport, false);
		if (len < 0) {
			sw_free(&nt);
			return len;
		}
	}
	return commit(mt, g, &nt, pl, nm);
}

/* Cuts the tree edge at port p of switch r->node and its other end. */
static void cut_edge(const struct imc_mtree *mt, struct imc_htab *tab,
		     struct tsw *r, unsigned p)
{
	const struct imc_topo_port *tp = &mt->topo->node[r->node].port[p];
	struct tsw *o;

	mask_clear(&r->edges, p);
	r->nedges--;
	o = sw_find(tab, tp->peer);
	if (o && imc_mtree_mask_test(&o->edges, tp->peer_port)) {
		mask_clear(&o->edges, tp->peer_port);
		o->nedges--;
	}
}

/* Marks the fragment of tab holding sw (the switches its tree edges
 * join) as done and lists it in mt->frag. Returns its size. */
static size_t fragment(struct imc_mtree *mt, const struct imc_htab *tab,
		       uint32_t sw)
{
	const struct imc_topo *t = mt->topo;
	uint32_t epoch = next_epoch(mt);
	size_t head = 0, tail = 0;

	mt->mark[sw] = epoch;
	mt->frag[tail++] = sw;
	while (head < tail) {
		const struct tsw *r = sw_find(tab, mt->frag[head++]);

		mt->done[r->node] = mt->done_epoch;
		for (unsigned w = 0; w < 4; w++)
			for (uint64_t b = r->edges.bits[w]; b; b &= b - 1) {
				unsigned p = w * 64 +
					     (unsigned)__builtin_ctzll(b);
				uint32_t v = t->node[r->node].port[p].peer;

				if (mt->mark[v] == epoch)
					continue;
				mt->mark[v] = epoch;
				mt->frag[tail++] = v;
			}
	}
	return tail;
}

/* Members whose port moved come off the switch they were on. */
static void unplace_moved(struct imc_htab *nt, const struct placed *pl,
			  uint32_t nm)
{
	for (uint32_t i = 0; i < nm; i++) {
		const struct mem *m = pl[i].m;
		struct tsw *r;

		if (m->sw == IMC_TOPO_NONE ||
		    (m->sw == pl[i].sw && m->swport == pl[i].swport))
			continue;
		r = sw_find(nt, m->sw);
		if (r && imc_mtree_mask_test(&r->members, m->swport)) {
			mask_clear(&r->members, m->swport);
			r->nmembers--;
		}
	}
}

/* Cuts the edges of the nsw touched switches over cables that are down,
 * then prunes the branches left dead. */
static void cut_down(struct imc_mtree *mt, struct imc_htab *nt, size_t nsw)
{
	for (size_t i = 0; i < nsw; i++) {
		struct tsw *r = sw_find(nt, mt->touched[i]);

		for (unsigned w = 0; w < 4; w++)
			for (uint64_t b = r->edges.bits[w]; b; b &= b - 1) {
				unsigned p = w * 64 +
					     (unsigned)__builtin_ctzll(b);

				if (!link_up(mt, r->node, p))
					cut_edge(mt, nt, r, p);
			}
	}
	for (size_t i = 0; i < nsw; i++)
		drop(mt, nt, mt->touched[i], false);
}

/* Joins the fragments that can reach each other by shortest paths,
 * lowest switch's fragment first. */
static int join_fragments(struct imc_mtree *mt, struct imc_htab *nt, size_t nsw)
{
	size_t left = 0;
	int err;

	/* Count the fragments first: with one left (the usual case) there
	 * is nothing to join and no search over the fabric. */
	next_done_epoch(mt);
	for (size_t i = 0; i < nsw; i++) {
		uint32_t sw = mt->touched[i];

		if (sw_find(nt, sw) && mt->done[sw] != mt->done_epoch) {
			fragment(mt, nt, sw);
			left++;
		}
	}
	next_done_epoch(mt);
	for (size_t i = 0; i < nsw && left > 1; i++) {
		uint32_t sw = mt->touched[i];

		if (!sw_find(nt, sw) || mt->done[sw] == mt->done_epoch)
			continue;
		/* Join the nearest other fragment while there is one. */
		for (;;) {
			size_t nf = fragment(mt, nt, sw);
			uint32_t meet, len;

			if (left <= 1)
				break;
			meet = search(mt, nt, mt->frag, nf, true);
			if (meet == IMC_TOPO_NONE)
				break;
			len = path_len(mt, meet);
			err = sw_reserve(mt, nt, len + 1);
			if (err)
				return err;
			link_path(mt, nt, meet, len, NULL);
			left--;
		}
		left--;
	}
	return 0;
}

/* Members that moved and found a switch are grafted on there. */
static int graft_moved(struct imc_mtree *mt, struct imc_htab *nt,
		       const struct placed *pl, uint32_t nm)
{
	for (uint32_t i = 0; i < nm; i++) {
		const struct mem *m = pl[i].m;
		int len;

		if (pl[i].sw == IMC_TOPO_NONE ||
		    (m->sw == pl[i].sw && m->swport == pl[i].swport))
			continue;
		len = graft(mt, nt, pl[i].sw, pl[i].swport, false);
		if (len < 0)
			return len;
	}
	return 0;
}

/* The tree kept where it still works: members that moved come off, edges
 * over cables that are down are cut, dead branches pruned, fragments
 * that can reach each other joined by shortest paths (lowest switch's
 * fragment first), then members that found a switch grafted on. */
static int repair(struct imc_mtree *mt, struct group *g, struct placed *pl)
{
	struct imc_htab nt;
	uint32_t nm = gather(mt, g, pl);
	int err;

	err = sw_copy(&nt, &g->sw);
	if (err)
		return err;
	unplace_moved(&nt, pl, nm);
	mt->ntouched = 0;
	err = collect(mt, &nt);
	if (!err) {
		/* The switches collect touched, as it left them. */
		size_t nsw = mt->ntouched;

		cut_down(mt, &nt, nsw);
		err = join_fragments(mt, &nt, nsw);
	}
	if (!err)
		err = graft_moved(mt, &nt, pl, nm);
	if (err) {
		sw_free(&nt);
		return err;
	}
	return commit(mt, g, &nt, pl, nm);
}

/* Runs fn over every MLID in increasing order; on success counts the
 * run in *runs and the entries it wrote in rebuild_entries. */
static int for_all(struct imc_mtree *mt,
		   int (*fn)(struct imc_mtree *, struct group *,
			     struct placed *),
		   uint64_t *runs)
{
	struct placed *pl = NULL;
	size_t plcap = 0;
	int total = 0, err;

	err = fit(mt);
	if (err)
		return err;
	for (size_t i = 0; i < NMLID; i++) {
		struct group *g = mt->group[i];
		int n;

		if (!g)
			continue;
		if (imc_htab_count(&g->mem) > plcap) {
			free(pl);
			plcap = imc_htab_count(&g->mem);
			pl = malloc(plcap * sizeof(*pl));
			if (!pl)
				return -ENOMEM;
		}
		n = fn(mt, g, pl);
		if (n < 0) {
			free(pl);
			return n;
		}
		total += n;
	}
	free(pl);
	(*runs)++;
	mt->st.rebuild_entries += (uint64_t)total;
	return total;
}

int imc_mtree_rebuild_all(struct imc_mtree *mt)
{
	return for_all(mt, rebuild, &mt->st.rebuilds);
}

int imc_mtree_repair_all(struct imc_mtree *mt)
{
	return for_all(mt, repair, &mt->st.repairs);
}

int imc_mtree_entry(const struct imc_mtree *mt, uint16_t mlid, uint32_t sw,
		    struct imc_mtree_mask *out)
{
	const struct group *g;

	if (!imc_lid_is_mcast(mlid) || !is_switch(mt->topo, sw))
		return -EINVAL;
	g = group_of(mt, mlid);
	memset(out, 0, sizeof(*out));
	if (g)
		entry(&g->sw, sw, out);
	return 0;
}

bool imc_mtree_is_member(const struct imc_mtree *mt, uint16_t mlid,
			 uint32_t node, unsigned port)
{
	const struct group *g;

	if (check(mt, mlid, node, port))
		return false;
	g = group_of(mt, mlid);
	return g && mem_find(&g->mem, mem_key(node, port));
}

int imc_mtree_group_info(const struct imc_mtree *mt, uint16_t mlid,
			 struct imc_mtree_group_info *out)
{
	const struct group *g;

	if (!imc_lid_is_mcast(mlid))
		return -EINVAL;
	g = group_of(mt, mlid);
	if (!g)
		return -ENOENT;
	out->members = imc_htab_count(&g->mem);
	out->attached = g->attached;
	out->switches = imc_htab_count(&g->sw);
	out->edges = g->edges;
	out->parts = imc_htab_count(&g->sw) - g->edges;
	return 0;
}

void imc_mtree_stats(const struct imc_mtree *mt, struct imc_mtree_stats *out)
{
	*out = mt->st;
}
