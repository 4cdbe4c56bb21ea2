/* One join tracker per fabric port (mcast_fabric.h,
 * imc_mcast_fabric_set): made on first use, found again by node:port,
 * counted together, destroyed together. A virtual loop with the fabric's
 * SA: every count is exact. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcast_fabric.h"
#include "ipoib_world.h"

#define MS IMC_NSEC_PER_MSEC

struct counts {
	unsigned joined, events;
};

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	struct counts *c = arg;

	(void)m;
	c->events++;
	c->joined += ev->type == IMC_MCAST_EV_JOINED;
}

static uint32_t host(const struct iw *w, unsigned k)
{
	uint32_t n = iw_hca(w, k);

	return n == w->sm_node ? iw_hca(w, k + 4) : n;
}

static void test_set(void **state)
{
	struct imc_mcast_fabric_set *s;
	struct imc_mcast_fabric *a, *a2, *b;
	struct imc_mcast_fabric_totals t;
	struct imc_mcast_member *ma, *mb;
	struct imc_mcast_join_req req;
	struct counts c = { 0 };
	uint32_t na, nb;
	struct iw w;

	(void)state;
	assert_int_equal(iw_create(&w, "fat-tree:leaves=2,hosts=3,spines=1",
				   NULL, NULL), 0);
	na = host(&w, 0);
	nb = host(&w, 1);
	assert_int_equal(imc_mcast_fabric_set_create(w.f, &s), 0);
	assert_null(imc_mcast_fabric_set_find(s, na, 1));
	assert_int_equal(imc_mcast_fabric_set_slot(s, w.t->nnodes, 1),
			 -EINVAL);
	assert_int_equal(imc_mcast_fabric_set_slot(s, na,
			 w.t->node[na].nports + 1), -EINVAL);
	assert_int_equal(imc_mcast_fabric_set_get(s, na, 1, NULL, NULL, &a),
			 0);
	assert_int_equal(imc_mcast_fabric_set_get(s, na, 1, NULL, NULL, &a2),
			 0);
	assert_ptr_equal(a, a2);
	assert_ptr_equal(imc_mcast_fabric_set_find(s, na, 1), a);
	assert_ptr_equal(imc_mcast_fabric_set_at(s, (size_t)
			 imc_mcast_fabric_set_slot(s, na, 1)), a);
	assert_int_equal(imc_mcast_fabric_set_get(s, nb, 1, NULL, NULL, &b),
			 0);
	assert_ptr_not_equal(a, b);
	/* A switch port is no HCA port: no tracker. */
	for (uint32_t n = 0; n < w.t->nnodes; n++)
		if (w.t->node[n].type != IMC_NODE_HCA) {
			assert_int_equal(imc_mcast_fabric_set_get(s, n, 1,
				NULL, NULL, &a2), -EINVAL);
			assert_null(imc_mcast_fabric_set_find(s, n, 1));
			break;
		}

	memset(&req, 0, sizeof(req));
	assert_int_equal(imc_gid_parse("ff15:1234:5707::1", &req.rec.mgid), 0);
	req.rec.qkey = 0x1234;
	req.rec.pkey = 0xffff;
	req.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
			UMAD_SA_MCM_COMP_MASK_QKEY |
			UMAD_SA_MCM_COMP_MASK_TCLASS |
			UMAD_SA_MCM_COMP_MASK_PKEY |
			UMAD_SA_MCM_COMP_MASK_FLOW_LABEL |
			UMAD_SA_MCM_COMP_MASK_SL;
	req.join_state = IMC_JOIN_FULL;
	assert_int_equal(imc_mcast_join(imc_mcast_fabric_tracker(a), &req,
					on_member, &c, &ma), 0);
	assert_int_equal(imc_mcast_join(imc_mcast_fabric_tracker(b), &req,
					on_member, &c, &mb), 0);
	iw_run_for(&w, 50 * MS);
	assert_int_equal(c.joined, 2);
	imc_mcast_fabric_set_totals(s, &t);
	assert_int_equal(t.trackers, 2);
	assert_int_equal(t.members, 2);
	assert_int_equal(t.joined, 2);
	assert_int_equal(t.sa_sent, 2);   /* one Set each, answered */
	assert_int_equal(t.sa_resent, 0);
	assert_int_equal(t.timeouts, 0);
	assert_int_equal(t.errors, 0);

	/* Destroyed with its trackers: no callback afterwards. */
	imc_mcast_fabric_set_destroy(s);
	imc_mcast_fabric_set_destroy(NULL);
	iw_run_for(&w, 50 * MS);
	assert_int_equal(c.events, 2);
	assert_int_equal(iw_destroy(&w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
