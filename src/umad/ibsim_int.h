/* ibsim's own client protocol, spoken directly (the transport behind
 * IMC_UMAD_IBSIM in ibmcast/umad.h).
 *
 * ibsim (the fabric simulator of linux-rdma/ibsim, 0.10) serves its
 * clients on AF_UNIX datagram sockets in the abstract namespace, named
 * from IBSIM_SOCKNAME (default "sim"):
 *   "<name>:ctl"        ibsim's control socket; a client binds its own
 *                       "<name>:ctl<id>" and exchanges struct sim_ctl
 *                       requests and replies (80 bytes) with it;
 *   "<name>:in<id>"     the client's packet socket, which ibsim connects
 *                       to while it handles the client's CONNECT;
 *   "<name>:out<N>"     ibsim's packet socket for client slot N (the
 *                       CONNECT reply); the client connects its packet
 *                       socket there.
 * Every name carries one trailing NUL in its length. Each packet is one
 * struct sim_request datagram of 288 bytes: five 32-bit words in the
 * host's order holding network-order values (DLID and SLID as 16-bit
 * network-order numbers), four bytes of padding, a 64-bit big-endian
 * MAD length and the 256-byte MAD. ibsim puts the client slot in TID
 * bits 48-63 of every request it relays and routes a response by them;
 * requests addressed to QP0/QP1 of a node go to the first client there
 * that registered with IsSM. A MAD it could not route comes back to its
 * sender with status 110 (ETIMEDOUT).
 *
 * This is what umad2sim (ibsim's LD_PRELOAD shim for libibumad) does
 * underneath; talking to the socket directly leaves out umad2sim's
 * receiver thread and the hand-over to the caller's thread, and gives a
 * descriptor that epoll can watch.
 */
#ifndef IMC_IBSIM_INT_H
#define IMC_IBSIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/ibsim.h"
#include "ibmcast/umad.h"

/* Sizes, control message types and the magic: ibmcast/ibsim.h. */

/* struct imc_ibsim_pkt and its codec: ibmcast/ibsim.h. */

/* Packs a control message; data (len bytes, at most 64) is copied. */
void imc_ibsim_ctl_pack(uint8_t out[IMC_IBSIM_CTL_SIZE], uint32_t client,
			uint32_t type, const void *data, size_t len);

/* Checks a control reply: returns 0 and points *data at its 64 data
 * bytes, -EBADMSG (size or magic), or -EREMOTEIO (ibsim answered
 * SIM_CTL_ERROR). */
int imc_ibsim_ctl_unpack(const uint8_t *buf, size_t n, const uint8_t **data);

/* imc_ibsim_sockaddr(), imc_ibsim_name_op(): ibmcast/ibsim.h. */

/* A connection to ibsim as one client. */
struct imc_ibsim;

struct imc_ibsim_config {
	const char *sockname;        /* NULL: IBSIM_SOCKNAME, else "sim" */
	const char *node;            /* NULL: SIM_HOST, else ibsim's default */
	bool issm;                   /* take requests for QP0/QP1, set IsSM */
};

/* Connects, reads the port's NodeInfo and PortInfo into *port, and sets
 * IsSM when asked. Returns 0, -ENODEV (no ibsim, remote mode, unknown
 * node, no free client slot, an SM already on the node), -ENOMEM, or
 * another negative errno. */
int imc_ibsim_open(const struct imc_ibsim_config *cfg,
		   struct imc_umad_port *port, struct imc_ibsim **out);

/* Tells ibsim the client is gone and closes the sockets. */
void imc_ibsim_close(struct imc_ibsim *s);

/* The packet socket (nonblocking reads; epoll can watch it). */
int imc_ibsim_fd(const struct imc_ibsim *s);

/* Receives up to n datagrams into bufs[i] (IMC_IBSIM_REQ_SIZE bytes
 * each), with one system call; lens[i] gets each size. Returns how many
 * (0: none ready) or a negative errno. */
int imc_ibsim_recv(struct imc_ibsim *s, uint8_t (*bufs)[IMC_IBSIM_REQ_SIZE],
		   size_t *lens, unsigned n);

/* Sends n packed datagrams with one system call (blocking as ibsim's
 * queue allows). Returns how many were sent or a negative errno. */
int imc_ibsim_send(struct imc_ibsim *s,
		   const uint8_t (*bufs)[IMC_IBSIM_REQ_SIZE], unsigned n);

#endif
