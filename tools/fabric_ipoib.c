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
#include "ibmcast/mcast_fabric.h"

#define ROUND (500 * IMC_NSEC_PER_MSEC)
#define GIVE_UP (30 * IMC_NSEC_PER_SEC)
#define MCAST_GROUP 0xef010101u      /* 239.1.1.1 */
#define ICMP_ID 0x1b1b

struct host {
	struct fabric_ipoib *x;
	unsigned idx;
	struct imc_mcast_fabric *mf;
	struct imc_ipoib_fabric *ifc;
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

static uint16_t csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* An IPv4 header (RFC 791) before len bytes of proto payload. */
static void ip_hdr(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto,
		   size_t len)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, (uint16_t)(20 + len));
	p[8] = 64;
	p[9] = proto;
	put32(p + 12, src);
	put32(p + 16, dst);
	put16(p + 10, csum(p, 20));
}

static void send_icmp(struct host *h, uint32_t dst, uint8_t type,
		      uint16_t seq)
{
	uint8_t pkt[28];

	ip_hdr(pkt, addr_of(h->idx), dst, 1, 8);
	memset(pkt + 20, 0, 8);
	pkt[20] = type;
	put16(pkt + 24, ICMP_ID);
	put16(pkt + 26, seq);
	put16(pkt + 22, csum(pkt + 20, 8));
	imc_ipoib_xmit(imc_ipoib_fabric_ipoib(h->ifc), pkt, sizeof(pkt));
}

static void ping_round(struct fabric_ipoib *x)
{
	for (unsigned i = 0; i < x->n; i++)
		for (unsigned j = 0; j < x->n; j++)
			if (i != j && !x->answered[(size_t)i * x->n + j])
				send_icmp(&x->h[i], addr_of(j), 8, (uint16_t)j);
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

/* One UDP datagram (RFC 768; no checksum, allowed over IPv4) from host
 * 0 to the group, once the pings are done: by then every host's join of
 * the group has long been answered. */
static void send_mcast(struct fabric_ipoib *x)
{
	uint8_t pkt[20 + 8 + 4];

	ip_hdr(pkt, addr_of(0), MCAST_GROUP, 17, 12);
	put16(pkt + 20, 4000);
	put16(pkt + 22, 4000);
	put16(pkt + 24, 12);
	put16(pkt + 26, 0);
	memcpy(pkt + 28, "imc!", 4);
	imc_ipoib_xmit(imc_ipoib_fabric_ipoib(x->h[0].ifc), pkt, sizeof(pkt));
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

static void deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct host *h = ctx;
	struct fabric_ipoib *x = h->x;
	const uint8_t *d = p->data;
	unsigned ihl;

	if (p->ethertype != IMC_ETHERTYPE_IPV4 || p->len < 28 ||
	    (d[0] >> 4) != 4)
		return;
	ihl = (d[0] & 15u) * 4;
	if (p->len < ihl + 8)
		return;
	if (d[9] == 17 && get32(d + 16) == MCAST_GROUP) {
		h->mcast_rx++;
	} else if (d[9] == 1 && d[ihl] == 8) {
		/* Echo request: answer it. */
		send_icmp(h, get32(d + 12), 0,
			  (uint16_t)(d[ihl + 6] << 8 | d[ihl + 7]));
	} else if (d[9] == 1 && d[ihl] == 0) {
		uint32_t src = get32(d + 12) - 0x0a000001u;
		size_t k = (size_t)h->idx * x->n + src;

		if (src < x->n && !x->answered[k]) {
			x->answered[k] = 1;
			x->nanswered++;
		}
	}
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
	struct imc_ipoib_host_ops ops = { deliver, carrier, h };
	struct imc_ipoib_config cfg;
	struct imc_ip_addr a;
	struct imc_ipoib *ifc;
	int r;

	r = imc_mcast_fabric_create(f, node, 1, NULL, NULL, &h->mf);
	if (r < 0)
		return r;
	imc_ipoib_config_init(&cfg);
	cfg.pkey = 0xffff;
	cfg.queue_endpoint = 256;
	r = imc_ipoib_fabric_create(f, node, 1, imc_mcast_fabric_tracker(h->mf),
				    &cfg, IMC_IPOIB_FABRIC_QKEY, &ops, &h->ifc);
	if (r < 0)
		return r;
	ifc = imc_ipoib_fabric_ipoib(h->ifc);
	imc_ip_addr_v4(addr_of(h->idx), &a);
	r = imc_ipoib_addr_add(ifc, &a, 8);
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
	/* ipoib_fabric.h's order: stop the interface, then the tracker
	 * (it detaches the QP), then the QP. */
	for (unsigned i = 0; x->h && i < x->n; i++) {
		if (x->h[i].ifc)
			imc_ipoib_fabric_stop(x->h[i].ifc);
		imc_mcast_fabric_destroy(x->h[i].mf);
		imc_ipoib_fabric_destroy(x->h[i].ifc);
	}
	free(x->answered);
	free(x->h);
	free(x);
}
