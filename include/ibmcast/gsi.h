/* QP1 of one HCA port of the embedded fabric, shared by several users.
 *
 * The fabric has one QP1 (the GSI, IBA 13.5) per port, but a host may run
 * several MAD users on it: SA clients of a join tracker, of scenario
 * requests, the SA itself on the SM's port. A GSI owns or borrows the
 * port's QP1 and hands each MAD received to its agents, in the order they
 * were added, until one takes it (as the MAD layer of an OS dispatches to
 * its agents; here an SA client takes the answers whose TID is its own).
 * An agent may also claim the high 32 bits of the TransactionIDs of its
 * requests, as an OS MAD layer gives each agent its own: a response
 * (IBA 13.4.5: the R bit) whose TID has them goes to that agent alone,
 * and the others never see it.
 *
 *  - imc_gsi_create(): a port whose QP1 is free; the GSI creates it with a
 *    P_Key of the port's table (the default partition's when there).
 *  - imc_gsi_create_shared(): a QP1 someone else owns, the SA's on the SM
 *    port (imc_sa_fabric_qp()). MADs come in through imc_gsi_input(),
 *    which has the signature of imc_sa_fabric_config.other_mad: create the
 *    GSI first with qp NULL, give it as other_ctx, then
 *    imc_gsi_set_qp(gsi, imc_sa_fabric_qp(sf)).
 *
 * Receives run from the fabric's loop. An agent that does not take a MAD
 * must leave the GSI as it is; one that takes it may remove agents,
 * itself included, and may destroy the GSI.
 */
#ifndef IBMCAST_GSI_H
#define IBMCAST_GSI_H

#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_gsi;

/* Lives in its owner's object. recv returns 0 when it took the MAD,
 * anything else to pass it on (an SA client's -ESRCH, -ENOMSG).
 * tid_high, set before imc_gsi_add(): 0, or the high TID word of the
 * agent's requests, whose responses then come to it only (no two agents
 * of a GSI may claim one). */
struct imc_gsi_agent {
	int (*recv)(struct imc_gsi_agent *a, const struct imc_ud_recv *r);
	uint32_t tid_high;
	struct imc_gsi_agent *next, *prev;   /* private */
	struct imc_gsi *gsi;                 /* NULL when not added */
};

/* Creates QP1 on node:port. Returns 0, -EINVAL (not an HCA port),
 * -EBUSY (QP1 exists) or -ENOMEM. */
int imc_gsi_create(struct imc_fabric *f, uint32_t node, unsigned port,
		   struct imc_gsi **out);

/* A GSI on a QP1 it does not own (qp may be NULL until imc_gsi_set_qp()).
 * Returns 0 or -ENOMEM. */
int imc_gsi_create_shared(struct imc_qp *qp, struct imc_gsi **out);
void imc_gsi_set_qp(struct imc_gsi *g, struct imc_qp *qp);

/* A MAD for a shared GSI (ctx is the GSI). */
void imc_gsi_input(void *ctx, const struct imc_ud_recv *r);

/* Frees the GSI and, when it created it, QP1. Agents still added are
 * forgotten: they get nothing more, and their gsi field is NULL (an
 * owner may test it to know the GSI is gone). May be called from an agent's recv
 * that took the MAD. NULL is a no-op. */
void imc_gsi_destroy(struct imc_gsi *g);

void imc_gsi_add(struct imc_gsi *g, struct imc_gsi_agent *a);
/* No-op when a is not added. */
void imc_gsi_remove(struct imc_gsi_agent *a);

/* The QP1 the GSI sends and receives on (NULL before imc_gsi_set_qp()). */
struct imc_qp *imc_gsi_qp(const struct imc_gsi *g);

/* Sends one MAD to QP1 of dlid (Q_Key 0x80010000, SL 0). Returns 0,
 * -ENETDOWN (no QP yet, the port not ACTIVE, dlid 0) or imc_qp_send()'s
 * error. */
int imc_gsi_send(struct imc_gsi *g, uint16_t dlid, const uint8_t *mad,
		 size_t len);

struct imc_gsi_stats {
	uint64_t received;      /* MADs in */
	uint64_t unclaimed;     /* of those, taken by no agent */
	uint64_t sent;
	uint64_t send_errors;
};

void imc_gsi_get_stats(const struct imc_gsi *g, struct imc_gsi_stats *st);

#ifdef __cplusplus
}
#endif
#endif
