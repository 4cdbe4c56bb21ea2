/* The membership audit of a port's join tracker: is the SA still holding
 * what the tracker believes it holds?
 *
 * Every interval (measured from the end of the previous round), one SA
 * Get of MCMemberRecord by MGID and PortGID (IBA 15.2.5.17; component
 * mask MGID|PortGID) for each group the tracker holds as joined, at most
 * window Gets at once. The SA answers a member's Get with the group's
 * record and a non-member's with NO_RECORDS (0x0300; OpenSM does so for an
 * untrusted SM_Key too). NO_RECORDS for a group still held when the answer
 * comes means the SA lost the membership: the round ends (its other Gets
 * cancelled) and lost() is called. Unanswered Gets and other statuses are
 * counted and change nothing. Rounds are skipped while the port is not
 * active.
 *
 * Sans-I/O: the audit sends through the caller's SA client and runs its
 * timer on the caller's loop. lost() runs from the loop, never inside an
 * audit call; it may destroy the audit. After imc_mcast_audit_destroy()
 * returns, lost() is not called.
 */
#ifndef IMC_UMAD_MCAST_AUDIT_H
#define IMC_UMAD_MCAST_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_client.h"

struct imc_mcast_audit;

struct imc_mcast_audit_config {
	imc_time_t interval;      /* ns between rounds; 0: only on _run() */
	unsigned window;          /* Gets in flight, >= 1 */
	struct imc_gid port_gid;  /* PortGID of the Gets */
	/* mgid: the group found lost */
	void (*lost)(void *arg, const struct imc_gid *mgid);
	void *arg;
};

/* The audit of tracker t, sending through sa (neither owned; both must
 * outlive the audit). The port starts active; the first round is due an
 * interval after create. Returns 0, -EINVAL or -ENOMEM. */
int imc_mcast_audit_create(struct imc_loop *loop, struct imc_sa_client *sa,
			   struct imc_mcast *t,
			   const struct imc_mcast_audit_config *cfg,
			   struct imc_mcast_audit **out);

/* Cancels the Gets in flight and the timer; NULL is a no-op. */
void imc_mcast_audit_destroy(struct imc_mcast_audit *a);

/* Starts a round now, unless one is running. */
void imc_mcast_audit_run(struct imc_mcast_audit *a);

/* A port that is not active has nothing at the SA to check: rounds send
 * no Get until it is active again. */
void imc_mcast_audit_set_active(struct imc_mcast_audit *a, bool active);

struct imc_mcast_audit_stats {
	uint64_t rounds;          /* rounds started */
	uint64_t gets;            /* Gets completed (answered or not) */
	uint64_t lost;            /* NO_RECORDS for a group still held */
	uint64_t stale;           /* NO_RECORDS for a group no longer held */
	uint64_t errors;          /* no answer, another status, send error */
	unsigned in_flight;
	unsigned max_in_flight;
};

void imc_mcast_audit_get_stats(const struct imc_mcast_audit *a,
			       struct imc_mcast_audit_stats *st);

#endif
