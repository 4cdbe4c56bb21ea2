/* ibsim's client protocol: the names of its sockets and the sizes of its
 * messages (ibsim/sim.h), shared by the
 * umad transport's IMC_UMAD_IBSIM backend, which connects to them as a
 * client, and the fabric's ibsim protocol server (simserve.h), which
 * listens on them. ibsim names each socket in the abstract namespace
 * "<base>:<what><num>", base being $IBSIM_SOCKNAME or "sim".
 */
#ifndef IBMCAST_IBSIM_H
#define IBMCAST_IBSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layouts of ibsim 0.10's messages (ibsim/sim.h): struct sim_request
 * (a packet) and struct sim_ctl (a control message). */
enum {
	IMC_IBSIM_REQ_SIZE = 288,    /* sizeof(struct sim_request) */
	IMC_IBSIM_MAD_OFFSET = 32,
	IMC_IBSIM_CTL_SIZE = 80,     /* sizeof(struct sim_ctl) */
	IMC_IBSIM_CTL_DATA = 64,
	/* struct sim_ctl: magic, clientid, type, len, data */
	IMC_IBSIM_CTL_OFF_CLIENT = 4,
	IMC_IBSIM_CTL_OFF_TYPE = 8,
	IMC_IBSIM_CTL_OFF_LEN = 12,
	IMC_IBSIM_CTL_OFF_DATA = 16,
	IMC_IBSIM_NODEID_LEN = 32,
	IMC_IBSIM_STATUS_NO_ROUTE = 110,
};

/* Control message types of ibsim 0.10 (enum SIM_CTL_TYPES). */
enum imc_ibsim_ctl_type {
	IMC_IBSIM_CTL_ERROR = 0,
	IMC_IBSIM_CTL_CONNECT = 1,
	IMC_IBSIM_CTL_DISCONNECT = 2,
	IMC_IBSIM_CTL_GET_PORT = 3,
	IMC_IBSIM_CTL_GET_VENDOR = 4,
	IMC_IBSIM_CTL_GET_GID = 5,
	IMC_IBSIM_CTL_GET_GUID = 6,
	IMC_IBSIM_CTL_GET_NODEINFO = 7,
	IMC_IBSIM_CTL_GET_PORTINFO = 8,
	IMC_IBSIM_CTL_SET_ISSM = 9,
	IMC_IBSIM_CTL_GET_PKEYS = 10,
};

#define IMC_IBSIM_MAGIC 0xdeadbeefu

/* One struct sim_request as its fields mean it (host order). */
struct imc_ibsim_pkt {
	uint16_t dlid;
	uint16_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status;
	size_t len;                  /* MAD bytes, at most 256 */
	const uint8_t *mad;
};

/* Writes p as a struct sim_request: the header words in the host's
 * order holding network-order values (LIDs as 16-bit numbers), the MAD
 * length as a 64-bit big-endian number and the MAD zero-padded to 256
 * bytes (p->len above 256 counts as 256). The client (below) and the
 * fabric's server (simserve.h) both write packets through it. */
void imc_ibsim_pkt_write(uint8_t out[IMC_IBSIM_REQ_SIZE],
			 const struct imc_ibsim_pkt *p);

/* Packs a packet from a client: slid 0 (ibsim fills in the port's
 * LID; 0xFFFF for a permissive DLID), sqp 1, status 0; the MAD is
 * zero-padded to 256 bytes. len must be 1..256. */
void imc_ibsim_pkt_pack(uint8_t out[IMC_IBSIM_REQ_SIZE], uint16_t dlid,
			uint32_t dqp, const uint8_t *mad, size_t len);

/* Unpacks a received datagram of n bytes; p->mad points into buf. A MAD
 * length of 0 or above 256 reads as 256 (ibsim's own packets leave it
 * unset). Returns 0, or -EBADMSG for a datagram of the wrong size. */
int imc_ibsim_pkt_unpack(struct imc_ibsim_pkt *p, const uint8_t *buf,
			 size_t n);

struct sockaddr_un;

/* The abstract socket address "<base>:<what><num>" (num < 0: no number,
 * as "ctl") with its trailing NUL counted, as ibsim names its sockets.
 * Returns the address length, or -ENAMETOOLONG. */
int imc_ibsim_sockaddr(struct sockaddr_un *a, const char *base,
		       const char *what, long num);

/* Binds fd to (bind_it) or connects it to the socket that
 * imc_ibsim_sockaddr() names. Returns 0 or -errno. */
int imc_ibsim_name_op(int fd, bool bind_it, const char *base,
		      const char *what, long num);

#ifdef __cplusplus
}
#endif
#endif
