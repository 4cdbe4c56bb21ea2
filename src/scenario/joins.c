/* How long the run's joins took: every join tracker a verb creates
 * (IPoIB interfaces' ports, applications' ports) is watched
 * (imc_mcast_set_observer()), and the report's "joins" section gives the
 * latency percentiles of the join requests (imc_mcast_join() to the
 * JOINED callback) and of the re-joins after port events, in loop time.
 *
 * Percentiles are nearest-rank over every sample of the run (sorted once,
 * at the report): exact, not estimated; the samples of a run are a few
 * per join.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mcast.h"
#include "scenario/scn.h"
#include "util/vec.h"

static const char run_key;   /* imc_scn_data key of struct joins */

struct samples {
	imc_time_t *v;
	size_t n, cap;
};

struct joins {
	struct samples first, rejoin;
	uint64_t first_failed, rejoin_failed;
	uint64_t trackers;
	bool nomem;              /* a sample was lost: the report says so */
};

static void add(struct joins *j, struct samples *s, imc_time_t v)
{
	if (IMC_VEC_RESERVE(&s->v, &s->cap, s->n + 1))
		j->nomem = true;
	else
		s->v[s->n++] = v;
}

static void on_done(void *ctx, const struct imc_mcast_member *m,
		    const struct imc_mcast_event *ev, bool first,
		    imc_time_t elapsed)
{
	struct joins *j = ctx;

	(void)m;
	if (ev->type == IMC_MCAST_EV_JOINED)
		add(j, first ? &j->first : &j->rejoin, elapsed);
	else if (first)
		j->first_failed++;
	else
		j->rejoin_failed++;
}

static void joins_free(void *data)
{
	struct joins *j = data;

	free(j->first.v);
	free(j->rejoin.v);
	free(j);
}

int scn_joins_watch(struct imc_scn_ctx *c, struct imc_mcast *t)
{
	struct joins *j = imc_scn_data(c, &run_key);
	struct imc_mcast_observer o;
	int rc;

	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j)
			return -ENOMEM;
		rc = imc_scn_data_set(c, &run_key, j, joins_free);
		if (rc) {
			free(j);
			return rc;
		}
	}
	o.done = on_done;
	o.ctx = j;
	imc_mcast_set_observer(t, &o);
	j->trackers++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The section */

static int cmp_time(const void *a, const void *b)
{
	imc_time_t x = *(const imc_time_t *)a, y = *(const imc_time_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank (the smallest sample with at least p% of the samples at
 * or below it); s sorted and not empty. */
static imc_time_t pct(const struct samples *s, unsigned p)
{
	size_t rank = (s->n * p + 99) / 100;

	return s->v[rank ? rank - 1 : 0];
}

/* A duration for people: three significant digits, "850ns", "46.1us",
 * "1.25ms", "2.00s". */
static void dur(imc_time_t t, char *buf, size_t len)
{
	static const struct { imc_time_t div; const char *unit; } u[] = {
		{ IMC_NSEC_PER_SEC, "s" }, { IMC_NSEC_PER_MSEC, "ms" },
		{ IMC_NSEC_PER_USEC, "us" },
	};

	for (unsigned i = 0; i < IMC_ARRAY_SIZE(u); i++) {
		double v = (double)t / (double)u[i].div;

		if (t < u[i].div)
			continue;
		snprintf(buf, len, "%.*f%s", v < 10 ? 2 : v < 100 ? 1 : 0, v,
			 u[i].unit);
		return;
	}
	snprintf(buf, len, "%" PRIu64 "ns", t);
}

/* The object key: counts and percentiles in ns; with what, a text line
 * too. */
static void latency(struct imc_scn_report *rep, const char *key,
		    const char *what, struct samples *s, uint64_t failed)
{
	static const unsigned ps[] = { 50, 90, 99, 100 };
	static const char *const names[] = { "p50_ns", "p90_ns", "p99_ns",
					     "max_ns" };
	char d[4][24];

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_time);
	imc_scn_report_object(rep, key);
	imc_scn_report_u64(rep, "joined", s->n);
	imc_scn_report_u64(rep, "failed", failed);
	for (unsigned i = 0; s->n && i < IMC_ARRAY_SIZE(ps); i++) {
		imc_scn_report_u64(rep, names[i], pct(s, ps[i]));
		dur(pct(s, ps[i]), d[i], sizeof(d[i]));
	}
	imc_scn_report_end(rep);
	if (what && !s->n)
		imc_scn_report_line(rep, "%-9s none joined, %" PRIu64 " failed",
				    what, failed);
	else if (what)
		imc_scn_report_line(rep,
			"%-9s %zu joined, %" PRIu64 " failed; latency p50 %s  p90 %s  p99 %s  max %s",
			what, s->n, failed, d[0], d[1], d[2], d[3]);
}

static int joins_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	struct joins *j = imc_scn_data(c, &run_key);

	if (!j)
		return 0;
	if (j->nomem)
		return -ENOMEM;
	imc_scn_report_u64(rep, "trackers", j->trackers);
	latency(rep, "first", "requests", &j->first, j->first_failed);
	latency(rep, "rejoin", j->rejoin.n || j->rejoin_failed ? "re-joins" :
			       NULL, &j->rejoin, j->rejoin_failed);
	return 0;
}

const struct imc_scn_section scn_section_joins = {
	.name = "joins", .rank = 200, .report = joins_report,
};
