/* libibumad transport: SA MADs on a real port (or on ibsim through
 * umad2sim), received from an imc_loop.
 *
 * Two modes:
 *  - client: a MAD agent for the SA class (3, version 2) that gets the
 *    answers to its requests and, where the kernel lets it register the
 *    method, the SA's Reports (traps 66/67). Requests go to the SM's LID,
 *    QP1, Q_Key 0x80010000 (IBA 15.4.1), or to a LID set with
 *    imc_umad_set_sa_lid(). An imc_sa_client runs on top of it.
 *  - server: an agent for the SA request methods, so that SA requests
 *    addressed to this port reach the process (an SA implementation).
 *
 * With cfg->issm the transport also holds the port's issm device open,
 * which sets PortInfo:CapabilityMask.IsSM (IBA 14.2.5.6) as an SM does.
 * ibsim hands requests for QP1 of a node (SA requests to a server,
 * Reports to a client) only to a process that set IsSM there. It does so
 * after registering its agents: umad2sim's receiver thread crashes on a
 * MAD of a class nobody registered, and OpenSM probes a new IsSM port with
 * SMInfo at once. A process started with SIM_SET_ISSM=1 (umad2sim sets
 * IsSM the instant it attaches) would race that probe: the first
 * imc_umad_open() of such a process takes the variable out of the
 * environment before umad2sim reads it and acts as if cfg->issm were set.
 *
 * Received MADs are read in the loop thread when the umad fd can be
 * watched (the kernel's /dev/infiniband/umadN). umad2sim's fds are fake
 * (numbers from 1024 that only its own poll()/read() understand), so there
 * a helper thread waits in umad_recv() and hands the MADs to the loop
 * through an eventfd, as many per wake-up as have arrived; callbacks
 * always run in the loop thread.
 *
 * Backend IMC_UMAD_IBSIM leaves libibumad (and umad2sim) out and speaks
 * ibsim's own client protocol on its AF_UNIX socket (IBSIM_SOCKNAME, node
 * SIM_HOST; cfg->device and cfg->port are not used): one descriptor in
 * the loop's epoll, every MAD waiting read with one recvmmsg() and the
 * answers written while they are handled sent with one sendmmsg(), whole
 * 256-byte MADs both ways. It hands over what umad2sim would (every SA
 * class MAD), for a process that runs on ibsim only.
 */
#ifndef IBMCAST_UMAD_H
#define IBMCAST_UMAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/sa_client.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_umad;

enum imc_umad_mode {
	IMC_UMAD_CLIENT,
	IMC_UMAD_SERVER,
};

enum {
	IMC_UMAD_NAME_LEN = 20,       /* UMAD_CA_NAME_LEN */
	IMC_UMAD_QP1 = 1,
	IMC_UMAD_PORT_ACTIVE = 4,     /* PortState (IBA 14.2.5.6) */
};

#define IMC_UMAD_GSI_QKEY 0x80010000u /* IBA 9.6.1.1.2 well-known Q_Key */

enum imc_umad_backend {
	IMC_UMAD_LIBIBUMAD,           /* the kernel, or umad2sim over ibsim */
	IMC_UMAD_IBSIM,               /* ibsim's socket, directly */
};

struct imc_umad_config {
	const char *device;           /* CA name; NULL: libibumad's default */
	unsigned port;                /* 0: the first active port */
	enum imc_umad_mode mode;
	bool issm;                    /* set IsSM through the issm device */
	enum imc_umad_backend backend;
	/* Receive coalescing, where the loop watches the port's descriptor
	 * (the kernel's umad, ibsim's socket; not umad2sim): 0 wakes the
	 * loop for every MAD; > 0, once MADs arrive, reads the port every
	 * coalesce ns until a read finds none, trading up to that much
	 * latency for one wake-up per batch (as a NIC's interrupt
	 * moderation does). */
	imc_time_t coalesce;
};

/* The backend "auto" means: IMC_UMAD_IBSIM when umad2sim is loaded in
 * this process (the process was started to run on ibsim), else
 * IMC_UMAD_LIBIBUMAD. */
enum imc_umad_backend imc_umad_backend_auto(void);

/* The port as libibumad reported it when opened (umad2sim reads it once,
 * when the process starts). */
struct imc_umad_port {
	char device[IMC_UMAD_NAME_LEN];
	unsigned port;
	uint16_t lid;
	uint8_t lmc;
	uint16_t sm_lid;
	uint8_t sm_sl;
	unsigned state;               /* IMC_UMAD_PORT_ACTIVE when up */
	struct imc_gid gid;           /* GID index 0: prefix and port GUID */
};

/* Where a MAD comes from or goes to (no GRH: one subnet). */
struct imc_umad_addr {
	uint16_t lid;
	uint32_t qpn;
	uint32_t qkey;
	uint8_t sl;
	uint16_t pkey_index;
};

/* A received MAD: len bytes (at most 256; under umad2sim at most 224,
 * the part of each MAD it really carries), sent from *from. Called in the
 * loop thread. From ibsim's socket, from carries the LID and QPN only. */
typedef void (*imc_umad_recv_cb)(void *arg, const uint8_t *mad, size_t len,
				 const struct imc_umad_addr *from);

/* cfg NULL means an all-zero config: libibumad's default device, its
 * first active port, a client, no IsSM. Opens the port and registers the
 * agent(s) of cfg->mode, and starts
 * receiving on loop (a real-time loop). Returns 0, -ENODEV (no such
 * device or port; ibsim: no simulator, unknown node, no free client
 * slot, or another SM on the node), -EINVAL (bad arguments, a virtual
 * loop), -EIO (libibumad could not open or register), or -ENOMEM. Free
 * with imc_umad_close(). */
int imc_umad_open(struct imc_loop *loop, const struct imc_umad_config *cfg,
		  struct imc_umad **out);

/* Unregisters the agents and closes the port (under umad2sim: stops the
 * helper thread and leaves the fake port to the process's exit, as
 * umad2sim crashes on a MAD for a class no agent holds). No callback
 * runs after it returns. Must not be called from a callback of u. */
void imc_umad_close(struct imc_umad *u);

const struct imc_umad_port *imc_umad_port(const struct imc_umad *u);

/* In client mode, whether Reports reach this agent: false when the
 * kernel refused the Report method (another agent on the port holds
 * it); answers still arrive. */
bool imc_umad_reports(const struct imc_umad *u);

/* Every MAD received goes to fn (replacing an SA client attached with
 * imc_umad_attach()). fn NULL drops received MADs. */
void imc_umad_set_recv(struct imc_umad *u, imc_umad_recv_cb fn, void *arg);

/* Sends one MAD (at most 256 bytes) to *to. Requests carry the agent's
 * TID upper half (the kernel rewrites it). Returns 0 or a negative
 * errno. */
int imc_umad_send(struct imc_umad *u, const struct imc_umad_addr *to,
		  const uint8_t *mad, size_t len);

/* Sends an answer back where a request came from: from's LID and QP,
 * the GSI Q_Key. */
int imc_umad_reply(struct imc_umad *u, const struct imc_umad_addr *from,
		   const uint8_t *mad, size_t len);

/* The LID SA requests go to: the SM's LID by default; another LID (an
 * SA on another port) after this call. 0 restores the SM's LID. */
void imc_umad_set_sa_lid(struct imc_umad *u, uint16_t lid);
uint16_t imc_umad_sa_lid(const struct imc_umad *u);

/* A transport for imc_sa_client_create() that sends to the SA LID. */
void imc_umad_sa_transport(struct imc_umad *u, struct imc_sa_transport *tr);

/* Feeds every MAD received (with its real length) to c, replacing any
 * imc_umad_set_recv() callback; NULL detaches. Detach before destroying
 * c, or close u first. */
void imc_umad_attach(struct imc_umad *u, struct imc_sa_client *c);

struct imc_umad_stats {
	uint64_t sent;
	uint64_t send_errors;
	uint64_t received;
	uint64_t returned;   /* MADs of ours given back with an error status
			      * (e.g. ibsim: no route to the LID) */
	uint64_t dropped;    /* received with no one to take them, or past
			      * the helper thread's queue */
	uint64_t recv_errors;
	uint64_t rx_batches; /* reads that found MADs (wake-ups or polls);
			      * received / rx_batches: MADs per batch */
	bool helper_thread;  /* umad2sim: received through the helper */
};

void imc_umad_get_stats(const struct imc_umad *u, struct imc_umad_stats *st);

#ifdef __cplusplus
}
#endif
#endif
