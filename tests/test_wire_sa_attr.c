/* SA attribute records: golden bytes laid out by hand from the IBA tables,
 * round trips with every field at its maximum, short buffers, out-of-range
 * fields, trap 66/67 data details, and record lookup in a GetTableResp. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "ibmcast/sa_attr.h"

#include "wire_check.h"

/* pack refuses @obj with -EINVAL and writes nothing. */
#define CHECK_EINVAL(packfn, obj, size)                                      \
	do {                                                                 \
		uint8_t b_[(size)];                                          \
		memset(b_, CANARY, sizeof(b_));                              \
		assert_int_equal(packfn((obj), b_, sizeof(b_)), -EINVAL);    \
		for (size_t k_ = 0; k_ < sizeof(b_); k_++)                   \
			assert_int_equal(b_[k_], CANARY);                    \
	} while (0)

#define EQ(f) assert_true(a->f == b->f)
#define EQMEM(f) assert_memory_equal(&a->f, &b->f, sizeof(a->f))

static void gid_fill(struct imc_gid *g, uint8_t first)
{
	for (unsigned i = 0; i < 16; i++)
		g->raw[i] = (uint8_t)(first + i);
}

/* ---- MCMemberRecord ---- */

static void mcmr_equal(const struct imc_mcmr *a, const struct imc_mcmr *b)
{
	EQMEM(mgid);
	EQMEM(port_gid);
	EQ(qkey);
	EQ(mlid);
	EQ(mtu_sel);
	EQ(mtu);
	EQ(tclass);
	EQ(pkey);
	EQ(rate_sel);
	EQ(rate);
	EQ(life_sel);
	EQ(life);
	EQ(sl);
	EQ(flow_label);
	EQ(hop_limit);
	EQ(scope);
	EQ(join_state);
	EQ(proxy_join);
	EQ(resv49);
	EQMEM(resv);
}

static const uint8_t mcmr_golden_bytes[IMC_MCMR_SIZE] = {
	/* MGID ff12:401b:ffff::ffff:ffff (IPoIB broadcast, RFC 4391 4) */
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	/* PortGID fe80::2:c903:1:203 */
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x02, 0x03,
	0x00, 0x00, 0x0b, 0x1b, /* Q_Key */
	0xc0, 0x01,             /* MLID */
	0x84,                   /* MTUSelector 2 (exactly), MTU 4 (2048) */
	0x12,                   /* TClass */
	0xff, 0xff,             /* P_Key */
	0x83,                   /* RateSelector 2, Rate 3 (10 Gb/s) */
	0x92,                   /* LifeSelector 2, Life 0x12 */
	0x51, 0x23, 0x45, 0x40, /* SL 5, FlowLabel 0x12345, HopLimit 0x40 */
	0x21,                   /* Scope 2 (link), JoinState 1 (full) */
	0x80,                   /* ProxyJoin */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void mcmr_golden_struct(struct imc_mcmr *r)
{
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t pgid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x02, 0x03 };

	memset(r, 0, sizeof(*r));
	memcpy(r->mgid.raw, mgid, 16);
	memcpy(r->port_gid.raw, pgid, 16);
	r->qkey = 0x0b1b;
	r->mlid = 0xc001;
	r->mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
	r->mtu = 4;
	r->tclass = 0x12;
	r->pkey = 0xffff;
	r->rate_sel = UMAD_SA_SELECTOR_EXACTLY;
	r->rate = 3;
	r->life_sel = UMAD_SA_SELECTOR_EXACTLY;
	r->life = 0x12;
	r->sl = 5;
	r->flow_label = 0x12345;
	r->hop_limit = 0x40;
	r->scope = UMAD_SA_MCM_ADDR_SCOPE_LINK_LOCAL;
	r->join_state = UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER;
	r->proxy_join = true;
}

static void mcmr_golden(void **state)
{
	struct imc_mcmr r, o;
	uint8_t buf[IMC_MCMR_SIZE];

	mcmr_golden_struct(&r);
	assert_int_equal(imc_mcmr_pack(&r, buf, sizeof(buf)), 56);
	assert_memory_equal(buf, mcmr_golden_bytes, sizeof(buf));
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(imc_mcmr_unpack(&o, mcmr_golden_bytes,
					 sizeof(mcmr_golden_bytes)), 56);
	mcmr_equal(&o, &r);
	assert_false(imc_mcmr_reserved_set(&o));
	CHECK_LENGTHS(struct imc_mcmr, imc_mcmr_pack, imc_mcmr_unpack, &r,
		      IMC_MCMR_SIZE);
}

static void mcmr_max(void **state)
{
	struct imc_mcmr r, o;
	uint8_t buf[IMC_MCMR_SIZE];

	memset(&r, 0, sizeof(r));
	memset(r.mgid.raw, 0xff, 16);
	memset(r.port_gid.raw, 0xff, 16);
	r.qkey = UINT32_MAX;
	r.mlid = UINT16_MAX;
	r.mtu_sel = 3;
	r.mtu = 63;
	r.tclass = 0xff;
	r.pkey = 0xffff;
	r.rate_sel = 3;
	r.rate = 63;
	r.life_sel = 3;
	r.life = 63;
	r.sl = 15;
	r.flow_label = 0xfffff;
	r.hop_limit = 0xff;
	r.scope = 15;
	r.join_state = 15;
	r.proxy_join = true;
	r.resv49 = 0x7f;
	memset(r.resv, 0xff, sizeof(r.resv));
	assert_int_equal(imc_mcmr_pack(&r, buf, sizeof(buf)), 56);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xff);
	assert_int_equal(imc_mcmr_unpack(&o, buf, sizeof(buf)), 56);
	mcmr_equal(&o, &r);
	assert_true(imc_mcmr_reserved_set(&o));

	/* Each bit field alone lands in its own bits. */
	mcmr_golden_struct(&r);
	r.sl = 15;
	r.flow_label = 0;
	r.hop_limit = 0;
	assert_int_equal(imc_mcmr_pack(&r, buf, sizeof(buf)), 56);
	assert_memory_equal(buf + 44, "\xf0\x00\x00\x00", 4);
	r.sl = 0;
	r.flow_label = 0xfffff;
	assert_int_equal(imc_mcmr_pack(&r, buf, sizeof(buf)), 56);
	assert_memory_equal(buf + 44, "\x0f\xff\xff\x00", 4);
	r.scope = 0xe;
	r.join_state = UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_FULL_MEMBER;
	r.proxy_join = false;
	r.resv49 = 1;
	r.resv[5] = 0x42;
	assert_int_equal(imc_mcmr_pack(&r, buf, sizeof(buf)), 56);
	assert_int_equal(buf[48], 0xe8);
	assert_int_equal(buf[49], 0x01);
	assert_int_equal(buf[55], 0x42);
	assert_int_equal(imc_mcmr_unpack(&o, buf, sizeof(buf)), 56);
	assert_false(o.proxy_join);
	assert_int_equal(o.resv49, 1);
	assert_true(imc_mcmr_reserved_set(&o));
	o.resv49 = 0;
	assert_true(imc_mcmr_reserved_set(&o));
	o.resv[5] = 0;
	assert_false(imc_mcmr_reserved_set(&o));
}

static void mcmr_einval(void **state)
{
	struct imc_mcmr r;

#define BAD(field, v)                                                        \
	do {                                                                 \
		mcmr_golden_struct(&r);                                      \
		r.field = (v);                                               \
		CHECK_EINVAL(imc_mcmr_pack, &r, IMC_MCMR_SIZE);              \
	} while (0)
	BAD(mtu_sel, 4);
	BAD(mtu, 64);
	BAD(rate_sel, 4);
	BAD(rate, 64);
	BAD(life_sel, 4);
	BAD(life, 64);
	BAD(sl, 16);
	BAD(flow_label, 0x100000);
	BAD(scope, 16);
	BAD(join_state, 16);
	BAD(resv49, 0x80);
#undef BAD
}

/* ---- PathRecord ---- */

static void pr_equal(const struct imc_path_rec *a, const struct imc_path_rec *b)
{
	EQ(service_id);
	EQMEM(dgid);
	EQMEM(sgid);
	EQ(dlid);
	EQ(slid);
	EQ(raw_traffic);
	EQ(resv_flow);
	EQ(flow_label);
	EQ(hop_limit);
	EQ(tclass);
	EQ(reversible);
	EQ(numb_path);
	EQ(pkey);
	EQ(qos_class);
	EQ(sl);
	EQ(mtu_sel);
	EQ(mtu);
	EQ(rate_sel);
	EQ(rate);
	EQ(life_sel);
	EQ(life);
	EQ(preference);
	EQMEM(resv);
}

static void pr_golden_struct(struct imc_path_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->service_id = 0x1000000000000001ULL;
	gid_fill(&r->dgid, 0x10);
	gid_fill(&r->sgid, 0x20);
	r->dlid = 0x0012;
	r->slid = 0x0034;
	r->raw_traffic = false;
	r->flow_label = 0xabcde;
	r->hop_limit = 0x3f;
	r->tclass = 0x56;
	r->reversible = true;
	r->numb_path = 1;
	r->pkey = 0x8001;
	r->qos_class = 0x123;
	r->sl = 0xa;
	r->mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
	r->mtu = 5;
	r->rate_sel = UMAD_SA_SELECTOR_LARGEST_AVAIL;
	r->rate = 7;
	r->life_sel = UMAD_SA_SELECTOR_LESS_THAN;
	r->life = 0x13;
	r->preference = 0x01;
}

static void pr_golden(void **state)
{
	/* IBA 15.2.5.16: ServiceID, DGID, SGID, DLID, SLID,
	 * RawTraffic:Rsvd(3):FlowLabel:HopLimit, TClass, Reversible:NumbPath,
	 * P_Key, QoSClass:SL, MTU, Rate, PacketLifeTime, Preference, Rsvd. */
	uint8_t want[IMC_PATH_REC_SIZE] = {
		0x10, 0, 0, 0, 0, 0, 0, 0x01,
	};
	uint8_t buf[IMC_PATH_REC_SIZE];
	struct imc_path_rec r, o;

	for (unsigned i = 0; i < 16; i++) {
		want[8 + i] = (uint8_t)(0x10 + i);
		want[24 + i] = (uint8_t)(0x20 + i);
	}
	memcpy(want + 40, "\x00\x12\x00\x34"
			  "\x0a\xbc\xde\x3f"
			  "\x56\x81\x80\x01"
			  "\x12\x3a\x85\xc7\x53\x01", 18);
	pr_golden_struct(&r);
	assert_int_equal(imc_path_rec_pack(&r, buf, sizeof(buf)), 64);
	assert_memory_equal(buf, want, sizeof(want));
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(imc_path_rec_unpack(&o, want, sizeof(want)), 64);
	pr_equal(&o, &r);
	CHECK_LENGTHS(struct imc_path_rec, imc_path_rec_pack,
		      imc_path_rec_unpack, &r, IMC_PATH_REC_SIZE);
}

static void pr_max_and_einval(void **state)
{
	struct imc_path_rec r, o;
	uint8_t buf[IMC_PATH_REC_SIZE];

	memset(&r, 0, sizeof(r));
	r.service_id = UINT64_MAX;
	memset(r.dgid.raw, 0xff, 16);
	memset(r.sgid.raw, 0xff, 16);
	r.dlid = r.slid = r.pkey = 0xffff;
	r.raw_traffic = r.reversible = true;
	r.resv_flow = 7;
	r.flow_label = 0xfffff;
	r.hop_limit = r.tclass = r.preference = 0xff;
	r.numb_path = 0x7f;
	r.qos_class = 0xfff;
	r.sl = 15;
	r.mtu_sel = r.rate_sel = r.life_sel = 3;
	r.mtu = r.rate = r.life = 63;
	memset(r.resv, 0xff, sizeof(r.resv));
	assert_int_equal(imc_path_rec_pack(&r, buf, sizeof(buf)), 64);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xff);
	assert_int_equal(imc_path_rec_unpack(&o, buf, sizeof(buf)), 64);
	pr_equal(&o, &r);

	/* RawTraffic alone is the top bit of byte 44. */
	pr_golden_struct(&r);
	r.raw_traffic = true;
	r.flow_label = 0;
	r.hop_limit = 0;
	assert_int_equal(imc_path_rec_pack(&r, buf, sizeof(buf)), 64);
	assert_memory_equal(buf + 44, "\x80\x00\x00\x00", 4);

#define BAD(field, v)                                                        \
	do {                                                                 \
		pr_golden_struct(&r);                                        \
		r.field = (v);                                               \
		CHECK_EINVAL(imc_path_rec_pack, &r, IMC_PATH_REC_SIZE);      \
	} while (0)
	BAD(resv_flow, 8);
	BAD(flow_label, 0x100000);
	BAD(numb_path, 0x80);
	BAD(qos_class, 0x1000);
	BAD(sl, 16);
	BAD(mtu_sel, 4);
	BAD(mtu, 64);
	BAD(rate_sel, 4);
	BAD(rate, 64);
	BAD(life_sel, 4);
	BAD(life, 64);
#undef BAD
}

/* ---- ClassPortInfo ---- */

static void cpi_equal(const struct imc_class_port_info *a,
		      const struct imc_class_port_info *b)
{
	EQ(base_version);
	EQ(class_version);
	EQ(cap_mask);
	EQ(cap_mask2);
	EQ(resp_time);
	EQMEM(redirect_gid);
	EQ(redirect_tclass);
	EQ(redirect_sl);
	EQ(redirect_flow_label);
	EQ(redirect_lid);
	EQ(redirect_pkey);
	EQ(redirect_resv);
	EQ(redirect_qp);
	EQ(redirect_qkey);
	EQMEM(trap_gid);
	EQ(trap_tclass);
	EQ(trap_sl);
	EQ(trap_flow_label);
	EQ(trap_lid);
	EQ(trap_pkey);
	EQ(trap_hop_limit);
	EQ(trap_qp);
	EQ(trap_qkey);
}

static void cpi_golden_struct(struct imc_class_port_info *c)
{
	memset(c, 0, sizeof(*c));
	c->base_version = 1;
	c->class_version = 2;
	c->cap_mask = UMAD_SA_CAP_MASK_IS_UD_MCAST_SUP |
		      UMAD_SA_CAP_MASK_IS_MULTIPATH_SUP;
	c->cap_mask2 = 1u << 12; /* SendOnlyFullMember (protocol.md) */
	c->resp_time = 0x12;
	gid_fill(&c->redirect_gid, 0x30);
	c->redirect_tclass = 0xab;
	c->redirect_sl = 0x3;
	c->redirect_flow_label = 0x45678;
	c->redirect_lid = 0x0102;
	c->redirect_pkey = 0xffff;
	c->redirect_qp = 0x000001;
	c->redirect_qkey = UMAD_QKEY;
	gid_fill(&c->trap_gid, 0x40);
	c->trap_tclass = 0x01;
	c->trap_sl = 0xf;
	c->trap_flow_label = 0x00002;
	c->trap_lid = 0x0304;
	c->trap_pkey = 0x7fff;
	c->trap_hop_limit = 0x40;
	c->trap_qp = 0xabcdef;
	c->trap_qkey = 0x11223344;
}

static void cpi_golden(void **state)
{
	/* IBA 13.4.8.1 Table 115. */
	uint8_t want[IMC_CLASS_PORT_INFO_SIZE];
	uint8_t buf[IMC_CLASS_PORT_INFO_SIZE];
	struct imc_class_port_info c, o;
	struct umad_class_port_info ucpi;

	memcpy(want, "\x01\x02\x06\x00"
		     "\x00\x02\x00\x12", 8); /* CM2 bit 12 << 5, RespTime */
	for (unsigned i = 0; i < 16; i++) {
		want[8 + i] = (uint8_t)(0x30 + i);
		want[40 + i] = (uint8_t)(0x40 + i);
	}
	memcpy(want + 24, "\xab\x34\x56\x78" "\x01\x02\xff\xff"
			  "\x00\x00\x00\x01" "\x80\x01\x00\x00", 16);
	memcpy(want + 56, "\x01\xf0\x00\x02" "\x03\x04\x7f\xff"
			  "\x40\xab\xcd\xef" "\x11\x22\x33\x44", 16);
	cpi_golden_struct(&c);
	assert_int_equal(imc_class_port_info_pack(&c, buf, sizeof(buf)), 72);
	assert_memory_equal(buf, want, sizeof(want));
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(imc_class_port_info_unpack(&o, want, sizeof(want)),
			 72);
	cpi_equal(&o, &c);
	/* rdma-core's accessors agree on the split of CapabilityMask2. */
	memcpy(&ucpi, want, sizeof(ucpi));
	assert_int_equal(umad_class_cap_mask2(&ucpi), 1u << 12);
	assert_int_equal(umad_class_resp_time(&ucpi), 0x12);
	CHECK_LENGTHS(struct imc_class_port_info, imc_class_port_info_pack,
		      imc_class_port_info_unpack, &c,
		      IMC_CLASS_PORT_INFO_SIZE);
}

static void cpi_max_and_einval(void **state)
{
	struct imc_class_port_info c, o;
	uint8_t buf[IMC_CLASS_PORT_INFO_SIZE];

	memset(&c, 0, sizeof(c));
	c.base_version = c.class_version = 0xff;
	c.cap_mask = 0xffff;
	c.cap_mask2 = 0x7ffffff;
	c.resp_time = 0x1f;
	memset(c.redirect_gid.raw, 0xff, 16);
	memset(c.trap_gid.raw, 0xff, 16);
	c.redirect_tclass = c.trap_tclass = 0xff;
	c.redirect_sl = c.trap_sl = 0xf;
	c.redirect_flow_label = c.trap_flow_label = 0xfffff;
	c.redirect_lid = c.redirect_pkey = c.trap_lid = c.trap_pkey = 0xffff;
	c.redirect_resv = c.trap_hop_limit = 0xff;
	c.redirect_qp = c.trap_qp = 0xffffff;
	c.redirect_qkey = c.trap_qkey = UINT32_MAX;
	assert_int_equal(imc_class_port_info_pack(&c, buf, sizeof(buf)), 72);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xff);
	assert_int_equal(imc_class_port_info_unpack(&o, buf, sizeof(buf)), 72);
	cpi_equal(&o, &c);

#define BAD(field, v)                                                        \
	do {                                                                 \
		cpi_golden_struct(&c);                                       \
		c.field = (v);                                               \
		CHECK_EINVAL(imc_class_port_info_pack, &c,                   \
			     IMC_CLASS_PORT_INFO_SIZE);                      \
	} while (0)
	BAD(cap_mask2, 0x8000000);
	BAD(resp_time, 0x20);
	BAD(redirect_sl, 16);
	BAD(redirect_flow_label, 0x100000);
	BAD(redirect_qp, 0x1000000);
	BAD(trap_sl, 16);
	BAD(trap_flow_label, 0x100000);
	BAD(trap_qp, 0x1000000);
#undef BAD
}

/* ---- InformInfo ---- */

static void ii_equal(const struct imc_inform_info *a,
		     const struct imc_inform_info *b)
{
	EQMEM(gid);
	EQ(lid_range_begin);
	EQ(lid_range_end);
	EQ(resv20);
	EQ(is_generic);
	EQ(subscribe);
	EQ(type);
	EQ(trap_number_or_device_id);
	EQ(qpn);
	EQ(resv_qpn);
	EQ(resp_time_value);
	EQ(resv32);
	EQ(producer_type_or_vendor_id);
}

static void ii_golden_struct(struct imc_inform_info *i)
{
	/* Subscribe to trap 66 from any LID, as a join tracker would. */
	memset(i, 0, sizeof(*i));
	i->lid_range_begin = 0xffff;
	i->lid_range_end = 0;
	i->is_generic = 1;
	i->subscribe = 1;
	i->type = 0xffff;
	i->trap_number_or_device_id = IMC_TRAP_MCAST_GROUP_CREATED;
	i->qpn = 0x000001;
	i->resp_time_value = 0x13;
	i->producer_type_or_vendor_id = IMC_NOTICE_PRODUCER_CLASS_MANAGER;
}

static void ii_golden(void **state)
{
	/* IBA 13.4.8.3 Table 117: GID, LIDRangeBegin, LIDRangeEnd, Rsvd,
	 * IsGeneric, Subscribe, Type, TrapNumber, QPN:Rsvd(3):RespTimeValue,
	 * Rsvd(8):ProducerType. */
	static const uint8_t want[IMC_INFORM_INFO_SIZE] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01,
		0xff, 0xff, 0x00, 0x42, 0x00, 0x00, 0x01, 0x13,
		0x00, 0x00, 0x00, 0x04,
	};
	uint8_t buf[IMC_INFORM_INFO_SIZE];
	struct imc_inform_info i, o;

	ii_golden_struct(&i);
	assert_int_equal(imc_inform_info_pack(&i, buf, sizeof(buf)), 36);
	assert_memory_equal(buf, want, sizeof(want));
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(imc_inform_info_unpack(&o, want, sizeof(want)), 36);
	ii_equal(&o, &i);
	CHECK_LENGTHS(struct imc_inform_info, imc_inform_info_pack,
		      imc_inform_info_unpack, &i, IMC_INFORM_INFO_SIZE);
}

static void ii_max_and_einval(void **state)
{
	struct imc_inform_info i, o;
	uint8_t buf[IMC_INFORM_INFO_SIZE];

	memset(&i, 0, sizeof(i));
	memset(i.gid.raw, 0xff, 16);
	i.lid_range_begin = i.lid_range_end = i.resv20 = 0xffff;
	i.is_generic = i.subscribe = i.resv32 = 0xff;
	i.type = i.trap_number_or_device_id = 0xffff;
	i.qpn = 0xffffff;
	i.resv_qpn = 7;
	i.resp_time_value = 0x1f;
	i.producer_type_or_vendor_id = 0xffffff;
	assert_int_equal(imc_inform_info_pack(&i, buf, sizeof(buf)), 36);
	for (size_t k = 0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], 0xff);
	assert_int_equal(imc_inform_info_unpack(&o, buf, sizeof(buf)), 36);
	ii_equal(&o, &i);

	/* The 3 reserved bits sit between QPN and RespTimeValue. */
	ii_golden_struct(&i);
	i.qpn = 0;
	i.resp_time_value = 0;
	i.resv_qpn = 5;
	assert_int_equal(imc_inform_info_pack(&i, buf, sizeof(buf)), 36);
	assert_memory_equal(buf + 28, "\x00\x00\x00\xa0", 4);

#define BAD(field, v)                                                        \
	do {                                                                 \
		ii_golden_struct(&i);                                        \
		i.field = (v);                                               \
		CHECK_EINVAL(imc_inform_info_pack, &i, IMC_INFORM_INFO_SIZE);\
	} while (0)
	BAD(qpn, 0x1000000);
	BAD(resv_qpn, 8);
	BAD(resp_time_value, 0x20);
	BAD(producer_type_or_vendor_id, 0x1000000);
#undef BAD
}

/* ---- Notice ---- */

static void ntc_equal(const struct imc_notice *a, const struct imc_notice *b)
{
	EQ(is_generic);
	EQ(type);
	EQ(producer_type_or_vendor_id);
	EQ(trap_number_or_device_id);
	EQ(issuer_lid);
	EQ(notice_toggle);
	EQ(notice_count);
	EQMEM(data_details);
	EQMEM(issuer_gid);
}

static void notice_trap66_golden(void **state)
{
	/* IBA 13.4.8.2 Table 116 and 14.2.5.1: IsGeneric:Type, ProducerType,
	 * TrapNumber, IssuerLID, Toggle:Count, DataDetails (48 reserved
	 * bits, then GIDAddr), IssuerGID. */
	uint8_t want[IMC_NOTICE_SIZE] = {
		0x83, 0x00, 0x00, 0x04, 0x00, 0x42, 0x00, 0x01,
		0x00, 0x00,
	};
	struct imc_gid mgid, sm_gid, got;
	struct imc_notice n, o;
	uint8_t buf[IMC_NOTICE_SIZE];

	gid_fill(&mgid, 0x50);
	mgid.raw[0] = 0xff;
	gid_fill(&sm_gid, 0x60);
	for (unsigned i = 0; i < 16; i++) {
		want[16 + i] = mgid.raw[i];
		want[64 + i] = sm_gid.raw[i];
	}
	assert_int_equal(imc_notice_mcast_init(&n, 66, &mgid, 1, &sm_gid), 0);
	assert_int_equal(imc_notice_pack(&n, buf, sizeof(buf)), 80);
	assert_memory_equal(buf, want, sizeof(want));
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(imc_notice_unpack(&o, want, sizeof(want)), 80);
	ntc_equal(&o, &n);
	assert_true(o.is_generic);
	assert_int_equal(o.type, IMC_NOTICE_TYPE_SM);
	assert_int_equal(o.producer_type_or_vendor_id, 4);
	assert_int_equal(o.trap_number_or_device_id, 66);
	assert_int_equal(o.issuer_lid, 1);
	assert_int_equal(imc_notice_mcast_mgid(&o, &got), 0);
	assert_memory_equal(got.raw, mgid.raw, 16);

	/* Trap 67 differs only in the trap number. */
	assert_int_equal(imc_notice_mcast_init(&n, 67, &mgid, 1, &sm_gid), 0);
	assert_int_equal(imc_notice_pack(&n, buf, sizeof(buf)), 80);
	want[5] = 0x43;
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(imc_notice_mcast_mgid(&n, &got), 0);
	assert_memory_equal(got.raw, mgid.raw, 16);

	/* Other traps and vendor notices have no MGID. */
	assert_int_equal(imc_notice_mcast_init(&o, 64, &mgid, 1, &sm_gid),
			 -EINVAL);
	n.trap_number_or_device_id = 64;
	assert_int_equal(imc_notice_mcast_mgid(&n, &got), -EINVAL);
	n.trap_number_or_device_id = 66;
	n.is_generic = false;
	assert_int_equal(imc_notice_mcast_mgid(&n, &got), -EINVAL);

	CHECK_LENGTHS(struct imc_notice, imc_notice_pack, imc_notice_unpack,
		      &n, IMC_NOTICE_SIZE);
}

static void notice_max_and_einval(void **state)
{
	struct imc_notice n, o;
	uint8_t buf[IMC_NOTICE_SIZE];

	memset(&n, 0, sizeof(n));
	n.is_generic = true;
	n.type = 0x7f;
	n.producer_type_or_vendor_id = 0xffffff;
	n.trap_number_or_device_id = n.issuer_lid = 0xffff;
	n.notice_toggle = true;
	n.notice_count = 0x7fff;
	memset(n.data_details, 0xff, sizeof(n.data_details));
	memset(n.issuer_gid.raw, 0xff, 16);
	assert_int_equal(imc_notice_pack(&n, buf, sizeof(buf)), 80);
	for (size_t k = 0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], 0xff);
	assert_int_equal(imc_notice_unpack(&o, buf, sizeof(buf)), 80);
	ntc_equal(&o, &n);

	/* Toggle is the top bit of bytes 8..9, IsGeneric of byte 0. */
	memset(&n, 0, sizeof(n));
	n.notice_toggle = true;
	n.notice_count = 3;
	n.type = IMC_NOTICE_TYPE_INFO;
	assert_int_equal(imc_notice_pack(&n, buf, sizeof(buf)), 80);
	assert_int_equal(buf[0], 0x04);
	assert_int_equal(buf[8], 0x80);
	assert_int_equal(buf[9], 0x03);

	n.type = 0x80;
	CHECK_EINVAL(imc_notice_pack, &n, IMC_NOTICE_SIZE);
	n.type = 0;
	n.producer_type_or_vendor_id = 0x1000000;
	CHECK_EINVAL(imc_notice_pack, &n, IMC_NOTICE_SIZE);
	n.producer_type_or_vendor_id = 0;
	n.notice_count = 0x8000;
	CHECK_EINVAL(imc_notice_pack, &n, IMC_NOTICE_SIZE);
}

/* ---- selectors and records in an SA MAD ---- */

static void selectors(void **state)
{
	assert_string_equal(imc_sa_selector_str(0), "GREATER_THAN");
	assert_string_equal(imc_sa_selector_str(1), "LESS_THAN");
	assert_string_equal(imc_sa_selector_str(2), "EXACTLY");
	assert_string_equal(imc_sa_selector_str(3), "LARGEST_AVAIL");
	assert_string_equal(imc_sa_selector_str(4), "INVALID");
	assert_true(imc_sa_selector_match(UMAD_SA_SELECTOR_GREATER_THAN, 1));
	assert_false(imc_sa_selector_match(UMAD_SA_SELECTOR_GREATER_THAN, 0));
	assert_false(imc_sa_selector_match(UMAD_SA_SELECTOR_GREATER_THAN, -1));
	assert_true(imc_sa_selector_match(UMAD_SA_SELECTOR_LESS_THAN, -1));
	assert_false(imc_sa_selector_match(UMAD_SA_SELECTOR_LESS_THAN, 0));
	assert_false(imc_sa_selector_match(UMAD_SA_SELECTOR_LESS_THAN, 1));
	assert_true(imc_sa_selector_match(UMAD_SA_SELECTOR_EXACTLY, 0));
	assert_false(imc_sa_selector_match(UMAD_SA_SELECTOR_EXACTLY, 1));
	assert_false(imc_sa_selector_match(UMAD_SA_SELECTOR_EXACTLY, -1));
	assert_true(imc_sa_selector_match(UMAD_SA_SELECTOR_LARGEST_AVAIL, -1));
	assert_true(imc_sa_selector_match(UMAD_SA_SELECTOR_LARGEST_AVAIL, 1));
	assert_false(imc_sa_selector_match(4, 0));
}

static void sa_mad_records(void **state)
{
	struct imc_sa_mad m;
	const uint8_t *rec;
	size_t len;

	memset(&m, 0, sizeof(m));
	for (unsigned i = 0; i < IMC_SA_DATA_SIZE; i++)
		m.data[i] = (uint8_t)i;

	m.sa.attr_offset = 0;
	assert_int_equal(imc_sa_mad_record(&m, 0, &rec, &len), -EINVAL);

	/* MCMemberRecords: 7 words each, 3 fit in 200 bytes. */
	m.sa.attr_offset = 7;
	for (unsigned i = 0; i < 3; i++) {
		rec = NULL;
		assert_int_equal(imc_sa_mad_record(&m, i, &rec, &len), 0);
		assert_ptr_equal(rec, m.data + 56 * i);
		assert_int_equal(len, 56);
		assert_int_equal(rec[0], 56 * i);
	}
	assert_int_equal(imc_sa_mad_record(&m, 3, &rec, &len), -EINVAL);
	assert_int_equal(imc_sa_mad_record(&m, UINT_MAX, &rec, &len), -EINVAL);

	/* A record that exactly fills the data area, and one word more. */
	m.sa.attr_offset = 25;
	assert_int_equal(imc_sa_mad_record(&m, 0, &rec, &len), 0);
	assert_int_equal(len, 200);
	assert_int_equal(imc_sa_mad_record(&m, 1, &rec, &len), -EINVAL);
	m.sa.attr_offset = 26;
	assert_int_equal(imc_sa_mad_record(&m, 0, &rec, &len), -EINVAL);
	m.sa.attr_offset = 0xffff;
	assert_int_equal(imc_sa_mad_record(&m, 0, &rec, &len), -EINVAL);

	/* PathRecords: 8 words, 3 fit (192 bytes). */
	m.sa.attr_offset = 8;
	assert_int_equal(imc_sa_mad_record(&m, 2, &rec, &len), 0);
	assert_ptr_equal(rec, m.data + 128);
	assert_int_equal(len, 64);
	assert_int_equal(imc_sa_mad_record(&m, 3, &rec, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mcmr_golden),
		cmocka_unit_test(mcmr_max),
		cmocka_unit_test(mcmr_einval),
		cmocka_unit_test(pr_golden),
		cmocka_unit_test(pr_max_and_einval),
		cmocka_unit_test(cpi_golden),
		cmocka_unit_test(cpi_max_and_einval),
		cmocka_unit_test(ii_golden),
		cmocka_unit_test(ii_max_and_einval),
		cmocka_unit_test(notice_trap66_golden),
		cmocka_unit_test(notice_max_and_einval),
		cmocka_unit_test(selectors),
		cmocka_unit_test(sa_mad_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
