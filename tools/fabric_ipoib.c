/* ibmcast fabric serve --ipoib N: IPoIB interfaces (ipoib_fabric.h) on N
 * HCAs of the served fabric, whose broadcast and multicast joins go to
 * the SA of the port's SM (OpenSM's) through join trackers; the data then
 * follows the LFTs and MFTs OpenSM wrote. Host i has 10.0.X.Y/8 (i + 1 in
 * the last two bytes) and listens to 239.1.1.1. Once every interface has
 * carrier, each host pings every other (ICMP echo, RFC 792; requests not
 * answered are sent again every 500 ms); when all are answered (or after
 * 30 s) host 0 sends one UDP datagram to 239.1.1.1, which every other
 * host must receive exactly once (counted 1 s later).
 * Lines on stderr:
 *
 *   ipoib up N at MS
 *   ipoib pings P answered A at MS           (all answered, or at 30 s)
 *   ipoib mcast receivers R of N-1 duplicates D
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_ipoib.h"
#include "ibmcast/ipoib_fabric.h"

#define ROUND (500 * IMC_NSEC_PER_MSEC)
#define GIVE_UP (30 * IMC_NSEC_PER_SEC)
#define MCAST_GROUP 0xef010101u      /* 239.1.1.1 */
#define MCAST_PORT 4000
#define ICMP_ID 0x1b1b

struct host {
	struct fabric_ipoib *x;
	unsigned idx;
	struct imc_ipoib_fabric_host *fh;
	bool up;
	unsigned mcast_rx;
};

struct fabric_ipoib {
	struct imc_loop *loop;
	struct host *h;
	unsigned n, up;
	uint8_t *answered;           /* n * n, [i * n + j]: i's ping to j */
	size_t nanswered;
	bool pinging, mcast_sent, done;
	imc_time_t t0, ping_t0;
	struct imc_timer round;
};

static uint32_t addr_of(unsigned i)
{
	return 0x0a000000u | (i + 1);
}

static void ping(struct host *h, unsigned j)
{
	struct imc_ip_addr dst;

	imc_ip_addr_v4(addr_of(j), &dst);
	(void)imc_ip_host_ping(imc_ipoib_fabric_host_ip(h->fh), NULL, &dst,
			       ICMP_ID, (uint16_t)j, 0);
}

static void ping_round(struct fabric_ipoib *x)
{
	for (unsigned i = 0; i < x->n; i++)
		for (unsigned j = 0; j < x->n; j++)
			if (i != j && !x->answered[(size_t)i * x->n + j])
				ping(&x->h[i], j);
}

static void report(struct fabric_ipoib *x)
{
	unsigned rx = 0, dup = 0;

	x->done = true;
	for (unsigned i = 1; i < x->n; i++) {
		rx += x->h[i].mcast_rx > 0;
		dup += x->h[i].mcast_rx > 1 ? x->h[i].mcast_rx - 1 : 0;
	}
	fprintf(stderr, "ipoib mcast receivers %u of %u duplicates %u%s\n",
		rx, x->n - 1, dup, x->h[0].mcast_rx ? " (sender got its own)" : "");
}

/* One UDP datagram (RFC 768) from host 0 to the group, once the pings
 * are done: by then every host's join of the group has long been
 * answered. */
static void send_mcast(struct fabric_ipoib *x)
{
	struct imc_ip_addr g;

	imc_ip_addr_v4(MCAST_GROUP, &g);
	(void)imc_ip_host_udp(imc_ipoib_fabric_host_ip(x->h[0].fh), NULL, &g,
			      MCAST_PORT, MCAST_PORT, "imc!", 4);
}

static void round_cb(struct imc_timer *t)
{
	struct fabric_ipoib *x = imc_container_of(t, struct fabric_ipoib, round);
	size_t want = (size_t)x->n * (x->n - 1);

	if (x->mcast_sent) {
		report(x);
		return;
	}
	if (x->nanswered == want ||
	    imc_loop_now(x->loop) - x->ping_t0 >= GIVE_UP) {
		fprintf(stderr, "ipoib pings %zu answered %zu at %.1f\n", want,
			x->nanswered,
			(double)(imc_loop_now(x->loop) - x->ping_t0) / 1e6);
		send_mcast(x);
		x->mcast_sent = true;
		imc_timer_arm_in(x->loop, &x->round, 2 * ROUND);
		return;
	}
	ping_round(x);
	imc_timer_arm_in(x->loop, &x->round, ROUND);
}

static void start_pings(struct fabric_ipoib *x)
{
	x->pinging = true;
	x->ping_t0 = imc_loop_now(x->loop);
	fprintf(stderr, "ipoib up %u at %.1f\n", x->n,
		(double)(x->ping_t0 - x->t0) / 1e6);
	ping_round(x);
	imc_timer_arm_in(x->loop, &x->round, ROUND);
}

/* The reply of host src to our ping (the host model answers requests). */
static void echo_reply(void *ctx, const struct imc_ip_view *v, uint16_t id,
		       uint16_t seq)
{
	struct host *h = ctx;
	struct fabric_ipoib *x = h->x;
	uint32_t src = ((uint32_t)v->src[0] << 24 | (uint32_t)v->src[1] << 16 |
			(uint32_t)v->src[2] << 8 | v->src[3]) - 0x0a000001u;
	size_t k = (size_t)h->idx * x->n + src;

	(void)seq;
	if (v->version == 4 && id == ICMP_ID && src < x->n &&
	    !x->answered[k]) {
		x->answered[k] = 1;
		x->nanswered++;
	}
}

static void udp(void *ctx, const struct imc_ip_view *v, uint16_t sport,
		uint16_t dport, const uint8_t *payload, size_t len)
{
	struct host *h = ctx;
	static const uint8_t g[4] = { 239, 1, 1, 1 };

	(void)sport;
	(void)payload;
	(void)len;
	if (v->version == 4 && !memcmp(v->dst, g, 4) && dport == MCAST_PORT)
		h->mcast_rx++;
}

static void carrier(void *ctx, bool up)
{
	struct host *h = ctx;
	struct fabric_ipoib *x = h->x;

	if (up != h->up)
		x->up += up ? 1u : (unsigned)-1;
	h->up = up;
	if (x->up == x->n && !x->pinging)
		start_pings(x);
}

static int host_up(struct imc_fabric *f, struct host *h, uint32_t node)
{
	struct imc_ip_host_ops ops = {
		.echo_reply = echo_reply, .udp = udp, .carrier = carrier,
		.ctx = h,
	};
	struct imc_ipoib_config cfg;
	struct imc_ip_addr a;
	struct imc_ipoib *ifc;
	int r;

	imc_ipoib_config_init(&cfg);
	cfg.pkey = 0xffff;
	cfg.queue_endpoint = 256;
	r = imc_ipoib_fabric_host_create(f, node, 1, NULL, NULL, &cfg, &ops,
					 &h->fh);
	if (r < 0)
		return r;
	ifc = imc_ipoib_fabric_host_ipoib(h->fh);
	imc_ip_addr_v4(addr_of(h->idx), &a);
	r = imc_ip_host_addr_add(imc_ipoib_fabric_host_ip(h->fh), &a, 8);
	if (!r) {
		imc_ip_addr_v4(MCAST_GROUP, &a);
		r = imc_ipoib_mcast_listen(ifc, &a);
	}
	return r ? r : imc_ipoib_up(ifc);
}

int fabric_ipoib_start(struct imc_fabric *f, unsigned n,
		       struct fabric_ipoib **out)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	struct fabric_ipoib *x;
	unsigned k = 0;
	int r;

	if (n < 2 || n > 65534)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->loop = imc_fabric_loop(f);
	x->t0 = imc_loop_now(x->loop);
	imc_timer_init(&x->round, round_cb);
	x->h = calloc(n, sizeof(*x->h));
	x->answered = calloc((size_t)n * n, 1);
	r = -ENOMEM;
	if (!x->h || !x->answered)
		goto fail;
	for (uint32_t node = 0; node < t->nnodes && k < n; node++) {
		if (t->node[node].type != IMC_NODE_HCA || node == t->sm_node)
			continue;
		x->h[k].x = x;
		x->h[k].idx = k;
		x->n = ++k;
		r = host_up(f, &x->h[k - 1], node);
		if (r < 0)
			goto fail;
	}
	r = -ENOSPC;
	if (k < n)
		goto fail;
	*out = x;
	return 0;
fail:
	fabric_ipoib_stop(x);
	return r;
}

void fabric_ipoib_stop(struct fabric_ipoib *x)
{
	if (!x)
		return;
	imc_timer_cancel(x->loop, &x->round);
	for (unsigned i = 0; x->h && i < x->n; i++)
		imc_ipoib_fabric_host_destroy(x->h[i].fh);
	free(x->answered);
	free(x->h);
	free(x);
}
