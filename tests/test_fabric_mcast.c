/* Multicast: MFT entries (IBA 18.2.4.4), the spanning tree of
 * imc_fabric_mft_program_tree on two- and three-level fat trees, and
 * replication to the QPs attached to (MLID, MGID) on each port
 * (IBA 10.5.2.5). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"
#include "fabric_world.h"

#define MLID 0xc012

static void mgid_make(struct imc_gid *g, uint8_t last)
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xff;
	g->raw[1] = 0x12;
	g->raw[2] = 0x40;
	g->raw[3] = 0x1b;
	g->raw[15] = last;
}

struct host {
	struct imc_qp *qp;
	uint16_t lid;
	unsigned from[64];   /* datagrams received, by sender HCA */
	unsigned total;
	struct host *all;
};

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct host *h = ctx;
	static const struct imc_gid zero;

	(void)qp;
	assert_true(r->has_grh);
	assert_int_equal(r->dlid, MLID);
	assert_int_equal(r->len, 4);
	assert_memory_not_equal(&r->sgid, &zero, sizeof(zero));
	h->total++;
	for (int i = 0; i < 64; i++) {
		if (h->all[i].lid == r->slid) {
			uint32_t tag;

			memcpy(&tag, r->data, 4);
			assert_int_equal(tag, (uint32_t)i);
			h->from[i]++;
			return;
		}
	}
	fail_msg("datagram from unknown LID %u", r->slid);
}

/* Switch-to-switch edges the MFTs of MLID hold, each counted once. */
static unsigned tree_edges(struct world *w)
{
	unsigned ends = 0;

	for (uint32_t s = 0; s < w->t->nnodes; s++) {
		struct imc_portmask m;

		if (w->t->node[s].type != IMC_NODE_SWITCH)
			continue;
		assert_int_equal(imc_fabric_mft_get(w->f, s, MLID, &m), 0);
		for (unsigned p = 1; p <= w->t->node[s].nports; p++) {
			uint32_t peer = w->t->node[s].port[p].peer;

			if (imc_portmask_test(&m, p) && peer != IMC_TOPO_NONE &&
			    w->t->node[peer].type == IMC_NODE_SWITCH)
				ends++;
		}
	}
	assert_int_equal(ends % 2, 0);
	return ends / 2;
}

/* Every HCA has a QP attached to the group; only members are in the
 * tree. Each member sends once: every other member gets exactly one
 * copy, the sender and non-members none, and each send crosses
 * 1 + edges + (members - 1) cables. */
static void run_tree(const char *spec, const uint32_t *members, size_t m,
		     unsigned want_edges)
{
	struct world w;
	struct host hosts[64];
	struct imc_gid mgid;
	uint32_t nodes[16];
	unsigned ports[16];
	struct imc_fabric_totals tot;
	bool member[64] = { false };

	world_up(&w, spec, NULL);
	assert_true(w.nhcas <= 64);
	memset(hosts, 0, sizeof(hosts));
	mgid_make(&mgid, 1);
	for (uint32_t i = 0; i < w.nhcas; i++) {
		struct imc_port_attr a;

		hosts[i].all = hosts;
		assert_int_equal(imc_fabric_port_attr(w.f, i, 1, &a), 0);
		hosts[i].lid = a.lid;
		assert_int_equal(imc_qp_create(w.f, i, 1, 0, 0xb1b, 0xffff,
					       on_recv, &hosts[i],
					       &hosts[i].qp), 0);
		assert_int_equal(imc_qp_attach(hosts[i].qp, &mgid, MLID), 0);
	}
	for (size_t k = 0; k < m; k++) {
		nodes[k] = members[k];
		ports[k] = 1;
		member[members[k]] = true;
	}
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     m), (int)m);
	assert_int_equal(tree_edges(&w), want_edges);

	for (size_t k = 0; k < m; k++) {
		struct imc_ah ah;
		uint32_t tag = members[k];

		memset(&ah, 0, sizeof(ah));
		ah.dlid = MLID;
		ah.has_grh = true;
		ah.dgid = mgid;
		ah.hop_limit = 1;
		assert_int_equal(imc_qp_send(hosts[members[k]].qp, &ah,
					     IMC_MCAST_QPN, 0xb1b, &tag, 4), 0);
		assert_int_equal(imc_loop_run(w.loop), 0);
	}
	for (uint32_t i = 0; i < w.nhcas; i++) {
		for (uint32_t s = 0; s < w.nhcas; s++) {
			unsigned want = member[i] && member[s] && i != s;

			assert_int_equal(hosts[i].from[s], want);
		}
		if (!member[i]) {
			struct imc_port_counters pc;

			assert_int_equal(imc_fabric_port_counters(w.f, i, 1,
								  &pc), 0);
			assert_int_equal(pc.rx_packets, 0);
		}
	}
	imc_fabric_totals(w.f, &tot);
	assert_int_equal(tot.sent, m);
	assert_int_equal(tot.delivered, m * (m - 1));
	assert_int_equal(tot.hops, m * (1 + want_edges + m - 1));
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		assert_int_equal(tot.drops[d], 0);
	for (uint32_t i = 0; i < w.nhcas; i++)
		imc_qp_destroy(hosts[i].qp);
	world_down(&w);
}

/* Leaves of 3 hosts: members on leaves 1, 1, 2, 4; the tree is the root
 * leaf, the first spine and leaves 2 and 4: 3 edges. */
static void test_tree_two_levels(void **state)
{
	static const uint32_t members[] = { 0, 1, 4, 9 };

	(void)state;
	run_tree("fat-tree:leaves=4,hosts=3,spines=2", members, 4, 3);
}

/* Two pods of two leaves of two hosts; a member on every leaf. From leaf
 * 1: agg 1 of pod 1 reaches leaf 2 and spine 1, spine 1 reaches agg 1 of
 * pod 2, which reaches leaves 3 and 4: 6 edges. */
static void test_tree_three_levels(void **state)
{
	static const uint32_t members[] = { 0, 3, 5, 6 };

	(void)state;
	run_tree("fat-tree:pods=2,leaves=2,hosts=2,aggs=2,spines=2", members,
		 4, 6);
}

/* Members on one leaf only: a tree of one switch. */
static void test_tree_one_switch(void **state)
{
	static const uint32_t members[] = { 2, 0, 1 };

	(void)state;
	run_tree("fat-tree:leaves=2,hosts=3,spines=2", members, 3, 0);
}

struct counter {
	unsigned n;
};

static void bump(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	((struct counter *)ctx)->n++;
}

/* On one port: two QPs attached to (MLID, MGID 1) both get a copy, a QP
 * attached to (MLID, MGID 2) none; a detached QP none. */
static void test_attachments(void **state)
{
	struct world w;
	struct imc_gid g1, g2;
	struct imc_qp *a, *b, *c, *tx;
	struct counter ca = { 0 }, cb = { 0 }, cc = { 0 };
	uint32_t nodes[2] = { 0, 1 };
	unsigned ports[2] = { 1, 1 };
	struct imc_ah ah;
	uint32_t x = 0;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	mgid_make(&g1, 1);
	mgid_make(&g2, 2);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 5, 0xffff, bump, &ca, &a),
			 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 5, 0xffff, bump, &cb, &b),
			 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 5, 0xffff, bump, &cc, &c),
			 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 5, 0xffff, bump, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_attach(a, &g1, MLID), 0);
	assert_int_equal(imc_qp_attach(a, &g1, MLID), -EEXIST);
	assert_int_equal(imc_qp_attach(b, &g1, MLID), 0);
	assert_int_equal(imc_qp_attach(c, &g2, MLID), 0);
	assert_int_equal(imc_qp_attach(c, &g2, 0x10), -EINVAL);
	assert_int_equal(imc_qp_detach(c, &g1, MLID), -ENOENT);
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     2), 2);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = MLID;
	ah.has_grh = true;
	ah.dgid = g1;
	assert_int_equal(imc_qp_send(tx, &ah, IMC_MCAST_QPN, 5, &x, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(ca.n, 1);
	assert_int_equal(cb.n, 1);
	assert_int_equal(cc.n, 0);
	/* To MGID 3: nobody on the port. */
	mgid_make(&ah.dgid, 3);
	assert_int_equal(imc_qp_send(tx, &ah, IMC_MCAST_QPN, 5, &x, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	{
		struct imc_port_counters pc;

		assert_int_equal(imc_fabric_port_counters(w.f, 0, 1, &pc), 0);
		assert_int_equal(pc.drops[IMC_DROP_NO_QP], 1);
		assert_int_equal(pc.rx_packets, 2);
	}
	/* Detached: b only; a Q_Key mismatch drops only that copy. */
	assert_int_equal(imc_qp_detach(a, &g1, MLID), 0);
	ah.dgid = g1;
	assert_int_equal(imc_qp_send(tx, &ah, IMC_MCAST_QPN, 5, &x, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(ca.n, 1);
	assert_int_equal(cb.n, 2);
	assert_int_equal(imc_qp_attach(a, &g1, MLID), 0);
	assert_int_equal(imc_qp_send(tx, &ah, IMC_MCAST_QPN, 6, &x, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(ca.n, 1);
	assert_int_equal(cb.n, 2);
	{
		struct imc_fabric_totals tot;

		imc_fabric_totals(w.f, &tot);
		assert_int_equal(tot.drops[IMC_DROP_QKEY], 2);
	}
	/* Destroying an attached QP detaches it. */
	imc_qp_destroy(b);
	assert_int_equal(imc_qp_send(tx, &ah, IMC_MCAST_QPN, 5, &x, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(ca.n, 2);
	imc_qp_destroy(a);
	imc_qp_destroy(c);
	imc_qp_destroy(tx);
	world_down(&w);
}

static void test_mft_entries(void **state)
{
	struct world w;
	struct imc_portmask m, got;
	uint32_t sw = 6;   /* leaf 1 */

	(void)state;
	world_up(&w, "fat-tree:leaves=2,hosts=3,spines=2", NULL);
	memset(&m, 0, sizeof(m));
	imc_portmask_set(&m, 1);
	imc_portmask_set(&m, 200);
	assert_int_equal(imc_fabric_mft_set(w.f, sw, 0xc000, &m), 0);
	assert_int_equal(imc_fabric_mft_get(w.f, sw, 0xc000, &got), 0);
	assert_memory_equal(&got, &m, sizeof(m));
	assert_int_equal(imc_fabric_mft_get(w.f, sw, 0xc001, &got), 0);
	assert_false(imc_portmask_test(&got, 1));
	assert_int_equal(imc_fabric_mft_set(w.f, sw, 0xbfff, &m), -EINVAL);
	assert_int_equal(imc_fabric_mft_set(w.f, sw, 0xffff, &m), -EINVAL);
	assert_int_equal(imc_fabric_mft_set(w.f, 0, 0xc000, &m), -EINVAL);
	assert_int_equal(imc_fabric_mft_get(w.f, 0, 0xc000, &got), -EINVAL);
	memset(&m, 0, sizeof(m));
	assert_int_equal(imc_fabric_mft_set(w.f, sw, 0xc000, &m), 0);
	imc_portmask_set(&got, 3);
	assert_int_equal(imc_fabric_mft_get(w.f, sw, 0xc000, &got), 0);
	assert_memory_equal(&got, &m, sizeof(m));

	world_down(&w);
}

static void nop(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	(void)ctx;
}

/* Re-programming with fewer members clears the switches that leave the
 * tree; no members clears them all; a packet to an MLID a switch has no
 * entry for is dropped where it came in. */
static void test_tree_shrinks(void **state)
{
	struct world w;
	struct imc_portmask m;
	struct imc_qp *tx;
	struct imc_ah ah;
	uint32_t x = 0;
	uint32_t nodes[3] = { 0, 1, 5 };
	unsigned ports[3] = { 1, 1, 1 };
	uint32_t leaf1 = 6, leaf2 = 7, spine1 = 8, spine2 = 9;

	(void)state;
	world_up(&w, "fat-tree:leaves=2,hosts=3,spines=2", NULL);
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     3), 3);
	assert_int_equal(imc_fabric_mft_get(w.f, leaf1, MLID, &m), 0);
	/* hosts 1, 2 on ports 1, 2; spine 1 on port 4 */
	assert_true(m.bits[0] == ((1u << 1) | (1u << 2) | (1u << 4)));
	assert_int_equal(imc_fabric_mft_get(w.f, spine1, MLID, &m), 0);
	assert_true(m.bits[0] == ((1u << 1) | (1u << 2)));
	assert_int_equal(imc_fabric_mft_get(w.f, spine2, MLID, &m), 0);
	assert_true(m.bits[0] == 0);
	assert_int_equal(imc_fabric_mft_get(w.f, leaf2, MLID, &m), 0);
	assert_true(m.bits[0] == ((1u << 3) | (1u << 4)));

	/* Members on leaf 1 only. */
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     2), 2);
	assert_int_equal(imc_fabric_mft_get(w.f, leaf1, MLID, &m), 0);
	assert_true(m.bits[0] == ((1u << 1) | (1u << 2)));
	assert_int_equal(imc_fabric_mft_get(w.f, spine1, MLID, &m), 0);
	assert_true(m.bits[0] == 0);
	assert_int_equal(imc_fabric_mft_get(w.f, leaf2, MLID, &m), 0);
	assert_true(m.bits[0] == 0);

	/* Host 5 sends: leaf 2 has no entry any more. */
	assert_int_equal(imc_qp_create(w.f, 5, 1, 0, 5, 0xffff, nop, NULL,
				       &tx), 0);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = MLID;
	ah.has_grh = true;
	mgid_make(&ah.dgid, 1);
	assert_int_equal(imc_qp_send(tx, &ah, IMC_MCAST_QPN, 5, &x, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	{
		struct imc_port_counters pc;

		assert_int_equal(imc_fabric_port_counters(w.f, leaf2, 3, &pc),
				 0);
		assert_int_equal(pc.drops[IMC_DROP_NO_MFT], 1);
	}

	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, NULL, NULL, 0),
			 0);
	assert_int_equal(imc_fabric_mft_get(w.f, leaf1, MLID, &m), 0);
	assert_true(m.bits[0] == 0);
	/* Bad members. */
	nodes[0] = leaf1;
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     1), -EINVAL);
	nodes[0] = 0;
	ports[0] = 2;
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     1), -EINVAL);
	ports[0] = 1;
	assert_int_equal(imc_fabric_mft_program_tree(w.f, 0x20, nodes, ports,
						     1), -EINVAL);
	/* A member whose cable is down is not reached. */
	assert_int_equal(imc_fabric_link_set(w.f, 1, 1, false), 0);
	nodes[1] = 1;
	nodes[2] = 5;
	assert_int_equal(imc_fabric_mft_program_tree(w.f, MLID, nodes, ports,
						     3), 2);
	imc_qp_destroy(tx);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_two_levels),
		cmocka_unit_test(test_tree_three_levels),
		cmocka_unit_test(test_tree_one_switch),
		cmocka_unit_test(test_attachments),
		cmocka_unit_test(test_mft_entries),
		cmocka_unit_test(test_tree_shrinks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
