/* IPoIB on the simulated fabric, on one core.
 *
 * Usage: bench_ipoib [PACKETS [HOSTS [FAMILY [GAP_NS]]]]
 *        (defaults 2000000, 10000, both, 0; FAMILY 4 or 6; HOSTS 0 skips
 *        the bring-up, PACKETS 0 the data path; GAP_NS spaces the
 *        hosts' pings, 0 sends them all at once)
 *
 * Data path: two hosts of fat-tree:leaves=2,hosts=1,spines=1 (HCA -> leaf
 * -> spine -> leaf -> HCA, as bench_fabric_packets), each with an IPoIB
 * interface that joined the broadcast group through its tracker and the
 * SA; after one ping resolved the neighbour, host A sends UDP packets of
 * a fixed IP size (64 and 2044 bytes, the IPoIB MTU of a 2048 link) to
 * host B through imc_ipoib_xmit(), keeping 64 in flight: B's host model
 * counts each delivery and, when half the window is back, a timer on the
 * loop sends more (an interface op may not call into the interface).
 * Each packet costs the sender's encapsulation and neighbour lookup, the
 * fabric's four hops and completion, and the receiver's checks, endpoint
 * refresh and delivery.
 *
 * Bring-up: HOSTS hosts on a fat tree large enough, each with an
 * interface: every one joins the broadcast group (FullMember, one SA
 * Set per host, the SA grows the group's tree), gets carrier, then pings
 * the next host, resolving it with ARP (FAMILY 4: a broadcast to every
 * host of the partition) or ND (FAMILY 6: an NS to the target's
 * solicited-node group, through a send-only join). Printed: the virtual
 * time until every host has carrier and until every host has its echo
 * reply, and the wall and CPU time of each phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/ipoib_world.h"

#define MS IMC_NSEC_PER_MSEC

static double seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_ipoib: %s failed (%d)\n", what, err);
	exit(1);
}

/* ---- data path ---- */

enum { WINDOW = 64 };

struct pump {
	struct iw *w;
	struct iw_if *a, *b;
	uint8_t pkt[4096];
	size_t len;
	uint64_t to_send, sent, received;
	struct imc_timer t;
};

static struct pump *the_pump;

static void pump_fire(struct imc_timer *t)
{
	struct pump *p = imc_container_of(t, struct pump, t);

	while (p->to_send && p->sent - p->received < WINDOW) {
		int rc = imc_ipoib_xmit(p->a->ifc, p->pkt, p->len);

		if (rc)
			die("imc_ipoib_xmit", rc);
		p->to_send--;
		p->sent++;
	}
}

static void pump_deliver(struct iw_if *i, const struct imc_ipoib_packet *pk)
{
	struct pump *p = the_pump;

	(void)i;
	(void)pk;
	p->received++;
	if (p->to_send && p->sent - p->received <= WINDOW / 2 &&
	    !imc_timer_armed(&p->t))
		imc_timer_arm(p->w->loop, &p->t, imc_loop_now(p->w->loop));
}

static void udp_packet(struct pump *p, size_t ip_len)
{
	uint8_t *d = p->pkt;

	memset(d, 0, ip_len);
	d[0] = 0x45;
	imc_put16(d + 2, (uint16_t)ip_len);
	d[8] = 64;
	d[9] = 17;
	imc_put32(d + 12, p->a->addr[0].v4);
	imc_put32(d + 16, p->b->addr[0].v4);
	imc_put16(d + 10, iw_csum(d, 20, 0));
	imc_put16(d + 20, 4000);
	imc_put16(d + 22, 9);
	imc_put16(d + 24, (uint16_t)(ip_len - 20));
	p->len = ip_len;
}

static void data_path(uint64_t n, size_t ip_len)
{
	struct iw w;
	struct pump p;
	struct imc_ipoib_stats sa, sb;
	double c0, c1, w0, w1;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = iw_create(&w, "fat-tree:leaves=2,hosts=1,spines=1", NULL, NULL);
	if (!rc)
		rc = iw_if_up(&w, iw_hca(&w, 0), 0xFFFF, &p.a, "10.0.0.1/24",
			      NULL);
	if (!rc)
		rc = iw_if_up(&w, iw_hca(&w, 1), 0xFFFF, &p.b, "10.0.0.2/24",
			      NULL);
	if (rc)
		die("set-up", rc);
	iw_run_for(&w, 10 * MS);
	if (iw_ping(p.a, "10.0.0.2", 1, 8) || (iw_run_for(&w, 10 * MS),
					       p.a->echo_replies != 1))
		die("the first ping", -1);
	p.w = &w;
	the_pump = &p;
	p.b->on_deliver = pump_deliver;
	p.received = 0;
	p.to_send = n;
	udp_packet(&p, ip_len);
	imc_timer_init(&p.t, pump_fire);
	imc_timer_arm(w.loop, &p.t, imc_loop_now(w.loop));
	c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
	w0 = seconds(CLOCK_MONOTONIC);
	imc_loop_run(w.loop);
	c1 = seconds(CLOCK_THREAD_CPUTIME_ID);
	w1 = seconds(CLOCK_MONOTONIC);
	sa = iw_stats(p.a);
	sb = iw_stats(p.b);
	if (p.received != n || sb.rx_packets < n || sa.tx_packets < n)
		die("the run (packets lost)", (int)(n - p.received));
	printf("data path  %4zu B IP  %9llu packets  %6.2f M packets/s CPU  "
	       "%6.0f ns/packet  %6.2f M packets/s wall  %7.2f Gbit/s IP (CPU)\n",
	       ip_len, (unsigned long long)n, (double)n / (c1 - c0) / 1e6,
	       (c1 - c0) * 1e9 / (double)n, (double)n / (w1 - w0) / 1e6,
	       (double)n * (double)ip_len * 8 / (c1 - c0) / 1e9);
	if (iw_destroy(&w))
		die("teardown (timers left)", -1);
}

/* ---- bring-up ---- */

static imc_time_t last_reply;

/* The time of each host's first echo reply; the last of them is when
 * every host had resolved its neighbour and heard back. */
static void note_reply(struct iw_if *i, const struct imc_ipoib_packet *p)
{
	(void)p;
	if (i->echo_replies == 1 && !i->user) {
		i->user = i;
		last_reply = imc_loop_now(i->h->w->loop);
	}
}

/* A fat tree with at least n hosts: two levels (32 hosts per leaf, 16
 * spines) up to 4,064 hosts, the spines' radix of 254 allowing; above,
 * three levels of pods of 32 leaves with 18 hosts each, as bench_bringup
 * builds them (18 pods: 10,368 hosts). */
static void tree_for(unsigned n, char *spec, size_t len)
{
	if (n <= 127 * 32)
		snprintf(spec, len, "fat-tree:leaves=%u,hosts=32,spines=16",
			 (n + 31) / 32);
	else
		snprintf(spec, len,
			 "fat-tree:pods=%u,leaves=32,hosts=18,aggs=18,spines=324",
			 (n + 575) / 576);
}

/* Host i pings host i + 1: all at once (gap 0) or one every gap ns. */
struct pinger {
	struct iw_if **ifs;
	unsigned n, next;
	int family;
	imc_time_t gap;
	struct imc_loop *loop;
	struct imc_timer t;
};

static struct pinger pinger;

static void ping_fire(struct imc_timer *t)
{
	struct pinger *p = imc_container_of(t, struct pinger, t);
	char dst[64];

	do {
		unsigned i = p->next++, j = (i + 1) % p->n;
		int rc;

		if (p->family == 4)
			snprintf(dst, sizeof(dst), "10.%u.%u.%u",
				 (j + 1) >> 16, ((j + 1) >> 8) & 255,
				 (j + 1) & 255);
		else
			snprintf(dst, sizeof(dst), "fd00::%x:%x",
				 (j + 1) >> 16, (j + 1) & 0xFFFF);
		rc = iw_ping(p->ifs[i], dst, 1, 8);
		if (rc)
			die("iw_ping", rc);
	} while (!p->gap && p->next < p->n);
	if (p->next < p->n)
		imc_timer_arm(p->loop, &p->t, imc_loop_now(p->loop) + p->gap);
}

static void bringup(unsigned n, int family, imc_time_t gap)
{
	struct iw w;
	struct iw_if **ifs = calloc(n, sizeof(*ifs));
	uint32_t *hca = calloc(n, sizeof(*hca));
	char spec[128], addr[64];
	double c0, c1, c2, w0, w1, w2;
	imc_time_t t0, t_up = 0, t_done = 0, step = 10 * MS;
	unsigned up = 0, done = 0, k = 0;
	uint64_t arp = 0, nd = 0, joins = 0, deliveries;
	struct imc_fabric_totals tot;
	int rc;

	if (!ifs || !hca)
		die("calloc", -1);
	tree_for(n, spec, sizeof(spec));
	rc = iw_create(&w, spec, NULL, NULL);
	if (rc)
		die("iw_create", rc);
	for (uint32_t i = 0; i < w.t->nnodes && k < n; i++)
		if (w.t->node[i].type == IMC_NODE_HCA)
			hca[k++] = i;
	if (k < n)
		die("topology", -1);
	t0 = imc_loop_now(w.loop);
	c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
	w0 = seconds(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < n; i++) {
		if (family == 4)
			snprintf(addr, sizeof(addr), "10.%u.%u.%u/8",
				 (i + 1) >> 16, ((i + 1) >> 8) & 255,
				 (i + 1) & 255);
		else
			snprintf(addr, sizeof(addr), "fd00::%x:%x/64",
				 (i + 1) >> 16, (i + 1) & 0xFFFF);
		rc = iw_if_up(&w, hca[i], 0xFFFF, &ifs[i], addr, NULL);
		if (rc)
			die("iw_if_up", rc);
	}
	/* Up: every carrier. */
	while (up < n) {
		iw_run_for(&w, step);
		up = 0;
		for (unsigned i = 0; i < n; i++)
			up += imc_ipoib_carrier(ifs[i]->ifc);
		if (imc_loop_now(w.loop) - t0 > 60 * IMC_NSEC_PER_SEC)
			die("bring-up (carrier)", (int)up);
	}
	for (unsigned i = 0; i < n; i++)
		if (ifs[i]->last_up - t0 > t_up)
			t_up = ifs[i]->last_up - t0;
	c1 = seconds(CLOCK_THREAD_CPUTIME_ID);
	w1 = seconds(CLOCK_MONOTONIC);
	last_reply = 0;
	for (unsigned i = 0; i < n; i++)
		ifs[i]->on_deliver = note_reply;
	t0 = imc_loop_now(w.loop);
	pinger.ifs = ifs;
	pinger.n = n;
	pinger.next = 0;
	pinger.family = family;
	pinger.gap = gap;
	pinger.loop = w.loop;
	imc_timer_init(&pinger.t, ping_fire);
	imc_timer_arm(w.loop, &pinger.t, t0);
	while (done < n) {
		iw_run_for(&w, step);
		done = 0;
		for (unsigned i = 0; i < n; i++)
			done += ifs[i]->echo_replies > 0;
		if (imc_loop_now(w.loop) - t0 > 120 * IMC_NSEC_PER_SEC)
			die("bring-up (resolution)", (int)done);
	}
	t_done = last_reply - t0;
	c2 = seconds(CLOCK_THREAD_CPUTIME_ID);
	w2 = seconds(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < n; i++) {
		struct imc_ipoib_stats st = iw_stats(ifs[i]);

		arp += st.arp_tx;
		nd += st.nd_tx;
		joins += st.joins;
	}
	imc_fabric_totals(w.f, &tot);
	deliveries = tot.delivered;
	printf("bring-up   %u hosts IPv%d (%s): carrier on all %.3f ms virtual "
	       "after up (%.2f s wall, %.2f s CPU); then every ping answered "
	       "%.3f ms virtual after the first was sent, %llu ns apart "
	       "(%.2f s wall, %.2f s CPU); "
	       "%llu joins, %llu ARP, %llu ND sent; %llu deliveries\n",
	       n, family, spec, (double)t_up / 1e6, w1 - w0, c1 - c0,
	       (double)t_done / 1e6, (unsigned long long)gap, w2 - w1,
	       c2 - c1,
	       (unsigned long long)joins, (unsigned long long)arp,
	       (unsigned long long)nd, (unsigned long long)deliveries);
	fflush(stdout);
	if (iw_destroy(&w))
		die("teardown (timers left)", -1);
	free(ifs);
	free(hca);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	unsigned hosts = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 10000;
	int family = argc > 3 ? atoi(argv[3]) : 0;
	imc_time_t gap = argc > 4 ? strtoull(argv[4], NULL, 0) : 0;

	if (n) {
		data_path(n, 64);
		data_path(n / 2, 2044);
	}
	if (hosts >= 2) {
		if (family != 4)
			bringup(hosts, 6, gap);
		if (family != 6)
			bringup(hosts, 4, gap);
	}
	return 0;
}
