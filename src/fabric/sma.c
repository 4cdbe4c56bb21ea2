/* The SMA of every channel adapter and switch (IBA 14.2.5), the PMA's
 * PortCounters (IBA 16.1.3), and the SMA's Trap 128 (IBA 14.3.11).
 *
 * Attributes are answered from the fabric's own state where it has one
 * (LIDs, port states, MasterSMLID, MTU, LFTs, MFTs, P_Keys of CA ports,
 * counters) and from a small per-port and per-switch store for the
 * fields only an SM reads back (M_Key, GID prefix, LMC, MasterSMSL,
 * SL-to-VL and VL arbitration tables, LinearFDBTop...). Each attribute
 * is a row of one table: its id, whether Set is allowed, on which nodes,
 * and its handler.
 *
 * A switch sends Trap 128 (PortStateChange, LID routed to its port 0's
 * MasterSMLID) when a port goes down or comes up to INIT, and repeats it
 * until the SM answers with TrapRepress() carrying its TID (IBA 14.3.4),
 * at most TRAP_TRIES times, every 4.096 us * 2^SubnetTimeOut of port 0
 * (1 ms to 2 s). Only with an external SM: the built-in one reacts to
 * link changes by itself. The TID is matched on its low 32 bits, which
 * the MAD layer under an SM leaves alone.
 *
 * Not modelled, though answered: M_Key protection (the M_Key is kept,
 * never checked), switch partition enforcement (PartitionEnforcementCap
 * 0), SL-to-VL and VL arbitration (kept for the SM to read back; the
 * data path has one VL), LinearFDBTop and MulticastFDBTop (kept, not
 * enforced), extended link speeds. MulticastFDBCap is MFT_CAP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "ibmcast/packet.h"
#include "ibmcast/subnet.h"
#include "util/bytes.h"

enum {
	MFT_CAP = 4096,           /* MulticastFDBCap: MLIDs 0xC000..0xCFFF */
	LFT_CAP = 0xC000,         /* LinearFDBCap: every unicast LID */
	TRAP_TRIES = 8,
	CAPMASK_IS_SM = 1u << 1,  /* IBA 14.2.5.6 CapabilityMask */
	/* IsTrapSupported, IsSLMappingSupported, IsSystemImageGUIDSupported,
	 * IsVendorClassSupported, IsDeviceManagementSupported,
	 * IsCapabilityMaskNoticeSupported: what ibsim reports. */
	CAPMASK_DEFAULT = 0x0040C048u & ~CAPMASK_IS_SM,
	/* IsClientReregistrationSupported: a CA port's users hear
	 * ClientReregister (OpenSM sets it only where this bit is). */
	CAPMASK_CLIENT_REREG = 1u << 25,
	PSC = 0x04,               /* SwitchInfo PortStateChange */
	PMA_DATA = 64,            /* GMP data after the 40 reserved bytes */
	ATTR_CLASS_PORT_INFO = 0x0001,
	ATTR_PORT_COUNTERS = 0x0012,
	ATTR_PORT_COUNTERS_EXT = 0x001D,
};

struct sma_port {
	uint64_t mkey;
	uint64_t gid_prefix;
	uint32_t capmask;
	uint16_t mkey_lease;
	uint8_t lmc;
	uint8_t mkey_protect;
	uint8_t master_sm_sl;
	uint8_t subnet_timeout;
	uint8_t width_enabled;
	uint8_t speed_enabled;
	uint8_t vl_high_limit;
	uint8_t op_vls;
	uint8_t stall_hoq;
	uint8_t enforce;
	uint8_t mtu_cap;          /* the port's MTU when the fabric was made */
	uint8_t speed_ext_enabled;
	uint8_t error_threshold;  /* LocalPhyErrors, OverrunErrors */
	bool rereg_pending;       /* ClientReregister before ACTIVE */
	uint8_t sl2vl[8];
	uint8_t *vlarb;           /* 4 blocks of 64 bytes, when Set */
	/* The counters at the last PMA reset; NULL: never reset. Few
	 * ports are ever reset, so the store stays small. */
	struct imc_port_counters *base;
};

struct sma_switch {
	uint16_t lin_top;
	uint16_t mcast_top;
	uint8_t life_state;       /* LifeTimeValue << 3 | PSC */
	uint8_t def_port, def_mcast_pri, def_mcast_not;
	struct imc_timer trap_t;
	struct fab_mad *m;
	uint32_t node;
	uint64_t trap_tid;        /* 0: no trap outstanding */
	unsigned trap_tries;
};

struct sma_state {
	struct sma_port *p;       /* by gidx */
	struct sma_switch *sw;    /* by node (switches used) */
	uint32_t nnodes;
	uint64_t tid;
};

/* What a handler gets: the request and where it arrived. */
struct sma_req {
	struct fab_mad *m;
	struct imc_fabric *f;
	uint32_t node;
	unsigned port;            /* arrival port (a switch's: physical) */
	struct fab_port_view nv;  /* port 0 of the node */
	uint8_t method;
	uint32_t mod;
	uint8_t *data;            /* 64 bytes in and out */
};

static struct sma_port *sport(struct fab_mad *m, uint32_t gidx)
{
	return &m->sma->p[gidx];
}

bool sma_lid_match(const struct fab_mad *m, uint32_t gidx, uint16_t lid,
		   uint16_t dlid)
{
	uint16_t mask = (uint16_t)~((1u << m->sma->p[gidx].lmc) - 1);

	return lid && (dlid & mask) == (lid & mask);
}

void sma_set_issm(struct fab_mad *m, uint32_t gidx, bool on)
{
	if (on)
		sport(m, gidx)->capmask |= CAPMASK_IS_SM;
	else
		sport(m, gidx)->capmask &= ~CAPMASK_IS_SM;
}

/* ---- NodeInfo, NodeDescription (IBA 14.2.5.3, 14.2.5.2) ---- */

static uint64_t port_guid(const struct imc_topo *t, uint32_t node,
			  unsigned port)
{
	const struct imc_topo_node *tn = &t->node[node];
	uint64_t g = tn->type == IMC_NODE_SWITCH ? tn->port[0].guid :
						   tn->port[port].guid;

	return g ? g : tn->guid;
}

static int h_node_info(struct sma_req *r)
{
	const struct imc_topo *t = imc_fabric_topo(r->f);
	const struct imc_topo_node *tn = &t->node[r->node];
	bool sw = tn->type == IMC_NODE_SWITCH;
	uint8_t *d = r->data;

	d[0] = 1;                                 /* BaseVersion */
	d[1] = 1;                                 /* ClassVersion */
	d[2] = sw ? 2 : 1;                        /* NodeType */
	d[3] = (uint8_t)tn->nports;
	imc_put64(d + 4, tn->guid);               /* SystemImageGUID */
	imc_put64(d + 12, tn->guid);
	imc_put64(d + 20, port_guid(t, r->node, r->port));
	imc_put16(d + 28, sw ? 1 : IMC_PKEY_TABLE_MAX);  /* PartitionCap */
	imc_put16(d + 30, 0);                     /* DeviceID */
	imc_put32(d + 32, 0);                     /* Revision */
	/* LocalPortNum: the port the SMP came in by (IBA 14.2.5.3). */
	imc_put32(d + 36, (uint32_t)r->port << 24);  /* VendorID 0 */
	return 0;
}

static int h_node_desc(struct sma_req *r)
{
	const char *name = imc_fabric_topo(r->f)->node[r->node].name;
	size_t n = name ? strlen(name) : 0;

	memcpy(r->data, name, n < 64 ? n : 64);
	return 0;
}

/* ---- PortInfo (IBA 14.2.5.6) ---- */

static uint8_t width_bits(unsigned lanes)
{
	switch (lanes) {
	case 1:
		return 1;
	case 8:
		return 4;
	case 12:
		return 8;
	default:
		return 2;
	}
}

/* The port PortInfo speaks of: bits 7..0 of the modifier for a switch;
 * for a CA, the arrival port when 0 (IBA 14.2.5.6). Bit 31 is
 * SMSupportsExtendedSpeeds, which OpenSM sets on its Sets; the bits
 * between are reserved. -1 for a bad port number. */
static int pi_port(const struct sma_req *r)
{
	unsigned pn = r->mod & 0xff;

	if (r->nv.type != IMC_NODE_SWITCH && pn == 0)
		return (int)r->port;
	return pn <= r->nv.nports ? (int)pn : -1;
}

static void pi_fill(struct sma_req *r, unsigned pn)
{
	struct fab_port_view v;
	struct sma_port *sp;
	uint8_t *d = r->data;
	bool sw = r->nv.type == IMC_NODE_SWITCH;
	unsigned phys;

	fab_port_view(r->f, r->node, pn, &v);
	sp = sport(r->m, v.gidx);
	memset(d, 0, 64);
	imc_put64(d + 0, sp->mkey);
	imc_put64(d + 8, sp->gid_prefix);
	/* A switch's LID and SM LID live in port 0 (IBA 14.2.5.6). */
	if (!sw || pn == 0) {
		imc_put16(d + 16, v.lid);
		imc_put16(d + 18, v.sm_lid);
	}
	imc_put32(d + 20, sp->capmask);
	imc_put16(d + 26, sp->mkey_lease);
	d[28] = (uint8_t)r->port;                 /* LocalPortNum */
	d[29] = sp->width_enabled;
	d[30] = 1 | 2 | 4 | 8;                    /* LinkWidthSupported */
	d[31] = width_bits(v.width);
	d[32] = (uint8_t)(7 << 4 | v.state);     /* SDR|DDR|QDR, PortState */
	phys = (v.link_up || (sw && pn == 0)) ? 5 : 2;  /* LinkUp : Polling */
	d[33] = (uint8_t)(phys << 4 | 2);
	d[34] = (uint8_t)(sp->mkey_protect << 6 | sp->lmc);
	d[35] = (uint8_t)(4 << 4 | sp->speed_enabled);  /* active QDR */
	d[36] = (uint8_t)(v.mtu << 4 | sp->master_sm_sl);
	d[37] = 4 << 4;                           /* VLCap VL0-7 */
	d[38] = sp->vl_high_limit;
	d[39] = 8;                                /* VLArbitrationHighCap */
	d[40] = 8;                                /* VLArbitrationLowCap */
	d[41] = sp->mtu_cap;                      /* MTUCap */
	d[42] = sp->stall_hoq;
	d[43] = (uint8_t)(sp->op_vls << 4 | sp->enforce);
	d[50] = 1;                                /* GUIDCap */
	d[51] = sp->subnet_timeout & 0x1f;
	d[52] = 8;                                /* RespTimeValue */
	d[53] = sp->error_threshold;
	d[63] = sp->speed_ext_enabled;            /* no extended speed runs */
}

/* The state part of a PortInfo Set: 0 no change, DOWN, ARMED from
 * INIT, ACTIVE from ARMED (IBA 14.2.5.6 PortState; INIT is not a state
 * an SM sets). A switch's port 0 follows the switch's LID instead. */
static int pi_state_check(const struct sma_req *r, unsigned pn,
			  unsigned st, const struct fab_port_view *v)
{
	if (st == 0 || st == v->state ||
	    (r->nv.type == IMC_NODE_SWITCH && pn == 0))
		return 0;
	if (st == IMC_PORT_DOWN ||
	    (st == IMC_PORT_ARMED && v->state == IMC_PORT_INIT) ||
	    (st == IMC_PORT_ACTIVE && v->state == IMC_PORT_ARMED))
		return 0;
	return MAD_STATUS_BAD_FIELD;
}

static int pi_set(struct sma_req *r, unsigned pn)
{
	const uint8_t *d = r->data;
	bool sw = r->nv.type == IMC_NODE_SWITCH;
	struct fab_port_view v;
	struct sma_port *sp;
	uint16_t lid = imc_get16(d + 16);
	unsigned mtu = d[36] >> 4;
	int st;

	fab_port_view(r->f, r->node, pn, &v);
	sp = sport(r->m, v.gidx);
	/* Checks first, so that a bad Set changes nothing. */
	if ((!sw || pn == 0) && lid > IMC_LID_UNICAST_MAX)
		return MAD_STATUS_BAD_FIELD;
	st = pi_state_check(r, pn, d[32] & 0x0f, &v);
	if (st)
		return st;
	if (mtu && (!imc_mtu_bytes(mtu) || mtu > sp->mtu_cap ||
		    (pn == 0 && sw)))
		mtu = 0;
	sp->mkey = imc_get64(d + 0);
	sp->gid_prefix = imc_get64(d + 8);
	sp->mkey_lease = imc_get16(d + 26);
	if (d[29])
		sp->width_enabled = d[29] == 0xff ? 0x0f : d[29];
	if (d[35] & 0x0f)
		sp->speed_enabled = d[35] & 0x0f;
	sp->mkey_protect = d[34] >> 6;
	sp->master_sm_sl = d[36] & 0x0f;
	sp->vl_high_limit = d[38];
	sp->stall_hoq = d[42];
	if (d[43] >> 4)
		sp->op_vls = d[43] >> 4;
	sp->enforce = d[43] & 0x0f;
	sp->subnet_timeout = d[51] & 0x1f;
	sp->speed_ext_enabled = d[63] & 0x1f;
	sp->error_threshold = d[53];
	if (!sw || pn == 0) {
		sp->lmc = d[34] & 7;
		if (fab_port_lid_set(r->f, r->node, pn, lid))
			return MAD_STATUS_BAD_FIELD;
		fab_port_sm_lid_set(r->f, r->node, pn, imc_get16(d + 18));
	}
	if (mtu)
		imc_fabric_port_mtu_set(r->f, r->node, pn, mtu);
	if ((d[32] & 0x0f) && (d[32] & 0x0f) != v.state &&
	    !(sw && pn == 0))
		fab_port_state_set(r->f, r->node, pn,
				   (enum imc_port_state)(d[32] & 0x0f));
	/* ClientReregister (IBA 14.4.11): the port's users hear it once the
	 * port is ACTIVE, now or when it gets there. */
	if (!sw && (d[51] & 0x80)) {
		fab_port_view(r->f, r->node, pn, &v);
		if (v.state == IMC_PORT_ACTIVE)
			fab_port_post(r->f, r->node, pn,
				      IMC_PORT_EV_CLIENT_REREGISTER);
		else
			sp->rereg_pending = true;
	}
	return 0;
}

static int h_port_info(struct sma_req *r)
{
	int pn = pi_port(r);
	int st = 0;

	if (pn < 0)
		return MAD_STATUS_BAD_FIELD;
	if (r->method == MAD_METHOD_SET) {
		/* A CA's SMA sets only the port the SMP came in by. */
		if (r->nv.type != IMC_NODE_SWITCH && (unsigned)pn != r->port)
			return MAD_STATUS_BAD_FIELD;
		st = pi_set(r, (unsigned)pn);
	}
	pi_fill(r, (unsigned)pn);
	return st;
}

/* ---- SwitchInfo, LFT, MFT (IBA 14.2.5.4, 14.2.5.10, 14.2.5.12) ---- */

static struct sma_switch *sw_of(struct sma_req *r)
{
	return &r->m->sma->sw[r->node];
}

static int h_switch_info(struct sma_req *r)
{
	struct sma_switch *s = sw_of(r);
	uint8_t *d = r->data;

	if (r->method == MAD_METHOD_SET) {
		s->lin_top = imc_get16(d + 6);
		s->def_port = d[8];
		s->def_mcast_pri = d[9];
		s->def_mcast_not = d[10];
		/* LifeTimeValue is set; PortStateChange is cleared by
		 * writing 1 (IBA 14.2.5.4). */
		s->life_state = (uint8_t)((d[11] & 0xf8) |
					  (s->life_state & PSC & ~(d[11] & PSC)));
		s->mcast_top = imc_get16(d + 18);
	}
	memset(d, 0, 64);
	imc_put16(d + 0, LFT_CAP);
	imc_put16(d + 2, 0);                      /* RandomFDBCap */
	imc_put16(d + 4, MFT_CAP);
	imc_put16(d + 6, s->lin_top);
	d[8] = s->def_port;
	d[9] = s->def_mcast_pri;
	d[10] = s->def_mcast_not;
	d[11] = s->life_state;
	imc_put16(d + 12, 0);                     /* LIDsPerPort */
	imc_put16(d + 14, 0);                     /* PartitionEnforcementCap */
	d[16] = 0;                                /* base switch port 0 */
	imc_put16(d + 18, s->mcast_top);
	return 0;
}

static int h_lft(struct sma_req *r)
{
	if (r->mod >= LFT_CAP / IMC_LFT_BLOCK)
		return MAD_STATUS_BAD_FIELD;
	if (r->method == MAD_METHOD_SET &&
	    fab_lft_block_set(r->f, r->node, r->mod, r->data))
		return MAD_STATUS_BAD_FIELD;
	fab_lft_block_get(r->f, r->node, r->mod, r->data);
	return 0;
}

/* AttributeModifier: bits 31..28 the position (16 ports each), bits
 * 8..0 the block of 32 MLIDs (IBA 14.2.5.12). */
static int h_mft(struct sma_req *r)
{
	unsigned pos = r->mod >> 28, block = r->mod & 0x1ff;
	unsigned nports = r->nv.nports;

	if ((r->mod & 0x0ffffe00u) || block >= MFT_CAP / 32 ||
	    pos * 16 > nports)
		return MAD_STATUS_BAD_FIELD;
	for (unsigned i = 0; i < 32; i++) {
		uint16_t mlid = (uint16_t)(IMC_MLID_MIN + block * 32 + i);
		struct imc_portmask mask;
		uint16_t bits = 0;

		imc_fabric_mft_get(r->f, r->node, mlid, &mask);
		if (r->method == MAD_METHOD_SET) {
			uint16_t in = imc_get16(r->data + 2 * i);

			for (unsigned b = 0; b < 16; b++) {
				unsigned p = pos * 16 + b;

				if (p > nports)
					break;
				if (in & (1u << b))
					imc_portmask_set(&mask, p);
				else
					imc_portmask_clear(&mask, p);
			}
			if (imc_fabric_mft_set(r->f, r->node, mlid, &mask))
				return MAD_STATUS_BAD_FIELD;
		}
		for (unsigned b = 0; b < 16; b++)
			if (pos * 16 + b <= nports &&
			    imc_portmask_test(&mask, pos * 16 + b))
				bits |= (uint16_t)(1u << b);
		imc_put16(r->data + 2 * i, bits);
	}
	return 0;
}

/* ---- P_KeyTable, SLtoVL, VLArbitration, GUIDInfo, SMInfo ---- */

static int h_pkey(struct sma_req *r)
{
	bool sw = r->nv.type == IMC_NODE_SWITCH;
	unsigned block = r->mod & 0xffff, pn = sw ? r->mod >> 16 : r->port;
	uint16_t keys[IMC_PKEY_TABLE_MAX];
	unsigned n = 0, cap = sw ? 1 : IMC_PKEY_TABLE_MAX;

	if (pn > r->nv.nports || block * 32 >= cap)
		return MAD_STATUS_BAD_FIELD;
	if (r->method == MAD_METHOD_SET && !sw) {
		for (unsigned i = 0; i < 32; i++)
			keys[i] = imc_get16(r->data + 2 * i);
		n = 32;
		while (n && !(keys[n - 1] & 0x7fff))
			n--;
		if (imc_fabric_pkey_set(r->f, r->node, pn, keys, n))
			return MAD_STATUS_BAD_FIELD;
	}
	fab_port_pkeys(r->f, r->node, pn, keys, &n);
	memset(r->data, 0, 64);
	for (unsigned i = 0; i < n && i < 32; i++)
		imc_put16(r->data + 2 * i, keys[i]);
	return 0;
}

/* The port a per-port table names: a switch's output port in bits
 * 7..0 of the modifier (SLtoVL, IBA 14.2.5.8) or 31..16 (VLArbitration,
 * 14.2.5.9); a CA's the arrival port. */
static int table_port(struct sma_req *r, unsigned sw_port)
{
	if (r->nv.type != IMC_NODE_SWITCH)
		return (int)r->port;
	return sw_port <= r->nv.nports ? (int)sw_port : -1;
}

static int h_sl2vl(struct sma_req *r)
{
	int pn = table_port(r, r->mod & 0xff);
	struct fab_port_view v;
	struct sma_port *sp;

	if (pn < 0)
		return MAD_STATUS_BAD_FIELD;
	fab_port_view(r->f, r->node, (unsigned)pn, &v);
	sp = sport(r->m, v.gidx);
	if (r->method == MAD_METHOD_SET)
		memcpy(sp->sl2vl, r->data, 8);
	memset(r->data, 0, 64);
	memcpy(r->data, sp->sl2vl, 8);
	return 0;
}

static int h_vlarb(struct sma_req *r)
{
	int pn = table_port(r, r->mod & 0xffff);
	unsigned block = r->mod >> 16;
	struct fab_port_view v;
	struct sma_port *sp;

	if (pn < 0 || block < 1 || block > 4)
		return MAD_STATUS_BAD_FIELD;
	fab_port_view(r->f, r->node, (unsigned)pn, &v);
	sp = sport(r->m, v.gidx);
	if (r->method == MAD_METHOD_SET) {
		if (!sp->vlarb) {
			sp->vlarb = calloc(4, 64);
			if (!sp->vlarb)
				return MAD_STATUS_BAD_FIELD;
		}
		memcpy(sp->vlarb + (block - 1) * 64, r->data, 64);
	}
	if (sp->vlarb)
		memcpy(r->data, sp->vlarb + (block - 1) * 64, 64);
	else
		memset(r->data, 0, 64);
	return 0;
}

static int h_guid_info(struct sma_req *r)
{
	const struct imc_topo *t = imc_fabric_topo(r->f);

	/* One GUID (GUIDCap 1): the port's; a Set (alias GUIDs) does not
	 * change it and is answered with what stays. */
	if (r->mod != 0)
		return MAD_STATUS_BAD_FIELD;
	memset(r->data, 0, 64);
	imc_put64(r->data, port_guid(t, r->node, r->port));
	return 0;
}

/* ---- the attribute table ---- */

struct sma_attr {
	uint16_t id;
	bool set;                 /* SubnSet allowed */
	bool switch_only;
	int (*fn)(struct sma_req *r);
};

static const struct sma_attr sma_attrs[] = {
	{ 0x0010, false, false, h_node_desc },
	{ 0x0011, false, false, h_node_info },
	{ 0x0012, true, true, h_switch_info },
	{ 0x0014, true, false, h_guid_info },
	{ 0x0015, true, false, h_port_info },
	{ 0x0016, true, false, h_pkey },
	{ 0x0017, true, false, h_sl2vl },
	{ 0x0018, true, false, h_vlarb },
	{ 0x0019, true, true, h_lft },
	{ 0x001B, true, true, h_mft },
};

static int smp_attr(struct sma_req *r, uint16_t id)
{
	for (size_t i = 0; i < sizeof(sma_attrs) / sizeof(sma_attrs[0]); i++) {
		const struct sma_attr *a = &sma_attrs[i];

		if (a->id != id)
			continue;
		if (a->switch_only && r->nv.type != IMC_NODE_SWITCH)
			return MAD_STATUS_UNSUP_ATTR;
		if (r->method == MAD_METHOD_SET && !a->set)
			return MAD_STATUS_UNSUP_ATTR;
		return a->fn(r);
	}
	return MAD_STATUS_UNSUP_ATTR;
}

/* ---- the PMA (IBA 16.1.3.5, 16.1.4.11) ---- */

static uint32_t sat32(uint64_t v)
{
	return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

static uint16_t sat16(uint64_t v)
{
	return v > 0xffff ? 0xffff : (uint16_t)v;
}

static uint64_t xmit_discards(const struct imc_port_counters *c)
{
	return c->drops[IMC_DROP_LINK_DOWN] + c->drops[IMC_DROP_PORT_STATE] +
	       c->drops[IMC_DROP_MTU];
}

static uint64_t relay_errors(const struct imc_port_counters *c)
{
	return c->drops[IMC_DROP_NO_ROUTE] + c->drops[IMC_DROP_NO_MFT];
}

/* Counters of one port since its last reset, or the sum over a switch's
 * ports for PortSelect 0xFF. */
static int pc_read(struct sma_req *r, unsigned sel, struct imc_port_counters *c)
{
	unsigned lo = sel, hi = sel;

	memset(c, 0, sizeof(*c));
	if (sel == 0xff && r->nv.type == IMC_NODE_SWITCH) {
		lo = 1;
		hi = r->nv.nports;
	} else if (sel == 0 && r->nv.type != IMC_NODE_SWITCH) {
		lo = hi = r->port;
	} else if (sel > r->nv.nports) {
		return -1;
	}
	for (unsigned p = lo; p <= hi; p++) {
		static const struct imc_port_counters zero;
		struct imc_port_counters now;
		struct fab_port_view v;
		const struct imc_port_counters *b;

		fab_port_view(r->f, r->node, p, &v);
		b = sport(r->m, v.gidx)->base;
		if (!b)
			b = &zero;
		imc_fabric_port_counters(r->f, r->node, p, &now);
		c->tx_packets += now.tx_packets - b->tx_packets;
		c->rx_packets += now.rx_packets - b->rx_packets;
		c->tx_bytes += now.tx_bytes - b->tx_bytes;
		c->rx_bytes += now.rx_bytes - b->rx_bytes;
		for (int d = 0; d < IMC_DROP__COUNT; d++)
			c->drops[d] += now.drops[d] - b->drops[d];
	}
	return 0;
}

/* A Set() resets the counters it selects (CounterSelect); here any Set
 * resets them all, which is what perfquery -r asks. */
static int pc_reset(struct sma_req *r, unsigned sel)
{
	unsigned lo = sel, hi = sel;

	if (sel == 0xff && r->nv.type == IMC_NODE_SWITCH) {
		lo = 1;
		hi = r->nv.nports;
	} else if (sel == 0 && r->nv.type != IMC_NODE_SWITCH) {
		lo = hi = r->port;
	}
	for (unsigned p = lo; p <= hi && p <= r->nv.nports; p++) {
		struct fab_port_view v;
		struct sma_port *sp;

		fab_port_view(r->f, r->node, p, &v);
		sp = sport(r->m, v.gidx);
		if (!sp->base) {
			sp->base = malloc(sizeof(*sp->base));
			if (!sp->base)
				return -ENOMEM;
		}
		imc_fabric_port_counters(r->f, r->node, p, sp->base);
	}
	return 0;
}

static int h_port_counters(struct sma_req *r, bool ext)
{
	uint8_t *d = r->data;
	unsigned sel = d[1];
	struct imc_port_counters c;

	if (sel > r->nv.nports && !(sel == 0xff &&
				    r->nv.type == IMC_NODE_SWITCH))
		return MAD_STATUS_BAD_FIELD;
	if (r->method == MAD_METHOD_SET && pc_reset(r, sel))
		return MAD_STATUS_BAD_FIELD;
	if (pc_read(r, sel, &c))
		return MAD_STATUS_BAD_FIELD;
	memset(d + 4, 0, 60);
	if (ext) {
		/* 64-bit counters; data in 4-byte words (IBA 16.1.4.11). */
		imc_put64(d + 8, c.tx_bytes / 4);
		imc_put64(d + 16, c.rx_bytes / 4);
		imc_put64(d + 24, c.tx_packets);
		imc_put64(d + 32, c.rx_packets);
		return 0;
	}
	imc_put16(d + 12, sat16(relay_errors(&c)));
	imc_put16(d + 14, sat16(xmit_discards(&c)));
	imc_put32(d + 24, sat32(c.tx_bytes / 4));
	imc_put32(d + 28, sat32(c.rx_bytes / 4));
	imc_put32(d + 32, sat32(c.tx_packets));
	imc_put32(d + 36, sat32(c.rx_packets));
	return 0;
}

static int pma_attr(struct sma_req *r, uint16_t id)
{
	switch (id) {
	case ATTR_CLASS_PORT_INFO:
		if (r->method != MAD_METHOD_GET)
			return MAD_STATUS_UNSUP_ATTR;
		memset(r->data, 0, 64);
		r->data[0] = 1;                   /* BaseVersion */
		r->data[1] = 1;                   /* ClassVersion */
		/* IsExtendedWidthSupported: PortCountersExtended. */
		imc_put16(r->data + 2, 1u << 9);
		r->data[7] = 18;                  /* RespTimeValue */
		return 0;
	case ATTR_PORT_COUNTERS:
		return h_port_counters(r, false);
	case ATTR_PORT_COUNTERS_EXT:
		return h_port_counters(r, true);
	}
	return MAD_STATUS_UNSUP_ATTR;
}

/* ---- answering ---- */

int sma_answer(struct fab_mad *m, uint32_t node, unsigned port, uint8_t *mad,
	       size_t len)
{
	struct sma_req r = { .m = m, .f = m->f, .node = node, .port = port };
	uint8_t cls, method;
	size_t doff;
	int st;

	if (len < IMC_FABRIC_MAD_SIZE || fab_port_view(m->f, node, 0, &r.nv) ||
	    port > r.nv.nports)
		return -EINVAL;
	cls = mad[1];
	method = mad[SMP_METHOD];
	if (method & MAD_METHOD_RESP)
		return 0;
	if (cls != MAD_CLASS_SMP_LID && cls != MAD_CLASS_SMP_DR &&
	    cls != MAD_CLASS_PERF)
		return 0;
	if (method == MAD_METHOD_TRAP || method == MAD_METHOD_TRAP_REPRESS)
		return 0;
	doff = cls == MAD_CLASS_PERF ? PMA_DATA : SMP_DATA;
	r.method = method;
	r.mod = imc_get32(mad + SMP_ATTR_MOD);
	r.data = mad + doff;
	if (mad[0] != 1 || mad[2] != 1)
		st = MAD_STATUS_BAD_VERSION;
	else if (method != MAD_METHOD_GET && method != MAD_METHOD_SET)
		st = MAD_STATUS_UNSUP_METHOD;
	else if (cls == MAD_CLASS_PERF)
		st = pma_attr(&r, imc_get16(mad + SMP_ATTR_ID));
	else
		st = smp_attr(&r, imc_get16(mad + SMP_ATTR_ID));
	mad[SMP_METHOD] = MAD_METHOD_GET_RESP;
	if (cls == MAD_CLASS_SMP_DR)
		/* The D bit: the answer travels the return path. */
		imc_put16(mad + SMP_STATUS, (uint16_t)(0x8000 | st));
	else
		imc_put16(mad + SMP_STATUS, (uint16_t)st);
	return 1;
}

/* ---- Trap 128 ---- */

static imc_time_t trap_interval(struct fab_mad *m, uint32_t node)
{
	struct fab_port_view v;
	imc_time_t t;
	unsigned to;

	fab_port_view(m->f, node, 0, &v);
	to = sport(m, v.gidx)->subnet_timeout;
	t = (imc_time_t)4096 << (to > 20 ? 20 : to);
	if (t < IMC_NSEC_PER_MSEC)
		t = IMC_NSEC_PER_MSEC;
	if (t > 2 * IMC_NSEC_PER_SEC)
		t = 2 * IMC_NSEC_PER_SEC;
	return t;
}

static void trap_send(struct sma_switch *s)
{
	struct fab_mad *m = s->m;
	struct fab_port_view v;
	uint8_t mad[IMC_FABRIC_MAD_SIZE] = { 0 };
	uint8_t *d = mad + SMP_DATA;

	fab_port_view(m->f, s->node, 0, &v);
	if (!v.lid || !v.sm_lid) {
		s->trap_tid = 0;
		return;
	}
	mad[0] = 1;
	mad[1] = MAD_CLASS_SMP_LID;
	mad[2] = 1;
	mad[SMP_METHOD] = MAD_METHOD_TRAP;
	imc_put64(mad + SMP_TID, s->trap_tid);
	imc_put16(mad + SMP_ATTR_ID, ATTR_NOTICE);
	/* Notice (IBA 13.4.8.2): generic, urgent, producer a switch,
	 * trap 128, issuer and data the switch's LID. */
	d[0] = 0x80 | 1;
	d[3] = 2;
	imc_put16(d + 4, 128);
	imc_put16(d + 6, v.lid);
	imc_put16(d + 10, v.lid);
	m->st.traps_sent++;
	smp_send_from_sma(m, s->node, 0, v.sm_lid, mad);
	if (++s->trap_tries < TRAP_TRIES)
		imc_timer_arm_in(imc_fabric_loop(m->f), &s->trap_t,
				 trap_interval(m, s->node));
	else
		s->trap_tid = 0;
}

static void trap_fire(struct imc_timer *t)
{
	struct sma_switch *s = imc_container_of(t, struct sma_switch, trap_t);

	if (s->trap_tid)
		trap_send(s);
}

bool sma_trap_repress(struct fab_mad *m, uint32_t node, uint64_t tid)
{
	struct sma_switch *s;

	if (node >= m->sma->nnodes)
		return false;
	s = &m->sma->sw[node];
	/* The low 32 bits only: the MAD layer under an SM (Linux's, and
	 * umad2sim's as an ibsim-protocol server passes it on) puts its own
	 * agent number into the high 32 bits of every request the SM
	 * sends, the TrapRepress() included. */
	if (!s->trap_tid || s->trap_tid != (tid & 0xffffffffull))
		return false;
	s->trap_tid = 0;
	imc_timer_cancel(imc_fabric_loop(m->f), &s->trap_t);
	return true;
}

void sma_port_changed(struct fab_mad *m, uint32_t node, unsigned port,
		      enum imc_port_state old, enum imc_port_state now)
{
	struct fab_port_view v;
	struct sma_switch *s;

	if (fab_port_view(m->f, node, port, &v))
		return;
	if (v.type != IMC_NODE_SWITCH) {
		struct sma_port *sp = sport(m, v.gidx);

		if (now == IMC_PORT_ACTIVE && sp->rereg_pending) {
			sp->rereg_pending = false;
			fab_port_post(m->f, node, port,
				      IMC_PORT_EV_CLIENT_REREGISTER);
		}
		return;
	}
	if (port == 0)
		return;
	/* IBA 14.2.5.4 PortStateChange: a port went down, or up to INIT. */
	if (!(now == IMC_PORT_DOWN || (old == IMC_PORT_DOWN &&
				       now == IMC_PORT_INIT)))
		return;
	s = &m->sma->sw[node];
	s->life_state |= PSC;
	if (!fab_external_sm(m->f))
		return;
	s->trap_tid = 0x5ad00000u | (++m->sma->tid & 0xfffff);
	s->trap_tries = 0;
	imc_timer_cancel(imc_fabric_loop(m->f), &s->trap_t);
	/* From the loop, after the change that caused it is complete. */
	imc_timer_arm_in(imc_fabric_loop(m->f), &s->trap_t, 0);
}

/* ---- state ---- */

int sma_init(struct fab_mad *m)
{
	struct imc_fabric *f = m->f;
	const struct imc_topo *t = imc_fabric_topo(f);
	struct sma_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	m->sma = s;
	s->nnodes = t->nnodes;
	s->p = calloc(m->nports ? m->nports : 1, sizeof(*s->p));
	s->sw = calloc(t->nnodes ? t->nnodes : 1, sizeof(*s->sw));
	if (!s->p || !s->sw)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->nports; i++) {
		struct sma_port *sp = &s->p[i];

		sp->mtu_cap = IMC_MTU_4096;

		sp->gid_prefix = 0xfe80000000000000ull;
		sp->capmask = CAPMASK_DEFAULT;
		sp->width_enabled = 0x0f;
		sp->speed_enabled = 7;
		sp->op_vls = 1;
		/* SL n on VL n, SL 15 on VL 7: ibsim's default. */
		for (int j = 0; j < 8; j++)
			sp->sl2vl[j] = (uint8_t)((2 * j) << 4 | (2 * j + 1));
		sp->sl2vl[7] = 0xe7;
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		struct sma_switch *sw = &s->sw[i];

		for (unsigned p = 0; p <= t->node[i].nports; p++) {
			struct fab_port_view v;

			if (fab_port_view(f, i, p, &v))
				continue;
			s->p[v.gidx].mtu_cap = v.mtu;
			if (v.type == IMC_NODE_HCA)
				s->p[v.gidx].capmask |= CAPMASK_CLIENT_REREG;
		}

		sw->m = m;
		sw->node = i;
		sw->def_mcast_pri = 0xff;
		sw->def_mcast_not = 0xff;
		imc_timer_init(&sw->trap_t, trap_fire);
	}
	return 0;
}

void sma_fini(struct fab_mad *m)
{
	struct sma_state *s = m->sma;

	if (!s)
		return;
	for (uint32_t i = 0; s->sw && i < s->nnodes; i++)
		imc_timer_cancel(imc_fabric_loop(m->f), &s->sw[i].trap_t);
	for (uint32_t i = 0; s->p && i < m->nports; i++) {
		free(s->p[i].vlarb);
		free(s->p[i].base);
	}
	free(s->p);
	free(s->sw);
	free(s);
	m->sma = NULL;
}

/* ---- public ---- */

int imc_fabric_sma_get(struct imc_fabric *f, uint32_t node, unsigned port,
		       uint16_t attr_id, uint32_t attr_mod, uint8_t out[64])
{
	uint8_t mad[IMC_FABRIC_MAD_SIZE] = { 0 };
	int rc;

	mad[0] = 1;
	mad[1] = MAD_CLASS_SMP_LID;
	mad[2] = 1;
	mad[SMP_METHOD] = MAD_METHOD_GET;
	imc_put16(mad + SMP_ATTR_ID, attr_id);
	imc_put32(mad + SMP_ATTR_MOD, attr_mod);
	rc = imc_fabric_sma_process(f, node, port, mad, sizeof(mad));
	if (rc < 0)
		return rc;
	memcpy(out, mad + SMP_DATA, 64);
	return imc_get16(mad + SMP_STATUS) & 0x7fff;
}

int imc_fabric_sma_process(struct imc_fabric *f, uint32_t node, unsigned port,
			   uint8_t *mad, size_t len)
{
	struct fab_mad *m = f ? fab_mad_of(f) : NULL;
	struct fab_port_view v;

	if (!m || !mad || fab_port_view(f, node, port, &v) ||
	    (v.type != IMC_NODE_SWITCH && port == 0))
		return -EINVAL;
	return sma_answer(m, node, port, mad, len);
}
