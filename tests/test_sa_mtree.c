/* Incremental multicast spanning trees (mtree.h).
 *
 * The MFT entries the tree reports are kept here, and a flood written for
 * this test walks them over the topology: a member's packet enters its
 * switch, each switch sends it out of every port of its entry except the
 * ingress port (IBA 18.2.4.4). After every step of random join/leave
 * sequences (fixed seeds, printed on failure) every member must reach each
 * member it can reach over cables that are up exactly once, no switch may
 * see the packet twice, no port that is not a member may get a copy, no
 * entry may lead into a cable that is down or uncabled, and every switch
 * with an entry must carry traffic. Rebuilds must equal a from-scratch
 * tree built by adding the members in (node, port) order.
 *
 * Last, the SA served on the simulated fabric (sa_fabric.h): joins and
 * leaves sent as MADs from client QP1s program the fabric's MFTs, and
 * datagrams sent to the group reach every member once, also after a
 * member's cable and a switch cable fail.
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

#include "ibmcast/fabric.h"
#include "ibmcast/mad.h"
#include "ibmcast/mtree.h"
#include "ibmcast/packet.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_fabric.h"

#define NM 3                      /* MLIDs used by the random tests */
#define MLID0 0xc000

/* ibsim's net-examples/net.2sw2path4hca2port: two 8-port switches joined
 * by parallel cables on ports 3 and 5, a 2-port HCA on each, both ports
 * cabled. */
static const char two_switch_net[] =
	"Switch\t8 \"Switch1\"\n"
	"[1]\t\"Hca1\"[1]\n"
	"[2]\t\"Hca1\"[2]\n"
	"[3]\t\"Switch2\"[3]\n"
	"[5]\t\"Switch2\"[5]\n"
	"\n"
	"Switch 8 \"Switch2\"\n"
	"[1]\t\"Hca2\"[1]\n"
	"[2]\t\"Hca2\"[2]\n"
	"[3]\t\"Switch1\"[3]\n"
	"[5]\t\"Switch1\"[5]\n"
	"\n"
	"Hca\t2 \"Hca1\"\n"
	"[1]\t\"Switch1\"[1]\n"
	"[2]\t\"Switch1\"[2]\n"
	"\n"
	"Hca\t2 \"Hca2\"\n"
	"[1]\t\"Switch2\"[1]\n"
	"[2]\t\"Switch2\"[2]\n";

/* A topology with test-side link state and candidate member ports: every
 * HCA port and every switch's port 0. */
struct net {
	struct imc_topo *t;
	uint8_t *down;            /* [node * 256 + port] */
	uint32_t ncand;
	uint32_t *cbase;          /* first candidate of each node */
	uint32_t *cnode;
	uint8_t *cport;
	uint32_t nsw;             /* switch-to-switch cables, each once */
	uint32_t *swnode;
	uint8_t *swport;
};

/* One mtree and the MFT entries it reported. */
struct rig {
	struct net *n;
	struct imc_mtree *mt;
	struct imc_mtree_mask *mft;   /* [NM][nnodes] */
	unsigned reports;
	uint64_t hash;                /* of every report, in order */
	uint32_t last_sw[8];          /* first reports of a call */
};

static unsigned long long cur_seed;
static unsigned cur_step;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			print_error("seed %llu step %u: ", cur_seed,        \
				    cur_step);                              \
			fail_msg(__VA_ARGS__);                              \
		}                                                           \
	} while (0)

static void net_init(struct net *n, struct imc_topo *t)
{
	uint32_t c = 0;

	memset(n, 0, sizeof(*n));
	n->t = t;
	n->down = calloc((size_t)t->nnodes * 256, 1);
	n->cbase = calloc(t->nnodes, sizeof(*n->cbase));
	assert_non_null(n->down);
	assert_non_null(n->cbase);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		n->cbase[i] = c;
		c += t->node[i].type == IMC_NODE_HCA ? t->node[i].nports : 1;
	}
	n->ncand = c;
	n->cnode = calloc(c, sizeof(*n->cnode));
	n->cport = calloc(c, 1);
	assert_true(n->cnode && n->cport);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		if (tn->type == IMC_NODE_HCA) {
			for (unsigned p = 1; p <= tn->nports; p++) {
				n->cnode[n->cbase[i] + p - 1] = i;
				n->cport[n->cbase[i] + p - 1] = (uint8_t)p;
			}
			continue;
		}
		n->cnode[n->cbase[i]] = i;
		n->cport[n->cbase[i]] = 0;
	}
	/* Switch cables, listed from their lower (node, port) end. */
	c = 1;
	for (uint32_t i = 0; i < t->nnodes; i++)
		c += t->node[i].nports;
	n->swnode = calloc(c, sizeof(*n->swnode));
	n->swport = calloc(c, 1);
	assert_true(n->swnode && n->swport);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		if (tn->type != IMC_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= tn->nports; p++) {
			uint32_t peer = tn->port[p].peer;

			if (peer == IMC_TOPO_NONE ||
			    t->node[peer].type != IMC_NODE_SWITCH ||
			    peer < i || (peer == i && tn->port[p].peer_port < p))
				continue;
			n->swnode[n->nsw] = i;
			n->swport[n->nsw++] = (uint8_t)p;
		}
	}
}

static void net_fini(struct net *n)
{
	free(n->down);
	free(n->cbase);
	free(n->cnode);
	free(n->cport);
	free(n->swnode);
	free(n->swport);
	imc_topo_destroy(n->t);
}

static bool is_down(const struct net *n, uint32_t node, unsigned port)
{
	return n->down[(size_t)node * 256 + port];
}

static void set_down(struct net *n, uint32_t node, unsigned port, bool down)
{
	const struct imc_topo_port *tp = &n->t->node[node].port[port];

	n->down[(size_t)node * 256 + port] = down;
	n->down[(size_t)tp->peer * 256 + tp->peer_port] = down;
}

static bool cb_link_up(void *ctx, uint32_t node, unsigned port)
{
	struct rig *r = ctx;

	return !is_down(r->n, node, port);
}

static int mslot(uint16_t mlid)
{
	return mlid - MLID0;
}

static void cb_mft_set(void *ctx, uint32_t sw, uint16_t mlid,
		       const struct imc_mtree_mask *ports)
{
	struct rig *r = ctx;
	const struct imc_topo *t = r->n->t;
	struct imc_mtree_mask *cur;

	CHECK(sw < t->nnodes && t->node[sw].type == IMC_NODE_SWITCH,
	      "entry for node %u, not a switch", sw);
	CHECK(mslot(mlid) >= 0 && mslot(mlid) < NM, "MLID 0x%x", mlid);
	cur = &r->mft[(size_t)mslot(mlid) * t->nnodes + sw];
	/* Only changes are reported. */
	CHECK(memcmp(cur, ports, sizeof(*cur)) != 0,
	      "unchanged entry reported for switch %u", sw);
	for (unsigned p = t->node[sw].nports + 1; p < 256; p++)
		CHECK(!imc_mtree_mask_test(ports, p), "port %u of switch %u",
		      p, sw);
	*cur = *ports;
	if (r->reports < IMC_ARRAY_SIZE(r->last_sw))
		r->last_sw[r->reports] = sw;
	r->reports++;
	r->hash = (r->hash ^ sw ^ (uint64_t)mlid << 32) * 0x100000001b3ull;
	for (int i = 0; i < 4; i++)
		r->hash = (r->hash ^ ports->bits[i]) * 0x100000001b3ull;
}

static const struct imc_mtree_ops ops = {
	.link_up = cb_link_up,
	.mft_set = cb_mft_set,
};

static void rig_init(struct rig *r, struct net *n)
{
	memset(r, 0, sizeof(*r));
	r->n = n;
	r->mft = calloc((size_t)NM * n->t->nnodes, sizeof(*r->mft));
	assert_non_null(r->mft);
	assert_int_equal(imc_mtree_create(n->t, &ops, r, &r->mt), 0);
}

static void rig_fini(struct rig *r)
{
	imc_mtree_destroy(r->mt);
	free(r->mft);
}

static const struct imc_mtree_mask *stored(const struct rig *r, int mi,
					   uint32_t sw)
{
	return &r->mft[(size_t)mi * r->n->t->nnodes + sw];
}

static struct net *load(const char *spec)
{
	struct net *n = calloc(1, sizeof(*n));
	struct imc_topo *t;
	char err[128];

	assert_non_null(n);
	if (!strcmp(spec, "two-switch"))
		assert_int_equal(imc_topo_parse_string(two_switch_net, spec,
						       &t, err, sizeof(err)),
				 0);
	else
		assert_int_equal(imc_topo_generate(spec, &t, err, sizeof(err)),
				 0);
	net_init(n, t);
	return n;
}

static void unload(struct net *n)
{
	net_fini(n);
	free(n);
}

/* ---- the independent check ---- */

/* Which switch a candidate hangs off now, IMC_TOPO_NONE when none. */
static uint32_t home(const struct net *n, uint32_t c, unsigned *in)
{
	const struct imc_topo *t = n->t;
	uint32_t node = n->cnode[c];
	unsigned port = n->cport[c];
	const struct imc_topo_port *tp;

	if (t->node[node].type == IMC_NODE_SWITCH) {
		*in = 0;
		return node;
	}
	tp = &t->node[node].port[port];
	if (tp->peer == IMC_TOPO_NONE || is_down(n, node, port) ||
	    t->node[tp->peer].type != IMC_NODE_SWITCH)
		return IMC_TOPO_NONE;
	*in = tp->peer_port;
	return tp->peer;
}

/* Connected parts of the switches over cables that are up. */
static void parts(const struct net *n, uint32_t *comp)
{
	const struct imc_topo *t = n->t;
	uint32_t *q = calloc(t->nnodes, sizeof(*q));

	assert_non_null(q);
	for (uint32_t i = 0; i < t->nnodes; i++)
		comp[i] = IMC_TOPO_NONE;
	for (uint32_t s = 0; s < t->nnodes; s++) {
		size_t h = 0, tl = 0;

		if (t->node[s].type != IMC_NODE_SWITCH ||
		    comp[s] != IMC_TOPO_NONE)
			continue;
		comp[s] = s;
		q[tl++] = s;
		while (h < tl) {
			uint32_t u = q[h++];

			for (unsigned p = 1; p <= t->node[u].nports; p++) {
				uint32_t v = t->node[u].port[p].peer;

				if (v == IMC_TOPO_NONE || is_down(n, u, p) ||
				    t->node[v].type != IMC_NODE_SWITCH ||
				    comp[v] != IMC_TOPO_NONE)
					continue;
				comp[v] = s;
				q[tl++] = v;
			}
		}
	}
	free(q);
}

struct flood {
	uint32_t *got;       /* copies per candidate */
	uint32_t *seen;      /* switch visits of one flood */
	uint8_t *used;       /* switches any flood went through */
	uint32_t *qs;
	uint8_t *qp;
	uint32_t *comp;
};

/* Sends one packet from candidate src to MLID slot mi over r's entries
 * and checks every copy. Returns the switches it went through. */
static unsigned send1(const struct rig *r, struct flood *f, int mi,
		      const bool *member, uint32_t src)
{
	const struct net *n = r->n;
	const struct imc_topo *t = n->t;
	size_t h = 0, tl = 0;
	unsigned in, visits = 0;
	uint32_t s = home(n, src, &in);

	memset(f->got, 0, n->ncand * sizeof(*f->got));
	memset(f->seen, 0, t->nnodes * sizeof(*f->seen));
	if (s != IMC_TOPO_NONE) {
		f->qs[tl] = s;
		f->qp[tl++] = (uint8_t)in;
	}
	while (h < tl) {
		const struct imc_mtree_mask *m;

		s = f->qs[h];
		in = f->qp[h++];
		CHECK(!f->seen[s], "MLID 0x%x from %u:%u reaches switch %u "
		      "twice", MLID0 + mi, n->cnode[src], n->cport[src], s);
		f->seen[s] = 1;
		f->used[s] = 1;
		visits++;
		m = stored(r, mi, s);
		for (unsigned p = 0; p <= t->node[s].nports; p++) {
			const struct imc_topo_port *tp = &t->node[s].port[p];
			uint32_t c;

			if (!imc_mtree_mask_test(m, p) || p == in)
				continue;
			if (p == 0) {
				c = n->cbase[s];
			} else {
				CHECK(tp->peer != IMC_TOPO_NONE,
				      "switch %u port %u uncabled", s, p);
				CHECK(!is_down(n, s, p),
				      "switch %u port %u is down", s, p);
				if (t->node[tp->peer].type == IMC_NODE_SWITCH) {
					CHECK(tl < t->nnodes, "runaway flood");
					f->qs[tl] = tp->peer;
					f->qp[tl++] = tp->peer_port;
					continue;
				}
				c = n->cbase[tp->peer] + tp->peer_port - 1;
			}
			CHECK(member[c], "MLID 0x%x: copy to %u:%u, not a "
			      "member", MLID0 + mi, n->cnode[c], n->cport[c]);
			f->got[c]++;
		}
	}
	return visits;
}

/* The whole check of one MLID on one rig. */
static void check_mlid(const struct rig *r, struct flood *f, int mi,
		       const bool *member)
{
	const struct net *n = r->n;
	const struct imc_topo *t = n->t;
	uint16_t mlid = (uint16_t)(MLID0 + mi);
	struct imc_mtree_group_info gi;
	uint32_t nmem = 0, nattached = 0, nsw = 0;
	int rc;

	parts(n, f->comp);
	memset(f->used, 0, t->nnodes);
	for (uint32_t a = 0; a < n->ncand; a++) {
		unsigned in;
		uint32_t ha;

		if (!member[a])
			continue;
		nmem++;
		ha = home(n, a, &in);
		nattached += ha != IMC_TOPO_NONE;
		send1(r, f, mi, member, a);
		for (uint32_t b = 0; b < n->ncand; b++) {
			uint32_t hb = home(n, b, &in);
			unsigned want = member[b] && b != a &&
					ha != IMC_TOPO_NONE &&
					hb != IMC_TOPO_NONE &&
					f->comp[ha] == f->comp[hb];

			CHECK(f->got[b] == want, "MLID 0x%x: %u:%u -> %u:%u "
			      "got %u copies, want %u", mlid, n->cnode[a],
			      n->cport[a], n->cnode[b], n->cport[b],
			      f->got[b], want);
		}
	}
	for (uint32_t s = 0; s < t->nnodes; s++) {
		struct imc_mtree_mask e;

		if (t->node[s].type != IMC_NODE_SWITCH)
			continue;
		assert_int_equal(imc_mtree_entry(r->mt, mlid, s, &e), 0);
		CHECK(!memcmp(&e, stored(r, mi, s), sizeof(e)),
		      "switch %u: reported entry differs from the held one",
		      s);
		if (imc_mtree_mask_empty(&e))
			continue;
		nsw++;
		/* A switch without member ports is a relay: two tree edges
		 * at least, or its branch leads nowhere. */
		{
			unsigned mports = 0, sports = 0;

			for (unsigned p = 0; p <= t->node[s].nports; p++) {
				uint32_t peer = t->node[s].port[p].peer;

				if (!imc_mtree_mask_test(&e, p))
					continue;
				if (p && peer != IMC_TOPO_NONE &&
				    t->node[peer].type == IMC_NODE_SWITCH)
					sports++;
				else
					mports++;
			}
			CHECK(mports || sports >= 2, "MLID 0x%x: switch %u "
			      "is a dead end", mlid, s);
		}
		/* No branch leads nowhere. */
		CHECK(f->used[s], "MLID 0x%x: switch %u has an entry no "
		      "member's packet goes through", mlid, s);
	}
	rc = imc_mtree_group_info(r->mt, mlid, &gi);
	if (!nmem) {
		CHECK(rc == -ENOENT, "MLID 0x%x: no members, info %d", mlid,
		      rc);
		CHECK(nsw == 0, "MLID 0x%x: no members, %u entries", mlid,
		      nsw);
		return;
	}
	CHECK(rc == 0, "info %d", rc);
	CHECK(gi.members == nmem, "members %u want %u", gi.members, nmem);
	CHECK(gi.attached == nattached, "attached %u want %u", gi.attached,
	      nattached);
	CHECK(gi.switches == nsw, "switches %u want %u", gi.switches, nsw);
	CHECK(gi.parts == gi.switches - gi.edges, "parts");
}

static void flood_init(struct flood *f, const struct net *n)
{
	uint32_t nn = n->t->nnodes;

	f->got = calloc(n->ncand, sizeof(*f->got));
	f->seen = calloc(nn, sizeof(*f->seen));
	f->used = calloc(nn, 1);
	f->qs = calloc(nn, sizeof(*f->qs));
	f->qp = calloc(nn, 1);
	f->comp = calloc(nn, sizeof(*f->comp));
	assert_true(f->got && f->seen && f->used && f->qs && f->qp &&
		    f->comp);
}

static void flood_fini(struct flood *f)
{
	free(f->got);
	free(f->seen);
	free(f->used);
	free(f->qs);
	free(f->qp);
	free(f->comp);
}

/* A fresh mtree with the members of every MLID added in (node, port)
 * order; a rebuild must give exactly its entries. */
static void from_scratch(struct rig *s, struct net *n, bool *const *member)
{
	rig_init(s, n);
	for (int mi = 0; mi < NM; mi++)
		for (uint32_t c = 0; c < n->ncand; c++)
			if (member[mi][c])
				assert_true(imc_mtree_add(s->mt, (uint16_t)(MLID0 + mi),
							  n->cnode[c],
							  n->cport[c]) >= 0);
}

static void same_entries(const struct rig *a, const struct rig *b)
{
	for (int mi = 0; mi < NM; mi++)
		for (uint32_t s = 0; s < a->n->t->nnodes; s++)
			CHECK(!memcmp(stored(a, mi, s), stored(b, mi, s),
				      sizeof(struct imc_mtree_mask)),
			      "MLID 0x%x switch %u differs from a fresh tree",
			      MLID0 + mi, s);
}

/* ---- random join/leave sequences ---- */

struct walk {
	unsigned steps;
	double link_p;            /* chance a step flips a cable */
	double sw0_p;             /* chance a pick is a switch port 0 */
	unsigned rebuild_every;
};

static uint64_t run_walk(const char *spec, uint64_t seed,
			 const struct walk *w)
{
	struct net *n = load(spec);
	struct rig r, s;
	struct flood f;
	struct imc_rng rng;
	bool *member[NM];
	uint64_t hash;

	cur_seed = seed;
	imc_rng_seed(&rng, seed);
	rig_init(&r, n);
	flood_init(&f, n);
	for (int mi = 0; mi < NM; mi++) {
		member[mi] = calloc(n->ncand, sizeof(bool));
		assert_non_null(member[mi]);
	}

	for (cur_step = 0; cur_step < w->steps; cur_step++) {
		int mi = (int)imc_rng_below(&rng, NM);
		uint16_t mlid = (uint16_t)(MLID0 + mi);
		uint32_t c;
		unsigned in;
		int rc;

		if (imc_rng_chance(&rng, w->link_p)) {
			/* Flip a switch cable or an HCA cable, then rebuild. */
			uint32_t k = (uint32_t)imc_rng_below(&rng,
							      n->nsw + 4);
			unsigned before = r.reports;

			if (k < n->nsw) {
				set_down(n, n->swnode[k], n->swport[k],
					 !is_down(n, n->swnode[k],
						  n->swport[k]));
			} else {
				do
					c = (uint32_t)imc_rng_below(&rng,
								    n->ncand);
				while (!n->cport[c]);
				set_down(n, n->cnode[c], n->cport[c],
					 !is_down(n, n->cnode[c],
						  n->cport[c]));
			}
			/* Half the time a fresh rebuild, else a repair,
			 * which a second repair finds nothing to do for. */
			if (imc_rng_chance(&rng, 0.5)) {
				rc = imc_mtree_rebuild_all(r.mt);
			} else {
				rc = imc_mtree_repair_all(r.mt);
				CHECK(imc_mtree_repair_all(r.mt) == 0,
				      "second repair");
			}
			CHECK(rc >= 0 && (unsigned)rc == r.reports - before,
			      "rebuild %d, reports %u", rc,
			      r.reports - before);
		} else {
			unsigned before = r.reports;
			bool was;

			if (imc_rng_chance(&rng, w->sw0_p)) {
				do
					c = (uint32_t)imc_rng_below(&rng,
								    n->ncand);
				while (n->cport[c]);
			} else {
				do
					c = (uint32_t)imc_rng_below(&rng,
								    n->ncand);
				while (!n->cport[c]);
			}
			was = member[mi][c];
			CHECK(imc_mtree_is_member(r.mt, mlid, n->cnode[c],
						  n->cport[c]) == was,
			      "membership of %u:%u", n->cnode[c], n->cport[c]);
			if (was)
				rc = imc_mtree_remove(r.mt, mlid, n->cnode[c],
						      n->cport[c]);
			else
				rc = imc_mtree_add(r.mt, mlid, n->cnode[c],
						   n->cport[c]);
			member[mi][c] = !was;
			CHECK(rc >= 0 && (unsigned)rc == r.reports - before,
			      "%s %u:%u returned %d, %u reports",
			      was ? "remove" : "add", n->cnode[c],
			      n->cport[c], rc, r.reports - before);
			/* A member off the switches changes nothing; one on
			 * them changes its switch at least. */
			CHECK((rc == 0) == (home(n, c, &in) == IMC_TOPO_NONE),
			      "%d entries changed", rc);
		}
		for (int k = 0; k < NM; k++)
			check_mlid(&r, &f, k, member[k]);

		if (w->rebuild_every && cur_step % w->rebuild_every ==
		    w->rebuild_every - 1) {
			unsigned before = r.reports;

			from_scratch(&s, n, member);
			for (int k = 0; k < NM; k++)
				check_mlid(&s, &f, k, member[k]);
			rc = imc_mtree_rebuild_all(r.mt);
			CHECK(rc == (int)(r.reports - before), "rebuild %d",
			      rc);
			same_entries(&r, &s);
			/* Nothing moved: a second rebuild changes nothing. */
			CHECK(imc_mtree_rebuild_all(r.mt) == 0, "rebuild");
			rig_fini(&s);
		}
	}
	hash = r.hash;

	/* The last member leaving clears every entry of its MLID. */
	for (int mi = 0; mi < NM; mi++) {
		for (uint32_t c = 0; c < n->ncand; c++)
			if (member[mi][c]) {
				assert_true(imc_mtree_remove(r.mt,
					(uint16_t)(MLID0 + mi), n->cnode[c],
					n->cport[c]) >= 0);
				member[mi][c] = false;
			}
		for (uint32_t sw = 0; sw < n->t->nnodes; sw++)
			CHECK(imc_mtree_mask_empty(stored(&r, mi, sw)),
			      "MLID 0x%x left on switch %u", MLID0 + mi, sw);
	}
	{
		struct imc_mtree_stats st;

		imc_mtree_stats(r.mt, &st);
		assert_int_equal(st.groups, 0);
		assert_int_equal(st.members, 0);
		assert_int_equal(st.tree_switches, 0);
	}
	for (int mi = 0; mi < NM; mi++)
		free(member[mi]);
	flood_fini(&f);
	rig_fini(&r);
	unload(n);
	return hash;
}

static void sweep(const char *spec, unsigned nseeds, const struct walk *w)
{
	for (uint64_t seed = 1; seed <= nseeds; seed++)
		run_walk(spec, seed, w);
	/* The same seed gives the same reports. */
	assert_true(run_walk(spec, 7, w) == run_walk(spec, 7, w));
}

static void test_random_two_switch(void **state)
{
	const struct walk w = { .steps = 200, .link_p = 0.05, .sw0_p = 0.1,
				.rebuild_every = 25 };

	(void)state;
	sweep("two-switch", 40, &w);
}

static void test_random_fat_tree2(void **state)
{
	const struct walk w = { .steps = 300, .link_p = 0.0, .sw0_p = 0.05,
				.rebuild_every = 50 };

	(void)state;
	sweep("fat-tree:leaves=8,hosts=6,spines=4", 12, &w);
}

static void test_random_fat_tree3(void **state)
{
	const struct walk w = { .steps = 300, .link_p = 0.0, .sw0_p = 0.05,
				.rebuild_every = 50 };

	(void)state;
	sweep("fat-tree:pods=3,leaves=3,hosts=4,aggs=2,spines=4", 12, &w);
}

/* Cables go down and come up; after each rebuild the property holds over
 * the cables that are up, and joins and leaves keep it. */
static void test_random_links(void **state)
{
	const struct walk w = { .steps = 300, .link_p = 0.08, .sw0_p = 0.05,
				.rebuild_every = 30 };

	(void)state;
	sweep("fat-tree:leaves=6,hosts=4,spines=3", 10, &w);
	sweep("fat-tree:pods=3,leaves=2,hosts=4,aggs=2,spines=2", 10, &w);
}

/* ---- exact values on ibsim's two-switch example ---- */

static struct imc_mtree_mask mk(unsigned a, unsigned b, unsigned c)
{
	struct imc_mtree_mask m = { { 0 } };
	unsigned v[3] = { a, b, c };

	for (int i = 0; i < 3; i++)
		if (v[i] != 255)
			m.bits[v[i] / 64] |= 1ull << (v[i] % 64);
	return m;
}

#define M1(a) mk(a, 255, 255)
#define M2(a, b) mk(a, b, 255)

static void want_entry(const struct rig *r, uint32_t sw,
		       struct imc_mtree_mask m)
{
	assert_memory_equal(stored(r, 0, sw), &m, sizeof(m));
}

static void test_two_switch_values(void **state)
{
	struct net *n = load("two-switch");
	struct rig r;
	struct imc_mtree_group_info gi;
	struct imc_mtree_stats st;
	uint32_t sw1, sw2, h1, h2;
	static const struct imc_mtree_mask none;

	(void)state;
	assert_int_equal(imc_topo_find(n->t, "Switch1", &sw1), 0);
	assert_int_equal(imc_topo_find(n->t, "Switch2", &sw2), 0);
	assert_int_equal(imc_topo_find(n->t, "Hca1", &h1), 0);
	assert_int_equal(imc_topo_find(n->t, "Hca2", &h2), 0);
	rig_init(&r, n);

	/* First member: its switch alone. */
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h1, 1), 1);
	want_entry(&r, sw1, M1(1));
	want_entry(&r, sw2, none);
	/* Across: Switch2 first, then Switch1; the lower of the parallel
	 * cables (port 3). */
	r.reports = 0;
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h2, 1), 2);
	assert_int_equal(r.last_sw[0], sw2);
	assert_int_equal(r.last_sw[1], sw1);
	want_entry(&r, sw1, M2(1, 3));
	want_entry(&r, sw2, M2(1, 3));
	/* A second port of Hca1: one entry. */
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h1, 2), 1);
	want_entry(&r, sw1, mk(1, 2, 3));
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h1, 2), -EEXIST);
	assert_int_equal(imc_mtree_group_info(r.mt, MLID0, &gi), 0);
	assert_int_equal(gi.members, 3);
	assert_int_equal(gi.attached, 3);
	assert_int_equal(gi.switches, 2);
	assert_int_equal(gi.edges, 1);
	assert_int_equal(gi.parts, 1);

	/* Switch2's management port joins: its own switch, port 0. */
	assert_int_equal(imc_mtree_add(r.mt, MLID0, sw2, 0), 1);
	want_entry(&r, sw2, mk(0, 1, 3));
	assert_int_equal(imc_mtree_remove(r.mt, MLID0, sw2, 0), 1);
	want_entry(&r, sw2, M2(1, 3));

	/* Hca2 leaves: Switch2 drops off, Switch1 loses port 3. */
	r.reports = 0;
	assert_int_equal(imc_mtree_remove(r.mt, MLID0, h2, 1), 2);
	assert_int_equal(r.last_sw[0], sw2);
	assert_int_equal(r.last_sw[1], sw1);
	want_entry(&r, sw1, M2(1, 2));
	want_entry(&r, sw2, none);
	assert_int_equal(imc_mtree_remove(r.mt, MLID0, h2, 1), -ENOENT);

	/* Cable 3 down: a rebuild moves Hca2's branch to cable 5. */
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h2, 2), 2);
	want_entry(&r, sw2, M2(2, 3));
	set_down(n, sw1, 3, true);
	assert_int_equal(imc_mtree_rebuild_all(r.mt), 2);
	want_entry(&r, sw1, mk(1, 2, 5));
	want_entry(&r, sw2, M2(2, 5));
	assert_int_equal(imc_mtree_rebuild_all(r.mt), 0);
	/* Cable 3 back: a repair keeps the working tree over cable 5, a
	 * rebuild returns to the lowest port. */
	set_down(n, sw1, 3, false);
	assert_int_equal(imc_mtree_repair_all(r.mt), 0);
	want_entry(&r, sw1, mk(1, 2, 5));
	assert_int_equal(imc_mtree_rebuild_all(r.mt), 2);
	want_entry(&r, sw1, mk(1, 2, 3));
	want_entry(&r, sw2, M2(2, 3));
	/* Cable 3 down again: the repair cuts the edge, finds Switch2
	 * apart and joins it again over cable 5. */
	set_down(n, sw1, 3, true);
	assert_int_equal(imc_mtree_repair_all(r.mt), 2);
	want_entry(&r, sw1, mk(1, 2, 5));
	want_entry(&r, sw2, M2(2, 5));
	assert_int_equal(imc_mtree_repair_all(r.mt), 0);

	/* Both cables down: two trees, one per switch. */
	set_down(n, sw1, 5, true);
	assert_int_equal(imc_mtree_rebuild_all(r.mt), 2);
	want_entry(&r, sw1, M2(1, 2));
	want_entry(&r, sw2, M1(2));
	assert_int_equal(imc_mtree_group_info(r.mt, MLID0, &gi), 0);
	assert_int_equal(gi.parts, 2);
	assert_int_equal(gi.edges, 0);
	/* A join while apart searches Switch2's part only. */
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h2, 1), 1);
	want_entry(&r, sw2, M2(1, 2));

	/* Hca1 port 1 cable down: that member stays, off the tree. */
	set_down(n, h1, 1, true);
	assert_int_equal(imc_mtree_rebuild_all(r.mt), 1);
	want_entry(&r, sw1, M1(2));
	assert_int_equal(imc_mtree_group_info(r.mt, MLID0, &gi), 0);
	assert_int_equal(gi.members, 4);
	assert_int_equal(gi.attached, 3);
	assert_int_equal(imc_mtree_remove(r.mt, MLID0, h1, 1), 0);
	assert_int_equal(imc_mtree_add(r.mt, MLID0, h1, 1), 0);
	assert_true(imc_mtree_is_member(r.mt, MLID0, h1, 1));

	/* Everything up again: one tree over cable 3. */
	set_down(n, h1, 1, false);
	set_down(n, sw1, 3, false);
	set_down(n, sw1, 5, false);
	assert_int_equal(imc_mtree_rebuild_all(r.mt), 2);
	want_entry(&r, sw1, mk(1, 2, 3));
	want_entry(&r, sw2, mk(1, 2, 3));
	assert_int_equal(imc_mtree_group_info(r.mt, MLID0, &gi), 0);
	assert_int_equal(gi.parts, 1);

	/* Clear: every entry goes, in switch order. */
	r.reports = 0;
	assert_int_equal(imc_mtree_clear(r.mt, MLID0), 2);
	assert_int_equal(r.last_sw[0], sw1 < sw2 ? sw1 : sw2);
	want_entry(&r, sw1, none);
	want_entry(&r, sw2, none);
	assert_int_equal(imc_mtree_clear(r.mt, MLID0), 0);
	assert_false(imc_mtree_is_member(r.mt, MLID0, h1, 1));
	assert_int_equal(imc_mtree_group_info(r.mt, MLID0, &gi), -ENOENT);

	imc_mtree_stats(r.mt, &st);
	assert_int_equal(st.groups, 0);
	assert_int_equal(st.members, 0);
	assert_int_equal(st.tree_switches, 0);
	assert_int_equal(st.adds, 7);
	assert_int_equal(st.removes, 3);
	assert_int_equal(st.clears, 1);
	assert_int_equal(st.repairs, 3);
	assert_int_equal(st.rebuilds, 6);
	/* rebuilds wrote 2 + 0 + 2 + 2 + 1 + 2 entries, repairs 0 + 2 + 0 */
	assert_int_equal(st.rebuild_entries, 11);
	assert_int_equal(st.max_add_entries, 2);
	assert_int_equal(st.max_remove_entries, 2);
	rig_fini(&r);
	unload(n);
}

/* ---- arguments ---- */

struct counter {
	unsigned reports;
	uint32_t sw;
	uint16_t mlid;
	struct imc_mtree_mask m;
};

static void count_set(void *ctx, uint32_t sw, uint16_t mlid,
		      const struct imc_mtree_mask *ports)
{
	struct counter *c = ctx;

	c->reports++;
	c->sw = sw;
	c->mlid = mlid;
	c->m = *ports;
}

static void test_bad_args(void **state)
{
	struct net *n = load("two-switch");
	struct imc_mtree *mt;
	struct imc_mtree_mask m;
	struct imc_mtree_ops no_set = { .link_up = cb_link_up };
	struct imc_mtree_ops all_up = { .mft_set = count_set };
	struct counter cnt = { 0 };
	uint32_t sw1, h1, h3;

	(void)state;
	assert_int_equal(imc_topo_find(n->t, "Switch1", &sw1), 0);
	assert_int_equal(imc_topo_find(n->t, "Hca1", &h1), 0);
	assert_int_equal(imc_mtree_create(NULL, &ops, NULL, &mt), -EINVAL);
	assert_null(mt);
	assert_int_equal(imc_mtree_create(n->t, NULL, NULL, &mt), -EINVAL);
	assert_int_equal(imc_mtree_create(n->t, &no_set, NULL, &mt), -EINVAL);
	assert_int_equal(imc_mtree_create(n->t, &ops, NULL, NULL), -EINVAL);
	imc_mtree_destroy(NULL);

	/* No link_up: every cable counts as up. */
	assert_int_equal(imc_mtree_create(n->t, &all_up, &cnt, &mt), 0);
	/* MLIDs are 0xC000..0xFFFE (IBA 4.1.3). */
	assert_int_equal(imc_mtree_add(mt, 0xbfff, h1, 1), -EINVAL);
	assert_int_equal(imc_mtree_add(mt, 0xffff, h1, 1), -EINVAL);
	assert_int_equal(imc_mtree_add(mt, 0x0001, h1, 1), -EINVAL);
	assert_int_equal(imc_mtree_add(mt, MLID0, h1, 0), -EINVAL);
	assert_int_equal(imc_mtree_add(mt, MLID0, h1, 3), -EINVAL);
	assert_int_equal(imc_mtree_add(mt, MLID0, sw1, 1), -EINVAL);
	assert_int_equal(imc_mtree_add(mt, MLID0, n->t->nnodes, 1), -EINVAL);
	assert_int_equal(imc_mtree_remove(mt, 0xffff, h1, 1), -EINVAL);
	assert_int_equal(imc_mtree_remove(mt, MLID0, h1, 1), -ENOENT);
	assert_int_equal(imc_mtree_clear(mt, 0xbfff), -EINVAL);
	assert_int_equal(imc_mtree_entry(mt, MLID0, h1, &m), -EINVAL);
	assert_int_equal(imc_mtree_entry(mt, 0xffff, sw1, &m), -EINVAL);
	assert_int_equal(imc_mtree_entry(mt, MLID0, sw1, &m), 0);
	assert_true(imc_mtree_mask_empty(&m));
	assert_false(imc_mtree_is_member(mt, 0xffff, h1, 1));
	assert_int_equal(imc_mtree_rebuild_all(mt), 0);
	assert_int_equal(cnt.reports, 0);

	/* The topology grows after create: a new HCA on Switch1 port 4,
	 * joining the highest MLID. */
	assert_int_equal(imc_topo_add_node(n->t, IMC_NODE_HCA, 1, "Hca3", 0,
					   &h3), 0);
	assert_int_equal(imc_topo_connect(n->t, sw1, 4, h3, 1, 0), 0);
	assert_int_equal(imc_mtree_add(mt, 0xfffe, h3, 1), 1);
	assert_int_equal(cnt.reports, 1);
	assert_int_equal(cnt.sw, sw1);
	assert_int_equal(cnt.mlid, 0xfffe);
	assert_int_equal(cnt.m.bits[0], 1u << 4);
	assert_int_equal(imc_mtree_entry(mt, 0xfffe, sw1, &m), 0);
	assert_memory_equal(&m, &cnt.m, sizeof(m));
	/* Destroy reports nothing and leaves nothing behind (ASan). */
	imc_mtree_destroy(mt);
	assert_int_equal(cnt.reports, 1);
	unload(n);
}

/* ---- incrementality on a large tree ---- */

static void test_join_is_local(void **state)
{
	/* 1,024 HCAs on 64 leaves, 64 aggregation switches, 16 spines. */
	struct net *n = load("fat-tree:pods=8,leaves=8,hosts=16,aggs=8,"
			     "spines=16");
	struct rig r;
	struct flood f;
	struct imc_rng rng;
	struct imc_mtree_stats st;
	struct imc_mtree_group_info gi;
	bool *member = calloc(n->ncand, sizeof(bool));
	uint32_t hcas = 0, joined = 0;
	uint64_t entries = 0;

	(void)state;
	assert_non_null(member);
	cur_seed = 99;
	imc_rng_seed(&rng, cur_seed);
	rig_init(&r, n);
	flood_init(&f, n);
	imc_topo_counts(n->t, &hcas, NULL, NULL);
	assert_int_equal(hcas, 1024);
	/* Half of the HCAs join in random order. Leaf to leaf is at most
	 * leaf-agg-spine-agg-leaf, so a graft changes at most 5 entries
	 * (2 x depth - 1) however large the tree. */
	for (cur_step = 0; joined < hcas / 2; cur_step++) {
		uint32_t c = (uint32_t)imc_rng_below(&rng, n->ncand);
		int rc;

		if (!n->cport[c] || member[c])
			continue;
		rc = imc_mtree_add(r.mt, MLID0, n->cnode[c], n->cport[c]);
		CHECK(rc >= 1 && rc <= 5, "join changed %d entries", rc);
		member[c] = true;
		joined++;
		entries += (uint64_t)rc;
	}
	assert_int_equal(imc_mtree_group_info(r.mt, MLID0, &gi), 0);
	/* Every leaf carries members by now; the tree is large ... */
	assert_true(gi.switches >= 64 + 8);
	/* ... but joins touched about one entry each. */
	assert_true(entries < 2ull * joined);
	imc_mtree_stats(r.mt, &st);
	assert_true(st.max_add_entries <= 5);
	assert_int_equal(st.add_entries, entries);
	check_mlid(&r, &f, 0, member);

	/* Leaves of single members: prunes stay short too. */
	for (unsigned k = 0; k < 200; cur_step++) {
		uint32_t c = (uint32_t)imc_rng_below(&rng, n->ncand);
		int rc;

		if (!member[c])
			continue;
		rc = imc_mtree_remove(r.mt, MLID0, n->cnode[c], n->cport[c]);
		CHECK(rc >= 1 && (uint32_t)rc < gi.switches / 4,
		      "leave changed %d entries", rc);
		member[c] = false;
		k++;
	}
	check_mlid(&r, &f, 0, member);

	/* A cable of the tree fails. From the same tree, a repair rewrites
	 * a few entries; a fresh rebuild reroutes much of the tree, since
	 * its first member's leaf lost the uplink every graft took. */
	{
		bool *none = calloc(n->ncand, sizeof(bool));
		bool *mm[NM] = { member, none, none };
		struct rig s;
		uint32_t first = 0, leaf, edge = 0;
		unsigned in;
		int rep, reb;

		assert_non_null(none);
		assert_true(imc_mtree_rebuild_all(r.mt) >= 0);
		from_scratch(&s, n, mm);
		same_entries(&r, &s);
		while (!member[first])
			first++;
		leaf = home(n, first, &in);
		for (unsigned p = 1; p <= n->t->node[leaf].nports && !edge;
		     p++) {
			uint32_t peer = n->t->node[leaf].port[p].peer;

			if (imc_mtree_mask_test(stored(&r, 0, leaf), p) &&
			    n->t->node[peer].type == IMC_NODE_SWITCH)
				edge = p;
		}
		assert_true(edge > 0);
		set_down(n, leaf, edge, true);
		rep = imc_mtree_repair_all(r.mt);
		reb = imc_mtree_rebuild_all(s.mt);
		print_message("cable down: repair %d entries, rebuild %d\n",
			      rep, reb);
		assert_true(rep >= 2 && rep <= 6);
		assert_true(reb > 4 * rep);
		check_mlid(&r, &f, 0, member);
		check_mlid(&s, &f, 0, member);
		rig_fini(&s);
		free(none);
	}

	/* More cables fail: a rebuild keeps every member reached over
	 * what is left. */
	for (unsigned k = 0; k < n->nsw; k += 7)
		set_down(n, n->swnode[k], n->swport[k], true);
	assert_true(imc_mtree_rebuild_all(r.mt) > 0);
	check_mlid(&r, &f, 0, member);
	for (uint32_t c = 0; c < n->ncand; c++)
		if (member[c])
			assert_true(imc_mtree_remove(r.mt, MLID0, n->cnode[c],
						     n->cport[c]) >= 1);
	for (uint32_t s = 0; s < n->t->nnodes; s++)
		assert_true(imc_mtree_mask_empty(stored(&r, 0, s)));
	free(member);
	flood_fini(&f);
	rig_fini(&r);
	unload(n);
}

/* ---- the SA on the fabric ---- */

#define NCLI 12

struct cli {
	uint32_t node;
	struct imc_qp *qp1;
	struct imc_qp *ud;
	struct imc_gid gid;
	unsigned answers;
	uint8_t method;
	uint16_t status;
	uint16_t mlid;
	unsigned rx;           /* group datagrams received */
};

struct e2e {
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_sa_fabric *sf;
	struct cli c[NCLI];
	uint16_t sm_lid;
	uint64_t tid;
	unsigned others;
};

/* ff12:401b:ffff::ffff:ffff, the IPoIB broadcast group the SA creates
 * at start (RFC 4391 section 4). */
static const struct imc_gid bcast = { {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0xff, 0xff } };

static void cli_mad(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct cli *c = ctx;
	struct imc_sa_mad m;
	struct imc_mcmr rec;

	(void)qp;
	assert_int_equal(imc_sa_mad_unpack(&m, r->data, r->len), IMC_MAD_SIZE);
	assert_int_equal(m.mad.mgmt_class, UMAD_CLASS_SUBN_ADM);
	assert_true(imc_mcmr_unpack(&rec, m.data, sizeof(m.data)) > 0);
	c->answers++;
	c->method = m.mad.method;
	c->status = m.mad.status;
	c->mlid = rec.mlid;
}

static void cli_data(struct imc_qp *qp, const struct imc_ud_recv *r,
		     void *ctx)
{
	struct cli *c = ctx;

	(void)qp;
	assert_true(r->has_grh);
	assert_memory_equal(&r->dgid, &bcast, sizeof(bcast));
	assert_int_equal(r->len, 4);
	c->rx++;
}

static void hook(void *ctx, const struct imc_ud_recv *r)
{
	struct e2e *w = ctx;

	assert_int_equal(r->len, IMC_MAD_SIZE);
	w->others++;
}

/* An MCMemberRecord Set (join) or Delete (leave) of the broadcast group
 * with MGID, PortGID and JoinState, to the SM's LID and QP1. */
static void mcmr_send(struct e2e *w, struct cli *c, uint8_t method,
		      uint8_t join_state)
{
	struct imc_sa_mad m;
	struct imc_mcmr rec;
	struct imc_ah ah;
	uint8_t buf[IMC_MAD_SIZE];

	memset(&m, 0, sizeof(m));
	memset(&rec, 0, sizeof(rec));
	m.mad.base_version = IMC_MAD_BASE_VERSION;
	m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m.mad.class_version = UMAD_SA_CLASS_VERSION;
	m.mad.method = method;
	m.mad.tid = ++w->tid;
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m.sa.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
			 UMAD_SA_MCM_COMP_MASK_PORT_GID |
			 UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	rec.mgid = bcast;
	rec.port_gid = c->gid;
	rec.join_state = join_state;
	assert_true(imc_mcmr_pack(&rec, m.data, sizeof(m.data)) > 0);
	assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)), IMC_MAD_SIZE);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = w->sm_lid;
	assert_int_equal(imc_qp_send(c->qp1, &ah, IMC_QP1, IMC_QP1_QKEY, buf,
				     sizeof(buf)), 0);
}

/* One datagram from c to the group; returns after delivery. */
static void group_send(struct e2e *w, struct cli *c, uint16_t mlid)
{
	struct imc_ah ah;
	uint32_t tag = 0x1b1b1b1b;

	for (int i = 0; i < NCLI; i++)
		w->c[i].rx = 0;
	memset(&ah, 0, sizeof(ah));
	ah.dlid = mlid;
	ah.has_grh = true;
	ah.dgid = bcast;
	ah.hop_limit = 1;
	assert_int_equal(imc_qp_send(c->ud, &ah, IMC_MCAST_QPN,
				     IMC_SA_IPOIB_QKEY, &tag, sizeof(tag)), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
}

/* What the glue wrote into the fabric is what the trees hold. */
static void mfts_match(struct e2e *w, uint16_t mlid)
{
	const struct imc_mtree *mt = imc_sa_fabric_mtree(w->sf);

	for (uint32_t s = 0; s < w->t->nnodes; s++) {
		struct imc_portmask fm;
		struct imc_mtree_mask tm;

		if (w->t->node[s].type != IMC_NODE_SWITCH)
			continue;
		assert_int_equal(imc_fabric_mft_get(w->f, s, mlid, &fm), 0);
		assert_int_equal(imc_mtree_entry(mt, mlid, s, &tm), 0);
		assert_memory_equal(fm.bits, tm.bits, sizeof(fm.bits));
	}
}

static void expect_rx(struct e2e *w, const bool *member, int sender)
{
	for (int i = 1; i < NCLI; i++)
		if (i == sender || !member[i])
			assert_int_equal(w->c[i].rx, 0);
		else
			assert_int_equal(w->c[i].rx, 1);
}

static void test_sa_on_fabric(void **state)
{
	struct e2e *w = calloc(1, sizeof(*w));
	struct imc_fabric_config fc;
	struct imc_sa_fabric_config cfg;
	struct imc_sa_fabric *dup;
	struct imc_sa_fabric_stats st;
	struct imc_sa_group_info gi;
	struct imc_port_attr a;
	const struct imc_mtree *mt;
	bool member[NCLI] = { false };
	static const int joiners[] = { 1, 2, 4, 7, 10 };
	uint16_t mlid;
	uint32_t leaf;
	unsigned up = 0;

	(void)state;
	assert_non_null(w);
	/* 12 HCAs on 4 leaves (3 each), 2 spines; HCA 0 runs the SM. */
	assert_int_equal(imc_topo_generate("fat-tree:leaves=4,hosts=3,"
					   "spines=2", &w->t, NULL, 0), 0);
	assert_int_equal(imc_loop_create_virtual(0, &w->loop), 0);
	imc_fabric_config_default(&fc);
	assert_int_equal(imc_fabric_create(w->t, w->loop, &fc, &w->f), 0);
	imc_sa_fabric_config_init(&cfg);
	cfg.other_mad = hook;
	cfg.other_ctx = w;
	/* No LIDs before the SM's first sweep. */
	assert_int_equal(imc_sa_fabric_create(w->f, &cfg, &w->sf), -EAGAIN);
	assert_null(w->sf);
	assert_int_equal(imc_fabric_bring_up(w->f), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	/* NULL config: the defaults; the port's QP1 is free again after. */
	assert_int_equal(imc_sa_fabric_create(w->f, NULL, &w->sf), 0);
	imc_sa_fabric_destroy(w->sf);
	w->sf = NULL;
	assert_int_equal(imc_sa_fabric_create(w->f, &cfg, &w->sf), 0);
	/* One QP1 per port. */
	assert_int_equal(imc_sa_fabric_create(w->f, &cfg, &dup), -EBUSY);
	assert_int_equal(imc_fabric_port_attr(w->f, 0, 1, &a), 0);
	w->sm_lid = a.lid;
	mt = imc_sa_fabric_mtree(w->sf);

	for (int i = 1; i < NCLI; i++) {
		struct cli *c = &w->c[i];

		c->node = (uint32_t)i;
		assert_int_equal(imc_fabric_port_attr(w->f, c->node, 1, &a), 0);
		assert_int_equal(a.sm_lid, w->sm_lid);
		c->gid = a.gid;
		assert_int_equal(imc_qp_create(w->f, c->node, 1, IMC_QP1,
					       IMC_QP1_QKEY, IMC_PKEY_DEFAULT,
					       cli_mad, c, &c->qp1), 0);
		assert_int_equal(imc_qp_create(w->f, c->node, 1, 0,
					       IMC_SA_IPOIB_QKEY,
					       IMC_PKEY_DEFAULT, cli_data, c,
					       &c->ud), 0);
	}

	/* Joins: each answered GetResp SUCCESS with the group's MLID. */
	for (size_t k = 0; k < IMC_ARRAY_SIZE(joiners); k++) {
		mcmr_send(w, &w->c[joiners[k]], UMAD_METHOD_SET,
			  UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER);
		member[joiners[k]] = true;
	}
	assert_int_equal(imc_loop_run(w->loop), 0);
	mlid = w->c[1].mlid;
	assert_true(imc_lid_is_mcast(mlid));
	for (size_t k = 0; k < IMC_ARRAY_SIZE(joiners); k++) {
		struct cli *c = &w->c[joiners[k]];

		assert_int_equal(c->answers, 1);
		assert_int_equal(c->method, UMAD_METHOD_GET_RESP);
		assert_int_equal(c->status, 0);
		assert_int_equal(c->mlid, mlid);
		assert_true(imc_mtree_is_member(mt, mlid, c->node, 1));
	}
	mfts_match(w, mlid);
	assert_int_equal(imc_sa_group_get(imc_sa_fabric_sa(w->sf), &bcast,
					  &gi), 0);
	assert_int_equal(gi.members, 5);

	/* Every HCA's QP is attached; only members' ports are on the tree,
	 * so each member's datagram reaches the other members once. */
	for (int i = 1; i < NCLI; i++)
		assert_int_equal(imc_qp_attach(w->c[i].ud, &bcast, mlid), 0);
	for (size_t k = 0; k < IMC_ARRAY_SIZE(joiners); k++) {
		group_send(w, &w->c[joiners[k]], mlid);
		expect_rx(w, member, joiners[k]);
	}

	/* Leave: DeleteResp SUCCESS, and HCA 7 gets nothing more. */
	mcmr_send(w, &w->c[7], UMAD_SA_METHOD_DELETE,
		  UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER);
	assert_int_equal(imc_loop_run(w->loop), 0);
	assert_int_equal(w->c[7].answers, 2);
	assert_int_equal(w->c[7].method, UMAD_SA_METHOD_DELETE_RESP);
	assert_int_equal(w->c[7].status, 0);
	member[7] = false;
	assert_false(imc_mtree_is_member(mt, mlid, 7, 1));
	mfts_match(w, mlid);
	group_send(w, &w->c[1], mlid);
	expect_rx(w, member, 1);

	/* HCA 10's cable fails: at the sweep it is gone for the SA. */
	assert_int_equal(imc_fabric_link_set(w->f, 10, 1, false), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	member[10] = false;
	imc_sa_fabric_stats(w->sf, &st);
	assert_int_equal(st.ports_gone, 1);
	assert_false(imc_mtree_is_member(mt, mlid, 10, 1));
	assert_int_equal(imc_sa_group_get(imc_sa_fabric_sa(w->sf), &bcast,
					  &gi), 0);
	assert_int_equal(gi.members, 3);
	mfts_match(w, mlid);
	group_send(w, &w->c[4], mlid);
	expect_rx(w, member, 4);

	/* The uplink HCA 1's leaf uses for the tree fails: the sweep moves
	 * the branch to the other spine and traffic flows again. */
	leaf = w->t->node[1].port[1].peer;
	for (unsigned p = 1; p <= w->t->node[leaf].nports && !up; p++) {
		struct imc_portmask m;
		uint32_t peer = w->t->node[leaf].port[p].peer;

		assert_int_equal(imc_fabric_mft_get(w->f, leaf, mlid, &m), 0);
		if (peer != IMC_TOPO_NONE &&
		    w->t->node[peer].type == IMC_NODE_SWITCH &&
		    imc_portmask_test(&m, p))
			up = p;
	}
	assert_true(up > 0);
	assert_int_equal(imc_sa_fabric_link_set(w->sf, leaf, up, false), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	imc_sa_fabric_stats(w->sf, &st);
	assert_true(st.sweep_entries >= 2);
	mfts_match(w, mlid);
	for (int i = 1; i < NCLI; i++)
		if (member[i]) {
			group_send(w, &w->c[i], mlid);
			expect_rx(w, member, i);
		}

	/* A response at the SA's QP1 is not the SA's: the hook gets it. */
	mcmr_send(w, &w->c[1], UMAD_METHOD_GET_RESP, 1);
	assert_int_equal(imc_loop_run(w->loop), 0);
	assert_int_equal(w->others, 1);
	imc_sa_fabric_stats(w->sf, &st);
	assert_int_equal(st.mads_other, 1);
	assert_int_equal(st.mads_in, 7);
	assert_int_equal(st.mads_out, 6);
	assert_int_equal(st.send_errors, 0);
	assert_int_equal(st.member_errors, 0);
	assert_int_equal(st.mft_errors, 0);

	imc_sa_fabric_destroy(w->sf);
	for (int i = 1; i < NCLI; i++) {
		imc_qp_destroy(w->c[i].qp1);
		imc_qp_destroy(w->c[i].ud);
	}
	imc_fabric_destroy(w->f);
	assert_int_equal(imc_loop_destroy(w->loop), 0);
	imc_topo_destroy(w->t);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_two_switch_values),
		cmocka_unit_test(test_random_two_switch),
		cmocka_unit_test(test_random_fat_tree2),
		cmocka_unit_test(test_random_fat_tree3),
		cmocka_unit_test(test_random_links),
		cmocka_unit_test(test_join_is_local),
		cmocka_unit_test(test_sa_on_fabric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
