/* An IPoIB ping on the embedded fabric.
 *
 * Two IPoIB interfaces (RFC 4391) on two HCAs, 10.0.0.1 and 10.0.0.2/24.
 * The library is the link layer: it joins the broadcast group, resolves
 * 10.0.0.2 by ARP and fabricates the unicast address vector without a
 * PathRecord query. The IP stack is the program's: it writes an ICMP
 * echo request, the peer's deliver callback answers it, and the time is
 * the virtual clock's.
 *
 * Build: cc ipoib_ping.c $(pkg-config --cflags --libs ibmcast-sim)
 */
#include <stdio.h>
#include <string.h>

#include <ibmcast/sim.h>

struct iface {
	const char *addr;
	struct imc_mcast_fabric *mf;
	struct imc_ipoib_fabric *x;
	struct imc_loop *loop;
	imc_time_t sent_at;
	int replies;
};

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
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* An IPv4 ICMP packet of len bytes (type 8 request, 0 reply). */
static size_t icmp(uint8_t *pkt, uint32_t src, uint32_t dst, uint8_t type,
		   uint16_t seq, const char *text)
{
	size_t n = strlen(text), len = 20 + 8 + n;

	memset(pkt, 0, len);
	pkt[0] = 0x45;                 /* IPv4, 5 words of header */
	put16(pkt + 2, (uint16_t)len);
	pkt[8] = 64;                   /* TTL */
	pkt[9] = 1;                    /* ICMP */
	for (int i = 0; i < 4; i++) {
		pkt[12 + i] = (uint8_t)(src >> (24 - 8 * i));
		pkt[16 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	put16(pkt + 10, csum(pkt, 20));
	pkt[20] = type;
	put16(pkt + 26, seq);
	memcpy(pkt + 28, text, n);
	put16(pkt + 22, csum(pkt + 20, 8 + n));
	return len;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* [deliver] An IP packet for this host, from the loop. */
static void deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct iface *i = ctx;
	const uint8_t *d = p->data;
	uint8_t reply[128];

	if (p->ethertype != IMC_ETHERTYPE_IPV4 || p->len < 28 || d[9] != 1 ||
	    p->len > sizeof(reply))
		return;
	if (d[20] == 8) {              /* echo request: answer it */
		char text[64];
		size_t n = p->len - 28 < sizeof(text) - 1 ? p->len - 28
							  : sizeof(text) - 1;

		memcpy(text, d + 28, n);
		text[n] = '\0';
		size_t len = icmp(reply, be32(d + 16), be32(d + 12), 0,
				  (uint16_t)(d[26] << 8 | d[27]), text);
		imc_ipoib_xmit(imc_ipoib_fabric_ipoib(i->x), reply, len);
	} else if (d[20] == 0) {       /* echo reply */
		i->replies++;
		printf("%zu bytes from %u.%u.%u.%u: icmp_seq=%u time=%llu us\n",
		       p->len - 20, d[12], d[13], d[14], d[15],
		       d[26] << 8 | d[27],
		       (unsigned long long)(imc_loop_now(i->loop) - i->sent_at) /
			       1000);
	}
}
/* [/deliver] */

int main(void)
{
	struct iface ifs[2] = { { .addr = "10.0.0.1" }, { .addr = "10.0.0.2" } };
	struct imc_sa_fabric *sa;
	struct imc_fabric *f;
	struct imc_topo *topo;
	struct imc_loop *loop;
	struct imc_ip_addr a;
	uint8_t pkt[128];
	unsigned n = 0;
	size_t len;

	if (imc_topo_generate("switch:hosts=3", &topo, NULL, 0) ||
	    imc_loop_create_virtual(0, &loop) ||
	    imc_fabric_create(topo, loop, NULL, &f))
		return 1;
	imc_fabric_bring_up(f);
	imc_loop_run(loop);
	if (imc_sa_fabric_create(f, NULL, &sa))
		return 1;

	/* [ipoib] */
	for (uint32_t node = 0; node < topo->nnodes && n < 2; node++) {
		struct imc_ipoib_host_ops host = { .deliver = deliver };
		struct iface *i = &ifs[n];

		if (topo->node[node].type != IMC_NODE_HCA ||
		    node == topo->sm_node)
			continue;
		n++;
		i->loop = loop;
		host.ctx = i;
		/* One tracker per port; the interface joins through it. */
		if (imc_mcast_fabric_create(f, node, 1, NULL, NULL, &i->mf) ||
		    imc_ipoib_fabric_create(f, node, 1,
					    imc_mcast_fabric_tracker(i->mf),
					    NULL, IMC_IPOIB_FABRIC_QKEY, &host,
					    &i->x))
			return 1;
		imc_ip_addr_parse(i->addr, &a, NULL);
		imc_ipoib_addr_add(imc_ipoib_fabric_ipoib(i->x), &a, 24);
		imc_ipoib_up(imc_ipoib_fabric_ipoib(i->x));
	}
	imc_loop_run(loop);   /* both interfaces join the broadcast group */
	/* [/ipoib] */
	printf("%s: %s\n", ifs[0].addr,
	       imc_ipoib_state_str(imc_ipoib_state(imc_ipoib_fabric_ipoib(ifs[0].x))));

	for (uint16_t seq = 1; seq <= 2; seq++) {
		len = icmp(pkt, 0x0a000001, 0x0a000002, 8, seq, "ping");
		ifs[0].sent_at = imc_loop_now(loop);
		/* The first waits for ARP; the second goes at once. */
		if (imc_ipoib_xmit(imc_ipoib_fabric_ipoib(ifs[0].x), pkt, len))
			return 1;
		imc_loop_run(loop);
	}
	printf("%d replies\n", ifs[0].replies);

	for (unsigned i = 0; i < 2; i++)
		imc_ipoib_fabric_stop(ifs[i].x);
	imc_loop_run(loop);   /* the broadcast group is left */
	for (unsigned i = 0; i < 2; i++) {
		imc_ipoib_fabric_destroy(ifs[i].x);
		imc_mcast_fabric_destroy(ifs[i].mf);
	}
	imc_sa_fabric_destroy(sa);
	imc_fabric_destroy(f);
	printf("objects left on the loop: %zu\n", imc_loop_destroy(loop));
	imc_topo_destroy(topo);
	return ifs[0].replies == 2 ? 0 : 1;
}
