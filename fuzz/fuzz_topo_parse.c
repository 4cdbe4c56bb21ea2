/* imc_topo_parse_string on arbitrary text. A rejected input must come with
 * a "FILE:LINE: " message; an accepted one must be internally consistent
 * (every cable seen from both ends, counts right), write out, parse back
 * to the same topology and write the same bytes again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct imc_topo *t)
{
	uint32_t h, s, c, i, nh = 0, ns = 0, ends = 0;
	unsigned p;

	imc_topo_counts(t, &h, &s, &c);
	for (i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];
		uint32_t j;

		if (imc_topo_find(t, n->name, &j) || j != i)
			abort();
		if (n->type == IMC_NODE_HCA)
			nh++;
		else
			ns++;
		for (p = 1; p <= n->nports; p++) {
			const struct imc_topo_port *x = &n->port[p];

			if (x->peer == IMC_TOPO_NONE)
				continue;
			if (x->peer >= t->nnodes || !x->peer_port ||
			    x->peer_port > t->node[x->peer].nports)
				abort();
			if (t->node[x->peer].port[x->peer_port].peer != i ||
			    t->node[x->peer].port[x->peer_port].peer_port != p ||
			    t->node[x->peer].port[x->peer_port].width !=
			    x->width)
				abort();
			ends++;
		}
	}
	if (nh != h || ns != s || ends != 2 * c || !t->nnodes)
		abort();
	if (t->sm_node != IMC_TOPO_NONE && t->sm_node >= t->nnodes)
		abort();
}

static char *text_of(const struct imc_topo *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (imc_topo_write(t, f))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_topo *t, *u;
	char err[512], *text, *s1, *s2;
	int rc;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* Includes would read whatever the path names on this machine;
	 * relative names (resolved against the working directory) stay. */
	if (strstr(text, "include") && strchr(text, '/')) {
		free(text);
		return 0;
	}
	rc = imc_topo_parse_string(text, "fuzz", &t, err, sizeof(err));
	free(text);
	if (rc) {
		/* "FILE:LINE: what"; FILE is an included one when the
		 * error is there. */
		if (rc > 0 || t || !strstr(err, ": "))
			abort();
		return 0;
	}
	check(t);
	s1 = text_of(t);
	rc = imc_topo_parse_string(s1, "again", &u, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "written text does not parse: %s\n", err);
		abort();
	}
	if (imc_topo_compare(t, u, err, sizeof(err))) {
		fprintf(stderr, "round trip differs: %s\n", err);
		abort();
	}
	s2 = text_of(u);
	if (strcmp(s1, s2))
		abort();
	free(s1);
	free(s2);
	imc_topo_destroy(t);
	imc_topo_destroy(u);
	return 0;
}
