/* An IPoIB interface (ipoib.h) on an HCA port of the embedded fabric
 * (fabric.h): a UD QP of the port carries its datagrams, and the join
 * tracker the caller gives (a tracker of the same port, e.g. from
 * mcast_fabric.h) joins its groups and attaches that QP to them. The
 * tracker's ops get the QP as a struct imc_qp * (the member's qp).
 *
 * The host side (delivered IP packets, carrier) is the caller's; the
 * interface itself is reached with imc_ipoib_fabric_ipoib() for
 * addresses, listening, transmit and counters.
 */
#ifndef IBMCAST_IPOIB_FABRIC_H
#define IBMCAST_IPOIB_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "ibmcast/fabric.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/mcast.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_ipoib_fabric;

/* What the host hears; the calling context is ipoib.h's (deliver inside
 * imc_ipoib_recv() from the QP's receive callback, carrier from the
 * loop). */
struct imc_ipoib_host_ops {
	void (*deliver)(void *ctx, const struct imc_ipoib_packet *p);
	void (*carrier)(void *ctx, bool up);   /* may be NULL */
	void *ctx;
};

/* OpenSM's (and the fabric SA's) default IPoIB broadcast Q_Key: a Q_Key
 * for the interface's QP to start with. */
#define IMC_IPOIB_FABRIC_QKEY 0x00000B1Bu

/* Creates the QP (Q_Key qkey, P_Key cfg->pkey) on node:port and the
 * interface on it. Each time the broadcast join is answered the QP takes
 * the group's Q_Key (RFC 4391 4). The tracker attaches the QP before the
 * join callback runs: a datagram that arrives in between is checked
 * against the Q_Key the QP had, so a qkey other than the group's loses
 * what arrives in that window (IMC_DROP_QKEY) the first time. cfg's
 * port_gid, qpn and port_mtu are replaced by the port's GID, the QP's
 * number and the port's MTU; the rest is used as given (cfg NULL: imc_ipoib_config_init()'s
 * defaults). The interface starts DOWN (imc_ipoib_up()). f and mcast must
 * outlive it. Returns 0, -EINVAL (not an HCA port, P_Key not in its
 * table, bad cfg or host ops without deliver) or -ENOMEM. */
int imc_ipoib_fabric_create(struct imc_fabric *f, uint32_t node,
			    unsigned port, struct imc_mcast *mcast,
			    const struct imc_ipoib_config *cfg, uint32_t qkey,
			    const struct imc_ipoib_host_ops *host,
			    struct imc_ipoib_fabric **out);

/* Destroys the interface: its groups are left through the tracker, no
 * host op runs after it returns. The QP stays (what it receives is
 * dropped) until imc_ipoib_fabric_destroy(), because the tracker detaches
 * it from the groups later: from the loop, or in imc_mcast_destroy().
 * Not from a callback of the QP. No-op the second time. */
void imc_ipoib_fabric_stop(struct imc_ipoib_fabric *x);

/* Stops x if needed, then destroys the QP and frees x. The tracker must
 * hold no attachment of the QP any more: destroy the tracker first, or
 * run the loop after imc_ipoib_fabric_stop() (a QP the tracker still
 * holds would be touched after it is freed). The usual teardown is
 * imc_ipoib_fabric_stop(), imc_mcast_destroy(), imc_ipoib_fabric_destroy().
 * Not from a callback of the QP. NULL is a no-op. */
void imc_ipoib_fabric_destroy(struct imc_ipoib_fabric *x);

/* Owned by x; NULL once stopped. */
struct imc_ipoib *imc_ipoib_fabric_ipoib(const struct imc_ipoib_fabric *x);
struct imc_qp *imc_ipoib_fabric_qp(const struct imc_ipoib_fabric *x);

/* Datagrams imc_qp_send() refused (also counted by the interface as
 * IMC_IPOIB_DROP_SEND). */
uint64_t imc_ipoib_fabric_send_errors(const struct imc_ipoib_fabric *x);

#ifdef __cplusplus
}
#endif
#endif
