/* PortInfo(Record), NodeInfo/NodeRecord and P_KeyTableRecord. PortInfo
 * and NodeInfo are field tables (wire/fields.h) with the bit offsets of
 * the IBA tables they name; the records around them give their byte
 * offsets at each function. */
#include <errno.h>
#include <string.h>

#include "ibmcast/sa_records.h"
#include "util/bytes.h"
#include "wire/fields.h"

/* ---- PortInfo ---- */

/* PortInfo, IBA 14.2.5.6 Table 145. */
#define F(m, bit, bits) IMC_FIELD(struct imc_port_info, m, bit, bits)
static const struct imc_field port_info_fields[] = {
	F(m_key, 0, 64),
	F(gid_prefix, 64, 64),
	F(lid, 128, 16), F(master_sm_lid, 144, 16),
	F(cap_mask, 160, 32),
	F(diag_code, 192, 16), F(m_key_lease, 208, 16),
	F(local_port, 224, 8), F(width_enabled, 232, 8),
	F(width_supported, 240, 8), F(width_active, 248, 8),
	F(speed_supported, 256, 4), F(state, 260, 4), F(phys_state, 264, 4),
	F(down_default, 268, 4), F(m_key_protect, 272, 2), F(resv34, 274, 3),
	F(lmc, 277, 3), F(speed_active, 280, 4), F(speed_enabled, 284, 4),
	F(neighbor_mtu, 288, 4), F(master_sm_sl, 292, 4), F(vl_cap, 296, 4),
	F(init_type, 300, 4), F(vl_high_limit, 304, 8),
	F(vl_arb_high_cap, 312, 8),
	F(vl_arb_low_cap, 320, 8), F(init_type_reply, 328, 4),
	F(mtu_cap, 332, 4), F(vl_stall, 336, 3), F(hoq_life, 339, 5),
	F(op_vls, 344, 4), F(enforce, 348, 4),
	F(m_key_violations, 352, 16), F(p_key_violations, 368, 16),
	F(q_key_violations, 384, 16), F(guid_cap, 400, 8),
	F(client_rereg, 408, 1), F(resv51, 409, 2), F(subnet_timeout, 411, 5),
	F(resv52, 416, 3), F(resp_time, 419, 5), F(local_phy_errors, 424, 4),
	F(overrun_errors, 428, 4), F(max_credit_hint, 432, 16),
	F(resv56, 448, 8), F(link_rtl, 456, 24),
	F(cap_mask2, 480, 16), F(speed_ext_active, 496, 4),
	F(speed_ext_supported, 500, 4), F(resv63, 504, 3),
	F(speed_ext_enabled, 507, 5),
};
#undef F

static bool port_info_ok(const struct imc_port_info *p)
{
	return imc_fields_fit(IMC_FIELDS(port_info_fields), p);
}

static void port_info_put(const struct imc_port_info *p, uint8_t *b)
{
	imc_fields_put(IMC_FIELDS(port_info_fields), p, b);
}

static void port_info_get(struct imc_port_info *p, const uint8_t *b)
{
	memset(p, 0, sizeof(*p));
	imc_fields_get(IMC_FIELDS(port_info_fields), p, b);
}

int imc_port_info_pack(const struct imc_port_info *p, uint8_t *buf,
		       size_t len)
{
	return imc_fields_pack(IMC_FIELDS(port_info_fields), p, buf, len,
			       IMC_PORT_INFO_SIZE);
}

int imc_port_info_unpack(struct imc_port_info *p, const uint8_t *buf,
			 size_t len)
{
	if (len < IMC_PORT_INFO_SIZE)
		return -EMSGSIZE;
	port_info_get(p, buf);
	return IMC_PORT_INFO_SIZE;
}

/* Lanes of LinkWidthActive (14.2.5.6: 1 1x, 2 4x, 4 8x, 8 12x; 16 2x
 * from IBA 1.3). */
static unsigned lanes(uint8_t width)
{
	switch (width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	}
	return 0;
}

/* Lane speed in units of 0.5 Gb/s (FDR's 14.0625 counted as 14, as the
 * rate codes name it). */
static unsigned lane_speed(const struct imc_port_info *p)
{
	switch (p->speed_ext_active) {
	case 1: return 28;   /* FDR */
	case 2: return 50;   /* EDR */
	case 4: return 100;  /* HDR */
	}
	switch (p->speed_active) {
	case 1: return 5;    /* SDR 2.5 */
	case 2: return 10;   /* DDR 5 */
	case 4: return 20;   /* QDR 10 */
	}
	return 0;
}

uint8_t imc_port_info_rate(const struct imc_port_info *p)
{
	/* IBA 15.2.5.16 Table 214 (rate codes) and its 1.3 additions. */
	static const struct { unsigned half_gbps; uint8_t code; } rates[] = {
		{ 5, 2 }, { 10, 5 }, { 20, 3 }, { 28, 11 }, { 40, 6 },
		{ 50, 15 }, { 56, 19 }, { 60, 4 }, { 80, 7 }, { 100, 20 },
		{ 112, 12 }, { 120, 8 }, { 160, 9 }, { 200, 16 }, { 224, 13 },
		{ 240, 10 }, { 336, 14 }, { 400, 17 }, { 600, 18 },
		{ 800, 21 }, { 1200, 22 },
	};
	unsigned bw = lanes(p->width_active) * lane_speed(p);

	for (size_t i = 0; i < IMC_ARRAY_SIZE(rates); i++)
		if (rates[i].half_gbps == bw)
			return rates[i].code;
	return 0;
}

/* ---- PortInfoRecord, IBA 15.2.5.3 Table 210 ---- */

int imc_port_info_rec_pack(const struct imc_port_info_rec *r, uint8_t *buf,
			   size_t len)
{
	if (len < IMC_PORT_INFO_REC_SIZE)
		return -ENOSPC;
	if (!port_info_ok(&r->info))
		return -EINVAL;
	imc_put16(buf, r->lid);
	buf[2] = r->port_num;
	buf[3] = r->options;
	port_info_put(&r->info, buf + 4);
	return IMC_PORT_INFO_REC_SIZE;
}

int imc_port_info_rec_unpack(struct imc_port_info_rec *r, const uint8_t *buf,
			     size_t len)
{
	if (len < IMC_PORT_INFO_REC_SIZE)
		return -EMSGSIZE;
	r->lid = imc_get16(buf);
	r->port_num = buf[2];
	r->options = buf[3];
	port_info_get(&r->info, buf + 4);
	return IMC_PORT_INFO_REC_SIZE;
}

/* ---- NodeInfo ---- */

/* NodeInfo, IBA 14.2.5.3 Table 140. */
#define F(m, bit, bits) IMC_FIELD(struct imc_node_info, m, bit, bits)
static const struct imc_field node_info_fields[] = {
	F(base_version, 0, 8), F(class_version, 8, 8), F(node_type, 16, 8),
	F(num_ports, 24, 8),
	F(sys_image_guid, 32, 64),
	F(node_guid, 96, 64),
	F(port_guid, 160, 64),
	F(partition_cap, 224, 16), F(device_id, 240, 16),
	F(revision, 256, 32),
	F(local_port, 288, 8), F(vendor_id, 296, 24),
};
#undef F

static void node_info_put(const struct imc_node_info *n, uint8_t *b)
{
	imc_fields_put(IMC_FIELDS(node_info_fields), n, b);
}

static void node_info_get(struct imc_node_info *n, const uint8_t *b)
{
	imc_fields_get(IMC_FIELDS(node_info_fields), n, b);
}

IMC_FIELDS_CODEC(node_info, IMC_NODE_INFO_SIZE)

/* ---- NodeRecord, IBA 15.2.5.2 Table 209 ---- */

int imc_node_rec_pack(const struct imc_node_rec *r, uint8_t *buf, size_t len)
{
	if (len < IMC_NODE_REC_SIZE)
		return -ENOSPC;
	if (!imc_fields_fit(IMC_FIELDS(node_info_fields), &r->info))
		return -EINVAL;
	imc_put16(buf, r->lid);
	imc_put16(buf + 2, r->resv);
	node_info_put(&r->info, buf + 4);
	memcpy(buf + 4 + IMC_NODE_INFO_SIZE, r->desc, IMC_NODE_DESC_SIZE);
	return IMC_NODE_REC_SIZE;
}

int imc_node_rec_unpack(struct imc_node_rec *r, const uint8_t *buf,
			size_t len)
{
	if (len < IMC_NODE_REC_SIZE)
		return -EMSGSIZE;
	r->lid = imc_get16(buf);
	r->resv = imc_get16(buf + 2);
	node_info_get(&r->info, buf + 4);
	memcpy(r->desc, buf + 4 + IMC_NODE_INFO_SIZE, IMC_NODE_DESC_SIZE);
	return IMC_NODE_REC_SIZE;
}

/* ---- P_KeyTableRecord, IBA 15.2.5.11 Table 219 ---- */

int imc_pkey_table_rec_pack(const struct imc_pkey_table_rec *r, uint8_t *buf,
			    size_t len)
{
	if (len < IMC_PKEY_TABLE_REC_SIZE)
		return -ENOSPC;
	imc_put16(buf, r->lid);
	imc_put16(buf + 2, r->block);
	buf[4] = r->port_num;
	memcpy(buf + 5, r->resv, sizeof(r->resv));
	for (size_t i = 0; i < IMC_PKEY_BLOCK_SIZE; i++)
		imc_put16(buf + 8 + 2 * i, r->pkeys[i]);
	return IMC_PKEY_TABLE_REC_SIZE;
}

int imc_pkey_table_rec_unpack(struct imc_pkey_table_rec *r,
			      const uint8_t *buf, size_t len)
{
	if (len < IMC_PKEY_TABLE_REC_SIZE)
		return -EMSGSIZE;
	r->lid = imc_get16(buf);
	r->block = imc_get16(buf + 2);
	r->port_num = buf[4];
	memcpy(r->resv, buf + 5, sizeof(r->resv));
	for (size_t i = 0; i < IMC_PKEY_BLOCK_SIZE; i++)
		r->pkeys[i] = imc_get16(buf + 8 + 2 * i);
	return IMC_PKEY_TABLE_REC_SIZE;
}
