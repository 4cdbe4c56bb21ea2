/* Server core of ibmcastd: serves the clients of mcastd.h from the join
 * trackers of the host's ports.
 *
 * The process around it (ibmcastd) creates the listening socket, accepts,
 * reads SO_PEERCRED and hands each connected socket to
 * imc_mcastd_server_accept() with the peer's credentials. The server then
 * owns the socket: it reads and writes it from the loop (fd watches on a
 * real-time loop; on a virtual loop the caller pumps with
 * imc_mcastd_server_io()), and closes it when the client goes.
 *
 * Per port the server is given a tracker (mcast.h) it does not own. Each
 * client join is one tracker member, so the tracker holds the union of
 * every client's bits and sends a Delete only when the last holder of a
 * bit leaves, whichever process it was in. The server attaches no QP
 * (members carry no qp): the clients attach their own (mcastd.h).
 *
 * A connection:
 *
 *   state     event                                  next
 *   HELLO     hello with our version                 OPEN
 *   HELLO     other version, malformed, oversized    gone (error sent)
 *   OPEN      malformed or oversized message         gone
 *   OPEN      EOF, HUP, ECONNRESET, write error      gone
 *   OPEN      server shutdown                        DRAINING
 *   DRAINING  every revoked member acknowledged,     gone
 *             or EOF, or the ack timeout
 *
 * "gone" leaves every member of the connection in the tracker at once
 * (inside the round that saw it), closes the socket and frees the
 * connection; nothing else notices.
 *
 * Limits per connection (members, joins in flight, message size) refuse
 * the one join with a status (mcastd.h) or, for size, close that client;
 * connections per uid are refused at accept.
 *
 * Restart audit: a port added with an SA client is audited once: the
 * server asks the SA for the port's memberships (MCMemberRecord GetTable
 * by PortGID, IBA 15.2.5.17), lets clients reconnect and re-join for the
 * grace period, then sends a Delete for every bit the SA holds for the
 * port that no member wants (groups nobody joined, bits nobody holds any
 * more): a daemon that died leaves nothing held twice or for nobody.
 */
#ifndef IBMCAST_MCASTD_SERVER_H
#define IBMCAST_MCASTD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/sa_client.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_mcastd_server;
struct imc_mcastd_conn;

/* Supplementary groups carried in credentials. */
#define IMC_MCASTD_MAX_GROUPS 32

/* The peer, as SO_PEERCRED (and SO_PEERGROUPS or the caller's group
 * lookup) tell it; copied at accept and given as is to authorize(). */
struct imc_mcastd_cred {
	uint32_t pid, uid, gid;
	/* The caller's verdict that the peer belongs to the configured
	 * group (primary or supplementary). */
	bool in_group;
	/* Supplementary groups, the primary not repeated; at most
	 * IMC_MCASTD_MAX_GROUPS (accept clamps n_groups). */
	uint32_t n_groups;
	uint32_t groups[IMC_MCASTD_MAX_GROUPS];
};

enum imc_mcastd_log_level {
	IMC_MCASTD_LOG_ERR,
	IMC_MCASTD_LOG_WARN,
	IMC_MCASTD_LOG_INFO,
	IMC_MCASTD_LOG_DEBUG,
};

/* The port a join names, as the server resolved it. */
struct imc_mcastd_port_desc {
	struct imc_gid gid;             /* PortGID: required, non-zero */
	char device[IMC_MCASTD_DEVLEN]; /* "" when unknown */
	uint8_t port_num;
};

struct imc_mcastd_limits {
	unsigned members;       /* per connection */
	unsigned in_flight;     /* joins not answered yet, per connection */
	size_t max_msg;         /* bytes of one client message, header too */
	unsigned conns_per_uid;
	unsigned conns;         /* all clients */
};

struct imc_mcastd_server_config {
	struct imc_mcastd_limits limits;
	/* Restart audit: wait this long after a port is added before the
	 * Deletes of memberships nobody re-joined. */
	imc_time_t grace;
	/* How long a revoked member's client may take to acknowledge its
	 * detach before the connection is closed (and its members left). */
	imc_time_t ack_timeout;
	/* Teardown: how long imc_mcastd_server_shutdown() waits for the SA
	 * to answer the Deletes. */
	imc_time_t shutdown_timeout;
	/* SM_Key of the restart audit's requests (0: none). An SA hides
	 * PortGID and JoinState from untrusted requesters (IBA 15.2.5.17;
	 * OpenSM does). With the key the old JoinState of each group is
	 * held through the grace period and then given back to the tracker,
	 * which deletes what no client re-joined. Without it the audit
	 * deletes groups nobody re-joined by Deletes of one bit at a time,
	 * and the first client to re-join a group may make the tracker give
	 * up bits that another client has yet to re-join (that client then
	 * gets them back: REJOINING, JOINED). */
	uint64_t sm_key;
	/* Authorize hook: 0 lets the join through; a negative errno
	 * (-EACCES, -EPERM) refuses it: the client's member gets ERROR with
	 * that status and a log line (WARN) names who, what and why. NULL:
	 * everything is allowed. port is the resolved port; req is the join
	 * as received (its MGID, JoinState, P_Key in rec.pkey when
	 * comp_mask has UMAD_SA_MCM_COMP_MASK_PKEY). */
	int (*authorize)(void *ctx, const struct imc_mcastd_cred *cr,
			 const struct imc_mcastd_port_desc *port,
			 const struct imc_mcast_join_req *req);
	/* Log hook: one line, no newline. NULL: no logging. */
	void (*log)(void *ctx, enum imc_mcastd_log_level lvl, const char *msg);
	void *ctx;
};

/* Limits: 4096 members, 256 joins in flight, 4096-byte messages, 64
 * connections per uid, 1024 connections; grace 5 s; ack 2 s; shutdown
 * 5 s; no hooks. */
void imc_mcastd_server_config_init(struct imc_mcastd_server_config *cfg);

/* cfg is copied; NULL means defaults (imc_mcastd_server_config_init()).
 * Returns 0, -EINVAL or -ENOMEM. */
int imc_mcastd_server_create(struct imc_loop *loop,
			     const struct imc_mcastd_server_config *cfg,
			     struct imc_mcastd_server **out);

/* Closes every connection (their members left in the trackers, sockets
 * closed) without waiting for anything: use imc_mcastd_server_shutdown()
 * first for a clean exit. Trackers and SA clients stay the caller's.
 * NULL is a no-op. */
void imc_mcastd_server_destroy(struct imc_mcastd_server *s);

/* Serves port desc with tracker t (not owned; it must outlive the server
 * or be removed with the server's destroy). sa (may be NULL: no audit) is
 * the SA client of t, used for the restart audit. Returns 0, -EINVAL (zero
 * GID), -EEXIST (GID served already) or -ENOMEM. */
int imc_mcastd_server_add_port(struct imc_mcastd_server *s,
			       const struct imc_mcastd_port_desc *desc,
			       struct imc_mcast *t, struct imc_sa_client *sa);

/* Takes over a connected stream socket (made non-blocking here) of a peer
 * with credentials cr. Returns 0 (s owns fd; *out, when out is not NULL,
 * names the connection until it goes), -EUSERS (the uid has its maximum
 * of connections, or the server its total: a REFUSE saying so was written
 * to fd, and a log line), -ESHUTDOWN (shutting down) or -ENOMEM; on error
 * fd is the caller's to close. */
int imc_mcastd_server_accept(struct imc_mcastd_server *s, int fd,
			     const struct imc_mcastd_cred *cr,
			     struct imc_mcastd_conn **out);

/* For a virtual loop (no fd watches): reads every connection's socket
 * until it would block, handles what came, and writes what waits.
 * Returns how many messages moved (0: nothing to do). On a real-time
 * loop the fd watches do the same by themselves. */
int imc_mcastd_server_io(struct imc_mcastd_server *s);

/* Asks the authorize hook again about every member (after a policy
 * reload): the members it now refuses are revoked (client asked to
 * detach, then left). Returns how many were revoked. */
unsigned imc_mcastd_server_reauthorize(struct imc_mcastd_server *s);

/* Clean exit (SIGTERM): refuses new connections and joins, asks every
 * client to detach its members, leaves each member once acknowledged
 * (or its client is gone, or ack_timeout passed), then waits until
 * every tracker has no member and no SA request in flight (or
 * shutdown_timeout passed) and calls done from the loop, once, with 0 or
 * -ETIMEDOUT. The caller then destroys the server and the trackers.
 * Returns 0 or -EALREADY. */
int imc_mcastd_server_shutdown(struct imc_mcastd_server *s,
			       void (*done)(void *arg, int status), void *arg);

struct imc_mcastd_server_stats {
	uint64_t accepted, refused;     /* connections */
	uint64_t closed_eof;            /* client closed or died */
	uint64_t closed_error;          /* malformed, oversized, version */
	uint64_t joins, leaves;
	uint64_t denied;                /* by the authorize hook */
	uint64_t limited;               /* refused by a per-client limit */
	uint64_t revoked;
	uint64_t audit_deletes;         /* Deletes sent by the restart audit */
	uint64_t msgs_in, msgs_out;
	size_t conns;
	size_t members;
};

void imc_mcastd_server_get_stats(const struct imc_mcastd_server *s,
				 struct imc_mcastd_server_stats *st);

const char *imc_mcastd_log_level_str(enum imc_mcastd_log_level l);

#ifdef __cplusplus
}
#endif
#endif
