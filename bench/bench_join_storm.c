/* The join storm: every port of a large subnet re-joins its groups at once.
 *
 * 10,000 HCA ports of a simulated fat tree (fat-tree:pods=18,leaves=32,
 * hosts=18,aggs=18,spines=324: 10,368 HCAs, 1,224 switches), each with a
 * join tracker (include/ibmcast/mcast.h, on the fabric through
 * mcast_fabric.h) whose port is a FullMember of 3 groups. The SA on the
 * SM's port serves 40,000 requests/s from a queue of 1,000 (imc_sa_config
 * service_rate, queue_max): a request that finds the queue full is dropped.
 * The SA then restarts, empty, and the SM reregisters every port at once
 * (IBA 14.4.11), as a new SM does: every tracker re-joins its 3 groups.
 *
 * Measured, in virtual time from the reregister: when 50%, 90%, 99% and
 * all of the 30,000 memberships are back at the SA (imc_sa_get_stats()
 * members, read every millisecond, and every member told JOINED again),
 * the requests the ports sent (first sends and retries), those the SA
 * dropped with its queue full (the MADs lost), the SA's deepest queue, the
 * requests that used up their retries and the members that failed for it
 * (their memberships never come back). Once with the tracker's PACED
 * policy (each group after a random delay below rejoin_spread, at most
 * rejoin_window re-joins of a port in flight) and once with IMMEDIATE
 * (every group at once, as Linux consumers do), each in a world built
 * afresh. The ports' SA clients have the defaults (imc_sa_client_config:
 * 200 ms first timeout, doubling, 3 retries, 25% jitter).
 *
 * Before the storm the ports join at 30,000 requests/s, under the SA's
 * rate, so that nothing is lost: that is set-up, not measured.
 *
 * Usage: bench_join_storm [--ports N] [--groups G] [--rate R] [--queue Q]
 *                         [--policy paced|immediate|both]
 *                         [--spread TIME_NS] [--window W] [--seed S]
 *                         [--sa-dead TIME] [--grid]
 * --sa-dead: for TIME after the reregister the SA answers nothing (no SA
 * on the SM's port; the requests sent then are lost and counted in lost),
 * as OpenSM's SA during a new SM's first sweep; TIME in ns, or with a
 * suffix ns, us, ms or s (250ms, 37s). Default 0.
 * --grid runs PACED over a grid of spreads and windows (the study behind
 * the defaults). Wall time is measured with CLOCK_MONOTONIC by this
 * program only; the simulation runs on a virtual loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/fabric.h"
#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/topo.h"

#define MS IMC_NSEC_PER_MSEC
#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define MAXG 128
#define POLL (1 * MS)
#define GIVE_UP (600 * IMC_NSEC_PER_SEC)

struct opts {
	unsigned ports, groups;
	uint32_t rate, queue;
	uint64_t seed;
	imc_time_t sa_dead;       /* SA answers nothing this long after */
};

struct policy {
	enum imc_mcast_rejoin rejoin;
	imc_time_t spread;
	unsigned window;
};

struct member {
	struct imc_mcast_member *m;
	bool joined;
};

struct port {
	uint32_t node;
	struct imc_mcast_fabric *mf;
	struct member mem[MAXG];
};

struct result {
	imc_time_t t50, t90, t99, t100;   /* 0: not reached */
	uint64_t sent, resent, dropped, timeouts, failed, rejoins;
	uint32_t queue_max;
	unsigned back;                    /* memberships back at the end */
	double wall;
};

static struct {
	struct opts o;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_sa_fabric *sf;
	struct port *p;
	unsigned np;
	struct imc_gid mgid[MAXG];
	unsigned joined;                  /* members told JOINED, now */
	unsigned failed;
	struct imc_timer poll;
	struct imc_timer dead;            /* end of the SA's dead time */
	uint64_t dead_lost;               /* requests sent while it was dead */
	imc_time_t t0;
	struct result *r;
	unsigned target;
} W;

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_join_storm: %s: %s\n", what, strerror(-err));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	struct member *x = arg;
	bool joined = ev->type == IMC_MCAST_EV_JOINED;

	(void)m;
	if (joined != x->joined)
		W.joined += joined ? 1u : (unsigned)-1;
	x->joined = joined;
	if (ev->type == IMC_MCAST_EV_ERROR)
		W.failed++;
}

static void sa_up(void)
{
	struct imc_sa_fabric_config fc;
	int rc;

	imc_sa_fabric_config_init(&fc);
	fc.sa.service_rate = W.o.rate;
	fc.sa.queue_max = W.o.queue;
	fc.sa.hash_seed = W.o.seed;
	rc = imc_sa_fabric_create(W.f, &fc, &W.sf);
	if (rc)
		die("imc_sa_fabric_create", rc);
}

static const char *spec_for(unsigned ports)
{
	/* One HCA more than the ports: the SM's, where the SA runs. */
	if (ports < 10368)
		return ports < 1152 ?
			"fat-tree:pods=4,leaves=8,hosts=36,aggs=8,spines=16" :
			"fat-tree:pods=18,leaves=32,hosts=18,aggs=18,spines=324";
	return NULL;
}

/* A world with every port a member of every group, nothing in flight. */
static void world_up(const struct policy *pol)
{
	struct imc_fabric_config fc;
	const char *spec = spec_for(W.o.ports);
	imc_time_t step;
	int rc;

	if (!spec) {
		fprintf(stderr, "bench_join_storm: at most 10367 ports\n");
		exit(2);
	}
	rc = imc_topo_generate(spec, &W.t, NULL, 0);
	if (rc)
		die("imc_topo_generate", rc);
	rc = imc_loop_create_virtual(0, &W.loop);
	if (rc)
		die("imc_loop_create_virtual", rc);
	imc_fabric_config_default(&fc);
	fc.seed = W.o.seed;
	rc = imc_fabric_create(W.t, W.loop, &fc, &W.f);
	if (!rc)
		rc = imc_fabric_bring_up(W.f);
	if (!rc)
		rc = imc_loop_run(W.loop);
	if (rc)
		die("fabric", rc);
	sa_up();
	W.p = calloc(W.o.ports, sizeof(*W.p));
	if (!W.p)
		die("calloc", -ENOMEM);
	W.np = 0;
	for (uint32_t n = 0; n < W.t->nnodes && W.np < W.o.ports; n++) {
		struct imc_mcast_fabric_config cfg;
		struct port *p;

		if (W.t->node[n].type != IMC_NODE_HCA || n == W.t->sm_node)
			continue;
		p = &W.p[W.np];
		p->node = n;
		imc_mcast_fabric_config_init(&cfg);
		cfg.mcast.rejoin = pol->rejoin;
		cfg.mcast.rejoin_spread = pol->spread;
		cfg.mcast.rejoin_window = pol->window;
		cfg.mcast.seed = W.o.seed * 1000003 + W.np;
		cfg.client.seed = W.o.seed * 7919 + W.np;
		rc = imc_mcast_fabric_create(W.f, n, 1, NULL, &cfg, &p->mf);
		if (rc)
			die("imc_mcast_fabric_create", rc);
		W.np++;
	}
	if (W.np < W.o.ports)
		die("not enough HCA ports", -ENOSPC);
	for (unsigned g = 0; g < W.o.groups; g++) {
		char s[64];

		snprintf(s, sizeof(s), "ff15:1234:5707::%u", g + 1);
		if (imc_gid_parse(s, &W.mgid[g]))
			die("MGID", -EINVAL);
	}
	/* Set-up: the ports join at 3/4 of the SA's rate. */
	step = W.o.rate ? (imc_time_t)IMC_NSEC_PER_SEC * W.o.groups * 4 /
			  ((imc_time_t)W.o.rate * 3) : 0;
	W.joined = W.failed = 0;
	for (unsigned i = 0; i < W.np; i++) {
		struct port *p = &W.p[i];

		rc = imc_loop_run_until(W.loop, imc_loop_now(W.loop) + step);
		if (rc)
			die("imc_loop_run_until", rc);
		for (unsigned g = 0; g < W.o.groups; g++) {
			struct imc_mcast_join_req r;

			memset(&r, 0, sizeof(r));
			r.rec.mgid = W.mgid[g];
			r.rec.qkey = 0x1234;
			r.rec.pkey = 0xffff;
			r.comp_mask = CM(MGID) | CM(QKEY) | CM(TCLASS) |
				      CM(PKEY) | CM(FLOW_LABEL) | CM(SL);
			r.join_state = IMC_JOIN_FULL;
			rc = imc_mcast_join(imc_mcast_fabric_tracker(p->mf),
					    &r, on_member, &p->mem[g],
					    &p->mem[g].m);
			if (rc)
				die("imc_mcast_join", rc);
		}
	}
	rc = imc_loop_run(W.loop);
	if (rc)
		die("imc_loop_run", rc);
	if (W.joined != W.np * W.o.groups || W.failed) {
		fprintf(stderr, "bench_join_storm: set-up: %u of %u joined, %u failed\n",
			W.joined, W.np * W.o.groups, W.failed);
		exit(1);
	}
}

static void world_down(void)
{
	for (unsigned i = 0; i < W.np; i++)
		imc_mcast_fabric_destroy(W.p[i].mf);
	free(W.p);
	W.p = NULL;
	imc_sa_fabric_destroy(W.sf);
	imc_fabric_destroy(W.f);
	if (imc_loop_destroy(W.loop))
		fprintf(stderr, "bench_join_storm: timers left armed\n");
	imc_topo_destroy(W.t);
}

static void sum_clients(uint64_t *sent, uint64_t *resent, uint64_t *rejoins,
			uint64_t *timeouts)
{
	*sent = *resent = *rejoins = *timeouts = 0;
	for (unsigned i = 0; i < W.np; i++) {
		struct imc_sa_client_stats cs;
		struct imc_mcast_stats ms;

		imc_sa_client_get_stats(imc_mcast_fabric_client(W.p[i].mf),
					&cs);
		imc_mcast_get_stats(imc_mcast_fabric_tracker(W.p[i].mf), &ms);
		*sent += cs.sent;
		*resent += cs.resent;
		*rejoins += ms.rejoins;
		*timeouts += ms.timeouts;
	}
}

static void on_poll(struct imc_timer *tm)
{
	struct imc_sa_stats st;
	struct result *r = W.r;
	imc_time_t d = imc_loop_now(W.loop) - W.t0;
	struct imc_loop_stats ls;
	unsigned back;

	if (W.sf) {
		imc_sa_get_stats(imc_sa_fabric_sa(W.sf), &st);
		back = (unsigned)st.members;
	} else {
		back = 0;
	}
	if (W.joined < back)
		back = W.joined;
	r->back = back;
	if (!r->t50 && back * 2 >= W.target)
		r->t50 = d;
	if (!r->t90 && back * 10 >= W.target * 9)
		r->t90 = d;
	if (!r->t99 && back * 100 >= W.target * 99)
		r->t99 = d;
	if (back == W.target) {
		r->t100 = d;
		return;
	}
	/* Nothing else armed: the rest never comes back. */
	imc_loop_get_stats(W.loop, &ls);
	if (ls.timers_armed == 0 || d > GIVE_UP)
		return;
	imc_timer_arm_in(W.loop, tm, POLL);
}

/* The dead time is over: the SA starts, empty; every request sent
 * before found no SA and was lost. */
static void on_dead(struct imc_timer *tm)
{
	uint64_t sent, resent, rejoins, timeouts;

	(void)tm;
	sum_clients(&sent, &resent, &rejoins, &timeouts);
	W.dead_lost = sent;
	sa_up();
}

static void storm(const struct policy *pol, struct result *r)
{
	struct imc_sa_stats st0, st;
	uint64_t sent0, resent0, rejoins0, timeouts0;
	double w0;
	int rc;

	memset(r, 0, sizeof(*r));
	world_up(pol);
	W.r = r;
	W.target = W.np * W.o.groups;
	sum_clients(&sent0, &resent0, &rejoins0, &timeouts0);
	w0 = now_s();
	/* A new SM: the SA starts empty, every port is told to register
	 * again. */
	imc_sa_fabric_destroy(W.sf);
	W.sf = NULL;
	W.dead_lost = sent0;
	memset(&st0, 0, sizeof(st0));
	if (!W.o.sa_dead) {
		sa_up();
		imc_sa_get_stats(imc_sa_fabric_sa(W.sf), &st0);
	}
	W.failed = 0;
	W.t0 = imc_loop_now(W.loop);
	rc = imc_fabric_client_reregister(W.f, IMC_TOPO_NONE, 0);
	if (rc)
		die("imc_fabric_client_reregister", rc);
	/* As a new SM's first sweep: its SA answers nothing (the requests
	 * are lost) until sa_dead after the reregister. */
	if (W.o.sa_dead) {
		imc_timer_init(&W.dead, on_dead);
		imc_timer_arm_in(W.loop, &W.dead, W.o.sa_dead);
	}
	imc_timer_init(&W.poll, on_poll);
	imc_timer_arm_in(W.loop, &W.poll, POLL);
	rc = imc_loop_run_until(W.loop, W.t0 + GIVE_UP + POLL);
	if (rc)
		die("imc_loop_run_until", rc);
	imc_timer_cancel(W.loop, &W.poll);
	if (!W.sf) {
		imc_timer_cancel(W.loop, &W.dead);
		sum_clients(&W.dead_lost, &r->resent, &r->rejoins,
			    &r->timeouts);
		sa_up();
	}
	r->wall = now_s() - w0;
	imc_sa_get_stats(imc_sa_fabric_sa(W.sf), &st);
	sum_clients(&r->sent, &r->resent, &r->rejoins, &r->timeouts);
	r->sent -= sent0;
	r->resent -= resent0;
	r->rejoins -= rejoins0;
	r->timeouts -= timeouts0;
	r->dropped = st.drop_queue_full - st0.drop_queue_full +
		     (W.dead_lost - sent0);
	r->queue_max = st.queue_max_seen;
	r->failed = W.failed;
	world_down();
}

static void ms_or_never(char *buf, size_t len, imc_time_t t)
{
	if (t)
		snprintf(buf, len, "%.0f", (double)t / 1e6);
	else
		snprintf(buf, len, "never");
}

static void header(void)
{
	printf("%-10s %9s %6s | %8s %8s %8s %8s | %8s %8s %8s %6s %8s %7s | %6s\n",
	       "policy", "spread", "window", "50% ms", "90% ms", "99% ms",
	       "all ms", "requests", "retries", "lost", "queue", "timeouts",
	       "failed", "wall s");
}

static void line(const struct policy *pol, const struct result *r)
{
	char a[16], b[16], c[16], d[16], sp[24], win[16];

	ms_or_never(a, sizeof(a), r->t50);
	ms_or_never(b, sizeof(b), r->t90);
	ms_or_never(c, sizeof(c), r->t99);
	ms_or_never(d, sizeof(d), r->t100);
	snprintf(sp, sizeof(sp), "-");
	snprintf(win, sizeof(win), "-");
	if (pol->rejoin == IMC_MCAST_REJOIN_PACED) {
		snprintf(sp, sizeof(sp), "%.0f ms", (double)pol->spread / 1e6);
		snprintf(win, sizeof(win), "%u", pol->window);
	}
	printf("%-10s %9s %6s | %8s %8s %8s %8s | %8" PRIu64 " %8" PRIu64
	       " %8" PRIu64 " %6" PRIu32 " %8" PRIu64 " %7" PRIu64
	       " | %6.1f\n",
	       pol->rejoin == IMC_MCAST_REJOIN_PACED ? "paced" : "immediate",
	       sp, win, a, b, c, d, r->sent + r->resent,
	       r->resent, r->dropped, r->queue_max, r->timeouts, r->failed,
	       r->wall);
	if (r->back != W.np * W.o.groups)
		printf("           %u of %u memberships never came back\n",
		       r->back, W.np * W.o.groups);
	fflush(stdout);
}

static void run_line(const struct policy *pol)
{
	struct result r;

	storm(pol, &r);
	line(pol, &r);
}

static uint64_t num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	if (!s)
		goto bad;
	v = strtoull(s, &end, 0);
	if (*s && !*end)
		return v;
bad:
	fprintf(stderr, "bench_join_storm: bad %s '%s'\n", what, s ? s : "");
	exit(2);
}

/* A time: ns, or with a unit suffix ns, us, ms or s (0.25s, 37s). */
static imc_time_t time_arg(const char *s, const char *what)
{
	static const struct { const char *u; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s)
		goto bad;
	v = strtod(s, &end);
	if (v < 0 || end == s)
		goto bad;
	if (!*end)
		return (imc_time_t)v;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
		if (!strcmp(end, units[i].u))
			return (imc_time_t)(v * units[i].ns + 0.5);
bad:
	fprintf(stderr, "bench_join_storm: bad %s '%s'\n", what, s ? s : "");
	exit(2);
}

int main(int argc, char **argv)
{
	struct imc_mcast_config def;
	struct policy paced, imm;
	const char *policy = "both";
	bool grid = false;

	imc_mcast_config_init(&def);
	W.o.ports = 10000;
	W.o.groups = 3;
	W.o.rate = 40000;
	W.o.queue = 1000;
	W.o.seed = 1;
	paced.rejoin = IMC_MCAST_REJOIN_PACED;
	paced.spread = def.rejoin_spread;
	paced.window = def.rejoin_window;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--ports"))
			W.o.ports = (unsigned)num(v, a), i++;
		else if (!strcmp(a, "--groups"))
			W.o.groups = (unsigned)num(v, a), i++;
		else if (!strcmp(a, "--rate"))
			W.o.rate = (uint32_t)num(v, a), i++;
		else if (!strcmp(a, "--queue"))
			W.o.queue = (uint32_t)num(v, a), i++;
		else if (!strcmp(a, "--seed"))
			W.o.seed = num(v, a), i++;
		else if (!strcmp(a, "--spread"))
			paced.spread = num(v, a), i++;
		else if (!strcmp(a, "--sa-dead"))
			W.o.sa_dead = time_arg(v, a), i++;
		else if (!strcmp(a, "--window"))
			paced.window = (unsigned)num(v, a), i++;
		else if (!strcmp(a, "--policy") && v)
			policy = v, i++;
		else if (!strcmp(a, "--grid"))
			grid = true;
		else {
			fprintf(stderr,
				"usage: bench_join_storm [--ports N] [--groups G] [--rate R] [--queue Q]\n"
				"                        [--policy paced|immediate|both] [--spread NS]\n"
				"                        [--window W] [--seed S] [--sa-dead TIME]\n"
				"                        [--grid]\n");
			return 2;
		}
	}
	if (!W.o.ports || !W.o.groups || W.o.groups > MAXG || !W.o.queue ||
	    !paced.window) {
		fprintf(stderr, "bench_join_storm: bad sizes\n");
		return 2;
	}
	imm.rejoin = IMC_MCAST_REJOIN_IMMEDIATE;
	imm.spread = 0;
	imm.window = 1;
	printf("join storm: %u ports x %u groups, SA %" PRIu32
	       " requests/s, queue %" PRIu32 ", seed %" PRIu64 "\n",
	       W.o.ports, W.o.groups, W.o.rate, W.o.queue, W.o.seed);
	header();
	if (grid) {
		static const imc_time_t spreads[] = {
			100 * MS, 250 * MS, 500 * MS, 1000 * MS, 2000 * MS,
			4000 * MS,
		};
		static const unsigned windows[] = { 1, 4, 16 };

		for (size_t s = 0; s < sizeof(spreads) / sizeof(*spreads); s++)
			for (size_t w = 0; w < sizeof(windows) / sizeof(*windows);
			     w++) {
				struct policy p = { IMC_MCAST_REJOIN_PACED,
						    spreads[s], windows[w] };

				run_line(&p);
			}
		return 0;
	}
	if (!strcmp(policy, "paced") || !strcmp(policy, "both"))
		run_line(&paced);
	if (!strcmp(policy, "immediate") || !strcmp(policy, "both"))
		run_line(&imm);
	return 0;
}
