/* BTH unpack -> pack gives back the same 12 bytes (resv8a and resv7 are
 * kept), and unpacking those gives the same fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const struct imc_bth *a, const struct imc_bth *b)
{
	return a->opcode == b->opcode && a->se == b->se &&
	       a->migreq == b->migreq && a->pad_cnt == b->pad_cnt &&
	       a->tver == b->tver && a->pkey == b->pkey &&
	       a->resv8a == b->resv8a && a->dest_qp == b->dest_qp &&
	       a->ack_req == b->ack_req && a->resv7 == b->resv7 &&
	       a->psn == b->psn;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_bth h, h2;
	uint8_t out[IMC_BTH_SIZE];
	int rc = imc_bth_unpack(&h, data, size);

	if (size < IMC_BTH_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_BTH_SIZE)
		abort();
	if (imc_bth_pack(&h, out, sizeof(out)) != IMC_BTH_SIZE ||
	    memcmp(out, data, IMC_BTH_SIZE) != 0)
		abort();
	if (imc_bth_unpack(&h2, out, sizeof(out)) != IMC_BTH_SIZE ||
	    !same(&h, &h2))
		abort();
	if (imc_bth_pack(&h, out, size % IMC_BTH_SIZE) != -ENOSPC)
		abort();
	return 0;
}
