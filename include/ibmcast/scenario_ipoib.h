/* IPoIB in scenarios (docs/scenarios.md, "IPoIB").
 *
 * Hosts get IPoIB interfaces (ipoib_fabric.h) on their ports, one per
 * P_Key, each with a join tracker of its port talking to the SA that the
 * `sa` setting serves; addresses, listening, pings and UDP datagrams are
 * actions; a small host model stands in for the IP stack (it answers
 * pings to its addresses and counts what it receives). The ipoib-*
 * subjects observe interfaces and host models. imc_scn_lang_create()
 * adds all of them to its language.
 */
#ifndef IBMCAST_SCENARIO_IPOIB_H
#define IBMCAST_SCENARIO_IPOIB_H

#include "ibmcast/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds the verbs ipoib, ipoib-up, ipoib-down, ipoib-addr, ipoib-listen,
 * ipoib-unlisten, ping and ipoib-send, and the subjects ipoib-carrier,
 * ipoib-state, ipoib-received, ping-replies, ping-answered and
 * ipoib-counter to l. Another call on the same language gives -EEXIST. */
int imc_scn_lang_add_ipoib(struct imc_scn_lang *l);

#ifdef __cplusplus
}
#endif
#endif
