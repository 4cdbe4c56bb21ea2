/* The SA engine (sa.h) served on the embedded fabric (fabric.h), at the
 * port where the fabric's SM runs.
 *
 *  - MADs: QP1 of the SM port carries them. Requests go to imc_sa_recv();
 *    answers and Reports leave by imc_qp_send() with the address the SA
 *    gives. MADs the SA does not take there (responses and Reports for a
 *    client on the same port, other classes) go to an optional hook, so a
 *    client can share the port's QP1 (the fabric has one QP1 per port).
 *  - Port directory: the fabric. A port is known to the SA while it is
 *    ACTIVE (the SM has swept it); its GID, LID, MTU, rate and P_Key
 *    table are the fabric's. Switches run no QPs here, so only HCA ports
 *    are listed.
 *  - Multicast forwarding: member changes of an MLID's tree go to an
 *    mtree (mtree.h) over the fabric's topology and cable state, whose
 *    MFT entries are written with imc_fabric_mft_set().
 *  - Link changes, as an SM sweep handles them, sweep_delay after the
 *    last one: an HCA port whose cable is still down then is gone for the
 *    SA (imc_sa_port_gone(), as OpenSM drops the memberships of a port
 *    its sweep no longer finds), and every tree is brought in line with
 *    the cables up (imc_mtree_repair_all(), or a full rebuild). HCA
 *    cables are seen through port events; switch-to-switch cables have
 *    none, so change them with imc_sa_fabric_link_set() or call
 *    imc_sa_fabric_links_changed() after imc_fabric_link_set().
 *
 * The SA stays on the port it was created on when the SM moves. All
 * callbacks run from the fabric's loop.
 */
#ifndef IBMCAST_SA_FABRIC_H
#define IBMCAST_SA_FABRIC_H

#include "ibmcast/common.h"
#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/mtree.h"
#include "ibmcast/sa.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_sa_fabric_config {
	/* The SA's configuration; subnet_prefix, sa_lid and sa_gid are
	 * replaced by the SM port's. */
	struct imc_sa_config sa;
	imc_time_t sweep_delay;    /* last link change -> sweep */
	bool full_rebuild;         /* sweeps rebuild trees from scratch */
	/* MADs at the SM port's QP1 that are not for the SA; valid during
	 * the call. NULL: dropped (counted). */
	void (*other_mad)(void *ctx, const struct imc_ud_recv *r);
	void *other_ctx;
};

/* imc_sa_config_init() defaults, a sweep delay of 1 ms (the fabric's
 * default), repair sweeps, no hook. */
void imc_sa_fabric_config_init(struct imc_sa_fabric_config *cfg);

struct imc_sa_fabric;

/* Starts the SA on f's SM port: creates its QP1 (the port must have none
 * and must be an HCA port with a LID: bring the fabric up first) and
 * watches every HCA port. cfg is copied; NULL means the defaults of
 * imc_sa_fabric_config_init(). Returns 0, -EINVAL (NULL
 * argument, bad SA configuration, the SM on a switch), -EAGAIN (the SM
 * port has no LID yet), -EBUSY (QP1 taken) or -ENOMEM. Free with
 * imc_sa_fabric_destroy() before the fabric. */
int imc_sa_fabric_create(struct imc_fabric *f,
			 const struct imc_sa_fabric_config *cfg,
			 struct imc_sa_fabric **out);

/* Stops the SA: frees it, its QP1, its watches, timer and trees. MFT
 * entries stay programmed, as in switches whose SM went away. Not from a
 * callback of the fabric. NULL is a no-op. */
void imc_sa_fabric_destroy(struct imc_sa_fabric *sf);

/* The SA (for imc_sa_dump, stats, port_gone), its QP1 (for a client that
 * shares the port) and its trees. Owned by sf. */
struct imc_sa *imc_sa_fabric_sa(const struct imc_sa_fabric *sf);
struct imc_qp *imc_sa_fabric_qp(const struct imc_sa_fabric *sf);
const struct imc_mtree *imc_sa_fabric_mtree(const struct imc_sa_fabric *sf);

/* imc_fabric_link_set(), then a sweep sweep_delay later. */
int imc_sa_fabric_link_set(struct imc_sa_fabric *sf, uint32_t node,
			   unsigned port, bool up);

/* Asks for a sweep sweep_delay from now (a later call moves it). */
void imc_sa_fabric_links_changed(struct imc_sa_fabric *sf);

struct imc_sa_fabric_stats {
	uint64_t mads_in;          /* datagrams at the SA's QP1 */
	uint64_t mads_other;       /* of those, not for the SA */
	uint64_t mads_out;         /* sent by the SA */
	uint64_t send_errors;      /* imc_qp_send() refused */
	uint64_t member_changes;   /* tree changes asked by the SA */
	uint64_t member_errors;    /* of those, failed */
	uint64_t mft_writes;       /* imc_fabric_mft_set() calls */
	uint64_t mft_errors;
	uint64_t sweeps;
	uint64_t sweep_entries;    /* MFT entries the sweeps changed */
	uint64_t ports_gone;       /* imc_sa_port_gone() calls */
};

void imc_sa_fabric_stats(const struct imc_sa_fabric *sf,
			 struct imc_sa_fabric_stats *out);

#ifdef __cplusplus
}
#endif
#endif
