/* Scenario parser: any text must parse or fail with a message, never
 * crash or leak; what parses must print in a canonical form that parses
 * again and prints the same (the parser and the printer agree). The
 * topology is fixed (fat-tree:leaves=2,hosts=2,spines=2): a topology line
 * is checked but not loaded, so inputs never build huge fabrics or open
 * files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct imc_topo *topo;

static char *print(const struct imc_scenario *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	imc_scenario_print(s, f);
	if (fclose(f))
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_scenario_parse_opts o = { 0 };
	struct imc_scenario *s = NULL, *s2 = NULL;
	char err[512], *out, *out2;
	size_t len, len2;
	int rc;

	if (!topo && imc_topo_generate("fat-tree:leaves=2,hosts=2,spines=2",
				       &topo, err, sizeof(err)))
		abort();
	o.topo = topo;
	err[0] = '\0';
	rc = imc_scenario_parse((const char *)data, size, "fuzz.scn", &o, &s,
				err, sizeof(err));
	if (rc < 0) {
		/* Every error names the file and says something. */
		if (s || strncmp(err, "fuzz.scn", 8) || strlen(err) < 12)
			abort();
		return 0;
	}
	if (rc != 0 || !s)
		abort();
	out = print(s, &len);
	rc = imc_scenario_parse(out, len, "fuzz.scn", &o, &s2, err,
				sizeof(err));
	if (rc) {
		fprintf(stderr, "canonical form does not parse: %s\n%s", err,
			out);
		abort();
	}
	out2 = print(s2, &len2);
	if (len != len2 || memcmp(out, out2, len)) {
		fprintf(stderr, "canonical form changed:\n%s---\n%s", out, out2);
		abort();
	}
	if (imc_scenario_nactions(s) != imc_scenario_nactions(s2) ||
	    imc_scenario_nexpects(s) != imc_scenario_nexpects(s2) ||
	    imc_scenario_seed(s) != imc_scenario_seed(s2) ||
	    imc_scenario_stop(s) != imc_scenario_stop(s2))
		abort();
	free(out);
	free(out2);
	imc_scenario_destroy(s2);
	imc_scenario_destroy(s);
	return 0;
}
