/* TUN <-> IPoIB bridge (see ibmcast/tun_bridge.h).
 *
 * Packets cross synchronously in both directions, with no state of the
 * bridge's own: a packet the kernel sends goes to imc_ipoib_xmit() inside
 * the TUN's receive callback (which copies or queues it; the read buffer
 * is reused for the next packet), and a packet IPoIB delivers is written
 * to the TUN from its data buffer inside the deliver op, with no copy in
 * between.
 *
 * Multicast: the bridge keeps the groups the kernel holds on the TUN, in
 * address order, and listens to each on the IPoIB interface (a FullMember
 * join of its MGID, RFC 4391 4). Every mcast_poll it reads the kernel's
 * list again (imc_tun_mcast_list): a new group is listened to, a group
 * gone is unlistened. A group is one of
 *
 *   state     event                                  next
 *   (none)    in the kernel's list                   LISTENING (listen)
 *   LISTENING the join answered (the MGID has an AV) JOINED
 *   any       not in the kernel's list               (none) (unlisten)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ibmcast/tun_bridge.h"
#include "util/vec.h"

enum { MCAST_POLL = 100 * IMC_NSEC_PER_MSEC };

enum mstate { M_LISTENING, M_JOINED };

struct mgroup {
	struct imc_ip_addr a;
	struct imc_gid mgid;
	enum mstate state;
	bool seen;                  /* in the list being read */
};

struct imc_tun_bridge {
	struct imc_tun *tun;
	struct imc_ipoib *ifc;
	struct imc_loop *loop;
	struct imc_timer poll;
	struct mgroup *g;           /* sorted by address */
	size_t ng, gcap;
	imc_tun_bridge_mcast_fn *mfn;
	void *mctx;
	struct imc_tun_bridge_stats st;
};

static const char *const drop_names[IMC_TUN_BRIDGE_DROP__COUNT] = {
	[IMC_TUN_BRIDGE_DROP_DOWN] = "down",
	[IMC_TUN_BRIDGE_DROP_MTU] = "mtu",
	[IMC_TUN_BRIDGE_DROP_NO_ROUTE] = "no-route",
	[IMC_TUN_BRIDGE_DROP_QUEUE] = "queue",
	[IMC_TUN_BRIDGE_DROP_OTHER] = "other",
	[IMC_TUN_BRIDGE_DROP_KERNEL] = "kernel",
};

const char *imc_tun_bridge_drop_str(enum imc_tun_bridge_drop d)
{
	return (unsigned)d < IMC_TUN_BRIDGE_DROP__COUNT ? drop_names[d]
							: "unknown";
}

static enum imc_tun_bridge_drop drop_of(int err)
{
	switch (err) {
	case -ENETDOWN:
		return IMC_TUN_BRIDGE_DROP_DOWN;
	case -EMSGSIZE:
		return IMC_TUN_BRIDGE_DROP_MTU;
	case -EHOSTUNREACH:
		return IMC_TUN_BRIDGE_DROP_NO_ROUTE;
	case -ENOBUFS:
		return IMC_TUN_BRIDGE_DROP_QUEUE;
	default:
		return IMC_TUN_BRIDGE_DROP_OTHER;
	}
}

static void from_kernel(struct imc_tun *tun, uint8_t *pkt, size_t len,
			void *ctx)
{
	struct imc_tun_bridge *b = ctx;
	int rc;

	(void)tun;
	rc = imc_ipoib_xmit(b->ifc, pkt, len);
	if (rc) {
		b->st.drops[drop_of(rc)]++;
		return;
	}
	b->st.to_ipoib++;
	b->st.to_ipoib_bytes += len;
}

void imc_tun_bridge_deliver(struct imc_tun_bridge *b,
			    const struct imc_ipoib_packet *p)
{
	if (imc_tun_write(b->tun, p->data, p->len)) {
		b->st.drops[IMC_TUN_BRIDGE_DROP_KERNEL]++;
		return;
	}
	b->st.to_kernel++;
	b->st.to_kernel_bytes += p->len;
}

void imc_tun_bridge_carrier(struct imc_tun_bridge *b, bool up)
{
	unsigned mtu = imc_ipoib_mtu(b->ifc);

	b->st.carrier_changes++;
	/* The broadcast group's MTU is known once joined (RFC 4391 3). */
	if (up && mtu != imc_tun_mtu(b->tun))
		imc_tun_set_mtu(b->tun, mtu);
	imc_tun_set_carrier(b->tun, up);
}

/* ---- multicast ---- */

static int g_cmp(const void *key, const void *e)
{
	return imc_ip_addr_cmp(key, &((const struct mgroup *)e)->a);
}

/* Index of a in b->g, or -(insertion point) - 1. */
static long g_index(const struct imc_tun_bridge *b,
		    const struct imc_ip_addr *a)
{
	return imc_vec_bsearch(b->g, b->ng, sizeof(*b->g), a, g_cmp);
}

static void tell(struct imc_tun_bridge *b, enum imc_tun_bridge_mcast ev,
		 const struct mgroup *m)
{
	if (b->mfn)
		b->mfn(b->mctx, ev, &m->a, &m->mgid);
}

static void m_move(struct mgroup *m, enum mstate to)
{
	/* LISTENING -> JOINED only; a group left is removed. */
	if (m->state != M_LISTENING || to != M_JOINED)
		abort();
	m->state = to;
}

/* Interface-local (RFC 4291 2.7: scope 1) and reserved-scope groups never
 * leave the node. */
static bool on_wire(const struct imc_ip_addr *a)
{
	return a->family == IMC_IPV4 || (a->v6[1] & 0xF) > 1;
}

static void on_kernel_group(void *ctx, int family, const uint8_t *addr)
{
	struct imc_tun_bridge *b = ctx;
	struct imc_ip_addr a;
	struct mgroup *m;
	long i;

	if (family == AF_INET)
		imc_ip_addr_v4((uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
			       (uint32_t)addr[2] << 8 | addr[3], &a);
	else
		imc_ip_addr_v6(addr, &a);
	if (!imc_ip_addr_is_multicast(&a) || !on_wire(&a))
		return;
	i = g_index(b, &a);
	if (i >= 0) {
		b->g[i].seen = true;
		return;
	}
	if (IMC_VEC_RESERVE(&b->g, &b->gcap, b->ng + 1)) {
		b->st.mcast_errors++;
		return;
	}
	i = -i - 1;
	m = &b->g[i];
	memmove(m + 1, m, (b->ng - (size_t)i) * sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->a = a;
	m->state = M_LISTENING;
	m->seen = true;
	if (imc_ipoib_mcast_mgid(b->ifc, &a, &m->mgid) ||
	    imc_ipoib_mcast_listen(b->ifc, &a)) {
		memmove(m, m + 1, (b->ng - (size_t)i) * sizeof(*m));
		b->st.mcast_errors++;
		return;
	}
	b->ng++;
	b->st.mcast_listens++;
	tell(b, IMC_TUN_BRIDGE_MCAST_LISTEN, m);
}

/* The kernel's list again: listen to what is new, unlisten what is gone,
 * and tell of joins answered since. */
static void mcast_sync(struct imc_tun_bridge *b)
{
	struct imc_ipoib_endpoint_info e;

	for (size_t i = 0; i < b->ng; i++)
		b->g[i].seen = false;
	if (imc_tun_mcast_list(b->tun, on_kernel_group, b)) {
		/* Half a list proves no group gone: keep them all. */
		b->st.mcast_errors++;
		return;
	}
	for (size_t i = b->ng; i-- > 0;) {
		struct mgroup m = b->g[i];

		if (m.seen)
			continue;
		memmove(&b->g[i], &b->g[i + 1],
			(b->ng - i - 1) * sizeof(*b->g));
		b->ng--;
		imc_ipoib_mcast_unlisten(b->ifc, &m.a);
		b->st.mcast_leaves++;
		tell(b, IMC_TUN_BRIDGE_MCAST_LEAVE, &m);
	}
	for (size_t i = 0; i < b->ng; i++) {
		struct mgroup *m = &b->g[i];

		if (m->state == M_LISTENING &&
		    !imc_ipoib_endpoint_get(b->ifc, &m->mgid, &e) &&
		    e.has_av && e.listeners) {
			m_move(m, M_JOINED);
			tell(b, IMC_TUN_BRIDGE_MCAST_JOINED, m);
		}
	}
}

static void poll_fire(struct imc_timer *t)
{
	struct imc_tun_bridge *b = imc_container_of(t, struct imc_tun_bridge,
						    poll);

	mcast_sync(b);
	imc_timer_arm(b->loop, &b->poll, imc_loop_now(b->loop) + MCAST_POLL);
}

void imc_tun_bridge_on_mcast(struct imc_tun_bridge *b,
			     imc_tun_bridge_mcast_fn *fn, void *ctx)
{
	b->mfn = fn;
	b->mctx = ctx;
}

const char *imc_tun_bridge_mcast_str(enum imc_tun_bridge_mcast ev)
{
	switch (ev) {
	case IMC_TUN_BRIDGE_MCAST_LISTEN:
		return "listen";
	case IMC_TUN_BRIDGE_MCAST_JOINED:
		return "joined";
	case IMC_TUN_BRIDGE_MCAST_LEAVE:
		return "leave";
	}
	return "unknown";
}

int imc_tun_bridge_create(struct imc_loop *loop, struct imc_ipoib *ifc,
			  const struct imc_tun_config *cfg,
			  struct imc_tun_bridge **out)
{
	struct imc_tun_config c = { 0 };
	struct imc_tun_bridge *b;
	int rc;

	*out = NULL;
	if (!ifc)
		return -EINVAL;
	if (cfg)
		c = *cfg;
	if (!c.mtu)
		c.mtu = imc_ipoib_mtu(ifc);
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ifc = ifc;
	b->loop = loop;
	imc_timer_init(&b->poll, poll_fire);
	rc = imc_tun_create(loop, &c, from_kernel, b, &b->tun);
	if (rc)
		goto fail;
	/* -EOPNOTSUPP: an old kernel keeps the carrier on; not fatal. */
	rc = imc_tun_set_carrier(b->tun, imc_ipoib_carrier(ifc));
	if (rc && rc != -EOPNOTSUPP)
		goto fail;
	rc = imc_tun_set_up(b->tun, true);
	if (rc)
		goto fail;
	/* The first look from the loop, so that the caller can set an
	 * observer first. */
	imc_timer_arm(loop, &b->poll, imc_loop_now(loop));
	*out = b;
	return 0;
fail:
	imc_tun_destroy(b->tun);
	free(b);
	return rc;
}

void imc_tun_bridge_destroy(struct imc_tun_bridge *b)
{
	if (!b)
		return;
	imc_timer_cancel(b->loop, &b->poll);
	/* The kernel side goes: so do its groups (told to no one). */
	for (size_t i = 0; i < b->ng; i++)
		imc_ipoib_mcast_unlisten(b->ifc, &b->g[i].a);
	free(b->g);
	imc_tun_destroy(b->tun);
	free(b);
}

struct imc_tun *imc_tun_bridge_tun(const struct imc_tun_bridge *b)
{
	return b->tun;
}

struct imc_ipoib *imc_tun_bridge_ipoib(const struct imc_tun_bridge *b)
{
	return b->ifc;
}

int imc_tun_bridge_addr_add(struct imc_tun_bridge *b,
			    const struct imc_ip_addr *a, unsigned prefix_len)
{
	uint8_t v4[4];

	if (a->family == IMC_IPV4) {
		/* struct imc_ip_addr keeps IPv4 in host order. */
		v4[0] = (uint8_t)(a->v4 >> 24);
		v4[1] = (uint8_t)(a->v4 >> 16);
		v4[2] = (uint8_t)(a->v4 >> 8);
		v4[3] = (uint8_t)a->v4;
		return imc_tun_addr_add(b->tun, AF_INET, v4, prefix_len);
	}
	if (a->family == IMC_IPV6)
		return imc_tun_addr_add(b->tun, AF_INET6, a->v6, prefix_len);
	return -EINVAL;
}

void imc_tun_bridge_get_stats(const struct imc_tun_bridge *b,
			      struct imc_tun_bridge_stats *st)
{
	*st = b->st;
}
