/* LRH unpack -> pack gives back the same 8 bytes (reserved bits are kept),
 * and unpacking those gives the same fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const struct imc_lrh *a, const struct imc_lrh *b)
{
	return a->vl == b->vl && a->lver == b->lver && a->sl == b->sl &&
	       a->resv2 == b->resv2 && a->lnh == b->lnh && a->dlid == b->dlid &&
	       a->resv5 == b->resv5 && a->pkt_len == b->pkt_len &&
	       a->slid == b->slid;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_lrh h, h2;
	uint8_t out[IMC_LRH_SIZE];
	int rc = imc_lrh_unpack(&h, data, size);

	if (size < IMC_LRH_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_LRH_SIZE)
		abort();
	if (imc_lrh_pack(&h, out, sizeof(out)) != IMC_LRH_SIZE ||
	    memcmp(out, data, IMC_LRH_SIZE) != 0)
		abort();
	if (imc_lrh_unpack(&h2, out, sizeof(out)) != IMC_LRH_SIZE ||
	    !same(&h, &h2))
		abort();
	if (imc_lrh_pack(&h, out, size % IMC_LRH_SIZE) != -ENOSPC)
		abort();
	return 0;
}
