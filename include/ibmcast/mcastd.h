/* Client of ibmcastd, the host's multicast join service: what mcast.h
 * promises, across the process boundary.
 *
 * The daemon owns one join tracker per local port and holds the union of
 * every client's members at the SA, so processes of one host share a
 * port's single membership per group (IBA 15.2.5.17: the SA keys
 * memberships by PortGID, not by process). A client process joins and
 * leaves through handles exactly as with imc_mcast_join()/leave().
 *
 * Event loop integration: the connection exposes ONE file descriptor that
 * stays the same for the life of the connection object (reconnects
 * included). Poll it for readability (poll, epoll, libuv, imc_loop) and
 * call imc_mcastd_process() when it is readable, and no later than
 * imc_mcastd_next_deadline() when a custom clock is configured. Every
 * callback runs from imc_mcastd_process() only. imc_mcastd_loop_attach()
 * does that wiring on a real-time imc_loop.
 *
 * A member (handle of one join), as in mcast.h:
 *
 *   state     event                                   next
 *   PENDING   daemon: SA answered (attach ran)        JOINED
 *   PENDING   daemon: SA status, refusal, limit       FAILED
 *   PENDING   daemon: port down                       WAITING
 *   JOINED    daemon: reregister, trap 67, ...        REJOINING
 *   JOINED    connection to the daemon lost           REJOINING
 *   JOINED    daemon: port down                       WAITING
 *   any live  daemon: no full bit, no group at the SA WAITING (-ENOENT):
 *                                                     QP detached
 *   WAITING   daemon: the group is back (-ENOENT)     JOINED (attached)
 *   REJOINING daemon: SA answered (MLID checked)      JOINED
 *   REJOINING daemon: SA status                       FAILED
 *   WAITING   daemon: port up                         REJOINING / PENDING
 *   JOINED    daemon revokes (shutdown, policy)       FAILED (detached)
 *   any       imc_mcastd_leave()                      freed: no callback
 *
 * Callbacks (docs/architecture.md, "The callback contract"):
 *  1. they run from imc_mcastd_process(), never inside join, leave,
 *     show or destroy;
 *  2. each join request completes exactly once, with the first
 *     IMC_MCAST_EV_JOINED or IMC_MCAST_EV_ERROR; a show request completes
 *     exactly once (its result or an error, -ECANCELED at destroy);
 *  3. after imc_mcastd_leave() or imc_mcastd_destroy() returns, that
 *     member gets no callback;
 *  4. a callback may leave any member and may destroy the connection;
 *  5. callbacks return void.
 *
 * QPs stay the caller's: the attach op runs (from imc_mcastd_process())
 * after the daemon reports that the SA answered and before the JOINED
 * callback; the detach op runs inside imc_mcastd_leave() before the
 * daemon is told that the member left, so the Delete that gives up the
 * receiving bits (FullMember, NonMember) always follows the detach. When
 * the daemon must give up a member by itself (it is shutting down, the
 * policy changed), it asks the client, which detaches, reports ERROR with
 * the daemon's status, and acknowledges; the daemon sends no Delete for
 * that member before the acknowledgement or the client's death. A QP
 * joined to one group by several members is attached once and detached
 * with its last member; a re-join that brings a new MLID detaches the
 * old one and attaches the new one before the JOINED callback.
 *
 * Daemon restarts: when the connection breaks, JOINED members go
 * REJOINING (their QPs stay attached) and the client reconnects by
 * itself, with an exponential backoff, and sends every live member's join
 * again; each then gets JOINED (or ERROR) as the new daemon answers.
 * Requests not answered yet are sent again too and still complete once.
 *
 * Statuses in IMC_MCAST_EV_ERROR events are those of mcast.h (an SA MAD
 * status > 0 as the SA sent it, or a negative errno), plus the daemon's:
 *   -EACCES      the daemon's policy refuses this join
 *   -EDQUOT      the client holds its maximum of members
 *   -EAGAIN      the client has its maximum of joins in flight
 *   -ENODEV      no such port at the daemon
 *   -ESHUTDOWN   the daemon gave the member up (revoked)
 *   -EPROTO      the daemon's answer was malformed
 */
#ifndef IBMCAST_MCASTD_H
#define IBMCAST_MCASTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_attr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the client/daemon protocol this library speaks. The daemon
 * refuses any other with a clear message (imc_mcastd_process() then
 * returns -EPROTONOSUPPORT and the client stops reconnecting). */
#define IMC_MCASTD_PROTO_VERSION 1

/* Where ibmcastd listens unless told otherwise. */
#define IMC_MCASTD_SOCKET_DEFAULT "/run/ibmcast/ibmcastd.sock"

/* Longest device name the protocol carries (with its NUL). */
#define IMC_MCASTD_DEVLEN 32
/* Longest command name the protocol carries (with its NUL), as
 * /proc/PID/comm (TASK_COMM_LEN). */
#define IMC_MCASTD_COMMLEN 16

struct imc_mcastd;          /* a connection to the daemon */
struct imc_mcastd_member;   /* one join: the handle */

/* Which local port a join is for. A non-zero gid names the port by its
 * GID; otherwise a non-empty device (e.g. "mlx5_0") and port_num name it;
 * all zero means the daemon's only port (-ENODEV when it serves several). */
struct imc_mcastd_port {
	struct imc_gid gid;
	char device[IMC_MCASTD_DEVLEN];
	uint8_t port_num;
};

struct imc_mcastd_config {
	const char *path;       /* socket; NULL: IMC_MCASTD_SOCKET_DEFAULT */
	/* Command name told to the daemon (for `mcast show`); NULL: this
	 * process's /proc/self/comm. The daemon trusts only SO_PEERCRED for
	 * identity; the name is informational. */
	const char *comm;
	/* Reconnect backoff: first delay, doubled each failure up to max,
	 * each with jitter from seed. */
	imc_time_t backoff_min;
	imc_time_t backoff_max;
	uint64_t seed;
	/* Keep retrying when the first connect fails, instead of failing
	 * imc_mcastd_create() with its errno. */
	bool wait;
	/* The caller's QP ops (mcast.h semantics: called from
	 * imc_mcastd_process(), detach also from leave and destroy; they
	 * must not call back into the client). NULL fields: no QP work. */
	struct imc_mcast_ops ops;
	/* Connection changes: up true when the daemon accepted the hello,
	 * false when the connection broke (err the reason). May be NULL. */
	void (*conn_cb)(void *arg, bool up, int err);
	void *conn_arg;
	/* Clock for the backoff. NULL: CLOCK_MONOTONIC, and the fd also
	 * becomes readable when a backoff timer expires. Otherwise the caller
	 * calls imc_mcastd_process() by imc_mcastd_next_deadline() in this
	 * clock's time (deterministic tests: a virtual loop's time). */
	imc_time_t (*clock)(void *ctx);
	void *clock_ctx;
	/* How to reach the daemon. NULL: socket(AF_UNIX, SOCK_STREAM) and
	 * connect(path). Otherwise returns a connected stream socket fd
	 * (which the client then owns) or a negative errno. */
	int (*connect)(void *ctx, const char *path);
	void *connect_ctx;
};

/* Backoff 10 ms .. 2 s, path NULL, wait false, everything else zero. */
void imc_mcastd_config_init(struct imc_mcastd_config *cfg);

/* Connects (and sends the hello). cfg is copied (path and comm too);
 * NULL means defaults (imc_mcastd_config_init()).
 * Returns 0; -ENOENT or -ECONNREFUSED when no daemon listens (and
 * cfg->wait is false: a tool then knows to run standalone); -EACCES when
 * the socket's permissions refuse this user; -ENOMEM. */
int imc_mcastd_create(const struct imc_mcastd_config *cfg,
		      struct imc_mcastd **out);

/* Closes the connection: the daemon leaves every member of this client
 * for it (as for a client that died). The detach op runs, inside the
 * call, for every QP still attached, before the socket is closed. No
 * callback runs after this; pending show requests are dropped without
 * callback. May be called from a callback. NULL is a no-op. */
void imc_mcastd_destroy(struct imc_mcastd *c);

/* The descriptor to poll for readability; the same for the life of c. */
int imc_mcastd_fd(const struct imc_mcastd *c);

/* Reads what the daemon sent, sends what waits, reconnects when due, and
 * runs the callbacks. Never blocks. Returns 0; the daemon's refusal, for
 * good: -EPROTONOSUPPORT (this protocol version) or -EUSERS (too many
 * connections of this user, or in all), after which live members got
 * ERROR with that status and no reconnect follows; or another negative
 * errno of a broken connection (the client reconnects by itself: call it
 * again later). */
int imc_mcastd_process(struct imc_mcastd *c);

/* Time (in the config's clock) by which imc_mcastd_process() must run
 * even without readiness; IMC_TIME_MAX when nothing is scheduled. */
imc_time_t imc_mcastd_next_deadline(const struct imc_mcastd *c);

/* True while connected and the hello was accepted. */
bool imc_mcastd_connected(const struct imc_mcastd *c);

/* Runs c on a real-time loop: watches the fd and calls
 * imc_mcastd_process() when it is readable. A virtual loop gets
 * -EOPNOTSUPP (drive imc_mcastd_process() yourself). One loop at a time;
 * imc_mcastd_destroy() detaches. Returns 0 or a negative errno. */
int imc_mcastd_loop_attach(struct imc_mcastd *c, struct imc_loop *loop);
void imc_mcastd_loop_detach(struct imc_mcastd *c);

typedef void (*imc_mcastd_cb)(void *arg, struct imc_mcastd_member *m,
			      const struct imc_mcast_event *ev);

/* Joins the group of req on port (NULL: the daemon's only port). As
 * imc_mcast_join(): returns 0 and the handle at once, the outcome comes
 * through cb from imc_mcastd_process(); exactly one imc_mcastd_leave()
 * per successful join. req->qp is given to the ops. Works while
 * disconnected (the join is sent on reconnect). Returns -EINVAL (NULL cb,
 * no JoinState bit or bits above 0x8, an MGID that is neither zero nor
 * multicast), the daemon's refusal (-EPROTONOSUPPORT, -EUSERS: see
 * imc_mcastd_process()) or -ENOMEM, and then no callback runs. */
int imc_mcastd_join(struct imc_mcastd *c, const struct imc_mcastd_port *port,
		    const struct imc_mcast_join_req *req, imc_mcastd_cb cb,
		    void *arg, struct imc_mcastd_member **out);

/* Ends the membership and frees m: detaches its QP (when it was the
 * last member attached there) inside the call, then tells the daemon,
 * which sends the SA's Delete when m held the port's last copy of some
 * bits. No callback for m after this returns. May be called from any
 * callback. NULL is a no-op. */
void imc_mcastd_leave(struct imc_mcastd_member *m);

enum imc_mcast_state imc_mcastd_member_state(const struct imc_mcastd_member *m);

/* The group's record as last reported JOINED (MGID set after a create
 * with MGID 0 was answered); NULL before. Valid until the next
 * imc_mcastd_process() or imc_mcastd_leave(m). */
const struct imc_mcmr *imc_mcastd_member_rec(const struct imc_mcastd_member *m);

/* ---- show: the daemon's clients and the ports' membership at the SA ---- */

struct imc_mcastd_show_member {
	uint64_t handle;            /* the daemon's id, unique per client */
	struct imc_gid port_gid;
	struct imc_gid mgid;        /* 0 until a create is answered */
	uint8_t join_state;
	enum imc_mcast_state state;
	int status;                 /* last ERROR status, else 0 */
};

struct imc_mcastd_show_client {
	uint32_t pid, uid, gid;
	char comm[IMC_MCASTD_COMMLEN]; /* from /proc/PID/comm, else hello */
	bool self;                  /* the asking connection */
	size_t n_members;
	const struct imc_mcastd_show_member *members; /* in join order */
};

/* One group of one port, as the tracker holds it at the SA. */
struct imc_mcastd_show_group {
	struct imc_gid port_gid;
	struct imc_gid mgid;
	uint16_t mlid;
	uint8_t join_state;         /* union held at the SA */
	uint8_t wanted;             /* union of live members' bits */
	unsigned members;
	bool joined;
};

struct imc_mcastd_show_port {
	struct imc_gid gid;
	char device[IMC_MCASTD_DEVLEN];
	uint8_t port_num;
};

struct imc_mcastd_show {
	size_t n_ports;
	const struct imc_mcastd_show_port *ports;
	size_t n_clients;           /* in connection order */
	const struct imc_mcastd_show_client *clients;
	size_t n_groups;            /* by port, then MGID order */
	const struct imc_mcastd_show_group *groups;
};

/* status 0 and s (valid during the call), or a negative errno and s
 * NULL (-ECONNRESET: the connection broke first; -EPROTO). */
typedef void (*imc_mcastd_show_cb)(void *arg, int status,
				   const struct imc_mcastd_show *s);

/* Asks the daemon for its clients and memberships; cb runs once from
 * imc_mcastd_process(). Needs a connection (-ENOTCONN otherwise; a tool
 * waits for conn_cb up, or process() until imc_mcastd_connected()).
 * Returns 0, -ENOTCONN or -ENOMEM. */
int imc_mcastd_show(struct imc_mcastd *c, imc_mcastd_show_cb cb, void *arg);

struct imc_mcastd_stats {
	uint64_t connects;          /* hellos accepted */
	uint64_t disconnects;
	uint64_t joins, leaves;
	uint64_t joins_sent;        /* JOIN messages, re-sends included */
	uint64_t attach_errors, detach_errors;
	uint64_t msgs_in, msgs_out;
	size_t members;
	size_t attached;            /* (QP, MGID) attachments */
};

void imc_mcastd_get_stats(const struct imc_mcastd *c,
			  struct imc_mcastd_stats *st);

#ifdef __cplusplus
}
#endif
#endif
