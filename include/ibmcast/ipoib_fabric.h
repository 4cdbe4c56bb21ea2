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
#include "ibmcast/ip_host.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"

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

/* ---- an IP host on a fabric port ----
 *
 * The interface above, the host model of ip_host.h behind it, and the
 * port's join tracker: its own (mcast_fabric.h: its SA client sends to
 * the SM LID the port's PortInfo names, so the built-in SA and OpenSM on
 * the served fabric both answer) or one the caller shares with other
 * members of the port. */
struct imc_ipoib_fabric_host;

/* A host on node:port. mcast NULL: a tracker of its own on the port's
 * QP1 (gsi as in imc_mcast_fabric_create(): NULL to create one); else
 * the port's tracker, which must outlive the host. cfg NULL: defaults
 * with P_Key 0xFFFF. ops as in ip_host.h (carrier included). The
 * interface starts DOWN: add addresses, then imc_ipoib_up() on
 * imc_ipoib_fabric_host_ipoib(). Returns 0, -EINVAL, -EBUSY or
 * -ENOMEM. */
int imc_ipoib_fabric_host_create(struct imc_fabric *f, uint32_t node,
				 unsigned port, struct imc_mcast *mcast,
				 struct imc_gsi *gsi,
				 const struct imc_ipoib_config *cfg,
				 const struct imc_ip_host_ops *ops,
				 struct imc_ipoib_fabric_host **out);

/* Deliveries and carrier changes go to tap instead of the host model
 * (a real IP stack behind the interface); NULL gives them back. tap's
 * deliver must not be NULL. Returns 0 or -EINVAL. */
int imc_ipoib_fabric_host_tap(struct imc_ipoib_fabric_host *x,
			      const struct imc_ipoib_host_ops *tap);

/* Stops the interface and the host model (groups left through the
 * tracker; no op runs after it). No-op the second time. */
void imc_ipoib_fabric_host_stop(struct imc_ipoib_fabric_host *x);

/* Stops x, lets the tracker go of the QP (a shared tracker detaches it
 * at once, an own tracker is destroyed), destroys the QP, frees x. Not
 * from a callback of the host. NULL is a no-op. */
void imc_ipoib_fabric_host_destroy(struct imc_ipoib_fabric_host *x);

/* Owned by x; the host model and the interface are NULL once stopped. */
struct imc_ip_host *imc_ipoib_fabric_host_ip(
	const struct imc_ipoib_fabric_host *x);
struct imc_ipoib *imc_ipoib_fabric_host_ipoib(
	const struct imc_ipoib_fabric_host *x);
struct imc_ipoib_fabric *imc_ipoib_fabric_host_fabric(
	const struct imc_ipoib_fabric_host *x);
/* The tracker the host joins with (its own or the shared one). */
struct imc_mcast *imc_ipoib_fabric_host_tracker(
	const struct imc_ipoib_fabric_host *x);
/* Whether a and b can reach each other now: two hosts of one
 * partition, carrier up on both, both ports ACTIVE with the partition in
 * their P_Key tables, and not both limited members (IBA 10.9.1.2). */
bool imc_ipoib_fabric_host_reaches(const struct imc_ipoib_fabric_host *a,
				   const struct imc_ipoib_fabric_host *b);

/* Packets delivered to the tap (not counted by the host model). */
uint64_t imc_ipoib_fabric_host_tapped(const struct imc_ipoib_fabric_host *x);

#ifdef __cplusplus
}
#endif
#endif
