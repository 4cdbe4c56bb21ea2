/* Record pack + unpack cost: MCMemberRecord, PortInfo, the three
 * headers of an SA MAD (MAD, RMPP, SA) and the four of a UD packet with a
 * GRH (LRH, GRH, BTH, DETH), each packed into a buffer and unpacked
 * again. Prints CPU nanoseconds per pack+unpack, the best of
 * five rounds (CLOCK_PROCESS_CPUTIME_ID: time other processes take on a
 * loaded machine does not count).
 *
 * Usage: bench_wire [ROUNDS]   (default 5000000 per record kind)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/mad.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_records.h"

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile unsigned sink;

static void mcmr_round(long n)
{
	struct imc_mcmr r, o;
	uint8_t buf[IMC_MCMR_SIZE];

	memset(&r, 0, sizeof(r));
	r.qkey = 0x80010000;
	r.mtu_sel = 2;
	r.mtu = 4;
	r.rate = 3;
	r.sl = 5;
	r.flow_label = 0x12345;
	r.hop_limit = 9;
	r.scope = 2;
	r.join_state = 1;
	r.pkey = 0xffff;
	for (long i = 0; i < n; i++) {
		r.mlid = (uint16_t)i;
		imc_mcmr_pack(&r, buf, sizeof(buf));
		imc_mcmr_unpack(&o, buf, sizeof(buf));
		sink += o.mlid;
	}
}

static void port_info_round(long n)
{
	struct imc_port_info p, o;
	uint8_t buf[IMC_PORT_INFO_SIZE];

	memset(&p, 0, sizeof(p));
	p.state = 4;
	p.lmc = 1;
	p.mtu_cap = 4;
	p.link_rtl = 0x1234;
	for (long i = 0; i < n; i++) {
		p.lid = (uint16_t)i;
		imc_port_info_pack(&p, buf, sizeof(buf));
		imc_port_info_unpack(&o, buf, sizeof(buf));
		sink += o.lid;
	}
}

static void sa_mad_round(long n)
{
	struct imc_sa_mad m, o;
	uint8_t buf[IMC_MAD_SIZE];

	memset(&m, 0, sizeof(m));
	m.mad.base_version = 1;
	m.mad.mgmt_class = 3;
	m.mad.class_version = 2;
	m.mad.method = 0x12;
	m.mad.attr_id = 0x38;
	m.rmpp.resp_time = 0x1f;
	m.sa.comp_mask = 0x30000;
	for (long i = 0; i < n; i++) {
		m.mad.tid = (uint64_t)i;
		imc_sa_mad_pack(&m, buf, sizeof(buf));
		imc_sa_mad_unpack(&o, buf, sizeof(buf));
		sink += (unsigned)o.mad.tid;
	}
}

static void ud_headers_round(long n)
{
	struct imc_lrh l = { .vl = 0, .sl = 3, .lnh = 3, .pkt_len = 20 };
	struct imc_grh g = { .ipver = 6, .tclass = 0, .flow_label = 7,
			     .next_hdr = 0x1b, .hop_limit = 255 };
	struct imc_bth b = { .opcode = 0x64, .pkey = 0xffff,
			     .dest_qp = 0xffffff };
	struct imc_deth d = { .qkey = 0x80010000, .src_qp = 2 };
	uint8_t buf[IMC_LRH_SIZE + IMC_GRH_SIZE + IMC_BTH_SIZE +
		    IMC_DETH_SIZE];
	uint8_t *p = buf;

	for (long i = 0; i < n; i++) {
		b.psn = (uint32_t)i & 0xffffff;
		imc_lrh_pack(&l, p, IMC_LRH_SIZE);
		imc_grh_pack(&g, p + 8, IMC_GRH_SIZE);
		imc_bth_pack(&b, p + 48, IMC_BTH_SIZE);
		imc_deth_pack(&d, p + 60, IMC_DETH_SIZE);
		imc_lrh_unpack(&l, p, IMC_LRH_SIZE);
		imc_grh_unpack(&g, p + 8, IMC_GRH_SIZE);
		imc_bth_unpack(&b, p + 48, IMC_BTH_SIZE);
		imc_deth_unpack(&d, p + 60, IMC_DETH_SIZE);
		sink += b.psn;
	}
}

static double best_ns(void (*round)(long), long n)
{
	double best = 0;

	for (int k = 0; k < 5; k++) {
		double t0 = cpu_now(), t;

		round(n);
		t = (cpu_now() - t0) / (double)n;
		if (!k || t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;

	if (n <= 0) {
		fprintf(stderr, "usage: bench_wire [ROUNDS]\n");
		return 2;
	}
	printf("MCMemberRecord  %6.1f ns per pack+unpack\n",
	       best_ns(mcmr_round, n));
	printf("PortInfo        %6.1f ns per pack+unpack\n",
	       best_ns(port_info_round, n));
	printf("SA MAD (256 B)  %6.1f ns per pack+unpack\n",
	       best_ns(sa_mad_round, n));
	printf("UD headers      %6.1f ns per pack+unpack\n",
	       best_ns(ud_headers_round, n));
	return 0;
}
