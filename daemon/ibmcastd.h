/* ibmcastd: the host's multicast join service. One join tracker per local
 * port over libibumad, served to the host's processes over a Unix socket
 * by the server core (ibmcast/mcastd_server.h), under an access policy
 * (mcastd/mcastd_policy.h). Runs in the foreground (systemd). */
#ifndef IBMCASTD_H
#define IBMCASTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ibmcast/loop.h"
#include "ibmcast/mcast_umad.h"
#include "ibmcast/mcastd_server.h"
#include "ibmcast/port_lock.h"
#include "ibmcast/mcastd_policy.h"

#define IBMCASTD_MAX_PORTS 16

struct port_spec {
	char device[IMC_MCASTD_DEVLEN];   /* "" : libibumad's default CA */
	unsigned port;                    /* 0: the first active port */
};

struct daemon_opts {
	const char *runtime_dir;
	const char *socket;               /* NULL: RUNTIME_DIR/ibmcastd.sock */
	const char *group;                /* NULL: "ibmcast" when it exists */
	unsigned mode;
	const char *policy;               /* NULL: the default policy */
	enum imc_mcastd_log_level level;
	struct port_spec ports[IBMCASTD_MAX_PORTS];
	size_t n_ports;                   /* 0: every active port */
	struct imc_mcastd_limits limits;
	double grace, audit, poll;
	imc_time_t timeout;
	unsigned retries;
	enum imc_mcast_umad_watch watch;
	uint64_t sm_key;                  /* the restart audit's; 0: none */
};

struct daemon_port {
	struct daemon *d;
	struct imc_mcast_umad *mu;
	struct imc_port_lock *lock;
	struct imc_mcastd_port_desc desc;
};

/* The process:
 *
 *   state     event                                   next
 *   STARTING  ports open, socket listening            RUNNING
 *   RUNNING   SIGHUP                                  RUNNING (policy read)
 *   RUNNING   SIGTERM/SIGINT                          STOPPING
 *   STOPPING  every member left, Deletes answered     exit 0
 *   STOPPING  SIGTERM/SIGINT again                    exit 1
 */
enum daemon_state {
	DAEMON_STARTING,
	DAEMON_RUNNING,
	DAEMON_STOPPING,
};

struct daemon {
	struct daemon_opts o;
	struct imc_loop *loop;
	struct imc_mcastd_server *srv;
	struct daemon_port ports[IBMCASTD_MAX_PORTS];
	size_t n_ports;
	/* the socket */
	char sock_path[108];
	int listen_fd;
	struct imc_fd_watch listen_watch;
	bool has_gid;
	gid_t gid;
	/* the policy, swapped whole on SIGHUP */
	struct imc_mcastd_policy *policy;
	/* signals, through a signalfd */
	int sig_fd;
	struct imc_fd_watch sig_watch;
	enum daemon_state state;          /* daemon_set_state() only */
	int exit_code;
};

/* ibmcastd.c */
void daemon_set_state(struct daemon *d, enum daemon_state next);

/* log.c */
void dlog(enum imc_mcastd_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dlog_set_level(enum imc_mcastd_log_level lvl);
int dlog_parse_level(const char *s, enum imc_mcastd_log_level *out);
/* sd_notify(3)'s protocol: one datagram to $NOTIFY_SOCKET, if set. */
void daemon_notify(const char *state);

/* listen.c */
int daemon_listen(struct daemon *d);
void daemon_unlisten(struct daemon *d);

/* ports.c */
int daemon_open_ports(struct daemon *d);
void daemon_close_ports(struct daemon *d);

/* access.c */
int daemon_load_policy(struct daemon *d, bool reload);
int daemon_authorize(void *ctx, const struct imc_mcastd_cred *cr,
		     const struct imc_mcastd_port_desc *port,
		     const struct imc_mcast_join_req *req);
int daemon_resolve_group(struct daemon *d);

#endif
