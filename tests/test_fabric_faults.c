/* Cable faults: loss within a binomial bound, duplication, reordering,
 * link down with packets in flight and rerouting after the SM's sweep,
 * port state on a cable that came back, and determinism of the trace
 * hash by seed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"

#include "fabric_world.h"

static uint16_t lid_of(struct world *w, uint32_t node)
{
	struct imc_port_attr a;

	assert_int_equal(imc_fabric_port_attr(w->f, node, 1, &a), 0);
	return a.lid;
}

/* Records sequence numbers in arrival order. */
struct seqrx {
	uint32_t *seq;
	size_t n, cap;
};

static void on_seq(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct seqrx *s = ctx;

	(void)qp;
	assert_int_equal(r->len, 8);
	assert_true(s->n < s->cap);
	memcpy(&s->seq[s->n++], r->data, 4);
}

static void send_seq(struct imc_qp *qp, uint16_t dlid, uint32_t seq)
{
	uint8_t msg[8] = { 0 };
	struct imc_ah ah;

	memset(&ah, 0, sizeof(ah));
	ah.dlid = dlid;
	memcpy(msg, &seq, 4);
	assert_int_equal(imc_qp_send(qp, &ah, 2, 1, msg, 8), 0);
}

static void test_loss_binomial(void **state)
{
	const unsigned n = 100000;
	const double p = 0.1;
	struct world w;
	struct imc_link_params lp;
	struct imc_fabric_config c;
	struct imc_qp *tx, *rx;
	struct seqrx s = { 0 };
	struct imc_link_counters lc;
	struct imc_port_counters pc;
	struct imc_fabric_totals tot;
	double mean = n * p, sigma = sqrt(n * p * (1 - p));

	(void)state;
	imc_fabric_config_default(&c);
	c.seed = 12345;
	world_up(&w, "switch:hosts=2", &c);
	s.cap = n;
	s.seq = malloc(n * sizeof(*s.seq));
	assert_non_null(s.seq);
	lp = c.link;
	lp.loss = p;
	assert_int_equal(imc_fabric_link_params_set(w.f, 0, 1, &lp), 0);
	assert_int_equal(imc_fabric_link_params_set(w.f, 0, 1, NULL), -EINVAL);
	lp.loss = -0.1;
	assert_int_equal(imc_fabric_link_params_set(w.f, 0, 1, &lp), -EINVAL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, on_seq, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 1, 0xffff, on_seq, &s,
				       &rx), 0);
	for (unsigned i = 0; i < n; i += 1000) {
		for (unsigned k = 0; k < 1000; k++)
			send_seq(tx, lid_of(&w, 1), i + k);
		assert_int_equal(imc_loop_run(w.loop), 0);
	}
	assert_int_equal(imc_fabric_link_counters(w.f, 0, 1, &lc), 0);
	assert_int_equal(lc.packets, n);
	assert_true(fabs((double)lc.lost - mean) < 5 * sigma);
	assert_int_equal(lc.duplicated, 0);
	assert_int_equal(s.n, n - lc.lost);
	/* In order, and each lost one missing exactly once. */
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.seq[i] > s.seq[i - 1]);
	assert_int_equal(imc_fabric_port_counters(w.f, 0, 1, &pc), 0);
	assert_int_equal(pc.drops[IMC_DROP_LOSS], lc.lost);
	imc_fabric_totals(w.f, &tot);
	assert_int_equal(tot.delivered, n - lc.lost);
	/* The other direction and the other cable are untouched. */
	assert_int_equal(imc_fabric_link_counters(w.f, 2, 2, &lc), 0);
	assert_int_equal(lc.lost, 0);
	assert_int_equal(lc.packets, s.n);
	free(s.seq);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

static void test_dup_and_reorder(void **state)
{
	const unsigned n = 10000, tail = 200;
	struct world w;
	struct imc_link_params lp;
	struct imc_fabric_config c;
	struct imc_qp *tx, *rx;
	struct seqrx s = { 0 };
	struct imc_link_counters lc;
	unsigned passed = 0, twice = 0;
	uint32_t top = 0;
	uint8_t *seen;

	(void)state;
	imc_fabric_config_default(&c);
	world_up(&w, "switch:hosts=2", &c);
	s.cap = 3 * n;
	s.seq = malloc(s.cap * sizeof(*s.seq));
	seen = calloc(n + tail, 1);
	assert_non_null(s.seq);
	assert_non_null(seen);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, on_seq, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 1, 0xffff, on_seq, &s,
				       &rx), 0);

	/* Duplication: each copy lands right behind its original. */
	lp = c.link;
	lp.dup = 0.2;
	assert_int_equal(imc_fabric_link_params_set(w.f, 0, 1, &lp), 0);
	for (unsigned i = 0; i < n; i++)
		send_seq(tx, lid_of(&w, 1), i);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(imc_fabric_link_counters(w.f, 0, 1, &lc), 0);
	assert_true(fabs((double)lc.duplicated - n * 0.2) <
		    5 * sqrt(n * 0.2 * 0.8));
	assert_int_equal(s.n, n + lc.duplicated);
	for (size_t i = 1; i < s.n; i++) {
		assert_true(s.seq[i] >= s.seq[i - 1]);
		twice += s.seq[i] == s.seq[i - 1];
	}
	assert_int_equal(twice, lc.duplicated);

	/* Reordering: a held-back packet arrives after later ones. The
	 * last 200 go without faults, so every held one is passed. */
	s.n = 0;
	lp.dup = 0;
	lp.reorder = 0.1;
	lp.reorder_delay = 1000;
	assert_int_equal(imc_fabric_link_params_set(w.f, 0, 1, &lp), 0);
	for (unsigned i = 0; i < n; i++)
		send_seq(tx, lid_of(&w, 1), i);
	lp.reorder = 0;
	assert_int_equal(imc_fabric_link_params_set(w.f, 0, 1, &lp), 0);
	for (unsigned i = n; i < n + tail; i++)
		send_seq(tx, lid_of(&w, 1), i);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(imc_fabric_link_counters(w.f, 0, 1, &lc), 0);
	assert_true(fabs((double)lc.reordered - n * 0.1) <
		    5 * sqrt(n * 0.1 * 0.9));
	assert_int_equal(s.n, n + tail);
	for (size_t i = 0; i < s.n; i++) {
		assert_false(seen[s.seq[i]]);
		seen[s.seq[i]] = 1;
		if (i && s.seq[i] < top)
			passed++;
		if (s.seq[i] > top)
			top = s.seq[i];
	}
	assert_int_equal(passed, lc.reordered);
	free(seen);
	free(s.seq);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

struct evlog {
	struct imc_port_watch w;
	unsigned n;
	enum imc_port_event ev[16];
	imc_time_t at[16];
	struct imc_loop *loop;
};

static void on_event(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct evlog *l = imc_container_of(w, struct evlog, w);

	assert_true(l->n < 16);
	l->at[l->n] = imc_loop_now(l->loop);
	l->ev[l->n++] = ev;
}

/* Leaves are nodes 2 and 3 (host on port 1, spine s on port 1 + s);
 * spines are nodes 4 and 5 (leaf l on port l). */
static void test_link_down_reroute(void **state)
{
	struct world w;
	struct imc_qp *tx, *rx;
	struct seqrx s = { 0 };
	struct imc_port_counters pc2, pc3;
	struct imc_fabric_totals tot;
	struct imc_port_attr a;
	unsigned up_port, other;
	imc_time_t t_down;

	(void)state;
	world_up(&w, "fat-tree:leaves=2,hosts=1,spines=2", NULL);
	s.cap = 100;
	s.seq = calloc(s.cap, sizeof(*s.seq));
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, on_seq, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 1, 0xffff, on_seq, &s,
				       &rx), 0);
	/* Which spine the route takes. */
	send_seq(tx, lid_of(&w, 1), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, 2, &pc2), 0);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, 3, &pc3), 0);
	assert_int_equal(pc2.tx_packets + pc3.tx_packets, 1);
	up_port = pc2.tx_packets ? 2 : 3;
	other = 5 - up_port;

	/* 10 datagrams, 13 ns apart on each cable; at 250 ns the first
	 * ones are on the leaf -> spine cable, the rest still behind. */
	for (uint32_t i = 1; i <= 10; i++)
		send_seq(tx, lid_of(&w, 1), i);
	assert_int_equal(imc_loop_run_until(w.loop,
					    imc_loop_now(w.loop) + 250), 0);
	t_down = imc_loop_now(w.loop);
	assert_int_equal(imc_fabric_link_set(w.f, 2, up_port, false), 0);
	assert_false(imc_fabric_link_up(w.f, 2, up_port));
	assert_false(imc_fabric_link_up(w.f, 4 + up_port - 2, 1));
	assert_int_equal(imc_fabric_port_attr(w.f, 2, up_port, &a), 0);
	assert_int_equal(a.state, IMC_PORT_DOWN);
	assert_int_equal(imc_loop_run_until(w.loop, t_down + 1000), 0);
	imc_fabric_totals(w.f, &tot);
	assert_int_equal(s.n, 1 + 10 - tot.drops[IMC_DROP_LINK_DOWN]);
	assert_true(tot.drops[IMC_DROP_LINK_DOWN] >= 1);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, up_port, &pc2), 0);
	assert_int_equal(pc2.drops[IMC_DROP_LINK_DOWN],
			 tot.drops[IMC_DROP_LINK_DOWN]);
	/* Sent before the sweep: still routed into the dead cable. */
	send_seq(tx, lid_of(&w, 1), 11);
	assert_int_equal(imc_loop_run_until(w.loop, t_down + 999999), 0);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, up_port, &pc3), 0);
	assert_int_equal(pc3.drops[IMC_DROP_LINK_DOWN],
			 pc2.drops[IMC_DROP_LINK_DOWN] + 1);
	/* After the sweep: the other spine. */
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(imc_loop_now(w.loop), t_down + 1000000);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, other, &pc2), 0);
	send_seq(tx, lid_of(&w, 1), 12);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(s.seq[s.n - 1], 12);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, other, &pc3), 0);
	assert_int_equal(pc3.tx_packets, pc2.tx_packets + 1);

	/* The cable comes back: INIT until the sweep, so a packet routed
	 * into it meanwhile is dropped for port state. Down and up again
	 * at once, the LFT still points at it. */
	assert_int_equal(imc_fabric_link_set(w.f, 2, other, false), 0);
	assert_int_equal(imc_fabric_link_set(w.f, 2, other, true), 0);
	assert_int_equal(imc_fabric_link_set(w.f, 2, other, true), 0);
	assert_int_equal(imc_fabric_port_attr(w.f, 2, other, &a), 0);
	assert_int_equal(a.state, IMC_PORT_INIT);
	send_seq(tx, lid_of(&w, 1), 13);
	assert_int_equal(imc_loop_run_until(w.loop, imc_loop_now(w.loop) + 1000),
			 0);
	assert_int_equal(imc_fabric_port_counters(w.f, 2, other, &pc3), 0);
	assert_int_equal(pc3.drops[IMC_DROP_PORT_STATE], 1);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(imc_fabric_port_attr(w.f, 2, other, &a), 0);
	assert_int_equal(a.state, IMC_PORT_ACTIVE);
	send_seq(tx, lid_of(&w, 1), 14);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(s.seq[s.n - 1], 14);

	assert_int_equal(imc_fabric_link_set(w.f, 2, 0, false), -EINVAL);
	assert_int_equal(imc_fabric_link_set(w.f, 2, 9, false), -EINVAL);
	free(s.seq);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

/* An HCA's only cable: DOWN at once (heard from the loop), ACTIVE one
 * sweep delay after it comes back; its LID is kept. */
static void test_hca_cable_events(void **state)
{
	struct world w;
	struct evlog l = { 0 };
	struct imc_port_attr a;
	imc_time_t t0;
	uint16_t lid;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	l.loop = w.loop;
	lid = lid_of(&w, 1);
	assert_int_equal(imc_fabric_port_watch(w.f, 1, 1, &l.w, on_event), 0);
	t0 = imc_loop_now(w.loop);
	assert_int_equal(imc_fabric_link_set(w.f, 1, 1, false), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(imc_loop_run_until(w.loop, t0 + 10), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.ev[0], IMC_PORT_EV_DOWN);
	assert_int_equal(l.at[0], t0);
	assert_int_equal(imc_fabric_port_attr(w.f, 1, 1, &a), 0);
	assert_int_equal(a.state, IMC_PORT_DOWN);
	/* The sweep changes nothing for a port whose cable is down. */
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(l.n, 1);
	t0 = imc_loop_now(w.loop);
	assert_int_equal(imc_fabric_link_set(w.f, 1, 1, true), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.ev[1], IMC_PORT_EV_ACTIVE);
	assert_int_equal(l.at[1], t0 + 1000000);
	assert_int_equal(imc_fabric_port_attr(w.f, 1, 1, &a), 0);
	assert_int_equal(a.state, IMC_PORT_ACTIVE);
	assert_int_equal(a.lid, lid);
	assert_int_equal(a.sm_lid, 1);
	imc_fabric_port_unwatch(w.f, &l.w);
	world_down(&w);
}

/* ---- determinism ---- */

struct run {
	uint64_t hash;
	struct imc_fabric_totals tot;
	struct imc_link_counters lc;
	unsigned got;
};

static void count(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	(*(unsigned *)ctx)++;
}

/* Unicast all-to-all and multicast on a fat tree with faults on every
 * cable, a link flap in the middle. */
static void scenario(uint64_t seed, bool faults, struct run *out)
{
	struct imc_fabric_config c;
	struct world w;
	struct imc_qp *qp[8];
	struct imc_gid mgid;
	uint32_t nodes[8];
	unsigned ports[8];
	uint16_t lids[8];

	imc_fabric_config_default(&c);
	c.seed = seed;
	if (faults) {
		c.link.loss = 0.05;
		c.link.dup = 0.05;
		c.link.reorder = 0.05;
		c.link.reorder_delay = 300;
	}
	world_up(&w, "fat-tree:leaves=4,hosts=2,spines=2", &c);
	memset(out, 0, sizeof(*out));
	memset(&mgid, 0, sizeof(mgid));
	mgid.raw[0] = 0xff;
	mgid.raw[1] = 0x12;
	for (uint32_t i = 0; i < 8; i++) {
		assert_int_equal(imc_qp_create(w.f, i, 1, 0, 3, 0xffff, count,
					       &out->got, &qp[i]), 0);
		assert_int_equal(imc_qp_attach(qp[i], &mgid, 0xc001), 0);
		nodes[i] = i;
		ports[i] = 1;
		lids[i] = lid_of(&w, i);
	}
	assert_int_equal(imc_fabric_mft_program_tree(w.f, 0xc001, nodes, ports,
						     8), 8);
	for (int round = 0; round < 20; round++) {
		for (uint32_t i = 0; i < 8; i++) {
			struct imc_ah ah;
			uint32_t x = (uint32_t)round;

			memset(&ah, 0, sizeof(ah));
			for (uint32_t j = 0; j < 8; j++) {
				if (i == j)
					continue;
				ah.dlid = lids[j];
				assert_int_equal(imc_qp_send(qp[i], &ah, 2, 3,
							     &x, 4), 0);
			}
			ah.dlid = 0xc001;
			ah.has_grh = true;
			ah.dgid = mgid;
			assert_int_equal(imc_qp_send(qp[i], &ah, IMC_MCAST_QPN,
						     3, &x, 4), 0);
		}
		assert_int_equal(imc_loop_run_until(w.loop,
					imc_loop_now(w.loop) + 2000), 0);
		if (round == 5)
			assert_int_equal(imc_fabric_link_set(w.f, 8, 3, false),
					 0);
		if (round == 12)
			assert_int_equal(imc_fabric_link_set(w.f, 8, 3, true),
					 0);
	}
	assert_int_equal(imc_loop_run(w.loop), 0);
	out->hash = imc_fabric_trace_hash(w.f);
	imc_fabric_totals(w.f, &out->tot);
	assert_int_equal(imc_fabric_link_counters(w.f, 8, 3, &out->lc), 0);
	assert_int_equal(out->tot.delivered, out->got);
	for (uint32_t i = 0; i < 8; i++)
		imc_qp_destroy(qp[i]);
	world_down(&w);
}

/* The fabric freed mid-run: held, duplicated and multicast packets on
 * the wire, completions and port events pending, a sweep armed. The
 * loop is left with no timer of the fabric, and ASan sees no leak. */
static void test_destroy_busy(void **state)
{
	struct imc_fabric_config c;
	struct world w;
	struct imc_qp *qp[4];
	struct imc_port_watch pw;
	struct imc_gid mgid;
	uint32_t nodes[4] = { 0, 1, 2, 3 };
	unsigned ports[4] = { 1, 1, 1, 1 }, got = 0;
	uint8_t big[2000] = { 0 };

	(void)state;
	imc_fabric_config_default(&c);
	c.link.dup = 0.3;
	c.link.reorder = 0.3;
	c.link.reorder_delay = 5000;
	world_up(&w, "fat-tree:leaves=2,hosts=2,spines=2", &c);
	memset(&mgid, 0, sizeof(mgid));
	mgid.raw[0] = 0xff;
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(imc_qp_create(w.f, i, 1, 0, 3, 0xffff, count,
					       &got, &qp[i]), 0);
		imc_qp_set_recv_delay(qp[i], 100000);
		assert_int_equal(imc_qp_attach(qp[i], &mgid, 0xc001), 0);
	}
	assert_int_equal(imc_fabric_mft_program_tree(w.f, 0xc001, nodes, ports,
						     4), 4);
	for (int k = 0; k < 50; k++) {
		for (uint32_t i = 0; i < 4; i++) {
			struct imc_ah ah;

			memset(&ah, 0, sizeof(ah));
			ah.dlid = lid_of(&w, (i + 1) % 4);
			assert_int_equal(imc_qp_send(qp[i], &ah, 2, 3, big,
						     (size_t)(k * 40)), 0);
			ah.dlid = 0xc001;
			ah.has_grh = true;
			ah.dgid = mgid;
			assert_int_equal(imc_qp_send(qp[i], &ah, IMC_MCAST_QPN,
						     3, big, 300), 0);
		}
	}
	assert_int_equal(imc_fabric_port_watch(w.f, 0, 1, &pw, NULL), -EINVAL);
	assert_int_equal(imc_fabric_client_reregister(w.f, IMC_TOPO_NONE, 0),
			 0);
	assert_int_equal(imc_fabric_link_set(w.f, 4, 3, false), 0);
	assert_int_equal(imc_loop_run_until(w.loop, imc_loop_now(w.loop) + 3000),
			 0);
	assert_int_equal(got, 0);
	world_down(&w);
}

static void test_determinism(void **state)
{
	struct run a, b, c, d, e;

	(void)state;
	scenario(7, true, &a);
	scenario(7, true, &b);
	scenario(8, true, &c);
	assert_true(a.hash == b.hash);
	assert_memory_equal(&a.tot, &b.tot, sizeof(a.tot));
	assert_memory_equal(&a.lc, &b.lc, sizeof(a.lc));
	assert_true(a.tot.drops[IMC_DROP_LOSS] > 0);
	assert_true(a.lc.duplicated + a.lc.reordered > 0);
	assert_true(a.hash != c.hash);
	assert_true(a.tot.drops[IMC_DROP_LOSS] != c.tot.drops[IMC_DROP_LOSS] ||
		    a.tot.delivered != c.tot.delivered ||
		    a.tot.hops != c.tot.hops);
	/* Without faults the seed changes nothing. */
	scenario(7, false, &d);
	scenario(8, false, &e);
	assert_true(d.hash == e.hash);
	assert_true(d.hash != a.hash);
	assert_int_equal(d.tot.drops[IMC_DROP_LOSS], 0);
	assert_int_equal(d.tot.sent, 20 * 8 * 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_binomial),
		cmocka_unit_test(test_dup_and_reorder),
		cmocka_unit_test(test_link_down_reroute),
		cmocka_unit_test(test_hca_cable_events),
		cmocka_unit_test(test_destroy_busy),
		cmocka_unit_test(test_determinism),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
