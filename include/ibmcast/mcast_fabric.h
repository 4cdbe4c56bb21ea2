/* The join tracker (mcast.h) for one HCA port of the embedded fabric.
 *
 * The tracker's SA client sends through the port's QP1 (a GSI, gsi.h,
 * shared with whoever else uses it) to QP1 of the port's current SM LID,
 * read at every send, so a new SM or a new LID of the SM is followed (the
 * client's retries go to where the SM is now). The port's events reach the
 * tracker: ACTIVE, DOWN, LID change, SM change, client reregister and P_Key
 * change map one to one onto imc_mcast_port_event(). QPs of members are
 * fabric QPs (struct imc_qp *, the join request's qp): the tracker
 * attaches them with imc_qp_attach() and detaches them with
 * imc_qp_detach().
 *
 * Everything runs from the fabric's loop.
 */
#ifndef IBMCAST_MCAST_FABRIC_H
#define IBMCAST_MCAST_FABRIC_H

#include <stdint.h>

#include "ibmcast/fabric.h"
#include "ibmcast/gsi.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_client.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_mcast_fabric_config {
	struct imc_mcast_config mcast;      /* port_gid: the port's own */
	struct imc_sa_client_config client;
};

/* imc_mcast_config_init() and imc_sa_client_config_init() defaults. */
void imc_mcast_fabric_config_init(struct imc_mcast_fabric_config *cfg);

struct imc_mcast_fabric;

/* A tracker on node:port (an HCA port; bring the fabric up first so
 * that it has its GID). gsi is the port's shared QP1, or NULL to create
 * one (the port's QP1 must then be free). A shared gsi may be destroyed
 * before the tracker: its sends then fail with -ENETDOWN (a leave at
 * teardown). cfg NULL means defaults; it is copied. The tracker starts
 * DOWN unless the port is ACTIVE. Returns 0, -EINVAL, -EBUSY (QP1 taken, gsi NULL) or -ENOMEM. */
int imc_mcast_fabric_create(struct imc_fabric *f, uint32_t node,
			    unsigned port, struct imc_gsi *gsi,
			    const struct imc_mcast_fabric_config *cfg,
			    struct imc_mcast_fabric **out);

/* Destroys the tracker (imc_mcast_destroy(): no callback, the SA not
 * told), the client, the watch, and the GSI when it created it. Not from
 * a callback of the tracker. NULL is a no-op. */
void imc_mcast_fabric_destroy(struct imc_mcast_fabric *mf);

/* The tracker's event for a port event of the fabric (fabric.h): ACTIVE,
 * DOWN, LID change, SM change, client reregister and P_Key change map one
 * to one. Returns 0, or -ENOENT for an event the tracker has no use for. */
int imc_mcast_fabric_port_event(enum imc_port_event ev,
				enum imc_mcast_port_event *out);

/* Sends len bytes from qp (a UD QP of the fabric) to a joined group,
 * through the send AV imc_mcast_send_av() gave: DLID = the MLID, its SL
 * and rate, a GRH to the MGID with its TClass, FlowLabel and HopLimit,
 * the multicast QPN and the group's Q_Key. The same fields fill
 * struct ibv_ah_attr and the work request on verbs. Returns 0 or
 * imc_qp_send()'s error (-EINVAL for a NULL argument). */
int imc_mcast_fabric_send(struct imc_qp *qp, const struct imc_mcast_av *av,
			  const void *data, size_t len);

/* The tracker (join and leave through it), its SA client, its GSI. */
struct imc_mcast *imc_mcast_fabric_tracker(const struct imc_mcast_fabric *mf);
struct imc_sa_client *imc_mcast_fabric_client(
	const struct imc_mcast_fabric *mf);
struct imc_gsi *imc_mcast_fabric_gsi(const struct imc_mcast_fabric *mf);

/* ---- one tracker per port ----
 *
 * The trackers of a fabric's HCA ports, one per port, made on first use:
 * what every user of several ports (members of scenarios, IPoIB
 * interfaces, fabric serve --joins) shares, so that one port's groups are
 * one membership at the SA. Found by node:port in O(1). */
struct imc_mcast_fabric_set;

/* Totals over the set's trackers (sa_client.h and mcast.h counters). */
struct imc_mcast_fabric_totals {
	unsigned trackers;
	uint64_t sa_sent;            /* SA requests sent (client "sent") */
	uint64_t sa_resent;          /* of them, resends */
	uint64_t timeouts;           /* requests that used up their retries */
	uint64_t rejoins;
	uint64_t errors;
	size_t members, joined;
};

/* f must outlive the set. Returns 0, -EINVAL or -ENOMEM. */
int imc_mcast_fabric_set_create(struct imc_fabric *f,
				struct imc_mcast_fabric_set **out);

/* Destroys every tracker (imc_mcast_fabric_destroy()), then the set.
 * NULL is a no-op. */
void imc_mcast_fabric_set_destroy(struct imc_mcast_fabric_set *s);

/* The tracker of node:port, or NULL (none yet, or no such port). */
struct imc_mcast_fabric *imc_mcast_fabric_set_find(
	const struct imc_mcast_fabric_set *s, uint32_t node, unsigned port);

/* The tracker of node:port, made now with gsi and cfg
 * (imc_mcast_fabric_create()) when there is none; gsi and cfg are not
 * used when it exists. Returns 0, -EINVAL (no such HCA port), -EBUSY or
 * -ENOMEM. */
int imc_mcast_fabric_set_get(struct imc_mcast_fabric_set *s, uint32_t node,
			     unsigned port, struct imc_gsi *gsi,
			     const struct imc_mcast_fabric_config *cfg,
			     struct imc_mcast_fabric **out);

/* The slot of node:port (0 .. imc_mcast_fabric_set_slots() - 1, port
 * order), or -EINVAL; and the tracker in a slot (NULL: none). */
long imc_mcast_fabric_set_slot(const struct imc_mcast_fabric_set *s,
			       uint32_t node, unsigned port);
size_t imc_mcast_fabric_set_slots(const struct imc_mcast_fabric_set *s);
struct imc_mcast_fabric *imc_mcast_fabric_set_at(
	const struct imc_mcast_fabric_set *s, size_t slot);

void imc_mcast_fabric_set_totals(const struct imc_mcast_fabric_set *s,
				 struct imc_mcast_fabric_totals *out);

#ifdef __cplusplus
}
#endif
#endif
