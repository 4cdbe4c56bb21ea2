/* Names of ibsim's sockets (ibsim/sim.h's client protocol), shared by the
 * umad transport's IMC_UMAD_IBSIM backend, which connects to them as a
 * client, and the fabric's ibsim protocol server (simserve.h), which
 * listens on them. ibsim names each socket in the abstract namespace
 * "<base>:<what><num>", base being $IBSIM_SOCKNAME or "sim".
 */
#ifndef IBMCAST_IBSIM_H
#define IBMCAST_IBSIM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

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
