/* SA attribute records: MCMemberRecord, PathRecord, ClassPortInfo,
 * InformInfo and Notice, each a field table (wire/fields.h) with the bit
 * offsets of the IBA table cited above it; where rdma-core has a struct
 * for the record, its offsets are checked at compile time.
 */
#include <errno.h>
#include <string.h>

#include "ibmcast/sa_attr.h"
#include "wire/fields.h"

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

/* The tables below give a selector 2 bits above a 6-bit value, as
 * rdma-core does (IBA 15.2.5.16). */
_Static_assert(UMAD_SA_SELECTOR_SHIFT == 6 &&
	       UMAD_SA_RATE_MTU_PKT_LIFE_MASK == 0x3f, "selector layout");

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
#define F(m, bit, bits) IMC_FIELD(struct imc_mcmr, m, bit, bits)
#define R(m, bit) IMC_FIELD_RAW(struct imc_mcmr, m, bit)
static const struct imc_field mcmr_fields[] = {
	R(mgid, 0),
	R(port_gid, 128),
	F(qkey, 256, 32),
	F(mlid, 288, 16), F(mtu_sel, 304, 2), F(mtu, 306, 6), F(tclass, 312, 8),
	F(pkey, 320, 16), F(rate_sel, 336, 2), F(rate, 338, 6),
	F(life_sel, 344, 2), F(life, 346, 6),
	F(sl, 352, 4), F(flow_label, 356, 20), F(hop_limit, 376, 8),
	F(scope, 384, 4), F(join_state, 388, 4), F(proxy_join, 392, 1),
	F(resv49, 393, 7),
	R(resv, 400),
};
#undef F
#undef R

/* PathRecord, IBA 15.2.5.16 Table 204. */
#define F(m, bit, bits) IMC_FIELD(struct imc_path_rec, m, bit, bits)
#define R(m, bit) IMC_FIELD_RAW(struct imc_path_rec, m, bit)
static const struct imc_field path_rec_fields[] = {
	F(service_id, 0, 64),
	R(dgid, 64),
	R(sgid, 192),
	F(dlid, 320, 16), F(slid, 336, 16),
	F(raw_traffic, 352, 1), F(resv_flow, 353, 3), F(flow_label, 356, 20),
	F(hop_limit, 376, 8),
	F(tclass, 384, 8), F(reversible, 392, 1), F(numb_path, 393, 7),
	F(pkey, 400, 16),
	F(qos_class, 416, 12), F(sl, 428, 4), F(mtu_sel, 432, 2),
	F(mtu, 434, 6), F(rate_sel, 440, 2), F(rate, 442, 6),
	F(life_sel, 448, 2), F(life, 450, 6), F(preference, 456, 8),
	R(resv, 464),
};
#undef F
#undef R

/* ClassPortInfo, IBA 13.4.8.1 Table 115. */
#define F(m, bit, bits) IMC_FIELD(struct imc_class_port_info, m, bit, bits)
#define R(m, bit) IMC_FIELD_RAW(struct imc_class_port_info, m, bit)
static const struct imc_field class_port_info_fields[] = {
	F(base_version, 0, 8), F(class_version, 8, 8), F(cap_mask, 16, 16),
	F(cap_mask2, 32, 27), F(resp_time, 59, 5),
	R(redirect_gid, 64),
	F(redirect_tclass, 192, 8), F(redirect_sl, 200, 4),
	F(redirect_flow_label, 204, 20),
	F(redirect_lid, 224, 16), F(redirect_pkey, 240, 16),
	F(redirect_resv, 256, 8), F(redirect_qp, 264, 24),
	F(redirect_qkey, 288, 32),
	R(trap_gid, 320),
	F(trap_tclass, 448, 8), F(trap_sl, 456, 4), F(trap_flow_label, 460, 20),
	F(trap_lid, 480, 16), F(trap_pkey, 496, 16),
	F(trap_hop_limit, 512, 8), F(trap_qp, 520, 24),
	F(trap_qkey, 544, 32),
};
#undef F
#undef R

/* InformInfo, IBA 13.4.8.3 Table 117. */
#define F(m, bit, bits) IMC_FIELD(struct imc_inform_info, m, bit, bits)
#define R(m, bit) IMC_FIELD_RAW(struct imc_inform_info, m, bit)
static const struct imc_field inform_info_fields[] = {
	R(gid, 0),
	F(lid_range_begin, 128, 16), F(lid_range_end, 144, 16),
	F(resv20, 160, 16), F(is_generic, 176, 8), F(subscribe, 184, 8),
	F(type, 192, 16), F(trap_number_or_device_id, 208, 16),
	F(qpn, 224, 24), F(resv_qpn, 248, 3), F(resp_time_value, 251, 5),
	F(resv32, 256, 8), F(producer_type_or_vendor_id, 264, 24),
};
#undef F
#undef R

/* Notice, IBA 13.4.8.2 Table 116. */
#define F(m, bit, bits) IMC_FIELD(struct imc_notice, m, bit, bits)
#define R(m, bit) IMC_FIELD_RAW(struct imc_notice, m, bit)
static const struct imc_field notice_fields[] = {
	F(is_generic, 0, 1), F(type, 1, 7),
	F(producer_type_or_vendor_id, 8, 24),
	F(trap_number_or_device_id, 32, 16), F(issuer_lid, 48, 16),
	F(notice_toggle, 64, 1), F(notice_count, 65, 15),
	R(data_details, 80),
	R(issuer_gid, 512),
};
#undef F
#undef R

IMC_FIELDS_CODEC(mcmr, IMC_MCMR_SIZE)

bool imc_mcmr_reserved_set(const struct imc_mcmr *r)
{
	static const uint8_t zero[sizeof(r->resv)];

	return r->resv49 || memcmp(r->resv, zero, sizeof(zero));
}

IMC_FIELDS_CODEC(path_rec, IMC_PATH_REC_SIZE)
IMC_FIELDS_CODEC(class_port_info, IMC_CLASS_PORT_INFO_SIZE)
IMC_FIELDS_CODEC(inform_info, IMC_INFORM_INFO_SIZE)
IMC_FIELDS_CODEC(notice, IMC_NOTICE_SIZE)

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
