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

#include "ibmcast/ipoib.h"
#include "ibmcast/ipoib_fabric.h"
#include "ibmcast/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds the verbs ipoib, ipoib-up, ipoib-down, ipoib-addr, ipoib-listen,
 * ipoib-unlisten, ping and ipoib-send, and the subjects ipoib-carrier,
 * ipoib-state, ipoib-received, ping-replies, ping-answered and
 * ipoib-counter to l. Another call on the same language gives -EEXIST. */
int imc_scn_lang_add_ipoib(struct imc_scn_lang *l);

/* An interface of a running scenario, as imc_scn_ipoib_tap() finds it.
 * The pointers stay valid while the interface lives (until the run ends);
 * addr and plen hold its addresses as ipoib-up and ipoib-addr left them. */
struct imc_scn_ipoib_iface {
	struct imc_ipoib *ifc;
	unsigned naddrs;
	const struct imc_ip_addr *addr;
	const unsigned *plen;
};

/* For a caller of the run (imc_scenario_run_opts started hook): the
 * interface the scenario brought up on node:port for pkey (0x7fff and
 * 0xffff name the same partition) into *out (may be NULL), and, tap not
 * NULL, from now on its deliveries and carrier changes go to tap (copied;
 * deliver required) instead of the host model, which then neither counts
 * nor answers pings; tap NULL gives them back. The interface's calling
 * context applies (ipoib.h). Returns 0, -ENOENT when there is no such
 * interface (yet), -EINVAL for a tap without deliver. */
int imc_scn_ipoib_tap(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      uint16_t pkey, const struct imc_ipoib_host_ops *tap,
		      struct imc_scn_ipoib_iface *out);

#ifdef __cplusplus
}
#endif
#endif
