/* DETH unpack -> pack gives back the same 8 bytes, and unpacking those
 * gives the same fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_deth h, h2;
	uint8_t out[IMC_DETH_SIZE];
	int rc = imc_deth_unpack(&h, data, size);

	if (size < IMC_DETH_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_DETH_SIZE)
		abort();
	if (imc_deth_pack(&h, out, sizeof(out)) != IMC_DETH_SIZE ||
	    memcmp(out, data, IMC_DETH_SIZE) != 0)
		abort();
	if (imc_deth_unpack(&h2, out, sizeof(out)) != IMC_DETH_SIZE ||
	    h.qkey != h2.qkey || h.resv8 != h2.resv8 || h.src_qp != h2.src_qp)
		abort();
	if (imc_deth_pack(&h, out, size % IMC_DETH_SIZE) != -ENOSPC)
		abort();
	return 0;
}
