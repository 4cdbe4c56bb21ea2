/* GRH unpack -> pack gives back the same 40 bytes, and unpacking those
 * gives the same fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const struct imc_grh *a, const struct imc_grh *b)
{
	return a->ipver == b->ipver && a->tclass == b->tclass &&
	       a->flow_label == b->flow_label && a->pay_len == b->pay_len &&
	       a->next_hdr == b->next_hdr && a->hop_limit == b->hop_limit &&
	       !memcmp(a->sgid.raw, b->sgid.raw, 16) &&
	       !memcmp(a->dgid.raw, b->dgid.raw, 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_grh h, h2;
	uint8_t out[IMC_GRH_SIZE];
	int rc = imc_grh_unpack(&h, data, size);

	if (size < IMC_GRH_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_GRH_SIZE)
		abort();
	if (h.ipver > 0xf || h.flow_label > 0xfffff)
		abort();
	if (imc_grh_pack(&h, out, sizeof(out)) != IMC_GRH_SIZE ||
	    memcmp(out, data, IMC_GRH_SIZE) != 0)
		abort();
	if (imc_grh_unpack(&h2, out, sizeof(out)) != IMC_GRH_SIZE ||
	    !same(&h, &h2))
		abort();
	if (imc_grh_pack(&h, out, size % IMC_GRH_SIZE) != -ENOSPC)
		abort();
	return 0;
}
