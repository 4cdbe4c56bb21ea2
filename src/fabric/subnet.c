/* Minimal subnet manager: link state, LID assignment and min-hop routing.
 *
 * Per-port state lives in flat arrays indexed by a port slot: node n's
 * port p is slot base[n] + p. LID ownership is an array indexed by LID.
 *
 * Routing (imc_subnet_route) works on switch indices 0..nsw-1 (switches
 * in node order):
 *  1. discover what the SM reaches, as for LID assignment;
 *  2. take a snapshot of every LID: the switch it hangs from (itself, or
 *     the switch an HCA port is cabled to) and how many hops past it;
 *  3. one BFS per switch over the switch graph gives the hop matrix
 *     dist[a][b] (symmetric, so BFS from b fills row b);
 *  4. per switch S, the ports on shortest paths toward every switch D
 *     (port p to neighbour T qualifies when dist[T][D] + 1 == dist[S][D])
 *     as a bit mask per D, masks grouped into classes of equal port sets;
 *     then each LID, HCA LIDs first, takes the least loaded port of its
 *     D's class (OpenSM minhop balancing).
 * Cost: O(nsw * links) for the BFSs and masks, O(nsw * LIDs) amortized for
 * the choices; memory nsw^2 + nsw * LIDs bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/subnet.h"
#include "util/hash.h"
#include "util/vec.h"

#define NONE UINT32_MAX
#define NOHOP 255
#define MAX_SW_HOPS 253     /* switch to switch, so that switch to HCA <= 254 */
#define NLIDS (IMC_LID_UNICAST_MAX + 1)

enum dest_kind {
	DEST_NONE,          /* unassigned, or its port not reached */
	DEST_SWITCH,        /* a switch's port 0 */
	DEST_HCA_SW,        /* an HCA port cabled to a switch */
	DEST_HCA_DIRECT,    /* an HCA port cabled to an HCA (the SM's) */
};

/* What routing knew about a LID. */
struct dest {
	uint32_t node;      /* holder */
	uint32_t sw;        /* switch index it hangs from, if any */
	uint8_t port;       /* holder's port */
	uint8_t swport;     /* DEST_HCA_SW: the switch's port to it */
	uint8_t kind;       /* enum dest_kind */
};

struct imc_subnet {
	const struct imc_topo *topo;
	uint32_t sm_node;
	uint8_t sm_port;

	/* per port, for nodes 0..nnodes-1 */
	uint32_t nnodes;
	uint32_t *base;         /* nnodes + 1 entries */
	uint8_t *down;          /* cable set down */
	uint16_t *lid;          /* 0: none; a switch's is in its port 0 slot */

	/* per LID */
	uint32_t *owner_node;   /* NONE: free */
	uint8_t *owner_port;
	uint16_t max_lid;
	uint16_t free_hint;     /* no free LID below it */

	/* the last route */
	uint32_t rnodes;        /* nodes covered by sw_of */
	uint32_t *sw_of;        /* node -> switch index, NONE for an HCA */
	uint32_t nsw;
	uint32_t *sw_node;      /* switch index -> node */
	uint8_t *reached;       /* per switch index */
	uint8_t *dist;          /* nsw x nsw */
	uint8_t *lft;           /* nsw x stride */
	size_t stride;
	struct dest *dest;      /* stride entries */
	/* the LIDs' and the last route's counts */
	struct imc_subnet_stats st;
};

static const struct imc_topo_port *tport(const struct imc_subnet *s,
					 uint32_t node, unsigned port)
{
	return &s->topo->node[node].port[port];
}

static bool is_switch(const struct imc_subnet *s, uint32_t node)
{
	return s->topo->node[node].type == IMC_NODE_SWITCH;
}

static bool valid_node(const struct imc_subnet *s, uint32_t node)
{
	return node < s->topo->nnodes;
}

static bool valid_port(const struct imc_subnet *s, uint32_t node,
		       unsigned port)
{
	return valid_node(s, node) && port <= s->topo->node[node].nports;
}

static bool cabled(const struct imc_subnet *s, uint32_t node, unsigned port)
{
	return port >= 1 && tport(s, node, port)->peer != IMC_TOPO_NONE;
}

/* Cabled and not set down; ports of nodes added since the last sync have
 * never been set down. */
static bool up(const struct imc_subnet *s, uint32_t node, unsigned port)
{
	if (!cabled(s, node, port))
		return false;
	return node >= s->nnodes || !s->down[s->base[node] + port];
}

/* Extends the per-port arrays to nodes added to the topology since. */
static int sync_nodes(struct imc_subnet *s)
{
	const struct imc_topo *t = s->topo;
	uint32_t n = t->nnodes, old = s->nnodes;
	uint32_t oldslots = s->base[old], slots = oldslots;

	if (n <= old)
		return 0;
	for (uint32_t i = old; i < n; i++)
		slots += t->node[i].nports + 1u;
	if (IMC_VEC_RESIZE(&s->base, (size_t)n + 1) ||
	    IMC_VEC_RESIZE(&s->down, slots) || IMC_VEC_RESIZE(&s->lid, slots))
		return -ENOMEM;
	for (uint32_t i = old; i < n; i++)
		s->base[i + 1] = s->base[i] + t->node[i].nports + 1u;
	memset(s->down + oldslots, 0, slots - oldslots);
	memset(s->lid + oldslots, 0, (slots - oldslots) * sizeof(*s->lid));
	s->nnodes = n;
	return 0;
}

static void route_clear(struct imc_subnet *s)
{
	free(s->sw_of);
	free(s->sw_node);
	free(s->reached);
	free(s->dist);
	free(s->lft);
	free(s->dest);
	s->sw_of = s->sw_node = NULL;
	s->reached = s->dist = s->lft = NULL;
	s->dest = NULL;
	s->rnodes = s->nsw = 0;
	s->stride = 0;
	s->st.routable_lids = s->st.switches_routed = s->st.max_hops = 0;
	s->st.routes = 0;
}

int imc_subnet_create(const struct imc_topo *topo, struct imc_subnet **out)
{
	struct imc_subnet *s;
	int err;

	if (!topo || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->topo = topo;
	s->sm_node = NONE;
	if (topo->sm_node != IMC_TOPO_NONE) {
		if (topo->sm_node >= topo->nnodes)
			goto inval;
		if (is_switch(s, topo->sm_node)) {
			s->sm_node = topo->sm_node;
			s->sm_port = 0;
		} else {
			if (topo->sm_port < 1 ||
			    topo->sm_port > topo->node[topo->sm_node].nports)
				goto inval;
			s->sm_node = topo->sm_node;
			s->sm_port = topo->sm_port;
		}
	}
	s->base = calloc(1, sizeof(*s->base));
	s->owner_node = malloc(NLIDS * sizeof(*s->owner_node));
	s->owner_port = calloc(NLIDS, sizeof(*s->owner_port));
	if (!s->base || !s->owner_node || !s->owner_port) {
		imc_subnet_destroy(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < NLIDS; i++)
		s->owner_node[i] = NONE;
	s->free_hint = 1;
	err = sync_nodes(s);
	if (err) {
		imc_subnet_destroy(s);
		return err;
	}
	*out = s;
	return 0;
inval:
	free(s);
	return -EINVAL;
}

void imc_subnet_destroy(struct imc_subnet *s)
{
	if (!s)
		return;
	route_clear(s);
	free(s->base);
	free(s->down);
	free(s->lid);
	free(s->owner_node);
	free(s->owner_port);
	free(s);
}

int imc_subnet_sm_set(struct imc_subnet *s, uint32_t node, unsigned port)
{
	if (!s || !valid_port(s, node, port))
		return -EINVAL;
	if (is_switch(s, node) ? port != 0 : port == 0)
		return -EINVAL;
	s->sm_node = node;
	s->sm_port = (uint8_t)port;
	return 0;
}

int imc_subnet_link_set(struct imc_subnet *s, uint32_t node, unsigned port,
			bool is_up)
{
	const struct imc_topo_port *tp;
	int err;

	if (!s || !valid_port(s, node, port) || !cabled(s, node, port))
		return -EINVAL;
	err = sync_nodes(s);
	if (err)
		return err;
	tp = tport(s, node, port);
	/* One cable: its two ports go up and down together. */
	s->down[s->base[node] + port] = !is_up;
	s->down[s->base[tp->peer] + tp->peer_port] = !is_up;
	return 0;
}

bool imc_subnet_link_up(const struct imc_subnet *s, uint32_t node,
			unsigned port)
{
	if (!s || !valid_port(s, node, port))
		return false;
	return up(s, node, port);
}

/* ---- discovery and LIDs ---- */

struct walk {
	uint32_t *found;        /* port slots in discovery order */
	uint32_t nfound;
	uint8_t *seen;          /* per slot */
	uint32_t *queue;        /* switches */
	uint32_t head, tail;
};

static void walk_free(struct walk *w)
{
	free(w->found);
	free(w->seen);
	free(w->queue);
}

static void reach(const struct imc_subnet *s, struct walk *w, uint32_t node,
		  unsigned port)
{
	uint32_t slot;

	if (is_switch(s, node)) {
		slot = s->base[node];
		if (w->seen[slot])
			return;
		w->queue[w->tail++] = node;
	} else {
		slot = s->base[node] + port;
		if (w->seen[slot])
			return;
	}
	w->seen[slot] = 1;
	w->found[w->nfound++] = slot;
}

/* Breadth first from the SM port over cables that are up, through
 * switches only: channel adapters do not forward directed-route SMPs
 * (IBA 14.2.2), so each HCA port is found over its own cable. */
static int discover(const struct imc_subnet *s, struct walk *w)
{
	uint32_t slots = s->base[s->nnodes];
	const struct imc_topo_port *tp;

	memset(w, 0, sizeof(*w));
	w->found = malloc(((size_t)slots + 1) * sizeof(*w->found));
	w->seen = calloc((size_t)slots + 1, 1);
	w->queue = malloc(((size_t)s->nnodes + 1) * sizeof(*w->queue));
	if (!w->found || !w->seen || !w->queue) {
		walk_free(w);
		return -ENOMEM;
	}
	if (is_switch(s, s->sm_node)) {
		reach(s, w, s->sm_node, 0);
	} else if (up(s, s->sm_node, s->sm_port)) {
		/* An SM whose port is down sweeps nothing. */
		reach(s, w, s->sm_node, s->sm_port);
		tp = tport(s, s->sm_node, s->sm_port);
		reach(s, w, tp->peer, tp->peer_port);
	}
	while (w->head < w->tail) {
		uint32_t x = w->queue[w->head++];
		unsigned n = s->topo->node[x].nports;

		for (unsigned p = 1; p <= n; p++) {
			if (!up(s, x, p))
				continue;
			tp = tport(s, x, p);
			reach(s, w, tp->peer, tp->peer_port);
		}
	}
	return 0;
}

/* Node and port of a slot, by binary search over base. */
static void slot_port(const struct imc_subnet *s, uint32_t slot,
		      uint32_t *node, unsigned *port)
{
	uint32_t lo = 0, hi = s->nnodes;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->base[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	*node = lo;
	*port = slot - s->base[lo];
}

static void lid_take(struct imc_subnet *s, uint16_t lid, uint32_t node,
		     unsigned port)
{
	s->owner_node[lid] = node;
	s->owner_port[lid] = (uint8_t)port;
	s->lid[s->base[node] + port] = lid;
	s->st.lids++;
	if (is_switch(s, node))
		s->st.switch_lids++;
	else
		s->st.hca_lids++;
	if (lid > s->max_lid)
		s->max_lid = lid;
}

static void lid_release(struct imc_subnet *s, uint16_t lid)
{
	uint32_t node = s->owner_node[lid];

	s->lid[s->base[node] + s->owner_port[lid]] = 0;
	s->owner_node[lid] = NONE;
	s->owner_port[lid] = 0;
	s->st.lids--;
	if (is_switch(s, node))
		s->st.switch_lids--;
	else
		s->st.hca_lids--;
	if (lid < s->free_hint)
		s->free_hint = lid;
	while (s->max_lid && s->owner_node[s->max_lid] == NONE)
		s->max_lid--;
}

/* The lowest free unicast LID, 0 when the range is full. */
static uint16_t lid_free(struct imc_subnet *s)
{
	uint32_t l = s->free_hint;

	while (l <= IMC_LID_UNICAST_MAX && s->owner_node[l] != NONE)
		l++;
	s->free_hint = (uint16_t)(l <= IMC_LID_UNICAST_MAX ? l : NLIDS);
	return l <= IMC_LID_UNICAST_MAX ? (uint16_t)l : 0;
}

int imc_subnet_assign_lids(struct imc_subnet *s)
{
	struct walk w;
	int err, given = 0;

	if (!s)
		return -EINVAL;
	if (s->sm_node == NONE)
		return -EINVAL;
	err = sync_nodes(s);
	if (!err)
		err = discover(s, &w);
	if (err)
		return err;
	for (uint32_t i = 0; i < w.nfound; i++) {
		uint32_t slot = w.found[i], node;
		unsigned port;
		uint16_t lid;

		if (s->lid[slot])
			continue;
		lid = lid_free(s);
		if (!lid) {
			err = -ENOSPC;
			break;
		}
		slot_port(s, slot, &node, &port);
		lid_take(s, lid, node, port);
		given++;
	}
	walk_free(&w);
	return err ? err : given;
}

int imc_subnet_lid_set(struct imc_subnet *s, uint32_t node, unsigned port,
		       uint16_t lid)
{
	uint32_t slot;
	int err;

	if (!s || !valid_port(s, node, port) || lid == 0 ||
	    lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	if (is_switch(s, node) ? port != 0 : port == 0)
		return -EINVAL;
	err = sync_nodes(s);
	if (err)
		return err;
	slot = s->base[node] + port;
	if (s->lid[slot] == lid)
		return 0;
	if (s->owner_node[lid] != NONE)
		return -EBUSY;
	if (s->lid[slot])
		lid_release(s, s->lid[slot]);
	lid_take(s, lid, node, port);
	return 0;
}

/* ---- routing ---- */

/* Switch adjacency over cables that are up, in port order. */
struct adj {
	uint32_t *off;          /* nsw + 1 */
	uint32_t *sw;
	uint8_t *port;
};

static void adj_free(struct adj *a)
{
	free(a->off);
	free(a->sw);
	free(a->port);
}

static int adj_build(const struct imc_subnet *s, struct adj *a)
{
	uint32_t n = 0;

	a->off = calloc((size_t)s->nsw + 1, sizeof(*a->off));
	if (!a->off)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nsw; i++) {
		uint32_t x = s->sw_node[i];

		a->off[i] = n;
		if (!s->reached[i])
			continue;
		for (unsigned p = 1; p <= s->topo->node[x].nports; p++)
			if (up(s, x, p) && is_switch(s, tport(s, x, p)->peer))
				n++;
	}
	a->off[s->nsw] = n;
	a->sw = malloc(((size_t)n + 1) * sizeof(*a->sw));
	a->port = malloc((size_t)n + 1);
	if (!a->sw || !a->port)
		return -ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < s->nsw; i++) {
		uint32_t x = s->sw_node[i];

		if (!s->reached[i])
			continue;
		for (unsigned p = 1; p <= s->topo->node[x].nports; p++) {
			const struct imc_topo_port *tp = tport(s, x, p);

			if (!up(s, x, p) || !is_switch(s, tp->peer))
				continue;
			a->sw[n] = s->sw_of[tp->peer];
			a->port[n] = (uint8_t)p;
			n++;
		}
	}
	return 0;
}

/* Fills dist row d by BFS from switch d. */
static int bfs(struct imc_subnet *s, const struct adj *a, uint32_t d,
	       uint32_t *queue)
{
	uint8_t *row = s->dist + (size_t)d * s->nsw;
	uint32_t head = 0, tail = 0;

	memset(row, NOHOP, s->nsw);
	row[d] = 0;
	queue[tail++] = d;
	while (head < tail) {
		uint32_t x = queue[head++];
		unsigned h = row[x] + 1u;

		for (uint32_t e = a->off[x]; e < a->off[x + 1]; e++) {
			uint32_t y = a->sw[e];

			if (row[y] != NOHOP)
				continue;
			if (h > MAX_SW_HOPS)
				return -ERANGE;
			row[y] = (uint8_t)h;
			queue[tail++] = y;
		}
	}
	return 0;
}

/* The distinct port sets of one switch's masks. Destinations whose
 * shortest paths leave by the same ports share a class, and each class
 * keeps where its search for the least loaded port stands, so that a
 * choice costs O(1) amortized instead of a scan of every candidate. */
struct classes {
	uint32_t *of;           /* per switch D: class, NONE: no port */
	uint32_t n;
	uint32_t *rep;          /* per class: a D with this mask */
	uint32_t *off;          /* per class: first of its ports; n + 1 */
	uint8_t *port;          /* ports of each class, ascending */
	uint32_t *lvl;          /* no port of the class carries fewer */
	uint32_t *cur;          /* its ports before cur carry more than lvl */
	struct imc_htab masks;  /* hn[c]: class c by its mask */
	struct imc_hnode *hn;
};

static void classes_free(struct classes *k)
{
	free(k->of);
	free(k->rep);
	free(k->off);
	free(k->port);
	free(k->lvl);
	free(k->cur);
	imc_htab_fini(&k->masks);
	free(k->hn);
}

static int classes_alloc(struct classes *k, uint32_t nsw, unsigned maxports)
{
	size_t n = (size_t)nsw + 1;

	k->of = malloc(n * sizeof(*k->of));
	k->rep = malloc(n * sizeof(*k->rep));
	k->off = malloc((n + 1) * sizeof(*k->off));
	k->port = malloc(n * (maxports + 1u));
	k->lvl = malloc(n * sizeof(*k->lvl));
	k->cur = malloc(n * sizeof(*k->cur));
	k->hn = malloc(n * sizeof(*k->hn));
	if (!k->of || !k->rep || !k->off || !k->port || !k->lvl || !k->cur ||
	    !k->hn || imc_htab_init(&k->masks, n))
		return -ENOMEM;
	return 0;
}

struct mask_key {
	const struct classes *k;
	const uint64_t *mask, *m;
	unsigned words;
};

static bool mask_eq(const struct imc_hnode *n, const void *key)
{
	const struct mask_key *x = key;
	uint32_t c = (uint32_t)(n - x->k->hn);

	return !memcmp(x->mask + (size_t)x->k->rep[c] * x->words, x->m,
		       x->words * sizeof(*x->m));
}

/* Groups the switch's destinations by mask (words 64-bit words each). */
static void classes_build(struct classes *k, const uint64_t *mask,
			  uint32_t nsw, unsigned words)
{
	uint32_t np = 0;

	imc_htab_clear(&k->masks);
	k->n = 0;
	k->off[0] = 0;
	for (uint32_t d = 0; d < nsw; d++) {
		const uint64_t *m = mask + (size_t)d * words;
		uint64_t h = 0, any = 0;
		struct mask_key key = { k, mask, m, words };
		struct imc_hnode *hn;
		uint32_t c;

		for (unsigned w = 0; w < words; w++) {
			h = (h ^ m[w]) * 0x9e3779b97f4a7c15ull;
			any |= m[w];
		}
		if (!any) {
			k->of[d] = NONE;
			continue;
		}
		/* The product's high bits mix every bit of the mask: they
		 * pick the bucket. */
		h = h >> 32 | h << 32;
		hn = imc_htab_find(&k->masks, h, mask_eq, &key);
		if (hn) {
			c = (uint32_t)(hn - k->hn);
		} else {
			c = k->n++;
			imc_htab_insert(&k->masks, &k->hn[c], h);
			k->rep[c] = d;
			k->lvl[c] = 0;
			k->cur[c] = 0;
			for (unsigned w = 0; w < words; w++)
				for (uint64_t b = m[w]; b; b &= b - 1)
					k->port[np++] = (uint8_t)(w * 64 +
						(unsigned)__builtin_ctzll(b));
			k->off[c + 1] = np;
		}
		k->of[d] = c;
	}
}

/* The least loaded port of class c, the lowest numbered among equals
 * (OpenSM minhop balancing). Loads only grow, so ports found above lvl
 * stay above it and the search resumes where it stopped. */
static uint8_t take(struct classes *k, uint32_t c, uint32_t *load)
{
	const uint8_t *p = k->port + k->off[c];
	uint32_t n = k->off[c + 1] - k->off[c];
	uint32_t lvl = k->lvl[c], i = k->cur[c];

	for (;;) {
		for (; i < n; i++)
			if (load[p[i]] == lvl)
				goto found;
		lvl = UINT32_MAX;
		for (i = 0; i < n; i++)
			if (load[p[i]] < lvl)
				lvl = load[p[i]];
		i = 0;
	}
found:
	k->lvl[c] = lvl;
	k->cur[c] = i + 1;
	load[p[i]]++;
	return p[i];
}

/* Masks of the ports of switch si on shortest paths toward each switch. */
static void masks(const struct imc_subnet *s, const struct adj *a,
		  uint32_t si, uint64_t *mask, unsigned words)
{
	const uint8_t *rs = s->dist + (size_t)si * s->nsw;
	uint32_t nsw = s->nsw;

	memset(mask, 0, (size_t)nsw * words * sizeof(*mask));
	for (uint32_t e = a->off[si]; e < a->off[si + 1]; e++) {
		const uint8_t *rt = s->dist + (size_t)a->sw[e] * nsw;
		unsigned p = a->port[e];
		uint64_t bit = 1ull << (p & 63);

		if (words == 1) {
			for (uint32_t d = 0; d < nsw; d++)
				mask[d] |= (uint64_t)-(uint64_t)
					   (rt[d] + 1u == rs[d]) & bit;
		} else {
			uint64_t *m = mask + (p >> 6);

			for (uint32_t d = 0; d < nsw; d++)
				if (rt[d] + 1u == rs[d])
					m[(size_t)d * words] |= bit;
		}
	}
}

/* Snapshot of every LID: where it hangs from, if reached. */
static void dests(struct imc_subnet *s, const struct walk *w)
{
	for (uint32_t i = 0; i < w->nfound; i++) {
		uint32_t slot = w->found[i], node;
		uint16_t lid = s->lid[slot];
		struct dest *d;
		unsigned port;

		if (!lid)
			continue;
		slot_port(s, slot, &node, &port);
		d = &s->dest[lid];
		d->node = node;
		d->port = (uint8_t)port;
		if (is_switch(s, node)) {
			d->kind = DEST_SWITCH;
			d->sw = s->sw_of[node];
		} else {
			const struct imc_topo_port *tp = tport(s, node, port);

			if (is_switch(s, tp->peer)) {
				d->kind = DEST_HCA_SW;
				d->sw = s->sw_of[tp->peer];
				d->swport = tp->peer_port;
			} else {
				d->kind = DEST_HCA_DIRECT;
				d->sw = NONE;
			}
		}
		s->st.routable_lids++;
	}
}

static void route_switch(struct imc_subnet *s, const struct adj *a,
			 uint32_t si, const uint16_t *order, uint32_t norder,
			 uint64_t *mask, struct classes *k, uint32_t *load)
{
	uint8_t *row = s->lft + (size_t)si * s->stride;
	const uint8_t *rs = s->dist + (size_t)si * s->nsw;
	unsigned nports = s->topo->node[s->sw_node[si]].nports;
	unsigned words = nports / 64 + 1;

	memset(row, IMC_PORT_NONE, s->stride);
	masks(s, a, si, mask, words);
	classes_build(k, mask, s->nsw, words);
	memset(load, 0, (nports + 1) * sizeof(*load));
	for (uint32_t i = 0; i < norder; i++) {
		uint16_t lid = order[i];
		const struct dest *d = &s->dest[lid];
		unsigned h;
		uint8_t port;

		if (d->sw == si) {
			port = d->kind == DEST_SWITCH ? 0 : d->swport;
			load[port]++;
		} else if (k->of[d->sw] == NONE) {
			continue;
		} else {
			port = take(k, k->of[d->sw], load);
		}
		row[lid] = port;
		s->st.routes++;
		h = rs[d->sw] + (d->kind == DEST_HCA_SW);
		if (h > s->st.max_hops)
			s->st.max_hops = h;
	}
}

static int route(struct imc_subnet *s)
{
	const struct imc_topo *t = s->topo;
	uint16_t *order = NULL;
	uint32_t norder = 0, *queue = NULL, *load = NULL;
	uint64_t *mask = NULL;
	unsigned maxports = 0;
	struct classes k = { 0 };
	struct adj a = { 0 };
	struct walk w;
	int err;

	err = discover(s, &w);
	if (err)
		return err;
	err = -ENOMEM;
	s->rnodes = s->nnodes;
	s->sw_of = malloc(((size_t)s->nnodes + 1) * sizeof(*s->sw_of));
	s->sw_node = malloc(((size_t)s->nnodes + 1) * sizeof(*s->sw_node));
	if (!s->sw_of || !s->sw_node)
		goto out;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		s->sw_of[i] = NONE;
		if (is_switch(s, i)) {
			s->sw_of[i] = s->nsw;
			s->sw_node[s->nsw++] = i;
			if (t->node[i].nports > maxports)
				maxports = t->node[i].nports;
		}
	}
	s->reached = calloc((size_t)s->nsw + 1, 1);
	s->stride = ((size_t)s->max_lid / IMC_LFT_BLOCK + 1) * IMC_LFT_BLOCK;
	s->dest = calloc(s->stride, sizeof(*s->dest));
	s->dist = malloc((size_t)s->nsw * s->nsw + 1);
	s->lft = malloc((size_t)s->nsw * s->stride + 1);
	order = malloc(s->stride * sizeof(*order));
	queue = malloc(((size_t)s->nsw + 1) * sizeof(*queue));
	load = malloc((maxports + 1u) * sizeof(*load));
	mask = malloc(((size_t)s->nsw + 1) * (maxports / 64 + 1) *
		      sizeof(*mask));
	if (!s->reached || !s->dest || !s->dist || !s->lft || !order ||
	    !queue || !load || !mask || classes_alloc(&k, s->nsw, maxports))
		goto out;

	for (uint32_t i = 0; i < w.nfound; i++) {
		uint32_t node, slot = w.found[i];
		unsigned port;

		slot_port(s, slot, &node, &port);
		if (is_switch(s, node)) {
			s->reached[s->sw_of[node]] = 1;
			s->st.switches_routed++;
		}
	}
	dests(s, &w);
	/* HCA LIDs before switch LIDs, so that HCA traffic spreads evenly
	 * over equal ports, as OpenSM balances it. */
	for (uint32_t l = 1; l < s->stride; l++)
		if (s->dest[l].kind == DEST_HCA_SW)
			order[norder++] = (uint16_t)l;
	for (uint32_t l = 1; l < s->stride; l++)
		if (s->dest[l].kind == DEST_SWITCH)
			order[norder++] = (uint16_t)l;

	err = adj_build(s, &a);
	if (err)
		goto out;
	for (uint32_t d = 0; d < s->nsw; d++) {
		if (!s->reached[d]) {
			memset(s->dist + (size_t)d * s->nsw, NOHOP, s->nsw);
			continue;
		}
		err = bfs(s, &a, d, queue);
		if (err)
			goto out;
	}
	for (uint32_t si = 0; si < s->nsw; si++) {
		if (s->reached[si])
			route_switch(s, &a, si, order, norder, mask, &k, load);
		else
			memset(s->lft + (size_t)si * s->stride, IMC_PORT_NONE,
			       s->stride);
	}
	err = 0;
out:
	classes_free(&k);
	adj_free(&a);
	walk_free(&w);
	free(order);
	free(queue);
	free(load);
	free(mask);
	return err;
}

int imc_subnet_route(struct imc_subnet *s)
{
	int err;

	if (!s || s->sm_node == NONE)
		return -EINVAL;
	err = sync_nodes(s);
	if (err)
		return err;
	route_clear(s);
	err = route(s);
	if (err)
		route_clear(s);
	return err;
}

int imc_subnet_sweep(struct imc_subnet *s)
{
	int err = imc_subnet_assign_lids(s), rerr;

	if (err < 0 && err != -ENOSPC)
		return err;
	rerr = imc_subnet_route(s);
	if (rerr)
		return rerr;
	return err < 0 ? err : 0;
}

/* ---- queries ---- */

void imc_subnet_stats(const struct imc_subnet *s, struct imc_subnet_stats *out)
{
	if (s)
		*out = s->st;
	else
		memset(out, 0, sizeof(*out));
}

int imc_subnet_lid(const struct imc_subnet *s, uint32_t node, unsigned port)
{
	bool sw;

	if (!s || !valid_port(s, node, port))
		return -EINVAL;
	sw = is_switch(s, node);
	if (!sw && port == 0)
		return -EINVAL;
	if (node >= s->nnodes)
		return 0;
	return s->lid[s->base[node] + (sw ? 0 : port)];
}

int imc_subnet_lid_owner(const struct imc_subnet *s, uint16_t lid,
			 uint32_t *node, unsigned *port)
{
	if (!s || lid == 0 || lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	if (s->owner_node[lid] == NONE)
		return -ENOENT;
	if (node)
		*node = s->owner_node[lid];
	if (port)
		*port = s->owner_port[lid];
	return 0;
}

uint16_t imc_subnet_max_lid(const struct imc_subnet *s)
{
	return s ? s->max_lid : 0;
}

uint16_t imc_subnet_sm_lid(const struct imc_subnet *s)
{
	if (!s || s->sm_node == NONE || s->sm_node >= s->nnodes)
		return 0;
	return s->lid[s->base[s->sm_node] + s->sm_port];
}

/* Switch index of a switch the last route reached, NONE otherwise. */
static uint32_t routed_sw(const struct imc_subnet *s, uint32_t node)
{
	uint32_t si;

	if (node >= s->rnodes)
		return NONE;
	si = s->sw_of[node];
	return si != NONE && s->reached[si] ? si : NONE;
}

int imc_subnet_lft(const struct imc_subnet *s, uint32_t sw, uint16_t lid)
{
	uint32_t si;

	if (!s || !valid_node(s, sw) || !is_switch(s, sw))
		return -EINVAL;
	si = routed_sw(s, sw);
	if (si == NONE || lid >= s->stride)
		return IMC_PORT_NONE;
	return s->lft[(size_t)si * s->stride + lid];
}

const uint8_t *imc_subnet_lft_table(const struct imc_subnet *s, uint32_t sw,
				    size_t *len)
{
	uint32_t si = NONE;

	if (s && valid_node(s, sw) && is_switch(s, sw))
		si = routed_sw(s, sw);
	if (si == NONE) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = s->stride;
	return s->lft + (size_t)si * s->stride;
}

/* Hops from switch index si to a routed LID's port, NOHOP for none. */
static unsigned sw_hops(const struct imc_subnet *s, uint32_t si,
			const struct dest *d)
{
	unsigned h;

	if (d->kind != DEST_SWITCH && d->kind != DEST_HCA_SW)
		return NOHOP;
	h = s->dist[(size_t)si * s->nsw + d->sw];
	if (h == NOHOP)
		return NOHOP;
	return h + (d->kind == DEST_HCA_SW);
}

/* From an HCA that does not hold the LID: its up port nearest the LID,
 * the lowest numbered of equals. */
static unsigned hca_out(const struct imc_subnet *s, uint32_t node,
			const struct dest *d, unsigned *hops)
{
	unsigned best = NOHOP + 1, bport = IMC_PORT_NONE;

	for (unsigned p = 1; p <= s->topo->node[node].nports; p++) {
		const struct imc_topo_port *tp;
		unsigned h = NOHOP + 1;
		uint32_t si;

		if (!up(s, node, p))
			continue;
		tp = tport(s, node, p);
		if (d->kind != DEST_NONE && tp->peer == d->node &&
		    tp->peer_port == d->port) {
			h = 1;
		} else if ((si = routed_sw(s, tp->peer)) != NONE) {
			unsigned sh = sw_hops(s, si, d);

			if (sh != NOHOP)
				h = sh + 1;
		}
		if (h < best) {
			best = h;
			bport = p;
		}
	}
	*hops = best;
	return bport;
}

static const struct dest *dest_of(const struct imc_subnet *s, uint16_t lid)
{
	static const struct dest none = { .kind = DEST_NONE };

	return lid < s->stride ? &s->dest[lid] : &none;
}

int imc_subnet_hops(const struct imc_subnet *s, uint32_t node, uint16_t lid)
{
	const struct dest *d;
	unsigned h;
	uint32_t si;

	if (!s || !valid_node(s, node) || lid == 0 ||
	    lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	if (s->owner_node[lid] == NONE)
		return -ENOENT;
	d = dest_of(s, lid);
	if (d->kind == DEST_NONE)
		return -EHOSTUNREACH;
	if (d->node == node)
		return 0;
	if (is_switch(s, node)) {
		si = routed_sw(s, node);
		if (si == NONE)
			return -EHOSTUNREACH;
		h = sw_hops(s, si, d);
		return h == NOHOP ? -EHOSTUNREACH : (int)h;
	}
	if (hca_out(s, node, d, &h) == IMC_PORT_NONE)
		return -EHOSTUNREACH;
	return (int)h;
}

int imc_subnet_next_hop(const struct imc_subnet *s, uint32_t node,
			unsigned port_in, uint16_t lid)
{
	const struct dest *d;
	unsigned h;

	if (!s || !valid_port(s, node, port_in) || lid == 0 ||
	    lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	if (is_switch(s, node))
		return imc_subnet_lft(s, node, lid);
	d = dest_of(s, lid);
	if (port_in) {
		/* Channel adapters consume or drop, never forward. */
		if (d->kind != DEST_NONE && d->node == node &&
		    d->port == port_in)
			return 0;
		return IMC_PORT_NONE;
	}
	if (d->kind == DEST_NONE)
		return IMC_PORT_NONE;
	if (d->node == node)
		return 0;
	return (int)hca_out(s, node, d, &h);
}
