/* ibmcastd's policy parser on arbitrary text. A rejected input must come
 * with a "FILE:LINE: " message; an accepted one must print in the file's
 * syntax, parse back, and print the same bytes again. Names resolve
 * through a fixed table (no system database in a fuzz run). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mcastd_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lookup(void *ctx, const char *name, uint32_t *id)
{
	if (!strcmp(name, "root") || !strcmp(name, "wheel")) {
		*id = 0;
		return 0;
	}
	if (!strcmp(name, "ibmcast")) {
		*id = 1234;
		return 0;
	}
	return -ENOENT;
}

static const struct imc_mcastd_policy_resolver names = {
	.user = lookup, .group = lookup,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_mcastd_policy *p = NULL, *p2 = NULL;
	struct imc_mcastd_policy_query q = { .join_state = 1 };
	struct imc_mcastd_policy_peer peer = { .uid = 1000, .gid = 1234 };
	char err[256], *a, *b;
	size_t la, lb;
	unsigned line;
	int r;

	r = imc_mcastd_policy_parse((const char *)data, size, "f", &names, &p,
				    err, sizeof(err));
	if (r) {
		if (r != -EINVAL && r != -EFBIG && r != -ENOMEM)
			abort();
		if (r == -EINVAL && strncmp(err, "f:", 2))
			abort();
		return 0;
	}
	q.mgid.raw[0] = 0xff;
	q.mgid.raw[1] = 0x12;
	r = imc_mcastd_policy_check(p, &peer, &q, &line);
	if ((r && r != -EACCES) || (!r && !line))
		abort();
	if (imc_mcastd_policy_print(p, &a, &la))
		abort();
	if (imc_mcastd_policy_parse(a, la, "printed", &names, &p2, err,
				    sizeof(err)))
		abort();
	if (imc_mcastd_policy_print(p2, &b, &lb))
		abort();
	if (la != lb || memcmp(a, b, la) ||
	    imc_mcastd_policy_rules(p) != imc_mcastd_policy_rules(p2))
		abort();
	free(a);
	free(b);
	imc_mcastd_policy_destroy(p);
	imc_mcastd_policy_destroy(p2);
	return 0;
}
