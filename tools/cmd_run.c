/* ibmcast run: run a scenario on the embedded fabric and check its
 * expectations (docs/scenarios.md). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/json.h"
#include "ibmcast/pcap.h"
#include "ibmcast/scenario.h"
#include "ibmcast/scenario_mcast.h"
#include "ibmcast/scenario_sa.h"
#include "tools.h"

#define PROGRESS_NS 500000000ull   /* progress line every 0.5 s */
#define TEXT_HOSTS_MAX 64          /* hosts listed in the text summary */
#define RUN_EXIT_SKIP 77           /* an opensm line, no OpenSM to run it */

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast run [--seed N] [--pcap FILE] [--until TIME] [--json]\n"
		"                   [--quiet] [--sa-show] [--mcast-show] [--sm-wait TIME]\n"
		"                   SCENARIO\n"
		"\n"
		"Runs SCENARIO (docs/scenarios.md) on the embedded fabric in virtual\n"
		"time, checks its expectations and reports what the run's parts did:\n"
		"the SA's groups and members, join latencies, SA requests and MADs\n"
		"lost, packets delivered and dropped by reason, IPoIB, expectations.\n"
		"\n"
		"  --seed N       seed of the run instead of the file's seed line\n"
		"  --pcap FILE    capture every packet on every port into FILE\n"
		"  --until TIME   end the run at TIME (e.g. 5ms) instead of the stop\n"
		"                 line; expectations timed later are skipped\n"
		"  --json         print the result as JSON\n"
		"  --quiet        print only failed expectations and errors\n"
		"  --sa-show      print the SA's groups and members (saquery -g, -m\n"
		"                 style) at each sa-show line and at the end; needs\n"
		"                 an sa line\n"
		"  --mcast-show   print the groups of every port's join tracker (as\n"
		"                 ibmcast mcast show lists them) at each mcast-show\n"
		"                 line and at the end; needs an mcast-join line\n"
		"  --sm-wait TIME how long OpenSM may take to bring the subnet up in\n"
		"                 a scenario with an opensm line (default: its wait=,\n"
		"                 else 60s); such a run is in real time, on the\n"
		"                 fabric served to OpenSM (docs/opensm-fabric.md)\n"
		"\n"
		"Exit: 0 every expectation held, 1 one failed or the run failed,\n"
		"2 bad usage or a scenario that does not parse (FILE:LINE),\n"
		"77 an opensm line and no OpenSM or umad2sim to run it.\n");
}

static uint64_t wall_now(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct progress {
	uint64_t start, last;
	uint64_t last_events;
	bool shown;
};

/* Wall-clock reads live here, in the tool; the library only calls back. */
static void on_progress(void *ctx, imc_time_t now, uint64_t events)
{
	struct progress *pr = ctx;
	uint64_t w = wall_now(NULL);
	double dt;

	if (w - pr->last < PROGRESS_NS)
		return;
	dt = (double)(w - pr->last) / 1e9;
	fprintf(stderr, "\r  virtual time %.6f s, %" PRIu64 " events, %.0f events/s   ",
		(double)now / 1e9, events,
		(double)(events - pr->last_events) / dt);
	fflush(stderr);
	pr->last = w;
	pr->last_events = events;
	pr->shown = true;
}

static const char *state_str(enum imc_scn_check_state st)
{
	switch (st) {
	case IMC_SCN_CHECK_PASS:
		return "pass";
	case IMC_SCN_CHECK_FAIL:
		return "fail";
	default:
		return "skipped";
	}
}

static void hosts_json(struct imc_json *j,
		       const struct imc_scenario_result *r)
{
	imc_json_key(j, "hosts");
	imc_json_array_begin(j);
	for (unsigned i = 0; i < r->nhosts; i++) {
		const struct imc_scenario_host *h = &r->hosts[i];

		imc_json_object_begin_line(j);
		imc_json_kv_string(j, "name", h->name);
		imc_json_kv_u64(j, "port", h->port);
		imc_json_kv_u64(j, "sent", h->sent);
		imc_json_kv_u64(j, "send_errors", h->send_errors);
		imc_json_kv_u64(j, "delivered", h->delivered);
		imc_json_kv_u64(j, "dups", h->dups);
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
}

static void checks_json(struct imc_json *j,
			const struct imc_scenario_result *r)
{
	imc_json_key(j, "expectations");
	imc_json_array_begin(j);
	for (unsigned i = 0; i < r->nchecks; i++) {
		const struct imc_scenario_check *c = &r->checks[i];

		imc_json_object_begin_line(j);
		imc_json_kv_u64(j, "line", c->line);
		imc_json_kv_string(j, "text", c->text);
		imc_json_kv_bool(j, "at_end", c->at_end);
		imc_json_kv_u64(j, "at_ns", c->at);
		imc_json_kv_string(j, "state", state_str(c->state));
		if (c->state != IMC_SCN_CHECK_SKIPPED) {
			imc_json_kv_u64(j, "observed", c->observed);
			imc_json_kv_string(j, "observed_text", c->observed_str);
		}
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
}

static void print_json(const char *path, const struct imc_scenario *s,
		       const struct imc_scenario_result *r,
		       const struct imc_scn_sa_show *sa_show,
		       const struct imc_scn_mcast_show *mc_show)
{
	const struct imc_fabric_totals *tot = &r->totals;
	uint32_t hcas, sws, cables;
	struct imc_json j;
	char t[32];

	imc_topo_counts(imc_scenario_topo(s), &hcas, &sws, &cables);
	imc_scn_format_time(r->end, t, sizeof(t));
	imc_json_init(&j, stdout, 2, 0);
	imc_json_object_begin(&j);
	imc_json_kv_string(&j, "scenario", path);
	imc_json_kv_string(&j, "topology", imc_scenario_topo_desc(s));
	imc_json_kv_u64(&j, "hcas", hcas);
	imc_json_kv_u64(&j, "switches", sws);
	imc_json_kv_u64(&j, "cables", cables);
	imc_json_kv_u64(&j, "seed", r->seed);
	imc_json_kv_u64(&j, "end_ns", r->end);
	imc_json_kv_string(&j, "end_time", t);
	imc_json_kv_u64(&j, "events", r->events);
	imc_json_kv_u64(&j, "wall_ns", r->wall_ns);
	/* A string: JSON numbers lose bits past 2^53. */
	imc_json_kv_hex(&j, "trace_hash", r->trace_hash, 16);
	imc_json_key(&j, "totals");
	imc_json_object_begin_line(&j);
	imc_json_kv_u64(&j, "sent", tot->sent);
	imc_json_kv_u64(&j, "delivered", tot->delivered);
	imc_json_kv_u64(&j, "hops", tot->hops);
	imc_json_object_end(&j);
	imc_json_key(&j, "drops");
	imc_json_object_begin_line(&j);
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		imc_json_kv_u64(&j, imc_drop_str((enum imc_drop)d),
				tot->drops[d]);
	imc_json_object_end(&j);
	hosts_json(&j, r);
	checks_json(&j, r);
	/* These printers write their own JSON value. */
	if (sa_show && !imc_json_key(&j, "sa") && !imc_json_value_follows(&j))
		imc_scn_sa_show_print(sa_show, stdout, true);
	if (mc_show && !imc_json_key(&j, "mcast") &&
	    !imc_json_value_follows(&j))
		imc_scn_mcast_show_print(mc_show, stdout, true);
	if (!imc_json_key(&j, "report") && !imc_json_value_follows(&j))
		imc_scenario_report_print(r, stdout, true);
	imc_json_kv_u64(&j, "passed", r->npassed);
	imc_json_kv_u64(&j, "failed", r->nfailed);
	imc_json_kv_u64(&j, "skipped", r->nskipped);
	imc_json_kv_bool(&j, "ok", !r->nfailed);
	imc_json_object_end(&j);
	(void)imc_tool_json_end(&j, "ibmcast run");
}

static void print_text(const char *path, const struct imc_scenario *s,
		       const struct imc_scenario_result *r)
{
	const struct imc_fabric_totals *tot = &r->totals;
	uint32_t hcas, sws, cables;
	bool any = false;
	char t[32];

	imc_topo_counts(imc_scenario_topo(s), &hcas, &sws, &cables);
	imc_scn_format_time(r->end, t, sizeof(t));
	printf("scenario    %s\n", path);
	printf("topology    %s (%" PRIu32 " HCAs, %" PRIu32 " switches, %" PRIu32
	       " cables)\n", imc_scenario_topo_desc(s), hcas, sws, cables);
	printf("seed        %" PRIu64 "\n", r->seed);
	/* An opensm run goes in real time from SUBNET UP, not in virtual
	 * time: its report has the opensm section. */
	printf("%s     %s, %" PRIu64 " events, %.3f s wall\n",
	       imc_scenario_report_len(r, "opensm") ? "real   " : "virtual", t,
	       r->events, (double)r->wall_ns / 1e9);
	printf("trace       0x%016" PRIx64 "\n", r->trace_hash);
	printf("totals      sent %" PRIu64 ", delivered %" PRIu64 ", hops %" PRIu64
	       "\n", tot->sent, tot->delivered, tot->hops);
	printf("drops      ");
	for (int d = 0; d < IMC_DROP__COUNT; d++) {
		if (!tot->drops[d])
			continue;
		printf(" %s %" PRIu64, imc_drop_str((enum imc_drop)d),
		       tot->drops[d]);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
	if (r->nhosts)
		printf("hosts       %-16s %10s %10s %10s %8s\n", "", "sent",
		       "errors", "delivered", "dups");
	for (unsigned i = 0; i < r->nhosts && i < TEXT_HOSTS_MAX; i++) {
		const struct imc_scenario_host *h = &r->hosts[i];
		char name[64];

		snprintf(name, sizeof(name), "%s:%u", h->name, h->port);
		printf("            %-16s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %8" PRIu64 "\n", name, h->sent, h->send_errors,
		       h->delivered, h->dups);
	}
	if (r->nhosts > TEXT_HOSTS_MAX)
		printf("            ... %u more (--json lists all)\n",
		       r->nhosts - TEXT_HOSTS_MAX);
	printf("expect      %u passed, %u failed, %u skipped\n", r->npassed,
	       r->nfailed, r->nskipped);
	for (unsigned i = 0; i < r->nchecks; i++) {
		const struct imc_scenario_check *c = &r->checks[i];

		imc_scn_format_time(c->at, t, sizeof(t));
		if (c->state == IMC_SCN_CHECK_SKIPPED)
			printf("  skip  line %-4u %s (at %s, after the end)\n",
			       c->line, c->text, t);
		else
			printf("  %-4s  line %-4u %s: observed %s at %s\n",
			       c->state == IMC_SCN_CHECK_PASS ? "ok" : "FAIL",
			       c->line, c->text, c->observed_str, t);
	}
	printf("\n");
	imc_scenario_report_print(r, stdout, false);
}

/* What the command line asked for. */
struct run_args {
	struct imc_scenario_run_opts ro;
	const char *pcap_path, *path;
	bool json, quiet, want_sa_show, want_mc_show;
};

/* Returns 0, or IMC_EXIT_USAGE (the message printed). */
static int parse_args(int argc, char **argv, struct run_args *a)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "until", required_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "sa-show", no_argument, NULL, 'S' },
		{ "mcast-show", no_argument, NULL, 'M' },
		{ "sm-wait", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct imc_scenario_run_opts *ro = &a->ro;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (ro->seed_set) {
				fprintf(stderr, "ibmcast run: --seed given twice\n");
				return IMC_EXIT_USAGE;
			}
			if (imc_opt_num("ibmcast run", "seed", optarg, 0,
					UINT64_MAX, &ro->seed))
				return IMC_EXIT_USAGE;
			ro->seed_set = true;
			break;
		case 'p':
			a->pcap_path = optarg;
			break;
		case 'u':
			if (ro->until_set) {
				fprintf(stderr, "ibmcast run: --until given twice\n");
				return IMC_EXIT_USAGE;
			}
			if (imc_opt_time("ibmcast run", "until", optarg, 0,
					 IMC_TIME_LIMIT, &ro->until))
				return IMC_EXIT_USAGE;
			ro->until_set = true;
			break;
		case 'j':
			a->json = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'S':
			a->want_sa_show = true;
			break;
		case 'M':
			a->want_mc_show = true;
			break;
		case 'W':
			if (imc_opt_time("ibmcast run", "sm-wait", optarg, 1,
					 IMC_TIME_LIMIT, &ro->sm_wait))
				return IMC_EXIT_USAGE;
			break;
		default:
			help(stderr);
			return IMC_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		help(stderr);
		return IMC_EXIT_USAGE;
	}
	a->path = argv[optind];
	return 0;
}

/* What a run holds besides its result: freed by run_free(). */
struct run_state {
	struct imc_scenario *s;
	struct imc_pcap *pc;
	struct imc_scn_sa_show *sa_show;
	struct imc_scn_mcast_show *mc_show;
};

static void run_free(struct run_state *st)
{
	imc_scn_mcast_show_destroy(st->mc_show);
	imc_scn_sa_show_destroy(st->sa_show);
	imc_scenario_destroy(st->s);
}

/* The scenario, the --sa-show and --mcast-show snapshots and the
 * capture file. Returns 0 or IMC_EXIT_USAGE (the message printed). */
static int run_prepare(struct run_args *a, struct run_state *st)
{
	char err[1024];
	int rc;

	rc = imc_scenario_parse_file(a->path, NULL, &st->s, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ibmcast run: %s\n", err);
		return IMC_EXIT_USAGE;
	}
	if (a->want_sa_show && (rc = imc_scn_sa_show_create(st->s,
							     &st->sa_show))) {
		fprintf(stderr, "ibmcast run: --sa-show: %s\n",
			rc == -ENOENT ? "the scenario has no sa line" :
			strerror(-rc));
		return IMC_EXIT_USAGE;
	}
	if (a->want_mc_show && (rc = imc_scn_mcast_show_create(st->s,
								&st->mc_show))) {
		fprintf(stderr, "ibmcast run: --mcast-show: %s\n",
			rc == -ENOENT ? "the scenario has no mcast-join line" :
			strerror(-rc));
		return IMC_EXIT_USAGE;
	}
	if (a->pcap_path) {
		rc = imc_pcap_open(a->pcap_path, &st->pc);
		if (rc < 0) {
			fprintf(stderr, "ibmcast run: %s: %s\n", a->pcap_path,
				strerror(-rc));
			return IMC_EXIT_USAGE;
		}
		a->ro.pcap = st->pc;
	}
	return 0;
}

static void print_result(const struct run_args *a, const struct run_state *st,
			 const struct imc_scenario_result *r)
{
	if (a->json)
		print_json(a->path, st->s, r, st->sa_show, st->mc_show);
	else if (!a->quiet)
		print_text(a->path, st->s, r);
	if (st->sa_show && !a->json) {
		if (!a->quiet)
			printf("\n");
		imc_scn_sa_show_print(st->sa_show, stdout, false);
	}
	if (st->mc_show && !a->json) {
		if (!a->quiet || st->sa_show)
			printf("\n");
		imc_scn_mcast_show_print(st->mc_show, stdout, false);
	}
	for (unsigned i = 0; i < r->nchecks; i++) {
		const struct imc_scenario_check *c = &r->checks[i];
		char t[32];

		if (c->state != IMC_SCN_CHECK_FAIL)
			continue;
		imc_scn_format_time(c->at, t, sizeof(t));
		fprintf(stderr,
			"expectation failed: %s:%u: %s: observed %s at %s "
			"(seed %" PRIu64 "; replay: ibmcast run %s --seed %" PRIu64 ")\n",
			a->path, c->line, c->text, c->observed_str, t, r->seed,
			a->path, r->seed);
	}
}

/* SIGINT and SIGTERM end the run at the end of the slice running
 * (interrupted()), so that the run frees what it holds, an opensm line's
 * OpenSM process and temporary directory too; the signal is raised again
 * once it has, for the exit status a signal gives. */
static volatile sig_atomic_t sig_got;

static void on_signal(int sig)
{
	sig_got = sig;
}

static int signals_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	return 0;
}

/* The default action of a signal caught during the run, now that the
 * run has freed everything. */
static void signals_reraise(void)
{
	int sig = sig_got;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (sig)
		raise(sig);
}

static bool on_interrupted(void *ctx)
{
	(void)ctx;
	return sig_got != 0;
}

static int run(int argc, char **argv)
{
	struct run_args a;
	struct run_state st;
	struct imc_scenario_result r;
	struct progress pr = { 0 };
	char err[1024];
	int rc, code;

	memset(&a, 0, sizeof(a));
	memset(&st, 0, sizeof(st));
	code = parse_args(argc, argv, &a);
	if (!code)
		code = run_prepare(&a, &st);
	if (code) {
		if (st.pc)
			imc_pcap_close(st.pc);
		run_free(&st);
		return code;
	}
	a.ro.wall_clock = wall_now;
	if (!a.json && !a.quiet && isatty(STDERR_FILENO)) {
		pr.start = pr.last = wall_now(NULL);
		a.ro.progress = on_progress;
	}
	a.ro.ctx = &pr;
	a.ro.interrupted = on_interrupted;
	if (signals_catch()) {
		fprintf(stderr, "ibmcast run: sigaction: %s\n", strerror(errno));
		run_free(&st);
		return IMC_EXIT_FAIL;
	}
	rc = imc_scenario_run(st.s, &a.ro, &r, err, sizeof(err));
	if (pr.shown)
		fprintf(stderr, "\r%60s\r", "");
	if (st.pc && imc_pcap_close(st.pc) < 0 && !rc) {
		fprintf(stderr, "ibmcast run: cannot write %s\n", a.pcap_path);
		imc_scenario_result_free(&r);
		run_free(&st);
		return IMC_EXIT_FAIL;
	}
	if (rc) {
		fprintf(stderr, "ibmcast run: %s\n", err);
		run_free(&st);
		/* An opensm line without OpenSM or umad2sim: nothing ran, as
		 * a test harness's skip (automake's 77) says. */
		return rc == -ENOPKG ? RUN_EXIT_SKIP : IMC_EXIT_FAIL;
	}
	print_result(&a, &st, &r);
	code = r.nfailed ? IMC_EXIT_FAIL : IMC_EXIT_OK;
	imc_scenario_result_free(&r);
	run_free(&st);
	signals_reraise();
	return code;
}

const struct imc_cmd imc_cmd_run = {
	.name = "run",
	.summary = "run a scenario on the embedded fabric and check its expectations",
	.run = run,
	.help = help,
};
