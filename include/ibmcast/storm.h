/* The load generator of `ibmcast storm`: MCMemberRecord joins, re-joins,
 * leaves and creates at an SA, a bounded number in flight, optionally
 * paced, with latency histograms and the SA statuses counted per
 * operation, and a teardown that leaves every group the run still holds.
 *
 * It drives an imc_sa_client on an imc_loop and nothing else, so the same
 * code runs against a real SA (libibumad, the command) and against the
 * SA engine on a virtual loop (tests/test_storm.c).
 *
 * The work is a cycle of operations (e.g. join,leave) run again and
 * again, each run of it on one group "slot": cycle k uses slot
 * k mod groups, and the operations of one cycle go one after the other
 * (a slot has at most one request in flight), so a leave always follows
 * its join. Slot i names the MGID ff15:1234:TAG::i+1 (site-local scope,
 * no IPoIB signature), or the MGID the SA chose for its last create.
 *
 *   join    Set with MGID, PortGID, JoinState and the components OpenSM
 *           needs to create a missing group (Q_Key, TClass, P_Key, SL,
 *           FlowLabel): creates the group or joins it
 *   rejoin  Set with MGID, PortGID and JoinState only, as a port sends
 *           again what it holds (after a client reregister): creates
 *           nothing
 *   leave   Delete of the JoinState bits
 *   create  Set with MGID 0 and the creation components: the SA creates
 *           a group and chooses its MGID (IBA 15.2.5.17.1), which the
 *           slot's later operations use
 *
 * A group counts as taken by the run after a successful join or create,
 * and as given up after a leave answered SUCCESS or REQ_INVALID (not a
 * member, IBA 15.2.5.17.2); a join, create or leave that timed out leaves
 * the membership in doubt. The teardown sends a leave for every slot
 * taken or in doubt, unless keep is set.
 */
#ifndef IBMCAST_STORM_H
#define IBMCAST_STORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/sa_client.h"

enum imc_storm_op {
	IMC_STORM_JOIN,
	IMC_STORM_REJOIN,
	IMC_STORM_LEAVE,
	IMC_STORM_CREATE,
	IMC_STORM_OPS,
};

enum {
	IMC_STORM_MAX_CYCLE = 8,        /* operations in one cycle */
	/* Requests in flight at most: ibsim deadlocks when one client
	 * floods it (ibsim's own mcast_storm does, at 1,000 joins), and an
	 * SA is shared by the whole subnet. */
	IMC_STORM_MAX_INFLIGHT = 32,
	IMC_STORM_MAX_GROUPS = 1 << 20,
	IMC_STORM_MAX_STATUSES = 32,    /* distinct MAD statuses counted apart */
	/* Latency histogram: exact below 64 ns, then 64 buckets per power
	 * of two (at most 1/64 = 1.6% above the true value). */
	IMC_STORM_HIST_SUB = 64,
	IMC_STORM_HIST_BUCKETS = IMC_STORM_HIST_SUB * 59,
};

/* "join", "rejoin", "leave", "create"; NULL past the end. */
const char *imc_storm_op_name(enum imc_storm_op op);

/* Parses "join,leave,..." into cycle (at most IMC_STORM_MAX_CYCLE). Returns
 * the number of operations, or -EINVAL. */
int imc_storm_parse_ops(const char *s, enum imc_storm_op *cycle);

/* Whether the cycle may run again on a slot: false when running it twice
 * would create a group while the slot still holds the one its last
 * create made (no leave between two creates). Returns 1 (repeatable),
 * 0 (runs once per slot), or -EINVAL when even one run creates twice
 * without a leave. */
int imc_storm_cycle_repeats(const enum imc_storm_op *cycle, unsigned n);

struct imc_storm_hist {
	uint64_t n;
	uint64_t max;
	uint64_t b[IMC_STORM_HIST_BUCKETS];
};

/* Counts value v (ns) in h. */
void imc_storm_hist_add(struct imc_storm_hist *h, uint64_t v);

/* The smallest bucket bound at or above a q-fraction of the values
 * (nearest rank), never above the largest value; 0 when empty. */
uint64_t imc_storm_hist_quantile(const struct imc_storm_hist *h, double q);

struct imc_storm_status {
	uint16_t status;            /* MAD status as received */
	uint64_t count;
};

/* What happened to the requests of one kind. */
struct imc_storm_tally {
	uint64_t sent;              /* requests started */
	uint64_t answered;          /* with an answer, any status */
	uint64_t success;           /* answered SUCCESS */
	uint64_t timeouts;          /* every attempt unanswered */
	uint64_t errors;            /* other failures: no memory to send,
				     * an RMPP abort, imc_storm_abort() */
	uint64_t retries;           /* sends after the first, answered ones */
	struct imc_storm_status statuses[IMC_STORM_MAX_STATUSES]; /* ascending */
	unsigned n_statuses;
	uint64_t other_statuses;    /* past IMC_STORM_MAX_STATUSES distinct */
	struct imc_storm_hist latency;  /* start to answer (ns), answered ones */
};

/* Adds the counts and latencies of t to d. */
void imc_storm_tally_add(struct imc_storm_tally *d, const struct imc_storm_tally *t);

struct imc_storm_config {
	enum imc_storm_op cycle[IMC_STORM_MAX_CYCLE];
	unsigned cycle_len;
	uint64_t count;             /* cycles; 0: until stopped */
	uint32_t groups;            /* slots, 1..IMC_STORM_MAX_GROUPS */
	unsigned inflight;          /* 1..IMC_STORM_MAX_INFLIGHT */
	double rate;                /* requests started per second; 0: no pacing */
	uint8_t join_state;         /* JoinState of joins, creates, leaves */
	uint16_t tag;               /* MGIDs ff15:1234:TAG::N */
	struct imc_gid port_gid;    /* the port joining */
	uint32_t qkey;              /* creation components */
	uint16_t pkey;
	uint64_t sm_key;
	bool keep;                  /* no teardown */
	/* The clock of latencies and pacing; NULL: imc_loop_now(). */
	imc_time_t (*clock)(void *ctx);
	void *clock_ctx;
};

/* The defaults: join,leave, 1000 cycles on 1000 groups, 32 in flight,
 * FullMember, tag 1, Q_Key 0x1234, P_Key 0xffff. */
void imc_storm_config_init(struct imc_storm_config *cfg);

struct imc_storm_report {
	struct imc_storm_tally op[IMC_STORM_OPS];
	struct imc_storm_tally teardown; /* the leaves of the teardown */
	uint64_t cycles_started;
	uint64_t cycles_done;
	imc_time_t run_time;        /* start to the last answer before the
				     * teardown (or now, while running) */
	imc_time_t teardown_time;
	size_t max_in_flight;
	uint64_t held;              /* slots taken or in doubt, now */
	uint64_t unnamed;           /* creates unanswered: a group may exist
				     * whose MGID the run never learnt */
	bool done;
};

struct imc_storm;

/* Called once, from the loop, when the run is over (the teardown done,
 * or imc_storm_abort()). May destroy the storm. */
typedef void (*imc_storm_done_cb)(void *arg, struct imc_storm *s);

/* A run on c (which must outlive it) per cfg (copied). c's window should
 * be at least cfg->inflight. Returns 0, -EINVAL (a bad configuration,
 * e.g. count above groups for a cycle that runs once per slot) or
 * -ENOMEM. */
int imc_storm_create(struct imc_loop *loop, struct imc_sa_client *c,
		 const struct imc_storm_config *cfg, imc_storm_done_cb done,
		 void *arg, struct imc_storm **out);

/* Starts sending, from the loop (not inside this call). */
void imc_storm_start(struct imc_storm *s);

/* Sends no more operations: once those in flight are answered, the
 * teardown leaves what the run holds (unless keep), then done runs. */
void imc_storm_stop(struct imc_storm *s);

/* Cancels every request in flight and skips (or cuts short) the
 * teardown: done runs from the loop; what is still held is counted in
 * the report's held. */
void imc_storm_abort(struct imc_storm *s);

/* Cancels whatever is in flight, without callbacks; frees s. */
void imc_storm_destroy(struct imc_storm *s);

/* The figures so far (run_time and held as of now); valid until
 * imc_storm_destroy(). */
const struct imc_storm_report *imc_storm_get_report(struct imc_storm *s);

/* The MGID of slot i (its create's, once a create was answered). */
void imc_storm_slot_mgid(const struct imc_storm *s, uint32_t i, struct imc_gid *g);

#endif
