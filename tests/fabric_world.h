/* A topology, a virtual loop and a fabric on them, for the fabric tests.
 * Include after <cmocka.h>.
 *
 *   world_up(w, spec, cfg)      generate spec, create, bring up, settle
 *   world_create(w, cfg, start) for w->t made by hand (or generated with
 *                               world_topo()): loop from start, fabric,
 *                               not brought up (watch ports first...)
 *   world_bring_up(w)           bring up and run the loop until idle
 *   world_down(w)               destroy all; the loop must hold nothing
 * A test that needs more keeps a struct world inside its own. */
#ifndef IMC_TESTS_FABRIC_WORLD_H
#define IMC_TESTS_FABRIC_WORLD_H

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/topo.h"

struct world {
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	uint32_t nhcas;
};

static inline void world_topo(struct world *w, const char *spec)
{
	char err[256];

	err[0] = '\0';
	if (imc_topo_generate(spec, &w->t, err, sizeof(err)) != 0)
		fail_msg("topology '%s': %s", spec, err);
}

static inline void world_create(struct world *w,
				const struct imc_fabric_config *cfg,
				imc_time_t start)
{
	struct imc_fabric_config def;

	if (!cfg) {
		imc_fabric_config_default(&def);
		cfg = &def;
	}
	imc_topo_counts(w->t, &w->nhcas, NULL, NULL);
	assert_int_equal(imc_loop_create_virtual(start, &w->loop), 0);
	assert_int_equal(imc_fabric_create(w->t, w->loop, cfg, &w->f), 0);
}

static inline void world_bring_up(struct world *w)
{
	assert_int_equal(imc_fabric_bring_up(w->f), 0);
	assert_int_equal(imc_loop_run(w->loop), 0);
}

static inline void world_up(struct world *w, const char *spec,
			    const struct imc_fabric_config *cfg)
{
	world_topo(w, spec);
	world_create(w, cfg, 0);
	world_bring_up(w);
}

static inline void world_down(struct world *w)
{
	imc_fabric_destroy(w->f);
	assert_int_equal(imc_loop_destroy(w->loop), 0);
	imc_topo_destroy(w->t);
}

#endif
