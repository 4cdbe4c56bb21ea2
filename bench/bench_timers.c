/* Timer heap cost as the number of live timers grows 1,000-fold.
 *
 * Usage: bench_timers [OPS]   (default 1000000 operations per figure)
 *
 * For each population N (1k, 10k, 100k, 1M live timers on a virtual loop):
 *  arm+cancel  cancel a random live timer and arm it again at a random
 *              deadline: removal from the middle of the heap plus insert;
 *  arm+fire    run_once fires the earliest timer, whose callback re-arms
 *              it at a random later time: pop (full sift-down) plus insert.
 * The population stays at N throughout. CLOCK_MONOTONIC only measures; the
 * loop under test runs on virtual time. Comparisons grow like log2(N), 2x
 * from 1k to 1M; once the heap (16 bytes per timer) and the timers
 * outgrow the caches, each level below the cached top also costs a memory
 * miss, so the 1M figures grow by more than that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ibmcast/loop.h"
#include "ibmcast/rng.h"

struct bt {
	struct imc_timer t;
};

static struct imc_loop *loop;
static struct imc_rng rng;
static imc_time_t spread;

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void refire(struct imc_timer *t)
{
	imc_timer_arm(loop, t, imc_loop_now(loop) + 1 +
			       imc_rng_below(&rng, spread));
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_timers: %s failed (%d)\n", what, err);
	exit(1);
}

static void measure(size_t n, long ops, double *cancel_ns, double *fire_ns)
{
	struct bt *v = calloc(n, sizeof(*v));
	struct imc_loop_stats st;
	long fired;
	double t0;
	int err, ran;

	if (!v)
		die("calloc", 0);
	err = imc_loop_create_virtual(0, &loop);
	if (err)
		die("imc_loop_create_virtual", err);
	imc_rng_seed(&rng, n);
	spread = (imc_time_t)n * 1000;  /* mean spacing 1 us */
	for (size_t i = 0; i < n; i++) {
		imc_timer_init(&v[i].t, refire);
		err = imc_timer_arm(loop, &v[i].t,
				    1 + imc_rng_below(&rng, spread));
		if (err)
			die("imc_timer_arm", err);
	}

	t0 = seconds();
	for (long k = 0; k < ops; k++) {
		struct bt *b = &v[imc_rng_below(&rng, n)];

		imc_timer_cancel(loop, &b->t);
		imc_timer_arm(loop, &b->t, imc_loop_now(loop) + 1 +
					   imc_rng_below(&rng, spread));
	}
	*cancel_ns = (seconds() - t0) * 1e9 / (double)ops;

	t0 = seconds();
	for (fired = 0; fired < ops; fired += ran) {
		ran = imc_loop_run_once(loop);
		if (ran <= 0)
			die("imc_loop_run_once", ran);
	}
	*fire_ns = (seconds() - t0) * 1e9 / (double)fired;
	imc_loop_get_stats(loop, &st);
	if (st.timers_armed != n)
		die("population check", (int)st.timers_armed);

	for (size_t i = 0; i < n; i++)
		imc_timer_cancel(loop, &v[i].t);
	if (imc_loop_destroy(loop) != 0)
		die("imc_loop_destroy", -1);
	free(v);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1000, 10000, 100000, 1000000 };
	double cancel[4], fire[4];
	long ops = argc > 1 ? atol(argv[1]) : 1000000;

	if (ops <= 0) {
		fprintf(stderr, "usage: bench_timers [OPS]\n");
		return 2;
	}
	/* Warm up allocator and caches. */
	measure(1000, ops / 10 + 1, &cancel[0], &fire[0]);

	printf("%12s %18s %18s\n", "live timers", "arm+cancel ns/op",
	       "arm+fire ns/op");
	for (size_t i = 0; i < 4; i++) {
		measure(sizes[i], ops, &cancel[i], &fire[i]);
		printf("%12zu %18.1f %18.1f\n", sizes[i], cancel[i], fire[i]);
	}
	printf("%12s %18.2f %18.2f   (log2 1M / log2 1k = 2.00)\n",
	       "1M/1k ratio", cancel[3] / cancel[0], fire[3] / fire[0]);
	return 0;
}
