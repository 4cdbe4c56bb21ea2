/* Scenario parsing cost against its length: 1,000, 10,000 and 100,000
 * lines of a mix of the verbs (unicast sends, link changes, sa-join
 * creates named with as= and joins naming them with @, mcast-join
 * members named with as= and subjects naming them, expectations).
 *
 * Usage: bench_parse [MAX_LINES]   (default 100000)
 *
 * Prints lines per second for each size and the ratio of the time per
 * line of the largest size to that of the smallest: about 1 when parsing
 * is linear in the number of lines, about 100 when it is quadratic.
 * CLOCK_MONOTONIC measures the parse alone, text already in memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/scenario.h"

static char *text_make(unsigned lines, size_t *len)
{
	size_t cap = (size_t)lines * 96 + 256, n = 0;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	n += (size_t)snprintf(t + n, cap - n,
			      "topology fat-tree:leaves=8,hosts=8,spines=4\n"
			      "seed 1\nstop 1000s\nsa\nmcast-tracker\n");
	for (unsigned i = 0; i < lines; i++) {
		unsigned h = 1 + i % 64, k = i / 8;

		switch (i % 8) {
		case 0:
			n += (size_t)snprintf(t + n, cap - n,
				"at %uus send H-%06u H-%06u count=1\n", i,
				h, 1 + (h % 64));
			break;
		case 1:
			n += (size_t)snprintf(t + n, cap - n,
				"sa-join H-%06u 0 create as=g%u\n", h, k);
			break;
		case 2:
			n += (size_t)snprintf(t + n, cap - n,
				"sa-join H-%06u @g%u\n", h, k);
			break;
		case 3:
			n += (size_t)snprintf(t + n, cap - n,
				"mcast-join H-%06u ff15::%x as=m%u\n", h,
				1 + k % 4096, k);
			break;
		case 4:
			n += (size_t)snprintf(t + n, cap - n,
				"expect mcast-state m%u == joined\n", k);
			break;
		case 5:
			n += (size_t)snprintf(t + n, cap - n,
				"link down S-0001:%u\n", 1 + i % 8);
			break;
		case 6:
			n += (size_t)snprintf(t + n, cap - n,
				"expect delivered H-%06u >= 0\n", h);
			break;
		default:
			n += (size_t)snprintf(t + n, cap - n,
				"expect sa-status H-%06u @g%u == success\n",
				h, k);
			break;
		}
	}
	*len = n;
	return t;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds per line, or a negative value on a parse error. */
static double run(unsigned lines)
{
	struct imc_scenario *s;
	char err[512];
	size_t len;
	char *t = text_make(lines, &len);
	double t0, t1;
	int rc;

	if (!t)
		return -1;
	t0 = now();
	rc = imc_scenario_parse(t, len, "bench.scn", NULL, &s, err,
				sizeof(err));
	t1 = now();
	free(t);
	if (rc) {
		fprintf(stderr, "bench_parse: %u lines: %s\n", lines, err);
		return -1;
	}
	imc_scenario_destroy(s);
	printf("%9u lines  %8.3f s  %12.0f lines/s\n", lines, t1 - t0,
	       lines / (t1 - t0));
	return (t1 - t0) / lines;
}

int main(int argc, char **argv)
{
	unsigned max = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) :
		       100000;
	double first = 0, last = 0;

	if (max < 1000) {
		fprintf(stderr, "usage: bench_parse [MAX_LINES >= 1000]\n");
		return 2;
	}
	for (unsigned n = 1000; n <= max; n *= 10) {
		double per = run(n);

		if (per < 0)
			return 1;
		if (!first)
			first = per;
		last = per;
	}
	printf("time per line, largest / smallest: %.2f\n", last / first);
	return 0;
}
