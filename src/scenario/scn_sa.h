/* What the SA verbs (sa_verbs.c) share with the join tracker's verbs
 * (mcast_verbs.c). Names here are scn_*: private to the library. */
#ifndef IMC_SCENARIO_SCN_SA_H
#define IMC_SCENARIO_SCN_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/gid.h"
#include "ibmcast/gsi.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/scenario.h"

/* QP1 of the HCA port node:port as a GSI (gsi.h) that every MAD user of
 * the port shares for the rest of the run (sa-* requests, join trackers):
 * a QP1 of the run's, or on the SA's port the SA's own; when the SA moves
 * (sa-restart after sm move) the GSI stays and its QP changes. Created on
 * first use. Fails the run (imc_scn_fail()) when the scenario has no sa
 * line or the SA cannot start. Owned by the run; freed when it ends,
 * before the fabric (agents still added are forgotten). */
int scn_sa_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
	       struct imc_gsi **out);

/* A cable went down or up (the link verb): the SA running now, if any,
 * sweeps (imc_sa_fabric_links_changed()), so its multicast trees follow
 * cables between switches too. */
void scn_sa_links_changed(struct imc_scn_ctx *c);

/* As scn_sa_gsi(), but -ENOENT, the run going on, when the scenario has
 * no sa line (the caller then makes a QP1 of its own). */
int scn_sa_gsi_find(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct imc_gsi **out);

/* count datagrams of size bytes from node:port to group mgid, interval
 * apart, with the MLID, Q_Key and P_Key the SA has for the group now (as
 * sa-mcast). Fails the run when the SA has no such group or the host no
 * such P_Key. */
int scn_sa_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		const struct imc_gid *mgid, uint32_t count, uint32_t size,
		imc_time_t interval, uint8_t sl);

/* A component of an MCMemberRecord template, as sa-join takes it (qkey=,
 * pkey=, tclass=, sl=, flow=, hop=, scope=, mtu=SEL:CODE, rate=SEL:CODE,
 * life=SEL:CODE, mlid=): its value into rec, its ComponentMask bits
 * (IBA 15.2.5.17) into *mask. Returns 0, 1 when word is none of them, or
 * the parse error. scn_sa_comp_print() writes back those of mask. */
int scn_sa_comp_opt(struct imc_scn_parser *p, const char *word,
		    struct imc_mcmr *rec, uint64_t *mask);
void scn_sa_comp_print(FILE *f, const struct imc_mcmr *rec, uint64_t mask);

/* JoinState as sa-join's state= takes it (full, nonmember, sendonly,
 * sendonly-full joined by +, or 0..15), and back. */
int scn_sa_state_parse(struct imc_scn_parser *p, const char *word,
		       uint8_t *out);
void scn_sa_state_print(FILE *f, uint8_t state);

/* The names sa-status gives MAD statuses ("success", "req-invalid",
 * ...): scn_sa_status_parse() returns 0 and the status, or -EINVAL;
 * scn_sa_status_name() the name, or NULL. */
int scn_sa_status_parse(const char *word, uint64_t *status);
const char *scn_sa_status_name(uint64_t status);

#endif
