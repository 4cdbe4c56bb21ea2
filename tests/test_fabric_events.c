/* Port events: each SM-side change reaches the watches of the right ports
 * exactly once, from the loop and never inside the call; unwatch stops
 * them, also from inside a callback. */
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

#define NH 4   /* HCAs 0..3 on one switch, node 4 */

struct watcher {
	struct imc_port_watch w;
	unsigned n[IMC_PORT_EV_PKEY_CHANGE + 1];
	unsigned total;
	enum imc_port_event last;
	struct imc_fabric *f;
	struct watcher *victim;     /* unwatched by this one's callback */
	bool unwatch_self;
};

static void on_event(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct watcher *x = imc_container_of(w, struct watcher, w);

	x->n[ev]++;
	x->total++;
	x->last = ev;
	if (x->victim)
		imc_fabric_port_unwatch(x->f, &x->victim->w);
	if (x->unwatch_self)
		imc_fabric_port_unwatch(x->f, w);
}

struct ev_world {
	struct world base;
	struct watcher wt[NH];
};

/* Watches on every HCA port, registered before bring-up. */
static void ev_up(struct ev_world *w)
{
	world_topo(&w->base, "switch:hosts=4");
	world_create(&w->base, NULL, 0);
	memset(w->wt, 0, sizeof(w->wt));
	for (uint32_t i = 0; i < NH; i++) {
		w->wt[i].f = w->base.f;
		assert_int_equal(imc_fabric_port_watch(w->base.f, i, 1, &w->wt[i].w,
						       on_event), 0);
	}
	assert_int_equal(imc_fabric_bring_up(w->base.f), 0);
	/* No event inside the call. */
	for (uint32_t i = 0; i < NH; i++)
		assert_int_equal(w->wt[i].total, 0);
	assert_int_equal(imc_loop_run(w->base.loop), 0);
	for (uint32_t i = 0; i < NH; i++) {
		assert_int_equal(w->wt[i].total, 1);
		assert_int_equal(w->wt[i].n[IMC_PORT_EV_ACTIVE], 1);
		memset(w->wt[i].n, 0, sizeof(w->wt[i].n));
		w->wt[i].total = 0;
	}
}

static void ev_down(struct ev_world *w)
{
	for (uint32_t i = 0; i < NH; i++)
		imc_fabric_port_unwatch(w->base.f, &w->wt[i].w);
	world_down(&w->base);
}

/* After the call: nothing yet; after the loop: ev once on the ports of
 * mask, nothing elsewhere. Counts are reset. */
static void expect(struct ev_world *w, enum imc_port_event ev, unsigned mask)
{
	for (uint32_t i = 0; i < NH; i++)
		assert_int_equal(w->wt[i].total, 0);
	assert_int_equal(imc_loop_run(w->base.loop), 0);
	for (uint32_t i = 0; i < NH; i++) {
		unsigned want = (mask >> i) & 1;

		assert_int_equal(w->wt[i].total, want);
		assert_int_equal(w->wt[i].n[ev], want);
		memset(w->wt[i].n, 0, sizeof(w->wt[i].n));
		w->wt[i].total = 0;
	}
}

static uint16_t lid_of(struct ev_world *w, uint32_t node)
{
	struct imc_port_attr a;

	assert_int_equal(imc_fabric_port_attr(w->base.f, node, 1, &a), 0);
	return a.lid;
}

static void count(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	if (ctx)
		(*(unsigned *)ctx)++;
}

static void test_sm_move(void **state)
{
	struct ev_world w;
	struct imc_port_attr a;
	uint32_t node;
	unsigned port;

	(void)state;
	ev_up(&w);
	assert_int_equal(imc_fabric_sm_move(w.base.f, 2, 1), 0);
	expect(&w, IMC_PORT_EV_SM_CHANGE, 0xf);
	for (uint32_t i = 0; i < NH; i++) {
		assert_int_equal(imc_fabric_port_attr(w.base.f, i, 1, &a), 0);
		assert_int_equal(a.sm_lid, lid_of(&w, 2));
	}
	assert_int_equal(imc_fabric_port_attr(w.base.f, 4, 1, &a), 0);
	assert_int_equal(a.sm_lid, lid_of(&w, 2));
	assert_int_equal(imc_fabric_sm_port(w.base.f, &node, &port), 0);
	assert_int_equal(node, 2);
	assert_int_equal(port, 1);
	/* To where it is: no change, no event. */
	assert_int_equal(imc_fabric_sm_move(w.base.f, 2, 1), 0);
	expect(&w, IMC_PORT_EV_SM_CHANGE, 0);
	/* Not an HCA port. */
	assert_int_equal(imc_fabric_sm_move(w.base.f, 4, 0), -EINVAL);
	assert_int_equal(imc_fabric_sm_move(w.base.f, 4, 1), -EINVAL);
	/* A port that is down does not hear it. */
	assert_int_equal(imc_fabric_link_set(w.base.f, 3, 1, false), 0);
	expect(&w, IMC_PORT_EV_DOWN, 0x8);
	assert_int_equal(imc_fabric_sm_move(w.base.f, 0, 1), 0);
	expect(&w, IMC_PORT_EV_SM_CHANGE, 0x7);
	ev_down(&w);
}

static void test_client_reregister(void **state)
{
	struct ev_world w;

	(void)state;
	ev_up(&w);
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 1, 1), 0);
	expect(&w, IMC_PORT_EV_CLIENT_REREGISTER, 0x2);
	assert_int_equal(imc_fabric_client_reregister(w.base.f, IMC_TOPO_NONE, 0),
			 0);
	expect(&w, IMC_PORT_EV_CLIENT_REREGISTER, 0xf);
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 4, 1), -EINVAL);
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 1, 2), -EINVAL);
	ev_down(&w);
}

static void test_lid_change(void **state)
{
	struct ev_world w;
	uint16_t taken, old;
	uint32_t node;
	unsigned port;

	(void)state;
	ev_up(&w);
	taken = lid_of(&w, 3);
	old = lid_of(&w, 1);
	assert_int_equal(imc_fabric_lid_change(w.base.f, 1, 1, taken), -EBUSY);
	assert_int_equal(imc_fabric_lid_change(w.base.f, 1, 1, 0xc000), -EINVAL);
	assert_int_equal(imc_fabric_lid_change(w.base.f, 1, 1, 0), -EINVAL);
	expect(&w, IMC_PORT_EV_LID_CHANGE, 0);
	assert_int_equal(imc_fabric_lid_change(w.base.f, 1, 1, 0x100), 0);
	expect(&w, IMC_PORT_EV_LID_CHANGE, 0x2);
	assert_int_equal(lid_of(&w, 1), 0x100);
	assert_int_equal(imc_fabric_port_by_lid(w.base.f, 0x100, &node, &port), 0);
	assert_int_equal(node, 1);
	/* Rerouted: a datagram to the new LID arrives; the old one has no
	 * route any more. */
	{
		struct imc_qp *tx, *rx;
		struct imc_ah ah;
		struct imc_fabric_totals tot;
		unsigned got = 0;
		uint32_t x = 1;

		assert_int_equal(imc_qp_create(w.base.f, 0, 1, 0, 1, 0xffff, count,
					       NULL, &tx), 0);
		assert_int_equal(imc_qp_create(w.base.f, 1, 1, 0, 1, 0xffff, count,
					       &got, &rx), 0);
		memset(&ah, 0, sizeof(ah));
		ah.dlid = 0x100;
		assert_int_equal(imc_qp_send(tx, &ah, 2, 1, &x, 4), 0);
		ah.dlid = old;
		assert_int_equal(imc_qp_send(tx, &ah, 2, 1, &x, 4), 0);
		assert_int_equal(imc_loop_run(w.base.loop), 0);
		assert_int_equal(got, 1);
		imc_fabric_totals(w.base.f, &tot);
		assert_int_equal(tot.drops[IMC_DROP_NO_ROUTE], 1);
		imc_qp_destroy(tx);
		imc_qp_destroy(rx);
	}
	/* The SM's own port: its LID is the SM LID, so every port hears
	 * SM_CHANGE as well. */
	assert_int_equal(imc_fabric_lid_change(w.base.f, 0, 1, 0x200), 0);
	assert_int_equal(imc_loop_run(w.base.loop), 0);
	assert_int_equal(w.wt[0].n[IMC_PORT_EV_LID_CHANGE], 1);
	for (uint32_t i = 0; i < NH; i++) {
		struct imc_port_attr a;

		assert_int_equal(w.wt[i].n[IMC_PORT_EV_SM_CHANGE], 1);
		assert_int_equal(w.wt[i].total, i == 0 ? 2 : 1);
		assert_int_equal(imc_fabric_port_attr(w.base.f, i, 1, &a), 0);
		assert_int_equal(a.sm_lid, 0x200);
	}
	ev_down(&w);
}

static void test_pkey_change(void **state)
{
	struct ev_world w;
	struct imc_port_attr a;
	const uint16_t tbl[3] = { 0xffff, 0x8001, 0x0002 };

	(void)state;
	ev_up(&w);
	assert_int_equal(imc_fabric_pkey_set(w.base.f, 2, 1, tbl, 3), 0);
	expect(&w, IMC_PORT_EV_PKEY_CHANGE, 0x4);
	assert_int_equal(imc_fabric_port_attr(w.base.f, 2, 1, &a), 0);
	assert_int_equal(a.npkeys, 3);
	assert_int_equal(a.pkeys[1], 0x8001);
	assert_int_equal(a.pkeys[2], 0x0002);
	assert_int_equal(imc_fabric_pkey_set(w.base.f, 2, 1, tbl, 33), -EINVAL);
	assert_int_equal(imc_fabric_pkey_set(w.base.f, 4, 1, tbl, 1), -EINVAL);
	expect(&w, IMC_PORT_EV_PKEY_CHANGE, 0);
	ev_down(&w);
}

static void test_unwatch(void **state)
{
	struct ev_world w;
	struct watcher extra[3];

	(void)state;
	ev_up(&w);
	/* Plain unwatch: no event, even one posted before. */
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 0, 1), 0);
	imc_fabric_port_unwatch(w.base.f, &w.wt[0].w);
	imc_fabric_port_unwatch(w.base.f, &w.wt[0].w);   /* twice is harmless */
	expect(&w, IMC_PORT_EV_CLIENT_REREGISTER, 0);

	/* Three more on port 1 (its first watch gone): the first unwatches
	 * the second from its callback, the third unwatches itself. */
	imc_fabric_port_unwatch(w.base.f, &w.wt[1].w);
	memset(extra, 0, sizeof(extra));
	for (int i = 0; i < 3; i++) {
		extra[i].f = w.base.f;
		assert_int_equal(imc_fabric_port_watch(w.base.f, 1, 1, &extra[i].w,
						       on_event), 0);
	}
	extra[0].victim = &extra[1];
	extra[2].unwatch_self = true;
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 1, 1), 0);
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 1, 1), 0);
	expect(&w, IMC_PORT_EV_CLIENT_REREGISTER, 0);
	assert_int_equal(extra[0].total, 2);
	assert_int_equal(extra[1].total, 0);
	assert_int_equal(extra[2].total, 1);
	imc_fabric_port_unwatch(w.base.f, &extra[0].w);
	ev_down(&w);
}

/* A watch hears only what is posted after it was registered, also when
 * it registers from inside the dispatch of an earlier event. */
struct late {
	struct watcher first;
	struct watcher second;
};

static void register_second(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct watcher *x = imc_container_of(w, struct watcher, w);
	struct late *l = imc_container_of(x, struct late, first);

	on_event(w, ev);
	if (x->total == 1)
		assert_int_equal(imc_fabric_port_watch(x->f, 2, 1,
						       &l->second.w, on_event),
				 0);
}

static void test_watch_later(void **state)
{
	struct ev_world w;
	struct late l;

	(void)state;
	ev_up(&w);
	memset(&l, 0, sizeof(l));
	l.first.f = w.base.f;
	l.second.f = w.base.f;
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 2, 1), 0);
	/* Registered after the post: does not hear it. */
	assert_int_equal(imc_fabric_port_watch(w.base.f, 2, 1, &l.first.w,
					       register_second), 0);
	assert_int_equal(imc_loop_run(w.base.loop), 0);
	assert_int_equal(l.first.total, 0);
	assert_int_equal(w.wt[2].total, 1);
	/* Two events queued; the second watch, registered while the first
	 * is dispatched, hears neither. */
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 2, 1), 0);
	assert_int_equal(imc_fabric_pkey_set(w.base.f, 2, 1, (uint16_t[]){ 0xffff },
					     1), 0);
	assert_int_equal(imc_loop_run(w.base.loop), 0);
	assert_int_equal(l.first.total, 2);
	assert_int_equal(l.first.last, IMC_PORT_EV_PKEY_CHANGE);
	assert_int_equal(l.second.total, 0);
	assert_int_equal(w.wt[2].total, 3);
	/* It hears the next one. */
	assert_int_equal(imc_fabric_client_reregister(w.base.f, 2, 1), 0);
	assert_int_equal(imc_loop_run(w.base.loop), 0);
	assert_int_equal(l.second.total, 1);
	assert_int_equal(l.second.last, IMC_PORT_EV_CLIENT_REREGISTER);
	imc_fabric_port_unwatch(w.base.f, &l.first.w);
	imc_fabric_port_unwatch(w.base.f, &l.second.w);
	ev_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sm_move),
		cmocka_unit_test(test_client_reregister),
		cmocka_unit_test(test_lid_change),
		cmocka_unit_test(test_pkey_change),
		cmocka_unit_test(test_unwatch),
		cmocka_unit_test(test_watch_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
