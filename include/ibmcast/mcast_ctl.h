/* The control socket of `ibmcast join`, read by `ibmcast mcast show`.
 *
 * Each `ibmcast join` process listens on a unix stream socket
 * RUN_DIR/<port GUID, 16 hex digits>-<pid>.sock. A client connects and
 * reads, until EOF, a listing of the process's tracker in lines of
 * space-separated fields (numbers decimal):
 *
 *   ibmcast-mcast 1
 *   port DEVICE PORTNUM PORT_GID LID SM_LID PID WATCH
 *   group MGID MLID JOIN_STATE WANTED MEMBERS JOINED QKEY PKEY MTU RATE
 *         SL TCLASS FLOW_LABEL HOP_LIMIT SCOPE       (one line each)
 *   end
 *
 * groups in MGID order (imc_mcast_foreach_group). RUN_DIR is --run-dir,
 * else $IBMCAST_RUN_DIR, else $XDG_RUNTIME_DIR/ibmcast, else /run/ibmcast
 * for root, else /tmp/ibmcast-UID.
 */
#ifndef IBMCAST_MCAST_CTL_H
#define IBMCAST_MCAST_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/umad.h"

#define IMC_CTL_MAGIC "ibmcast-mcast 1"

/* The run directory into buf (opt when not NULL). Returns 0 or
 * -ENAMETOOLONG. */
int imc_ctl_run_dir(const char *opt, char *buf, size_t len);

/* The listing of a tracker, as sent on the socket. */
void imc_ctl_write_listing(FILE *f, const struct imc_umad_port *p,
			   const char *watch, const struct imc_mcast *t);

struct imc_ctl_server;

/* Creates RUN_DIR (mode 0755) when missing and listens on the socket
 * of port p on loop. Returns 0 or a negative errno. */
int imc_ctl_server_open(struct imc_loop *loop, const char *run_dir,
			const struct imc_umad_port *p, const char *watch,
			const struct imc_mcast *t, struct imc_ctl_server **out);

/* The socket's path; valid until imc_ctl_server_close(). */
const char *imc_ctl_server_path(const struct imc_ctl_server *s);

/* Stops listening and removes the socket. NULL is a no-op. */
void imc_ctl_server_close(struct imc_ctl_server *s);

/* One process's listing, parsed. */
struct imc_ctl_group {
	struct imc_mcmr rec;
	uint8_t join_state, wanted;
	unsigned members;
	bool joined;
};

struct imc_ctl_listing {
	char device[IMC_UMAD_NAME_LEN];
	unsigned port;
	struct imc_gid port_gid;
	uint16_t lid, sm_lid;
	long pid;
	char watch[16];
	struct imc_ctl_group *groups;
	size_t n;
};

/* Parses a listing (the whole text). Returns 0, -EPROTO or -ENOMEM. */
int imc_ctl_parse(const char *text, struct imc_ctl_listing *l);

/* Frees what imc_ctl_parse() or imc_ctl_fetch() put in l (not l). */
void imc_ctl_listing_free(struct imc_ctl_listing *l);

/* Connects to the socket at path and reads its listing. Returns 0,
 * -ECONNREFUSED (stale socket), or another negative errno. */
int imc_ctl_fetch(const char *path, struct imc_ctl_listing *l);

#endif
