/* The listing parser of the `ibmcast join` control socket
 * (src/umad/mcast_ctl.c) on arbitrary text: it never reads past the input;
 * an accepted listing has every field within its bits and as many groups
 * as "group" lines, and parses the same way twice; a rejected one leaves
 * nothing allocated. */
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mcast_ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_ctl_listing a, b;
	char *text = malloc(size + 1);
	size_t lines = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (imc_ctl_parse(text, &a) < 0) {
		if (a.groups || a.n)
			abort();
		free(text);
		return 0;
	}
	for (const char *p = text; (p = strstr(p, "group ")); p++)
		lines++;
	if (a.n > lines)
		abort();
	for (size_t i = 0; i < a.n; i++) {
		const struct imc_ctl_group *g = &a.groups[i];

		if (g->join_state > 0xf || g->wanted > 0xf ||
		    g->rec.sl > 0xf || g->rec.mtu > 0x3f || g->rec.rate > 0x3f ||
		    g->rec.flow_label > 0xfffff || g->rec.scope > 0xf)
			abort();
	}
	if (imc_ctl_parse(text, &b) < 0 || b.n != a.n || b.pid != a.pid ||
	    strcmp(a.device, b.device) ||
	    (a.n && memcmp(a.groups, b.groups, a.n * sizeof(*a.groups))))
		abort();
	imc_ctl_listing_free(&a);
	imc_ctl_listing_free(&b);
	free(text);
	return 0;
}
