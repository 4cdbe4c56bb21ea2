/* PortInfo(Record), NodeInfo/NodeRecord and P_KeyTableRecord. Byte
 * offsets are those of the IBA tables named at each function. */
#include <errno.h>
#include <string.h>

#include "ibmcast/sa_records.h"
#include "wire/bytes.h"

/* A byte of two fields: hi above the lo_bits low bits of lo. */
static uint8_t join(uint8_t hi, uint8_t lo, unsigned lo_bits)
{
	return (uint8_t)(hi << lo_bits | lo);
}

static void split(uint8_t b, unsigned lo_bits, uint8_t *hi, uint8_t *lo)
{
	*hi = (uint8_t)(b >> lo_bits);
	*lo = (uint8_t)(b & ((1u << lo_bits) - 1));
}

static bool fits(unsigned v, unsigned bits)
{
	return v < (1u << bits);
}

/* ---- PortInfo, IBA 14.2.5.6 Table 145 ---- */

static bool port_info_ok(const struct imc_port_info *p)
{
	return fits(p->speed_supported, 4) && fits(p->state, 4) &&
	       fits(p->phys_state, 4) && fits(p->down_default, 4) &&
	       fits(p->m_key_protect, 2) && fits(p->resv34, 3) &&
	       fits(p->lmc, 3) && fits(p->speed_active, 4) &&
	       fits(p->speed_enabled, 4) && fits(p->neighbor_mtu, 4) &&
	       fits(p->master_sm_sl, 4) && fits(p->vl_cap, 4) &&
	       fits(p->init_type, 4) && fits(p->init_type_reply, 4) &&
	       fits(p->mtu_cap, 4) && fits(p->vl_stall, 3) &&
	       fits(p->hoq_life, 5) && fits(p->op_vls, 4) &&
	       fits(p->enforce, 4) && fits(p->client_rereg, 1) &&
	       fits(p->resv51, 2) && fits(p->subnet_timeout, 5) &&
	       fits(p->resv52, 3) && fits(p->resp_time, 5) &&
	       fits(p->local_phy_errors, 4) && fits(p->overrun_errors, 4) &&
	       p->link_rtl <= 0xffffff && fits(p->speed_ext_active, 4) &&
	       fits(p->speed_ext_supported, 4) && fits(p->resv63, 3) &&
	       fits(p->speed_ext_enabled, 5);
}

static void port_info_put(const struct imc_port_info *p, uint8_t *b)
{
	imc_put64(b + 0, p->m_key);
	imc_put64(b + 8, p->gid_prefix);
	imc_put16(b + 16, p->lid);
	imc_put16(b + 18, p->master_sm_lid);
	imc_put32(b + 20, p->cap_mask);
	imc_put16(b + 24, p->diag_code);
	imc_put16(b + 26, p->m_key_lease);
	b[28] = p->local_port;
	b[29] = p->width_enabled;
	b[30] = p->width_supported;
	b[31] = p->width_active;
	b[32] = join(p->speed_supported, p->state, 4);
	b[33] = join(p->phys_state, p->down_default, 4);
	b[34] = (uint8_t)(p->m_key_protect << 6 | p->resv34 << 3 | p->lmc);
	b[35] = join(p->speed_active, p->speed_enabled, 4);
	b[36] = join(p->neighbor_mtu, p->master_sm_sl, 4);
	b[37] = join(p->vl_cap, p->init_type, 4);
	b[38] = p->vl_high_limit;
	b[39] = p->vl_arb_high_cap;
	b[40] = p->vl_arb_low_cap;
	b[41] = join(p->init_type_reply, p->mtu_cap, 4);
	b[42] = join(p->vl_stall, p->hoq_life, 5);
	b[43] = join(p->op_vls, p->enforce, 4);
	imc_put16(b + 44, p->m_key_violations);
	imc_put16(b + 46, p->p_key_violations);
	imc_put16(b + 48, p->q_key_violations);
	b[50] = p->guid_cap;
	b[51] = (uint8_t)(p->client_rereg << 7 | p->resv51 << 5 |
			  p->subnet_timeout);
	b[52] = join(p->resv52, p->resp_time, 5);
	b[53] = join(p->local_phy_errors, p->overrun_errors, 4);
	imc_put16(b + 54, p->max_credit_hint);
	imc_put32(b + 56, (uint32_t)p->resv56 << 24 | p->link_rtl);
	imc_put16(b + 60, p->cap_mask2);
	b[62] = join(p->speed_ext_active, p->speed_ext_supported, 4);
	b[63] = join(p->resv63, p->speed_ext_enabled, 5);
}

static void port_info_get(struct imc_port_info *p, const uint8_t *b)
{
	uint32_t v;

	memset(p, 0, sizeof(*p));
	p->m_key = imc_get64(b + 0);
	p->gid_prefix = imc_get64(b + 8);
	p->lid = imc_get16(b + 16);
	p->master_sm_lid = imc_get16(b + 18);
	p->cap_mask = imc_get32(b + 20);
	p->diag_code = imc_get16(b + 24);
	p->m_key_lease = imc_get16(b + 26);
	p->local_port = b[28];
	p->width_enabled = b[29];
	p->width_supported = b[30];
	p->width_active = b[31];
	split(b[32], 4, &p->speed_supported, &p->state);
	split(b[33], 4, &p->phys_state, &p->down_default);
	p->m_key_protect = b[34] >> 6;
	p->resv34 = (b[34] >> 3) & 7;
	p->lmc = b[34] & 7;
	split(b[35], 4, &p->speed_active, &p->speed_enabled);
	split(b[36], 4, &p->neighbor_mtu, &p->master_sm_sl);
	split(b[37], 4, &p->vl_cap, &p->init_type);
	p->vl_high_limit = b[38];
	p->vl_arb_high_cap = b[39];
	p->vl_arb_low_cap = b[40];
	split(b[41], 4, &p->init_type_reply, &p->mtu_cap);
	split(b[42], 5, &p->vl_stall, &p->hoq_life);
	split(b[43], 4, &p->op_vls, &p->enforce);
	p->m_key_violations = imc_get16(b + 44);
	p->p_key_violations = imc_get16(b + 46);
	p->q_key_violations = imc_get16(b + 48);
	p->guid_cap = b[50];
	p->client_rereg = b[51] >> 7;
	p->resv51 = (b[51] >> 5) & 3;
	p->subnet_timeout = b[51] & 0x1f;
	split(b[52], 5, &p->resv52, &p->resp_time);
	split(b[53], 4, &p->local_phy_errors, &p->overrun_errors);
	p->max_credit_hint = imc_get16(b + 54);
	v = imc_get32(b + 56);
	p->resv56 = (uint8_t)(v >> 24);
	p->link_rtl = v & 0xffffff;
	p->cap_mask2 = imc_get16(b + 60);
	split(b[62], 4, &p->speed_ext_active, &p->speed_ext_supported);
	split(b[63], 5, &p->resv63, &p->speed_ext_enabled);
}

int imc_port_info_pack(const struct imc_port_info *p, uint8_t *buf,
		       size_t len)
{
	if (len < IMC_PORT_INFO_SIZE)
		return -ENOSPC;
	if (!port_info_ok(p))
		return -EINVAL;
	port_info_put(p, buf);
	return IMC_PORT_INFO_SIZE;
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

/* ---- NodeInfo, IBA 14.2.5.3 Table 140 ---- */

static void node_info_put(const struct imc_node_info *n, uint8_t *b)
{
	b[0] = n->base_version;
	b[1] = n->class_version;
	b[2] = n->node_type;
	b[3] = n->num_ports;
	imc_put64(b + 4, n->sys_image_guid);
	imc_put64(b + 12, n->node_guid);
	imc_put64(b + 20, n->port_guid);
	imc_put16(b + 28, n->partition_cap);
	imc_put16(b + 30, n->device_id);
	imc_put32(b + 32, n->revision);
	imc_put32(b + 36, (uint32_t)n->local_port << 24 | n->vendor_id);
}

static void node_info_get(struct imc_node_info *n, const uint8_t *b)
{
	uint32_t v;

	n->base_version = b[0];
	n->class_version = b[1];
	n->node_type = b[2];
	n->num_ports = b[3];
	n->sys_image_guid = imc_get64(b + 4);
	n->node_guid = imc_get64(b + 12);
	n->port_guid = imc_get64(b + 20);
	n->partition_cap = imc_get16(b + 28);
	n->device_id = imc_get16(b + 30);
	n->revision = imc_get32(b + 32);
	v = imc_get32(b + 36);
	n->local_port = (uint8_t)(v >> 24);
	n->vendor_id = v & 0xffffff;
}

int imc_node_info_pack(const struct imc_node_info *n, uint8_t *buf,
		       size_t len)
{
	if (len < IMC_NODE_INFO_SIZE)
		return -ENOSPC;
	if (n->vendor_id > 0xffffff)
		return -EINVAL;
	node_info_put(n, buf);
	return IMC_NODE_INFO_SIZE;
}

int imc_node_info_unpack(struct imc_node_info *n, const uint8_t *buf,
			 size_t len)
{
	if (len < IMC_NODE_INFO_SIZE)
		return -EMSGSIZE;
	node_info_get(n, buf);
	return IMC_NODE_INFO_SIZE;
}

/* ---- NodeRecord, IBA 15.2.5.2 Table 209 ---- */

int imc_node_rec_pack(const struct imc_node_rec *r, uint8_t *buf, size_t len)
{
	if (len < IMC_NODE_REC_SIZE)
		return -ENOSPC;
	if (r->info.vendor_id > 0xffffff)
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
