/* PortInfoRecord, NodeRecord and P_KeyTableRecord: golden bytes of OpenSM
 * 3.3.23's answers on ibsim (the data areas of Gets for LID 3, an HCA
 * named "Hca2"), round trips with every bit set, short buffers,
 * out-of-range fields and the rate of each link width and speed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/sa_records.h"

#include "wire_check.h"

static size_t hex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s) / 2;

	assert_true(n <= max);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* Get(PortInfoRecord) EndportLID 3, answered by OpenSM (72 bytes with
 * the pad to 8-byte words). */
static const char pir_lid3[] =
	"00030100"
	"0000000000000000" "fe80000000000000" "0003" "0001" "0050c048"
	"0000" "0ff9" "01" "02" "1f" "02" "74" "52" "00" "11" "40" "40"
	"00" "08" "08" "04" "e0" "40" "0000" "0000" "0000" "20" "1f" "00"
	"00" "0000" "00000000" "0030" "00" "00"
	"00000000";

/* Get(NodeRecord) LID 3 (112 bytes with the pad). */
static const char nr_lid3[] =
	"00030000"
	"01010101" "0000000000100002" "0000000000100002" "0000000000100003"
	"0040" "0000" "000000a1" "01000000"
	"48636132000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000000000"
	"00000000";

/* Get(P_KeyTableRecord) LID 3, block 0, port 1, SM_Key 1. */
static const char pkr_lid3[] =
	"0003000001000000ffff" "0000"
	"000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000000000";

static void port_info_rec_golden(void **state)
{
	uint8_t in[80], out[80];
	struct imc_port_info_rec r;
	size_t n = hex(pir_lid3, in, sizeof(in));

	(void)state;
	assert_int_equal(n, 72);
	assert_int_equal(imc_port_info_rec_unpack(&r, in, n),
			 IMC_PORT_INFO_REC_SIZE);
	assert_int_equal(r.lid, 3);
	assert_int_equal(r.port_num, 1);
	assert_int_equal(r.options, 0);
	assert_true(r.info.gid_prefix == 0xfe80000000000000ull);
	assert_int_equal(r.info.lid, 3);
	assert_int_equal(r.info.master_sm_lid, 1);
	assert_int_equal(r.info.cap_mask, 0x0050c048);
	assert_int_equal(r.info.m_key_lease, 4089);
	assert_int_equal(r.info.local_port, 1);
	assert_int_equal(r.info.width_enabled, 2);
	assert_int_equal(r.info.width_supported, 0x1f);
	assert_int_equal(r.info.width_active, 2);       /* 4x */
	assert_int_equal(r.info.speed_supported, 7);
	assert_int_equal(r.info.state, IMC_PORT_STATE_ACTIVE);
	assert_int_equal(r.info.phys_state, 5);         /* LinkUp */
	assert_int_equal(r.info.down_default, 2);       /* Polling */
	assert_int_equal(r.info.lmc, 0);
	assert_int_equal(r.info.speed_active, 1);       /* SDR */
	assert_int_equal(r.info.speed_enabled, 1);
	assert_int_equal(r.info.neighbor_mtu, 4);
	assert_int_equal(r.info.master_sm_sl, 0);
	assert_int_equal(r.info.vl_cap, 4);
	assert_int_equal(r.info.vl_arb_high_cap, 8);
	assert_int_equal(r.info.vl_arb_low_cap, 8);
	assert_int_equal(r.info.mtu_cap, 4);            /* 2048 */
	assert_int_equal(r.info.vl_stall, 7);
	assert_int_equal(r.info.hoq_life, 0);
	assert_int_equal(r.info.op_vls, 4);
	assert_int_equal(r.info.guid_cap, 32);
	assert_int_equal(r.info.subnet_timeout, 31);
	assert_int_equal(r.info.client_rereg, 0);
	assert_int_equal(r.info.cap_mask2, 0x30);
	assert_int_equal(r.info.speed_ext_active, 0);
	/* 4x SDR = 10 Gb/s: rate code 3. */
	assert_int_equal(imc_port_info_rate(&r.info), 3);
	memset(out, CANARY, sizeof(out));
	assert_int_equal(imc_port_info_rec_pack(&r, out, sizeof(out)),
			 IMC_PORT_INFO_REC_SIZE);
	assert_memory_equal(out, in, IMC_PORT_INFO_REC_SIZE);
	assert_int_equal(out[IMC_PORT_INFO_REC_SIZE], CANARY);
}

static void node_rec_golden(void **state)
{
	uint8_t in[120], out[120];
	struct imc_node_rec r;
	size_t n = hex(nr_lid3, in, sizeof(in));

	(void)state;
	assert_int_equal(n, 112);
	assert_int_equal(imc_node_rec_unpack(&r, in, n), IMC_NODE_REC_SIZE);
	assert_int_equal(r.lid, 3);
	assert_int_equal(r.info.base_version, 1);
	assert_int_equal(r.info.class_version, 1);
	assert_int_equal(r.info.node_type, IMC_NODE_TYPE_CA);
	assert_int_equal(r.info.num_ports, 1);
	assert_true(r.info.sys_image_guid == 0x100002);
	assert_true(r.info.node_guid == 0x100002);
	assert_true(r.info.port_guid == 0x100003);
	assert_int_equal(r.info.partition_cap, 0x40);
	assert_int_equal(r.info.device_id, 0);
	assert_int_equal(r.info.revision, 0xa1);
	assert_int_equal(r.info.local_port, 1);
	assert_int_equal(r.info.vendor_id, 0);
	assert_string_equal((const char *)r.desc, "Hca2");
	memset(out, CANARY, sizeof(out));
	assert_int_equal(imc_node_rec_pack(&r, out, sizeof(out)),
			 IMC_NODE_REC_SIZE);
	assert_memory_equal(out, in, IMC_NODE_REC_SIZE);
	assert_int_equal(out[IMC_NODE_REC_SIZE], CANARY);
}

static void pkey_table_rec_golden(void **state)
{
	uint8_t in[80], out[80];
	struct imc_pkey_table_rec r;
	size_t n = hex(pkr_lid3, in, sizeof(in));

	(void)state;
	assert_int_equal(n, 72);
	assert_int_equal(imc_pkey_table_rec_unpack(&r, in, n),
			 IMC_PKEY_TABLE_REC_SIZE);
	assert_int_equal(r.lid, 3);
	assert_int_equal(r.block, 0);
	assert_int_equal(r.port_num, 1);
	assert_int_equal(r.pkeys[0], 0xffff);
	for (size_t i = 1; i < IMC_PKEY_BLOCK_SIZE; i++)
		assert_int_equal(r.pkeys[i], 0);
	assert_int_equal(imc_pkey_table_rec_pack(&r, out, sizeof(out)),
			 IMC_PKEY_TABLE_REC_SIZE);
	assert_memory_equal(out, in, IMC_PKEY_TABLE_REC_SIZE);
}

/* Every byte 0xff: each field at its maximum, reserved bits kept. */
static void all_ones(void **state)
{
	uint8_t in[IMC_NODE_REC_SIZE], out[IMC_NODE_REC_SIZE];
	struct imc_port_info_rec p;
	struct imc_node_rec nr;
	struct imc_pkey_table_rec k;

	(void)state;
	memset(in, 0xff, sizeof(in));
	assert_int_equal(imc_port_info_rec_unpack(&p, in, sizeof(in)), 68);
	assert_int_equal(p.info.state, 15);
	assert_int_equal(p.info.lmc, 7);
	assert_int_equal(p.info.resv34, 7);
	assert_int_equal(p.info.hoq_life, 31);
	assert_int_equal(p.info.client_rereg, 1);
	assert_int_equal(p.info.resv51, 3);
	assert_int_equal(p.info.subnet_timeout, 31);
	assert_int_equal(p.info.resv56, 0xff);
	assert_int_equal(p.info.link_rtl, 0xffffff);
	assert_int_equal(p.info.speed_ext_enabled, 31);
	memset(out, 0, sizeof(out));
	assert_int_equal(imc_port_info_rec_pack(&p, out, sizeof(out)), 68);
	assert_memory_equal(out, in, 68);
	assert_int_equal(imc_node_rec_unpack(&nr, in, sizeof(in)), 108);
	assert_int_equal(nr.info.vendor_id, 0xffffff);
	assert_int_equal(nr.info.local_port, 0xff);
	memset(out, 0, sizeof(out));
	assert_int_equal(imc_node_rec_pack(&nr, out, sizeof(out)), 108);
	assert_memory_equal(out, in, 108);
	assert_int_equal(imc_pkey_table_rec_unpack(&k, in, sizeof(in)), 72);
	memset(out, 0, sizeof(out));
	assert_int_equal(imc_pkey_table_rec_pack(&k, out, sizeof(out)), 72);
	assert_memory_equal(out, in, 72);
}

static void short_buffers(void **state)
{
	struct imc_port_info_rec p;
	struct imc_port_info pi;
	struct imc_node_rec nr;
	struct imc_node_info ni;
	struct imc_pkey_table_rec k;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&pi, 0, sizeof(pi));
	memset(&nr, 0, sizeof(nr));
	memset(&ni, 0, sizeof(ni));
	memset(&k, 0, sizeof(k));
	CHECK_LENGTHS(struct imc_port_info_rec, imc_port_info_rec_pack,
		      imc_port_info_rec_unpack, &p, IMC_PORT_INFO_REC_SIZE);
	CHECK_LENGTHS(struct imc_port_info, imc_port_info_pack,
		      imc_port_info_unpack, &pi, IMC_PORT_INFO_SIZE);
	CHECK_LENGTHS(struct imc_node_rec, imc_node_rec_pack,
		      imc_node_rec_unpack, &nr, IMC_NODE_REC_SIZE);
	CHECK_LENGTHS(struct imc_node_info, imc_node_info_pack,
		      imc_node_info_unpack, &ni, IMC_NODE_INFO_SIZE);
	CHECK_LENGTHS(struct imc_pkey_table_rec, imc_pkey_table_rec_pack,
		      imc_pkey_table_rec_unpack, &k, IMC_PKEY_TABLE_REC_SIZE);
}

#define CHECK_EINVAL(packfn, obj, size)                                      \
	do {                                                                 \
		uint8_t b_[(size)];                                          \
		memset(b_, CANARY, sizeof(b_));                              \
		assert_int_equal(packfn((obj), b_, sizeof(b_)), -EINVAL);    \
		for (size_t k_ = 0; k_ < sizeof(b_); k_++)                   \
			assert_int_equal(b_[k_], CANARY);                    \
	} while (0)

static void out_of_range(void **state)
{
	struct imc_port_info_rec p;
	struct imc_node_rec nr;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.info.state = 16;
	CHECK_EINVAL(imc_port_info_rec_pack, &p, IMC_PORT_INFO_REC_SIZE);
	CHECK_EINVAL(imc_port_info_pack, &p.info, IMC_PORT_INFO_SIZE);
	p.info.state = 4;
	p.info.lmc = 8;
	CHECK_EINVAL(imc_port_info_rec_pack, &p, IMC_PORT_INFO_REC_SIZE);
	p.info.lmc = 0;
	p.info.link_rtl = 0x1000000;
	CHECK_EINVAL(imc_port_info_rec_pack, &p, IMC_PORT_INFO_REC_SIZE);
	p.info.link_rtl = 0;
	p.info.subnet_timeout = 32;
	CHECK_EINVAL(imc_port_info_rec_pack, &p, IMC_PORT_INFO_REC_SIZE);
	p.info.subnet_timeout = 0;
	p.info.mtu_cap = 16;
	CHECK_EINVAL(imc_port_info_rec_pack, &p, IMC_PORT_INFO_REC_SIZE);
	memset(&nr, 0, sizeof(nr));
	nr.info.vendor_id = 0x1000000;
	CHECK_EINVAL(imc_node_rec_pack, &nr, IMC_NODE_REC_SIZE);
	CHECK_EINVAL(imc_node_info_pack, &nr.info, IMC_NODE_INFO_SIZE);
}

/* IBA 15.2.5.16 rate codes of width x speed (IBA 1.3 for 2x and the
 * extended speeds). */
static void rates(void **state)
{
	static const struct {
		uint8_t width, speed, ext, code;
	} t[] = {
		{ 1, 1, 0, 2 },   /* 1x SDR 2.5 */
		{ 1, 2, 0, 5 },   /* 1x DDR 5 */
		{ 1, 4, 0, 3 },   /* 1x QDR 10 */
		{ 2, 1, 0, 3 },   /* 4x SDR 10 */
		{ 2, 2, 0, 6 },   /* 4x DDR 20 */
		{ 2, 4, 0, 7 },   /* 4x QDR 40 */
		{ 4, 1, 0, 6 },   /* 8x SDR 20 */
		{ 4, 4, 0, 9 },   /* 8x QDR 80 */
		{ 8, 1, 0, 4 },   /* 12x SDR 30 */
		{ 8, 2, 0, 8 },   /* 12x DDR 60 */
		{ 8, 4, 0, 10 },  /* 12x QDR 120 */
		{ 16, 1, 0, 5 },  /* 2x SDR 5 */
		{ 1, 1, 1, 11 },  /* 1x FDR 14 */
		{ 2, 1, 1, 12 },  /* 4x FDR 56 */
		{ 8, 1, 1, 14 },  /* 12x FDR 168 */
		{ 1, 1, 2, 15 },  /* 1x EDR 25 */
		{ 2, 1, 2, 16 },  /* 4x EDR 100 */
		{ 8, 1, 2, 18 },  /* 12x EDR 300 */
		{ 2, 1, 4, 17 },  /* 4x HDR 200 */
		{ 4, 1, 4, 21 },  /* 8x HDR 400 */
		{ 8, 1, 4, 22 },  /* 12x HDR 600 */
		{ 3, 1, 0, 0 },   /* not a width */
		{ 2, 3, 0, 0 },   /* not a speed */
		{ 0, 0, 0, 0 },
	};
	struct imc_port_info p;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.width_active = t[i].width;
		p.speed_active = t[i].speed;
		p.speed_ext_active = t[i].ext;
		assert_int_equal(imc_port_info_rate(&p), t[i].code);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(port_info_rec_golden),
		cmocka_unit_test(node_rec_golden),
		cmocka_unit_test(pkey_table_rec_golden),
		cmocka_unit_test(all_ones),
		cmocka_unit_test(short_buffers),
		cmocka_unit_test(out_of_range),
		cmocka_unit_test(rates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
