/* Record pack + unpack cost: MCMemberRecord, PortInfo and the three
 * headers of an SA MAD (MAD, RMPP, SA), each packed into a buffer and
 * unpacked again. Prints CPU nanoseconds per pack+unpack, the best of
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
	return 0;
}
