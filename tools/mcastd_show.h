/* `ibmcast mcast show` through ibmcastd: the daemon's clients (pid, uid,
 * command, members) and each port's membership as its tracker holds it
 * at the SA. */
#ifndef IMC_TOOLS_MCASTD_SHOW_H
#define IMC_TOOLS_MCASTD_SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The daemon's socket: opt, else $IBMCAST_SOCKET, else RUN_DIR/
 * ibmcastd.sock when run_dir or $IBMCAST_RUN_DIR names one, else
 * /run/ibmcast/ibmcastd.sock. Returns 0 or -ENAMETOOLONG. */
int imc_mcastd_socket_path(const char *opt, const char *run_dir, char *buf,
			   size_t len);

/* Asks the daemon at path for its view and writes it to f (text, or a
 * JSON object when json) for the port of GUID guid (0: every port).
 * Returns 1 written, 0 no daemon listens there (nothing written), or a
 * negative errno (reported on stderr). */
int imc_mcastd_show_write(FILE *f, const char *path, uint64_t guid,
			  bool json);

#endif
