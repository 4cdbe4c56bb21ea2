/* A scenario on the served fabric with OpenSM as its SM and SA (the
 * `opensm` setting, served.c; docs/opensm-fabric.md). */
#ifndef IBMCAST_SCN_SERVED_H
#define IBMCAST_SCN_SERVED_H

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/scenario.h"

struct scn_served_cfg;
struct scn_served;

/* Adds the `opensm` setting to l. */
int scn_lang_add_served(struct imc_scn_lang *l);

/* The scenario's opensm line, or NULL: the run then has no served
 * fabric. */
const struct scn_served_cfg *scn_served_cfg(const struct imc_scenario *s);

/* Serves f (ibsim's protocol, src/simserve) on loop (real time), starts
 * OpenSM on it through umad2sim and runs the loop until OpenSM reported
 * SUBNET UP and every cabled port is ACTIVE, at most wait (0: the line's
 * wait=, else 60 s). Returns 0, -ENOPKG (opensm or umad2sim missing),
 * -ETIMEDOUT, -ECHILD (OpenSM exited) or another negative errno, with
 * the reason in msg. */
int scn_served_start(const struct scn_served_cfg *cfg, struct imc_fabric *f,
		     struct imc_loop *loop, imc_time_t wait,
		     struct scn_served **out, char *msg, size_t msglen);

/* Keeps serving for the line's hold= after the run's end (a line on
 * stderr says how to reach the fabric), so that saquery and the other
 * diagnostics can read OpenSM's state; NULL or hold 0: returns at once. */
void scn_served_hold(struct scn_served *sv);

/* The run's served fabric, or NULL (run.c). */
struct scn_served *scn_ctx_served(struct imc_scn_ctx *c);

/* Stops OpenSM (SIGTERM, SIGKILL after 2 s), stops serving and removes
 * the private directory. NULL is a no-op. Before f is destroyed. */
void scn_served_stop(struct scn_served *sv);

#endif
