/* What the SMP transport and the SMA/PMA (smp.c, sma.c) need of the
 * fabric's runtime (fabric.c), and the hooks fabric.c calls in them.
 * Private to src/fabric.
 */
#ifndef IBMCAST_FABRIC_INT_H
#define IBMCAST_FABRIC_INT_H

#include "ibmcast/fabric.h"
#include "ibmcast/fabric_mad.h"

struct fab_mad;

/* One port as the SMA sees it. */
struct fab_port_view {
	enum imc_node_type type;
	unsigned nports;          /* external ports of the node */
	uint32_t gidx;            /* index over every port of the fabric */
	enum imc_port_state state;
	uint16_t lid;             /* a switch's on every port */
	uint16_t sm_lid;
	uint8_t mtu;
	uint8_t width;            /* lanes */
	bool cabled;
	bool link_up;             /* cabled and up (physical LinkUp) */
	uint32_t peer_node;       /* when cabled */
	unsigned peer_port;
	imc_time_t latency;       /* of the direction leaving this port */
};

/* ---- provided by fabric.c ---- */

int fab_port_view(const struct imc_fabric *f, uint32_t node, unsigned port,
		  struct fab_port_view *v);
uint32_t fab_nports_total(const struct imc_fabric *f);
struct fab_mad *fab_mad_of(const struct imc_fabric *f);
bool fab_external_sm(const struct imc_fabric *f);

/* SM-driven PortState change (IBA 14.2.5.6 Set(PortInfo)): DOWN (the
 * link retrains: back to INIT at once while the cable is up), ARMED from
 * INIT, ACTIVE from ARMED. -EINVAL for any other transition. */
int fab_port_state_set(struct imc_fabric *f, uint32_t node, unsigned port,
		       enum imc_port_state s);
/* Base LID of an HCA port, or of a switch (port 0): its watches hear
 * LID_CHANGE when it is ACTIVE. -EINVAL for a bad port or LID. */
int fab_port_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
		     uint16_t lid);
int fab_port_sm_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
			uint16_t sm_lid);
/* Posts a port event to the watches of an HCA port. */
void fab_port_post(struct imc_fabric *f, uint32_t node, unsigned port,
		   enum imc_port_event ev);
int fab_port_pkeys(const struct imc_fabric *f, uint32_t node, unsigned port,
		   uint16_t *pkeys, unsigned *n);

/* 64-entry blocks of a switch's LFT (IMC_PORT_NONE beyond the table). */
int fab_lft_block_get(const struct imc_fabric *f, uint32_t sw, unsigned block,
		      uint8_t out[64]);
int fab_lft_block_set(struct imc_fabric *f, uint32_t sw, unsigned block,
		      const uint8_t in[64]);

/* Sends a GMP as a UD datagram from node:port (an HCA port, or a switch's
 * port 0 through its LFT). Returns 0, -ENETDOWN, -EINVAL or -ENOMEM. */
int fab_gmp_send(struct imc_fabric *f, uint32_t node, unsigned port,
		 const struct imc_fabric_mad_addr *to, const uint8_t *mad,
		 size_t len);

/* Mixes an SMP event into the fabric's trace hash. */
void fab_trace(struct imc_fabric *f, unsigned ev, uint32_t gidx,
	       uint64_t serial);

/* ---- provided by smp.c / sma.c, called by fabric.c ---- */

int fab_mad_create(struct imc_fabric *f, struct fab_mad **out);
void fab_mad_destroy(struct fab_mad *m);

/* A datagram for QP0/QP1 reached node:port (a switch's: port 0). Returns
 * true when an agent or the PMA took it; false leaves it to the
 * simulation's QP. */
bool fab_mad_gmp_in(struct fab_mad *m, uint32_t node, unsigned port,
		    const struct imc_ud_recv *r, uint32_t dqp);

/* The state of node:port changed (after the change). */
void fab_mad_port_changed(struct fab_mad *m, uint32_t node, unsigned port,
			  enum imc_port_state old, enum imc_port_state now);

/* ---- between smp.c and sma.c ---- */

/* SMP header offsets (IBA 14.2.1.2, rdma-core's struct umad_smp). */
enum {
	SMP_METHOD = 3,
	SMP_STATUS = 4,           /* bit 15: D, the direction (DR only) */
	SMP_HOP_PTR = 6,
	SMP_HOP_CNT = 7,
	SMP_TID = 8,
	SMP_ATTR_ID = 16,
	SMP_ATTR_MOD = 20,
	SMP_MKEY = 24,
	SMP_DR_SLID = 32,
	SMP_DR_DLID = 34,
	SMP_DATA = 64,
	SMP_INITIAL_PATH = 128,
	SMP_RETURN_PATH = 192,
	SMP_MAX_HOPS = 64,
};

enum {
	MAD_CLASS_SMP_LID = 0x01,
	MAD_CLASS_PERF = 0x04,
	MAD_CLASS_SMP_DR = 0x81,
	MAD_METHOD_GET = 0x01,
	MAD_METHOD_SET = 0x02,
	MAD_METHOD_GET_RESP = 0x81,
	MAD_METHOD_TRAP = 0x05,
	MAD_METHOD_TRAP_REPRESS = 0x07,
	MAD_METHOD_RESP = 0x80,   /* the R bit, IBA 13.4.5 */
	ATTR_SM_INFO = 0x0020,
	ATTR_NOTICE = 0x0002,
	/* IBA 13.4.7 MAD status */
	MAD_STATUS_BAD_VERSION = 0x0004,
	MAD_STATUS_UNSUP_METHOD = 0x0008,
	MAD_STATUS_UNSUP_ATTR = 0x000C,
	MAD_STATUS_BAD_FIELD = 0x001C,
};

struct sma_state;

struct fab_mad {
	struct imc_fabric *f;
	uint32_t nports;                      /* gidx range */
	struct imc_fabric_mad_agent **agents; /* by gidx: first attached */
	struct imc_fabric_mad_agent **sm;     /* by gidx: the SM agent */
	struct fly *flying;                   /* SMPs on their way */
	struct fly *free;
	uint64_t serial;
	struct imc_fabric_mad_stats st;
	struct sma_state *sma;
};

/* Answers an SMP or PMA MAD in place as node's agent, the MAD having
 * arrived at port (see imc_fabric_sma_process). */
int sma_answer(struct fab_mad *m, uint32_t node, unsigned port, uint8_t *mad,
	       size_t len);
/* SMA state of a port: its PortInfo fields the fabric does not hold. */
int sma_init(struct fab_mad *m);
void sma_fini(struct fab_mad *m);
/* The SMA's Trap() sender: node's trap with this TID was repressed.
 * Returns true when it was one of its own. */
bool sma_trap_repress(struct fab_mad *m, uint32_t node, uint64_t tid);
void sma_port_changed(struct fab_mad *m, uint32_t node, unsigned port,
		      enum imc_port_state old, enum imc_port_state now);
/* Sends a MAD from node's SMA (port: the CA port, or 0), LID routed. */
int smp_send_from_sma(struct fab_mad *m, uint32_t node, unsigned port,
		      uint16_t dlid, const uint8_t *mad);
void sma_set_issm(struct fab_mad *m, uint32_t gidx, bool on);
/* dlid is one of the LIDs of the port (base lid, LMC of gidx). */
bool sma_lid_match(const struct fab_mad *m, uint32_t gidx, uint16_t lid,
		   uint16_t dlid);
struct imc_fabric *fab_mad_fabric(const struct fab_mad *m);
struct imc_fabric_mad_stats *fab_mad_stats(struct fab_mad *m);

#endif
