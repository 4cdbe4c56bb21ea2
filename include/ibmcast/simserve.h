/* The embedded fabric as an ibsim server: the server side of ibsim's client
 * protocol (ibsim 0.10, the one libumad2sim and src/umad/ibsim.c speak),
 * so that unmodified OpenSM and infiniband-diags run on the fabric with
 * LD_PRELOAD=libumad2sim.so.
 *
 * Sockets, all AF_UNIX datagram in the abstract namespace, named from
 * the configured base (IBSIM_SOCKNAME, else "sim"):
 *   "<base>:ctl"      the control socket: struct sim_ctl requests from a
 *                     client's "<base>:ctl<id>", answered to the sender;
 *   "<base>:out<N>"   the packet socket of client slot N, bound when the
 *                     client connects and connected to its "<base>:in<id>".
 *
 * Unlike ibsim there is no fixed client limit: slots are handed out from
 * a growable table up to 65,535 (the slot travels in TID bits 48-63, so
 * 16 bits are all the protocol has). MADs travel as struct sim_request
 * through the fabric's MAD agents (fabric_mad.h), so directed-route and
 * LID-routed SMPs, the SMA/PMA answers and the SM's MADs all cross the
 * simulated switches.
 *
 * Flow control: a client's socket queue holds few datagrams (the kernel's
 * net.unix.max_dgram_qlen, 10 by default), so packets for a client wait
 * in a per-client queue and go out with sendmmsg() when the socket can
 * take them; nothing blocks. While the queues together hold more than
 * the high-water mark the server stops reading from clients (they block
 * in write(), the back pressure a real HCA's send queue gives); when a
 * client that stopped reading holds its queue past its limit, its oldest
 * packets are dropped and counted, as a full receive queue drops on an
 * HCA (IBA 10.2.4.3 does not promise UD delivery), and the MAD layers'
 * retries take over. So 1,000+ MADs in flight never wedge the server.
 *
 * Everything runs on a real-time imc_loop (epoll), in the loop's thread.
 */
#ifndef IBMCAST_SIMSERVE_H
#define IBMCAST_SIMSERVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMC_SIMSERVE_MAX_CLIENTS 65535u

struct imc_simserve_config {
	const char *sockname;    /* NULL: IBSIM_SOCKNAME, else "sim" */
	/* The node a client without a node id attaches to (ibsim: the
	 * first node of the net file); IMC_TOPO_NONE: the topology's SM
	 * node, else node 0. */
	uint32_t default_node;
	size_t queue_limit;      /* packets queued per client (0: 4096) */
	size_t high_water;       /* all clients; reads pause above (0: 16384) */
	/* NULL, or where a line goes for each attach and detach:
	 * "attach slot S id I node NAME port P issm 0|1", "detach slot S". */
	FILE *log;
};

void imc_simserve_config_init(struct imc_simserve_config *c);

struct imc_simserve;

/* Binds the control socket on loop (real time) and serves f. f and loop
 * must outlive the server. Returns 0, -EADDRINUSE (a simulator with that
 * name runs already), -EOPNOTSUPP (virtual loop), -ENAMETOOLONG, -ENOMEM
 * or another negative errno. */
int imc_simserve_create(struct imc_fabric *f, struct imc_loop *loop,
			const struct imc_simserve_config *cfg,
			struct imc_simserve **out);

/* Detaches every client (their packet sockets close) and frees the
 * server. NULL is a no-op. */
void imc_simserve_destroy(struct imc_simserve *s);

/* The socket base name in use. */
const char *imc_simserve_sockname(const struct imc_simserve *s);

struct imc_simserve_stats {
	uint64_t ctl_requests;   /* control messages answered */
	uint64_t ctl_errors;     /* answered SIM_CTL_ERROR */
	uint64_t connects, disconnects;
	uint32_t clients;        /* attached now */
	uint32_t clients_max;    /* most attached at once */
	uint64_t pkts_in;        /* struct sim_request from clients */
	uint64_t pkts_bad;       /* malformed, dropped */
	uint64_t pkts_out;       /* to clients */
	uint64_t pkts_unrouted;  /* sent back with status 110 */
	uint64_t pkts_dropped;   /* a client's queue overflowed */
	uint64_t rx_batches, tx_batches; /* recvmmsg / sendmmsg calls */
	uint64_t pauses;         /* reads paused at the high-water mark */
	size_t queued;           /* packets waiting for clients now */
	size_t queued_max;
};

void imc_simserve_get_stats(const struct imc_simserve *s,
			    struct imc_simserve_stats *st);

#ifdef __cplusplus
}
#endif
#endif
