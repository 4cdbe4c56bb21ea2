/* A generated topology, a virtual loop and a fabric brought up on them,
 * for the fabric tests. Include after <cmocka.h>. */
#ifndef IMC_TESTS_FABRIC_WORLD_H
#define IMC_TESTS_FABRIC_WORLD_H

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/topo.h"

struct world {
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
};

static inline void world_up(struct world *w, const char *spec,
		     const struct imc_fabric_config *cfg)
{
	struct imc_fabric_config def;

	if (!cfg) {
		imc_fabric_config_default(&def);
		cfg = &def;
	}
	assert_int_equal(imc_topo_generate(spec, &w->t, NULL, 0), 0);
	assert_int_equal(imc_loop_create_virtual(0, &w->loop), 0);
	assert_int_equal(imc_fabric_create(w->t, w->loop, cfg, &w->f), 0);
	assert_int_equal(imc_fabric_bring_up(w->f), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
}

static inline void world_down(struct world *w)
{
	imc_fabric_destroy(w->f);
	assert_int_equal(imc_loop_destroy(w->loop), 0);
	imc_topo_destroy(w->t);
}

#endif
