/* ibsim datagrams (src/umad/ibsim.c): a packet unpacks only at exactly
 * 288 bytes, its fields stay in range (LIDs 16 bits, QPNs 24 bits, MAD
 * length 1..256 within the datagram), and packing its MAD back to its
 * DLID and DQP gives a packet that unpacks to the same MAD. Control
 * replies: only 80 bytes with the magic unpack, an error type reads as
 * -EREMOTEIO. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "umad/ibsim_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[IMC_IBSIM_REQ_SIZE];
	struct imc_ibsim_pkt p, q;
	const uint8_t *d = NULL;
	int rc = imc_ibsim_pkt_unpack(&p, data, size);

	if (size != IMC_IBSIM_REQ_SIZE) {
		if (rc != -EBADMSG)
			abort();
	} else {
		if (rc || p.dqp > 0xffffff || p.sqp > 0xffffff || !p.len ||
		    p.len > 256 || p.mad != data + IMC_IBSIM_MAD_OFFSET)
			abort();
		imc_ibsim_pkt_pack(out, p.dlid, p.dqp, p.mad, p.len);
		if (imc_ibsim_pkt_unpack(&q, out, sizeof(out)) ||
		    q.dlid != p.dlid || q.dqp != p.dqp || q.len != p.len ||
		    q.status || q.sqp != 1 || memcmp(q.mad, p.mad, p.len))
			abort();
	}
	rc = imc_ibsim_ctl_unpack(data, size, &d);
	if (size != IMC_IBSIM_CTL_SIZE) {
		if (rc != -EBADMSG)
			abort();
	} else if (rc == 0) {
		if (d != data + 16)
			abort();
	} else if (rc != -EBADMSG && rc != -EREMOTEIO) {
		abort();
	}
	return 0;
}
