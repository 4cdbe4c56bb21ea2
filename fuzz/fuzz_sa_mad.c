/* Whole SA MADs: only exactly 256 bytes decode; those re-encode to the
 * same bytes, and every record imc_sa_mad_record() hands out lies inside
 * the data area. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mad.h"
#include "ibmcast/sa_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t o1[IMC_MAD_SIZE], o2[IMC_MAD_SIZE];
	struct imc_sa_mad *a, *b;
	const uint8_t *rec;
	size_t len, step;
	unsigned i;
	int rc;

	a = malloc(sizeof(*a));
	b = malloc(sizeof(*b));
	if (!a || !b)
		abort();
	rc = imc_sa_mad_unpack(a, data, size);
	if (size != IMC_MAD_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		goto out;
	}
	if (rc != IMC_MAD_SIZE || imc_sa_mad_pack(a, o1, sizeof(o1)) != rc ||
	    memcmp(o1, data, IMC_MAD_SIZE))
		abort();
	if (imc_sa_mad_unpack(b, o1, sizeof(o1)) != rc ||
	    imc_sa_mad_pack(b, o2, sizeof(o2)) != rc || memcmp(o1, o2, rc))
		abort();

	step = (size_t)a->sa.attr_offset * 8;
	for (i = 0; imc_sa_mad_record(a, i, &rec, &len) == 0; i++) {
		if (!step || len != step || rec != a->data + i * step ||
		    rec + len > a->data + IMC_SA_DATA_SIZE)
			abort();
	}
	/* Exactly the records that fit are handed out. */
	if (i != (step ? IMC_SA_DATA_SIZE / step : 0))
		abort();
out:
	free(a);
	free(b);
	return 0;
}
