/* The join tracker (mcast.h) on a real port: SA MADs through libibumad
 * (umad.h), port changes from the port itself, and a membership audit
 * that notices when the SA has lost the port's memberships.
 *
 * One imc_mcast_umad owns, for one port: the libibumad transport (client
 * mode), an SA client on it, the tracker, and the watchers below. Joins
 * and leaves go to the tracker (imc_mcast_umad_tracker()).
 *
 * How port changes are learnt (IBA 14.4: the SM changes PortInfo; the
 * port's owner must re-join after a new SM or a client reregister):
 *
 *  - verbs events, when libibverbs (loaded at run time) has a device of
 *    the same name as the umad CA: IBV_EVENT_PORT_ACTIVE, PORT_ERR,
 *    LID_CHANGE, SM_CHANGE, CLIENT_REREGISTER and PKEY_CHANGE of the port
 *    become IMC_MCAST_PORT_ACTIVE, DOWN, LID_CHANGE, SM_CHANGE,
 *    REREGISTER and PKEY_CHANGE. After each, the port's LID and SM LID are
 *    read again (umad_get_port) and SA requests follow the new SM LID.
 *  - otherwise, polling of umad_get_port() every poll_interval: state
 *    ACTIVE -> not is DOWN, not -> ACTIVE is ACTIVE, a new LID is
 *    LID_CHANGE, a new SM LID is SM_CHANGE. Polling cannot see a client
 *    reregister, nor an SM restarted at the same LID.
 *  - the membership audit, whatever the above: every audit_interval, one
 *    SA Get of MCMemberRecord by MGID and PortGID (component mask
 *    MGID|PortGID, IBA 15.2.5.17) for each group the tracker holds as
 *    joined, at most audit_window at once. The SA answers a member's Get
 *    with its record and a non-member's with NO_RECORDS (0x0300; OpenSM
 *    does so even for an untrusted SM_Key 0, hiding only PortGID and
 *    JoinState). NO_RECORDS for a group still held means the SA lost the
 *    membership (an SM restarted or failed over without a reregister):
 *    the audit ends its round and gives the tracker
 *    IMC_MCAST_PORT_REREGISTER, which re-joins every group, paced. A Get
 *    unanswered (SA down) changes nothing.
 *
 * Under umad2sim (ibsim) there is no verbs device, and LID and SM LID are
 * read once at process start: only the audit notices an OpenSM restart
 * there. It costs one Get per held group per audit_interval.
 *
 * Callbacks of the tracker and port_cb run in the loop thread.
 */
#ifndef IBMCAST_MCAST_UMAD_H
#define IBMCAST_MCAST_UMAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/umad.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_mcast_umad;

/* Where port changes come from. */
enum imc_mcast_umad_watch {
	IMC_MCAST_UMAD_WATCH_AUTO,   /* verbs events when possible, else poll */
	IMC_MCAST_UMAD_WATCH_VERBS,  /* verbs events or -ENODEV from open */
	IMC_MCAST_UMAD_WATCH_POLL,   /* umad_get_port() polling */
	IMC_MCAST_UMAD_WATCH_NONE,   /* the audit only */
};

const char *imc_mcast_umad_watch_str(enum imc_mcast_umad_watch w);

/* Why a port event was given to the tracker. */
enum imc_mcast_umad_cause {
	IMC_MCAST_UMAD_CAUSE_VERBS,  /* a verbs async event */
	IMC_MCAST_UMAD_CAUSE_POLL,   /* umad_get_port() changed */
	IMC_MCAST_UMAD_CAUSE_AUDIT,  /* the SA lost a held membership */
};

const char *imc_mcast_umad_cause_str(enum imc_mcast_umad_cause c);

/* Told after the tracker got ev (from the loop). It must not close the
 * imc_mcast_umad; it may use the tracker. */
typedef void (*imc_mcast_umad_port_cb)(void *arg,
				       enum imc_mcast_port_event ev,
				       enum imc_mcast_umad_cause cause);

struct imc_mcast_umad_config {
	const char *device;           /* CA name; NULL: libibumad's default */
	unsigned port;                /* 0: the first active port */
	uint16_t sa_lid;              /* 0: the SM's LID (followed) */
	struct imc_sa_client_config sa;
	struct imc_mcast_config mcast; /* port_gid is the port's, set here */
	enum imc_mcast_umad_watch watch;
	imc_time_t poll_interval;     /* ns; 0: no polling */
	imc_time_t audit_interval;    /* ns between rounds; 0: no audit */
	unsigned audit_window;        /* audit Gets in flight, >= 1 */
	imc_mcast_umad_port_cb port_cb; /* NULL: none */
	void *port_arg;
};

/* Defaults: the default CA and first active port, the SA client's and
 * tracker's defaults, WATCH_AUTO, polling every second, an audit round
 * every 10 s with 4 Gets in flight. */
void imc_mcast_umad_config_init(struct imc_mcast_umad_config *cfg);

/* Opens the port (imc_umad_open, client mode) on loop (a real-time loop),
 * an SA client and a tracker on it (ops as for imc_mcast_create: NULL
 * attaches no QP), and starts watching the port. cfg NULL means the
 * defaults of imc_mcast_umad_config_init(). Returns 0, -EINVAL,
 * -ENODEV (no such port; WATCH_VERBS without a verbs device), -EIO or
 * -ENOMEM, as imc_umad_open(). Free with imc_mcast_umad_close(). */
int imc_mcast_umad_open(struct imc_loop *loop,
			const struct imc_mcast_umad_config *cfg,
			const struct imc_mcast_ops *ops,
			struct imc_mcast_umad **out);

/* Stops the watchers and the audit, destroys the tracker (members are
 * freed without callbacks and without telling the SA: leave them first
 * and let the Deletes be answered: imc_mcast_get_stats() groups reaches 0),
 * the SA client, and closes the port. No callback runs after it returns.
 * Must not be called from a callback. NULL is a no-op. */
void imc_mcast_umad_close(struct imc_mcast_umad *mu);

struct imc_mcast *imc_mcast_umad_tracker(struct imc_mcast_umad *mu);
struct imc_umad *imc_mcast_umad_umad(struct imc_mcast_umad *mu);
struct imc_sa_client *imc_mcast_umad_sa(struct imc_mcast_umad *mu);

/* The port as last read (at open, and after each event or poll). */
const struct imc_umad_port *imc_mcast_umad_port(const struct imc_mcast_umad *mu);

/* The watcher in use (VERBS, POLL or NONE; never AUTO). */
enum imc_mcast_umad_watch imc_mcast_umad_watching(const struct imc_mcast_umad *mu);

/* Starts an audit round now (unless one is running). */
void imc_mcast_umad_audit(struct imc_mcast_umad *mu);

struct imc_mcast_umad_stats {
	uint64_t polls;               /* umad_get_port() reads */
	uint64_t verbs_events;        /* async events read (any port) */
	uint64_t port_events;         /* events given to the tracker */
	uint64_t audit_rounds;        /* rounds started */
	uint64_t audit_gets;          /* Gets answered or timed out */
	uint64_t audit_lost;          /* NO_RECORDS for a held group */
	uint64_t audit_errors;        /* no answer, or another status */
	uint64_t audit_reregisters;   /* REREGISTER given after a loss */
};

void imc_mcast_umad_get_stats(const struct imc_mcast_umad *mu,
			      struct imc_mcast_umad_stats *st);

#ifdef __cplusplus
}
#endif
#endif
