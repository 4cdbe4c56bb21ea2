/* The fabric's unicast UD path: bring-up, port attributes, delivery
 * between every pair of HCAs of a fat tree with exact header fields and
 * arrival times, loopback, send errors, and QP lifecycle. */
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
#include "ibmcast/packet.h"
#include "fabric_world.h"

static uint16_t lid_of(struct world *w, uint32_t node)
{
	struct imc_port_attr a;

	assert_int_equal(imc_fabric_port_attr(w->f, node, 1, &a), 0);
	return a.lid;
}

struct rx {
	unsigned n;
	imc_time_t at;
	struct imc_ud_recv r;
	uint8_t data[4096];
	struct imc_loop *loop;
};

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct rx *x = ctx;

	(void)qp;
	x->n++;
	x->at = imc_loop_now(x->loop);
	x->r = *r;
	memcpy(x->data, r->data, r->len);
	x->r.data = x->data;
}

static void test_defaults_and_names(void **state)
{
	struct imc_fabric_config c;

	(void)state;
	imc_fabric_config_default(&c);
	assert_int_equal(c.seed, 1);
	assert_int_equal(c.link.latency, 100);
	assert_int_equal(c.mtu, IMC_MTU_2048);
	assert_int_equal(c.rate, 7);
	assert_int_equal(c.rq_depth, 512);
	assert_true(c.subnet_prefix == 0xfe80000000000000ull);
	assert_int_equal(c.sm_sweep_delay, 1000000);
	assert_int_equal(imc_mtu_bytes(IMC_MTU_256), 256);
	assert_int_equal(imc_mtu_bytes(IMC_MTU_4096), 4096);
	assert_int_equal(imc_mtu_bytes(0), 0);
	assert_int_equal(imc_mtu_bytes(6), 0);
	assert_string_equal(imc_port_state_str(IMC_PORT_ACTIVE), "ACTIVE");
	assert_string_equal(imc_port_event_str(IMC_PORT_EV_CLIENT_REREGISTER),
			    "client-reregister");
	assert_string_equal(imc_drop_str(IMC_DROP_RQ_FULL), "rq-full");
	assert_string_equal(imc_drop_str(IMC_DROP__COUNT), "?");
}

static void test_create_errors(void **state)
{
	struct imc_fabric_config c;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f = (struct imc_fabric *)&f;

	(void)state;
	assert_int_equal(imc_topo_generate("switch:hosts=2", &t, NULL, 0), 0);
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	imc_fabric_config_default(&c);
	c.mtu = 7;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	assert_null(f);
	imc_fabric_config_default(&c);
	c.link.loss = 1.5;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	imc_fabric_config_default(&c);
	c.link.dup = 0.0 / 0.0;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	imc_fabric_config_default(&c);
	c.rq_depth = 0;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	imc_fabric_config_default(&c);
	t->sm_node = IMC_TOPO_NONE;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	assert_int_equal(imc_loop_destroy(loop), 0);
	imc_topo_destroy(t);
}

static void test_bring_up(void **state)
{
	struct imc_fabric_config c;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_port_attr a;
	uint32_t node;
	unsigned port;
	struct imc_gid g;

	(void)state;
	assert_int_equal(imc_topo_generate("switch:hosts=3", &t, NULL, 0), 0);
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	imc_fabric_config_default(&c);
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), 0);
	/* Down until the SM's first sweep. */
	assert_int_equal(imc_fabric_port_attr(f, 1, 1, &a), 0);
	assert_int_equal(a.state, IMC_PORT_DOWN);
	assert_int_equal(a.lid, 0);
	assert_int_equal(imc_fabric_port_by_lid(f, 1, &node, &port), -ENOENT);
	assert_int_equal(imc_fabric_bring_up(f), 0);

	/* Breadth first from the SM port (HCA 0): LID 1 is the SM, then the
	 * switch (node 3), then the other HCAs in switch port order. */
	assert_int_equal(imc_fabric_port_attr(f, 0, 1, &a), 0);
	assert_int_equal(a.state, IMC_PORT_ACTIVE);
	assert_int_equal(a.lid, 1);
	assert_int_equal(a.sm_lid, 1);
	assert_true(a.guid == 0x0002c90300000003ull);  /* H-000001 port 1 */
	assert_int_equal(a.mtu, IMC_MTU_2048);
	assert_int_equal(a.rate, 7);
	assert_int_equal(a.npkeys, 1);
	assert_int_equal(a.pkeys[0], 0xffff);
	assert_int_equal(a.gid.raw[0], 0xfe);
	assert_int_equal(a.gid.raw[1], 0x80);
	assert_int_equal(a.gid.raw[8], 0x00);
	assert_int_equal(a.gid.raw[9], 0x02);
	assert_int_equal(a.gid.raw[10], 0xc9);
	assert_int_equal(a.gid.raw[11], 0x03);
	assert_int_equal(a.gid.raw[15], 0x03);
	g = a.gid;
	assert_int_equal(imc_fabric_port_by_gid(f, &g, &node, &port), 0);
	assert_int_equal(node, 0);
	assert_int_equal(port, 1);
	g.raw[0] = 0xfd;
	assert_int_equal(imc_fabric_port_by_gid(f, &g, &node, &port), -ENOENT);

	assert_int_equal(imc_fabric_port_attr(f, 3, 2, &a), 0);
	assert_int_equal(a.state, IMC_PORT_ACTIVE);
	assert_int_equal(a.lid, 2);   /* a switch port reports the switch's */
	assert_int_equal(imc_fabric_port_attr(f, 3, 3, &a), 0);
	assert_int_equal(a.lid, 2);
	assert_int_equal(imc_fabric_port_attr(f, 3, 5, &a), 0);
	assert_int_equal(a.state, IMC_PORT_DOWN);   /* not cabled */
	assert_int_equal(imc_fabric_port_attr(f, 3, 0, &a), 0);
	assert_int_equal(a.state, IMC_PORT_ACTIVE); /* management port */
	assert_int_equal(a.lid, 2);
	assert_int_equal(imc_fabric_port_attr(f, 1, 1, &a), 0);
	assert_int_equal(a.lid, 3);
	assert_int_equal(a.sm_lid, 1);
	assert_int_equal(imc_fabric_port_by_lid(f, 3, &node, &port), 0);
	assert_int_equal(node, 1);
	assert_int_equal(port, 1);
	/* A switch LID is no HCA port. */
	assert_int_equal(imc_fabric_port_by_lid(f, 2, &node, &port), -ENOENT);
	assert_int_equal(imc_fabric_port_attr(f, 0, 0, &a), -EINVAL);
	assert_int_equal(imc_fabric_port_attr(f, 0, 2, &a), -EINVAL);
	assert_int_equal(imc_fabric_port_attr(f, 99, 1, &a), -EINVAL);
	assert_int_equal(imc_fabric_sm_port(f, &node, &port), 0);
	assert_int_equal(node, 0);
	assert_int_equal(port, 1);

	imc_fabric_destroy(f);
	assert_int_equal(imc_loop_destroy(loop), 0);
	imc_topo_destroy(t);
}

/* Every ordered pair of the 6 HCAs of a 3-leaf fat tree, alternately with
 * and without a GRH; every field of the completion is checked, and the
 * arrival time: each cable costs serialization at 4x QDR (32 Gb/s data,
 * 250 ps a byte, rounded up) plus 100 ns. */
static void test_every_pair(void **state)
{
	struct world w;
	struct imc_qp *qp[6];
	struct rx rx[6];
	struct imc_port_attr attr[6];
	uint32_t hosts_per_leaf = 2;

	(void)state;
	world_up(&w, "fat-tree:leaves=3,hosts=2,spines=2", NULL);
	assert_int_equal(w.nhcas, 6);
	memset(rx, 0, sizeof(rx));
	for (uint32_t i = 0; i < 6; i++) {
		rx[i].loop = w.loop;
		assert_int_equal(imc_qp_create(w.f, i, 1, 0, 0x1234 + i,
					       0xffff, on_recv, &rx[i], &qp[i]),
				 0);
		assert_int_equal(imc_qp_num(qp[i]), 2);
		assert_int_equal(imc_fabric_port_attr(w.f, i, 1, &attr[i]), 0);
		assert_int_equal(attr[i].state, IMC_PORT_ACTIVE);
	}
	for (uint32_t i = 0; i < 6; i++) {
		for (uint32_t j = 0; j < 6; j++) {
			uint8_t msg[37];
			struct imc_ah ah;
			bool grh = (i + j) & 1;
			bool same_leaf = i / hosts_per_leaf == j / hosts_per_leaf;
			size_t wire = 8 + (grh ? 40 : 0) + 12 + 8 + 40 + 6;
			imc_time_t hop = (wire * 250 + 999) / 1000 + 100;
			imc_time_t t0 = imc_loop_now(w.loop);

			if (i == j)
				continue;
			for (size_t k = 0; k < sizeof(msg); k++)
				msg[k] = (uint8_t)(i * 31 + j * 7 + k);
			memset(&ah, 0, sizeof(ah));
			ah.dlid = attr[j].lid;
			ah.sl = (uint8_t)(j & 0xf);
			ah.has_grh = grh;
			ah.dgid = attr[j].gid;
			ah.flow_label = 0x12345 + i;
			ah.hop_limit = (uint8_t)(64 + j);
			ah.tclass = (uint8_t)(0x20 + i);
			for (uint32_t k = 0; k < 6; k++)
				rx[k].n = 0;
			assert_int_equal(imc_qp_send(qp[i], &ah, 2, 0x1234 + j,
						     msg, sizeof(msg)), 0);
			assert_int_equal(rx[j].n, 0);   /* from the loop only */
			assert_int_equal(imc_loop_run(w.loop), 0);
			assert_int_equal(rx[j].n, 1);
			assert_int_equal(rx[j].at - t0,
					 (same_leaf ? 2 : 4) * hop);
			assert_int_equal(rx[j].r.len, sizeof(msg));
			assert_memory_equal(rx[j].data, msg, sizeof(msg));
			assert_int_equal(rx[j].r.slid, attr[i].lid);
			assert_int_equal(rx[j].r.dlid, attr[j].lid);
			assert_int_equal(rx[j].r.src_qp, 2);
			assert_int_equal(rx[j].r.sl, j & 0xf);
			assert_int_equal(rx[j].r.pkey, 0xffff);
			assert_int_equal(rx[j].r.has_grh, grh);
			if (grh) {
				assert_memory_equal(&rx[j].r.sgid, &attr[i].gid,
						    16);
				assert_memory_equal(&rx[j].r.dgid, &attr[j].gid,
						    16);
				assert_int_equal(rx[j].r.flow_label,
						 0x12345 + i);
				assert_int_equal(rx[j].r.hop_limit, 64 + j);
				assert_int_equal(rx[j].r.tclass, 0x20 + i);
			} else {
				assert_int_equal(rx[j].r.flow_label, 0);
				assert_int_equal(rx[j].r.hop_limit, 0);
			}
			for (uint32_t k = 0; k < 6; k++)
				if (k != j)
					assert_int_equal(rx[k].n, 0);
		}
	}
	{
		struct imc_fabric_totals tot;
		struct imc_port_counters pc;

		imc_fabric_totals(w.f, &tot);
		assert_int_equal(tot.sent, 30);
		assert_int_equal(tot.delivered, 30);
		/* 6 pairs on the same leaf (2 cables), 24 across (4). */
		assert_int_equal(tot.hops, 6 * 2 + 24 * 4);
		for (int d = 0; d < IMC_DROP__COUNT; d++)
			assert_int_equal(tot.drops[d], 0);
		assert_int_equal(imc_fabric_port_counters(w.f, 0, 1, &pc), 0);
		assert_int_equal(pc.tx_packets, 5);
		assert_int_equal(pc.rx_packets, 5);
	}
	for (int i = 0; i < 6; i++)
		imc_qp_destroy(qp[i]);
	world_down(&w);
}

static void test_loopback_and_qpns(void **state)
{
	struct world w;
	struct imc_qp *a, *b, *c, *qp1;
	struct rx rx = { 0 };
	struct imc_ah ah;
	uint32_t payload = 0xdeadbeef;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	rx.loop = w.loop;
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 7, 0xffff, on_recv, &rx,
				       &a), 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 5, 7, 0xffff, on_recv, &rx,
				       &b), 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 5, 7, 0xffff, on_recv, &rx,
				       &c), -EBUSY);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 7, 0xffff, on_recv, &rx,
				       &c), 0);
	assert_int_equal(imc_qp_num(a), 2);
	assert_int_equal(imc_qp_num(b), 5);
	assert_int_equal(imc_qp_num(c), 3);
	/* QP1: its Q_Key is the GSI's whatever was asked. */
	assert_int_equal(imc_qp_create(w.f, 0, 1, 1, 7, 0xffff, on_recv, &rx,
				       &qp1), 0);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 1, 7, 0xffff, on_recv, &rx,
				       &c), -EBUSY);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 7, 0x8001, on_recv, &rx,
				       &c), -EINVAL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, IMC_MCAST_QPN, 7, 0xffff,
				       on_recv, &rx, &c), -EINVAL);
	assert_int_equal(imc_qp_create(w.f, 2, 1, 0, 7, 0xffff, on_recv, &rx,
				       &c), -EINVAL);   /* a switch */

	/* To our own LID: delivered at once, through the loop. */
	memset(&ah, 0, sizeof(ah));
	ah.dlid = lid_of(&w, 0);
	assert_int_equal(imc_qp_send(a, &ah, 1, IMC_QP1_QKEY, &payload, 4), 0);
	assert_int_equal(rx.n, 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(rx.n, 1);
	assert_int_equal(rx.at, 0);
	assert_int_equal(rx.r.src_qp, 2);
	assert_int_equal(rx.r.slid, ah.dlid);
	/* QP1 takes only the GSI Q_Key. */
	assert_int_equal(imc_qp_send(a, &ah, 1, 7, &payload, 4), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(rx.n, 1);
	{
		struct imc_port_counters pc;

		assert_int_equal(imc_fabric_port_counters(w.f, 0, 1, &pc), 0);
		assert_int_equal(pc.drops[IMC_DROP_QKEY], 1);
		/* No cable crossed. */
		assert_int_equal(pc.tx_packets, 0);
	}
	imc_qp_destroy(a);
	imc_qp_destroy(b);
	imc_qp_destroy(qp1);
	world_down(&w);
}

static void test_send_errors(void **state)
{
	struct world w;
	struct imc_qp *a;
	struct rx rx = { 0 };
	struct imc_ah ah;
	static uint8_t big[4097];
	struct imc_port_counters pc;
	struct imc_fabric_totals tot;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 7, 0xffff, on_recv, &rx,
				       &a), 0);
	memset(&ah, 0, sizeof(ah));
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 4), -EINVAL); /* LID 0 */
	ah.dlid = 0xffff;
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 4), -EINVAL);
	ah.dlid = 0xc001;   /* multicast without GRH */
	assert_int_equal(imc_qp_send(a, &ah, IMC_MCAST_QPN, 7, big, 4),
			 -EINVAL);
	ah.has_grh = true;
	ah.dgid.raw[0] = 0xff;
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 4), -EINVAL);
	ah.dlid = lid_of(&w, 1);
	assert_int_equal(imc_qp_send(a, &ah, IMC_MCAST_QPN, 7, big, 4),
			 -EINVAL);
	ah.flow_label = 0x100000;
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 4), -EINVAL);
	ah.flow_label = 0;
	ah.sl = 16;
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 4), -EINVAL);
	ah.sl = 0;
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, NULL, 4), -EINVAL);
	/* Above the port's MTU: refused and counted at the sender. */
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 2049), -EMSGSIZE);
	assert_int_equal(imc_fabric_port_counters(w.f, 0, 1, &pc), 0);
	assert_int_equal(pc.drops[IMC_DROP_MTU], 1);
	assert_int_equal(pc.tx_packets, 0);
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 2048), 0);
	imc_fabric_totals(w.f, &tot);
	assert_int_equal(tot.sent, 1);
	assert_int_equal(tot.drops[IMC_DROP_MTU], 1);
	/* Not ACTIVE: the cable is down. */
	assert_int_equal(imc_fabric_link_set(w.f, 0, 1, false), 0);
	assert_int_equal(imc_qp_send(a, &ah, 2, 7, big, 4), -ENETDOWN);
	imc_qp_destroy(a);
	world_down(&w);
}

/* ---- QP lifecycle ---- */

struct selfdestroy {
	struct imc_qp *qp;
	unsigned n;
};

static void destroy_self(struct imc_qp *qp, const struct imc_ud_recv *r,
			 void *ctx)
{
	struct selfdestroy *s = ctx;

	(void)r;
	assert_ptr_equal(qp, s->qp);
	s->n++;
	imc_qp_destroy(qp);
	s->qp = NULL;
}

static void never(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	(void)ctx;
	fail_msg("receive callback after imc_qp_destroy");
}

static void test_destroy_in_flight(void **state)
{
	struct world w;
	struct imc_qp *tx, *rxqp;
	struct imc_ah ah;
	struct imc_fabric_totals tot;
	struct imc_port_counters pc;
	uint8_t msg[8] = { 1 };

	(void)state;
	world_up(&w, "fat-tree:leaves=2,hosts=1,spines=1", NULL);
	assert_int_equal(imc_qp_create(w.f, 0, 1, 0, 7, 0xffff, never, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 7, 0xffff, never, NULL,
				       &rxqp), 0);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = lid_of(&w, 1);
	imc_qp_set_recv_delay(rxqp, 1000);
	for (int i = 0; i < 10; i++)
		assert_int_equal(imc_qp_send(tx, &ah, 2, 7, msg, 8), 0);
	/* Datagram k arrives at 4 * 113 + 13 k: four have arrived and wait
	 * for their callbacks, six are in flight. */
	assert_int_equal(imc_loop_run_until(w.loop, 4 * 113 + 3 * 13), 0);
	imc_qp_destroy(rxqp);
	assert_int_equal(imc_loop_run(w.loop), 0);
	imc_fabric_totals(w.f, &tot);
	assert_int_equal(tot.sent, 10);
	assert_int_equal(tot.delivered, 0);
	assert_int_equal(tot.drops[IMC_DROP_NO_QP], 10);
	assert_int_equal(imc_fabric_port_counters(w.f, 1, 1, &pc), 0);
	assert_int_equal(pc.drops[IMC_DROP_NO_QP], 10);
	assert_int_equal(pc.rx_packets, 10);

	/* A callback that destroys its own QP with more queued behind. */
	{
		struct selfdestroy s = { 0 };

		assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 7, 0xffff,
					       destroy_self, &s, &s.qp), 0);
		imc_qp_set_recv_delay(s.qp, 1000);
		for (int i = 0; i < 5; i++)
			assert_int_equal(imc_qp_send(tx, &ah, imc_qp_num(s.qp),
						     7, msg, 8), 0);
		/* All five queued when the first callback destroys the QP. */
		assert_int_equal(imc_loop_run(w.loop), 0);
		assert_int_equal(s.n, 1);
		assert_null(s.qp);
		imc_fabric_totals(w.f, &tot);
		assert_int_equal(tot.delivered, 1);
		assert_int_equal(tot.drops[IMC_DROP_NO_QP], 14);
	}
	/* The fabric freed with datagrams in flight and queued. */
	assert_int_equal(imc_qp_create(w.f, 1, 1, 0, 7, 0xffff, never, NULL,
				       &rxqp), 0);
	imc_qp_set_recv_delay(rxqp, 10000);
	for (int i = 0; i < 20; i++)
		assert_int_equal(imc_qp_send(tx, &ah, imc_qp_num(rxqp), 7, msg,
					     8), 0);
	imc_loop_run_until(w.loop, imc_loop_now(w.loop) + 500);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_names),
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_bring_up),
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_loopback_and_qpns),
		cmocka_unit_test(test_send_errors),
		cmocka_unit_test(test_destroy_in_flight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
