/* SA attribute records: MCMemberRecord, PathRecord, ClassPortInfo,
 * InformInfo and Notice. Byte offsets follow the IBA tables cited at each
 * function; where rdma-core has a struct for the record, its offsets are
 * checked at compile time.
 */
#include <errno.h>
#include <string.h>

#include "ibmcast/sa_attr.h"
#include "wire/bytes.h"

_Static_assert(sizeof(struct umad_sa_mcmember_record) == IMC_MCMR_SIZE,
	       "MCMemberRecord size");
_Static_assert(offsetof(struct umad_sa_mcmember_record, qkey) == 32, "Q_Key");
_Static_assert(offsetof(struct umad_sa_mcmember_record, mlid) == 36, "MLID");
_Static_assert(offsetof(struct umad_sa_mcmember_record, mtu) == 38, "MTU");
_Static_assert(offsetof(struct umad_sa_mcmember_record, pkey) == 40, "P_Key");
_Static_assert(offsetof(struct umad_sa_mcmember_record, rate) == 42, "Rate");
_Static_assert(offsetof(struct umad_sa_mcmember_record, sl_flow_hop) == 44,
	       "SL/FlowLabel/HopLimit");
_Static_assert(offsetof(struct umad_sa_mcmember_record, scope_state) == 48,
	       "Scope/JoinState");
_Static_assert(offsetof(struct umad_sa_mcmember_record, proxy_join) == 49,
	       "ProxyJoin");
_Static_assert(offsetof(struct umad_sa_mcmember_record, pad) == 52, "pad");
_Static_assert(sizeof(struct umad_class_port_info) ==
	       IMC_CLASS_PORT_INFO_SIZE, "ClassPortInfo size");
_Static_assert(offsetof(struct umad_class_port_info, cap_mask2_resp_time) == 4,
	       "CapabilityMask2");
_Static_assert(offsetof(struct umad_class_port_info, redir_tc_sl_fl) == 24,
	       "RedirectTC");
_Static_assert(offsetof(struct umad_class_port_info, redir_qp) == 32,
	       "RedirectQP");
_Static_assert(offsetof(struct umad_class_port_info, trap_tc_sl_fl) == 56,
	       "TrapTC");
_Static_assert(offsetof(struct umad_class_port_info, trap_hl_qp) == 64,
	       "TrapHL");
_Static_assert(offsetof(struct umad_class_port_info, trap_qkey) == 68,
	       "TrapQ_Key");

enum {
	SEL_SHIFT = UMAD_SA_SELECTOR_SHIFT,
	VAL_MASK = UMAD_SA_RATE_MTU_PKT_LIFE_MASK,
	SEL_MAX = UMAD_SA_SELECTOR_MASK,
	FLOW_MAX = 0xfffff,
	QPN_MAX = 0xffffff,
};

/* Selector (2 bits) and value (6 bits) in one byte, IBA 15.2.5.16. */
static bool sel_ok(uint8_t sel, uint8_t val)
{
	return sel <= SEL_MAX && val <= VAL_MASK;
}

static uint8_t sel_byte(uint8_t sel, uint8_t val)
{
	return (uint8_t)(sel << SEL_SHIFT | val);
}

static void sel_split(uint8_t b, uint8_t *sel, uint8_t *val)
{
	*sel = b >> SEL_SHIFT;
	*val = b & VAL_MASK;
}

const char *imc_sa_selector_str(unsigned sel)
{
	switch (sel) {
	case UMAD_SA_SELECTOR_GREATER_THAN:
		return "GREATER_THAN";
	case UMAD_SA_SELECTOR_LESS_THAN:
		return "LESS_THAN";
	case UMAD_SA_SELECTOR_EXACTLY:
		return "EXACTLY";
	case UMAD_SA_SELECTOR_LARGEST_AVAIL:
		return "LARGEST_AVAIL";
	}
	return "INVALID";
}

bool imc_sa_selector_match(unsigned sel, int cmp)
{
	switch (sel) {
	case UMAD_SA_SELECTOR_GREATER_THAN:
		return cmp > 0;
	case UMAD_SA_SELECTOR_LESS_THAN:
		return cmp < 0;
	case UMAD_SA_SELECTOR_EXACTLY:
		return cmp == 0;
	case UMAD_SA_SELECTOR_LARGEST_AVAIL:
		return true;
	}
	return false;
}

/* MCMemberRecord, IBA 15.2.5.17 Table 205. */
int imc_mcmr_pack(const struct imc_mcmr *r, uint8_t *buf, size_t len)
{
	if (len < IMC_MCMR_SIZE)
		return -ENOSPC;
	if (!sel_ok(r->mtu_sel, r->mtu) || !sel_ok(r->rate_sel, r->rate) ||
	    !sel_ok(r->life_sel, r->life) || r->sl > 0xf ||
	    r->flow_label > FLOW_MAX || r->scope > 0xf ||
	    r->join_state > 0xf || r->resv49 > 0x7f)
		return -EINVAL;
	memcpy(buf, r->mgid.raw, 16);
	memcpy(buf + 16, r->port_gid.raw, 16);
	imc_put32(buf + 32, r->qkey);
	imc_put16(buf + 36, r->mlid);
	buf[38] = sel_byte(r->mtu_sel, r->mtu);
	buf[39] = r->tclass;
	imc_put16(buf + 40, r->pkey);
	buf[42] = sel_byte(r->rate_sel, r->rate);
	buf[43] = sel_byte(r->life_sel, r->life);
	imc_put32(buf + 44, (uint32_t)r->sl << 28 | r->flow_label << 8 |
			    r->hop_limit);
	buf[48] = (uint8_t)(r->scope << 4 | r->join_state);
	buf[49] = (uint8_t)((r->proxy_join ? 0x80 : 0) | r->resv49);
	memcpy(buf + 50, r->resv, sizeof(r->resv));
	return IMC_MCMR_SIZE;
}

int imc_mcmr_unpack(struct imc_mcmr *r, const uint8_t *buf, size_t len)
{
	uint32_t v;

	if (len < IMC_MCMR_SIZE)
		return -EMSGSIZE;
	memcpy(r->mgid.raw, buf, 16);
	memcpy(r->port_gid.raw, buf + 16, 16);
	r->qkey = imc_get32(buf + 32);
	r->mlid = imc_get16(buf + 36);
	sel_split(buf[38], &r->mtu_sel, &r->mtu);
	r->tclass = buf[39];
	r->pkey = imc_get16(buf + 40);
	sel_split(buf[42], &r->rate_sel, &r->rate);
	sel_split(buf[43], &r->life_sel, &r->life);
	v = imc_get32(buf + 44);
	r->sl = (uint8_t)(v >> 28);
	r->flow_label = v >> 8 & FLOW_MAX;
	r->hop_limit = (uint8_t)v;
	r->scope = buf[48] >> 4;
	r->join_state = buf[48] & 0xf;
	r->proxy_join = buf[49] & 0x80;
	r->resv49 = buf[49] & 0x7f;
	memcpy(r->resv, buf + 50, sizeof(r->resv));
	return IMC_MCMR_SIZE;
}

bool imc_mcmr_reserved_set(const struct imc_mcmr *r)
{
	static const uint8_t zero[sizeof(r->resv)];

	return r->resv49 || memcmp(r->resv, zero, sizeof(zero));
}

/* PathRecord, IBA 15.2.5.16 Table 204. */
int imc_path_rec_pack(const struct imc_path_rec *r, uint8_t *buf, size_t len)
{
	if (len < IMC_PATH_REC_SIZE)
		return -ENOSPC;
	if (!sel_ok(r->mtu_sel, r->mtu) || !sel_ok(r->rate_sel, r->rate) ||
	    !sel_ok(r->life_sel, r->life) || r->resv_flow > 7 ||
	    r->flow_label > FLOW_MAX || r->numb_path > 0x7f ||
	    r->qos_class > 0xfff || r->sl > 0xf)
		return -EINVAL;
	imc_put64(buf, r->service_id);
	memcpy(buf + 8, r->dgid.raw, 16);
	memcpy(buf + 24, r->sgid.raw, 16);
	imc_put16(buf + 40, r->dlid);
	imc_put16(buf + 42, r->slid);
	imc_put32(buf + 44, (uint32_t)r->raw_traffic << 31 |
			    (uint32_t)r->resv_flow << 28 |
			    r->flow_label << 8 | r->hop_limit);
	buf[48] = r->tclass;
	buf[49] = (uint8_t)((r->reversible ? 0x80 : 0) | r->numb_path);
	imc_put16(buf + 50, r->pkey);
	imc_put16(buf + 52, (uint16_t)(r->qos_class << 4 | r->sl));
	buf[54] = sel_byte(r->mtu_sel, r->mtu);
	buf[55] = sel_byte(r->rate_sel, r->rate);
	buf[56] = sel_byte(r->life_sel, r->life);
	buf[57] = r->preference;
	memcpy(buf + 58, r->resv, sizeof(r->resv));
	return IMC_PATH_REC_SIZE;
}

int imc_path_rec_unpack(struct imc_path_rec *r, const uint8_t *buf,
			size_t len)
{
	uint32_t v;

	if (len < IMC_PATH_REC_SIZE)
		return -EMSGSIZE;
	r->service_id = imc_get64(buf);
	memcpy(r->dgid.raw, buf + 8, 16);
	memcpy(r->sgid.raw, buf + 24, 16);
	r->dlid = imc_get16(buf + 40);
	r->slid = imc_get16(buf + 42);
	v = imc_get32(buf + 44);
	r->raw_traffic = v >> 31;
	r->resv_flow = v >> 28 & 7;
	r->flow_label = v >> 8 & FLOW_MAX;
	r->hop_limit = (uint8_t)v;
	r->tclass = buf[48];
	r->reversible = buf[49] & 0x80;
	r->numb_path = buf[49] & 0x7f;
	r->pkey = imc_get16(buf + 50);
	r->qos_class = imc_get16(buf + 52) >> 4;
	r->sl = buf[53] & 0xf;
	sel_split(buf[54], &r->mtu_sel, &r->mtu);
	sel_split(buf[55], &r->rate_sel, &r->rate);
	sel_split(buf[56], &r->life_sel, &r->life);
	r->preference = buf[57];
	memcpy(r->resv, buf + 58, sizeof(r->resv));
	return IMC_PATH_REC_SIZE;
}

/* TClass (8) : SL (4) : FlowLabel (20), as in ClassPortInfo redirect/trap
 * fields (IBA 13.4.8.1 Table 115). */
static uint32_t tc_sl_fl(uint8_t tc, uint8_t sl, uint32_t fl)
{
	return (uint32_t)tc << 24 | (uint32_t)sl << 20 | fl;
}

/* ClassPortInfo, IBA 13.4.8.1 Table 115. */
int imc_class_port_info_pack(const struct imc_class_port_info *c,
			     uint8_t *buf, size_t len)
{
	if (len < IMC_CLASS_PORT_INFO_SIZE)
		return -ENOSPC;
	if (c->cap_mask2 > 0x7ffffff || c->resp_time > 0x1f ||
	    c->redirect_sl > 0xf || c->redirect_flow_label > FLOW_MAX ||
	    c->redirect_qp > QPN_MAX || c->trap_sl > 0xf ||
	    c->trap_flow_label > FLOW_MAX || c->trap_qp > QPN_MAX)
		return -EINVAL;
	buf[0] = c->base_version;
	buf[1] = c->class_version;
	imc_put16(buf + 2, c->cap_mask);
	imc_put32(buf + 4, c->cap_mask2 << 5 | c->resp_time);
	memcpy(buf + 8, c->redirect_gid.raw, 16);
	imc_put32(buf + 24, tc_sl_fl(c->redirect_tclass, c->redirect_sl,
				     c->redirect_flow_label));
	imc_put16(buf + 28, c->redirect_lid);
	imc_put16(buf + 30, c->redirect_pkey);
	imc_put32(buf + 32, (uint32_t)c->redirect_resv << 24 | c->redirect_qp);
	imc_put32(buf + 36, c->redirect_qkey);
	memcpy(buf + 40, c->trap_gid.raw, 16);
	imc_put32(buf + 56, tc_sl_fl(c->trap_tclass, c->trap_sl,
				     c->trap_flow_label));
	imc_put16(buf + 60, c->trap_lid);
	imc_put16(buf + 62, c->trap_pkey);
	imc_put32(buf + 64, (uint32_t)c->trap_hop_limit << 24 | c->trap_qp);
	imc_put32(buf + 68, c->trap_qkey);
	return IMC_CLASS_PORT_INFO_SIZE;
}

int imc_class_port_info_unpack(struct imc_class_port_info *c,
			       const uint8_t *buf, size_t len)
{
	uint32_t v;

	if (len < IMC_CLASS_PORT_INFO_SIZE)
		return -EMSGSIZE;
	c->base_version = buf[0];
	c->class_version = buf[1];
	c->cap_mask = imc_get16(buf + 2);
	v = imc_get32(buf + 4);
	c->cap_mask2 = v >> 5;
	c->resp_time = v & 0x1f;
	memcpy(c->redirect_gid.raw, buf + 8, 16);
	v = imc_get32(buf + 24);
	c->redirect_tclass = (uint8_t)(v >> 24);
	c->redirect_sl = v >> 20 & 0xf;
	c->redirect_flow_label = v & FLOW_MAX;
	c->redirect_lid = imc_get16(buf + 28);
	c->redirect_pkey = imc_get16(buf + 30);
	c->redirect_resv = buf[32];
	c->redirect_qp = imc_get32(buf + 32) & QPN_MAX;
	c->redirect_qkey = imc_get32(buf + 36);
	memcpy(c->trap_gid.raw, buf + 40, 16);
	v = imc_get32(buf + 56);
	c->trap_tclass = (uint8_t)(v >> 24);
	c->trap_sl = v >> 20 & 0xf;
	c->trap_flow_label = v & FLOW_MAX;
	c->trap_lid = imc_get16(buf + 60);
	c->trap_pkey = imc_get16(buf + 62);
	c->trap_hop_limit = buf[64];
	c->trap_qp = imc_get32(buf + 64) & QPN_MAX;
	c->trap_qkey = imc_get32(buf + 68);
	return IMC_CLASS_PORT_INFO_SIZE;
}

/* InformInfo, IBA 13.4.8.3 Table 117. */
int imc_inform_info_pack(const struct imc_inform_info *i, uint8_t *buf,
			 size_t len)
{
	if (len < IMC_INFORM_INFO_SIZE)
		return -ENOSPC;
	if (i->qpn > QPN_MAX || i->resv_qpn > 7 || i->resp_time_value > 0x1f ||
	    i->producer_type_or_vendor_id > 0xffffff)
		return -EINVAL;
	memcpy(buf, i->gid.raw, 16);
	imc_put16(buf + 16, i->lid_range_begin);
	imc_put16(buf + 18, i->lid_range_end);
	imc_put16(buf + 20, i->resv20);
	buf[22] = i->is_generic;
	buf[23] = i->subscribe;
	imc_put16(buf + 24, i->type);
	imc_put16(buf + 26, i->trap_number_or_device_id);
	imc_put32(buf + 28, i->qpn << 8 | (uint32_t)i->resv_qpn << 5 |
			    i->resp_time_value);
	imc_put32(buf + 32, (uint32_t)i->resv32 << 24 |
			    i->producer_type_or_vendor_id);
	return IMC_INFORM_INFO_SIZE;
}

int imc_inform_info_unpack(struct imc_inform_info *i, const uint8_t *buf,
			   size_t len)
{
	uint32_t v;

	if (len < IMC_INFORM_INFO_SIZE)
		return -EMSGSIZE;
	memcpy(i->gid.raw, buf, 16);
	i->lid_range_begin = imc_get16(buf + 16);
	i->lid_range_end = imc_get16(buf + 18);
	i->resv20 = imc_get16(buf + 20);
	i->is_generic = buf[22];
	i->subscribe = buf[23];
	i->type = imc_get16(buf + 24);
	i->trap_number_or_device_id = imc_get16(buf + 26);
	v = imc_get32(buf + 28);
	i->qpn = v >> 8;
	i->resv_qpn = v >> 5 & 7;
	i->resp_time_value = v & 0x1f;
	i->resv32 = buf[32];
	i->producer_type_or_vendor_id = imc_get32(buf + 32) & 0xffffff;
	return IMC_INFORM_INFO_SIZE;
}

/* Notice, IBA 13.4.8.2 Table 116. */
int imc_notice_pack(const struct imc_notice *n, uint8_t *buf, size_t len)
{
	if (len < IMC_NOTICE_SIZE)
		return -ENOSPC;
	if (n->type > 0x7f || n->producer_type_or_vendor_id > 0xffffff ||
	    n->notice_count > 0x7fff)
		return -EINVAL;
	imc_put32(buf, (uint32_t)n->is_generic << 31 | (uint32_t)n->type << 24 |
		       n->producer_type_or_vendor_id);
	imc_put16(buf + 4, n->trap_number_or_device_id);
	imc_put16(buf + 6, n->issuer_lid);
	imc_put16(buf + 8,
		  (uint16_t)(n->notice_toggle << 15 | n->notice_count));
	memcpy(buf + 10, n->data_details, IMC_NOTICE_DATA_SIZE);
	memcpy(buf + 64, n->issuer_gid.raw, 16);
	return IMC_NOTICE_SIZE;
}

int imc_notice_unpack(struct imc_notice *n, const uint8_t *buf, size_t len)
{
	uint32_t v;

	if (len < IMC_NOTICE_SIZE)
		return -EMSGSIZE;
	v = imc_get32(buf);
	n->is_generic = v >> 31;
	n->type = v >> 24 & 0x7f;
	n->producer_type_or_vendor_id = v & 0xffffff;
	n->trap_number_or_device_id = imc_get16(buf + 4);
	n->issuer_lid = imc_get16(buf + 6);
	n->notice_toggle = buf[8] >> 7;
	n->notice_count = imc_get16(buf + 8) & 0x7fff;
	memcpy(n->data_details, buf + 10, IMC_NOTICE_DATA_SIZE);
	memcpy(n->issuer_gid.raw, buf + 64, 16);
	return IMC_NOTICE_SIZE;
}

static bool is_mcast_trap(unsigned trap)
{
	return trap == IMC_TRAP_MCAST_GROUP_CREATED ||
	       trap == IMC_TRAP_MCAST_GROUP_DELETED;
}

int imc_notice_mcast_init(struct imc_notice *n, uint16_t trap,
			  const struct imc_gid *mgid, uint16_t issuer_lid,
			  const struct imc_gid *issuer_gid)
{
	if (!is_mcast_trap(trap))
		return -EINVAL;
	memset(n, 0, sizeof(*n));
	n->is_generic = true;
	n->type = IMC_NOTICE_TYPE_SM;
	n->producer_type_or_vendor_id = IMC_NOTICE_PRODUCER_CLASS_MANAGER;
	n->trap_number_or_device_id = trap;
	n->issuer_lid = issuer_lid;
	memcpy(n->data_details + IMC_NOTICE_GID_OFFSET, mgid->raw, 16);
	n->issuer_gid = *issuer_gid;
	return 0;
}

int imc_notice_mcast_mgid(const struct imc_notice *n, struct imc_gid *mgid)
{
	if (!n->is_generic || !is_mcast_trap(n->trap_number_or_device_id))
		return -EINVAL;
	memcpy(mgid->raw, n->data_details + IMC_NOTICE_GID_OFFSET, 16);
	return 0;
}

int imc_sa_mad_record(const struct imc_sa_mad *m, unsigned i,
		      const uint8_t **rec, size_t *len)
{
	size_t step = (size_t)m->sa.attr_offset * 8;

	if (!step || step > IMC_SA_DATA_SIZE ||
	    i >= IMC_SA_DATA_SIZE / step)
		return -EINVAL;
	*rec = m->data + (size_t)i * step;
	*len = step;
	return 0;
}
