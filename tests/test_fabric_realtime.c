/* The same fabric on a real-time loop: bring-up events and datagrams
 * between two HCAs arrive against the wall clock, no sooner than the
 * path's latency after they were sent. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"

#define N 200

struct rx {
	unsigned n;
	struct imc_loop *loop;
	imc_time_t sent_at[N];
	imc_time_t min_delay;
	bool in_order;
};

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct rx *x = ctx;
	uint32_t seq;
	imc_time_t d;

	(void)qp;
	assert_int_equal(r->len, 4);
	memcpy(&seq, r->data, 4);
	assert_true(seq < N);
	if (seq != x->n)
		x->in_order = false;
	d = imc_loop_now(x->loop) - x->sent_at[seq];
	if (d < x->min_delay)
		x->min_delay = d;
	x->n++;
}

struct evw {
	struct imc_port_watch w;
	unsigned active;
};

static void on_event(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct evw *e = imc_container_of(w, struct evw, w);

	if (ev == IMC_PORT_EV_ACTIVE)
		e->active++;
}

static void test_realtime(void **state)
{
	struct imc_fabric_config c;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_qp *tx, *rq;
	struct imc_port_attr a;
	struct rx x = { .in_order = true, .min_delay = IMC_TIME_MAX };
	struct evw ev = { .active = 0 };
	struct imc_fabric_totals tot;
	struct imc_ah ah;

	(void)state;
	assert_int_equal(imc_topo_generate("switch:hosts=2", &t, NULL, 0), 0);
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	assert_false(imc_loop_is_virtual(loop));
	imc_fabric_config_default(&c);
	c.link.latency = 20000;   /* 20 us a cable */
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), 0);
	assert_int_equal(imc_fabric_port_watch(f, 1, 1, &ev.w, on_event), 0);
	assert_int_equal(imc_fabric_bring_up(f), 0);
	assert_int_equal(ev.active, 0);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(ev.active, 1);

	x.loop = loop;
	assert_int_equal(imc_qp_create(f, 0, 1, 0, 0x42, 0xffff, on_recv, NULL,
				       &tx), 0);
	assert_int_equal(imc_qp_create(f, 1, 1, 0, 0x42, 0xffff, on_recv, &x,
				       &rq), 0);
	assert_int_equal(imc_fabric_port_attr(f, 1, 1, &a), 0);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = a.lid;
	for (uint32_t i = 0; i < N; i++) {
		x.sent_at[i] = imc_loop_now(loop);
		assert_int_equal(imc_qp_send(tx, &ah, 2, 0x42, &i, 4), 0);
	}
	assert_int_equal(x.n, 0);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(x.n, N);
	assert_true(x.in_order);
	/* Two cables of 20 us each at least. */
	assert_true(x.min_delay >= 40000);
	imc_fabric_totals(f, &tot);
	assert_int_equal(tot.delivered, N);
	assert_int_equal(tot.hops, 2 * N);

	imc_qp_destroy(tx);
	imc_qp_destroy(rq);
	imc_fabric_port_unwatch(f, &ev.w);
	imc_fabric_destroy(f);
	assert_int_equal(imc_loop_destroy(loop), 0);
	imc_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_realtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
