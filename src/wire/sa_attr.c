/* SA attribute records: MCMemberRecord, PathRecord, ClassPortInfo,
 * InformInfo and Notice. Byte offsets follow the IBA tables cited at each
 * function; where rdma-core has a struct for the record, its offsets are
 * checked at compile time.
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
static const struct imc_field mcmr_fields[] = {
	IMC_FIELD_RAW(struct imc_mcmr, mgid, 0),
	IMC_FIELD_RAW(struct imc_mcmr, port_gid, 128),
	IMC_FIELD(struct imc_mcmr, qkey, 256, 32),
	IMC_FIELD(struct imc_mcmr, mlid, 288, 16),
	IMC_FIELD(struct imc_mcmr, mtu_sel, 304, 2),
	IMC_FIELD(struct imc_mcmr, mtu, 306, 6),
	IMC_FIELD(struct imc_mcmr, tclass, 312, 8),
	IMC_FIELD(struct imc_mcmr, pkey, 320, 16),
	IMC_FIELD(struct imc_mcmr, rate_sel, 336, 2),
	IMC_FIELD(struct imc_mcmr, rate, 338, 6),
	IMC_FIELD(struct imc_mcmr, life_sel, 344, 2),
	IMC_FIELD(struct imc_mcmr, life, 346, 6),
	IMC_FIELD(struct imc_mcmr, sl, 352, 4),
	IMC_FIELD(struct imc_mcmr, flow_label, 356, 20),
	IMC_FIELD(struct imc_mcmr, hop_limit, 376, 8),
	IMC_FIELD(struct imc_mcmr, scope, 384, 4),
	IMC_FIELD(struct imc_mcmr, join_state, 388, 4),
	IMC_FIELD(struct imc_mcmr, proxy_join, 392, 1),
	IMC_FIELD(struct imc_mcmr, resv49, 393, 7),
	IMC_FIELD_RAW(struct imc_mcmr, resv, 400),
};

/* PathRecord, IBA 15.2.5.16 Table 204. */
static const struct imc_field path_rec_fields[] = {
	IMC_FIELD(struct imc_path_rec, service_id, 0, 64),
	IMC_FIELD_RAW(struct imc_path_rec, dgid, 64),
	IMC_FIELD_RAW(struct imc_path_rec, sgid, 192),
	IMC_FIELD(struct imc_path_rec, dlid, 320, 16),
	IMC_FIELD(struct imc_path_rec, slid, 336, 16),
	IMC_FIELD(struct imc_path_rec, raw_traffic, 352, 1),
	IMC_FIELD(struct imc_path_rec, resv_flow, 353, 3),
	IMC_FIELD(struct imc_path_rec, flow_label, 356, 20),
	IMC_FIELD(struct imc_path_rec, hop_limit, 376, 8),
	IMC_FIELD(struct imc_path_rec, tclass, 384, 8),
	IMC_FIELD(struct imc_path_rec, reversible, 392, 1),
	IMC_FIELD(struct imc_path_rec, numb_path, 393, 7),
	IMC_FIELD(struct imc_path_rec, pkey, 400, 16),
	IMC_FIELD(struct imc_path_rec, qos_class, 416, 12),
	IMC_FIELD(struct imc_path_rec, sl, 428, 4),
	IMC_FIELD(struct imc_path_rec, mtu_sel, 432, 2),
	IMC_FIELD(struct imc_path_rec, mtu, 434, 6),
	IMC_FIELD(struct imc_path_rec, rate_sel, 440, 2),
	IMC_FIELD(struct imc_path_rec, rate, 442, 6),
	IMC_FIELD(struct imc_path_rec, life_sel, 448, 2),
	IMC_FIELD(struct imc_path_rec, life, 450, 6),
	IMC_FIELD(struct imc_path_rec, preference, 456, 8),
	IMC_FIELD_RAW(struct imc_path_rec, resv, 464),
};

/* ClassPortInfo, IBA 13.4.8.1 Table 115. */
static const struct imc_field class_port_info_fields[] = {
	IMC_FIELD(struct imc_class_port_info, base_version, 0, 8),
	IMC_FIELD(struct imc_class_port_info, class_version, 8, 8),
	IMC_FIELD(struct imc_class_port_info, cap_mask, 16, 16),
	IMC_FIELD(struct imc_class_port_info, cap_mask2, 32, 27),
	IMC_FIELD(struct imc_class_port_info, resp_time, 59, 5),
	IMC_FIELD_RAW(struct imc_class_port_info, redirect_gid, 64),
	IMC_FIELD(struct imc_class_port_info, redirect_tclass, 192, 8),
	IMC_FIELD(struct imc_class_port_info, redirect_sl, 200, 4),
	IMC_FIELD(struct imc_class_port_info, redirect_flow_label, 204, 20),
	IMC_FIELD(struct imc_class_port_info, redirect_lid, 224, 16),
	IMC_FIELD(struct imc_class_port_info, redirect_pkey, 240, 16),
	IMC_FIELD(struct imc_class_port_info, redirect_resv, 256, 8),
	IMC_FIELD(struct imc_class_port_info, redirect_qp, 264, 24),
	IMC_FIELD(struct imc_class_port_info, redirect_qkey, 288, 32),
	IMC_FIELD_RAW(struct imc_class_port_info, trap_gid, 320),
	IMC_FIELD(struct imc_class_port_info, trap_tclass, 448, 8),
	IMC_FIELD(struct imc_class_port_info, trap_sl, 456, 4),
	IMC_FIELD(struct imc_class_port_info, trap_flow_label, 460, 20),
	IMC_FIELD(struct imc_class_port_info, trap_lid, 480, 16),
	IMC_FIELD(struct imc_class_port_info, trap_pkey, 496, 16),
	IMC_FIELD(struct imc_class_port_info, trap_hop_limit, 512, 8),
	IMC_FIELD(struct imc_class_port_info, trap_qp, 520, 24),
	IMC_FIELD(struct imc_class_port_info, trap_qkey, 544, 32),
};

/* InformInfo, IBA 13.4.8.3 Table 117. */
static const struct imc_field inform_info_fields[] = {
	IMC_FIELD_RAW(struct imc_inform_info, gid, 0),
	IMC_FIELD(struct imc_inform_info, lid_range_begin, 128, 16),
	IMC_FIELD(struct imc_inform_info, lid_range_end, 144, 16),
	IMC_FIELD(struct imc_inform_info, resv20, 160, 16),
	IMC_FIELD(struct imc_inform_info, is_generic, 176, 8),
	IMC_FIELD(struct imc_inform_info, subscribe, 184, 8),
	IMC_FIELD(struct imc_inform_info, type, 192, 16),
	IMC_FIELD(struct imc_inform_info, trap_number_or_device_id, 208, 16),
	IMC_FIELD(struct imc_inform_info, qpn, 224, 24),
	IMC_FIELD(struct imc_inform_info, resv_qpn, 248, 3),
	IMC_FIELD(struct imc_inform_info, resp_time_value, 251, 5),
	IMC_FIELD(struct imc_inform_info, resv32, 256, 8),
	IMC_FIELD(struct imc_inform_info, producer_type_or_vendor_id, 264, 24),
};

/* Notice, IBA 13.4.8.2 Table 116. */
static const struct imc_field notice_fields[] = {
	IMC_FIELD(struct imc_notice, is_generic, 0, 1),
	IMC_FIELD(struct imc_notice, type, 1, 7),
	IMC_FIELD(struct imc_notice, producer_type_or_vendor_id, 8, 24),
	IMC_FIELD(struct imc_notice, trap_number_or_device_id, 32, 16),
	IMC_FIELD(struct imc_notice, issuer_lid, 48, 16),
	IMC_FIELD(struct imc_notice, notice_toggle, 64, 1),
	IMC_FIELD(struct imc_notice, notice_count, 65, 15),
	IMC_FIELD_RAW(struct imc_notice, data_details, 80),
	IMC_FIELD_RAW(struct imc_notice, issuer_gid, 512),
};

int imc_mcmr_pack(const struct imc_mcmr *r, uint8_t *buf, size_t len)
{
	return imc_fields_pack(IMC_FIELDS(mcmr_fields), r, buf, len,
			       IMC_MCMR_SIZE);
}

int imc_mcmr_unpack(struct imc_mcmr *r, const uint8_t *buf, size_t len)
{
	return imc_fields_unpack(IMC_FIELDS(mcmr_fields), r, buf, len,
				 IMC_MCMR_SIZE);
}

bool imc_mcmr_reserved_set(const struct imc_mcmr *r)
{
	static const uint8_t zero[sizeof(r->resv)];

	return r->resv49 || memcmp(r->resv, zero, sizeof(zero));
}

int imc_path_rec_pack(const struct imc_path_rec *r, uint8_t *buf, size_t len)
{
	return imc_fields_pack(IMC_FIELDS(path_rec_fields), r, buf, len,
			       IMC_PATH_REC_SIZE);
}

int imc_path_rec_unpack(struct imc_path_rec *r, const uint8_t *buf,
			size_t len)
{
	return imc_fields_unpack(IMC_FIELDS(path_rec_fields), r, buf, len,
				 IMC_PATH_REC_SIZE);
}

int imc_class_port_info_pack(const struct imc_class_port_info *c,
			     uint8_t *buf, size_t len)
{
	return imc_fields_pack(IMC_FIELDS(class_port_info_fields), c, buf, len,
			       IMC_CLASS_PORT_INFO_SIZE);
}

int imc_class_port_info_unpack(struct imc_class_port_info *c,
			       const uint8_t *buf, size_t len)
{
	return imc_fields_unpack(IMC_FIELDS(class_port_info_fields), c, buf,
				 len, IMC_CLASS_PORT_INFO_SIZE);
}

int imc_inform_info_pack(const struct imc_inform_info *i, uint8_t *buf,
			 size_t len)
{
	return imc_fields_pack(IMC_FIELDS(inform_info_fields), i, buf, len,
			       IMC_INFORM_INFO_SIZE);
}

int imc_inform_info_unpack(struct imc_inform_info *i, const uint8_t *buf,
			   size_t len)
{
	return imc_fields_unpack(IMC_FIELDS(inform_info_fields), i, buf, len,
				 IMC_INFORM_INFO_SIZE);
}

int imc_notice_pack(const struct imc_notice *n, uint8_t *buf, size_t len)
{
	return imc_fields_pack(IMC_FIELDS(notice_fields), n, buf, len,
			       IMC_NOTICE_SIZE);
}

int imc_notice_unpack(struct imc_notice *n, const uint8_t *buf, size_t len)
{
	return imc_fields_unpack(IMC_FIELDS(notice_fields), n, buf, len,
				 IMC_NOTICE_SIZE);
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
