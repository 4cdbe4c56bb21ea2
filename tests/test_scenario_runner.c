/* What the runner gives the plugins' run halves (scenario/runner.h): the
 * per-port table (a slot per node:port, ports 0..nports, in topology
 * order; the owner's free function on each slot set, in slot order), the
 * port names of snapshots and
 * the create request of a group (o15-0.2.3 components, the scenario's
 * Q_Key and the default P_Key unless given). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"
#include "ibmcast/scenario.h"
#include "ibmcast/topo.h"
#include "scenario/runner.h"

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)

/* A switch of 4 ports and two HCAs of 1 and 2 ports: 5 + 2 + 3 slots. */
static struct imc_topo *topo3(void)
{
	struct imc_topo *t;
	uint32_t idx;

	assert_int_equal(imc_topo_create(&t), 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_SWITCH, 4, "S", 0x10,
					   &idx), 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, "A", 0x20,
					   &idx), 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 2, "B", 0x30,
					   &idx), 0);
	return t;
}

static unsigned freed[16], nfreed;

static void note_free(void *data)
{
	freed[nfreed++] = *(unsigned *)data;
	free(data);
}

static void test_ports_slots(void **state)
{
	struct imc_topo *t = topo3();
	struct scn_ports p;
	unsigned *v;
	char *name;

	(void)state;
	assert_int_equal(scn_ports_init(&p, t), 0);
	assert_int_equal(p.n, 10);
	assert_int_equal(scn_ports_idx(&p, 0, 0), 0);
	assert_int_equal(scn_ports_idx(&p, 0, 4), 4);
	assert_int_equal(scn_ports_idx(&p, 1, 1), 6);
	assert_int_equal(scn_ports_idx(&p, 2, 0), 7);
	assert_int_equal(scn_ports_idx(&p, 2, 2), 9);
	for (uint32_t i = 0; i < p.n; i++)
		assert_null(p.slot[i]);
	assert_ptr_equal(scn_ports_at(&p, 2, 1), &p.slot[8]);
	/* Set out of order; freed in slot order. */
	v = malloc(sizeof(*v));
	*v = 9;
	*scn_ports_at(&p, 2, 2) = v;
	v = malloc(sizeof(*v));
	*v = 6;
	*scn_ports_at(&p, 1, 1) = v;
	v = malloc(sizeof(*v));
	*v = 0;
	*scn_ports_at(&p, 0, 0) = v;
	nfreed = 0;
	scn_ports_fini(&p, note_free);
	assert_int_equal(nfreed, 3);
	assert_int_equal(freed[0], 0);
	assert_int_equal(freed[1], 6);
	assert_int_equal(freed[2], 9);
	assert_int_equal(p.n, 0);
	assert_null(p.slot);
	assert_null(p.base);
	/* An empty table finishes again, and without a free function. */
	scn_ports_fini(&p, note_free);
	assert_int_equal(nfreed, 3);
	assert_int_equal(scn_ports_init(&p, t), 0);
	scn_ports_fini(&p, NULL);
	name = scn_port_name(t, 2, 2);
	assert_string_equal(name, "B:2");
	free(name);
	imc_topo_destroy(t);
}

static void test_ports_empty_topo(void **state)
{
	struct imc_topo *t;
	struct scn_ports p;

	(void)state;
	assert_int_equal(imc_topo_create(&t), 0);
	assert_int_equal(scn_ports_init(&p, t), 0);
	assert_int_equal(p.n, 0);
	assert_non_null(p.slot);
	scn_ports_fini(&p, note_free);
	imc_topo_destroy(t);
}

static void test_create_defaults(void **state)
{
	const uint64_t create = CM(QKEY) | CM(TCLASS) | CM(PKEY) |
				CM(FLOW_LABEL) | CM(SL);
	struct imc_mcmr rec;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	assert_true(scn_mcmr_create(&rec, CM(MGID)) == (CM(MGID) | create));
	assert_int_equal(rec.qkey, IMC_SCN_QKEY);
	assert_int_equal(rec.pkey, IMC_PKEY_DEFAULT);

	/* Given components stay as given. */
	memset(&rec, 0, sizeof(rec));
	rec.qkey = 0x77;
	rec.pkey = 0x8001;
	rec.sl = 3;
	assert_true(scn_mcmr_create(&rec, CM(QKEY) | CM(PKEY) | CM(MTU)) ==
		    (create | CM(MTU)));
	assert_int_equal(rec.qkey, 0x77);
	assert_int_equal(rec.pkey, 0x8001);
	assert_int_equal(rec.sl, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ports_slots),
		cmocka_unit_test(test_ports_empty_topo),
		cmocka_unit_test(test_create_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
