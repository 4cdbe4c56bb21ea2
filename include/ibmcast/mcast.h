/* Join tracker: the local users of one port join and leave multicast
 * groups through handles; the port holds one membership per group at the
 * Subnet Administrator, carrying the union of its members' JoinState bits
 * (IBA 15.2.5.17, the MCMemberRecord).
 *
 * Sans-I/O: the tracker sends SA MADs through an imc_sa_client (whose
 * transport is the caller's: libibumad, the embedded fabric, a test
 * fake), attaches and detaches QPs through the ops given at create, runs
 * its timers on an imc_loop, and learns of port changes only through
 * imc_mcast_port_event(). It never reads the clock itself.
 *
 * A member (the handle imc_mcast_join() returns):
 *
 *   state     event                                next
 *   PENDING   group holds its bits, record matches JOINED  (no MAD)
 *   PENDING   SA join answered with success        JOINED
 *   PENDING   SA status, -ETIMEDOUT, mismatch,     FAILED
 *             attach error
 *   PENDING   port down                            WAITING
 *   PENDING   no full bit, the SA has no group     WAITING (-ENOENT)
 *   JOINED    reregister / SM / P_Key change       REJOINING
 *   JOINED    trap 67: the SA deleted the group    REJOINING
 *   JOINED    port down                            WAITING
 *   JOINED    attach error after an MLID change    FAILED
 *   REJOINING SA join answered with success        JOINED
 *   REJOINING SA status, -ENETRESET (unanswered:   FAILED
 *             paced again, nothing fails)
 *   REJOINING port down                            WAITING
 *   JOINED,   no full bit, the SA has no group     WAITING (-ENOENT)
 *   REJOINING
 *   WAITING   port up (ACTIVE)                     REJOINING (or PENDING
 *                                                  when never joined)
 *   WAITING   (-ENOENT) trap 66 for the MGID, the  REJOINING (or PENDING)
 *             fallback timer, a new local join,    without an event: the
 *             a reregister or an SM change         member hears JOINED or
 *                                                  ERROR when a try ends so
 *   FAILED    -                                    (until imc_mcast_leave())
 *   any       imc_mcast_leave()                    freed: no callback
 *
 * Callbacks (docs/architecture.md, "The callback contract"; each rule is
 * tested):
 *  1. they run from the loop, never inside imc_mcast_join(),
 *     imc_mcast_leave(), imc_mcast_port_event() or imc_mcast_destroy();
 *  2. each join request completes exactly once, with the first
 *     IMC_MCAST_EV_JOINED or IMC_MCAST_EV_ERROR event; later events on a
 *     member report changes of its membership (REJOINING, JOINED again,
 *     WAITING, ERROR);
 *  3. after imc_mcast_leave() or imc_mcast_destroy() returns, that member
 *     gets no callback, even with an SA answer in flight;
 *  4. a callback may call imc_mcast_leave() on its own member (or any
 *     other) and may destroy the tracker;
 *  5. callbacks return void.
 *
 * Order of QP attach and SA membership: a member's QP is attached after
 * the SA answered the join (and before the member's callback), and
 * detached before the Delete that gives up the group's receiving bits is
 * sent. Only the receiving states attach (FullMember, NonMember):
 * SendOnlyNonMember and SendOnlyFullMember members attach no QP. One QP
 * joined to a group by several members is attached once and detached with
 * its last member. A member that leaves keeps nothing attached once the
 * loop ran; a QP stays attached while its members wait for a port or a
 * re-join.
 *
 * SA requests: one at a time per group (a join or leave meanwhile waits
 * for its answer, so a Delete in flight and a new join of the same MGID
 * never cross). A join that needs new bits sends one Set with the union
 * of the wanted bits and the first waiting member's template; the members
 * that wait are answered from it: each is compared with the record (a
 * mismatch fails that member alone, -EINVAL). When the SA refuses, the
 * member whose template was sent fails with the SA status and the others
 * are asked for again (each gets its own status). A Delete that goes
 * unanswered is sent again until it is answered or the port goes down.
 * The answer to a Delete names the port's JoinState left: bits it names
 * that the tracker did not know of are deleted too, and when the group
 * went with the port's last full bit the members that stay are told as
 * for trap 67. A Delete that leaves the port without a full bit
 * subscribes to trap 67 first, as a join without one does.
 * Re-joins name the group's whole record, so that an SA that lost the
 * group creates it again as it was. A re-join left unanswered after the
 * client's retries fails nobody (an SA whose queue overflows drops
 * requests silently, and after a reregister of a whole subnet that is the
 * rule): it is paced again over a spread doubled each time in a row (at
 * most 32 times rejoin_spread), until the SA answers or the port goes
 * down; joins that came meanwhile wait for it.
 *
 * Members without a full bit outlive their group. A Set with no full bit
 * (FullMember or SendOnlyFullMember) cannot create a group (IBA
 * 15.2.5.17); to a missing group the SA answers REQ_INVALID (0x0200), as
 * it does to a template that does not fit. The tracker then sends a
 * Get(MCMemberRecord) of the MGID: NO_RECORDS (0x0300) means the group is
 * gone, and its members go WAITING with status -ENOENT (QPs detached, the
 * member's request not completed if it never joined). The port subscribes
 * to trap 66 (group created) while a member waits, and the group joins
 * again on the Report, at a fallback try (1 s after the refusal, doubling
 * to 32 s, plus up to rejoin_spread of jitter), or when a new local
 * member joins; the member hears JOINED (or ERROR), not each try. A Get
 * that finds the group lets the Set go once more (the group may have been
 * created in between); found again, the refusal stands and the members it
 * judged fail with its status.
 *
 * What the tracker cannot know: the MGID of a create whose answers were
 * all lost (the SA may hold a group nobody knows of), a trap 67 whose
 * Reports were all lost, or an old copy of a Set that the network
 * delivers after a later Delete (a network that reorders duplicates).
 */
#ifndef IBMCAST_MCAST_H
#define IBMCAST_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_mcast;          /* the tracker of one port */
struct imc_mcast_member;   /* one join: the handle */

/* JoinState bits (IBA 15.2.5.17): FullMember 1, NonMember 2,
 * SendOnlyNonMember 4, SendOnlyFullMember 8. */
enum {
	IMC_JOIN_FULL = 0x1,
	IMC_JOIN_NON = 0x2,
	IMC_JOIN_SENDONLY_NON = 0x4,
	IMC_JOIN_SENDONLY_FULL = 0x8,
};

/* What the tracker does to the port's QPs. qp is the caller's opaque
 * QP given at join. Either may return a negative errno: a failed attach
 * fails the member with that error (and its bits are given back); a
 * failed detach is counted. Called from the loop, never from inside an
 * API call but imc_mcast_destroy() and imc_mcast_release_qp() (detach
 * only); they must not call back into the tracker. */
struct imc_mcast_ops {
	int (*attach)(void *ctx, void *qp, const struct imc_gid *mgid,
		      uint16_t mlid);
	int (*detach)(void *ctx, void *qp, const struct imc_gid *mgid,
		      uint16_t mlid);
	void *ctx;
};

/* How re-joins after a client reregister, an SM change or port up are
 * sent. */
enum imc_mcast_rejoin {
	/* each group's re-join starts after a random delay in
	 * [0, rejoin_spread), at most rejoin_window re-joins in flight */
	IMC_MCAST_REJOIN_PACED,
	/* every group at once, as Linux consumers do */
	IMC_MCAST_REJOIN_IMMEDIATE,
};

struct imc_mcast_config {
	struct imc_gid port_gid;        /* the port's GID (PortGID of joins) */
	enum imc_mcast_rejoin rejoin;
	imc_time_t rejoin_spread;       /* ns */
	unsigned rejoin_window;         /* re-joins in flight per port */
	uint64_t seed;                  /* jitter of re-joins */
	/* Hear of groups the SA deletes (trap 67, IBA 15.2.5.17: when the
	 * last full member of any port leaves). The port subscribes
	 * (InformInfo, IBA 13.4.8.3) once it joins a group with no full
	 * bit of its own, and again after a reregister, an SM change or
	 * port up; the members of a group the SA deleted re-join (a
	 * NonMember or SendOnlyNonMember alone is refused, and waits for
	 * the group: WAITING, -ENOENT, below). The
	 * tracker installs the SA client's Report handler; a client whose
	 * owner needs that handler may pass the Reports on with
	 * imc_mcast_report() instead, with subscribe set. */
	bool subscribe;
	/* With subscribe, a group whose members wait for its creation
	 * (WAITING, -ENOENT) also subscribes the port to trap 66 until
	 * none waits; without, only the fallback timer asks again. */
};

/* Paced re-joins over 1 s, one in flight per port (docs/performance.md,
 * "Join storm"), subscribe; port_gid zero (set it). */
void imc_mcast_config_init(struct imc_mcast_config *cfg);

/* A tracker for one port, sending through sa (not owned; it must outlive
 * the tracker; the tracker's queries are its own, other users may share
 * the client, but with cfg.subscribe the client's Report handler is the
 * tracker's: one such tracker per client). cfg and ops are copied; cfg NULL means
 * defaults (imc_mcast_config_init()); ops may be NULL (no QP is ever
 * attached). The port starts ACTIVE: tell it otherwise with
 * imc_mcast_port_event(). Returns 0, -EINVAL or -ENOMEM. */
int imc_mcast_create(struct imc_loop *loop, struct imc_sa_client *sa,
		     const struct imc_mcast_config *cfg,
		     const struct imc_mcast_ops *ops, struct imc_mcast **out);

/* Frees the tracker and every member without callbacks and without
 * telling the SA (the memberships stay there until the SA drops the port;
 * leave members first and run the loop to give them up). Detaches the
 * QPs still attached, inside the call, since there is no later for it.
 * May be called from a callback. NULL is a no-op. */
void imc_mcast_destroy(struct imc_mcast *t);

/* A join request. rec is the MCMemberRecord template; comp_mask says
 * which of its components matter (UMAD_SA_MCM_COMP_MASK_*): they are sent
 * to the SA, and they are what a join answered locally must match in the
 * group's record (equality, or the selector's relation for MTU, rate and
 * packet lifetime). The tracker sets PortGID and JoinState itself. An
 * MGID of zero asks the SA to create a group with an MGID of its choice;
 * the member is keyed by that MGID once answered. */
struct imc_mcast_join_req {
	struct imc_mcmr rec;
	uint64_t comp_mask;
	uint8_t join_state;   /* one or more IMC_JOIN_* bits */
	void *qp;             /* attached while joined; NULL: none */
};

enum imc_mcast_event_type {
	IMC_MCAST_EV_JOINED,     /* rec is the group's record */
	IMC_MCAST_EV_ERROR,      /* status says why; the member is FAILED */
	IMC_MCAST_EV_REJOINING,  /* reregister or SM change: re-joining */
	/* status 0: port down, waiting for it to come back; -ENOENT: the
	 * member has no full bit and the SA has no group of its MGID
	 * (a Set refused with REQ_INVALID, then a Get answered
	 * NO_RECORDS): waiting for the group to be created (trap 66, or a
	 * fallback try after 1 s doubling to 32 s); told again when the
	 * reason changes */
	IMC_MCAST_EV_WAITING,
};

const char *imc_mcast_event_str(enum imc_mcast_event_type t);

struct imc_mcast_event {
	enum imc_mcast_event_type type;
	/* 0; an SA MAD status as received (> 0, e.g. 0x0200 REQ_INVALID);
	 * or a negative errno: -ETIMEDOUT (no answer after the retries),
	 * -ECANCELED (the request was flushed), -ENETRESET (the group was
	 * lost and could not be re-joined), -EINVAL (the group's record does
	 * not match this member's template) or an attach error. WAITING: 0
	 * (port down) or -ENOENT (no group at the SA). */
	int status;
	const struct imc_mcmr *rec;   /* JOINED: valid during the call */
};

/* m is the member the event is for; ev is valid during the call. */
typedef void (*imc_mcast_cb)(void *arg, struct imc_mcast_member *m,
			     const struct imc_mcast_event *ev);

/* Joins: returns 0 and the handle in *out at once; the outcome comes
 * through cb from the loop. Every successful join has exactly one
 * imc_mcast_leave(), whatever its outcome. Returns -EINVAL (NULL cb, no
 * JoinState bit or bits above 0x8, a non-zero MGID that is not
 * multicast) or -ENOMEM, and then no callback runs. */
int imc_mcast_join(struct imc_mcast *t, const struct imc_mcast_join_req *req,
		   imc_mcast_cb cb, void *arg, struct imc_mcast_member **out);

/* Ends a membership and frees m: no callback for m runs after this
 * returns. When m was the last member holding some JoinState bits of its
 * group, one Delete for exactly those bits is sent (retried until
 * answered or the port goes away); when it was the last member, the group
 * goes. May be called from any callback. */
void imc_mcast_leave(struct imc_mcast_member *m);

/* Detaches at once every attachment of qp that no member uses any more
 * (their members left): for a caller about to destroy qp while the
 * tracker lives on. As in imc_mcast_destroy(), the ops run inside the
 * call, since there is no later for a QP that goes. O(groups + QPs
 * attached). Returns 0, -EINVAL (NULL argument) or -EBUSY (a member not
 * left still uses qp; nothing is detached). */
int imc_mcast_release_qp(struct imc_mcast *t, const void *qp);

/* Watches how long joins take, for measurements (a scenario's report, a
 * benchmark). done runs from the loop just before a member's callback
 * tells JOINED or ERROR: first is true when this completes the member's
 * join request (rule 2 above), false when it ends a re-join of a member
 * that had joined (after a reregister, an SM change, a P_Key change, a
 * trap 67 or port up). elapsed is loop time since imc_mcast_join(), or
 * since the member went REJOINING. done must not call the tracker. */
struct imc_mcast_observer {
	void (*done)(void *ctx, const struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev, bool first,
		     imc_time_t elapsed);
	void *ctx;
};

/* Sets the observer (copied), or clears it with NULL. */
void imc_mcast_set_observer(struct imc_mcast *t,
			    const struct imc_mcast_observer *o);

enum imc_mcast_state {
	IMC_MCAST_PENDING,
	IMC_MCAST_JOINED,
	IMC_MCAST_REJOINING,
	IMC_MCAST_WAITING,
	IMC_MCAST_FAILED,
};

const char *imc_mcast_state_str(enum imc_mcast_state s);

enum imc_mcast_state imc_mcast_member_state(const struct imc_mcast_member *m);

/* ---- sending to a joined group ---- */

/* What a UD send to a group needs (IBA 10.2.1's address vector as
 * ibv_ah_attr, plus the destination QP and Q_Key of the work request),
 * all of it from the group's MCMemberRecord. */
struct imc_mcast_av {
	uint16_t dlid;             /* the group's MLID */
	uint8_t sl;
	uint8_t rate;              /* SA rate code (IBA 15.2.5.17 Rate) */
	bool grh;                  /* always true: a multicast send has a
				    * GRH whose DGID is the MGID (IBA 10.5.2.5) */
	struct imc_gid dgid;       /* the MGID */
	uint8_t tclass;
	uint32_t flow_label;       /* 20 bits */
	uint8_t hop_limit;
	uint32_t remote_qpn;       /* 0xFFFFFF, the multicast QPN (IBA 10.5.2.5) */
	uint32_t qkey;             /* the group's Q_Key */
	uint16_t pkey;             /* the group's P_Key, for the send's QP */
};

/* Fills av from rec, the record of IMC_MCAST_EV_JOINED (or a group's
 * imc_mcast_group_info.rec once joined). Returns 0, or -EINVAL when rec
 * or av is NULL or rec is no joined group's record: an MGID that is not
 * multicast, an MLID outside 0xC000..0xFFFE (IBA 4.1.3), a P_Key whose
 * low 15 bits are zero (IBA 10.9.1.2: no valid partition). */
int imc_mcast_send_av(const struct imc_mcmr *rec, struct imc_mcast_av *av);

/* Port changes (as the port's owner hears them: the fabric's port events,
 * umad's port state). */
enum imc_mcast_port_event {
	IMC_MCAST_PORT_ACTIVE,      /* port up */
	IMC_MCAST_PORT_DOWN,
	IMC_MCAST_PORT_LID_CHANGE,
	IMC_MCAST_PORT_SM_CHANGE,   /* new SM LID: re-join everything */
	IMC_MCAST_PORT_REREGISTER,  /* IBA 14.4.11 client reregister */
	IMC_MCAST_PORT_PKEY_CHANGE,
};

/* DOWN: members WAITING, requests in flight canceled, nothing sent until
 * ACTIVE, which re-joins every group (paced as the config says) and
 * deletes what the SA may still hold of groups nobody wants any more (a
 * flap shorter than the SM's sweep leaves the port's memberships at the
 * SA).
 * REREGISTER, SM_CHANGE, PKEY_CHANGE: JOINED members REJOINING, every
 * group re-joined with its union of bits (paced); a request in flight
 * completes first. LID_CHANGE: counted only (the SA keys memberships by
 * PortGID). Events that change nothing (ACTIVE when active, DOWN when
 * down, re-joins while down) are counted only. */
void imc_mcast_port_event(struct imc_mcast *t, enum imc_mcast_port_event ev);

const char *imc_mcast_port_event_str(enum imc_mcast_port_event ev);

/* A Report the SA client received (imc_sa_report_cb): trap 67 for a group
 * of the port makes it re-join; trap 66 for a group whose members wait
 * makes it join (paced over a quarter of rejoin_spread), and for a group
 * the port holds without a full bit makes it re-join (a trap 67 went
 * unheard); anything else is ignored. For owners of
 * the client's Report handler (see imc_mcast_config.subscribe). */
void imc_mcast_report(struct imc_mcast *t, const struct imc_sa_mad *report);

/* One group of the port, for listings (`ibmcast mcast show`). */
struct imc_mcast_group_info {
	struct imc_mcmr rec;        /* the SA's record (zero before answer) */
	uint8_t join_state;         /* union held at the SA */
	uint8_t wanted;             /* union of live members' bits */
	unsigned members;
	bool joined;                /* the SA holds join_state */
	bool waiting;               /* the SA has no such group: its
				     * members wait for it (WAITING,
				     * -ENOENT) */
};

/* Calls fn for each group, in MGID order (groups not yet keyed, MGID 0
 * creates, are skipped). fn must not change the tracker. Returns 0, or
 * -ENOMEM (the ordering buffer) and then fn is not called. */
int imc_mcast_foreach_group(const struct imc_mcast *t,
			    void (*fn)(void *arg,
				       const struct imc_mcast_group_info *g),
			    void *arg);

struct imc_mcast_stats {
	uint64_t joins;             /* imc_mcast_join() calls accepted */
	uint64_t leaves;
	uint64_t joins_local;       /* completed without a MAD */
	uint64_t mads_sent;         /* SA requests (Sets, Deletes,
				     * InformInfo subscriptions) */
	uint64_t retries;
	uint64_t timeouts;
	uint64_t rejoins;           /* group re-joins after port events */
	uint64_t errors;            /* members failed, all causes */
	uint64_t errors_by_status[8]; /* SA status >> 8, 0..7 (IBA 13.4.7) */
	uint64_t attach_errors;
	uint64_t detach_errors;
	size_t groups;
	size_t members;
	size_t joined;              /* of those, JOINED now */
	size_t in_flight;           /* SA requests not answered */
	uint64_t port_events[6];    /* by enum imc_mcast_port_event */
	uint64_t traps;             /* trap 67 Reports, duplicates too */
	uint64_t groups_lost;       /* groups re-joined after a trap 67 (or
				     * a trap 66 of a group the port held
				     * without a full bit) */
	uint64_t traps_created;     /* trap 66 Reports, duplicates too */
	uint64_t waits;             /* members told WAITING (-ENOENT): the
				     * SA has no group of their MGID */
	size_t groups_absent;       /* groups whose members wait for the SA
				     * to create them (a fallback timer
				     * each) */
};

void imc_mcast_get_stats(const struct imc_mcast *t,
			 struct imc_mcast_stats *st);

struct imc_json;

/* A group as one JSON object on one line (ibmcast/json.h): mgid, mlid,
 * join_state, wanted, members, is_joined, then the record's qkey, pkey,
 * mtu, rate, sl, tclass, flow_label, hop_limit and scope. Returns 0 or
 * the writer's error. */
int imc_mcast_group_info_json(struct imc_json *j,
			      const struct imc_mcast_group_info *g);

/* A group as one line of text: "group MGID mlid= join_state= wanted=
 * members= joined|pending", then the record's qkey, pkey, mtu, rate, sl,
 * tclass, flow_label, hop_limit and scope. Returns 0, -EINVAL or -EIO. */
int imc_mcast_group_info_print_text(FILE *f,
				    const struct imc_mcast_group_info *g);

/* The tracker's counters as one JSON object on a line: joins, leaves,
 * joins_local, mads_sent, retries, timeouts, rejoins, errors and members.
 * Returns 0, -EINVAL or the writer's error. */
int imc_mcast_stats_print_json(struct imc_json *j,
			       const struct imc_mcast_stats *st);

#ifdef __cplusplus
}
#endif
#endif
