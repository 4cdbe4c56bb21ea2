/* A second SA beside a running SM: the imc_sa engine served on a
 * libibumad port in server mode (IsSM set, so that requests addressed to
 * this port's LID reach it), while another SM (OpenSM) owns the fabric.
 *
 * The engine's port directory is learned from the fabric itself, through
 * the SM's own SA (IBA 15.2.5): for each LID a Get of its PortInfoRecord
 * (15.2.5.3; GidPrefix, MTUCap, link width and speed), its NodeRecord
 * (15.2.5.2; PortGUID, node type) and, with a trusted SM_Key, block 0 of
 * its P_KeyTableRecord (15.2.5.11). GID = GidPrefix + PortGUID. Gets per
 * LID rather than one GetTable: ibsim carries no RMPP (and umad2sim cuts
 * every MAD to 224 bytes), so a table would come back truncated.
 *
 * At start the LIDs from 1 are scanned until cfg.scan_gap LIDs in a row
 * past the highest one found have no port; requests that arrive meanwhile
 * wait. Afterwards a request whose requester LID or PortGID the directory
 * does not hold waits while that one port is looked up (by LID, or by
 * NodeRecord PortGUID); a port found absent is not asked for again for
 * cfg.miss_ttl, and the engine then sees it as unknown.
 *
 * The engine does not program multicast forwarding tables (the SM owns
 * them): ops->mcast_members is NULL.
 *
 * Lookup state, per key (LID or port GUID):
 *   unknown --miss--> pending --found--> present
 *                        \---not found/error--> absent --miss_ttl--> unknown
 */
#ifndef IBMCAST_SA_SERVE_H
#define IBMCAST_SA_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/sa.h"
#include "ibmcast/umad.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_sa_serve_config {
	const char *device;         /* CA name; NULL: libibumad's default */
	unsigned port;              /* 0: the first active port */
	enum imc_umad_backend backend; /* how the port is reached */
	imc_time_t coalesce;        /* receive coalescing (imc_umad_config) */
	/* The engine's settings. subnet_prefix, sa_lid and sa_gid are
	 * taken from the port. */
	struct imc_sa_config sa;
	/* SM_Key for P_KeyTableRecord queries, which the SM answers only
	 * when trusted (IBA 15.2.5.11; OpenSM: its sa_key, default 1).
	 * 0: do not ask; every port then has the default P_Key 0xFFFF. */
	uint64_t query_sm_key;
	unsigned window;            /* queries in flight at the SM, 1..32 */
	imc_time_t query_timeout;   /* first attempt of each query */
	unsigned query_retries;
	imc_time_t miss_ttl;        /* how long "absent" is believed */
	uint16_t scan_gap;          /* empty LIDs that end the scan */
	uint32_t park_max;          /* requests waiting for lookups */
};

/* Defaults: libibumad, imc_sa_config_init() for the engine, SM_Key 1,
 * window 32, 200 ms timeout with 3 retries, miss TTL 1 s, scan gap 64,
 * 4096 parked requests. */
void imc_sa_serve_config_init(struct imc_sa_serve_config *cfg);

struct imc_sa_serve;

/* Opens the port (server mode, IsSM), creates the engine and starts the
 * scan on loop (a real-time loop). cfg is copied (NULL: the defaults of imc_sa_serve_config_init()).
 * Returns 0, -EINVAL (bad
 * arguments: window 0 or above 32, park_max 0), -ENODEV (no port, or the
 * port has no SM LID to learn from), -EIO, -ENOMEM, or the engine's
 * error. Free with imc_sa_serve_close(). */
int imc_sa_serve_open(struct imc_loop *loop,
		      const struct imc_sa_serve_config *cfg,
		      struct imc_sa_serve **out);

/* Stops serving, frees the engine, the directory and every request still
 * waiting (unanswered), and closes the port. NULL is a no-op. Not from a
 * callback of the loop that belongs to s. */
void imc_sa_serve_close(struct imc_sa_serve *s);

/* True once the start-up scan is over. */
bool imc_sa_serve_ready(const struct imc_sa_serve *s);

const struct imc_umad_port *imc_sa_serve_port(const struct imc_sa_serve *s);

/* The engine, for introspection (imc_sa_dump(), imc_sa_get_stats()). */
const struct imc_sa *imc_sa_serve_sa(const struct imc_sa_serve *s);

/* Calls cb for each port of the directory in increasing LID order; a
 * nonzero return stops and is returned. p (and its P_Keys) is valid
 * during the call. */
int imc_sa_serve_foreach_port(const struct imc_sa_serve *s,
			      int (*cb)(void *arg, const struct imc_sa_port *p),
			      void *arg);

struct imc_sa_serve_stats {
	uint32_t ports;             /* in the directory */
	uint64_t lookups;           /* ports looked up (scan and misses) */
	uint64_t lookups_absent;    /* found absent */
	uint64_t queries;           /* SA queries sent to the SM */
	uint64_t query_errors;      /* timeouts and unexpected statuses */
	uint64_t pkey_defaults;     /* ports given P_Key 0xFFFF by default */
	uint64_t requests;          /* SA requests received */
	uint64_t parked;            /* of them, waited for a lookup */
	uint32_t parked_now;
	uint64_t park_overflow;     /* served at once: park_max reached */
	uint64_t answers;           /* MADs the engine sent */
	uint64_t send_errors;
	imc_time_t scan_time;       /* start to ready, ns */
	struct imc_umad_stats port; /* the transport's counters */
};

void imc_sa_serve_get_stats(const struct imc_sa_serve *s,
			    struct imc_sa_serve_stats *st);

#ifdef __cplusplus
}
#endif
#endif
