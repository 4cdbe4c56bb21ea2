/* Unicast UD datagram throughput of the embedded fabric on one core.
 *
 * Usage: bench_fabric_packets [DELIVERIES [IN_FLIGHT [PAYLOAD]]]
 *        (defaults 5000000, 64, 64)
 *
 * A two-level fat tree (fat-tree:leaves=2,hosts=1,spines=1): one HCA
 * sends to the other across leaf -> spine -> leaf, three switches and
 * four cables, on a virtual loop. The sender keeps IN_FLIGHT datagrams
 * outstanding: every receive callback sends one more, until DELIVERIES
 * have been delivered. Every datagram costs four hop timers (one per
 * cable), one completion timer, the checks at each port and the copy of
 * its payload. CLOCK_MONOTONIC and the thread's CPU clock only measure;
 * the figures per delivery are CPU time, which other load on the machine
 * does not inflate (the wall-clock rate is printed beside it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/fabric.h"

struct ctx {
	struct imc_qp *tx;
	struct imc_ah ah;
	uint8_t payload[4096];
	size_t len;
	uint64_t to_send;
	uint64_t received;
};

static double seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_fabric_packets: %s failed (%d)\n", what, err);
	exit(1);
}

static void send_one(struct ctx *c)
{
	int err;

	if (!c->to_send)
		return;
	c->to_send--;
	err = imc_qp_send(c->tx, &c->ah, 2, 0x1111, c->payload, c->len);
	if (err)
		die("imc_qp_send", err);
}

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r, void *arg)
{
	struct ctx *c = arg;

	(void)qp;
	(void)r;
	c->received++;
	send_one(c);
}

static void nop(struct imc_qp *qp, const struct imc_ud_recv *r, void *arg)
{
	(void)qp;
	(void)r;
	(void)arg;
}

int main(int argc, char **argv)
{
	uint64_t want = argc > 1 ? strtoull(argv[1], NULL, 0) : 5000000;
	uint64_t inflight = argc > 2 ? strtoull(argv[2], NULL, 0) : 64;
	size_t len = argc > 3 ? strtoul(argv[3], NULL, 0) : 64;
	struct imc_fabric_config cfg;
	struct imc_fabric_totals tot;
	struct imc_port_attr a;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_qp *rx;
	struct ctx c;
	double t0, c0, el, cpu;
	int err;

	if (!want || !inflight || len > 2048) {
		fprintf(stderr, "usage: bench_fabric_packets [DELIVERIES "
				"[IN_FLIGHT [PAYLOAD<=2048]]]\n");
		return 2;
	}
	memset(&c, 0, sizeof(c));
	err = imc_topo_generate("fat-tree:leaves=2,hosts=1,spines=1", &t,
				NULL, 0);
	if (err)
		die("imc_topo_generate", err);
	err = imc_loop_create_virtual(0, &loop);
	if (err)
		die("imc_loop_create_virtual", err);
	imc_fabric_config_default(&cfg);
	err = imc_fabric_create(t, loop, &cfg, &f);
	if (!err)
		err = imc_fabric_bring_up(f);
	if (!err)
		err = imc_loop_run(loop);
	if (err)
		die("fabric set-up", err);
	err = imc_qp_create(f, 0, 1, 0, 0x1111, 0xffff, nop, NULL, &c.tx);
	if (!err)
		err = imc_qp_create(f, 1, 1, 0, 0x1111, 0xffff, on_recv, &c,
				    &rx);
	if (!err)
		err = imc_fabric_port_attr(f, 1, 1, &a);
	if (err)
		die("QP set-up", err);
	c.ah.dlid = a.lid;
	c.len = len;
	for (size_t i = 0; i < len; i++)
		c.payload[i] = (uint8_t)i;
	c.to_send = want;

	t0 = seconds(CLOCK_MONOTONIC);
	c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
	for (uint64_t i = 0; i < inflight; i++)
		send_one(&c);
	err = imc_loop_run(loop);
	cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
	el = seconds(CLOCK_MONOTONIC) - t0;
	if (err)
		die("imc_loop_run", err);
	imc_fabric_totals(f, &tot);
	if (c.received != want || tot.delivered != want ||
	    tot.hops != 4 * want) {
		fprintf(stderr, "bench_fabric_packets: delivered %llu of %llu "
				"(%llu hops)\n",
			(unsigned long long)tot.delivered,
			(unsigned long long)want,
			(unsigned long long)tot.hops);
		return 1;
	}
	printf("fabric unicast UD, HCA -> leaf -> spine -> leaf -> HCA, "
	       "%zu-byte payload, %llu in flight\n", len,
	       (unsigned long long)inflight);
	printf("  %llu deliveries in %.3f s CPU: %.2f M deliveries/s, "
	       "%.1f ns per delivery, %.1f ns per hop\n",
	       (unsigned long long)want, cpu, (double)want / cpu / 1e6,
	       cpu * 1e9 / (double)want, cpu * 1e9 / (double)tot.hops);
	printf("  wall clock %.3f s: %.2f M deliveries/s\n", el,
	       (double)want / el / 1e6);
	printf("  virtual time %.3f ms\n",
	       (double)imc_loop_now(loop) / 1e6);

	imc_qp_destroy(c.tx);
	imc_qp_destroy(rx);
	imc_fabric_destroy(f);
	imc_loop_destroy(loop);
	imc_topo_destroy(t);
	return 0;
}
