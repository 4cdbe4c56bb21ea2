/* The shared QP1 of a port (gsi.h): MADs go to the agents in the order
 * they were added until one takes them, and a response whose TID's high
 * word an agent claimed goes to that agent alone. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/gsi.h"
#include "ibmcast/mad.h"
#include "ibmcast/packet.h"
#include "util/bytes.h"

#include "fabric_world.h"

#define HIGH 0x494d4353u

struct rec_agent {
	struct imc_gsi_agent a;
	int rc;                  /* what recv returns */
	unsigned got;
	uint64_t last_tid;
};

static int agent_recv(struct imc_gsi_agent *a, const struct imc_ud_recv *r)
{
	struct rec_agent *x = imc_container_of(a, struct rec_agent, a);

	x->got++;
	x->last_tid = imc_get64(r->data + 8);
	return x->rc;
}

/* A MAD of method (0x81: GetResp, 0x06: Report) with tid, from node 0's
 * QP1 to node 1's. */
static void mad_to_1(struct world *w, struct imc_gsi *from, uint8_t method,
		     uint64_t tid)
{
	uint8_t mad[IMC_MAD_SIZE] = { 0 };
	struct imc_port_attr pa;

	mad[0] = 1;
	mad[1] = 3;
	mad[2] = 2;
	mad[3] = method;
	imc_put64(mad + 8, tid);
	assert_int_equal(imc_fabric_port_attr(w->f, 1, 1, &pa), 0);
	assert_int_equal(imc_gsi_send(from, pa.lid, mad, sizeof(mad)), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
}

static void test_tid_high_routing(void **state)
{
	struct world w;
	struct imc_gsi *g0, *g1, *dup = NULL;
	struct rec_agent plain = { .a.recv = agent_recv, .rc = -ESRCH };
	struct rec_agent taker = { .a.recv = agent_recv, .rc = 0 };
	struct rec_agent owner = { .a.recv = agent_recv, .a.tid_high = HIGH };
	struct imc_gsi_stats st;

	(void)state;
	world_up(&w, "switch:hosts=2", NULL);
	assert_int_equal(imc_gsi_create(w.f, 0, 1, &g0), 0);
	assert_int_equal(imc_gsi_create(w.f, 1, 1, &g1), 0);
	assert_int_equal(imc_gsi_create(w.f, 1, 1, &dup), -EBUSY);
	assert_null(dup);
	assert_int_equal(imc_qp_num(imc_gsi_qp(g1)), IMC_QP1);
	/* The claiming agent first: it still sees only its responses. */
	imc_gsi_add(g1, &owner.a);
	imc_gsi_add(g1, &plain.a);
	imc_gsi_add(g1, &taker.a);

	mad_to_1(&w, g0, 0x81, (uint64_t)HIGH << 32 | 7);
	assert_int_equal(owner.got, 1);
	assert_int_equal(owner.last_tid, (uint64_t)HIGH << 32 | 7);
	assert_int_equal(plain.got + taker.got, 0);

	/* Not a response: the TID is the sender's, offered to the rest. */
	mad_to_1(&w, g0, 0x06, (uint64_t)HIGH << 32 | 8);
	assert_int_equal(owner.got, 1);
	assert_int_equal(plain.got, 1);
	assert_int_equal(taker.got, 1);

	/* Responses with a high word nobody claimed, or none. */
	mad_to_1(&w, g0, 0x81, 0x1234ull << 32 | 9);
	mad_to_1(&w, g0, 0x81, 10);
	assert_int_equal(owner.got, 1);
	assert_int_equal(plain.got, 3);
	assert_int_equal(taker.got, 3);

	/* The owner passes: nobody else is asked. */
	owner.rc = -ESRCH;
	mad_to_1(&w, g0, 0x81, (uint64_t)HIGH << 32 | 11);
	assert_int_equal(owner.got, 2);
	assert_int_equal(plain.got + taker.got, 6);
	imc_gsi_get_stats(g1, &st);
	assert_int_equal(st.received, 5);
	assert_int_equal(st.unclaimed, 1);

	/* Removed, its responses go to the others like any. */
	imc_gsi_remove(&owner.a);
	mad_to_1(&w, g0, 0x81, (uint64_t)HIGH << 32 | 12);
	assert_int_equal(owner.got, 2);
	assert_int_equal(taker.got, 4);
	imc_gsi_destroy(g1);
	imc_gsi_destroy(g0);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tid_high_routing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
