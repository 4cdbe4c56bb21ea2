/* A minimal subnet manager: the SM's view of a topology (topo.h) with the
 * state of every cable, LID assignment (IBA 14.2.5, LMC 0) and min-hop
 * unicast routing into each switch's linear forwarding table (IBA
 * 14.2.5.10), balanced over equal-cost ports as OpenSM's minhop engine
 * balances them.
 *
 * Pure computation: no clock, no I/O. Every result depends only on the
 * topology and the calls made, never on addresses or hash order.
 *
 * Reach: the SM discovers and programs only what it can reach from its
 * port over cables that are up, as directed-route SMPs do (IBA 14.2.2):
 * through switches, never through a channel adapter. Nodes it cannot
 * reach get no LID; a LID whose port it cannot reach at routing time is
 * unroutable (IMC_PORT_NONE in every LFT), and a switch it cannot reach
 * gets no routes. LIDs once assigned are kept across link changes and
 * sweeps, as OpenSM keeps them (its guid2lid cache), so that address
 * vectors held by clients stay valid.
 *
 * LFTs, hops and next hops describe the subnet as of the last
 * imc_subnet_route(): link and LID changes take effect at the next one,
 * as at the next SM sweep. LID lookups and link state are always current.
 *
 * Nodes are topology indices; ports are numbered from 1, port 0 being a
 * switch's management port. The topology may grow (nodes added, ports
 * cabled) between calls; new nodes and cables are picked up by the next
 * mutating call.
 */
#ifndef IBMCAST_SUBNET_H
#define IBMCAST_SUBNET_H

#include "ibmcast/common.h"
#include "ibmcast/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LFT entry of a LID with no route: not a port, so the switch drops the
 * packet (OpenSM writes the same 0xFF, OSM_NO_PATH). */
#define IMC_PORT_NONE 255
/* Unicast LIDs are 0x0001..0xBFFF (IBA 4.1.3; OpenSM IB_LID_UCAST_END_HO). */
#define IMC_LID_UNICAST_MAX 0xBFFF
/* LIDs per LinearForwardingTable block (IBA 14.2.5.10). */
#define IMC_LFT_BLOCK 64

struct imc_subnet;

/* Creates the SM view of topo with every cable up, no LIDs and no routes;
 * free it with imc_subnet_destroy. The SM port is topo->sm_node/sm_port
 * (any port of a switch means its port 0; see imc_subnet_sm_set), none
 * when sm_node is IMC_TOPO_NONE. topo stays the caller's and must
 * outlive the subnet. Returns 0, -EINVAL (NULL, or an SM port that does
 * not exist) or -ENOMEM. */
int imc_subnet_create(const struct imc_topo *topo, struct imc_subnet **out);
void imc_subnet_destroy(struct imc_subnet *s);

/* Moves the SM to node:port: an HCA port, or port 0 of a switch.
 * Assigned LIDs stay; the next assignment and routing start from there.
 * -EINVAL for another port. */
int imc_subnet_sm_set(struct imc_subnet *s, uint32_t node, unsigned port);

/* Sets the cable at node:port down or up; both of its ends change
 * together. -EINVAL for a bad node, port 0 or an uncabled port. */
int imc_subnet_link_set(struct imc_subnet *s, uint32_t node, unsigned port,
			bool up);
/* Cabled and up; false for bad arguments. */
bool imc_subnet_link_up(const struct imc_subnet *s, uint32_t node,
			unsigned port);

/* Gives a LID to every port the SM reaches that has none: each HCA port
 * once it reaches it over that port's cable, each switch once (port 0).
 * Order: breadth first from the SM port, each switch's ports in
 * increasing order, the SM port first (LID 1 on a fresh subnet); each
 * new LID is the lowest free one. An SM on an HCA port that is not up
 * reaches nothing, not even its own port. Returns the number of LIDs given
 * (0 when nothing is new), or -ENOSPC when the unicast range is full:
 * the ports reached before that keep the LIDs they got, the rest get
 * none. -EINVAL when the SM port is not set, -ENOMEM. */
int imc_subnet_assign_lids(struct imc_subnet *s);

/* Gives node:port the LID lid (1..IMC_LID_UNICAST_MAX), releasing the
 * port's previous one; a switch is named by port 0. -EBUSY when another
 * port holds lid, -EINVAL for a bad port or LID. Routes change at the
 * next imc_subnet_route. */
int imc_subnet_lid_set(struct imc_subnet *s, uint32_t node, unsigned port,
		       uint16_t lid);

/* Recomputes every LFT from scratch: for each switch the SM reaches and
 * each LID whose port it reaches, an egress port on a shortest path over
 * cables that are up; among equal ports the one carrying the fewest
 * routes so far, then the lowest numbered; routes to HCA LIDs are
 * chosen before those to switch LIDs, each in increasing LID order.
 * A switch's own LID goes to port 0. Given the same LIDs, routes to HCAs
 * are those of OpenSM's minhop engine; routes to switch LIDs count in
 * the loads here, so they spread where OpenSM sends them all over one
 * port. Returns 0, -EINVAL when the SM port is not set, -ERANGE when two
 * switches are over 253 hops apart (hop counts are bytes; no routes are
 * then left), -ENOMEM (no routes either). */
int imc_subnet_route(struct imc_subnet *s);

/* Assigns LIDs, then routes: one SM sweep. Returns as the two do; a full
 * LID range (-ENOSPC) still routes the LIDs given. */
int imc_subnet_sweep(struct imc_subnet *s);

struct imc_subnet_stats {
	uint32_t lids;             /* LIDs assigned */
	uint32_t hca_lids;
	uint32_t switch_lids;
	uint32_t routable_lids;    /* of those, reached at the last route */
	uint32_t switches_routed;  /* switches reached at the last route */
	uint32_t max_hops;         /* max over routed switches and LIDs */
	uint64_t routes;           /* LFT entries other than IMC_PORT_NONE */
};

void imc_subnet_stats(const struct imc_subnet *s, struct imc_subnet_stats *out);

/* The LID of node:port (for a switch, of any of its ports: they share the
 * LID of port 0, IBA 14.2.5.6), 0 when it has none, -EINVAL for a bad
 * node or port. O(1). */
int imc_subnet_lid(const struct imc_subnet *s, uint32_t node, unsigned port);

/* The port holding lid (a switch's is port 0). -ENOENT when nobody
 * holds it, -EINVAL when lid is not unicast. O(1). */
int imc_subnet_lid_owner(const struct imc_subnet *s, uint16_t lid,
			 uint32_t *node, unsigned *port);

/* The highest LID assigned, 0 for none. */
uint16_t imc_subnet_max_lid(const struct imc_subnet *s);

/* The SM port's LID, 0 before it has one. */
uint16_t imc_subnet_sm_lid(const struct imc_subnet *s);

/* LFT entry of a switch for lid: the egress port, 0 for the switch's own
 * LID, IMC_PORT_NONE for no route (any lid above the table included).
 * -EINVAL when sw is not a switch. O(1). */
int imc_subnet_lft(const struct imc_subnet *s, uint32_t sw, uint16_t lid);

/* The whole LFT of a switch, indexed by LID: *len entries (a multiple of
 * IMC_LFT_BLOCK, above the highest LID). NULL with *len 0 when sw is
 * not a switch or the last route did not reach it. Valid until the next
 * route or destroy. */
const uint8_t *imc_subnet_lft_table(const struct imc_subnet *s, uint32_t sw,
				    size_t *len);

/* Hops (cables) on a shortest path from node to the port holding lid:
 * 0 when node holds lid. From an HCA: over whichever of its cables that
 * are up gives the fewest. -EINVAL for a bad node or non-unicast lid,
 * -ENOENT for a LID nobody holds, -EHOSTUNREACH when unroutable. */
int imc_subnet_hops(const struct imc_subnet *s, uint32_t node, uint16_t lid);

/* Where a packet for lid goes next at node, having arrived on port_in
 * (0: it starts at node). A switch follows its LFT (port_in does not
 * matter). An HCA delivers it (0) when lid is port_in's LID and drops it
 * (IMC_PORT_NONE) otherwise: channel adapters do not forward; a packet
 * starting at an HCA is delivered at once (0) when lid is one of its own
 * ports' and otherwise leaves by the port, up now, nearest lid (the
 * lowest numbered of equals), IMC_PORT_NONE when none leads there.
 * -EINVAL for a bad node, port_in, or non-unicast lid. */
int imc_subnet_next_hop(const struct imc_subnet *s, uint32_t node,
			unsigned port_in, uint16_t lid);

#ifdef __cplusplus
}
#endif
#endif
