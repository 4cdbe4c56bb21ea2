/* imc_mad_line_parse on arbitrary text: a parsed line must print back
 * to text that parses to the same vector. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mad.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	char again[2 * IMC_MAD_SIZE + 32];
	struct imc_mad_line v, w;
	int rc, n;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	rc = imc_mad_line_parse(line, &v);
	free(line);
	if (rc < 0 || rc == 0)
		return 0;
	if (rc != 1)
		abort();
	n = snprintf(again, sizeof(again), "%s %u ",
		     v.dir == IMC_MAD_TX ? "tx" : "rx", v.lid);
	for (size_t i = 0; i < IMC_MAD_SIZE; i++)
		n += snprintf(again + n, sizeof(again) - (size_t)n, "%02x", v.mad[i]);
	if (imc_mad_line_parse(again, &w) != 1 || w.dir != v.dir ||
	    w.lid != v.lid || memcmp(w.mad, v.mad, IMC_MAD_SIZE))
		abort();
	return 0;
}
