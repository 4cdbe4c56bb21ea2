/* What the join tracker's verbs (mcast_verbs.c) share with the other
 * verbs of a host port (ipoib_verbs.c). Names here are scn_*: private
 * to the library. */
#ifndef IMC_SCENARIO_SCN_MCAST_H
#define IMC_SCENARIO_SCN_MCAST_H

#include <stdint.h>

#include "ibmcast/mcast.h"
#include "ibmcast/scenario.h"

/* Makes the join trackers' run state now, if not yet made, so that state
 * set after it (imc_scn_data_set()) is freed before the trackers. */
int scn_mcast_prepare(struct imc_scn_ctx *c);

/* The join tracker of the HCA port node:port, made on first use (on the
 * port's GSI, scn_sa.h; without an sa line, on a QP1 of its own, and its
 * joins go unanswered): ONE per port,
 * which mcast-* members and every other user of the port (IPoIB
 * interfaces) share, so the port holds one membership per group at the
 * SA, the union of all their members' bits. The run owns it; it is
 * destroyed when the trackers' run state is freed: users set their own
 * state after scn_mcast_prepare(), leave their members and release
 * their QPs (imc_mcast_release_qp()) when it is freed. Fails the run
 * (imc_scn_fail()) when the tracker cannot be made. */
int scn_mcast_tracker(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      struct imc_mcast **out);

/* The run ends: the trackers' end-of-run snapshot (--mcast-show) is
 * recorded now, before users of the trackers let go of their members. */
void scn_mcast_end(struct imc_scn_ctx *c);

#endif
