/* The join tracker's insides, shared by its files: mcast.c (groups,
 * members, SA requests, the public API), mcast_events.c (port events,
 * traps 66 and 67, groups the SA does not have) and mcast_info.c (names,
 * listing, counters). The state tables are at the top of mcast.c. */
#ifndef IMC_MCAST_INT_H
#define IMC_MCAST_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ibmcast/mcast.h"
#include "ibmcast/rng.h"
#include "util/hash.h"
#include "util/list.h"

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define JOIN_MASK (CM(MGID) | CM(PORT_GID) | CM(JOIN_STATE))
/* A re-join names every parameter of the group's record (selectors
 * "exactly"), so that an SA that lost the group creates it again as it
 * was (OpenSM needs Q_Key, TClass, P_Key, FlowLabel and SL to create,
 * IBA 15.2.5.17 o15-0.2.3). The MLID is left to the SA. */
#define REJOIN_MASK (JOIN_MASK | CM(QKEY) | CM(TCLASS) | CM(PKEY) | \
		     CM(FLOW_LABEL) | CM(SL) | CM(MTU_SEL) | CM(MTU) | \
		     CM(RATE_SEL) | CM(RATE) | CM(LIFE_TIME_SEL) | \
		     CM(LIFE_TIME))
#define RECV_BITS (IMC_JOIN_FULL | IMC_JOIN_NON)
/* A re-join left unanswered is paced again over at most 32 spreads. */
#define REJOIN_BACKOFF_MAX 5
/* Bits that keep a group alive at the SA (as the SA engine counts full
 * members: FullMember or SendOnlyFullMember). */
#define FULL_BITS (IMC_JOIN_FULL | IMC_JOIN_SENDONLY_FULL)
#define PKEY_FULL 0x8000

/* ------------------------------------------------------------------ */
/* Objects. */

enum gstate {
	G_IDLE,
	G_SET,
	G_DELETE,
	G_PACE,
	G_WINDOW,
	G_REJOIN,
	G_DOWN,
	G_PROBE,
	G_ABSENT,
};

enum pstate {
	P_ACTIVE,
	P_DOWN,
};

/* The port's subscriptions (InformInfo, IBA 13.4.8.3), one per trap:
 * 67 (group deleted) and 66 (group created). sub_move():
 *
 *   from      to         when
 *   OFF       SENDING    needed: 67 once a group's bits are all non-full
 *                        (the SA deletes the group when its last full
 *                        member leaves, IBA 15.2.5.17); 66 while a group
 *                        is ABSENT (its members wait for its creation)
 *   SENDING   ON         answered with success (66: a creation before
 *                        it went unheard; the fallback timer asks)
 *   SENDING   OFF        refused or unanswered: again a second later
 *   ON        CANCELING  not needed any more (66 only): Subscribe 0
 *   CANCELING OFF        answered or not (a subscription the SA keeps
 *                        costs a Report now and then)
 *   any       OFF        port down, reregister, SM change (the SA forgot
 *                        it, IBA 14.4.11): sent again at once if needed */
enum sstate {
	S_OFF,
	S_SENDING,
	S_ON,
	S_CANCELING,
};

struct sub {
	struct imc_mcast *t;
	enum sstate state;
	uint16_t trap;              /* IMC_TRAP_MCAST_GROUP_* */
	struct imc_sa_query *q;
	struct imc_timer timer;     /* retry, or a change of need */
};

struct group;

/* A QP attached to a group: once, whatever the number of members. */
struct att {
	struct imc_hnode node;          /* t->atts, by (group, qp) */
	struct imc_list link;           /* g->atts */
	struct group *g;
	void *qp;
	uint16_t mlid;              /* attached with */
	unsigned refs;              /* members using it */
};

/* The fields a local join and leave touch come first (a hash probe
 * lands on the first cache line; the second holds the rest). */
struct group {
	struct imc_hnode node;          /* t->groups by MGID, once keyed */
	struct imc_gid mgid;        /* key; zero while a create is pending */
	struct imc_mcast *t;
	struct imc_list pending;        /* PENDING and REJOINING members */
	enum gstate state;
	uint8_t held;               /* JoinState bits the SA may hold */
	uint8_t doubt;              /* of held: not known to be held (a Set
				     * unanswered, a Delete refused) */
	uint8_t req_bits;           /* bits of the request in flight */
	bool rec_valid;             /* rec holds an SA answer */
	struct imc_list members;        /* JOINED, WAITING and FAILED ones */
	struct imc_list dirty;          /* t->dirty: to mct_reconcile */
	struct imc_list atts;
	struct att att0;            /* the first QP's, inside: most groups
				     * have one (no allocation, no cache
				     * line elsewhere) */
	uint32_t cnt[4];            /* wanting members per JoinState bit */
	uint32_t n_members;
	uint32_t zero_atts;         /* attachments with no member left */
	bool rejoin_rec;            /* the REJOIN in flight names rec */
	uint8_t rejoin_fails;       /* re-joins unanswered in a row */
	struct imc_list all;            /* t->all: creation order */
	struct imc_list wait;           /* WINDOW: t->window; ABSENT: t->absent */
	uint8_t absent_tries;       /* found ABSENT since the last joined
				     * answer (0: not waiting for it) */
	uint8_t probe_found;        /* probes that found it, in a row */
	bool probe_rejoin;          /* the refused Set was a re-join */
	bool probe_by_rec;          /* ... and named the group's record */
	bool probe_verify;          /* no Set refused: does it exist? */
	uint16_t probe_status;      /* the refused Set's status */
	struct imc_sa_query *q;
	struct imc_mcast_member *trigger; /* whose template the Set carries */
	uint64_t sent_gen;          /* members joined up to it are covered */
	uint64_t epoch;             /* t->epoch when the request was sent;
				     * STALE: the group was lost meanwhile */
	struct imc_mcmr rec;
	struct imc_timer timer;     /* PACE delay; IDLE: retry mct_reconcile */
};

struct imc_mcast_member {
	struct imc_list link;           /* g->pending or g->members */
	struct imc_list ev;             /* t->events */
	struct group *g;
	enum imc_mcast_state state;
	enum imc_mcast_state told;  /* last reported (PENDING: none) */
	enum imc_mcast_state resume; /* WAITING: state at port up */
	int status;                 /* FAILED, WAITING: why */
	int told_status;            /* with told */
	imc_time_t since;           /* joined, or went REJOINING, at */
	uint64_t gen;
	struct att *att;
	imc_mcast_cb cb;
	void *arg;
	struct imc_mcast_join_req req;
};

/* Lives on the dispatcher's stack: tells it that a callback destroyed
 * the tracker. */
struct guard {
	bool destroyed;
};

struct imc_mcast {
	struct imc_loop *loop;
	struct imc_sa_client *sa;
	struct imc_mcast_config cfg;
	struct imc_mcast_ops ops;
	struct imc_rng rng;
	uint64_t hash_seed;
	unsigned sa_retries;
	enum pstate port;
	struct imc_htab groups, atts;
	struct imc_list all, dirty, window, events;
	struct imc_timer work;
	bool working;               /* inside on_work: arm it at the end */
	unsigned rejoins_in_flight;
	uint64_t gen;
	uint64_t epoch;             /* re-join events so far */
	struct guard *guard;
	bool sub_needed;            /* a group was at the mercy of others */
	struct sub deleted;         /* trap 67 */
	struct sub created;         /* trap 66 */
	struct imc_list absent;         /* ABSENT groups (g->wait) */
	size_t n_absent;            /* groups with absent_tries */
	struct imc_mcast_observer obs;
	struct imc_mcast_stats st;
};

#define STALE UINT64_MAX

/* The bits the SA is known to hold. */
static inline uint8_t sure(const struct group *g)
{
	return g->held & (uint8_t)~g->doubt;
}

static inline uint8_t want(const struct group *g)
{
	uint8_t w = 0;

	for (unsigned i = 0; i < 4; i++)
		if (g->cnt[i])
			w |= (uint8_t)(1u << i);
	return w;
}

/* mcast.c */
void mct_mstate(struct imc_mcast_member *m, enum imc_mcast_state to,
		int status);
void mct_gstate(struct group *g, enum gstate to);
struct group *mct_group_find(const struct imc_mcast *t,
			     const struct imc_gid *mgid);
void mct_group_stop(struct group *g);
void mct_mark_dirty(struct group *g);
void mct_reconcile(struct group *g, bool answered);
void mct_pace(struct group *g);
void mct_pace_over(struct group *g, imc_time_t spread);
void mct_count_answer(struct imc_mcast *t, int err,
		      const struct imc_sa_answer *ans);
int mct_send_mcmr(struct group *g, uint8_t method, const struct imc_mcmr *rec,
		  uint64_t mask, imc_sa_query_cb cb);
void mct_refused(struct group *g, uint16_t status, bool by_rec);

/* mcast_events.c */
void mct_subs_init(struct imc_mcast *t);
void mct_subs_stop(struct imc_mcast *t);
void mct_sub_kick(struct sub *s);
void mct_sub_reset(struct imc_mcast *t);
void mct_on_report(void *arg, const struct imc_sa_mad *report);
void mct_group_lost(struct group *g);
int mct_probe(struct group *g, uint16_t status, bool rejoin, bool by_rec);
int mct_verify(struct group *g);
void mct_absent_wake(struct group *g);
void mct_absent_retry(struct group *g, imc_time_t spread);
void mct_absent_end(struct group *g);

#endif
