/* SMP transport and MAD agents of the embedded fabric (fabric_mad.h).
 *
 * An SMP on its way is a struct fly: the 256 bytes of the MAD, its LRH
 * DLID/SLID, where it is (node, the port it arrived on) and how it moves
 * on. Each cable crossing is one timer at the cable's latency; at every
 * node the subnet management interface (SMI, IBA 14.2.2) decides what
 * comes next:
 *
 *   mode   moves by                 ends when
 *   DR     the initial path (D=0)   hop pointer past the hop count, or
 *          or the return path (D=1) back to 0 (IBA 14.2.2.2, 14.2.2.4)
 *   LID    the switches' LFTs       the LRH DLID is the node's own LID
 *          (LID-routed SMPs, and the LID-routed segments of a directed
 *          route with a DrDLID/DrSLID that is not permissive)
 *
 * and a fly at its end is dispatched: to the SMA, or to an agent.
 * Everything happens on the fabric's loop, so a run replays from its
 * seed; SMP hops and deliveries are mixed into the fabric's trace hash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "ibmcast/packet.h"
#include "ibmcast/subnet.h"
#include "util/bytes.h"

enum fly_mode {
	FLY_DR,
	FLY_LID,
};

enum fly_kind {
	FLY_ARRIVE,     /* crossed a cable: the SMI of node decides */
	FLY_LOCAL,      /* at its end: dispatch at node */
};

/* Trace events of SMPs (the fabric's are below 16 + drop reasons). */
enum {
	TR_SMP_HOP = 64,
	TR_SMP_LOCAL = 65,
	TR_SMP_DROP = 66,
};

struct fly {
	struct imc_timer t;
	struct imc_list link;     /* m->flying, or m->free */
	struct fab_mad *m;
	uint64_t serial;
	uint32_t node;
	uint8_t in_port;          /* arrived on; 0: starts here */
	uint8_t mode;             /* enum fly_mode */
	uint8_t kind;             /* enum fly_kind */
	uint16_t dlid, slid;      /* LRH */
	uint8_t mad[IMC_FABRIC_MAD_SIZE];
};

struct imc_fabric_mad_agent {
	struct fab_mad *m;
	uint32_t node;
	unsigned port;
	uint32_t gidx;
	imc_fabric_mad_recv_fn *recv;
	void *ctx;
	uint64_t tid_mask, tid_value;
	struct imc_list link;     /* m->agents[gidx] */
};

static void fly_fire(struct imc_timer *t);

struct imc_fabric *fab_mad_fabric(const struct fab_mad *m)
{
	return m->f;
}

struct imc_fabric_mad_stats *fab_mad_stats(struct fab_mad *m)
{
	return &m->st;
}

/* ---- flies ---- */

static struct fly *fly_get(struct fab_mad *m)
{
	struct fly *fl;

	if (!imc_list_empty(&m->free)) {
		fl = imc_list_entry(m->free.next, struct fly, link);
		imc_list_del(&fl->link);
	} else {
		fl = malloc(sizeof(*fl));
		if (!fl)
			return NULL;
		fl->m = m;
		imc_timer_init(&fl->t, fly_fire);
	}
	fl->serial = ++m->serial;
	imc_list_add_head(&m->flying, &fl->link);
	return fl;
}

static void fly_put(struct fab_mad *m, struct fly *fl)
{
	imc_list_del(&fl->link);
	imc_list_add_head(&m->free, &fl->link);
}

static uint32_t gidx_of(struct fab_mad *m, uint32_t node, unsigned port)
{
	struct fab_port_view v;

	return fab_port_view(m->f, node, port, &v) ? 0 : v.gidx;
}

static void fly_drop(struct fab_mad *m, struct fly *fl)
{
	m->st.smps_dropped++;
	fab_trace(m->f, TR_SMP_DROP, gidx_of(m, fl->node, fl->in_port),
		  fl->serial);
	fly_put(m, fl);
}

/* Puts fl on the cable leaving node:port. Management packets cross any
 * link that is up and not DOWN at either end (VL15, IBA 7.2); a cable
 * that is down loses them. */
static void fly_hop(struct fab_mad *m, struct fly *fl, unsigned port)
{
	struct fab_port_view v, pv;

	if (fab_port_view(m->f, fl->node, port, &v) || !v.link_up ||
	    v.state == IMC_PORT_DOWN ||
	    fab_port_view(m->f, v.peer_node, v.peer_port, &pv) ||
	    pv.state == IMC_PORT_DOWN) {
		fly_drop(m, fl);
		return;
	}
	fl->node = v.peer_node;
	fl->in_port = (uint8_t)v.peer_port;
	fl->kind = FLY_ARRIVE;
	m->st.smp_hops++;
	fab_trace(m->f, TR_SMP_HOP, pv.gidx, fl->serial);
	if (imc_timer_arm(imc_fabric_loop(m->f), &fl->t,
			  imc_loop_now(imc_fabric_loop(m->f)) + v.latency))
		fly_drop(m, fl);
}

/* fl has reached its end at its node: dispatched from the loop. */
static void fly_local(struct fab_mad *m, struct fly *fl)
{
	struct imc_loop *loop = imc_fabric_loop(m->f);

	fl->kind = FLY_LOCAL;
	if (imc_timer_arm(loop, &fl->t, imc_loop_now(loop)))
		fly_drop(m, fl);
}

static bool is_switch(struct fab_mad *m, uint32_t node)
{
	struct fab_port_view v;

	return !fab_port_view(m->f, node, 0, &v) && v.type == IMC_NODE_SWITCH;
}

static int dr_step(struct fab_mad *m, struct fly *fl, bool origin,
		   unsigned port);

/* fl has reached the node its LRH DLID names: a directed-route SMP goes
 * on with its directed part (IBA 14.2.2: a LID-routed segment ends where
 * the directed part takes over, or at the requester), any other SMP is
 * at its end. */
static void lid_end(struct fab_mad *m, struct fly *fl)
{
	if (fl->mad[1] == MAD_CLASS_SMP_DR) {
		fl->mode = FLY_DR;
		if (dr_step(m, fl, false, fl->in_port))
			fly_drop(m, fl);
		return;
	}
	fly_local(m, fl);
}

/* One LID-routed step from fl's node, where it starts (origin: from
 * fl->in_port, 0 for a switch) or has arrived (on fl->in_port). A switch
 * forwards by its LFT (IBA 18.2.4.3); a channel adapter sends out of its
 * start port and takes only its own LIDs. The permissive DLID is the
 * first node reached. */
static void lid_step(struct fab_mad *m, struct fly *fl, bool origin)
{
	struct fab_port_view v;
	uint8_t blk[64];

	if (fab_port_view(m->f, fl->node, fl->in_port, &v)) {
		fly_drop(m, fl);
		return;
	}
	if (v.type == IMC_NODE_SWITCH) {
		unsigned out;

		if (fl->dlid == v.lid ||
		    (fl->dlid == IMC_LID_PERMISSIVE && !origin)) {
			lid_end(m, fl);
			return;
		}
		if (fl->dlid == IMC_LID_PERMISSIVE ||
		    imc_lid_is_mcast(fl->dlid) ||
		    fab_lft_block_get(m->f, fl->node, fl->dlid / 64, blk)) {
			fly_drop(m, fl);
			return;
		}
		out = blk[fl->dlid % 64];
		if (out == 0) {
			lid_end(m, fl);
			return;
		}
		if (out > v.nports) {
			fly_drop(m, fl);
			return;
		}
		fly_hop(m, fl, out);
		return;
	}
	if (sma_lid_match(m, v.gidx, v.lid, fl->dlid) ||
	    (fl->dlid == IMC_LID_PERMISSIVE && !origin)) {
		lid_end(m, fl);
		return;
	}
	if (!origin) {
		fly_drop(m, fl);
		return;
	}
	fly_hop(m, fl, fl->in_port);
}

/* ---- directed route (IBA 14.2.2) ---- */

static bool dr_dir(const uint8_t *mad)
{
	return mad[SMP_STATUS] & 0x80;
}

/* Where a directed-route SMP stands at fl's node. */
struct dr_at {
	uint8_t *mad;
	unsigned hp, hc;          /* hop pointer, hop count */
	bool sw;
	unsigned np;              /* the node's ports */
	uint16_t lid;             /* the node's (a switch's) LID */
};

/* Leaves the directed part for a LID-routed segment to dlid (IBA
 * 14.2.2: a DrDLID or DrSLID that is not the permissive LID). */
static int dr_to_lid(struct fab_mad *m, struct fly *fl,
		     const struct dr_at *at, uint16_t dlid)
{
	if (!at->sw)
		return -EINVAL;
	fl->mode = FLY_LID;
	fl->dlid = dlid;
	fl->slid = at->lid;
	fl->in_port = 0;
	lid_step(m, fl, true);
	return 0;
}

/* Outbound (D clear), IBA 14.2.2.2 (C14-9). */
static int dr_out(struct fab_mad *m, struct fly *fl, const struct dr_at *at,
		  bool origin, unsigned port)
{
	uint8_t *mad = at->mad;
	unsigned hp = at->hp, hc = at->hc, out;
	uint16_t drdlid = imc_get16(mad + SMP_DR_DLID);

	/* The directed part starts at the sender, or at the switch a
	 * LID-routed first segment led to (a DrSLID that is not
	 * permissive). */
	if (hp == 0 && !origin && !at->sw)
		return -EINVAL;
	if (hp == 0 && hc > 0) {
		/* Out of InitialPath[1], which on a CA must be the sender's
		 * own port. */
		out = mad[SMP_INITIAL_PATH + 1];
		if (out == 0 || out > at->np || (!at->sw && out != port))
			return -EINVAL;
		mad[SMP_HOP_PTR] = 1;
		fl->mode = FLY_DR;
		fl->dlid = fl->slid = IMC_LID_PERMISSIVE;
		fly_hop(m, fl, out);
		return 0;
	}
	if (hp == 0 && hc == 0) {
		mad[SMP_HOP_PTR] = 1;
		if (drdlid == IMC_LID_PERMISSIVE) {
			fly_local(m, fl);
			return 0;
		}
		return dr_to_lid(m, fl, at, drdlid);
	}
	if (origin)
		return -EINVAL;
	if (hp < hc) {
		/* An intermediate hop: switches only. */
		out = mad[SMP_INITIAL_PATH + hp + 1];
		if (!at->sw || out == 0 || out > at->np)
			return -EINVAL;
		mad[SMP_RETURN_PATH + hp] = fl->in_port;
		mad[SMP_HOP_PTR] = (uint8_t)(hp + 1);
		fly_hop(m, fl, out);
		return 0;
	}
	if (hp == hc) {
		/* The end of the directed part. */
		mad[SMP_RETURN_PATH + hp] = fl->in_port;
		mad[SMP_HOP_PTR] = (uint8_t)(hp + 1);
		if (drdlid == IMC_LID_PERMISSIVE) {
			fly_local(m, fl);
			return 0;
		}
		return dr_to_lid(m, fl, at, drdlid);
	}
	if (hp == hc + 1) {
		fly_local(m, fl);
		return 0;
	}
	return -EINVAL;
}

/* Returning (D set), IBA 14.2.2.4 (C14-13). */
static int dr_back(struct fab_mad *m, struct fly *fl, const struct dr_at *at,
		   bool origin, unsigned port)
{
	uint8_t *mad = at->mad;
	unsigned hp = at->hp, hc = at->hc, out;

	if (hc > 0 && hp == hc + 1) {
		/* From the responder, or back at the end of the directed
		 * part after a LID-routed tail. */
		if (origin && imc_get16(mad + SMP_DR_DLID) !=
				      IMC_LID_PERMISSIVE) {
			fl->mode = FLY_LID;
			fl->in_port = (uint8_t)port;
			lid_step(m, fl, true);
			return 0;
		}
		out = mad[SMP_RETURN_PATH + hc];
		if (out > at->np || (!origin && !at->sw) || (out == 0 && at->sw))
			return -EINVAL;
		mad[SMP_HOP_PTR] = (uint8_t)hc;
		if (!at->sw)
			out = port ? port : out;
		fl->mode = FLY_DR;
		fly_hop(m, fl, out);
		return 0;
	}
	if (!origin && hp >= 2 && hp <= hc) {
		out = mad[SMP_RETURN_PATH + hp - 1];
		if (!at->sw || out == 0 || out > at->np)
			return -EINVAL;
		mad[SMP_HOP_PTR] = (uint8_t)(hp - 1);
		fly_hop(m, fl, out);
		return 0;
	}
	if (hp == 1) {
		uint16_t drslid = imc_get16(mad + SMP_DR_SLID);
		struct fab_port_view v;

		mad[SMP_HOP_PTR] = 0;
		if (drslid == IMC_LID_PERMISSIVE) {
			fly_local(m, fl);
			return 0;
		}
		/* At a CA the directed part began here: DrSLID must be
		 * its own. */
		if (!at->sw && !fab_port_view(m->f, fl->node, fl->in_port, &v))
			return sma_lid_match(m, v.gidx, v.lid, drslid) ?
			       (fly_local(m, fl), 0) : -EINVAL;
		return dr_to_lid(m, fl, at, drslid);
	}
	if (hp == 0 && !origin) {
		fly_local(m, fl);
		return 0;
	}
	return -EINVAL;
}

/* The next step of a directed-route SMP at fl's node: origin is true
 * where it starts (the sender's node, port = the sender's port, 0 for a
 * switch; or the responding SMA's node). Returns -EINVAL when the SMI
 * discards it (the checks of C14-9 and C14-13 on the hop pointer). */
static int dr_step(struct fab_mad *m, struct fly *fl, bool origin,
		   unsigned port)
{
	struct fab_port_view v;
	struct dr_at at;

	at.mad = fl->mad;
	at.hp = fl->mad[SMP_HOP_PTR];
	at.hc = fl->mad[SMP_HOP_CNT];
	if (at.hc >= SMP_MAX_HOPS || fab_port_view(m->f, fl->node, 0, &v))
		return -EINVAL;
	at.sw = v.type == IMC_NODE_SWITCH;
	at.np = v.nports;
	at.lid = v.lid;
	if (dr_dir(fl->mad))
		return dr_back(m, fl, &at, origin, port);
	return dr_out(m, fl, &at, origin, port);
}

/* ---- agents ---- */

static struct imc_fabric_mad_agent *agent_for_tid(struct fab_mad *m,
						  uint32_t gidx, uint64_t tid)
{
	struct imc_list *l;

	imc_list_foreach(l, &m->agents[gidx]) {
		struct imc_fabric_mad_agent *a =
			imc_list_entry(l, struct imc_fabric_mad_agent, link);

		if ((tid & a->tid_mask) == a->tid_value)
			return a;
	}
	return NULL;
}

static void to_agent(struct fab_mad *m, struct imc_fabric_mad_agent *a,
		     const struct imc_fabric_mad_addr *from,
		     const uint8_t *mad, size_t len)
{
	m->st.to_agents++;
	a->recv(a, from, mad, len, a->ctx);
}

/* The agent port of a node that an SMP reached through port in. */
static unsigned agent_port(struct fab_mad *m, uint32_t node, unsigned in)
{
	return is_switch(m, node) ? 0 : in;
}

/* Sends the SMA's answer, in fl, back the way the request came: the
 * LRH LIDs swapped (IBA 13.5.4.2), a directed route back along its
 * return path. port is the responder's: the CA port, or 0. */
static void answer_back(struct fab_mad *m, struct fly *fl, unsigned port)
{
	uint16_t t = fl->dlid;

	m->st.smps_answered++;
	fl->dlid = fl->slid;
	fl->slid = t;
	fl->in_port = (uint8_t)port;
	if (fl->mad[1] == MAD_CLASS_SMP_DR) {
		fl->mode = FLY_DR;
		if (dr_step(m, fl, true, port))
			fly_drop(m, fl);
		return;
	}
	fl->mode = FLY_LID;
	lid_step(m, fl, true);
}

/* An SMP at the end of its way, at fl's node, arrived on fl->in_port
 * (IBA 14.2.1: the SMA takes requests; SMInfo and traps are the SM's;
 * responses go to the agent that asked). */
static void dispatch(struct fab_mad *m, struct fly *fl)
{
	uint8_t method = fl->mad[SMP_METHOD];
	uint16_t attr = imc_get16(fl->mad + SMP_ATTR_ID);
	unsigned port = agent_port(m, fl->node, fl->in_port);
	uint32_t gidx = gidx_of(m, fl->node, port);
	struct imc_fabric_mad_addr from = {
		.dlid = fl->dlid, .slid = fl->slid, .dqp = 0, .sqp = 0,
	};
	struct imc_fabric_mad_agent *a = NULL;

	fab_trace(m->f, TR_SMP_LOCAL, gidx, fl->serial);
	if (method == MAD_METHOD_TRAP_REPRESS &&
	    sma_trap_repress(m, fl->node, imc_get64(fl->mad + SMP_TID))) {
		fly_put(m, fl);
		return;
	}
	if ((method & MAD_METHOD_RESP) || method == MAD_METHOD_TRAP_REPRESS)
		a = agent_for_tid(m, gidx, imc_get64(fl->mad + SMP_TID));
	else if (method == MAD_METHOD_TRAP)
		a = m->sm[gidx];
	else if (attr == ATTR_SM_INFO && m->sm[gidx])
		a = m->sm[gidx];
	if (a) {
		to_agent(m, a, &from, fl->mad, IMC_FABRIC_MAD_SIZE);
		fly_put(m, fl);
		return;
	}
	if ((method & MAD_METHOD_RESP) || method == MAD_METHOD_TRAP ||
	    method == MAD_METHOD_TRAP_REPRESS) {
		m->st.unclaimed++;
		fly_put(m, fl);
		return;
	}
	/* The SMA sees the port the SMP came in by (NodeInfo's
	 * LocalPortNum), 0 when a switch's own agent sent it. */
	if (sma_answer(m, fl->node, fl->in_port, fl->mad,
		       IMC_FABRIC_MAD_SIZE) != 1) {
		m->st.unclaimed++;
		fly_put(m, fl);
		return;
	}
	answer_back(m, fl, port);
}

static void fly_fire(struct imc_timer *t)
{
	struct fly *fl = imc_container_of(t, struct fly, t);
	struct fab_mad *m = fl->m;

	if (fl->kind == FLY_LOCAL) {
		dispatch(m, fl);
		return;
	}
	if (fl->mode == FLY_LID) {
		lid_step(m, fl, false);
		return;
	}
	if (dr_step(m, fl, false, 0))
		fly_drop(m, fl);
}

/* Starts an SMP at node:port (the sender's port; 0 for a switch). */
static int smp_start(struct fab_mad *m, uint32_t node, unsigned port,
		     const struct imc_fabric_mad_addr *to, const uint8_t *mad)
{
	struct fab_port_view v;
	struct fly *fl;
	int rc;

	if (fab_port_view(m->f, node, port, &v))
		return -EINVAL;
	if (port && (!v.cabled || v.state == IMC_PORT_DOWN) &&
	    mad[1] != MAD_CLASS_SMP_DR)
		return -ENETDOWN;
	fl = fly_get(m);
	if (!fl)
		return -ENOMEM;
	memcpy(fl->mad, mad, IMC_FABRIC_MAD_SIZE);
	fl->node = node;
	fl->in_port = (uint8_t)port;
	fl->slid = to->slid ? to->slid : v.lid;
	fl->dlid = to->dlid;
	m->st.smps_sent++;
	fab_trace(m->f, TR_SMP_HOP, v.gidx, fl->serial);
	if (mad[1] == MAD_CLASS_SMP_DR && to->dlid != IMC_LID_PERMISSIVE &&
	    imc_get16(mad + SMP_DR_SLID) != IMC_LID_PERMISSIVE &&
	    mad[SMP_HOP_PTR] == 0 && !(mad[SMP_STATUS] & 0x80)) {
		/* IBA 14.2.2: LID routed to the switch where the directed
		 * part begins (the LRH DLID), the DrSLID the sender's. */
		fl->mode = FLY_LID;
		lid_step(m, fl, true);
		return 0;
	}
	if (mad[1] == MAD_CLASS_SMP_DR) {
		fl->mode = FLY_DR;
		fl->dlid = fl->slid = IMC_LID_PERMISSIVE;
		rc = dr_step(m, fl, true, port);
		if (rc) {
			m->st.smps_sent--;
			fly_put(m, fl);
		}
		return rc;
	}
	fl->mode = FLY_LID;
	lid_step(m, fl, true);
	return 0;
}

int smp_send_from_sma(struct fab_mad *m, uint32_t node, unsigned port,
		      uint16_t dlid, const uint8_t *mad)
{
	struct imc_fabric_mad_addr to = { .dlid = dlid };

	return smp_start(m, node, port, &to, mad);
}

/* ---- GMPs at a port ---- */

bool fab_mad_gmp_in(struct fab_mad *m, uint32_t node, unsigned port,
		    const struct imc_ud_recv *r, uint32_t dqp)
{
	uint32_t gidx = gidx_of(m, node, port);
	struct imc_fabric_mad_addr from = {
		.dlid = r->dlid, .slid = r->slid, .dqp = dqp,
		.sqp = r->src_qp, .pkey = r->pkey, .sl = r->sl,
		.qkey = IMC_QP1_QKEY,
	};
	struct imc_fabric_mad_agent *a;
	uint8_t buf[IMC_FABRIC_MAD_SIZE];
	uint8_t method;

	if (dqp != IMC_QP1 || r->len < 24 || r->len > sizeof(buf))
		return false;
	method = r->data[SMP_METHOD];
	if (method & MAD_METHOD_RESP) {
		a = agent_for_tid(m, gidx, imc_get64(r->data + SMP_TID));
		if (!a)
			return false;
		to_agent(m, a, &from, r->data, r->len);
		return true;
	}
	if (r->data[1] == MAD_CLASS_PERF) {
		struct imc_fabric_mad_addr back = {
			.dlid = r->slid, .dqp = r->src_qp, .pkey = r->pkey,
			.sl = r->sl,
		};

		memset(buf, 0, sizeof(buf));
		memcpy(buf, r->data, r->len);
		if (sma_answer(m, node, port, buf, sizeof(buf)) == 1) {
			m->st.gmps_answered++;
			fab_gmp_send(m->f, node, port, &back, buf, r->len < 256 ?
				     r->len : sizeof(buf));
		}
		return true;
	}
	a = m->sm[gidx];
	if (!a)
		return false;
	to_agent(m, a, &from, r->data, r->len);
	return true;
}

void fab_mad_port_changed(struct fab_mad *m, uint32_t node, unsigned port,
			  enum imc_port_state old, enum imc_port_state now)
{
	sma_port_changed(m, node, port, old, now);
}

/* ---- create, destroy ---- */

int fab_mad_create(struct imc_fabric *f, struct fab_mad **out)
{
	struct fab_mad *m = calloc(1, sizeof(*m));
	int rc;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->f = f;
	imc_list_init(&m->flying);
	imc_list_init(&m->free);
	m->nports = fab_nports_total(f);
	m->agents = calloc(m->nports ? m->nports : 1, sizeof(*m->agents));
	m->sm = calloc(m->nports ? m->nports : 1, sizeof(*m->sm));
	for (uint32_t i = 0; m->agents && i < m->nports; i++)
		imc_list_init(&m->agents[i]);
	if (!m->agents || !m->sm) {
		fab_mad_destroy(m);
		return -ENOMEM;
	}
	rc = sma_init(m);
	if (rc) {
		fab_mad_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}

void fab_mad_destroy(struct fab_mad *m)
{
	struct imc_loop *loop;

	if (!m)
		return;
	loop = imc_fabric_loop(m->f);
	while (!imc_list_empty(&m->flying)) {
		struct fly *fl = imc_list_entry(m->flying.next, struct fly, link);

		imc_timer_cancel(loop, &fl->t);
		fly_put(m, fl);
	}
	while (!imc_list_empty(&m->free)) {
		struct fly *fl = imc_list_entry(m->free.next, struct fly, link);

		imc_list_del(&fl->link);
		free(fl);
	}
	/* Agents still attached are their owners' to detach; they stop
	 * hearing anything now. */
	for (uint32_t i = 0; m->agents && i < m->nports; i++) {
		struct imc_list *l;

		imc_list_foreach(l, &m->agents[i])
			imc_list_entry(l, struct imc_fabric_mad_agent, link)->m =
				NULL;
	}
	sma_fini(m);
	free(m->agents);
	free(m->sm);
	free(m);
}

/* ---- the public agent API ---- */

int imc_fabric_mad_attach(struct imc_fabric *f, uint32_t node, unsigned port,
			  imc_fabric_mad_recv_fn *recv, void *ctx,
			  struct imc_fabric_mad_agent **out)
{
	struct fab_mad *m = f ? fab_mad_of(f) : NULL;
	struct imc_fabric_mad_agent *a;
	struct fab_port_view v;

	if (!m || !recv || !out || fab_port_view(f, node, port, &v) ||
	    (v.type == IMC_NODE_SWITCH) != (port == 0))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->m = m;
	a->node = node;
	a->port = port;
	a->gidx = v.gidx;
	a->recv = recv;
	a->ctx = ctx;
	imc_list_add_tail(&m->agents[v.gidx], &a->link);
	*out = a;
	return 0;
}

void imc_fabric_mad_detach(struct imc_fabric_mad_agent *a)
{
	struct fab_mad *m;

	if (!a)
		return;
	m = a->m;
	if (m) {
		if (m->sm[a->gidx] == a) {
			m->sm[a->gidx] = NULL;
			sma_set_issm(m, a->gidx, false);
		}
		imc_list_del(&a->link);
	}
	free(a);
}

void imc_fabric_mad_set_tid_filter(struct imc_fabric_mad_agent *a,
				   uint64_t mask, uint64_t value)
{
	a->tid_mask = mask;
	a->tid_value = value & mask;
}

int imc_fabric_mad_set_sm(struct imc_fabric_mad_agent *a, bool on)
{
	struct fab_mad *m = a->m;

	if (!m)
		return -ENODEV;
	if (!on) {
		if (m->sm[a->gidx] == a) {
			m->sm[a->gidx] = NULL;
			sma_set_issm(m, a->gidx, false);
		}
		return 0;
	}
	if (m->sm[a->gidx] && m->sm[a->gidx] != a)
		return -EBUSY;
	m->sm[a->gidx] = a;
	sma_set_issm(m, a->gidx, true);
	return 0;
}

void imc_fabric_mad_port(const struct imc_fabric_mad_agent *a,
			 uint32_t *node, unsigned *port)
{
	*node = a->node;
	*port = a->port;
}

int imc_fabric_mad_send(struct imc_fabric_mad_agent *a,
			const struct imc_fabric_mad_addr *to,
			const uint8_t *mad, size_t len)
{
	struct fab_mad *m = a ? a->m : NULL;
	uint8_t cls;

	if (!m)
		return -ENODEV;
	if (!to || !mad || len < 24 || len > IMC_FABRIC_MAD_SIZE ||
	    to->dqp > IMC_QP1)
		return -EINVAL;
	cls = mad[1];
	if (cls == MAD_CLASS_SMP_LID || cls == MAD_CLASS_SMP_DR) {
		if (len != IMC_FABRIC_MAD_SIZE || to->dqp != 0)
			return -EINVAL;
		if (cls == MAD_CLASS_SMP_LID && (to->dlid == 0 ||
						 imc_lid_is_mcast(to->dlid)))
			return -EINVAL;
		return smp_start(m, a->node, a->port, to, mad);
	}
	if (to->dqp != IMC_QP1)
		return -EINVAL;
	return fab_gmp_send(m->f, a->node, a->port, to, mad, len);
}

void imc_fabric_mad_stats(const struct imc_fabric *f,
			  struct imc_fabric_mad_stats *out)
{
	const struct fab_mad *m = fab_mad_of(f);

	if (m)
		*out = m->st;
	else
		memset(out, 0, sizeof(*out));
}
