/* Each delivery check of the fabric drops what it should, counted under
 * its reason at the port where the check failed, and nothing else is
 * delivered: P_Key (IBA 10.9.3), Q_Key (IBA 10.2.5) as the QP has it at
 * arrival, QPN, receive queue, MTU, DLID, routes. */
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

static uint16_t lid_of(struct world *w, uint32_t node, unsigned port)
{
	struct imc_port_attr a;

	assert_int_equal(imc_fabric_port_attr(w->f, node, port, &a), 0);
	return a.lid;
}

static void count(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	(*(unsigned *)ctx)++;
}

/* Exactly n drops in all, all of them for why at node:port. */
static void only_drops(struct world *w, uint32_t node, unsigned port,
		       enum imc_drop why, uint64_t n)
{
	struct imc_fabric_totals tot;
	struct imc_port_counters pc;

	imc_fabric_totals(w->f, &tot);
	assert_int_equal(imc_fabric_port_counters(w->f, node, port, &pc), 0);
	for (int d = 0; d < IMC_DROP__COUNT; d++) {
		assert_int_equal(tot.drops[d], d == (int)why ? n : 0);
		assert_int_equal(pc.drops[d], d == (int)why ? n : 0);
	}
}

static void send_one(struct world *w, struct imc_qp *qp, uint16_t dlid,
		     uint32_t qpn, uint32_t qkey, size_t len)
{
	static uint8_t buf[4096];
	struct imc_ah ah;

	memset(&ah, 0, sizeof(ah));
	ah.dlid = dlid;
	assert_int_equal(imc_qp_send(qp, &ah, qpn, qkey, buf, len), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
}

/* Two HCAs on one switch: node 0 and 1, the switch is node 2. */
static void test_pkey(void **state)
{
	static const uint16_t full3 = 0x8003, limited3 = 0x0003;
	struct world w;
	struct imc_qp *tx, *rx, *tx_lim, *rx_lim;
	unsigned got = 0, got_lim = 0;
	uint16_t tbl[2];

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	/* The receiver lacks the sender's P_Key. */
	tbl[0] = 0x8002;
	assert_int_equal(imc_fabric_pkey_set(w.f, 1, 1, tbl, 1), 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 9, 0xffff, count, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 9, 0x8002, count, &got,
				       &rx), 0);
	send_one(&w, tx, lid_of(&w, 1, 1), 2, 9, 16);
	assert_int_equal(got, 0);
	only_drops(&w, 1, 1, IMC_DROP_PKEY, 1);

	/* Two limited members of partition 3 cannot talk; a limited and a
	 * full member can, both ways. */
	tbl[0] = 0xffff;
	tbl[1] = limited3;
	assert_int_equal(imc_fabric_pkey_set(w.f, 0, 1, tbl, 2), 0);
	tbl[0] = limited3;
	assert_int_equal(imc_fabric_pkey_set(w.f, 1, 1, tbl, 1), 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 9, limited3, count, NULL,
				       &tx_lim), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 9, limited3, count,
				       &got_lim, &rx_lim), 0);
	send_one(&w, tx_lim, lid_of(&w, 1, 1), imc_qp_num(rx_lim), 9, 16);
	assert_int_equal(got_lim, 0);
	only_drops(&w, 1, 1, IMC_DROP_PKEY, 2);

	tbl[0] = full3;
	assert_int_equal(imc_fabric_pkey_set(w.f, 1, 1, tbl, 1), 0);
	imc_qp_destroy(rx_lim);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 9, full3, count,
				       &got_lim, &rx_lim), 0);
	send_one(&w, tx_lim, lid_of(&w, 1, 1), imc_qp_num(rx_lim), 9, 16);
	assert_int_equal(got_lim, 1);
	only_drops(&w, 1, 1, IMC_DROP_PKEY, 2);

	/* The port's table has partition 3, but the QP is in another
	 * partition: the QP's own P_Key decides. */
	tbl[0] = full3;
	tbl[1] = 0xffff;
	assert_int_equal(imc_fabric_pkey_set(w.f, 1, 1, tbl, 2), 0);
	imc_qp_destroy(rx);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 9, 0xffff, count, &got,
				       &rx), 0);
	send_one(&w, tx_lim, lid_of(&w, 1, 1), imc_qp_num(rx), 9, 16);
	assert_int_equal(got, 0);
	only_drops(&w, 1, 1, IMC_DROP_PKEY, 3);
	/* QP1 takes any P_Key of its port's table. */
	{
		struct imc_qp *gsi;
		unsigned got_gsi = 0;

		assert_int_equal(imc_qp_create(w.f, 1, 1, 1, 0, 0xffff, count,
					       &got_gsi, &gsi), 0);
		send_one(&w, tx_lim, lid_of(&w, 1, 1), 1, IMC_QP1_QKEY, 16);
		assert_int_equal(got_gsi, 1);
		imc_qp_destroy(gsi);
	}
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	imc_qp_destroy(tx_lim);
	imc_qp_destroy(rx_lim);
	world_down(&w);
}

static void test_qkey_and_qpn(void **state)
{
	struct world w;
	struct imc_qp *tx, *rx;
	unsigned got = 0;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, count, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 0x11111111, 0xffff,
				       count, &got, &rx), 0);
	send_one(&w, tx, lid_of(&w, 1, 1), 2, 0x11111112, 16);
	assert_int_equal(got, 0);
	only_drops(&w, 1, 1, IMC_DROP_QKEY, 1);
	send_one(&w, tx, lid_of(&w, 1, 1), 99, 0x11111111, 16);
	assert_int_equal(got, 0);
	{
		struct imc_port_counters pc;

		assert_int_equal(imc_fabric_port_counters(w.f, 1, 1, &pc), 0);
		assert_int_equal(pc.drops[IMC_DROP_NO_QP], 1);
		assert_int_equal(pc.drops[IMC_DROP_QKEY], 1);
		assert_int_equal(pc.rx_packets, 2);
	}
	send_one(&w, tx, lid_of(&w, 1, 1), 2, 0x11111111, 16);
	assert_int_equal(got, 1);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

/* Modify QP's Q_Key: the check at arrival uses the Q_Key the QP has
 * then. A datagram queued before the change is delivered; later ones
 * must carry the new Q_Key. QP1's Q_Key cannot change (IBA 13.5). */
static void test_qkey_modify(void **state)
{
	struct world w;
	struct imc_qp *tx, *rx, *qp1;
	unsigned got = 0;
	uint16_t dlid;
	struct imc_ah ah;
	uint8_t buf[16] = { 0 };

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	dlid = lid_of(&w, 1, 1);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, count, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 0x0B1B, 0xffff, count,
				       &got, &rx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, IMC_QP1, IMC_QP1_QKEY,
				       0xffff, count, NULL, &qp1), 0);
	assert_int_equal(imc_qp_qkey(rx), 0x0B1B);
	assert_int_equal(imc_qp_set_qkey(qp1, 0x1234), -EINVAL);
	assert_int_equal(imc_qp_qkey(qp1), IMC_QP1_QKEY);

	/* Received under the old Q_Key, delivered after the change. */
	imc_qp_set_recv_delay(rx, 1000);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = dlid;
	assert_int_equal(imc_qp_send(tx, &ah, 2, 0x0B1B, buf, sizeof(buf)),
			 0);
	assert_int_equal(imc_loop_run_until(w.loop, 900), 0);
	assert_int_equal(got, 0);
	assert_int_equal(imc_qp_set_qkey(rx, 0x12345678), 0);
	assert_int_equal(imc_qp_qkey(rx), 0x12345678);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(got, 1);

	send_one(&w, tx, dlid, 2, 0x0B1B, 16);
	assert_int_equal(got, 1);
	only_drops(&w, 1, 1, IMC_DROP_QKEY, 1);
	send_one(&w, tx, dlid, 2, 0x12345678, 16);
	assert_int_equal(got, 2);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	imc_qp_destroy(qp1);
	world_down(&w);
}

static void test_rq_overflow(void **state)
{
	struct imc_fabric_config c;
	struct world w;
	struct imc_qp *tx, *rx;
	struct imc_ah ah;
	unsigned got = 0;
	uint8_t msg[8] = { 0 };

	(void)state;
	imc_fabric_config_default(&c);
	c.rq_depth = 4;
	world_up(&w, "switch:hosts=2", &c);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, count, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 1, 0xffff, count, &got,
				       &rx), 0);
	/* The consumer runs 10 us after the first arrival: the queue holds
	 * four, the next two overflow. */
	imc_qp_set_recv_delay(rx, 10000);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = lid_of(&w, 1, 1);
	for (int i = 0; i < 6; i++)
		assert_int_equal(imc_qp_send(tx, &ah, 2, 1, msg, 8), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(got, 4);
	only_drops(&w, 1, 1, IMC_DROP_RQ_FULL, 2);
	/* Drained: room again. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(imc_qp_send(tx, &ah, 2, 1, msg, 8), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(got, 8);
	only_drops(&w, 1, 1, IMC_DROP_RQ_FULL, 2);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

/* Leaf 0 (node 2) has HCA 0 on port 1 and the spine on port 2; leaf 1
 * (node 3) has HCA 1 on port 1. */
static void test_mtu(void **state)
{
	struct world w;
	struct imc_qp *tx, *rx;
	unsigned got = 0;

	(void)state;
	world_up(&w, "fat-tree:leaves=2,hosts=1,spines=1", NULL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, count, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 1, 0xffff, count, &got,
				       &rx), 0);
	/* The receiving port is smaller than the sender's. */
	assert_int_equal(imc_fabric_port_mtu_set(w.f, 1, 1, IMC_MTU_1024), 0);
	send_one(&w, tx, lid_of(&w, 1, 1), 2, 1, 1025);
	assert_int_equal(got, 0);
	only_drops(&w, 1, 1, IMC_DROP_MTU, 1);
	send_one(&w, tx, lid_of(&w, 1, 1), 2, 1, 1024);
	assert_int_equal(got, 1);
	/* A switch port on the way is smaller still: dropped where it would
	 * leave leaf 0 for the spine. */
	assert_int_equal(imc_fabric_port_mtu_set(w.f, 2, 2, IMC_MTU_256), 0);
	send_one(&w, tx, lid_of(&w, 1, 1), 2, 1, 257);
	assert_int_equal(got, 1);
	{
		struct imc_port_counters pc;

		assert_int_equal(imc_fabric_port_counters(w.f, 2, 2, &pc), 0);
		assert_int_equal(pc.drops[IMC_DROP_MTU], 1);
		assert_int_equal(pc.tx_packets, 2);
	}
	assert_int_equal(imc_fabric_port_mtu_set(w.f, 2, 2, 0), -EINVAL);
	assert_int_equal(imc_fabric_port_mtu_set(w.f, 2, 0, IMC_MTU_256),
			 -EINVAL);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

static void test_routes(void **state)
{
	struct world w;
	struct imc_qp *tx;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 1, 0xffff, count, NULL,
				       &tx), 0);
	/* A LID nobody holds: the switch (node 2) has no route, counted at
	 * the port it came in by. */
	send_one(&w, tx, 0x300, 2, 1, 16);
	only_drops(&w, 2, 1, IMC_DROP_NO_ROUTE, 1);
	imc_qp_destroy(tx);
	world_down(&w);
}

/* Two HCAs cabled back to back: whatever one sends reaches the other,
 * which drops unicast for another LID. */
static void test_dlid(void **state)
{
	struct world w;
	struct imc_qp *tx, *rx;
	uint32_t a, b;
	unsigned got = 0;

	(void)state;
	assert_int_equal(imc_topo_create(&w.t), 0);
	assert_int_equal(imc_topo_add_node(w.t, IMC_NODE_HCA, 1, "a", 0, &a),
			 0);
	assert_int_equal(imc_topo_add_node(w.t, IMC_NODE_HCA, 1, "b", 0, &b),
			 0);
	assert_int_equal(imc_topo_connect(w.t, a, 1, b, 1, 4), 0);
	w.t->sm_node = a;
	w.t->sm_port = 1;
	world_create(&w, NULL, 0);
	world_bring_up(&w);
	assert_int_equal(lid_of(&w, a, 1), 1);
	assert_int_equal(lid_of(&w, b, 1), 2);
	assert_int_equal(imc_qp_create(w.f, a, 1, 0, 1, 0xffff, count, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, b, 1, 0, 1, 0xffff, count, &got,
				       &rx), 0);
	send_one(&w, tx, 2, 2, 1, 16);
	assert_int_equal(got, 1);
	send_one(&w, tx, 7, 2, 1, 16);
	assert_int_equal(got, 1);
	only_drops(&w, b, 1, IMC_DROP_DLID, 1);
	imc_qp_destroy(tx);
	imc_qp_destroy(rx);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pkey),
		cmocka_unit_test(test_qkey_and_qpn),
		cmocka_unit_test(test_qkey_modify),
		cmocka_unit_test(test_rq_overflow),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_dlid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
