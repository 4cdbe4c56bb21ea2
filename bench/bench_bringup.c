/* Subnet bring-up cost as a three-level fat tree grows 40-fold.
 *
 * Usage: bench_bringup [PODS...]   (default 2 18 80)
 *
 * Each size is a three-level folded Clos of 36-port leaves and
 * aggregation switches (imc_topo_generate "fat-tree:pods=P,leaves=24,
 * hosts=24,aggs=12,spines=144"): per pod 24 leaves with 24 HCAs and 12
 * uplinks each (2:1, as many clusters are built), 12 aggregation
 * switches with 24 down and 12 up; 144 spines with one port per pod.
 * 2, 18 and 80 pods give 1,152, 10,368 and 46,080 HCAs. 50,000 HCAs do
 * not fit one subnet at LMC 0: HCAs and switches share the 49,151
 * unicast LIDs (IBA 4.1.3), and 80 pods use 49,104 of them. Beyond 36
 * pods the spines need more than 36 ports, and the generator gives every
 * switch that radix.
 *
 * For each phase (topology generation, LID assignment, routing) it
 * measures wall time (CLOCK_MONOTONIC) and the growth of the peak
 * resident set (VmHWM in /proc/self/status). Each size runs in its own
 * child process so that peaks do not carry over between sizes.
 *
 * Expected growth: LID assignment is linear in ports. Routing does one
 * BFS per switch over the switch graph (switches x links) and fills
 * switches x LIDs LFT bytes, so from 10k to 46k HCAs (4.4x switches and
 * LIDs) it grows roughly 20x; memory is dominated by the LFTs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/subnet.h"
#include "ibmcast/topo.h"

struct result {
	unsigned pods;
	uint32_t hcas, switches, cables, lids, max_hops;
	uint64_t routes;
	double sec[3];        /* generate, assign, route */
	long kib[3];          /* VmHWM growth in each */
	long peak;            /* VmHWM at the end */
	int err;
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak resident set in KiB, -1 when /proc is not there. */
static long vm_hwm(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6)) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

static void run(unsigned pods, struct result *r)
{
	struct imc_subnet_stats st;
	struct imc_topo *t = NULL;
	struct imc_subnet *s = NULL;
	char spec[128], err[256] = "";
	double t0;
	long m0;

	memset(r, 0, sizeof(*r));
	r->pods = pods;
	snprintf(spec, sizeof(spec),
		 "fat-tree:pods=%u,leaves=24,hosts=24,aggs=12,spines=144",
		 pods);

	m0 = vm_hwm();
	t0 = seconds();
	r->err = imc_topo_generate(spec, &t, err, sizeof(err));
	r->sec[0] = seconds() - t0;
	r->kib[0] = vm_hwm() - m0;
	if (r->err) {
		fprintf(stderr, "bench_bringup: %s: %s\n", spec, err);
		return;
	}
	imc_topo_counts(t, &r->hcas, &r->switches, &r->cables);

	r->err = imc_subnet_create(t, &s);
	if (r->err)
		goto out;
	m0 = vm_hwm();
	t0 = seconds();
	r->err = imc_subnet_assign_lids(s);
	r->sec[1] = seconds() - t0;
	r->kib[1] = vm_hwm() - m0;
	if (r->err < 0)
		goto out;

	m0 = vm_hwm();
	t0 = seconds();
	r->err = imc_subnet_route(s);
	r->sec[2] = seconds() - t0;
	r->kib[2] = vm_hwm() - m0;
	if (r->err)
		goto out;

	imc_subnet_stats(s, &st);
	r->lids = st.lids;
	r->max_hops = st.max_hops;
	r->routes = st.routes;
	/* Every switch routes every LID. */
	if (st.switches_routed != r->switches ||
	    st.lids != r->hcas + r->switches ||
	    st.routes != (uint64_t)st.lids * st.switches_routed)
		r->err = -1;
out:
	r->peak = vm_hwm();
	imc_subnet_destroy(s);
	imc_topo_destroy(t);
}

/* Runs one size in a child; its result comes back through a pipe. */
static int measure(unsigned pods, struct result *r)
{
	int fd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		run(pods, r);
		n = write(fd[1], r, sizeof(*r));
		_exit(n == (ssize_t)sizeof(*r) ? 0 : 1);
	}
	close(fd[1]);
	n = read(fd[0], r, sizeof(*r));
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || n != (ssize_t)sizeof(*r))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned dflt[] = { 2, 18, 80 };
	struct result res[16];
	unsigned n = 0;
	int fail = 0;

	if (argc > 1) {
		for (int i = 1; i < argc && n < 16; i++) {
			long v = strtol(argv[i], NULL, 10);

			if (v < 1 || v > 254) {
				fprintf(stderr, "usage: bench_bringup "
					"[PODS...] (1..254 each)\n");
				return 2;
			}
			res[n++].pods = (unsigned)v;
		}
	} else {
		for (; n < 3; n++)
			res[n].pods = dflt[n];
	}

	printf("%6s %7s %6s %7s %7s | %9s %8s | %9s %8s | %9s %8s | %8s\n",
	       "pods", "HCAs", "sws", "cables", "LIDs", "gen s", "gen MiB",
	       "lids s", "lids MiB", "route s", "rt MiB", "peak MiB");
	for (unsigned i = 0; i < n; i++) {
		struct result *r = &res[i];

		if (measure(r->pods, r) || r->err) {
			printf("%6u failed (%d)\n", r->pods, r->err);
			fail = 1;
			continue;
		}
		printf("%6u %7u %6u %7u %7u | %9.3f %8.1f | %9.3f %8.1f |"
		       " %9.3f %8.1f | %8.1f   max hops %u\n",
		       r->pods, r->hcas, r->switches, r->cables, r->lids,
		       r->sec[0], r->kib[0] / 1024.0, r->sec[1],
		       r->kib[1] / 1024.0, r->sec[2], r->kib[2] / 1024.0,
		       r->peak / 1024.0, r->max_hops);
	}
	if (fail)
		return 1;
	printf("\ngrowth from the previous size:\n");
	printf("%6s %7s %7s | %7s %7s %7s | %9s\n", "pods", "HCAs x",
	       "sw x", "gen x", "lids x", "route x", "rt MiB x");
	for (unsigned i = 1; i < n; i++) {
		const struct result *a = &res[i - 1], *b = &res[i];

		printf("%6u %7.2f %7.2f | %7.2f %7.2f %7.2f | %9.2f\n",
		       b->pods, (double)b->hcas / a->hcas,
		       (double)b->switches / a->switches,
		       b->sec[0] / a->sec[0], b->sec[1] / a->sec[1],
		       b->sec[2] / a->sec[2],
		       a->kib[2] > 0 ? (double)b->kib[2] / a->kib[2] : 0.0);
	}
	return 0;
}
