/* The fabric's SMAs and PMAs driven by SMPs alone, as an SM outside the
 * simulation drives them (fabric_mad.h), on ibsim's two-switch example:
 *
 *   Hca1 -1- Switch1 -3,5- Switch2 -1- Hca2
 *   Hca3 -2-/                    \-2- Hca4
 *
 * The SM here is the test's own: an agent on Hca1 port 1 that walks the
 * subnet by directed route, assigns LIDs, writes LFT and MFT blocks and
 * moves ports through ARMED to ACTIVE, all with MADs it builds byte by
 * byte from IBA chapter 14 (no code shared with the fabric). Data sent
 * afterwards must follow the tables it wrote.
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
#include "ibmcast/fabric_mad.h"
#include "ibmcast/gsi.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/topo.h"

#define NET IMC_SOURCE_DIR "/examples/ibsim-2sw.net"
#define MAXN 16

static uint16_t g16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t g32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t g64(const uint8_t *p)
{
	return (uint64_t)g32(p) << 32 | g32(p + 4);
}

static void p16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void p32(uint8_t *p, uint32_t v)
{
	p16(p, (uint16_t)(v >> 16));
	p16(p + 2, (uint16_t)v);
}

static void p64(uint8_t *p, uint64_t v)
{
	p32(p, (uint32_t)(v >> 32));
	p32(p + 4, (uint32_t)v);
}

/* What the test's SM learned of a node. */
struct dnode {
	uint64_t guid;
	unsigned type, nports;
	uint8_t path[64];
	unsigned hops;
	uint16_t lid;
	unsigned port;            /* a CA's port that was reached */
	int peer[40];             /* by port: discovered node, -1 none */
	unsigned peer_port[40];
};

struct world {
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_fabric_mad_agent *sm;
	uint64_t tid;
	bool got;
	uint8_t resp[256];
	struct imc_fabric_mad_addr from;
	unsigned traps;
	uint8_t trap[256];
	struct imc_fabric_mad_addr trap_from;
	struct dnode n[MAXN];
	unsigned nn;
	uint16_t next_lid;
};

static void sm_recv(struct imc_fabric_mad_agent *a,
		    const struct imc_fabric_mad_addr *from, const uint8_t *mad,
		    size_t len, void *ctx)
{
	struct world *w = ctx;

	(void)a;
	if (mad[3] == 0x05) {            /* Trap() */
		w->traps++;
		w->trap_from = *from;
		memcpy(w->trap, mad, len);
		return;
	}
	w->got = true;
	w->from = *from;
	memcpy(w->resp, mad, len);
}

static void world_init(struct world *w, bool external, uint64_t seed)
{
	struct imc_fabric_config cfg;
	char err[256];

	memset(w, 0, sizeof(*w));
	assert_int_equal(imc_topo_parse_file(NET, &w->t, err, sizeof(err)), 0);
	assert_int_equal(imc_loop_create_virtual(0, &w->loop), 0);
	imc_fabric_config_default(&cfg);
	cfg.seed = seed;
	cfg.external_sm = external;
	assert_int_equal(imc_fabric_create(w->t, w->loop, &cfg, &w->f), 0);
	assert_int_equal(imc_fabric_bring_up(w->f), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	assert_int_equal(imc_fabric_mad_attach(w->f, 0, 1, sm_recv, w, &w->sm),
			 0);
	w->tid = 0x1000;
	w->next_lid = 1;
}

static void world_fini(struct world *w)
{
	imc_fabric_mad_detach(w->sm);
	imc_fabric_destroy(w->f);
	assert_int_equal(imc_loop_destroy(w->loop), 0);
	imc_topo_destroy(w->t);
}

static void smp_build(struct world *w, uint8_t *mad, bool dr,
		      const uint8_t *path, unsigned hops, uint8_t method,
		      uint16_t attr, uint32_t mod, const uint8_t *data)
{
	memset(mad, 0, 256);
	mad[0] = 1;
	mad[1] = dr ? 0x81 : 0x01;
	mad[2] = 1;
	mad[3] = method;
	mad[7] = (uint8_t)hops;
	p64(mad + 8, ++w->tid);
	p16(mad + 16, attr);
	p32(mad + 20, mod);
	if (dr) {
		p16(mad + 32, 0xffff);
		p16(mad + 34, 0xffff);
		for (unsigned i = 0; i < hops; i++)
			mad[128 + 1 + i] = path[i];
	}
	if (data)
		memcpy(mad + 64, data, 64);
}

/* Sends a directed-route SMP and runs the loop dry. Returns the MAD
 * status of the answer, or -1 when none came. */
static int smp_dr(struct world *w, const uint8_t *path, unsigned hops,
		  uint8_t method, uint16_t attr, uint32_t mod,
		  const uint8_t *in, uint8_t *out)
{
	struct imc_fabric_mad_addr to = { .dlid = 0xffff, .dqp = 0 };
	uint8_t mad[256];

	smp_build(w, mad, true, path, hops, method, attr, mod, in);
	w->got = false;
	assert_int_equal(imc_fabric_mad_send(w->sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	if (!w->got)
		return -1;
	assert_int_equal(w->resp[3], 0x81);
	assert_int_equal(g64(w->resp + 8), w->tid);
	if (out)
		memcpy(out, w->resp + 64, 64);
	return g16(w->resp + 4) & 0x7fff;
}

static int smp_lid(struct world *w, uint16_t dlid, uint8_t method,
		   uint16_t attr, uint32_t mod, const uint8_t *in,
		   uint8_t *out)
{
	struct imc_fabric_mad_addr to = { .dlid = dlid, .dqp = 0 };
	uint8_t mad[256];

	smp_build(w, mad, false, NULL, 0, method, attr, mod, in);
	w->got = false;
	assert_int_equal(imc_fabric_mad_send(w->sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	if (!w->got)
		return -1;
	if (out)
		memcpy(out, w->resp + 64, 64);
	return g16(w->resp + 4) & 0x7fff;
}

/* ---- the test's SM ---- */

static int find_guid(const struct world *w, uint64_t guid)
{
	for (unsigned i = 0; i < w->nn; i++)
		if (w->n[i].guid == guid)
			return (int)i;
	return -1;
}

/* Directed-route discovery, breadth first, as an SM's first sweep. */
static void discover(struct world *w)
{
	uint8_t ni[64];
	unsigned head = 0;

	assert_int_equal(smp_dr(w, NULL, 0, 1, 0x11, 0, NULL, ni), 0);
	w->n[0].guid = g64(ni + 12);
	w->n[0].type = ni[2];
	w->n[0].nports = ni[3];
	w->n[0].port = ni[36];
	memset(w->n[0].peer, -1, sizeof(w->n[0].peer));
	w->nn = 1;
	for (; head < w->nn; head++) {
		struct dnode *d = &w->n[head];
		unsigned lo = 1, hi = d->nports;

		if (d->type == 1) {      /* CAs forward nothing */
			if (head != 0)
				continue;
			lo = hi = d->port;
		}
		for (unsigned p = lo; p <= hi; p++) {
			uint8_t path[64];
			int k;

			memcpy(path, d->path, d->hops);
			path[d->hops] = (uint8_t)p;
			if (smp_dr(w, path, d->hops + 1, 1, 0x11, 0, NULL, ni))
				continue;
			k = find_guid(w, g64(ni + 12));
			if (k < 0) {
				struct dnode *e = &w->n[w->nn];

				assert_true(w->nn < MAXN);
				k = (int)w->nn++;
				e->guid = g64(ni + 12);
				e->type = ni[2];
				e->nports = ni[3];
				e->port = ni[36];
				memcpy(e->path, path, d->hops + 1);
				e->hops = d->hops + 1;
				memset(e->peer, -1, sizeof(e->peer));
			}
			d->peer[p] = k;
			d->peer_port[p] = ni[36];
			w->n[k].peer[ni[36]] = (int)head;
			w->n[k].peer_port[ni[36]] = p;
		}
	}
}

/* Hops from node a to node b over discovered cables, through switches. */
static unsigned dist(const struct world *w, unsigned a, unsigned b)
{
	unsigned d[MAXN], q[MAXN], qh = 0, qt = 0;

	for (unsigned i = 0; i < MAXN; i++)
		d[i] = 999;
	d[a] = 0;
	q[qt++] = a;
	while (qh < qt) {
		unsigned x = q[qh++];

		if (x != a && w->n[x].type == 1)
			continue;
		for (unsigned p = 1; p <= w->n[x].nports; p++) {
			int y = w->n[x].peer[p];

			if (y >= 0 && d[y] == 999) {
				d[y] = d[x] + 1;
				q[qt++] = (unsigned)y;
			}
		}
	}
	return d[b];
}

static void pi_set_fields(struct world *w, unsigned k, unsigned port,
			  uint16_t lid, unsigned state, bool rereg)
{
	struct dnode *d = &w->n[k];
	uint8_t pi[64];

	assert_int_equal(smp_dr(w, d->path, d->hops, 1, 0x15, port, NULL, pi),
			 0);
	if (lid) {
		p16(pi + 16, lid);
		p16(pi + 18, 1);         /* MasterSMLID: Hca1 */
	}
	pi[32] = (uint8_t)((pi[32] & 0xf0) | state);
	pi[51] = (uint8_t)((pi[51] & 0x7f) | (rereg ? 0x80 : 0));
	assert_int_equal(smp_dr(w, d->path, d->hops, 2, 0x15, port, pi, pi), 0);
	if (state)
		assert_int_equal(pi[32] & 0x0f, state);
}

/* LIDs in discovery order (Hca1 gets 1), min-hop LFTs (lowest port
 * among equals), then every cabled port to ARMED and ACTIVE. */
static void configure(struct world *w)
{
	for (unsigned k = 0; k < w->nn; k++) {
		w->n[k].lid = w->next_lid++;
		pi_set_fields(w, k, w->n[k].type == 2 ? 0 : w->n[k].port,
			      w->n[k].lid, 0, false);
	}
	for (unsigned s = 0; s < w->nn; s++) {
		uint8_t blk[64], si[64];

		if (w->n[s].type != 2)
			continue;
		memset(blk, 0xff, sizeof(blk));
		for (unsigned k = 0; k < w->nn; k++) {
			unsigned best = 255, dk = dist(w, s, k);

			if (k == s) {
				blk[w->n[k].lid] = 0;
				continue;
			}
			for (unsigned p = 1; p <= w->n[s].nports; p++) {
				int y = w->n[s].peer[p];

				if (y >= 0 && ((unsigned)y == k ||
					       (w->n[y].type == 2 &&
						dist(w, (unsigned)y, k) ==
							dk - 1))) {
					best = p;
					break;
				}
			}
			blk[w->n[k].lid] = (uint8_t)best;
		}
		assert_int_equal(smp_dr(w, w->n[s].path, w->n[s].hops, 2,
					0x19, 0, blk, NULL), 0);
		assert_int_equal(smp_dr(w, w->n[s].path, w->n[s].hops, 1,
					0x12, 0, NULL, si), 0);
		p16(si + 6, (uint16_t)(w->next_lid - 1));  /* LinearFDBTop */
		assert_int_equal(smp_dr(w, w->n[s].path, w->n[s].hops, 2,
					0x12, 0, si, si), 0);
		assert_int_equal(g16(si + 6), w->next_lid - 1);
	}
	for (unsigned st = 3; st <= 4; st++)
		for (unsigned k = 0; k < w->nn; k++) {
			if (w->n[k].type == 1) {
				pi_set_fields(w, k, w->n[k].port, 0, st, false);
				continue;
			}
			for (unsigned p = 1; p <= w->n[k].nports; p++)
				if (w->n[k].peer[p] >= 0)
					pi_set_fields(w, k, p, 0, st, false);
		}
}

static int node_of(const struct world *w, const char *name)
{
	uint32_t idx;

	assert_int_equal(imc_topo_find(w->t, name, &idx), 0);
	for (unsigned k = 0; k < w->nn; k++)
		if (w->n[k].guid == w->t->node[idx].guid)
			return (int)k;
	fail_msg("%s not discovered", name);
	return -1;
}

static uint32_t idx_of(const struct world *w, const char *name)
{
	uint32_t idx;

	assert_int_equal(imc_topo_find(w->t, name, &idx), 0);
	return idx;
}

/* ---- UD helpers ---- */

struct rx {
	unsigned n;
	uint16_t slid;
};

static void rx_cb(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct rx *x = ctx;

	(void)qp;
	x->n++;
	x->slid = r->slid;
}

/* ---- tests ---- */

static void test_discover_and_configure(void **state)
{
	struct world w;
	struct imc_port_attr pa;
	struct imc_link_counters l3, l5, m3, m5;
	struct imc_qp *a, *b;
	struct rx ra = { 0 }, rb = { 0 };
	struct imc_ah ah = { 0 };
	uint8_t blk[64];
	int s1, h4;
	uint32_t sw1;

	(void)state;
	world_init(&w, true, 1);
	/* External SM: LinkUp, INIT, no LID. */
	assert_int_equal(imc_fabric_port_attr(w.f, idx_of(&w, "Hca4"), 1, &pa),
			 0);
	assert_int_equal(pa.state, IMC_PORT_INIT);
	assert_int_equal(pa.lid, 0);
	discover(&w);
	assert_int_equal(w.nn, 6);
	s1 = node_of(&w, "Switch1");
	assert_int_equal(w.n[s1].type, 2);
	assert_int_equal(w.n[s1].nports, 8);
	/* Both cables between the switches were found, port for port. */
	assert_int_equal(w.n[s1].peer[3], node_of(&w, "Switch2"));
	assert_int_equal(w.n[s1].peer_port[3], 3);
	assert_int_equal(w.n[s1].peer[5], node_of(&w, "Switch2"));
	assert_int_equal(w.n[s1].peer_port[5], 5);
	assert_int_equal(w.n[s1].peer[4], -1);
	configure(&w);
	h4 = node_of(&w, "Hca4");
	assert_int_equal(imc_fabric_port_attr(w.f, idx_of(&w, "Hca4"), 1, &pa),
			 0);
	assert_int_equal(pa.state, IMC_PORT_ACTIVE);
	assert_int_equal(pa.lid, w.n[h4].lid);
	assert_int_equal(pa.sm_lid, 1);

	/* Unicast follows the LFT: Switch1 reaches Switch2 by port 3 (the
	 * lowest of two equal ports); rewritten to port 5, it goes by 5. */
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca1"), 1, 0, 0x11,
				       0xffff, rx_cb, &ra, &a), 0);
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca4"), 1, 0, 0x11,
				       0xffff, rx_cb, &rb, &b), 0);
	sw1 = idx_of(&w, "Switch1");
	imc_fabric_link_counters(w.f, sw1, 3, &l3);
	imc_fabric_link_counters(w.f, sw1, 5, &l5);
	ah.dlid = w.n[h4].lid;
	for (int i = 0; i < 5; i++)
		assert_int_equal(imc_qp_send(a, &ah, imc_qp_num(b), 0x11, "x",
					     1), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(rb.n, 5);
	assert_int_equal(rb.slid, 1);
	imc_fabric_link_counters(w.f, sw1, 3, &m3);
	imc_fabric_link_counters(w.f, sw1, 5, &m5);
	assert_int_equal(m3.packets - l3.packets, 5);
	assert_int_equal(m5.packets - l5.packets, 0);
	assert_int_equal(smp_dr(&w, w.n[s1].path, w.n[s1].hops, 1, 0x19, 0,
				NULL, blk), 0);
	assert_int_equal(blk[w.n[h4].lid], 3);
	blk[w.n[h4].lid] = 5;
	assert_int_equal(smp_dr(&w, w.n[s1].path, w.n[s1].hops, 2, 0x19, 0,
				blk, blk), 0);
	assert_int_equal(blk[w.n[h4].lid], 5);
	for (int i = 0; i < 7; i++)
		assert_int_equal(imc_qp_send(a, &ah, imc_qp_num(b), 0x11, "y",
					     1), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(rb.n, 12);
	imc_fabric_link_counters(w.f, sw1, 3, &l3);
	imc_fabric_link_counters(w.f, sw1, 5, &l5);
	assert_int_equal(l3.packets - m3.packets, 0);
	assert_int_equal(l5.packets - m5.packets, 7);
	/* An LFT entry of 255 drops. */
	blk[w.n[h4].lid] = 255;
	assert_int_equal(smp_dr(&w, w.n[s1].path, w.n[s1].hops, 2, 0x19, 0,
				blk, NULL), 0);
	assert_int_equal(imc_qp_send(a, &ah, imc_qp_num(b), 0x11, "z", 1), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(rb.n, 12);
	imc_qp_destroy(a);
	imc_qp_destroy(b);
	world_fini(&w);
}

/* MFT blocks as IBA 14.2.5.12 lays them out: block of 32 MLIDs in the
 * low bits of the modifier, the position (16 ports) in the top four. */
static void mft_write(struct world *w, int k, uint16_t mlid, uint16_t ports)
{
	uint8_t blk[64], got[64];
	unsigned block = (mlid - 0xc000u) / 32, i = (mlid - 0xc000u) % 32;

	assert_int_equal(smp_dr(w, w->n[k].path, w->n[k].hops, 1, 0x1b, block,
				NULL, blk), 0);
	p16(blk + 2 * i, ports);
	assert_int_equal(smp_dr(w, w->n[k].path, w->n[k].hops, 2, 0x1b, block,
				blk, got), 0);
	assert_memory_equal(blk, got, 64);
}

static void test_multicast_follows_mft(void **state)
{
	struct world w;
	struct imc_qp *a, *c, *d;
	struct rx rc = { 0 }, rd = { 0 }, ra = { 0 };
	struct imc_ah ah = { 0 };
	struct imc_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b } };
	/* 0xC000 + 1500: past ibsim's 1,024 entries. */
	const uint16_t mlids[] = { 0xc001, 0xc000 + 1500 };
	int s1, s2;

	(void)state;
	world_init(&w, true, 2);
	discover(&w);
	configure(&w);
	s1 = node_of(&w, "Switch1");
	s2 = node_of(&w, "Switch2");
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca1"), 1, 0, 0x11,
				       0xffff, rx_cb, &ra, &a), 0);
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca3"), 1, 0, 0x11,
				       0xffff, rx_cb, &rc, &c), 0);
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca4"), 1, 0, 0x11,
				       0xffff, rx_cb, &rd, &d), 0);
	for (size_t g = 0; g < 2; g++) {
		uint16_t mlid = mlids[g];
		unsigned before_c = rc.n, before_d = rd.n;

		/* Switch1: Hca1 (1) and the cable by port 5; Switch2: that
		 * cable (5) and Hca4 (2). Hca3 is attached but not in the
		 * tree: it must get nothing. */
		mft_write(&w, s1, mlid, 1u << 1 | 1u << 5);
		mft_write(&w, s2, mlid, 1u << 5 | 1u << 2);
		assert_int_equal(imc_qp_attach(c, &mgid, mlid), 0);
		assert_int_equal(imc_qp_attach(d, &mgid, mlid), 0);
		ah.dlid = mlid;
		ah.has_grh = true;
		ah.dgid = mgid;
		ah.hop_limit = 1;
		for (int i = 0; i < 3; i++)
			assert_int_equal(imc_qp_send(a, &ah, 0xffffff, 0x11,
						     "m", 1), 0);
		assert_int_equal(imc_loop_run(w.loop), 0);
		assert_int_equal(rd.n - before_d, 3);
		assert_int_equal(rc.n - before_c, 0);
		assert_int_equal(ra.n, 0);
		assert_int_equal(imc_qp_detach(c, &mgid, mlid), 0);
		assert_int_equal(imc_qp_detach(d, &mgid, mlid), 0);
	}
	/* A position past the switch's ports is a bad modifier. */
	assert_int_equal(smp_dr(&w, w.n[s1].path, w.n[s1].hops, 1, 0x1b,
				0u << 28 | 511, NULL, NULL), 0x1c);
	assert_int_equal(smp_dr(&w, w.n[s1].path, w.n[s1].hops, 1, 0x1b,
				1u << 28, NULL, NULL), 0x1c);
	imc_qp_destroy(a);
	imc_qp_destroy(c);
	imc_qp_destroy(d);
	world_fini(&w);
}

/* IBA 14.2.2: the answer comes back with D set, the hop pointer at 0,
 * the return path holding the ports it came in by, and the permissive
 * LID in the LRH. */
static void test_dr_return_path(void **state)
{
	struct world w;
	const uint8_t path[] = { 1, 3, 2 };  /* Switch1, Switch2, Hca4 */
	uint8_t ni[64];

	(void)state;
	world_init(&w, true, 3);
	assert_int_equal(smp_dr(&w, path, 3, 1, 0x11, 0, NULL, ni), 0);
	assert_int_equal(g64(ni + 12),
			 w.t->node[idx_of(&w, "Hca4")].guid);
	assert_int_equal(ni[36], 1);                 /* LocalPortNum */
	assert_true(g16(w.resp + 4) & 0x8000);        /* D */
	assert_int_equal(w.resp[6], 0);              /* hop pointer */
	assert_int_equal(w.resp[7], 3);
	assert_int_equal(w.resp[192 + 1], 1);        /* Switch1 in by 1 */
	assert_int_equal(w.resp[192 + 2], 3);        /* Switch2 in by 3 */
	assert_int_equal(w.resp[192 + 3], 1);        /* Hca4 in by 1 */
	assert_int_equal(w.from.dlid, 0xffff);
	assert_int_equal(w.from.slid, 0xffff);
	assert_int_equal(w.from.sqp, 0);
	/* A switch's NodeInfo tells the port the SMP came in by. */
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 5 }, 2, 1, 0x11, 0,
				NULL, ni), 0);
	assert_int_equal(ni[2], 2);
	assert_int_equal(ni[36], 5);
	/* An agent on a switch's port 0 (ibsim lets a client attach to a
	 * switch) walks out of any of its ports. */
	{
		struct imc_fabric_mad_agent *sa;
		struct world *wp = &w;

		imc_fabric_mad_detach(w.sm);
		assert_int_equal(imc_fabric_mad_attach(w.f,
						       idx_of(&w, "Switch2"),
						       0, sm_recv, wp, &sa), 0);
		w.sm = sa;
		assert_int_equal(smp_dr(&w, (const uint8_t[]){ 5, 1 }, 2, 1,
					0x11, 0, NULL, ni), 0);
		assert_int_equal(g64(ni + 12),
				 w.t->node[idx_of(&w, "Hca1")].guid);
		assert_int_equal(w.resp[192 + 1], 5);    /* Switch1 in by 5 */
		assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x11, 0, NULL, ni), 0);
		assert_int_equal(ni[2], 2);
		assert_int_equal(ni[36], 0);              /* from port 0 */
		imc_fabric_mad_detach(w.sm);
		assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, sm_recv, wp,
						       &w.sm), 0);
	}
	/* A path through a CA goes nowhere (CAs do not forward), nor does a
	 * path out of a port with no cable. */
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 2, 1 }, 3, 1, 0x11,
				0, NULL, NULL), -1);
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 4 }, 2, 1, 0x11, 0,
				NULL, NULL), -1);
	world_fini(&w);
}

static void test_dr_down_link(void **state)
{
	struct world w;
	struct imc_fabric_mad_stats a, b;
	uint32_t sw1;

	(void)state;
	world_init(&w, true, 4);
	sw1 = idx_of(&w, "Switch1");
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 3 }, 2, 1, 0x11, 0,
				NULL, NULL), 0);
	assert_int_equal(imc_fabric_link_set(w.f, sw1, 3, false), 0);
	imc_fabric_mad_stats(w.f, &a);
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 3 }, 2, 1, 0x11, 0,
				NULL, NULL), -1);
	imc_fabric_mad_stats(w.f, &b);
	assert_int_equal(b.smps_dropped - a.smps_dropped, 1);
	/* The other cable still leads there. */
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 5 }, 2, 1, 0x11, 0,
				NULL, NULL), 0);
	assert_int_equal(imc_fabric_link_set(w.f, sw1, 3, true), 0);
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 3 }, 2, 1, 0x11, 0,
				NULL, NULL), 0);
	world_fini(&w);
}

static void test_status_codes(void **state)
{
	struct world w;
	uint8_t mad[256];
	struct imc_fabric_mad_addr to = { .dlid = 0xffff };

	(void)state;
	world_init(&w, true, 5);
	/* Vendor attribute, SwitchInfo of a CA, Set of NodeInfo: 0x000C. */
	assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x0030, 0, NULL, NULL), 0x0c);
	assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x0012, 0, NULL, NULL), 0x0c);
	assert_int_equal(smp_dr(&w, NULL, 0, 2, 0x0011, 0, NULL, NULL), 0x0c);
	/* SMInfo with no SM on the port: unsupported. */
	assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x0020, 0, NULL, NULL), 0x0c);
	/* A bad method: 0x0008. */
	assert_int_equal(smp_dr(&w, NULL, 0, 0x04, 0x0011, 0, NULL, NULL), 0x08);
	/* PortInfo of port 9 of an 8-port switch; LFT block past the cap. */
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1 }, 1, 1, 0x15, 9,
				NULL, NULL), 0x1c);
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1 }, 1, 1, 0x19, 768,
				NULL, NULL), 0x1c);
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1 }, 1, 1, 0x19, 767,
				NULL, NULL), 0);
	/* Bit 31 of PortInfo's modifier (SMSupportsExtendedSpeeds, on
	 * OpenSM's Sets) still names the port. */
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1 }, 1, 1, 0x15,
				0x80000003u, NULL, NULL), 0);
	assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x15, 0x80000001u, NULL,
				NULL), 0);
	/* INIT straight to ACTIVE is no transition (IBA 14.2.5.6): the Set
	 * fails as a whole and leaves the LID as it was. */
	{
		uint8_t pi[64];

		assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x15, 0, NULL, pi), 0);
		assert_int_equal(pi[32] & 0x0f, IMC_PORT_INIT);
		p16(pi + 16, 5);
		pi[32] = (uint8_t)((pi[32] & 0xf0) | IMC_PORT_ACTIVE);
		assert_int_equal(smp_dr(&w, NULL, 0, 2, 0x15, 0, pi, pi), 0x1c);
		assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x15, 0, NULL, pi), 0);
		assert_int_equal(g16(pi + 16), 0);
		assert_int_equal(pi[32] & 0x0f, IMC_PORT_INIT);
	}
	/* Malformed sends are refused at once. */
	smp_build(&w, mad, true, (const uint8_t[]){ 2 }, 1, 1, 0x11, 0, NULL);
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), -EINVAL);
	smp_build(&w, mad, true, NULL, 0, 1, 0x11, 0, NULL);
	mad[7] = 64;
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), -EINVAL);
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 100), -EINVAL);
	world_fini(&w);
}

struct ev {
	struct imc_port_watch pw;
	unsigned rereg, active, lid;
};

static void ev_cb(struct imc_port_watch *pw, enum imc_port_event e)
{
	struct ev *x = imc_container_of(pw, struct ev, pw);

	x->rereg += e == IMC_PORT_EV_CLIENT_REREGISTER;
	x->active += e == IMC_PORT_EV_ACTIVE;
	x->lid += e == IMC_PORT_EV_LID_CHANGE;
}

static void test_client_reregister_and_permissive(void **state)
{
	struct world w;
	struct ev x = { 0 };
	uint8_t ni[64], pi[64];
	uint32_t h4;
	int k;

	(void)state;
	world_init(&w, true, 6);
	h4 = idx_of(&w, "Hca4");
	assert_int_equal(imc_fabric_port_watch(w.f, h4, 1, &x.pw, ev_cb), 0);
	discover(&w);
	configure(&w);
	assert_int_equal(x.active, 1);
	assert_int_equal(x.rereg, 0);
	k = node_of(&w, "Hca4");
	/* IsClientReregistrationSupported (bit 25): an SM sets the bit only
	 * on ports that have it. */
	assert_int_equal(smp_dr(&w, w.n[k].path, w.n[k].hops, 1, 0x15, 1, NULL,
				pi), 0);
	assert_true(g32(pi + 20) & (1u << 25));
	pi_set_fields(&w, (unsigned)k, 1, 0, 0, true);
	assert_int_equal(x.rereg, 1);
	/* LID routed through the LFTs to it. */
	assert_int_equal(smp_lid(&w, w.n[k].lid, 1, 0x15, 0, NULL, pi), 0);
	assert_int_equal(g16(pi + 16), w.n[k].lid);
	assert_int_equal(w.from.slid, w.n[k].lid);
	assert_int_equal(w.from.dlid, 1);
	/* A new LID is a LID change for the port's users; the LFTs still
	 * lead to the port, which no longer takes the old LID. */
	pi_set_fields(&w, (unsigned)k, 1, 40, 0, false);
	assert_int_equal(x.lid, 1);
	assert_int_equal(smp_lid(&w, w.n[k].lid, 1, 0x11, 0, NULL, NULL), -1);
	pi_set_fields(&w, (unsigned)k, 1, w.n[k].lid, 0, false);
	assert_int_equal(x.lid, 2);
	assert_int_equal(smp_lid(&w, w.n[k].lid, 1, 0x11, 0, NULL, ni), 0);
	assert_int_equal(g64(ni + 12), w.t->node[h4].guid);
	/* The permissive LID: the node at the other end of the sender's
	 * cable (Switch1). */
	assert_int_equal(smp_lid(&w, 0xffff, 1, 0x11, 0, NULL, ni), 0);
	assert_int_equal(g64(ni + 12), w.t->node[idx_of(&w, "Switch1")].guid);
	imc_fabric_port_unwatch(w.f, &x.pw);
	world_fini(&w);
}

static void test_trap_128(void **state)
{
	struct world w;
	struct imc_fabric_mad_stats a, b;
	uint8_t mad[256];
	struct imc_fabric_mad_addr to = { .dqp = 0 };
	int s2;

	(void)state;
	world_init(&w, true, 7);
	assert_int_equal(imc_fabric_mad_set_sm(w.sm, true), 0);
	discover(&w);
	configure(&w);
	s2 = node_of(&w, "Switch2");
	/* IsSM shows in the SM port's CapabilityMask. */
	assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x15, 0, NULL, mad), 0);
	assert_true(g32(mad + 20) & 2);
	w.traps = 0;
	imc_fabric_mad_stats(w.f, &a);
	assert_int_equal(imc_fabric_link_set(w.f, idx_of(&w, "Switch2"), 2,
					     false), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	/* Unrepressed, the trap repeats (8 times in all). */
	assert_int_equal(w.traps, 8);
	assert_int_equal(w.trap[1], 0x01);
	assert_int_equal(g16(w.trap + 16), 0x0002);             /* Notice */
	assert_int_equal(w.trap[64] & 0x80, 0x80);               /* generic */
	assert_int_equal(g16(w.trap + 64 + 4), 128);
	assert_int_equal(g16(w.trap + 64 + 6), w.n[s2].lid);     /* issuer */
	assert_int_equal(g16(w.trap + 64 + 10), w.n[s2].lid);
	assert_int_equal(w.trap_from.slid, w.n[s2].lid);
	assert_int_equal(w.trap_from.dlid, 1);
	/* SwitchInfo.PortStateChange is set, and cleared by writing 1. */
	assert_int_equal(smp_dr(&w, w.n[s2].path, w.n[s2].hops, 1, 0x12, 0,
				NULL, mad), 0);
	assert_int_equal(mad[11] & 0x04, 0x04);
	assert_int_equal(smp_dr(&w, w.n[s2].path, w.n[s2].hops, 2, 0x12, 0,
				mad, mad), 0);
	assert_int_equal(mad[11] & 0x04, 0);
	/* The cable down: Hca4 is DOWN and nothing sweeps. */
	{
		struct imc_port_attr pa;

		assert_int_equal(imc_fabric_port_attr(w.f, idx_of(&w, "Hca4"),
						      1, &pa), 0);
		assert_int_equal(pa.state, IMC_PORT_DOWN);
	}
	/* Repressed at once, it is sent once. */
	w.traps = 0;
	assert_int_equal(imc_fabric_link_set(w.f, idx_of(&w, "Switch2"), 2,
					     true), 0);
	while (!w.traps)
		assert_true(imc_loop_run_once(w.loop) > 0);
	memcpy(mad, w.trap, 256);
	mad[3] = 0x07;                                       /* TrapRepress */
	/* As the MAD layer under an SM passes it on: its agent's number in
	 * the high 32 bits of the TID. */
	p32(mad + 8, 0x00030001);
	to.dlid = w.n[s2].lid;
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(w.traps, 1);
	/* Plugged back, the port waits in INIT, with its LID, for the SM
	 * (IBA 7.2): an external SM activates it, not the fabric. */
	{
		struct imc_port_attr pa;

		assert_int_equal(imc_fabric_port_attr(w.f, idx_of(&w, "Hca4"),
						      1, &pa), 0);
		assert_int_equal(pa.state, IMC_PORT_INIT);
		assert_int_equal(pa.lid, w.n[node_of(&w, "Hca4")].lid);
	}
	imc_fabric_mad_stats(w.f, &b);
	assert_int_equal(b.traps_sent - a.traps_sent, 9);
	world_fini(&w);
}

/* PortCounters through the PMA, a GMP to QP1 of the port's LID. */
static int pma_get(struct world *w, uint16_t dlid, uint16_t attr,
		   uint8_t method, unsigned sel, uint8_t *out)
{
	struct imc_fabric_mad_addr to = { .dlid = dlid, .dqp = 1 };
	uint8_t mad[256] = { 1, 0x04, 1, 0 };

	mad[3] = method;
	p64(mad + 8, ++w->tid);
	p16(mad + 16, attr);
	mad[64 + 1] = (uint8_t)sel;
	w->got = false;
	assert_int_equal(imc_fabric_mad_send(w->sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
	if (!w->got)
		return -1;
	assert_int_equal(w->from.dqp, 1);
	assert_int_equal(w->from.sqp, 1);
	memcpy(out, w->resp + 64, 64);
	return g16(w->resp + 4);
}

static void test_port_counters(void **state)
{
	struct world w;
	struct imc_qp *a, *b;
	struct rx ra = { 0 }, rb = { 0 };
	struct imc_ah ah = { 0 };
	uint8_t pc[64];
	char buf[100] = { 0 };
	int h4, s1;

	(void)state;
	world_init(&w, true, 8);
	discover(&w);
	configure(&w);
	h4 = node_of(&w, "Hca4");
	s1 = node_of(&w, "Switch1");
	/* Zero them first (perfquery -r). */
	assert_int_equal(pma_get(&w, w.n[h4].lid, 0x12, 2, 1, pc), 0);
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca1"), 1, 0, 0x11,
				       0xffff, rx_cb, &ra, &a), 0);
	assert_int_equal(imc_qp_create(w.f, idx_of(&w, "Hca4"), 1, 0, 0x11,
				       0xffff, rx_cb, &rb, &b), 0);
	ah.dlid = w.n[h4].lid;
	for (int i = 0; i < 10; i++)
		assert_int_equal(imc_qp_send(a, &ah, imc_qp_num(b), 0x11, buf,
					     sizeof(buf)), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(rb.n, 10);
	assert_int_equal(pma_get(&w, w.n[h4].lid, 0x12, 1, 1, pc), 0);
	/* 10 datagrams and this query came in; the reset's answer went out. */
	assert_int_equal(g32(pc + 36), 11);                  /* RcvPkts */
	assert_int_equal(g32(pc + 32), 1);                   /* XmitPkts */
	/* 100 payload bytes + LRH 8, BTH 12, DETH 8, ICRC 4, VCRC 2. */
	assert_true(g32(pc + 28) >= 10 * 134 / 4);           /* RcvData */
	assert_int_equal(pma_get(&w, w.n[h4].lid, 0x1d, 1, 1, pc), 0);
	assert_int_equal(g64(pc + 32), 12);                  /* ext RcvPkts */
	/* The switch's PMA, on port 0 behind its LID: Switch1 port 1 sent
	 * nothing to Hca1 but the PMA answers so far; all ports: 0xFF. */
	assert_int_equal(pma_get(&w, w.n[s1].lid, 0x12, 1, 0xff, pc), 0);
	assert_true(g32(pc + 36) >= 10);
	assert_int_equal(pma_get(&w, w.n[s1].lid, 0x12, 1, 9, pc), 0x1c);
	assert_int_equal(pma_get(&w, w.n[s1].lid, 0x99, 1, 1, pc), 0x0c);
	imc_qp_destroy(a);
	imc_qp_destroy(b);
	world_fini(&w);
}


/* ---- the callback contract (docs/architecture.md) ---- */

struct agent_rec {
	struct imc_fabric_mad_agent *a;
	unsigned n;
	bool detach_in_cb;
	uint64_t last_tid;
};

static void rec_cb(struct imc_fabric_mad_agent *a,
		   const struct imc_fabric_mad_addr *from, const uint8_t *mad,
		   size_t len, void *ctx)
{
	struct agent_rec *x = ctx;

	(void)from;
	(void)len;
	x->n++;
	x->last_tid = g64(mad + 8);
	if (x->detach_in_cb) {
		/* Rule 4: the callback frees its own object. */
		imc_fabric_mad_detach(a);
		x->a = NULL;
	}
}

static void send_ni(struct world *w, struct imc_fabric_mad_agent *a,
		    uint64_t tid)
{
	struct imc_fabric_mad_addr to = { .dlid = 0xffff };
	uint8_t mad[256];

	smp_build(w, mad, true, (const uint8_t[]){ 1 }, 1, 1, 0x11, 0, NULL);
	p64(mad + 8, tid);
	assert_int_equal(imc_fabric_mad_send(a, &to, mad, 256), 0);
}

static void test_agent_contract(void **state)
{
	struct world w;
	struct agent_rec r1 = { 0 }, r2 = { 0 };
	struct imc_fabric_mad_stats a, b;
	const uint64_t hi = 0xffffull << 48;

	(void)state;
	world_init(&w, true, 12);
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, rec_cb, &r1, &r1.a),
			 0);
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, rec_cb, &r2, &r2.a),
			 0);
	/* The first agent (w.sm) takes every TID: give it one of its own. */
	imc_fabric_mad_set_tid_filter(w.sm, hi, 9ull << 48);
	imc_fabric_mad_set_tid_filter(r1.a, hi, 1ull << 48);
	imc_fabric_mad_set_tid_filter(r2.a, hi, 2ull << 48);
	/* Rule 1: never inside the call; answers by TID to their agent. */
	send_ni(&w, r1.a, 1ull << 48 | 5);
	send_ni(&w, r2.a, 2ull << 48 | 6);
	assert_int_equal(r1.n + r2.n, 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(r1.n, 1);
	assert_int_equal(r1.last_tid, 1ull << 48 | 5);
	assert_int_equal(r2.n, 1);
	assert_int_equal(r2.last_tid, 2ull << 48 | 6);
	/* Rule 3: detached before the answer, it hears nothing; the answer
	 * is nobody's. */
	imc_fabric_mad_stats(w.f, &a);
	send_ni(&w, r2.a, 2ull << 48 | 7);
	imc_fabric_mad_detach(r2.a);
	r2.a = NULL;
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(r2.n, 1);
	assert_int_equal(r1.n, 1);
	imc_fabric_mad_stats(w.f, &b);
	assert_int_equal(b.unclaimed - a.unclaimed, 1);
	/* Rule 4: detaching itself from its callback; two answers on the
	 * way, the second finds no agent. */
	r1.detach_in_cb = true;
	send_ni(&w, r1.a, 1ull << 48 | 8);
	send_ni(&w, r1.a, 1ull << 48 | 9);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(r1.n, 2);
	assert_null(r1.a);
	/* One SM agent per port. */
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, rec_cb, &r2, &r2.a),
			 0);
	assert_int_equal(imc_fabric_mad_set_sm(w.sm, true), 0);
	assert_int_equal(imc_fabric_mad_set_sm(r2.a, true), -EBUSY);
	imc_fabric_mad_detach(r2.a);
	/* Bad attachments. */
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 0, rec_cb, &r2, &r2.a),
			 -EINVAL);
	assert_int_equal(imc_fabric_mad_attach(w.f, idx_of(&w, "Switch1"), 1,
					       rec_cb, &r2, &r2.a), -EINVAL);
	world_fini(&w);
}

/* GMPs: an SA request from a host inside the simulation (a GSI user,
 * as a join tracker is) reaches the SM agent on the SM's port, and the
 * agent's answer reaches that GSI user; the PMA of the SM's own port
 * still answers PortCounters. */
struct gsi_rec {
	struct imc_gsi_agent ga;
	unsigned n;
	uint8_t method;
};

static int gsi_rec_cb(struct imc_gsi_agent *a, const struct imc_ud_recv *r)
{
	struct gsi_rec *x = imc_container_of(a, struct gsi_rec, ga);

	x->n++;
	x->method = r->data[3];
	return 0;
}

struct sa_agent {
	struct world *w;
	struct imc_fabric_mad_agent *a;
	unsigned requests;
};

static void sa_cb(struct imc_fabric_mad_agent *a,
		  const struct imc_fabric_mad_addr *from, const uint8_t *mad,
		  size_t len, void *ctx)
{
	struct sa_agent *x = ctx;
	struct imc_fabric_mad_addr back = {
		.dlid = from->slid, .dqp = from->sqp,
	};
	uint8_t resp[256];

	if (mad[1] != 0x03 || (mad[3] & 0x80))
		return;
	x->requests++;
	memcpy(resp, mad, len);
	resp[3] = 0x81;
	assert_int_equal(imc_fabric_mad_send(a, &back, resp, len), 0);
}

static void test_gmp_sm_agent_and_gsi(void **state)
{
	struct world w;
	struct sa_agent sa = { 0 };
	struct gsi_rec gr = { .ga.recv = gsi_rec_cb };
	struct imc_gsi *g;
	uint8_t mad[256] = { 1, 0x03, 2, 0x01 };
	uint8_t pc[64];

	(void)state;
	world_init(&w, true, 13);
	discover(&w);
	configure(&w);
	sa.w = &w;
	imc_fabric_mad_detach(w.sm);
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, sa_cb, &sa, &w.sm),
			 0);
	assert_int_equal(imc_fabric_mad_set_sm(w.sm, true), 0);
	assert_int_equal(imc_gsi_create(w.f, idx_of(&w, "Hca4"), 1, &g), 0);
	imc_gsi_add(g, &gr.ga);
	p64(mad + 8, 0x77);
	p16(mad + 16, 0x0038);                   /* MCMemberRecord */
	assert_int_equal(imc_gsi_send(g, 1, mad, sizeof(mad)), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(sa.requests, 1);
	assert_int_equal(gr.n, 1);
	assert_int_equal(gr.method, 0x81);
	/* Without the SM agent, the request finds nobody at the port. */
	assert_int_equal(imc_fabric_mad_set_sm(w.sm, false), 0);
	assert_int_equal(imc_gsi_send(g, 1, mad, sizeof(mad)), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(sa.requests, 1);
	assert_int_equal(gr.n, 1);
	imc_gsi_destroy(g);
	/* The PMA of the agent's own port: a GMP to its own LID loops back
	 * and is answered. */
	imc_fabric_mad_detach(w.sm);
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, sm_recv, &w, &w.sm),
			 0);
	assert_int_equal(pma_get(&w, 1, 0x12, 1, 1, pc), 0);
	world_fini(&w);
}


/* A join tracker inside the simulation sends its SA MADs to the SM LID
 * its port was given by the SM (PortInfo:MasterSMLID), not to the
 * fabric's own SM: moved by a Set, they follow. */
struct sa_count {
	unsigned joins;
	uint16_t slid;
};

static void count_cb(struct imc_fabric_mad_agent *a,
		     const struct imc_fabric_mad_addr *from, const uint8_t *mad,
		     size_t len, void *ctx)
{
	struct sa_count *x = ctx;

	(void)a;
	(void)len;
	if (mad[1] == 0x03 && mad[3] == 0x02 && g16(mad + 16) == 0x0038) {
		x->joins++;
		x->slid = from->slid;
	}
}

static void member_cb(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	(void)arg;
	(void)m;
	(void)ev;
}

static void tracker_join(struct imc_mcast_fabric *mf, uint8_t g,
			 struct imc_mcast_member **out)
{
	struct imc_mcast_join_req r;

	memset(&r, 0, sizeof(r));
	r.rec.mgid.raw[0] = 0xff;
	r.rec.mgid.raw[1] = 0x12;
	r.rec.mgid.raw[15] = g;
	r.rec.qkey = 0x11;
	r.rec.pkey = 0xffff;
	r.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
		      UMAD_SA_MCM_COMP_MASK_PORT_GID |
		      UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	r.join_state = 1;
	assert_int_equal(imc_mcast_join(imc_mcast_fabric_tracker(mf), &r,
					member_cb, NULL, out), 0);
}

static void test_tracker_follows_master_sm_lid(void **state)
{
	struct world w;
	struct sa_count c1 = { 0 }, c2 = { 0 };
	struct imc_fabric_mad_agent *a2;
	struct imc_mcast_fabric_config cfg;
	struct imc_mcast_fabric *mf;
	struct imc_mcast_member *m1, *m2;
	int h2, h4;
	uint8_t pi[64];

	(void)state;
	world_init(&w, true, 14);
	discover(&w);
	configure(&w);
	h2 = node_of(&w, "Hca2");
	h4 = node_of(&w, "Hca4");
	imc_fabric_mad_detach(w.sm);
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, count_cb, &c1,
					       &w.sm), 0);
	assert_int_equal(imc_fabric_mad_set_sm(w.sm, true), 0);
	assert_int_equal(imc_fabric_mad_attach(w.f, idx_of(&w, "Hca2"), 1,
					       count_cb, &c2, &a2), 0);
	assert_int_equal(imc_fabric_mad_set_sm(a2, true), 0);
	imc_mcast_fabric_config_init(&cfg);
	assert_int_equal(imc_mcast_fabric_create(w.f, idx_of(&w, "Hca4"), 1,
						 NULL, &cfg, &mf), 0);
	tracker_join(mf, 1, &m1);
	assert_int_equal(imc_loop_run_until(w.loop, imc_loop_now(w.loop) +
						    IMC_NSEC_PER_MSEC), 0);
	assert_true(c1.joins >= 1);
	assert_int_equal(c1.slid, w.n[h4].lid);
	assert_int_equal(c2.joins, 0);
	imc_mcast_leave(m1);
	/* The SM moves Hca4's MasterSMLID to Hca2's LID (with a raw Set,
	 * the test's SM agent being busy as the SA). */
	{
		struct imc_fabric_mad_addr to = { .dlid = 0xffff };
		uint8_t mad[256];

		imc_fabric_sma_get(w.f, idx_of(&w, "Hca4"), 1, 0x15, 0, pi);
		p16(pi + 18, w.n[h2].lid);
		smp_build(&w, mad, true, w.n[h4].path, w.n[h4].hops, 2, 0x15,
			  0, pi);
		assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), 0);
		assert_int_equal(imc_loop_run_until(w.loop,
						    imc_loop_now(w.loop) +
							    IMC_NSEC_PER_MSEC),
				 0);
	}
	c1.joins = 0;
	tracker_join(mf, 2, &m2);
	assert_int_equal(imc_loop_run_until(w.loop, imc_loop_now(w.loop) +
						    IMC_NSEC_PER_MSEC), 0);
	assert_true(c2.joins >= 1);
	assert_int_equal(c2.slid, w.n[h4].lid);
	assert_int_equal(c1.joins, 0);
	imc_mcast_leave(m2);
	imc_mcast_fabric_destroy(mf);
	imc_fabric_mad_detach(a2);
	world_fini(&w);
}


/* IBA 14.2.2: a DrDLID that is not permissive ends the directed part
 * in a LID-routed segment to it, and a DrSLID that is not permissive
 * brings the answer back LID routed from the start of the directed
 * part. */
static void test_dr_lid_segments(void **state)
{
	struct world w;
	struct imc_fabric_mad_addr to = { .dlid = 0xffff };
	uint8_t mad[256];
	int h4, s2;

	(void)state;
	world_init(&w, true, 15);
	discover(&w);
	configure(&w);
	h4 = node_of(&w, "Hca4");
	s2 = node_of(&w, "Switch2");
	/* DR to Switch1, then LID routed to Hca4. */
	smp_build(&w, mad, true, (const uint8_t[]){ 1 }, 1, 1, 0x11, 0, NULL);
	p16(mad + 34, w.n[h4].lid);
	w.got = false;
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_true(w.got);
	assert_int_equal(g16(w.resp + 4), 0x8000);
	assert_int_equal(w.resp[6], 0);
	assert_int_equal(g64(w.resp + 64 + 12),
			 w.t->node[idx_of(&w, "Hca4")].guid);
	/* LID routed to Switch1, directed from there to Switch2; the answer
	 * comes back directed to Switch1, then LID routed to the SM's
	 * DrSLID. */
	smp_build(&w, mad, true, (const uint8_t[]){ 3 }, 1, 1, 0x11, 0, NULL);
	p16(mad + 32, 1);
	to.dlid = w.n[node_of(&w, "Switch1")].lid;
	w.got = false;
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_true(w.got);
	assert_int_equal(w.resp[6], 0);
	assert_int_equal(w.resp[192 + 1], 3);
	assert_int_equal(w.from.dlid, 1);
	assert_int_equal(g64(w.resp + 64 + 12), w.n[s2].guid);
	/* Directed from the SM itself with its own LID as DrSLID: the
	 * directed part ends back at its port. */
	smp_build(&w, mad, true, (const uint8_t[]){ 1, 3 }, 2, 1, 0x11, 0,
		  NULL);
	p16(mad + 32, 1);
	to.dlid = 0xffff;
	w.got = false;
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_true(w.got);
	assert_int_equal(g64(w.resp + 64 + 12), w.n[s2].guid);
	/* A DrDLID nobody routes to loses the SMP. */
	smp_build(&w, mad, true, (const uint8_t[]){ 1 }, 1, 1, 0x11, 0, NULL);
	p16(mad + 34, 900);
	w.got = false;
	assert_int_equal(imc_fabric_mad_send(w.sm, &to, mad, 256), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_false(w.got);
	world_fini(&w);
}


/* What an SM writes into PortInfo it reads back unchanged, or it would
 * set it again at every sweep (OpenSM compares field by field). */
static void test_portinfo_set_get(void **state)
{
	struct world w;
	uint8_t pi[64], got[64];

	(void)state;
	world_init(&w, true, 16);
	assert_int_equal(smp_dr(&w, NULL, 0, 1, 0x15, 1, NULL, pi), 0);
	p64(pi + 0, 0x1122334455667788ull);          /* M_Key */
	p64(pi + 8, 0xfe80000000001234ull);          /* GidPrefix */
	p16(pi + 16, 8);
	p16(pi + 18, 3);
	p16(pi + 26, 60);                             /* M_KeyLeasePeriod */
	pi[34] = 2;                                   /* LMC */
	pi[36] = (uint8_t)((pi[36] & 0xf0) | 5);      /* MasterSMSL */
	pi[38] = 3;                                   /* VLHighLimit */
	pi[42] = 0x7b;                                /* VLStall, HOQLife */
	pi[43] = 0x30;                                /* OperationalVLs 3 */
	pi[51] = 18;                                  /* SubnetTimeOut */
	pi[53] = 0x88;                                /* error thresholds */
	pi[63] = 0x1e;                                /* LinkSpeedExtEnabled */
	assert_int_equal(smp_dr(&w, NULL, 0, 2, 0x15, 1, pi, got), 0);
	assert_memory_equal(got + 0, pi + 0, 20);
	assert_int_equal(g16(got + 26), 60);
	assert_int_equal(got[34] & 7, 2);
	assert_int_equal(got[36] & 0x0f, 5);
	assert_int_equal(got[38], 3);
	assert_int_equal(got[42], 0x7b);
	assert_int_equal(got[43] >> 4, 3);
	assert_int_equal(got[51] & 0x1f, 18);
	assert_int_equal(got[53], 0x88);
	assert_int_equal(got[63], 0x1e);
	/* LMC 2: the port takes LIDs 8..11 (IBA 7.11.1), not 12. */
	assert_int_equal(smp_lid(&w, 10, 1, 0x15, 0, NULL, got), 0);
	assert_int_equal(g16(got + 16), 8);
	assert_int_equal(smp_lid(&w, 12, 1, 0x15, 0, NULL, got), -1);
	world_fini(&w);
}


/* An agent outliving its fabric: it hears nothing, its calls say so,
 * and its owner still frees it. */
static void test_agent_after_fabric(void **state)
{
	struct world w;
	struct agent_rec r = { 0 };
	struct imc_fabric_mad_addr to = { .dlid = 0xffff };
	uint8_t mad[256];

	(void)state;
	world_init(&w, true, 17);
	assert_int_equal(imc_fabric_mad_attach(w.f, 0, 1, rec_cb, &r, &r.a),
			 0);
	send_ni(&w, r.a, 1);
	imc_fabric_mad_detach(w.sm);
	imc_fabric_destroy(w.f);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(r.n, 0);
	smp_build(&w, mad, true, NULL, 0, 1, 0x11, 0, NULL);
	assert_int_equal(imc_fabric_mad_send(r.a, &to, mad, 256), -ENODEV);
	assert_int_equal(imc_fabric_mad_set_sm(r.a, true), -ENODEV);
	imc_fabric_mad_detach(r.a);
	assert_int_equal(imc_loop_destroy(w.loop), 0);
	imc_topo_destroy(w.t);
}

/* Same seed, same events: the trace hash of a whole SM run repeats. */
static uint64_t run_hash(uint64_t seed)
{
	struct world w;
	uint64_t h;

	world_init(&w, true, seed);
	discover(&w);
	configure(&w);
	assert_int_equal(imc_fabric_link_set(w.f, idx_of(&w, "Switch1"), 5,
					     false), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	h = imc_fabric_trace_hash(w.f);
	world_fini(&w);
	return h;
}

static void test_determinism(void **state)
{
	uint64_t a = run_hash(11), b = run_hash(11);

	(void)state;
	if (a != b)
		fail_msg("seed 11: trace hash %llx then %llx",
			 (unsigned long long)a, (unsigned long long)b);
}

/* The built-in SM's fabric answers SMPs too, without stepping aside. */
static void test_builtin_sm_answers(void **state)
{
	struct world w;
	uint8_t pi[64], out[64];

	(void)state;
	world_init(&w, false, 9);
	assert_int_equal(smp_dr(&w, (const uint8_t[]){ 1, 3, 2 }, 3, 1, 0x15,
				0, NULL, pi), 0);
	assert_int_equal(pi[32] & 0x0f, IMC_PORT_ACTIVE);
	assert_true(g16(pi + 16) != 0);
	assert_int_equal(g16(pi + 18), 1);
	assert_int_equal(imc_fabric_sma_get(w.f, idx_of(&w, "Hca4"), 1, 0x15,
					    0, out), 0);
	assert_memory_equal(out + 16, pi + 16, 4);
	assert_int_equal(imc_fabric_sma_get(w.f, idx_of(&w, "Switch1"), 0,
					    0x11, 0, out), 0);
	assert_int_equal(out[2], 2);
	assert_int_equal(imc_fabric_sma_get(w.f, idx_of(&w, "Hca4"), 1, 0x12,
					    0, out), 0x0c);
	assert_int_equal(imc_fabric_sma_get(w.f, 99, 1, 0x11, 0, out),
			 -EINVAL);
	world_fini(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discover_and_configure),
		cmocka_unit_test(test_multicast_follows_mft),
		cmocka_unit_test(test_dr_return_path),
		cmocka_unit_test(test_dr_down_link),
		cmocka_unit_test(test_dr_lid_segments),
		cmocka_unit_test(test_status_codes),
		cmocka_unit_test(test_portinfo_set_get),
		cmocka_unit_test(test_client_reregister_and_permissive),
		cmocka_unit_test(test_trap_128),
		cmocka_unit_test(test_port_counters),
		cmocka_unit_test(test_agent_contract),
		cmocka_unit_test(test_gmp_sm_agent_and_gsi),
		cmocka_unit_test(test_agent_after_fabric),
		cmocka_unit_test(test_tracker_follows_master_sm_lid),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_builtin_sm_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
