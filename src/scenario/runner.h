/* What the runner (run.c) gives the plugins' run halves besides scn.h:
 * a per-port table and the create request of a group. Private to the
 * library. */
#ifndef IMC_SCENARIO_RUNNER_H
#define IMC_SCENARIO_RUNNER_H

#include <stdint.h>

#include "ibmcast/mcmr.h"
#include "ibmcast/topo.h"

/* A pointer per port of a topology, for the state the runner and its
 * plugins keep per port (hosts, SA clients, trackers, IPoIB ports, GSIs):
 * a slot per (node, port), ports 0..nports, in topology order, NULL until
 * set. The owner frees what it hangs there (scn_ports_fini()). */
struct scn_ports {
	uint32_t *base;             /* node i's first slot */
	uint32_t n;                 /* slots */
	void **slot;
};

/* Every slot NULL: 0 or -ENOMEM (p is then empty). */
int scn_ports_init(struct scn_ports *p, const struct imc_topo *t);
/* free_fn (may be NULL) on each slot set, in slot order; then p is
 * empty. */
void scn_ports_fini(struct scn_ports *p, void (*free_fn)(void *));

/* The slot number of node:port (a port of the topology). */
static inline uint32_t scn_ports_idx(const struct scn_ports *p,
				     uint32_t node, unsigned port)
{
	return p->base[node] + port;
}

/* The slot of node:port (a port of the topology). */
static inline void **scn_ports_at(const struct scn_ports *p, uint32_t node,
				  unsigned port)
{
	return &p->slot[p->base[node] + port];
}

/* "NAME:PORT" of node:port of t, malloc'd (the caller frees it), or NULL
 * without memory: how snapshots name ports. */
char *scn_port_name(const struct imc_topo *t, uint32_t node, unsigned port);

/* A create's ComponentMask (o15-0.2.3: Q_Key, TClass, P_Key, FlowLabel
 * and SL besides MGID, PortGID and JoinState) from the components given:
 * rec gets the scenario's Q_Key (IMC_SCN_QKEY) and the default P_Key
 * unless given. sa-join and mcast-join create alike. */
uint64_t scn_mcmr_create(struct imc_mcmr *rec, uint64_t given);

#endif
