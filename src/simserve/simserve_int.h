/* Internals of the ibsim-protocol server (ibmcast/simserve.h).
 *
 * simserve.c   sockets, client table, packet queues, flow control
 * ctl.c        the control messages (struct sim_ctl)
 * agent.c      the fabric side: MAD agents, node attributes
 */
#ifndef IMC_SIMSERVE_INT_H
#define IMC_SIMSERVE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/un.h>

#include "ibmcast/simserve.h"
#include "ibmcast/ibsim.h"

/* ibsim's messages (struct sim_request, struct sim_ctl) are words in
 * the host's order, as ibsim and umad2sim write them; no alignment. */
static inline uint32_t ss_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline void ss_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Client states; set only through client_set_state() (simserve.c):
 *
 *   FREE --connect--> ATTACHED --disconnect/dead--> FREE
 */
enum ss_client_state {
	SS_CLIENT_FREE,
	SS_CLIENT_ATTACHED,
};

struct ss_agent;

struct ss_client {
	struct imc_simserve *s;
	enum ss_client_state state;
	uint32_t slot;
	uint32_t id;                 /* the client's id (umad2sim: its pid) */
	uint32_t qp;                 /* extra QP it takes (ibsim: 0) */
	bool issm;
	uint32_t node;
	unsigned port;               /* CA: its first port; switch: 0 */
	struct sockaddr_un ctl_addr; /* who may send control messages */
	socklen_t ctl_len;
	int fd;                      /* "<base>:out<slot>" */
	struct imc_fd_watch w;
	unsigned watch_ev;
	/* Packets waiting for the socket, a ring of qcap entries. */
	uint8_t (*q)[IMC_IBSIM_REQ_SIZE];
	size_t qhead, qlen, qcap;
	struct ss_agent *agent;       /* its MAD agent at the port */
	struct ss_client *node_next;  /* clients of the same node */
};

/* The clients of one node. */
struct ss_node {
	struct ss_client *clients;
};

struct imc_simserve {
	struct imc_fabric *f;
	struct imc_loop *loop;
	const struct imc_topo *topo;
	char base[80];
	int ctl;
	struct imc_fd_watch ctl_w;
	struct ss_client **cl;        /* by slot */
	uint32_t ncl;                 /* slots ever handed out */
	uint32_t clcap;
	uint32_t *free_slots;
	uint32_t nfree;
	struct ss_node **nodes;       /* by node index, NULL until used */
	uint64_t *guid_keys;          /* sorted GUIDs ... */
	uint32_t *guid_nodes;         /* ... and their nodes */
	uint32_t nguids;
	uint32_t default_node;
	size_t queue_limit, high_water;
	FILE *log;
	bool paused;
	struct imc_timer stall;
	struct imc_simserve_stats st;
};

/* ---- simserve.c ---- */
struct ss_client *ss_client_get(struct imc_simserve *s, uint32_t slot);
int ss_client_attach(struct imc_simserve *s, uint32_t id, uint32_t node,
		     uint32_t qp, bool issm, const struct sockaddr_un *from,
		     socklen_t fromlen, struct ss_client **out);
void ss_client_detach(struct ss_client *c);
/* One datagram of len bytes that c sent (pkt is modified: the slot goes
 * into the TID of a request): into the fabric, or back with status 110. */
void ss_client_input(struct ss_client *c, uint8_t *pkt, size_t len);
/* Queues one packed struct sim_request for c and sends what the socket
 * takes. */
void ss_client_queue(struct ss_client *c, const uint8_t *pkt);
/* Whether a live client other than self is the SM of node. A client
 * whose packet socket is gone (a killed process: no DISCONNECT came) is
 * detached on the way. */
bool ss_node_sm_busy(struct imc_simserve *s, uint32_t node,
		     const struct ss_client *self);
int ss_node_lookup(const struct imc_simserve *s, const char *nodeid,
		   uint32_t *node);

/* ---- ctl.c ---- */
/* Handles one control message in place (buf: IMC_IBSIM_CTL_SIZE bytes)
 * and returns true when it is to be answered. */
bool ss_ctl_handle(struct imc_simserve *s, uint8_t *buf,
		   const struct sockaddr_un *from, socklen_t fromlen);

/* ---- agent.c ---- */
/* c's MAD agent at its port: responses whose TID carries c's slot in bits
 * 48-63 come to it, and, once it is the SM (ss_set_issm), the requests
 * for the port's SM. */
int ss_agent_open(struct imc_simserve *s, struct ss_client *c);
void ss_agent_close(struct ss_client *c);
/* Sends the packet c wrote (buf, IMC_IBSIM_REQ_SIZE bytes, TID already
 * carrying the slot) into the fabric. Returns 0, or a negative errno
 * when it cannot be sent at all (it then goes back with status 110). */
int ss_agent_send(struct ss_client *c, uint8_t *buf);
/* The attribute bytes (64) the node's SMA would answer. */
int ss_node_info(struct imc_simserve *s, uint32_t node, unsigned port,
		 uint8_t out[64]);
int ss_port_info(struct imc_simserve *s, uint32_t node, unsigned port,
		 uint8_t out[64]);
int ss_pkeys(struct imc_simserve *s, uint32_t node, unsigned port,
	     uint8_t out[64]);
/* PortInfo:CapabilityMask.IsSM of c's port, and c as the port's SM. */
int ss_set_issm(struct ss_client *c, bool issm);

#endif
