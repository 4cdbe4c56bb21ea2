/* TUN <-> IPoIB bridge (see ibmcast/tun_bridge.h).
 *
 * No state of its own beyond what the TUN and the IPoIB interface keep:
 * packets cross synchronously in both directions. A packet the kernel
 * sends goes to imc_ipoib_xmit() inside the TUN's receive callback (which
 * copies or queues it; the read buffer is reused for the next packet),
 * and a packet IPoIB delivers is written to the TUN from its data buffer
 * inside the deliver op, with no copy in between.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ibmcast/tun_bridge.h"

struct imc_tun_bridge {
	struct imc_tun *tun;
	struct imc_ipoib *ifc;
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
