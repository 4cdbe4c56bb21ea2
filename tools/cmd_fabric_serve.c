/* ibmcast fabric serve: the embedded fabric behind ibsim's client
 * protocol, so that OpenSM and the infiniband-diags run on it through
 * libumad2sim (docs/opensm-fabric.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibmcast/fabric.h"
#include "ibmcast/fabric_mad.h"
#include "ibmcast/loop.h"
#include "ibmcast/opensm.h"
#include "ibmcast/sa_records.h"
#include "ibmcast/simserve.h"
#include "ibmcast/topo.h"
#include "fabric_ipoib.h"
#include "fabric_joins.h"
#include "sigwatch.h"
#include "tools.h"

#define PROG "ibmcast fabric serve"

/* SMP attributes read for --dump (IBA 14.2.5 Table 126). */
enum {
	ATTR_SWITCH_INFO = 0x0012,
	ATTR_PORT_INFO = 0x0015,
	ATTR_LFT = 0x0019,
};
/* OpenSM missing: what a test harness takes for a skip (automake's 77). */
#define EXIT_NO_OPENSM 77
#define MAX_OSM_ARGS 32

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast fabric serve NETFILE|SPEC [--sock NAME] [--node NODE]\n"
		"                            [--seed N] [--dump FILE] [--stats] [--verbose]\n"
		"                            [--control FIFO] [--joins P,G[,POLICY]] [--ipoib N]\n"
		"                            [--opensm [--osm-args \"ARGS\"] [--up-wait SECS]]\n"
		"\n"
		"Builds the embedded fabric from an ibnetdiscover/ibsim net file or a\n"
		"generator spec (switch:hosts=N, fat-tree:leaves=L,hosts=H,spines=S,\n"
		"fat-tree:pods=P,leaves=L,hosts=H,aggs=A,spines=S; docs/scenarios.md)\n"
		"and serves ibsim's client protocol on it, with no SM of its own: run\n"
		"OpenSM on it (--opensm, or by hand with LD_PRELOAD=libumad2sim.so and\n"
		"the printed exports), then saquery, smpquery, ibnetdiscover, ibroute,\n"
		"perfquery or ibmcast's umad tools the same way. Prints the shell\n"
		"exports a client needs (IBSIM_SOCKNAME, LD_PRELOAD) once the control\n"
		"socket is bound (with --opensm: once the subnet is up), then runs\n"
		"until SIGINT or SIGTERM.\n"
		"\n"
		"--opensm      start OpenSM on the served fabric (LD_PRELOAD=libumad2sim.so,\n"
		"              OSM_TMP_DIR, OSM_CACHE_DIR, osm.log and osm.out in a\n"
		"              private directory under TMPDIR, removed at exit) and print\n"
		"              the exports only once it has logged SUBNET UP and every\n"
		"              cabled port is ACTIVE, after a line on stderr: 'opensm: pid\n"
		"              PID SUBNET UP, every port ACTIVE after S s (DIR)'. On\n"
		"              SIGINT or SIGTERM OpenSM gets SIGTERM (SIGKILL 2 s later)\n"
		"              and is reaped before the command exits. The binary is\n"
		"              IBMCAST_OPENSM, else opensm on PATH; exit status 77 when\n"
		"              it or umad2sim is missing, 1 when OpenSM exits (then or\n"
		"              later) or does not bring the subnet up in time. --joins\n"
		"              and --ipoib start once the subnet is up\n"
		"--osm-args ARGS  extra OpenSM arguments, split at blanks (with --opensm)\n"
		"--up-wait SECS  how long OpenSM may take to bring the subnet up\n"
		"              (with --opensm; default 60)\n"
		"--sock NAME   socket base name (default IBSIM_SOCKNAME, else \"sim\")\n"
		"--node NODE   where a client that names no node attaches, OpenSM\n"
		"              started by --opensm too (default: the first node of the\n"
		"              net file, as ibsim; a generated fabric's first HCA)\n"
		"--seed N      the fabric's random streams (default 1)\n"
		"--dump FILE   on exit, write every port's LID and state and every\n"
		"              switch's LFT as the fabric holds them, one line each:\n"
		"              'port NODE PORT guid G lid L state S' and\n"
		"              'lft NODE LID PORT' (FILE '-' is stdout)\n"
		"--stats       on exit, print the server's counters (stderr)\n"
		"--verbose     a line on stderr for each client that attaches or goes\n"
		"--joins P,G[,paced|immediate]\n"
		"              join trackers on the first P HCAs (not the SM's), each a\n"
		"              FullMember of G groups ff15:1234:5707::1.., through the\n"
		"              SA of the port's SM (OpenSM's); they re-join on client\n"
		"              reregister with the given policy (default paced). Lines\n"
		"              on stderr: 'joins all N at MS', 'joins rejoining',\n"
		"              'joins back N after MS sent S retries R timeouts X failed F'\n"
		"--ipoib N     IPoIB on the first N HCAs (not the SM's), 10.0.0.1/8 up,\n"
		"              joined through the SA of the port's SM (OpenSM's); once\n"
		"              all have carrier every host pings every other and host 1\n"
		"              sends a UDP datagram to 239.1.1.1, which all listen to.\n"
		"              Lines on stderr: 'ipoib up N at MS', 'ipoib pings P\n"
		"              answered A at MS', 'ipoib mcast receivers R of M\n"
		"              duplicates D'. Not together with --joins.\n"
		"--control FIFO  read commands, one a line, from FIFO (made if absent):\n"
		"              'link NODE PORT down|up' pulls or plugs the cable at\n"
		"              NODE's PORT (both ports go DOWN, the switches' SMAs send\n"
		"              trap 128 to the SM); 'dump FILE' writes the --dump form\n"
		"              now. Each command answers 'ok ...' or 'error ...' on stderr.\n"
		"\n"
		"ibmcast fabric net NETFILE|SPEC writes the topology as a net file (the\n"
		"format ibsim and ibnetdiscover's topology files use) to stdout.\n"
		"\n"
		"The umad2sim path printed is %s, or\n"
		"IBMCAST_UMAD2SIM when set.\n", IMC_OPENSM_UMAD2SIM_DEFAULT);
}

struct opts {
	const char *source;
	const char *sock;
	const char *node;
	const char *dump;
	uint64_t seed;
	bool stats;
	bool verbose;
	const char *control;
	const char *joins;
	unsigned ipoib;
	bool opensm;
	uint64_t up_wait;          /* seconds */
	char *osm_argv[MAX_OSM_ARGS + 1];
	char osm_args[512];        /* osm_argv points into it */
};

/* --osm-args and --up-wait belong to --opensm; the arguments are split
 * at blanks (no quoting: OpenSM's options take no blanks). */
static int parse_opensm(struct opts *o, const char *args, const char *wait)
{
	size_t n = 0;
	char *tok, *save;

	if (!o->opensm && (args || wait)) {
		fprintf(stderr, PROG ": --%s needs --opensm\n",
			args ? "osm-args" : "up-wait");
		return -1;
	}
	if (!args)
		return 0;
	if (strlen(args) >= sizeof(o->osm_args)) {
		fprintf(stderr, PROG ": --osm-args: longer than %zu bytes\n",
			sizeof(o->osm_args) - 1);
		return -1;
	}
	strcpy(o->osm_args, args);
	for (tok = strtok_r(o->osm_args, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (n == MAX_OSM_ARGS) {
			fprintf(stderr, PROG ": --osm-args: more than %d "
				"arguments\n", MAX_OSM_ARGS);
			return -1;
		}
		o->osm_argv[n++] = tok;
	}
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "sock", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' },
		{ "dump", required_argument, NULL, 'd' },
		{ "stats", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "control", required_argument, NULL, 'c' },
		{ "joins", required_argument, NULL, 'j' },
		{ "ipoib", required_argument, NULL, 'i' },
		{ "opensm", no_argument, NULL, 'o' },
		{ "osm-args", required_argument, NULL, 'a' },
		{ "up-wait", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *osm_args = NULL, *up_wait = NULL;
	char *end;
	int ch;

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->up_wait = 60;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->sock = optarg;
			break;
		case 'n':
			o->node = optarg;
			break;
		case 'S':
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg) {
				fprintf(stderr, PROG ": bad --seed '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'd':
			o->dump = optarg;
			break;
		case 't':
			o->stats = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'c':
			o->control = optarg;
			break;
		case 'j':
			o->joins = optarg;
			break;
		case 'i':
			o->ipoib = (unsigned)strtoul(optarg, &end, 0);
			if (*end || o->ipoib < 2) {
				fprintf(stderr, PROG ": bad --ipoib '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'o':
			o->opensm = true;
			break;
		case 'a':
			osm_args = optarg;
			break;
		case 'u':
			up_wait = optarg;
			if (imc_opt_num(PROG, "up-wait", optarg, 1, 86400,
					&o->up_wait))
				return -1;
			break;
		case 'h':
			help(stdout);
			exit(IMC_EXIT_OK);
		default:
			return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": one NETFILE or SPEC expected\n");
		return -1;
	}
	if (o->joins && o->ipoib) {
		/* Both take the first HCAs' QP1 for their trackers. */
		fprintf(stderr, PROG ": --joins and --ipoib exclude each other\n");
		return -1;
	}
	o->source = argv[optind];
	return parse_opensm(o, osm_args, up_wait);
}

/* A generator spec names its shape before a colon; anything else is a
 * net file. */
static int load_topo(const char *src, struct imc_topo **t)
{
	char err[256] = "";
	int r;

	if (!strncmp(src, "fat-tree:", 9) || !strncmp(src, "switch:", 7))
		r = imc_topo_generate(src, t, err, sizeof(err));
	else
		r = imc_topo_parse_file(src, t, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, PROG ": %s\n", *err ? err : strerror(-r));
	return r;
}

/* u2s: the umad2sim OpenSM was started with, else NULL. */
static void print_exports(const struct imc_simserve *s, const char *u2s)
{
	const char *env = getenv("IBMCAST_UMAD2SIM");

	if (!u2s)
		u2s = env && *env ? env : IMC_OPENSM_UMAD2SIM_DEFAULT;
	printf("export IBSIM_SOCKNAME=%s\n", imc_simserve_sockname(s));
	printf("export LD_PRELOAD=%s\n", u2s);
	fflush(stdout);
}

/* --opensm: OpenSM on the served fabric, at the server's default node,
 * and the wait until it has brought the subnet up. Returns 0 or the
 * exit status; *osm is set even on failure (destroy it). A signal
 * during the wait (the loop stopped) is a clean end: -1. */
static int opensm_up(const struct opts *o, struct imc_simserve *s,
		     struct imc_fabric *f, struct imc_loop *loop,
		     struct imc_opensm **osm)
{
	struct imc_opensm_config oc;
	struct imc_opensm_status st;
	int r;

	imc_opensm_config_init(&oc);
	oc.args = (const char *const *)o->osm_argv;
	r = imc_opensm_create(s, f, loop, &oc, osm);
	if (r < 0) {
		fprintf(stderr, PROG ": opensm: %s\n", strerror(-r));
		return IMC_EXIT_FAIL;
	}
	r = imc_opensm_start(*osm);
	if (!r)
		r = imc_opensm_wait_up(*osm, o->up_wait * IMC_NSEC_PER_SEC);
	if (r == -EINTR)
		return -1;
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", imc_opensm_reason(*osm));
		return r == -ENOPKG ? EXIT_NO_OPENSM : IMC_EXIT_FAIL;
	}
	imc_opensm_get_status(*osm, &st);
	fprintf(stderr, "opensm: pid %ld SUBNET UP, every port ACTIVE after "
		"%.3f s (%s)\n", (long)st.pid, (double)st.up_time / 1e9,
		st.dir);
	return 0;
}

static const char *umad2sim_of(struct imc_opensm *osm)
{
	struct imc_opensm_status st;

	imc_opensm_get_status(osm, &st);
	return st.umad2sim;
}

/* Stops OpenSM before the command exits; 1 when it had exited by
 * itself before (the reason on stderr). */
static int opensm_down(struct imc_opensm *osm)
{
	struct imc_opensm_status st;

	if (!osm)
		return IMC_EXIT_OK;
	imc_opensm_get_status(osm, &st);
	if (st.state == IMC_OPENSM_EXITED) {
		fprintf(stderr, PROG ": %s\n", imc_opensm_reason(osm));
		return IMC_EXIT_FAIL;
	}
	imc_opensm_stop(osm);
	return IMC_EXIT_OK;
}

static void print_stats(const struct imc_simserve *s)
{
	struct imc_simserve_stats st;
	struct rusage ru;

	imc_simserve_get_stats(s, &st);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr,
		"stats ctl %" PRIu64 " ctl_errors %" PRIu64 " connects %" PRIu64
		" clients_max %u pkts_in %" PRIu64 " pkts_out %" PRIu64
		" bad %" PRIu64 " unrouted %" PRIu64 " dropped %" PRIu64
		" rx_batches %" PRIu64 " tx_batches %" PRIu64 " pauses %" PRIu64
		" queued_max %zu maxrss_kb %ld\n",
		st.ctl_requests, st.ctl_errors, st.connects, st.clients_max,
		st.pkts_in, st.pkts_out, st.pkts_bad, st.pkts_unrouted,
		st.pkts_dropped, st.rx_batches, st.tx_batches, st.pauses,
		st.queued_max, ru.ru_maxrss);
}

/* --dump: the state OpenSM left in the fabric, read through the SMAs so
 * that it is what an SMP would read: each port's LID and state (a CA's
 * ports, a switch's port 0) and each switch's LFT up to LinearFDBTop. */
static int dump_fabric(struct imc_fabric *f, FILE *out)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	uint8_t a[64];

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];
		bool sw = n->type == IMC_NODE_SWITCH;
		struct imc_port_info pi;
		unsigned top;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->nports); p++) {
			if (imc_fabric_sma_get(f, i, p, ATTR_PORT_INFO, p, a) ||
			    imc_port_info_unpack(&pi, a, sizeof(a)) < 0)
				continue;
			fprintf(out, "port 0x%016" PRIx64 " %s %u lid %u state %u\n",
				sw ? n->guid : n->port[p].guid, n->name, p,
				pi.lid, pi.state);
		}
		if (!sw || imc_fabric_sma_get(f, i, 0, ATTR_SWITCH_INFO, 0, a))
			continue;
		/* SwitchInfo:LinearFDBTop (IBA 14.2.5.4) */
		top = (unsigned)a[6] << 8 | a[7];
		for (unsigned b = 0; b <= top / 64 && top < 0xc000; b++) {
			if (imc_fabric_sma_get(f, i, 0, ATTR_LFT, b, a))
				break;
			for (unsigned k = 0; k < 64 && b * 64 + k <= top; k++)
				if (a[k] != 0xff)
					fprintf(out, "lft 0x%016" PRIx64 " %u %u\n",
						n->guid, b * 64 + k, a[k]);
		}
	}
	return ferror(out) ? -EIO : 0;
}

static int write_dump(struct imc_fabric *f, const char *path)
{
	FILE *out = strcmp(path, "-") ? fopen(path, "w") : stdout;
	int r;

	if (!out)
		return -errno;
	r = dump_fabric(f, out);
	if (out != stdout && fclose(out) && !r)
		r = -errno;
	return r;
}

/* --control: commands from a FIFO, read as the loop finds them. */
struct control {
	struct imc_fd_watch w;
	struct imc_fabric *f;
	int fd, keep;          /* keep: a writer of our own, so no EOF */
	size_t len;
	char buf[512];
};

static void control_line(struct control *c, char *line)
{
	const struct imc_topo *t = imc_fabric_topo(c->f);
	char node[IMC_TOPO_MAX_NAME + 1], state[8], path[256];
	unsigned port;
	uint32_t idx;
	int r;

	if (sscanf(line, "link %255s %u %7s", node, &port, state) == 3) {
		if (imc_topo_find(t, node, &idx) < 0 ||
		    (strcmp(state, "up") && strcmp(state, "down"))) {
			fprintf(stderr, "error %s: no such node or state\n", line);
			return;
		}
		r = imc_fabric_link_set(c->f, idx, port, !strcmp(state, "up"));
	} else if (sscanf(line, "dump %255s", path) == 1) {
		r = write_dump(c->f, path);
	} else {
		fprintf(stderr, "error %s: unknown command\n", line);
		return;
	}
	if (r < 0)
		fprintf(stderr, "error %s: %s\n", line, strerror(-r));
	else
		fprintf(stderr, "ok %s\n", line);
}

static void control_cb(struct imc_fd_watch *w, unsigned events)
{
	struct control *c = imc_container_of(w, struct control, w);
	ssize_t n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	char *nl;

	if (n <= 0)
		return;
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	while ((nl = strchr(c->buf, '\n'))) {
		*nl = 0;
		control_line(c, c->buf);
		c->len -= (size_t)(nl + 1 - c->buf);
		memmove(c->buf, nl + 1, c->len + 1);
	}
	if (c->len == sizeof(c->buf) - 1)
		c->len = 0;    /* a line longer than any command: dropped */
}

static int control_open(struct control *c, struct imc_loop *loop,
			struct imc_fabric *f, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->keep = -1;
	if (mkfifo(path, 0600) < 0 && errno != EEXIST)
		return -errno;
	c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	c->keep = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	imc_fd_watch_init(&c->w, c->fd, control_cb);
	return imc_loop_watch_fd(loop, &c->w, IMC_EV_READ);
}

static void control_close(struct control *c, struct imc_loop *loop)
{
	if (!c->f)
		return;
	imc_loop_unwatch_fd(loop, &c->w);
	if (c->fd >= 0)
		close(c->fd);
	if (c->keep >= 0)
		close(c->keep);
}

static int run_serve(const struct opts *o)
{
	struct fabric_joins_opts jo;
	struct fabric_joins *joins = NULL;
	struct fabric_ipoib *ipoib = NULL;
	struct control ctl;
	struct imc_fabric_config fc;
	struct imc_simserve_config sc;
	struct imc_simserve *s = NULL;
	struct imc_opensm *osm = NULL;
	struct imc_fabric *f = NULL;
	struct imc_loop *loop = NULL;
	struct imc_topo *t = NULL;
	struct sigwatch sw;
	int r, rc = IMC_EXIT_FAIL;

	memset(&sw, 0, sizeof(sw));
	memset(&ctl, 0, sizeof(ctl));
	if (o->joins && fabric_joins_parse(o->joins, &jo) < 0) {
		fprintf(stderr, PROG ": bad --joins '%s'\n", o->joins);
		return IMC_EXIT_USAGE;
	}
	if (load_topo(o->source, &t) < 0)
		return IMC_EXIT_USAGE;
	imc_simserve_config_init(&sc);
	sc.sockname = o->sock;
	sc.log = o->verbose ? stderr : NULL;
	if (o->node && imc_topo_find(t, o->node, &sc.default_node) < 0) {
		fprintf(stderr, PROG ": no node '%s'\n", o->node);
		imc_topo_destroy(t);
		return IMC_EXIT_USAGE;
	}
	imc_fabric_config_default(&fc);
	fc.seed = o->seed;
	/* OpenSM assigns LIDs and programs the switches: the fabric's own
	 * SM and SA step aside. */
	fc.external_sm = true;
	r = imc_loop_create_realtime(&loop);
	if (r == 0)
		r = sigwatch_start(&sw, loop, NULL) < 0 ? -errno : 0;
	if (r == 0)
		r = imc_fabric_create(t, loop, &fc, &f);
	if (r == 0)
		r = imc_fabric_bring_up(f);
	if (r < 0) {
		fprintf(stderr, PROG ": fabric: %s\n", strerror(-r));
		goto out;
	}
	r = imc_simserve_create(f, loop, &sc, &s);
	if (r < 0) {
		fprintf(stderr, PROG ": cannot serve: %s%s\n", strerror(-r),
			r == -EADDRINUSE ? " (another simulator uses the name)"
					 : "");
		goto out;
	}
	if (o->control && (r = control_open(&ctl, loop, f, o->control)) < 0) {
		fprintf(stderr, PROG ": control %s: %s\n", o->control,
			strerror(-r));
		goto out;
	}
	if (o->opensm && (r = opensm_up(o, s, f, loop, &osm)) != 0) {
		rc = r < 0 ? IMC_EXIT_OK : r;
		goto out;
	}
	if (o->joins && (r = fabric_joins_start(f, &jo, &joins)) < 0) {
		fprintf(stderr, PROG ": joins: %s\n", strerror(-r));
		goto out;
	}
	if (o->ipoib && (r = fabric_ipoib_start(f, o->ipoib, &ipoib)) < 0) {
		fprintf(stderr, PROG ": ipoib: %s\n", strerror(-r));
		goto out;
	}
	print_exports(s, osm ? umad2sim_of(osm) : NULL);
	r = imc_loop_run(loop);
	if (r < 0) {
		fprintf(stderr, PROG ": loop: %s\n", strerror(-r));
		goto out;
	}
	rc = opensm_down(osm);
	if (o->stats)
		print_stats(s);
	if (o->dump && (r = write_dump(f, o->dump)) < 0) {
		fprintf(stderr, PROG ": dump %s: %s\n", o->dump, strerror(-r));
		rc = IMC_EXIT_FAIL;
	}
out:
	fabric_ipoib_stop(ipoib);
	fabric_joins_stop(joins);
	imc_opensm_destroy(osm);
	control_close(&ctl, loop);
	imc_simserve_destroy(s);
	imc_fabric_destroy(f);
	sigwatch_stop(&sw);
	if (loop)
		imc_loop_destroy(loop);
	imc_topo_destroy(t);
	return rc;
}

/* ibmcast fabric net SPEC|NETFILE: the topology as a net file, for ibsim
 * and for comparing with what ibnetdiscover finds. */
static int run_net(int argc, char **argv)
{
	struct imc_topo *t = NULL;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: ibmcast fabric net NETFILE|SPEC\n");
		return IMC_EXIT_USAGE;
	}
	if (load_topo(argv[1], &t) < 0)
		return IMC_EXIT_USAGE;
	r = imc_topo_write(t, stdout);
	imc_topo_destroy(t);
	if (r < 0 || fflush(stdout)) {
		fprintf(stderr, "ibmcast fabric net: %s\n",
			strerror(r < 0 ? -r : errno));
		return IMC_EXIT_FAIL;
	}
	return IMC_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct opts o;

	if (argc >= 2 && !strcmp(argv[1], "net"))
		return run_net(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		help(stdout);
		return IMC_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "serve")) {
		fprintf(stderr, "usage: ibmcast fabric serve|net ... "
				"(ibmcast fabric --help)\n");
		return IMC_EXIT_USAGE;
	}
	if (parse(argc - 1, argv + 1, &o) < 0)
		return IMC_EXIT_USAGE;
	return run_serve(&o);
}

static void help_top(FILE *f)
{
	fprintf(f, "usage: ibmcast fabric serve NETFILE|SPEC [OPTIONS]\n"
		   "       ibmcast fabric net NETFILE|SPEC\n");
}

const struct imc_cmd imc_cmd_fabric = {
	.name = "fabric",
	.summary = "serve the embedded fabric to OpenSM and the diags (ibsim protocol)",
	.run = run,
	.help = help_top,
	.own_help = true,
	.help_all = help,
};
