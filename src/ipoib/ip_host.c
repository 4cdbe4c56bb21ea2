/* An IP host behind an IPoIB interface (ibmcast/ip_host.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ip_host.h"
#include "ipoib/ipoib_core.h"
#include "util/bytes.h"
#include "util/vec.h"

struct answer {
	struct answer *next;
	size_t len;
	uint8_t data[];
};

struct gcount {
	struct imc_ip_addr g;
	uint64_t n;
};

struct imc_ip_host {
	struct imc_loop *loop;
	struct imc_ipoib *ifc;
	struct imc_ip_host_ops ops;
	struct imc_ip_addr addr[IMC_IP_HOST_ADDRS_MAX];
	unsigned plen[IMC_IP_HOST_ADDRS_MAX];
	unsigned naddrs;
	struct answer *aq_head, *aq_tail;    /* echo replies to send */
	struct imc_timer answer;
	struct imc_ip_host_stats st;
	uint16_t ip_id;                      /* IPv4 identification */
	struct gcount *gc;                   /* sorted by group */
	size_t ngc, gccap;
};

/* The address from the 4 or 16 bytes of a packet. */
static void addr_of(unsigned version, const uint8_t *b,
		    struct imc_ip_addr *out)
{
	if (version == 4)
		imc_ip_addr_v4(imc_get32(b), out);
	else
		imc_ip_addr_v6(b, out);
}

/* The receive count of a group, made on first use when make; bisected. */
static int gc_cmp(const void *key, const void *e)
{
	return imc_ip_addr_cmp(key, &((const struct gcount *)e)->g);
}

static struct gcount *gc_get(struct imc_ip_host *h,
			     const struct imc_ip_addr *g, bool make)
{
	long i = imc_vec_bsearch(h->gc, h->ngc, sizeof(*h->gc), g, gc_cmp);
	size_t lo;

	if (i >= 0)
		return &h->gc[i];
	if (!make || IMC_VEC_RESERVE(&h->gc, &h->gccap, h->ngc + 1))
		return NULL;
	lo = (size_t)(-i - 1);
	memmove(&h->gc[lo + 1], &h->gc[lo], (h->ngc - lo) * sizeof(*h->gc));
	h->ngc++;
	h->gc[lo].g = *g;
	h->gc[lo].n = 0;
	return &h->gc[lo];
}

static void xmit(struct imc_ip_host *h, const uint8_t *p, size_t len)
{
	if (!h->ifc || imc_ipoib_xmit(h->ifc, p, len))
		h->st.send_errors++;
}

static void answer_fire(struct imc_timer *t)
{
	struct imc_ip_host *h = imc_container_of(t, struct imc_ip_host,
						 answer);
	struct answer *a;

	while ((a = h->aq_head)) {
		h->aq_head = a->next;
		if (!h->aq_head)
			h->aq_tail = NULL;
		xmit(h, a->data, a->len);
		free(a);
	}
}

int imc_ip_host_create(struct imc_loop *loop, struct imc_ipoib *ifc,
		       const struct imc_ip_host_ops *ops,
		       struct imc_ip_host **out)
{
	struct imc_ip_host *h;

	if (!loop || !out)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->loop = loop;
	h->ifc = ifc;
	if (ops)
		h->ops = *ops;
	imc_timer_init(&h->answer, answer_fire);
	*out = h;
	return 0;
}

void imc_ip_host_bind(struct imc_ip_host *h, struct imc_ipoib *ifc)
{
	h->ifc = ifc;
}

void imc_ip_host_destroy(struct imc_ip_host *h)
{
	struct answer *a;

	if (!h)
		return;
	imc_timer_cancel(h->loop, &h->answer);
	while ((a = h->aq_head)) {
		h->aq_head = a->next;
		free(a);
	}
	free(h->gc);
	free(h);
}

/* The reply to the echo request p, queued for the loop (RFC 792, RFC
 * 4443 4.2). */
static void echo_answer(struct imc_ip_host *h, const struct imc_ip_view *v,
			const uint8_t *pkt)
{
	struct answer *a = malloc(sizeof(*a) + v->len);

	if (!a)
		return;
	a->next = NULL;
	a->len = v->len;
	memcpy(a->data, pkt, v->len);
	if (imc_ip_echo_answer(a->data, a->len)) {
		free(a);
		return;
	}
	if (h->aq_tail)
		h->aq_tail->next = a;
	else
		h->aq_head = a;
	h->aq_tail = a;
	h->st.ping_answered++;
	if (!imc_timer_armed(&h->answer))
		imc_timer_arm(h->loop, &h->answer, imc_loop_now(h->loop));
}

static void udp_in(struct imc_ip_host *h, const struct imc_ip_view *v)
{
	size_t ulen;

	if (!h->ops.udp || v->proto != IMC_IPPROTO_UDP ||
	    v->l4_len < IMC_L4_HDR_LEN)
		return;
	ulen = imc_get16(v->l4 + 4);
	if (ulen < IMC_L4_HDR_LEN || ulen > v->l4_len)
		return;
	h->ops.udp(h->ops.ctx, v, imc_get16(v->l4), imc_get16(v->l4 + 2),
		   v->l4 + IMC_L4_HDR_LEN, ulen - IMC_L4_HDR_LEN);
}

void imc_ip_host_deliver(struct imc_ip_host *h,
			 const struct imc_ipoib_packet *p)
{
	struct imc_ip_view v;
	struct imc_ip_addr dst;
	uint16_t id, seq;
	bool req;

	h->st.received++;
	if (imc_ip_view(p->data, p->len, &v))
		return;
	if (h->ops.packet)
		h->ops.packet(h->ops.ctx, p, &v);
	addr_of(v.version, v.dst, &dst);
	if (imc_ip_addr_is_multicast(&dst)) {
		struct gcount *g = gc_get(h, &dst, true);

		h->st.received_mcast++;
		if (g)
			g->n++;
		udp_in(h, &v);
		return;
	}
	if (imc_ip_echo_read(&v, &req, &id, &seq)) {
		if (imc_ip_host_owns(h, &dst))
			udp_in(h, &v);
		return;
	}
	if (req) {
		if (imc_ip_host_owns(h, &dst))
			echo_answer(h, &v, p->data);
		return;
	}
	h->st.ping_replies++;
	if (h->ops.echo_reply)
		h->ops.echo_reply(h->ops.ctx, &v, id, seq);
}

void imc_ip_host_carrier(struct imc_ip_host *h, bool up)
{
	if (h->ops.carrier)
		h->ops.carrier(h->ops.ctx, up);
}

int imc_ip_host_addr_add(struct imc_ip_host *h, const struct imc_ip_addr *a,
			 unsigned plen)
{
	int rc;

	if (imc_ip_host_owns(h, a))
		return -EEXIST;
	if (h->naddrs == IMC_IP_HOST_ADDRS_MAX)
		return -ENOSPC;
	rc = h->ifc ? imc_ipoib_addr_add(h->ifc, a, plen) : 0;
	if (rc)
		return rc;
	h->addr[h->naddrs] = *a;
	h->plen[h->naddrs++] = plen;
	return 0;
}

int imc_ip_host_addr_del(struct imc_ip_host *h, const struct imc_ip_addr *a)
{
	for (unsigned k = 0; k < h->naddrs; k++) {
		if (imc_ip_addr_cmp(&h->addr[k], a))
			continue;
		if (h->ifc)
			(void)imc_ipoib_addr_del(h->ifc, a);
		h->addr[k] = h->addr[h->naddrs - 1];
		h->plen[k] = h->plen[h->naddrs - 1];
		h->naddrs--;
		return 0;
	}
	return -ENOENT;
}

unsigned imc_ip_host_naddrs(const struct imc_ip_host *h)
{
	return h->naddrs;
}

const struct imc_ip_addr *imc_ip_host_addr(const struct imc_ip_host *h,
					   unsigned k, unsigned *plen)
{
	if (k >= h->naddrs)
		return NULL;
	if (plen)
		*plen = h->plen[k];
	return &h->addr[k];
}

unsigned imc_ip_host_addrs(const struct imc_ip_host *h,
			   const struct imc_ip_addr **addrs,
			   const unsigned **plens)
{
	if (addrs)
		*addrs = h->addr;
	if (plens)
		*plens = h->plen;
	return h->naddrs;
}

bool imc_ip_host_owns(const struct imc_ip_host *h,
		      const struct imc_ip_addr *a)
{
	for (unsigned k = 0; k < h->naddrs; k++)
		if (!imc_ip_addr_cmp(&h->addr[k], a))
			return true;
	return false;
}

bool imc_ip_addr_on_prefix(const struct imc_ip_addr *a, unsigned plen,
			   const struct imc_ip_addr *d)
{
	if (a->family != d->family)
		return false;
	if (a->family == IMC_IPV4)
		return !((a->v4 ^ d->v4) &
			 (plen ? ~0u << (32 - (plen > 32 ? 32 : plen)) : 0));
	for (unsigned b = 0; b < plen && b < 128; b++)
		if ((a->v6[b / 8] ^ d->v6[b / 8]) & (0x80 >> (b % 8)))
			return false;
	return true;
}

const struct imc_ip_addr *imc_ip_host_src_for(const struct imc_ip_host *h,
					      const struct imc_ip_addr *dst)
{
	const struct imc_ip_addr *any = NULL;

	for (unsigned k = 0; k < h->naddrs; k++) {
		if (h->addr[k].family != dst->family)
			continue;
		if (!any)
			any = &h->addr[k];
		if (imc_ip_addr_on_prefix(&h->addr[k], h->plen[k], dst))
			return &h->addr[k];
	}
	return any;
}

/* The spec of a packet from src (NULL: chosen) to dst; b holds the
 * IPv4 addresses in network order. */
static int spec_of(struct imc_ip_host *h, const struct imc_ip_addr *src,
		   const struct imc_ip_addr *dst, uint8_t b[8],
		   struct imc_ip_spec *s)
{
	if (!dst || (dst->family != IMC_IPV4 && dst->family != IMC_IPV6))
		return -EINVAL;
	if (!src)
		src = imc_ip_host_src_for(h, dst);
	if (!src || src->family != dst->family)
		return -EADDRNOTAVAIL;
	s->version = dst->family;
	s->id = h->ip_id++;
	if (dst->family == IMC_IPV4) {
		imc_put32(b, src->v4);
		imc_put32(b + 4, dst->v4);
		s->src = b;
		s->dst = b + 4;
	} else {
		s->src = src->v6;
		s->dst = dst->v6;
	}
	return 0;
}

/* What follows the IP header of a packet the host sends: an ICMP echo
 * request (RFC 792, RFC 4443 4.1) or a UDP datagram (RFC 768). */
struct l4 {
	bool udp;
	uint16_t a, b;           /* echo: id, seq; UDP: ports */
	const void *payload;     /* UDP only */
	size_t len;              /* bytes past the headers */
};

/* Builds the packet of x from src (NULL: chosen) to dst in a buffer of
 * its own and hands it to the interface. */
static int send_l4(struct imc_ip_host *h, const struct imc_ip_addr *src,
		   const struct imc_ip_addr *dst, const struct l4 *x)
{
	struct imc_ip_spec s;
	uint8_t b[8], *buf;
	size_t cap;
	int rc, n;

	rc = spec_of(h, src, dst, b, &s);
	if (rc)
		return rc;
	if (x->len > 0xFFFF)
		return -ENOSPC;
	cap = IMC_IP6_HDR_LEN + IMC_L4_HDR_LEN + x->len;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	n = x->udp ? imc_ip_udp_build(buf, cap, &s, x->a, x->b, x->payload,
				      x->len)
		   : imc_ip_echo_build(buf, cap, &s, false, x->a, x->b,
				       x->len);
	if (n < 0)
		rc = n;
	else if (!h->ifc)
		rc = -ENETDOWN;
	else
		rc = imc_ipoib_xmit(h->ifc, buf, (size_t)n);
	if (rc && n >= 0)
		h->st.send_errors++;
	free(buf);
	return rc;
}

int imc_ip_host_ping(struct imc_ip_host *h, const struct imc_ip_addr *src,
		     const struct imc_ip_addr *dst, uint16_t id, uint16_t seq,
		     size_t size)
{
	const struct l4 x = { false, id, seq, NULL, size };

	return send_l4(h, src, dst, &x);
}

int imc_ip_host_udp(struct imc_ip_host *h, const struct imc_ip_addr *src,
		    const struct imc_ip_addr *dst, uint16_t sport,
		    uint16_t dport, const void *payload, size_t len)
{
	const struct l4 x = { true, sport, dport, payload, len };

	return send_l4(h, src, dst, &x);
}

void imc_ip_host_stats(const struct imc_ip_host *h,
		       struct imc_ip_host_stats *out)
{
	*out = h->st;
}

uint64_t imc_ip_host_group_received(const struct imc_ip_host *h,
				    const struct imc_ip_addr *g)
{
	struct gcount *c = gc_get((struct imc_ip_host *)h, g, false);

	return c ? c->n : 0;
}
