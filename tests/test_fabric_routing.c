/* Subnet manager: LID assignment, min-hop balanced LFTs, rerouting.
 *
 * Every routing check walks each ordered pair of LIDs hop by hop through
 * the LFTs and compares the hop count with a plain BFS over the topology
 * written here, sharing no code with the implementation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/rng.h"
#include "ibmcast/subnet.h"
#include "ibmcast/topo.h"

#define INF 100000
#define SLOT(node, port) ((size_t)(node) * 256 + (port))

struct net {
	struct imc_topo *t;
	struct imc_subnet *s;
	uint8_t *down;          /* the test's own record of cut cables */
	size_t cap;             /* nodes covered by down */
};

static uint32_t add(struct net *n, enum imc_node_type type, unsigned nports,
		    const char *fmt, unsigned i)
{
	char name[64];
	uint32_t idx;

	snprintf(name, sizeof(name), fmt, i);
	assert_int_equal(imc_topo_add_node(n->t, type, nports, name, 0, &idx),
			 0);
	return idx;
}

static void cable(struct net *n, uint32_t a, unsigned pa, uint32_t b,
		  unsigned pb)
{
	assert_int_equal(imc_topo_connect(n->t, a, pa, b, pb, 4), 0);
}

static void net_init(struct net *n)
{
	memset(n, 0, sizeof(*n));
	assert_int_equal(imc_topo_create(&n->t), 0);
}

/* Creates the subnet once the topology is built, SM on sm:port. */
static void net_start(struct net *n, uint32_t sm, unsigned port)
{
	n->t->sm_node = sm;
	n->t->sm_port = (uint8_t)port;
	n->cap = n->t->nnodes;
	n->down = calloc(n->cap * 256, 1);
	assert_non_null(n->down);
	assert_int_equal(imc_subnet_create(n->t, &n->s), 0);
}

static void net_free(struct net *n)
{
	imc_subnet_destroy(n->s);
	imc_topo_destroy(n->t);
	free(n->down);
}

static const struct imc_topo_port *peer(const struct net *n, uint32_t node,
					unsigned port)
{
	return &n->t->node[node].port[port];
}

static bool ref_up(const struct net *n, uint32_t node, unsigned port)
{
	if (port == 0 || peer(n, node, port)->peer == IMC_TOPO_NONE)
		return false;
	return node >= n->cap || !n->down[SLOT(node, port)];
}

static void cut(struct net *n, uint32_t node, unsigned port, bool up)
{
	const struct imc_topo_port *p = peer(n, node, port);

	assert_int_equal(imc_subnet_link_set(n->s, node, port, up), 0);
	n->down[SLOT(node, port)] = !up;
	n->down[SLOT(p->peer, p->peer_port)] = !up;
	assert_true(imc_subnet_link_up(n->s, node, port) == up);
	assert_true(imc_subnet_link_up(n->s, p->peer, p->peer_port) == up);
}

static bool is_sw(const struct net *n, uint32_t node)
{
	return n->t->node[node].type == IMC_NODE_SWITCH;
}

/* Ports the SM can reach: from its port, through switches only. */
static uint8_t *ref_reached(const struct net *n)
{
	uint32_t nn = n->t->nnodes, *q = malloc(nn * sizeof(*q)), qh = 0,
		 qt = 0;
	uint8_t *r = calloc((size_t)nn * 256, 1);
	uint32_t sm = n->t->sm_node;

	assert_non_null(q);
	assert_non_null(r);
	if (is_sw(n, sm)) {
		r[SLOT(sm, 0)] = 1;
		q[qt++] = sm;
	} else if (ref_up(n, sm, n->t->sm_port)) {
		const struct imc_topo_port *tp = peer(n, sm, n->t->sm_port);

		r[SLOT(sm, n->t->sm_port)] = 1;
		if (is_sw(n, tp->peer)) {
			r[SLOT(tp->peer, 0)] = 1;
			q[qt++] = tp->peer;
		} else {
			r[SLOT(tp->peer, tp->peer_port)] = 1;
		}
	}
	while (qh < qt) {
		uint32_t x = q[qh++];

		for (unsigned p = 1; p <= n->t->node[x].nports; p++) {
			const struct imc_topo_port *tp = peer(n, x, p);

			if (!ref_up(n, x, p))
				continue;
			if (!is_sw(n, tp->peer)) {
				r[SLOT(tp->peer, tp->peer_port)] = 1;
			} else if (!r[SLOT(tp->peer, 0)]) {
				r[SLOT(tp->peer, 0)] = 1;
				q[qt++] = tp->peer;
			}
		}
	}
	free(q);
	return r;
}

/* Hops from src to every node a packet can reach: switches forward,
 * channel adapters other than src only receive. */
static void ref_bfs(const struct net *n, uint32_t src, int *dist)
{
	uint32_t nn = n->t->nnodes, *q = malloc(nn * sizeof(*q)), qh = 0,
		 qt = 0;

	assert_non_null(q);
	for (uint32_t i = 0; i < nn; i++)
		dist[i] = INF;
	dist[src] = 0;
	q[qt++] = src;
	while (qh < qt) {
		uint32_t x = q[qh++];

		if (x != src && !is_sw(n, x))
			continue;
		for (unsigned p = 1; p <= n->t->node[x].nports; p++) {
			uint32_t y = peer(n, x, p)->peer;

			if (!ref_up(n, x, p) || dist[y] != INF)
				continue;
			dist[y] = dist[x] + 1;
			q[qt++] = y;
		}
	}
	free(q);
}

/* Minimum hops from src to the port dn:dp, INF when none. */
static int ref_hops(const struct net *n, const int *dist, uint32_t src,
		    uint32_t dn, unsigned dp)
{
	const struct imc_topo_port *tp;

	if (src == dn)
		return 0;
	if (is_sw(n, dn))
		return dist[dn];
	if (!ref_up(n, dn, dp))
		return INF;
	tp = peer(n, dn, dp);
	if (tp->peer == src)
		return 1;
	if (!is_sw(n, tp->peer) || dist[tp->peer] == INF)
		return INF;
	return dist[tp->peer] + 1;
}

/* Follows next hops from src toward lid; hop count or INF when dropped. */
static int walk(const struct net *n, uint32_t src, uint16_t lid,
		uint32_t dn, unsigned dp)
{
	uint32_t cur = src;
	unsigned in = 0;

	for (int hops = 0; hops < 300; hops++) {
		int p = imc_subnet_next_hop(n->s, cur, in, lid);
		const struct imc_topo_port *tp;

		assert_true(p >= 0 && p <= IMC_PORT_NONE);
		if (p == IMC_PORT_NONE)
			return INF;
		if (p == 0) {
			assert_int_equal(cur, dn);
			if (!is_sw(n, dn) && in != 0)
				assert_int_equal(in, dp);
			if (in == 0)
				assert_int_equal(cur, src);
			return hops;
		}
		assert_true(ref_up(n, cur, (unsigned)p));
		tp = peer(n, cur, (unsigned)p);
		cur = tp->peer;
		in = tp->peer_port;
	}
	fail_msg("routing loop toward LID %u from node %u", lid, src);
	return INF;
}

/* The least loaded port of sw toward a neighbour switch one hop nearer
 * the destination (row: hops from each node), the lowest numbered of
 * equals. */
static unsigned ref_choice(const struct net *n, uint32_t sw, const int *row,
			   const unsigned *load)
{
	unsigned best = IMC_PORT_NONE;

	for (unsigned p = 1; p <= n->t->node[sw].nports; p++) {
		uint32_t t = peer(n, sw, p)->peer;

		if (!ref_up(n, sw, p) || !is_sw(n, t) || row[t] + 1 != row[sw])
			continue;
		if (best == IMC_PORT_NONE || load[p] < load[best])
			best = p;
	}
	assert_int_not_equal(best, IMC_PORT_NONE);
	return best;
}

/* Every LFT entry against the rule applied literally: for each switch
 * the SM reaches, HCA LIDs then switch LIDs, each in increasing order,
 * take among the ports toward a neighbour switch one hop nearer the
 * destination the one carrying the fewest routes so far, the lowest
 * numbered among equals; the switch's own LID goes to port 0, an HCA
 * cabled to it to that port. */
static void check_lfts(const struct net *n)
{
	uint16_t max = imc_subnet_max_lid(n->s);
	uint32_t nn = n->t->nnodes;
	uint8_t *reached = ref_reached(n);
	int *to = malloc(((size_t)max + 1) * nn * sizeof(*to));
	uint8_t *routable = calloc((size_t)max + 1, 1);
	uint8_t *want = malloc((size_t)max + 1);

	assert_non_null(to);
	assert_non_null(routable);
	assert_non_null(want);
	for (uint16_t b = 1; b <= max; b++) {
		int *row = to + (size_t)b * nn;
		const struct imc_topo_port *tp;
		uint32_t dn;
		unsigned dp;

		if (imc_subnet_lid_owner(n->s, b, &dn, &dp) ||
		    !reached[SLOT(dn, dp)])
			continue;
		if (is_sw(n, dn)) {
			ref_bfs(n, dn, row);
		} else {
			tp = peer(n, dn, dp);
			if (!is_sw(n, tp->peer))
				continue;
			ref_bfs(n, tp->peer, row);
			for (uint32_t x = 0; x < nn; x++)
				if (row[x] != INF)
					row[x]++;
		}
		routable[b] = 1;
	}
	for (uint32_t sw = 0; sw < nn; sw++) {
		unsigned load[256] = { 0 };

		if (!is_sw(n, sw))
			continue;
		memset(want, IMC_PORT_NONE, (size_t)max + 1);
		for (int pass = 0; pass < 2 && reached[SLOT(sw, 0)]; pass++) {
			for (uint16_t b = 1; b <= max; b++) {
				const int *row = to + (size_t)b * nn;
				unsigned best = IMC_PORT_NONE;
				uint32_t dn;
				unsigned dp;

				if (!routable[b] || row[sw] == INF)
					continue;
				imc_subnet_lid_owner(n->s, b, &dn, &dp);
				if (is_sw(n, dn) != (pass == 1))
					continue;
				if (dn == sw)
					best = 0;
				else if (!is_sw(n, dn) &&
					 peer(n, dn, dp)->peer == sw)
					best = peer(n, dn, dp)->peer_port;
				else
					best = ref_choice(n, sw, row, load);
				load[best]++;
				want[b] = (uint8_t)best;
			}
		}
		for (uint16_t b = 1; b <= max; b++) {
			int got = imc_subnet_lft(n->s, sw, b);

			if (got != want[b])
				fail_msg("switch %u LID %u: port %d, want %u",
					 sw, b, got, want[b]);
		}
		assert_int_equal(imc_subnet_lft(n->s, sw, max + 1),
				 IMC_PORT_NONE);
	}
	free(want);
	free(routable);
	free(to);
	free(reached);
}

/* Every ordered pair of LIDs: the LFT walk takes exactly the minimum
 * number of hops, and pairs with no path are dropped; then every LFT
 * entry is the one the balancing rule gives. Returns the number of
 * routed pairs. */
static unsigned check_pairs(const struct net *n, unsigned step)
{
	uint16_t max = imc_subnet_max_lid(n->s);
	uint8_t *reached = ref_reached(n);
	int *dist = malloc(n->t->nnodes * sizeof(*dist));
	unsigned routed = 0;

	assert_non_null(dist);
	for (uint32_t a = 1; a <= max; a += step) {
		uint32_t sn;
		unsigned sp;

		if (imc_subnet_lid_owner(n->s, (uint16_t)a, &sn, &sp))
			continue;
		ref_bfs(n, sn, dist);
		for (uint16_t b = 1; b <= max; b++) {
			uint32_t dn;
			unsigned dp;
			int want, got, h;

			if (imc_subnet_lid_owner(n->s, b, &dn, &dp))
				continue;
			want = reached[SLOT(dn, dp)] ?
			       ref_hops(n, dist, sn, dn, dp) : INF;
			got = walk(n, sn, b, dn, dp);
			if (got != want)
				fail_msg("LID %u -> %u: %d hops, want %d",
					 (unsigned)a, b, got, want);
			h = imc_subnet_hops(n->s, sn, b);
			assert_int_equal(h, want == INF ? -EHOSTUNREACH : want);
			routed += want != INF;
		}
	}
	free(dist);
	free(reached);
	if (step == 1)
		check_lfts(n);
	return routed;
}

static unsigned check_all_pairs(const struct net *n)
{
	return check_pairs(n, 1);
}

/* ---- topologies ---- */

/* One switch, HCAs on its ports 1..hosts; SM on the first HCA. */
static void build_switch(struct net *n, unsigned hosts)
{
	uint32_t sw;

	net_init(n);
	sw = add(n, IMC_NODE_SWITCH, 8, "sw%u", 0);
	for (unsigned i = 0; i < hosts; i++)
		cable(n, add(n, IMC_NODE_HCA, 1, "h%u", i), 1, sw, i + 1);
	net_start(n, 1, 1);
}

/* ibsim's net-examples/net.2sw2path4hca: two 8-port switches joined by
 * cables on ports 3 and 5, two 2-port HCAs on each (port 1 cabled). */
struct two {
	uint32_t sw1, sw2, hca[5];
};

static void build_two(struct net *n, struct two *x)
{
	net_init(n);
	x->sw1 = add(n, IMC_NODE_SWITCH, 8, "Switch%u", 1);
	x->sw2 = add(n, IMC_NODE_SWITCH, 8, "Switch%u", 2);
	for (unsigned i = 1; i <= 4; i++)
		x->hca[i] = add(n, IMC_NODE_HCA, 2, "Hca%u", i);
	cable(n, x->sw1, 1, x->hca[1], 1);
	cable(n, x->sw1, 2, x->hca[3], 1);
	cable(n, x->sw1, 3, x->sw2, 3);
	cable(n, x->sw1, 5, x->sw2, 5);
	cable(n, x->sw2, 1, x->hca[2], 1);
	cable(n, x->sw2, 2, x->hca[4], 1);
	net_start(n, x->hca[1], 1);
}

/* Two levels: leaf i port hosts+1+j to spine j port i+1. */
static void build_ft2(struct net *n, unsigned leaves, unsigned hosts,
		      unsigned spines)
{
	uint32_t leaf0, spine0, h0 = 0;

	net_init(n);
	leaf0 = n->t->nnodes;
	for (unsigned i = 0; i < leaves; i++)
		add(n, IMC_NODE_SWITCH, hosts + spines, "leaf%u", i);
	spine0 = n->t->nnodes;
	for (unsigned j = 0; j < spines; j++)
		add(n, IMC_NODE_SWITCH, leaves, "spine%u", j);
	for (unsigned i = 0; i < leaves; i++) {
		for (unsigned k = 0; k < hosts; k++) {
			uint32_t h = add(n, IMC_NODE_HCA, 1, "h%u",
					 i * hosts + k);

			if (i == 0 && k == 0)
				h0 = h;
			cable(n, h, 1, leaf0 + i, k + 1);
		}
		for (unsigned j = 0; j < spines; j++)
			cable(n, leaf0 + i, hosts + 1 + j, spine0 + j, i + 1);
	}
	net_start(n, h0, 1);
}

/* Three levels: in each pod, leaf l port hosts+1+a to agg a port l+1;
 * agg a of every pod port leaves+1+k to spine a*sp+k port pod+1, with
 * sp = spines / aggs spines per agg plane. */
static void build_ft3(struct net *n, unsigned pods, unsigned leaves,
		      unsigned hosts, unsigned aggs, unsigned spines)
{
	unsigned sp = spines / aggs;
	uint32_t spine0, h0 = IMC_TOPO_NONE;

	net_init(n);
	spine0 = n->t->nnodes;
	for (unsigned k = 0; k < spines; k++)
		add(n, IMC_NODE_SWITCH, pods, "spine%u", k);
	for (unsigned p = 0; p < pods; p++) {
		uint32_t leaf0 = n->t->nnodes, agg0;

		for (unsigned l = 0; l < leaves; l++)
			add(n, IMC_NODE_SWITCH, hosts + aggs, "leaf%u",
			    p * leaves + l);
		agg0 = n->t->nnodes;
		for (unsigned a = 0; a < aggs; a++)
			add(n, IMC_NODE_SWITCH, leaves + sp, "agg%u",
			    p * aggs + a);
		for (unsigned l = 0; l < leaves; l++) {
			for (unsigned h = 0; h < hosts; h++) {
				uint32_t x = add(n, IMC_NODE_HCA, 1, "h%u",
					 (p * leaves + l) * hosts + h);

				if (h0 == IMC_TOPO_NONE)
					h0 = x;
				cable(n, x, 1, leaf0 + l, h + 1);
			}
			for (unsigned a = 0; a < aggs; a++)
				cable(n, leaf0 + l, hosts + 1 + a, agg0 + a,
				      l + 1);
		}
		for (unsigned a = 0; a < aggs; a++)
			for (unsigned k = 0; k < sp; k++)
				cable(n, agg0 + a, leaves + 1 + k,
				      spine0 + a * sp + k, p + 1);
	}
	net_start(n, h0, 1);
}

/* A ring of switches: switch i port 1 to switch i+1 port 2; HCAs on
 * ports 3 and up. */
static void build_ring(struct net *n, unsigned sws, unsigned hosts)
{
	net_init(n);
	for (unsigned i = 0; i < sws; i++)
		add(n, IMC_NODE_SWITCH, 2 + hosts, "sw%u", i);
	for (unsigned i = 0; i < sws; i++) {
		cable(n, i, 1, (i + 1) % sws, 2);
		for (unsigned k = 0; k < hosts; k++)
			cable(n, add(n, IMC_NODE_HCA, 1, "h%u", i * hosts + k),
			      1, i, 3 + k);
	}
	net_start(n, sws, 1);
}

/* Reachability: switch A with the SM's HCA, HCA a1 and port 1 of the
 * dual-port HCA d; switch B with b0, b1 and d's port 2 (B hangs off a
 * channel adapter only); an HCA pair cabled to each other; an uncabled
 * HCA. */
struct island {
	uint32_t a, b, sm, a1, d, b0, b1, p0, p1, lone;
};

static void build_island(struct net *n, struct island *x)
{
	net_init(n);
	x->a = add(n, IMC_NODE_SWITCH, 8, "A%u", 0);
	x->b = add(n, IMC_NODE_SWITCH, 8, "B%u", 0);
	x->sm = add(n, IMC_NODE_HCA, 1, "sm%u", 0);
	x->a1 = add(n, IMC_NODE_HCA, 1, "a%u", 1);
	x->d = add(n, IMC_NODE_HCA, 2, "d%u", 0);
	x->b0 = add(n, IMC_NODE_HCA, 1, "b%u", 0);
	x->b1 = add(n, IMC_NODE_HCA, 1, "b%u", 1);
	x->p0 = add(n, IMC_NODE_HCA, 1, "p%u", 0);
	x->p1 = add(n, IMC_NODE_HCA, 1, "p%u", 1);
	x->lone = add(n, IMC_NODE_HCA, 1, "lone%u", 0);
	cable(n, x->sm, 1, x->a, 1);
	cable(n, x->a1, 1, x->a, 2);
	cable(n, x->d, 1, x->a, 3);
	cable(n, x->d, 2, x->b, 3);
	cable(n, x->b0, 1, x->b, 1);
	cable(n, x->b1, 1, x->b, 2);
	cable(n, x->p0, 1, x->p1, 1);
	net_start(n, x->sm, 1);
}

static void sweep(struct net *n)
{
	assert_int_equal(imc_subnet_sweep(n->s), 0);
}

/* ---- routing on each topology ---- */

static void test_single_switch(void **state)
{
	struct imc_subnet_stats st;
	struct net n;

	build_switch(&n, 6);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 7 * 7);
	for (unsigned i = 0; i < 6; i++) {
		/* SM's HCA 1, switch 2, then HCAs by switch port. */
		int want = i == 0 ? 1 : (int)i + 2;

		assert_int_equal(imc_subnet_lid(n.s, 1 + i, 1), want);
		assert_int_equal(imc_subnet_lft(n.s, 0, (uint16_t)want),
				 i + 1);
	}
	assert_int_equal(imc_subnet_lid(n.s, 0, 0), 2);
	assert_int_equal(imc_subnet_lid(n.s, 0, 5), 2);
	assert_int_equal(imc_subnet_lft(n.s, 0, 2), 0);
	assert_int_equal(imc_subnet_lft(n.s, 0, 8), IMC_PORT_NONE);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.lids, 7);
	assert_int_equal(st.hca_lids, 6);
	assert_int_equal(st.switch_lids, 1);
	assert_int_equal(st.switches_routed, 1);
	assert_int_equal(st.max_hops, 1);
	assert_int_equal(st.routes, 7);
	net_free(&n);
}

static void test_two_switches(void **state)
{
	struct net n;
	struct two x;
	int via3 = 0, via5 = 0;

	build_two(&n, &x);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 6 * 6);
	/* Breadth first from Hca1: Hca1, Switch1, Hca3 (port 2), Switch2
	 * (port 3), Hca2, Hca4. */
	assert_int_equal(imc_subnet_lid(n.s, x.hca[1], 1), 1);
	assert_int_equal(imc_subnet_lid(n.s, x.sw1, 0), 2);
	assert_int_equal(imc_subnet_lid(n.s, x.hca[3], 1), 3);
	assert_int_equal(imc_subnet_lid(n.s, x.sw2, 0), 4);
	assert_int_equal(imc_subnet_lid(n.s, x.hca[2], 1), 5);
	assert_int_equal(imc_subnet_lid(n.s, x.hca[4], 1), 6);
	assert_int_equal(imc_subnet_lid(n.s, x.hca[2], 2), 0);
	assert_int_equal(imc_subnet_sm_lid(n.s), 1);
	/* The far HCAs split over the two parallel cables. */
	for (uint16_t lid = 5; lid <= 6; lid++) {
		int p = imc_subnet_lft(n.s, x.sw1, lid);

		assert_true(p == 3 || p == 5);
		via3 += p == 3;
		via5 += p == 5;
	}
	assert_int_equal(via3, 1);
	assert_int_equal(via5, 1);
	via3 = via5 = 0;
	for (uint16_t lid = 1; lid <= 3; lid += 2) {
		int p = imc_subnet_lft(n.s, x.sw2, lid);

		via3 += p == 3;
		via5 += p == 5;
	}
	assert_int_equal(via3, 1);
	assert_int_equal(via5, 1);
	/* Whole tables: HCA LIDs first in LID order, the lowest port on a
	 * tie, then switch LIDs by the same rule. By node name these are the
	 * tables OpenSM 3.3.23 programs on ibsim for this net file (there
	 * Switch2 gets LID 3 and the HCAs 4..6, in the same order). */
	{
		static const uint8_t lft1[] = { 255, 1, 0, 2, 3, 3, 5 };
		static const uint8_t lft2[] = { 255, 3, 3, 5, 0, 1, 2 };
		size_t len;
		const uint8_t *t1 = imc_subnet_lft_table(n.s, x.sw1, &len);

		assert_int_equal(len, 64);
		assert_memory_equal(t1, lft1, sizeof(lft1));
		for (size_t i = sizeof(lft1); i < len; i++)
			assert_int_equal(t1[i], IMC_PORT_NONE);
		assert_memory_equal(imc_subnet_lft_table(n.s, x.sw2, &len),
				    lft2, sizeof(lft2));
	}
	/* One parallel cable down: everything over the other. */
	cut(&n, x.sw1, 3, false);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 6 * 6);
	for (uint16_t lid = 1; lid <= 6; lid++) {
		assert_int_not_equal(imc_subnet_lft(n.s, x.sw1, lid), 3);
		assert_int_not_equal(imc_subnet_lft(n.s, x.sw2, lid), 3);
	}
	assert_int_equal(imc_subnet_lft(n.s, x.sw1, 4), 5);
	net_free(&n);
}

static void test_fat_tree_2level(void **state)
{
	struct imc_subnet_stats st;
	struct net n;

	build_ft2(&n, 4, 5, 4);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 28 * 28);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.lids, 28);
	assert_int_equal(st.switches_routed, 8);
	assert_int_equal(st.routable_lids, 28);
	assert_int_equal(st.max_hops, 3);   /* leaf, spine, leaf, HCA */
	assert_int_equal(st.routes, 8 * 28);
	net_free(&n);
}

static void test_fat_tree_3level(void **state)
{
	struct imc_subnet_stats st;
	struct net n;

	build_ft3(&n, 3, 2, 3, 2, 4);
	sweep(&n);
	/* 18 HCAs, 6 leaves, 6 aggs, 4 spines. */
	assert_int_equal(check_all_pairs(&n), 34 * 34);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.switches_routed, 16);
	assert_int_equal(st.max_hops, 5);   /* leaf agg spine agg leaf HCA */
	net_free(&n);
}

/* A 648-port two-level Clos of 36-port switches: 36 leaves of 18 hosts,
 * 18 spines. */
static void test_clos_648(void **state)
{
	struct net n;
	uint32_t leaf0 = 0;

	build_ft2(&n, 36, 18, 18);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 702u * 702u);
	/* Every leaf spreads the 630 remote HCAs 35 per uplink. */
	for (uint32_t l = leaf0; l < leaf0 + 36; l++) {
		unsigned cnt[37] = { 0 };
		size_t len;
		const uint8_t *row = imc_subnet_lft_table(n.s, l, &len);

		for (uint16_t lid = 1; lid < len; lid++) {
			uint32_t o;
			unsigned op;

			if (imc_subnet_lid_owner(n.s, lid, &o, &op) ||
			    is_sw(&n, o))
				continue;
			assert_true(row[lid] >= 1 && row[lid] <= 36);
			cnt[row[lid]]++;
		}
		for (unsigned p = 19; p <= 36; p++)
			assert_int_equal(cnt[p], 35);
	}
	net_free(&n);
}

static void test_ring(void **state)
{
	struct net n;

	build_ring(&n, 6, 2);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 18 * 18);
	cut(&n, 2, 1, false);        /* sw2 - sw3: the ring becomes a line */
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 18 * 18);
	assert_int_equal(imc_subnet_hops(n.s, 2, imc_subnet_lid(n.s, 3, 0)),
			 5);
	net_free(&n);
}

static void test_unreachable(void **state)
{
	struct imc_subnet_stats st;
	struct net n;
	struct island x;

	build_island(&n, &x);
	sweep(&n);
	assert_int_equal(imc_subnet_lid(n.s, x.sm, 1), 1);
	assert_int_equal(imc_subnet_lid(n.s, x.a, 0), 2);
	assert_int_equal(imc_subnet_lid(n.s, x.a1, 1), 3);
	assert_int_equal(imc_subnet_lid(n.s, x.d, 1), 4);
	/* Channel adapters do not forward: d's port 2, B and its HCAs, the
	 * HCA pair and the lone HCA stay without LIDs. */
	assert_int_equal(imc_subnet_lid(n.s, x.d, 2), 0);
	assert_int_equal(imc_subnet_lid(n.s, x.b, 0), 0);
	assert_int_equal(imc_subnet_lid(n.s, x.b0, 1), 0);
	assert_int_equal(imc_subnet_lid(n.s, x.b1, 1), 0);
	assert_int_equal(imc_subnet_lid(n.s, x.p0, 1), 0);
	assert_int_equal(imc_subnet_lid(n.s, x.p1, 1), 0);
	assert_int_equal(imc_subnet_lid(n.s, x.lone, 1), 0);
	assert_int_equal(imc_subnet_max_lid(n.s), 4);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.lids, 4);
	assert_int_equal(st.switches_routed, 1);
	assert_int_equal(check_all_pairs(&n), 16);
	/* B is never routed. */
	assert_int_equal(imc_subnet_lft(n.s, x.b, 1), IMC_PORT_NONE);
	assert_null(imc_subnet_lft_table(n.s, x.b, NULL));
	assert_int_equal(imc_subnet_hops(n.s, x.b, 1), -EHOSTUNREACH);
	/* From d, LID 1 is reached over port 1 only. */
	assert_int_equal(imc_subnet_next_hop(n.s, x.d, 0, 1), 1);
	net_free(&n);
}

/* Two HCAs back to back, the SM on one of them. */
static void test_back_to_back(void **state)
{
	struct net n;
	uint32_t a, b;

	net_init(&n);
	a = add(&n, IMC_NODE_HCA, 1, "a%u", 0);
	b = add(&n, IMC_NODE_HCA, 2, "b%u", 0);
	cable(&n, a, 1, b, 2);
	net_start(&n, a, 1);
	sweep(&n);
	assert_int_equal(imc_subnet_lid(n.s, a, 1), 1);
	assert_int_equal(imc_subnet_lid(n.s, b, 2), 2);
	assert_int_equal(imc_subnet_lid(n.s, b, 1), 0);
	assert_int_equal(check_all_pairs(&n), 4);
	assert_int_equal(imc_subnet_next_hop(n.s, a, 0, 2), 1);
	assert_int_equal(imc_subnet_next_hop(n.s, b, 0, 1), 2);
	assert_int_equal(imc_subnet_next_hop(n.s, b, 2, 2), 0);
	assert_int_equal(imc_subnet_next_hop(n.s, b, 1, 2), IMC_PORT_NONE);
	assert_int_equal(imc_subnet_hops(n.s, a, 2), 1);
	net_free(&n);
}

/* Trees from the topology generator (topo.h): HCAs first, then leaves,
 * aggregation switches and spines; the first HCA runs the SM. */
static bool generate(struct net *n, const char *spec)
{
	char err[256] = "";
	int rc;

	memset(n, 0, sizeof(*n));
	rc = imc_topo_generate(spec, &n->t, err, sizeof(err));
	if (rc) {
		print_message("imc_topo_generate(%s): %d %s\n", spec, rc, err);
		return false;
	}
	n->cap = n->t->nnodes;
	n->down = calloc(n->cap * 256, 1);
	assert_non_null(n->down);
	assert_int_equal(imc_subnet_create(n->t, &n->s), 0);
	return true;
}

static void test_generated_small(void **state)
{
	struct imc_subnet_stats st;
	struct net n;

	if (!generate(&n, "fat-tree:pods=4,leaves=4,hosts=4,aggs=4,spines=8")) {
		skip();
		return;
	}
	sweep(&n);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.hca_lids, 64);
	assert_int_equal(st.switch_lids, 16 + 16 + 8);
	assert_int_equal(st.max_hops, 5);
	assert_int_equal(imc_subnet_sm_lid(n.s), 1);
	assert_int_equal(check_all_pairs(&n), 104u * 104u);
	net_free(&n);
}

/* 10,368 HCAs: 18 pods of 24 leaves (24 hosts, 12 uplinks) and 12
 * aggregation switches, 144 spines. Every switch routes every LID; every
 * leaf spreads the 10,344 remote HCAs exactly 862 per uplink; paths from
 * every 97th LID are walked. */
static void test_generated_10k(void **state)
{
	const char *spec =
		"fat-tree:pods=18,leaves=24,hosts=24,aggs=12,spines=144";
	struct imc_subnet_stats st;
	struct net n;
	uint32_t hcas, sws;

	if (!generate(&n, spec)) {
		skip();
		return;
	}
	sweep(&n);
	imc_topo_counts(n.t, &hcas, &sws, NULL);
	assert_int_equal(hcas, 10368);
	assert_int_equal(sws, 432 + 216 + 144);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.lids, hcas + sws);
	assert_int_equal(st.switches_routed, sws);
	assert_int_equal(st.routes, (uint64_t)st.lids * sws);
	assert_int_equal(st.max_hops, 5);
	for (uint32_t l = hcas; l < hcas + 432; l++) {
		unsigned cnt[256] = { 0 };
		size_t len;
		const uint8_t *row = imc_subnet_lft_table(n.s, l, &len);

		assert_non_null(row);
		for (uint32_t lid = 1; lid < len; lid++) {
			uint32_t o;
			unsigned op;

			if (imc_subnet_lid_owner(n.s, (uint16_t)lid, &o, &op) ||
			    is_sw(&n, o))
				continue;
			if (peer(&n, o, 1)->peer == l)
				assert_int_equal(row[lid],
						 peer(&n, o, 1)->peer_port);
			else
				cnt[row[lid]]++;
		}
		for (unsigned p = 25; p <= 36; p++)
			assert_int_equal(cnt[p], 862);
	}
	check_pairs(&n, 97);
	net_free(&n);
}

/* A free port of node x other than skip, 0 when none. */
static unsigned free_port(const struct net *n, struct imc_rng *r, uint32_t x,
			  unsigned skip)
{
	unsigned np = n->t->node[x].nports;
	unsigned p = 1 + (unsigned)imc_rng_below(r, np);

	for (unsigned i = 0; i < np; i++, p = p % np + 1)
		if (p != skip && peer(n, x, p)->peer == IMC_TOPO_NONE)
			return p;
	return 0;
}

/* LIDs of ports 0..3 of every node (at most 3 HCA ports here). */
static uint16_t *lid_snapshot(const struct net *n)
{
	uint32_t nn = n->t->nnodes;
	uint16_t *l = calloc((size_t)nn * 4, sizeof(*l));

	assert_non_null(l);
	for (uint32_t x = 0; x < nn; x++) {
		for (unsigned p = 0; p < 4; p++) {
			int lid;

			if (p > n->t->node[x].nports || (!p && !is_sw(n, x)))
				continue;
			lid = imc_subnet_lid(n->s, x, p);
			assert_true(lid >= 0);
			l[x * 4 + p] = (uint16_t)lid;
		}
	}
	return l;
}

static void all_up(struct net *n)
{
	for (uint32_t x = 0; x < n->t->nnodes; x++)
		for (unsigned p = 1; p <= n->t->node[x].nports; p++)
			if (peer(n, x, p)->peer != IMC_TOPO_NONE)
				cut(n, x, p, true);
}

/* Random fabrics: switches meshed at random (parallel cables and loops
 * back into the same switch included), HCAs of one to three ports on
 * random switches or on each other, the SM on a random HCA port or
 * switch; then random cables cut and restored. Every state is checked
 * against the reference BFS and the literal LFT rule, and LIDs never
 * move. A failure names its seed. */
static void test_random_fabrics(void **state)
{
	for (uint64_t seed = 1; seed <= 60; seed++) {
		struct imc_rng r;
		struct net n;
		unsigned nsw, nhca, links;
		uint16_t *lids, *later;
		uint32_t nn;

		imc_rng_seed(&r, seed);
		net_init(&n);
		nsw = 1 + (unsigned)imc_rng_below(&r, 10);
		nhca = 1 + (unsigned)imc_rng_below(&r, 24);
		for (unsigned i = 0; i < nsw; i++)
			add(&n, IMC_NODE_SWITCH,
			    4 + (unsigned)imc_rng_below(&r, 9), "sw%u", i);
		for (unsigned i = 0; i < nhca; i++)
			add(&n, IMC_NODE_HCA,
			    1 + (unsigned)imc_rng_below(&r, 3), "h%u", i);
		nn = n.t->nnodes;
		links = nsw + (unsigned)imc_rng_below(&r, 2 * nsw + 1);
		for (unsigned i = 0; i < links; i++) {
			uint32_t a = (uint32_t)imc_rng_below(&r, nsw);
			uint32_t b = (uint32_t)imc_rng_below(&r, nsw);
			unsigned pa = free_port(&n, &r, a, 0), pb;

			if (!pa)
				continue;
			pb = free_port(&n, &r, b, a == b ? pa : 0);
			if (pb)
				cable(&n, a, pa, b, pb);
		}
		for (uint32_t h = nsw; h < nn; h++) {
			for (unsigned p = 1; p <= n.t->node[h].nports; p++) {
				uint32_t x;
				unsigned px;

				if (peer(&n, h, p)->peer != IMC_TOPO_NONE ||
				    imc_rng_chance(&r, 0.15))
					continue;
				x = imc_rng_chance(&r, 0.1) ?
				    nsw + (uint32_t)imc_rng_below(&r, nhca) :
				    (uint32_t)imc_rng_below(&r, nsw);
				if (x == h)
					continue;
				px = free_port(&n, &r, x, 0);
				if (px)
					cable(&n, h, p, x, px);
			}
		}
		if (imc_rng_chance(&r, 0.2)) {
			net_start(&n, (uint32_t)imc_rng_below(&r, nsw), 0);
		} else {
			uint32_t h = nsw + (uint32_t)imc_rng_below(&r, nhca);

			net_start(&n, h, 1 + (unsigned)imc_rng_below(&r,
						n.t->node[h].nports));
		}
		print_message("seed %2u: %u switches, %u HCAs\n",
			      (unsigned)seed, nsw, nhca);
		sweep(&n);
		check_all_pairs(&n);
		lids = lid_snapshot(&n);
		for (int round = 0; round < 3; round++) {
			for (int cuts = 0; cuts < 3; cuts++) {
				uint32_t x = (uint32_t)imc_rng_below(&r, nn);
				unsigned p = 1 + (unsigned)imc_rng_below(&r,
						n.t->node[x].nports);

				if (peer(&n, x, p)->peer != IMC_TOPO_NONE)
					cut(&n, x, p, round == 2);
			}
			if (round == 2)
				all_up(&n);
			assert_int_equal(imc_subnet_sweep(n.s) < 0, 0);
			check_all_pairs(&n);
			later = lid_snapshot(&n);
			for (uint32_t i = 0; i < nn * 4; i++)
				if (lids[i])
					assert_int_equal(later[i], lids[i]);
			free(later);
		}
		free(lids);
		net_free(&n);
	}
}

/* ---- balancing ---- */

/* In a two-level fat tree built by build_ft2, every leaf routes its own
 * HCAs to their ports and spreads the remote ones over its uplinks
 * within one of each other. */
static void check_leaf_balance(const struct net *n, unsigned leaves,
			       unsigned hosts, unsigned spines)
{
	for (uint32_t l = 0; l < leaves; l++) {
		unsigned cnt[256] = { 0 }, lo = ~0u, hi = 0, sum = 0;

		for (uint16_t lid = 1; lid <= imc_subnet_max_lid(n->s); lid++) {
			uint32_t o, at;
			unsigned op;
			int p;

			assert_int_equal(imc_subnet_lid_owner(n->s, lid, &o,
							      &op), 0);
			if (is_sw(n, o))
				continue;
			at = peer(n, o, 1)->peer;
			p = imc_subnet_lft(n->s, l, lid);
			if (at == l) {
				assert_int_equal(p, peer(n, o, 1)->peer_port);
				continue;
			}
			assert_true(p > (int)hosts);
			assert_true(p <= (int)(hosts + spines));
			cnt[p]++;
		}
		for (unsigned p = hosts + 1; p <= hosts + spines; p++) {
			lo = cnt[p] < lo ? cnt[p] : lo;
			hi = cnt[p] > hi ? cnt[p] : hi;
			sum += cnt[p];
		}
		assert_int_equal(sum, (leaves - 1) * hosts);
		assert_true(hi - lo <= 1);
	}
}

static void test_balance_leaves(void **state)
{
	struct net n;

	build_ft2(&n, 4, 5, 4);        /* 15 remote HCAs over 4 uplinks */
	sweep(&n);
	check_leaf_balance(&n, 4, 5, 4);
	net_free(&n);
}

/* Switches of more than 63 ports: uplinks on both sides of port 64, and
 * up to port 254. */
static void test_wide_switches(void **state)
{
	struct net n;

	build_ft2(&n, 3, 61, 5);       /* uplinks 62..66 */
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 191u * 191u);
	check_leaf_balance(&n, 3, 61, 5);
	net_free(&n);
	build_ft2(&n, 2, 250, 4);      /* uplinks 251..254 */
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 506u * 506u);
	check_leaf_balance(&n, 2, 250, 4);
	net_free(&n);
}

/* OpenSM 3.3.23 (minhop, LMC 0) bringing up build_ft2(4, 5, 4) written
 * as a net file on ibsim: the LIDs it gave (by node name, LID 1 first)
 * and the LFTs it programmed as ibroute dumped them, one port digit per
 * LID 1..28. Given the same LIDs, every route to an HCA must match.
 * Routes to switch LIDs differ by design: OpenSM leaves them out of its
 * port loads (port_profile_switch_nodes off), so it sends them all over
 * one uplink, where these spread them. */
static const char *const osm_lids[] = {
	"h0", "leaf0", "leaf1", "leaf2", "h1", "leaf3", "spine0", "h2",
	"spine1", "spine2", "h3", "spine3", "h4", "h5", "h6", "h7", "h8",
	"h9", "h10", "h11", "h12", "h13", "h14", "h15", "h16", "h17", "h18",
	"h19",
};

static const char *const osm_lft[][2] = {
	{ "leaf0", "1099296378495678967896789678" },
	{ "leaf1", "6909796878996123457896789678" },
	{ "leaf2", "6990796878996789671234589678" },
	{ "leaf3", "6999706878996789678967812345" },
	{ "spine0", "1123140111111222223333344444" },
	{ "spine1", "1123141101111222223333344444" },
	{ "spine2", "1123141110111222223333344444" },
	{ "spine3", "1123141111101222223333344444" },
};

static void test_opensm_fat_tree(void **state)
{
	struct net n;
	uint32_t x;

	build_ft2(&n, 4, 5, 4);
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(osm_lids); i++) {
		unsigned port;

		assert_int_equal(imc_topo_find(n.t, osm_lids[i], &x), 0);
		port = is_sw(&n, x) ? 0 : 1;
		assert_int_equal(imc_subnet_lid_set(n.s, x, port,
						    (uint16_t)(i + 1)), 0);
	}
	assert_int_equal(imc_subnet_assign_lids(n.s), 0);
	assert_int_equal(imc_subnet_route(n.s), 0);
	assert_int_equal(imc_subnet_sm_lid(n.s), 1);
	for (unsigned k = 0; k < IMC_ARRAY_SIZE(osm_lft); k++) {
		assert_int_equal(imc_topo_find(n.t, osm_lft[k][0], &x), 0);
		for (unsigned i = 0; i < IMC_ARRAY_SIZE(osm_lids); i++) {
			uint16_t lid = (uint16_t)(i + 1);
			uint32_t o;

			assert_int_equal(imc_topo_find(n.t, osm_lids[i], &o),
					 0);
			if (is_sw(&n, o))
				continue;
			assert_int_equal(imc_subnet_lft(n.s, x, lid),
					 osm_lft[k][1][i] - '0');
		}
	}
	assert_int_equal(check_all_pairs(&n), 28 * 28);
	net_free(&n);
}

/* ---- LIDs ---- */

static void test_deterministic(void **state)
{
	struct net n;
	struct imc_subnet *s2;
	uint16_t seen[64] = { 0 };

	build_ft3(&n, 2, 2, 3, 2, 2);
	sweep(&n);
	assert_int_equal(imc_subnet_create(n.t, &s2), 0);
	assert_int_equal(imc_subnet_sweep(s2), 0);
	for (uint32_t i = 0; i < n.t->nnodes; i++) {
		unsigned first = is_sw(&n, i) ? 0 : 1;
		int lid = imc_subnet_lid(n.s, i, first);

		/* Every node is reached: one LID each, never reused. */
		assert_true(lid > 0 && lid < 64);
		assert_int_equal(seen[lid], 0);
		seen[lid] = 1;
		assert_int_equal(imc_subnet_lid(s2, i, first), lid);
		if (is_sw(&n, i)) {
			size_t l1, l2;
			const uint8_t *a = imc_subnet_lft_table(n.s, i, &l1);
			const uint8_t *b = imc_subnet_lft_table(s2, i, &l2);

			assert_int_equal(l1, l2);
			assert_memory_equal(a, b, l1);
		}
	}
	assert_int_equal(imc_subnet_max_lid(n.s), n.t->nnodes);
	imc_subnet_destroy(s2);
	net_free(&n);
}

static void test_owner_lookup(void **state)
{
	struct net n;
	uint32_t node;
	unsigned port;

	build_ft2(&n, 3, 4, 2);
	sweep(&n);
	for (uint16_t lid = 1; lid <= imc_subnet_max_lid(n.s); lid++) {
		assert_int_equal(imc_subnet_lid_owner(n.s, lid, &node, &port),
				 0);
		assert_int_equal(imc_subnet_lid(n.s, node, port), lid);
		assert_int_equal(port, is_sw(&n, node) ? 0 : 1);
	}
	assert_int_equal(imc_subnet_lid_owner(n.s, imc_subnet_max_lid(n.s) + 1,
					      &node, &port), -ENOENT);
	net_free(&n);
}

/* New nodes keep old LIDs stable and take the lowest free LID. */
static void test_lid_stability(void **state)
{
	struct net n;
	uint16_t before[16];
	uint32_t h;
	int given;

	build_switch(&n, 4);           /* LIDs: h0 1, sw 2, h1..h3 3..5 */
	sweep(&n);
	for (uint32_t i = 0; i < 5; i++)
		before[i] = (uint16_t)imc_subnet_lid(n.s, i, i ? 1 : 0);
	/* Move h1 from 3 to 40: 3 becomes free. */
	assert_int_equal(imc_subnet_lid_set(n.s, 2, 1, 40), 0);
	assert_int_equal(imc_subnet_lid_owner(n.s, 3, NULL, NULL), -ENOENT);
	assert_int_equal(imc_subnet_max_lid(n.s), 40);
	assert_int_equal(imc_subnet_lid_set(n.s, 3, 1, 40), -EBUSY);
	before[2] = 40;
	/* Two HCAs cabled after the first sweep. */
	h = add(&n, IMC_NODE_HCA, 1, "new%u", 0);
	cable(&n, h, 1, 0, 6);
	cable(&n, add(&n, IMC_NODE_HCA, 1, "new%u", 1), 1, 0, 7);
	given = imc_subnet_assign_lids(n.s);
	assert_int_equal(given, 2);
	assert_int_equal(imc_subnet_assign_lids(n.s), 0);
	assert_int_equal(imc_subnet_route(n.s), 0);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(imc_subnet_lid(n.s, i, i ? 1 : 0), before[i]);
	assert_int_equal(imc_subnet_lid(n.s, h, 1), 3);
	assert_int_equal(imc_subnet_lid(n.s, h + 1, 1), 6);
	assert_int_equal(imc_subnet_lft(n.s, 0, 3), 6);
	assert_int_equal(imc_subnet_lft(n.s, 0, 40), 2);
	free(n.down);
	n.down = NULL;
	n.cap = 0;                     /* every cable is up */
	assert_int_equal(check_all_pairs(&n), 7 * 7);
	net_free(&n);
}

/* More endpoints than unicast LIDs: 49,152 HCAs on 254-port switches. */
static void test_lid_space_full(void **state)
{
	const unsigned per = 252, total = IMC_LID_UNICAST_MAX + 1;
	struct imc_subnet_stats st;
	struct net n;
	unsigned made = 0;
	uint32_t prev = IMC_TOPO_NONE, first = IMC_TOPO_NONE;

	net_init(&n);
	for (unsigned sw = 0; made < total; sw++) {
		uint32_t x = add(&n, IMC_NODE_SWITCH, 254, "sw%u", sw);

		if (prev != IMC_TOPO_NONE)
			cable(&n, prev, 254, x, 253);
		for (unsigned k = 1; k <= per && made < total; k++, made++) {
			uint32_t h = add(&n, IMC_NODE_HCA, 1, "h%u", made);

			if (first == IMC_TOPO_NONE)
				first = h;
			cable(&n, h, 1, x, k);
		}
		prev = x;
	}
	net_start(&n, first, 1);
	assert_int_equal(imc_subnet_assign_lids(n.s), -ENOSPC);
	assert_int_equal(imc_subnet_max_lid(n.s), IMC_LID_UNICAST_MAX);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.lids, IMC_LID_UNICAST_MAX);
	/* The last HCAs found get none. */
	assert_int_equal(imc_subnet_lid(n.s, n.t->nnodes - 1, 1), 0);
	assert_int_equal(imc_subnet_sweep(n.s), -ENOSPC);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.routable_lids, IMC_LID_UNICAST_MAX);
	net_free(&n);
}

/* ---- link changes ---- */

static void test_spine_cable_down(void **state)
{
	const unsigned leaves = 4, hosts = 5, spines = 4;
	struct net n;
	uint16_t lids[64];
	uint32_t spine0 = leaves;

	build_ft2(&n, leaves, hosts, spines);
	sweep(&n);
	for (uint32_t i = 0; i < n.t->nnodes; i++)
		lids[i] = (uint16_t)imc_subnet_lid(n.s, i, !is_sw(&n, i));
	/* leaf0 port hosts+1 is its cable to spine0. */
	cut(&n, 0, hosts + 1, false);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 28 * 28);
	for (uint16_t lid = 1; lid <= imc_subnet_max_lid(n.s); lid++) {
		assert_int_not_equal(imc_subnet_lft(n.s, 0, lid), hosts + 1);
		assert_int_not_equal(imc_subnet_lft(n.s, spine0, lid), 1);
	}
	/* Spine0 to leaf0's HCAs now goes down and up again: 4 hops. */
	assert_int_equal(imc_subnet_hops(n.s, spine0, lids[leaves + spines]),
			 4);
	/* The remaining uplinks of leaf0 still share the load evenly. */
	{
		unsigned cnt[16] = { 0 };

		for (uint16_t lid = 1; lid <= imc_subnet_max_lid(n.s); lid++) {
			uint32_t o;
			unsigned op;

			imc_subnet_lid_owner(n.s, lid, &o, &op);
			if (!is_sw(&n, o) && peer(&n, o, 1)->peer != 0)
				cnt[imc_subnet_lft(n.s, 0, lid)]++;
		}
		assert_int_equal(cnt[hosts + 1], 0);
		for (unsigned p = hosts + 2; p <= hosts + spines; p++)
			assert_int_equal(cnt[p], 5);
	}
	for (uint32_t i = 0; i < n.t->nnodes; i++)
		assert_int_equal(imc_subnet_lid(n.s, i, is_sw(&n, i) ? 0 : 1),
				 lids[i]);
	net_free(&n);
}

static void test_hca_cable_down(void **state)
{
	struct net n;
	uint8_t *tables;
	uint32_t victim;
	uint16_t vlid;
	size_t len0 = 0;
	unsigned nsw = 4 + 4;

	build_ft2(&n, 4, 5, 4);
	sweep(&n);
	imc_subnet_lft_table(n.s, 0, &len0);
	tables = malloc(nsw * len0);
	assert_non_null(tables);
	for (uint32_t i = 0; i < nsw; i++)
		memcpy(tables + i * len0, imc_subnet_lft_table(n.s, i, NULL),
		       len0);
	victim = nsw + 7;              /* h7, on leaf1 port 3 */
	vlid = (uint16_t)imc_subnet_lid(n.s, victim, 1);
	assert_true(vlid > 0);
	cut(&n, victim, 1, false);
	sweep(&n);
	assert_int_equal(imc_subnet_lid(n.s, victim, 1), vlid);
	for (uint32_t i = 0; i < nsw; i++)
		assert_int_equal(imc_subnet_lft(n.s, i, vlid), IMC_PORT_NONE);
	assert_int_equal(imc_subnet_hops(n.s, 0, vlid), -EHOSTUNREACH);
	assert_int_equal(imc_subnet_next_hop(n.s, victim, 0, 1),
			 IMC_PORT_NONE);
	/* 27 LIDs still route among themselves; nothing reaches vlid. */
	assert_int_equal(check_all_pairs(&n), 27 * 27);
	cut(&n, victim, 1, true);
	sweep(&n);
	assert_int_equal(imc_subnet_lid(n.s, victim, 1), vlid);
	for (uint32_t i = 0; i < nsw; i++) {
		size_t len;
		const uint8_t *row = imc_subnet_lft_table(n.s, i, &len);

		assert_int_equal(len, len0);
		assert_memory_equal(row, tables + i * len0, len0);
	}
	assert_int_equal(check_all_pairs(&n), 28 * 28);
	free(tables);
	net_free(&n);
}

/* Routes follow the last sweep: a cable cut without one leaves the LFT
 * as it was. */
static void test_route_needs_sweep(void **state)
{
	struct net n;
	int before;

	build_switch(&n, 3);
	sweep(&n);
	before = imc_subnet_lft(n.s, 0, 3);
	assert_int_equal(before, 2);
	assert_int_equal(imc_subnet_link_set(n.s, 2, 1, false), 0);
	assert_int_equal(imc_subnet_lft(n.s, 0, 3), 2);
	assert_int_equal(imc_subnet_route(n.s), 0);
	assert_int_equal(imc_subnet_lft(n.s, 0, 3), IMC_PORT_NONE);
	net_free(&n);
}

/* A line of 256 switches needs 255 hops end to end: refused. */
static void test_too_many_hops(void **state)
{
	struct net n;
	uint32_t h;

	net_init(&n);
	for (unsigned i = 0; i < 256; i++) {
		add(&n, IMC_NODE_SWITCH, 3, "sw%u", i);
		if (i)
			cable(&n, i - 1, 2, i, 1);
	}
	h = add(&n, IMC_NODE_HCA, 1, "h%u", 0);
	cable(&n, h, 1, 0, 3);
	net_start(&n, h, 1);
	assert_int_equal(imc_subnet_assign_lids(n.s), 257);
	assert_int_equal(imc_subnet_route(n.s), -ERANGE);
	assert_int_equal(imc_subnet_lft(n.s, 0, 1), IMC_PORT_NONE);
	/* Cut at 200 switches, it routes. */
	assert_int_equal(imc_subnet_link_set(n.s, 199, 2, false), 0);
	assert_int_equal(imc_subnet_route(n.s), 0);
	assert_int_equal(imc_subnet_hops(n.s, 199, 1), 200);
	assert_int_equal(imc_subnet_lft(n.s, 200, 1), IMC_PORT_NONE);
	net_free(&n);
}

/* ---- SM placement ---- */

static void test_sm_on_switch(void **state)
{
	struct net n;

	build_ft2(&n, 2, 2, 1);
	imc_subnet_destroy(n.s);
	n.t->sm_node = 2;              /* spine0 */
	n.t->sm_port = 0;
	assert_int_equal(imc_subnet_create(n.t, &n.s), 0);
	sweep(&n);
	assert_int_equal(imc_subnet_sm_lid(n.s), 1);
	assert_int_equal(imc_subnet_lid(n.s, 2, 0), 1);
	assert_int_equal(imc_subnet_lid(n.s, 0, 0), 2);   /* leaf0, port 1 */
	assert_int_equal(check_all_pairs(&n), 7 * 7);
	/* Moving the SM keeps LIDs. */
	assert_int_equal(imc_subnet_sm_set(n.s, 3, 1), 0);
	assert_int_equal(imc_subnet_sweep(n.s), 0);
	assert_int_equal(imc_subnet_sm_lid(n.s), imc_subnet_lid(n.s, 3, 1));
	assert_int_equal(imc_subnet_lid(n.s, 2, 0), 1);
	net_free(&n);
}

/* The SM's own cable: uncabled or down, the SM reaches nothing; cut
 * after a sweep, every LID stays and none is routable. */
static void test_sm_port_down(void **state)
{
	struct imc_subnet_stats st;
	struct net n;

	net_init(&n);
	add(&n, IMC_NODE_HCA, 1, "h%u", 0);
	net_start(&n, 0, 1);
	assert_int_equal(imc_subnet_sweep(n.s), 0);
	assert_int_equal(imc_subnet_sm_lid(n.s), 0);
	assert_int_equal(imc_subnet_max_lid(n.s), 0);
	net_free(&n);

	build_switch(&n, 3);
	sweep(&n);
	cut(&n, 1, 1, false);
	sweep(&n);
	imc_subnet_stats(n.s, &st);
	assert_int_equal(st.lids, 4);
	assert_int_equal(st.routable_lids, 0);
	assert_int_equal(st.switches_routed, 0);
	assert_int_equal(st.routes, 0);
	assert_int_equal(imc_subnet_sm_lid(n.s), 1);
	assert_int_equal(imc_subnet_lft(n.s, 0, 3), IMC_PORT_NONE);
	assert_int_equal(check_all_pairs(&n), 0);
	cut(&n, 1, 1, true);
	sweep(&n);
	assert_int_equal(check_all_pairs(&n), 4 * 4);
	net_free(&n);
}

/* ---- bad input ---- */

static void test_bad_input(void **state)
{
	struct imc_subnet *s;
	struct net n;
	uint32_t node;
	unsigned port;
	uint32_t nn;

	build_island(&n, &(struct island){ 0 });
	nn = n.t->nnodes;
	assert_int_equal(imc_subnet_create(NULL, &s), -EINVAL);
	assert_int_equal(imc_subnet_create(n.t, NULL), -EINVAL);
	/* Before any sweep: no LIDs, no routes. */
	assert_int_equal(imc_subnet_lft(n.s, 0, 1), IMC_PORT_NONE);
	assert_int_equal(imc_subnet_hops(n.s, 0, 1), -ENOENT);
	assert_int_equal(imc_subnet_sm_lid(n.s), 0);
	sweep(&n);

	assert_int_equal(imc_subnet_link_set(n.s, nn, 1, false), -EINVAL);
	assert_int_equal(imc_subnet_link_set(n.s, UINT32_MAX, 1, false),
			 -EINVAL);
	assert_int_equal(imc_subnet_link_set(n.s, 0, 0, false), -EINVAL);
	assert_int_equal(imc_subnet_link_set(n.s, 0, 9, false), -EINVAL);
	assert_int_equal(imc_subnet_link_set(n.s, 0, 5, false), -EINVAL);
	assert_int_equal(imc_subnet_link_set(n.s, 9, 1, false), -EINVAL);
	assert_int_equal(imc_subnet_link_set(NULL, 0, 1, false), -EINVAL);
	assert_false(imc_subnet_link_up(n.s, 0, 5));
	assert_false(imc_subnet_link_up(n.s, 0, 0));
	assert_false(imc_subnet_link_up(n.s, nn, 1));
	assert_true(imc_subnet_link_up(n.s, 0, 1));

	assert_int_equal(imc_subnet_lid(n.s, nn, 1), -EINVAL);
	assert_int_equal(imc_subnet_lid(n.s, 2, 0), -EINVAL);  /* HCA port 0 */
	assert_int_equal(imc_subnet_lid(n.s, 2, 2), -EINVAL);
	assert_int_equal(imc_subnet_lid(n.s, 0, 9), -EINVAL);
	assert_int_equal(imc_subnet_lid_owner(n.s, 0, &node, &port), -EINVAL);
	assert_int_equal(imc_subnet_lid_owner(n.s, 0xC000, &node, &port),
			 -EINVAL);
	assert_int_equal(imc_subnet_lid_owner(n.s, 0xFFFF, &node, &port),
			 -EINVAL);
	assert_int_equal(imc_subnet_lid_owner(n.s, 5, &node, &port), -ENOENT);

	assert_int_equal(imc_subnet_lft(n.s, 2, 1), -EINVAL);  /* an HCA */
	assert_int_equal(imc_subnet_lft(n.s, nn, 1), -EINVAL);
	assert_int_equal(imc_subnet_lft(n.s, 0, 0), IMC_PORT_NONE);
	assert_int_equal(imc_subnet_lft(n.s, 0, 0xBFFF), IMC_PORT_NONE);
	assert_int_equal(imc_subnet_lft(n.s, 0, 0xFFFF), IMC_PORT_NONE);
	assert_null(imc_subnet_lft_table(n.s, 2, NULL));

	assert_int_equal(imc_subnet_hops(n.s, nn, 1), -EINVAL);
	assert_int_equal(imc_subnet_hops(n.s, 0, 0), -EINVAL);
	assert_int_equal(imc_subnet_hops(n.s, 0, 0xC001), -EINVAL);
	assert_int_equal(imc_subnet_hops(n.s, 0, 100), -ENOENT);
	assert_int_equal(imc_subnet_next_hop(n.s, 2, 2, 1), -EINVAL);
	assert_int_equal(imc_subnet_next_hop(n.s, nn, 0, 1), -EINVAL);
	assert_int_equal(imc_subnet_next_hop(n.s, 2, 0, 0), -EINVAL);
	assert_int_equal(imc_subnet_next_hop(n.s, 2, 0, 0xC000), -EINVAL);
	assert_int_equal(imc_subnet_next_hop(n.s, 2, 0, 100), IMC_PORT_NONE);
	assert_int_equal(imc_subnet_next_hop(n.s, 0, 0, 100), IMC_PORT_NONE);

	assert_int_equal(imc_subnet_sm_set(n.s, 0, 1), -EINVAL); /* switch */
	assert_int_equal(imc_subnet_sm_set(n.s, 2, 0), -EINVAL);
	assert_int_equal(imc_subnet_sm_set(n.s, 2, 2), -EINVAL);
	assert_int_equal(imc_subnet_sm_set(n.s, nn, 1), -EINVAL);
	assert_int_equal(imc_subnet_lid_set(n.s, 2, 1, 0), -EINVAL);
	assert_int_equal(imc_subnet_lid_set(n.s, 2, 1, 0xC000), -EINVAL);
	assert_int_equal(imc_subnet_lid_set(n.s, 0, 1, 9), -EINVAL);
	assert_int_equal(imc_subnet_lid_set(n.s, 2, 1, 2), -EBUSY);
	assert_int_equal(imc_subnet_lid_set(n.s, 2, 1, 1), 0);  /* its own */
	assert_int_equal(imc_subnet_assign_lids(NULL), -EINVAL);
	assert_int_equal(imc_subnet_route(NULL), -EINVAL);
	imc_subnet_destroy(NULL);
	net_free(&n);

	/* No SM, or an SM port that does not exist. */
	net_init(&n);
	add(&n, IMC_NODE_HCA, 1, "h%u", 0);
	assert_int_equal(imc_subnet_create(n.t, &n.s), 0);
	assert_int_equal(imc_subnet_assign_lids(n.s), -EINVAL);
	assert_int_equal(imc_subnet_route(n.s), -EINVAL);
	assert_int_equal(imc_subnet_sweep(n.s), -EINVAL);
	imc_subnet_destroy(n.s);
	n.t->sm_node = 0;
	n.t->sm_port = 2;
	assert_int_equal(imc_subnet_create(n.t, &s), -EINVAL);
	n.t->sm_node = 7;
	assert_int_equal(imc_subnet_create(n.t, &s), -EINVAL);
	n.s = NULL;
	net_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_switch),
		cmocka_unit_test(test_two_switches),
		cmocka_unit_test(test_fat_tree_2level),
		cmocka_unit_test(test_fat_tree_3level),
		cmocka_unit_test(test_clos_648),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_generated_small),
		cmocka_unit_test(test_generated_10k),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_random_fabrics),
		cmocka_unit_test(test_balance_leaves),
		cmocka_unit_test(test_wide_switches),
		cmocka_unit_test(test_opensm_fat_tree),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_owner_lookup),
		cmocka_unit_test(test_lid_stability),
		cmocka_unit_test(test_lid_space_full),
		cmocka_unit_test(test_spine_cable_down),
		cmocka_unit_test(test_hca_cable_down),
		cmocka_unit_test(test_route_needs_sweep),
		cmocka_unit_test(test_too_many_hops),
		cmocka_unit_test(test_sm_on_switch),
		cmocka_unit_test(test_sm_port_down),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
