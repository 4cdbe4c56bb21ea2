/* MAD agents outside the simulation, on QP0/QP1 of a port of the embedded
 * fabric, and the fabric's own SMA and PMA.
 *
 * Every channel adapter port and every switch (at its management port 0)
 * has a Subnet Management Agent (IBA 14.2) that answers SMPs on QP0, and
 * a Performance Management Agent (IBA 16.1) that answers GMPs of class
 * 0x04 on QP1. An agent is a MAD user that is not part of the simulation
 * (an SM such as OpenSM, a diagnostic tool): it attaches to a port and
 * sends and receives whole MADs (256 bytes, IBA 13.4.2) through the
 * fabric, as a process does through a HCA's QP0 and QP1.
 *
 * SMPs (class 0x01 LID routed, 0x81 directed route) travel hop by hop
 * over the fabric's cables, one link latency per hop, in any port state
 * but DOWN (VL15, IBA 7.2): directed route per IBA 14.2.2 (initial path,
 * hop pointer, return path, DrSLID/DrDLID and the permissive LID 0xFFFF),
 * LID routed through the switches' LFTs. A cable that is down, or a hop
 * that leads nowhere, drops the SMP (counted; no answer, as on a real
 * subnet, where the sender times out). GMPs (QP1) travel as UD
 * datagrams, like every other packet of the fabric, and need ACTIVE
 * ports.
 *
 * Which MAD arriving at a port reaches which user (IBA 13.4.4, 14.2.1):
 *
 *  - QP0 requests: the SMA answers them, except SMInfo (IBA 14.4.1) and
 *    Trap() (IBA 14.3.1), which go to the port's SM agent (the agent with
 *    imc_fabric_mad_set_sm() on); without one SMInfo is answered with
 *    status 0x000C and a Trap() is dropped.
 *  - QP1 requests: class 0x04 (PMA) is answered by the PMA; any other
 *    class goes to the port's SM agent (OpenSM's SA), else to the
 *    simulation's own QP1 of the port (an imc_qp/imc_gsi user), else it
 *    is dropped.
 *  - Responses (the R bit of the method, IBA 13.4.5) and TrapRepress():
 *    to the first agent of the port, in attach order, whose TID filter
 *    matches the TransactionID ((tid & tid_mask) == tid_value; a new
 *    agent's filter is 0/0 and so matches every TID); on QP1, when no
 *    agent matches, to the simulation's QP1 of the port. TrapRepress()
 *    to QP0 of a port whose SMA sent a trap is the SMA's.
 *
 * Callbacks run from the fabric's loop, never inside the call that caused
 * them; after imc_fabric_mad_detach() returns, that agent gets none.
 *
 * Timing: an SMP takes the link latency of each cable it crosses; the
 * SMA answers at once (no processing time). Everything is driven by the
 * loop, so a virtual-time run replays exactly from its seed.
 */
#ifndef IBMCAST_FABRIC_MAD_H
#define IBMCAST_FABRIC_MAD_H

#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A MAD is at most 256 bytes (IBA 13.4.2); SMPs are exactly 256. */
#define IMC_FABRIC_MAD_SIZE 256

/* Where a MAD goes to, or came from (the fields of a work completion and
 * of the LRH/BTH/DETH it travelled in).
 *  send: dlid is the destination (0xFFFF, the permissive LID, for a
 *        directed-route SMP whose DrSLID is 0xFFFF: the fabric then
 *        follows the initial path); slid 0 means the agent's port's LID
 *        (0 for a port that has none yet, fine for DR SMPs); dqp 0 or 1;
 *        sqp is set by the fabric (the QP the agent sends from, 0 for
 *        an SMP, 1 for a GMP); qkey and pkey apply to QP1 only (0: the
 *        GSI's Q_Key 0x80010000 and the default P_Key 0xFFFF); sl is the
 *        LRH SL of a GMP.
 *  recv: as the MAD arrived: dlid/slid of its LRH (0xFFFF for a
 *        directed-route SMP's LRH where IBA 14.2.2 says so), dqp, sqp. */
struct imc_fabric_mad_addr {
	uint16_t dlid;
	uint16_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t qkey;
	uint16_t pkey;
	uint8_t sl;
};

struct imc_fabric_mad_agent;

/* A MAD arrived for the agent: mad/len valid during the call only (len is
 * 256 for SMPs; a GMP's datagram length otherwise). */
typedef void imc_fabric_mad_recv_fn(struct imc_fabric_mad_agent *a,
				    const struct imc_fabric_mad_addr *from,
				    const uint8_t *mad, size_t len, void *ctx);

/* Attaches an agent to node:port: an HCA port (1..n) or a switch's
 * management port 0 (any other switch port is -EINVAL, as on a switch
 * only port 0 has QPs, IBA 17.2.1.2). Any number of agents may attach to
 * one port. recv runs from the loop for each MAD the agent gets (see the
 * dispatch rules above). *out is the caller's until imc_fabric_mad_detach,
 * which frees it; an agent outliving its fabric hears nothing more and
 * is still detached by its owner. Returns 0, -EINVAL (bad node/port,
 * NULL recv/out) or -ENOMEM. */
int imc_fabric_mad_attach(struct imc_fabric *f, uint32_t node, unsigned port,
			  imc_fabric_mad_recv_fn *recv, void *ctx,
			  struct imc_fabric_mad_agent **out);

/* Frees the agent: no callback after return, MADs it sent that are still
 * on their way travel on (their answers find no agent and are dropped
 * unless another agent's filter takes them). If it was the port's SM
 * agent, the port's IsSM bit is cleared. May be called from the agent's
 * own callback. NULL is a no-op. */
void imc_fabric_mad_detach(struct imc_fabric_mad_agent *a);

/* Responses and TrapRepress() whose TID satisfies (tid & mask) == value
 * come to this agent (the first such of the port in attach order). An
 * ibsim-like server stamps a client number into the high bits of the TIDs
 * of the requests it sends and gives each client's agent that filter. */
void imc_fabric_mad_set_tid_filter(struct imc_fabric_mad_agent *a,
				   uint64_t mask, uint64_t value);

/* Makes the agent its port's SM agent (on) or not (off): the port's
 * PortInfo:CapabilityMask.IsSM (bit 1, IBA 14.2.5.6) follows, and
 * SMInfo/Trap() requests and QP1 requests of classes other than the
 * PMA's come to it. One SM agent per port: -EBUSY when another agent of
 * the port is it. Returns 0, -EBUSY, or -ENODEV once the fabric is
 * destroyed. */
int imc_fabric_mad_set_sm(struct imc_fabric_mad_agent *a, bool on);

/* Sends one MAD (copied) from the agent's port. A directed-route SMP is
 * checked and started as IBA 14.2.2.1 says for the sender (hop pointer 0,
 * direction bit clear, hop count <= 63, the initial path's first port a
 * port of the node); LID-routed SMPs and GMPs leave by the port towards
 * dlid. The MAD's TID, method and payload are the agent's: the fabric
 * does not rewrite them. Returns 0 when the MAD is on its way (it may
 * still be dropped on the way; there is then no answer), -EINVAL for a
 * malformed MAD or address (len < 24 or > 256, an SMP not 256 bytes long,
 * dqp not 0 or 1, a directed-route SMP with a bad hop pointer/count or
 * first hop), -ENETDOWN when the port cannot send it (DOWN for an SMP,
 * not ACTIVE for a GMP; or an uncabled first hop), -ENODEV once the
 * fabric is destroyed, or -ENOMEM. */
int imc_fabric_mad_send(struct imc_fabric_mad_agent *a,
			const struct imc_fabric_mad_addr *to,
			const uint8_t *mad, size_t len);

/* The node and port the agent is attached to. */
void imc_fabric_mad_port(const struct imc_fabric_mad_agent *a,
			 uint32_t *node, unsigned *port);

/* ---- the SMA seen directly, without a MAD on the wire ---- */

/* Fills out[64] with the attribute as the SMA of node would answer a
 * SubnGet() of attr_id with modifier attr_mod arriving at port (for
 * PortInfo of a CA port, attr_mod 0 means the arriving port, IBA
 * 14.2.5.6). For ibsim's SIM_CTL_GET_NODEINFO/PORTINFO/PKEYS. Returns
 * the MAD status the SMA would give (0 for success, 0x000C unsupported
 * attribute, 0x001C bad attribute modifier, IBA 13.4.7), or -EINVAL for
 * a bad node/port. */
int imc_fabric_sma_get(struct imc_fabric *f, uint32_t node, unsigned port,
		       uint16_t attr_id, uint32_t attr_mod, uint8_t out[64]);

/* Answers a MAD as node:port's SMA or PMA would on arrival, in place
 * (mad becomes the response, IBA 13.4.5: method GetResp, status set; for
 * a directed-route SMP the D bit set and the hop pointer as the SMA
 * leaves it), without routing: for tests and tools that address an SMA
 * they are attached to. Returns 1 when mad now holds a response to
 * send back, 0 when the SMA/PMA does not answer this MAD (a response, a
 * Trap(), a class it does not serve), -EINVAL for a bad node/port or a
 * MAD shorter than 256 bytes. */
int imc_fabric_sma_process(struct imc_fabric *f, uint32_t node, unsigned port,
			   uint8_t *mad, size_t len);

struct imc_fabric_mad_stats {
	uint64_t smps_sent;       /* SMPs agents and SMAs put on the wire */
	uint64_t smp_hops;        /* cables crossed by SMPs */
	uint64_t smps_answered;   /* by SMAs */
	uint64_t smps_dropped;    /* link down, no route, bad DR fields */
	uint64_t gmps_answered;   /* by PMAs */
	uint64_t to_agents;       /* MADs handed to agents */
	uint64_t unclaimed;       /* MADs nobody took (dropped) */
	uint64_t traps_sent;      /* Trap() by SMAs, repeats included */
};

void imc_fabric_mad_stats(const struct imc_fabric *f,
			  struct imc_fabric_mad_stats *out);

#ifdef __cplusplus
}
#endif
#endif
