/* Pure helpers of the libibumad transport, shared with its unit tests. */
#ifndef IMC_UMAD_INT_H
#define IMC_UMAD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ibmcast/umad.h"

/* The method mask (bit m of word m / 32 for method m) of the SA class
 * agent of a mode: Report for a client, the SA request methods for a
 * server. */
void imc_umad_method_mask(enum imc_umad_mode mode, uint32_t mask[4]);

/* timeout_ms to give umad_send() for this MAD: requests that expect an
 * answer stay outstanding in the kernel so that it can route the answer
 * back; answers and RMPP ACK/STOP/ABORT get 0. */
unsigned imc_umad_send_timeout(const uint8_t *mad, size_t len);

/* An address from the network-order fields of libibumad's ib_mad_addr. */
void imc_umad_addr_from_raw(struct imc_umad_addr *a, uint16_t lid_be,
			    uint32_t qpn_be, uint32_t qkey_be, uint8_t sl,
			    uint16_t pkey_index);

/* Reads a local port through libibumad (umad_get_port) into *p, the GID
 * in network order as libibumad keeps it. Returns 0 or -ENODEV. */
int imc_umad_port_read(const char *device, unsigned port,
		       struct imc_umad_port *p);

#endif
