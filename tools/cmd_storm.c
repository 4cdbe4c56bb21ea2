/* ibmcast storm: a load generator for an SA reachable through libibumad
 * (OpenSM on InfiniBand, or on ibsim through umad2sim): the run of
 * storm.c on a real port, its report as text or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/umad.h"
#include "sa_tool.h"
#include "sigwatch.h"
#include "ibmcast/storm.h"
#include "tools.h"

#define PROG "ibmcast storm"

static void help(FILE *f)
{
	fprintf(f,
"usage: ibmcast storm [--device D] [--port N] [--ops OP,...]\n"
"                     [--count N | --duration SECS] [--groups N]\n"
"                     [--inflight N] [--rate R] [--state S] [--keep] [--json]\n"
"\n"
"Loads the SA of the port with MCMemberRecord requests through libibumad\n"
"(on InfiniBand: /dev/infiniband/umadN; on ibsim: umad2sim), at most\n"
"--inflight at a time, and reports the rate, the latency percentiles and\n"
"the statuses the SA answered, per operation. Then it leaves every group\n"
"it still holds (unless --keep).\n"
"\n"
"The work is a cycle of operations (--ops) run again and again, each run\n"
"on one group: run k (from 0) on group 1 + k mod --groups, the group's\n"
"operations one after the other. Group i is ff15:1234:TAG::i, or the MGID\n"
"the SA chose for its last create.\n"
"  join    Set with the components that create a missing group (Q_Key,\n"
"          P_Key, SL, TClass, FlowLabel): creates or joins\n"
"  rejoin  Set with MGID, PortGID and JoinState only, as a port re-joins\n"
"          what it holds: creates nothing (INSUF_COMPS if the group is gone)\n"
"  leave   Delete of the JoinState bits\n"
"  create  Set with MGID 0: the SA creates a group and picks its MGID\n"
"\n"
"Options:\n"
"  --device D, --port N  the port (default: libibumad's first active)\n"
"  --ops OP,...          the cycle (default join,leave); a cycle that\n"
"                        creates without leaving runs once per group\n"
"  --count N             cycles to run (default 1000)\n"
"  --duration SECS       run cycles for SECS instead\n"
"  --groups N            groups the cycles go round (default: --count,\n"
"                        256 with --duration; at most 1048576)\n"
"  --inflight N          requests in flight at most (default and most: %d;\n"
"                        more deadlocks ibsim)\n"
"  --rate R              requests started per second at most (default:\n"
"                        as fast as the answers come)\n"
"  --state S             JoinState: full (default), nonmember, sendonly,\n"
"                        sendonly-full, or a number 1..15\n"
"  --qkey Q, --pkey P    components of join and create (default 0x1234,\n"
"                        0xffff)\n"
"  --tag T               the MGIDs' third group of digits (default 1)\n"
"  --keep                no teardown: keep what the run holds at the end\n"
"  --json                the report as one JSON object\n"
"  --dlid LID            send to the SA at LID (default: the SM's LID)\n"
"  --smkey KEY           SM_Key of the requests (default 0)\n"
"  --timeout MS          first attempt's timeout (default 500)\n"
"  --retries N           retries with backoff (default 3)\n"
"  --transport T         umad (default: libibumad), or ibsim (ibsim's\n"
"                        socket directly, without umad2sim)\n"
"\n"
"SIGINT or SIGTERM stops sending; the answers still due are awaited, the\n"
"teardown runs, and the report covers what ran. A second signal (0.5 s\n"
"or more after the first) cancels what is in flight and skips the rest\n"
"of the teardown.\n"
"\n"
"Report (text; --json has the same figures): a 'storm' line with the\n"
"port and settings, then per operation, for all of them ('all') and for\n"
"the teardown, a line\n"
"  op NAME sent=N answered=N success=N timeouts=N errors=N retries=N\n"
"     per_sec=R p50_us=T p90_us=T p99_us=T max_us=T\n"
"and a line 'status NAME COUNT' per SA status answered; last\n"
"  end stopped=done|duration|signal|aborted seconds=T cycles=N held=N ...\n"
"where held counts the groups still held (or in doubt) at exit.\n"
"\n"
"Exit: 0 every request answered SUCCESS and nothing held at exit (or\n"
"--keep); 1 a request failed, timed out or had another status, or the\n"
"port could not be opened; 2 bad usage; 128+N after signal N (130 for\n"
"SIGINT), with the report of what ran.\n", IMC_STORM_MAX_INFLIGHT);
}

/* ---- options ---- */

struct opts {
	const char *device;
	unsigned port;
	const char *ops;
	uint64_t count;
	bool count_set;
	double duration;
	bool duration_set;
	uint32_t groups;
	bool groups_set;
	unsigned inflight;
	double rate;
	uint8_t state;
	uint32_t qkey;
	uint16_t pkey;
	uint16_t tag;
	bool keep;
	bool json;
	uint16_t dlid;
	uint64_t smkey;
	imc_time_t timeout;
	unsigned retries;
	const char *transport;
};

/* A positive number of seconds (at most a year) or a rate (at most a
 * billion a second); an error is told here, with the limit. */
static int opt_real(const char *name, const char *arg, double max,
		    const char *unit, double *out)
{
	double v;

	if (sa_tool_real(arg, HUGE_VAL, &v) < 0)
		return imc_opt_bad(PROG, name, arg, "expected a number of %s",
				   unit);
	if (v > max)
		return imc_opt_bad(PROG, name, arg, "at most %.0f (%s)", max,
				   unit);
	if (!(v > 0))
		return imc_opt_bad(PROG, name, arg, "above 0 (%s)", unit);
	*out = v;
	return 0;
}

static int opt_secs(const char *arg, void *f)
{
	return opt_real("duration", arg, 366 * 86400.0, "seconds", f);
}

static int opt_rate(const char *arg, void *f)
{
	return opt_real("rate", arg, 1e9, "joins a second", f);
}

static int opt_state(const char *arg, void *f)
{
	return sa_tool_join_state(arg, f);
}

static int opt_ops(const char *arg, void *f)
{
	enum imc_storm_op cycle[IMC_STORM_MAX_CYCLE];

	if (imc_storm_parse_ops(arg, cycle) < 0)
		return -EINVAL;
	*(const char **)f = arg;
	return 0;
}

static int opt_transport(const char *arg, void *f)
{
	*(const char **)f = arg;
	return strcmp(arg, "umad") && strcmp(arg, "ibsim") ? -EINVAL : 0;
}

#define O(name, f, lo, hi) SA_OPT_N(name, struct opts, f, lo, hi)
#define FN(name, f, fn) \
	{ name, SA_OPT_FN, offsetof(struct opts, f), 0, 0, 0, 0, fn, -1 }
static const struct sa_opt options[] = {
	SA_OPT_S("device", struct opts, device),
	O("port", port, 0, 255),
	FN("ops", ops, opt_ops),
	{ "count", SA_OPT_NUM, SA_OPT_FIELD(struct opts, count), 1,
	  UINT64_MAX / 2, 1, NULL, offsetof(struct opts, count_set) },
	{ "duration", SA_OPT_FN, offsetof(struct opts, duration), 0, 0, 0, 0,
	  opt_secs, offsetof(struct opts, duration_set) },
	{ "groups", SA_OPT_NUM, SA_OPT_FIELD(struct opts, groups), 1,
	  IMC_STORM_MAX_GROUPS, 1, NULL, offsetof(struct opts, groups_set) },
	O("inflight", inflight, 1, IMC_STORM_MAX_INFLIGHT),
	FN("rate", rate, opt_rate),
	FN("state", state, opt_state),
	O("qkey", qkey, 0, UINT32_MAX),
	O("pkey", pkey, 0, 0xffff),
	O("tag", tag, 0, 0xffff),
	SA_OPT_F("keep", struct opts, keep),
	SA_OPT_F("json", struct opts, json),
	SA_OPT_CLIENT(struct opts),
	FN("transport", transport, opt_transport),
};
#undef FN
#undef O

/* ---- the run ---- */

enum stopped { STOP_DONE, STOP_DURATION, STOP_SIGNAL, STOP_ABORTED };

static const char *const stopped_names[] = {
	[STOP_DONE] = "done",
	[STOP_DURATION] = "duration",
	[STOP_SIGNAL] = "signal",
	[STOP_ABORTED] = "aborted",
};

struct run {
	const struct opts *o;
	struct imc_storm_config cfg;
	struct imc_loop *loop;
	struct imc_umad *u;
	struct imc_sa_client *c;
	struct imc_storm *s;
	struct sigwatch sw;
	struct imc_timer end;
	struct imc_timer tick;      /* progress on a terminal */
	imc_time_t t0;
	bool shown;                 /* a progress line is on stderr */
	enum stopped stopped;
	int signo;
	imc_time_t first_signal;
	bool done;
};

static imc_time_t mono(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (imc_time_t)ts.tv_sec * IMC_NSEC_PER_SEC +
	       (imc_time_t)ts.tv_nsec;
}

static void on_done(void *arg, struct imc_storm *s)
{
	struct run *r = arg;

	(void)s;
	r->done = true;
	imc_loop_stop(r->loop);
}

static void on_end(struct imc_timer *t)
{
	struct run *r = imc_container_of(t, struct run, end);

	if (r->stopped == STOP_DONE)
		r->stopped = STOP_DURATION;
	imc_storm_stop(r->s);
}

#define TICK_NS (500 * IMC_NSEC_PER_MSEC)

/* Progress on stderr (a terminal): one line, rewritten in place. */
static void show_progress(struct run *r)
{
	const struct imc_storm_report *rep = imc_storm_get_report(r->s);
	double t = (double)(mono(NULL) - r->t0) / 1e9;

	fprintf(stderr, "\r" PROG ": %.1f s", t);
	if (r->o->duration_set)
		fprintf(stderr, " of %.0f s", r->o->duration);
	fprintf(stderr, ", %" PRIu64 " cycles done", rep->cycles_done);
	if (r->cfg.count)
		fprintf(stderr, " of %" PRIu64, r->cfg.count);
	fprintf(stderr, ", %" PRIu64 " held   ", rep->held);
	fflush(stderr);
	r->shown = true;
}

static void on_tick(struct imc_timer *t)
{
	struct run *r = imc_container_of(t, struct run, tick);

	show_progress(r);
	imc_timer_arm_in(r->loop, &r->tick, TICK_NS);
}

/* The first signal stops the run; a second, once half a second has
 * passed (timeout(1) sends one signal to the child and again to its
 * process group), cancels what is in flight. */
static void on_signal(struct sigwatch *sw)
{
	struct run *r = imc_container_of(sw, struct run, sw);
	imc_time_t t = mono(NULL);

	if (!r->signo) {
		r->signo = sw->signo;
		r->first_signal = t;
		r->stopped = STOP_SIGNAL;
		imc_storm_stop(r->s);
	} else if (t - r->first_signal >= 500 * IMC_NSEC_PER_MSEC) {
		r->stopped = STOP_ABORTED;
		imc_storm_abort(r->s);
	}
}

/* ---- the report ---- */

/* Status counts merged by name (several MAD statuses may share one), in
 * the order of the first status of each name (a tally keeps its statuses
 * in ascending order). */
struct named {
	const char *name;
	uint64_t count;
};

static size_t by_name(const struct imc_storm_tally *t, struct named *out)
{
	size_t n = 0;

	for (unsigned i = 0; i < t->n_statuses; i++) {
		const char *name = imc_mad_status_str(t->statuses[i].status);
		size_t j;

		for (j = 0; j < n; j++)
			if (!strcmp(out[j].name, name))
				break;
		if (j == n)
			out[n++] = (struct named){ name, 0 };
		out[j].count += t->statuses[i].count;
	}
	if (t->other_statuses)
		out[n++] = (struct named){ "OTHER", t->other_statuses };
	return n;
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static double per_sec(uint64_t n, imc_time_t t)
{
	return t ? (double)n * 1e9 / (double)t : 0.0;
}

static void tally_json(struct imc_json *j, const char *name,
		       const struct imc_storm_tally *t, imc_time_t time)
{
	struct named st[IMC_STORM_MAX_STATUSES + 1];
	size_t n = by_name(t, st);
	const struct imc_storm_hist *h = &t->latency;

	imc_json_key(j, name);
	imc_json_object_begin(j);
	imc_json_kv_u64(j, "sent", t->sent);
	imc_json_kv_u64(j, "answered", t->answered);
	imc_json_kv_u64(j, "success", t->success);
	imc_json_kv_u64(j, "timeouts", t->timeouts);
	imc_json_kv_u64(j, "errors", t->errors);
	imc_json_kv_u64(j, "retries", t->retries);
	imc_json_kv_double(j, "per_sec", per_sec(t->answered, time), 1);
	imc_json_key(j, "latency_us");
	imc_json_object_begin(j);
	imc_json_kv_double(j, "p50", us(imc_storm_hist_quantile(h, 0.5)), 1);
	imc_json_kv_double(j, "p90", us(imc_storm_hist_quantile(h, 0.9)), 1);
	imc_json_kv_double(j, "p99", us(imc_storm_hist_quantile(h, 0.99)), 1);
	imc_json_kv_double(j, "max", us(h->max), 1);
	imc_json_object_end(j);
	imc_json_key(j, "statuses");
	imc_json_object_begin(j);
	for (size_t i = 0; i < n; i++)
		imc_json_kv_u64(j, st[i].name, st[i].count);
	imc_json_object_end(j);
	imc_json_object_end(j);
}

static void print_tally(const char *name, const struct imc_storm_tally *t,
			imc_time_t time)
{
	struct named st[IMC_STORM_MAX_STATUSES + 1];
	size_t n = by_name(t, st);
	const struct imc_storm_hist *h = &t->latency;

	printf("op %s sent=%" PRIu64 " answered=%" PRIu64 " success=%" PRIu64
	       " timeouts=%" PRIu64 " errors=%" PRIu64 " retries=%" PRIu64
	       " per_sec=%.0f p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f\n",
	       name, t->sent, t->answered, t->success, t->timeouts, t->errors,
	       t->retries, per_sec(t->answered, time),
	       us(imc_storm_hist_quantile(h, 0.5)), us(imc_storm_hist_quantile(h, 0.9)),
	       us(imc_storm_hist_quantile(h, 0.99)), us(h->max));
	for (size_t i = 0; i < n; i++)
		printf("  status %s %" PRIu64 "\n", st[i].name, st[i].count);
}

static void print_header(const struct run *r)
{
	const struct imc_umad_port *p = imc_umad_port(r->u);
	char g[IMC_GID_STRLEN];

	imc_gid_format(&p->gid, g);
	printf("storm device=%s port=%u lid=%u gid=%s sm_lid=%u sa_lid=%u ops=",
	       p->device, p->port, p->lid, g, p->sm_lid, imc_umad_sa_lid(r->u));
	for (unsigned i = 0; i < r->cfg.cycle_len; i++)
		printf("%s%s", i ? "," : "", imc_storm_op_name(r->cfg.cycle[i]));
	printf(" groups=%" PRIu32 " inflight=%u rate=%.1f join_state=0x%x "
	       "count=%" PRIu64 " duration=%.3f keep=%s\n",
	       r->cfg.groups, r->cfg.inflight, r->cfg.rate, r->cfg.join_state,
	       r->cfg.count, r->o->duration_set ? r->o->duration : 0.0,
	       r->cfg.keep ? "yes" : "no");
}

static void header_json(struct imc_json *j, const struct run *r)
{
	const struct imc_umad_port *p = imc_umad_port(r->u);

	imc_json_kv_string(j, "device", p->device);
	imc_json_kv_u64(j, "port", p->port);
	imc_json_kv_u64(j, "lid", p->lid);
	imc_json_kv_gid(j, "gid", &p->gid);
	imc_json_kv_u64(j, "sm_lid", p->sm_lid);
	imc_json_kv_u64(j, "sa_lid", imc_umad_sa_lid(r->u));
	imc_json_key(j, "ops");
	imc_json_array_begin(j);
	for (unsigned i = 0; i < r->cfg.cycle_len; i++)
		imc_json_string(j, imc_storm_op_name(r->cfg.cycle[i]));
	imc_json_array_end(j);
	imc_json_kv_u64(j, "groups", r->cfg.groups);
	imc_json_kv_u64(j, "inflight", r->cfg.inflight);
	imc_json_kv_double(j, "rate", r->cfg.rate, 1);
	imc_json_kv_u64(j, "join_state", r->cfg.join_state);
	imc_json_kv_u64(j, "count", r->cfg.count);
	imc_json_kv_double(j, "duration",
			   r->o->duration_set ? r->o->duration : 0.0, 3);
	imc_json_kv_bool(j, "keep", r->cfg.keep);
}

/* The report as one JSON object (text mode printed its header when the
 * run started). */
static void report_json(struct run *r, const struct imc_storm_report *rep,
			const struct imc_storm_tally *all,
			const struct imc_sa_client_stats *cs)
{
	bool seen[IMC_STORM_OPS] = { false };
	struct imc_json j;

	imc_json_init(&j, stdout, 0, 0);
	imc_json_object_begin(&j);
	header_json(&j, r);
	imc_json_key(&j, "by_op");
	imc_json_object_begin(&j);
	for (unsigned i = 0; i < r->cfg.cycle_len; i++) {
		enum imc_storm_op op = r->cfg.cycle[i];

		if (seen[op])
			continue;
		seen[op] = true;
		tally_json(&j, imc_storm_op_name(op), &rep->op[op], rep->run_time);
	}
	imc_json_object_end(&j);
	if (all)
		tally_json(&j, "total", all, rep->run_time);
	tally_json(&j, "teardown", &rep->teardown, rep->teardown_time);
	imc_json_kv_string(&j, "stopped", stopped_names[r->stopped]);
	imc_json_kv_double(&j, "seconds", (double)rep->run_time / 1e9, 3);
	imc_json_kv_double(&j, "teardown_seconds",
			   (double)rep->teardown_time / 1e9, 3);
	imc_json_kv_u64(&j, "cycles_started", rep->cycles_started);
	imc_json_kv_u64(&j, "cycles_done", rep->cycles_done);
	imc_json_kv_u64(&j, "held", rep->held);
	imc_json_kv_u64(&j, "unnamed", rep->unnamed);
	imc_json_kv_u64(&j, "max_in_flight", rep->max_in_flight);
	imc_json_key(&j, "client");
	imc_json_object_begin(&j);
	imc_json_kv_u64(&j, "sent", cs->sent);
	imc_json_kv_u64(&j, "resent", cs->resent);
	imc_json_kv_u64(&j, "busy", cs->busy);
	imc_json_kv_u64(&j, "stale", cs->stale);
	imc_json_kv_u64(&j, "timed_out", cs->timed_out);
	imc_json_object_end(&j);
	imc_json_object_end(&j);
	(void)imc_tool_json_end(&j, "ibmcast storm");
}

static void print_report(struct run *r)
{
	const struct imc_storm_report *rep = imc_storm_get_report(r->s);
	struct imc_sa_client_stats cs;
	struct imc_storm_tally *all = calloc(1, sizeof(*all));
	bool seen[IMC_STORM_OPS] = { false };

	imc_sa_client_get_stats(r->c, &cs);
	for (unsigned i = 0; i < r->cfg.cycle_len; i++) {
		enum imc_storm_op op = r->cfg.cycle[i];

		if (seen[op])
			continue;
		seen[op] = true;
		if (!r->o->json)
			print_tally(imc_storm_op_name(op), &rep->op[op],
				    rep->run_time);
		if (all)
			imc_storm_tally_add(all, &rep->op[op]);
	}
	if (r->o->json) {
		report_json(r, rep, all, &cs);
		free(all);
		fflush(stdout);
		return;
	}
	if (all)
		print_tally("all", all, rep->run_time);
	print_tally("teardown", &rep->teardown, rep->teardown_time);
	printf("end stopped=%s seconds=%.3f teardown_seconds=%.3f "
	       "cycles_started=%" PRIu64 " cycles_done=%" PRIu64
	       " held=%" PRIu64 " unnamed=%" PRIu64 " max_in_flight=%zu "
	       "mads_sent=%" PRIu64 " resent=%" PRIu64 " busy=%" PRIu64
	       " stale=%" PRIu64 " timed_out=%" PRIu64 "\n",
	       stopped_names[r->stopped], (double)rep->run_time / 1e9,
	       (double)rep->teardown_time / 1e9, rep->cycles_started,
	       rep->cycles_done, rep->held, rep->unnamed, rep->max_in_flight,
	       cs.sent, cs.resent, cs.busy, cs.stale, cs.timed_out);
	free(all);
	fflush(stdout);
}

/* Whether every request of the run was answered SUCCESS. */
static bool all_success(const struct imc_storm_report *rep)
{
	for (unsigned i = 0; i < IMC_STORM_OPS; i++)
		if (rep->op[i].success != rep->op[i].sent)
			return false;
	return rep->teardown.success == rep->teardown.sent;
}

/* ---- entry ---- */

static int open_port(struct run *r)
{
	struct imc_umad_config uc = {
		.device = r->o->device, .port = r->o->port,
		.mode = IMC_UMAD_CLIENT,
		.backend = r->o->transport && !strcmp(r->o->transport, "ibsim") ?
			   IMC_UMAD_IBSIM : IMC_UMAD_LIBIBUMAD,
	};
	struct imc_sa_client_config cc;
	struct imc_sa_transport tr;
	int e;

	e = imc_umad_open(r->loop, &uc, &r->u);
	if (e < 0) {
		fprintf(stderr, PROG ": cannot open %s port %u: %s\n",
			r->o->device ? r->o->device : "the default CA",
			r->o->port, strerror(-e));
		imc_port_hint(PROG, e);
		return e;
	}
	if (r->o->dlid)
		imc_umad_set_sa_lid(r->u, r->o->dlid);
	imc_sa_client_config_init(&cc);
	cc.window = r->cfg.inflight;
	cc.timeout = r->o->timeout;
	if (cc.max_timeout < cc.timeout)
		cc.max_timeout = cc.timeout;
	cc.retries = r->o->retries;
	/* The first TID differs from run to run, as the jitter does. */
	cc.seed = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	imc_umad_sa_transport(r->u, &tr);
	e = imc_sa_client_create(r->loop, &tr, &cc, &r->c);
	if (e < 0) {
		fprintf(stderr, PROG ": SA client: %s\n", strerror(-e));
		return e;
	}
	imc_umad_attach(r->u, r->c);
	return 0;
}

static int run_storm(const struct opts *o, const struct imc_storm_config *cfg)
{
	struct run r;
	int e, rc = IMC_EXIT_FAIL;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.cfg = *cfg;
	r.cfg.clock = mono;
	imc_timer_init(&r.end, on_end);
	e = imc_loop_create_realtime(&r.loop);
	if (e < 0) {
		fprintf(stderr, PROG ": loop: %s\n", strerror(-e));
		return IMC_EXIT_FAIL;
	}
	/* Before the port opens: its threads inherit the blocked mask. */
	e = sigwatch_start(&r.sw, r.loop, on_signal);
	if (e < 0) {
		fprintf(stderr, PROG ": signals: %s\n", strerror(-e));
		goto out;
	}
	if (open_port(&r) < 0)
		goto out;
	r.cfg.port_gid = imc_umad_port(r.u)->gid;
	e = imc_storm_create(r.loop, r.c, &r.cfg, on_done, &r, &r.s);
	if (e < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(-e));
		goto out;
	}
	if (!o->json) {
		print_header(&r);
		fflush(stdout);
	}
	if (o->duration_set)
		imc_timer_arm_in(r.loop, &r.end,
				 (imc_time_t)llround(o->duration * 1e9));
	imc_timer_init(&r.tick, on_tick);
	r.t0 = mono(NULL);
	if (!o->json && isatty(STDERR_FILENO)) {
		show_progress(&r);
		imc_timer_arm_in(r.loop, &r.tick, TICK_NS);
	}
	imc_storm_start(r.s);
	while (!r.done) {
		e = imc_loop_run(r.loop);
		if (e < 0) {
			fprintf(stderr, PROG ": loop: %s\n", strerror(-e));
			imc_storm_abort(r.s);
			r.stopped = STOP_ABORTED;
			break;
		}
	}
	imc_timer_cancel(r.loop, &r.end);
	imc_timer_cancel(r.loop, &r.tick);
	if (r.shown)
		fprintf(stderr, "\r%70s\r", "");
	print_report(&r);
	{
		const struct imc_storm_report *rep = imc_storm_get_report(r.s);

		rc = all_success(rep) && !rep->unnamed &&
		     (!rep->held || cfg->keep) && r.stopped != STOP_ABORTED ?
		     IMC_EXIT_OK : IMC_EXIT_FAIL;
	}
	if (r.signo)
		rc = 128 + r.signo;
out:
	imc_storm_destroy(r.s);
	if (r.u)
		imc_umad_attach(r.u, NULL);
	imc_sa_client_destroy(r.c);
	imc_umad_close(r.u);
	sigwatch_stop(&r.sw);
	imc_loop_destroy(r.loop);
	return rc;
}

static int run(int argc, char **argv)
{
	struct imc_storm_config cfg;
	struct opts o;
	int n, rep, rc;

	memset(&o, 0, sizeof(o));
	o.ops = "join,leave";
	o.count = 1000;
	o.inflight = IMC_STORM_MAX_INFLIGHT;
	o.state = UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER;
	o.qkey = 0x1234;
	o.pkey = 0xffff;
	o.tag = 1;
	o.timeout = 500 * IMC_NSEC_PER_MSEC;
	o.retries = IMC_SA_DEFAULT_RETRIES;
	optind = 1;
	rc = sa_tool_getopt(PROG, argc, argv, options,
			    IMC_ARRAY_SIZE(options), &o);
	if (rc)
		return rc;
	if (optind != argc)
		return sa_tool_usage(PROG, "no operands are taken");
	if (o.count_set && o.duration_set)
		return sa_tool_usage(PROG, "--count and --duration exclude "
				     "each other");
	imc_storm_config_init(&cfg);
	n = imc_storm_parse_ops(o.ops, cfg.cycle);
	cfg.cycle_len = (unsigned)n;
	rep = imc_storm_cycle_repeats(cfg.cycle, cfg.cycle_len);
	if (rep < 0)
		return sa_tool_usage(PROG, "--ops creates twice without a "
				     "leave between");
	cfg.count = o.duration_set ? 0 : o.count;
	if (o.groups_set)
		cfg.groups = o.groups;
	else if (o.duration_set)
		cfg.groups = 256;
	else
		cfg.groups = (uint32_t)(o.count < IMC_STORM_MAX_GROUPS ?
					o.count : IMC_STORM_MAX_GROUPS);
	if (!rep && cfg.count > cfg.groups)
		return sa_tool_usage(PROG, "--ops creates without a leave: "
				     "each group runs it once, so --count "
				     "must not exceed --groups");
	cfg.inflight = o.inflight;
	cfg.rate = o.rate;
	cfg.join_state = o.state;
	cfg.tag = o.tag;
	cfg.qkey = o.qkey;
	cfg.pkey = o.pkey;
	cfg.sm_key = o.smkey;
	cfg.keep = o.keep;
	return run_storm(&o, &cfg);
}

const struct imc_cmd imc_cmd_storm = {
	.name = "storm",
	.summary = "load an SA with joins, re-joins, leaves and creates",
	.run = run,
	.help = help,
};
