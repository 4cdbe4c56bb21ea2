/* ibmcastd: the host's multicast join service (ibmcastd.h). Its own
 * executable rather than an `ibmcast` subcommand: the daemon runs as root
 * under systemd with a narrow job, and links no tool code. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "ibmcast/sa_client.h"
#include "ibmcastd.h"

static void help(FILE *f)
{
	fprintf(f,
"usage: ibmcastd [OPTIONS]\n"
"\n"
"The host's multicast join service: holds, for every process of the host,\n"
"the SA memberships of the local ports through one join tracker per port\n"
"(libibumad), so that a port holds one membership per group whatever the\n"
"number of processes using it. Processes connect to its Unix socket\n"
"(libibmcast's imc_mcastd_*; `ibmcast join` does when it runs). Runs in\n"
"the foreground; logs to stderr.\n"
"\n"
"Options:\n"
"  --runtime-dir DIR    socket and port locks (default /run/ibmcast)\n"
"  --socket PATH        the socket (default RUNTIME_DIR/ibmcastd.sock)\n"
"  --group G            the socket's group and the default policy's\n"
"                       (name or number; default ibmcast when it exists,\n"
"                       else root only)\n"
"  --mode OCTAL         the socket's mode (default 0660)\n"
"  --policy FILE        who may join what (default: root and the group\n"
"                       everything, nobody else anything); SIGHUP reloads\n"
"  --log-level L        err, warn, info (default), debug\n"
"  --port [DEV:]N       a port to serve (repeatable; default every active\n"
"                       port)\n"
"  --max-conns-per-uid N, --max-conns N, --max-members N, --max-in-flight N\n"
"                       per-uid and total connections, members and joins in\n"
"                       flight per connection (default 64, 1024, 4096, 256)\n"
"  --grace SECS         after a start, how long clients may take to re-join\n"
"                       before memberships nobody wants are deleted\n"
"                       (default 5)\n"
"  --audit SECS         membership audit period (default 10, 0 off)\n"
"  --poll SECS          port polling period (default 1)\n"
"  --watch W            auto, verbs, poll, none (default auto)\n"
"  --timeout MS, --retries N\n"
"                       the SA client's first timeout and retries\n"
"  --sm-key KEY         SM_Key of the restart audit's queries (an SA\n"
"                       shows PortGID and JoinState to a requester with\n"
"                       the key only; OpenSM's default is 1; default 0)\n"
"\n"
"Signals: SIGHUP reloads the policy (a bad file keeps the old policy);\n"
"SIGTERM or SIGINT: clients are asked to detach, every member is left and\n"
"the SA's Deletes answered (or timed out), then exit 0; a second one exits\n"
"at once.\n"
"\n"
"Exit: 0 after a clean stop, 1 on a start-up error, 2 bad usage.\n");
}

enum {
	OPT_RUNTIME_DIR = 256, OPT_SOCKET, OPT_GROUP, OPT_MODE, OPT_POLICY,
	OPT_LOG_LEVEL, OPT_PORT, OPT_CONNS_UID, OPT_CONNS, OPT_MEMBERS,
	OPT_IN_FLIGHT, OPT_GRACE, OPT_AUDIT, OPT_POLL, OPT_WATCH, OPT_TIMEOUT,
	OPT_RETRIES, OPT_SM_KEY, OPT_HELP,
};

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "ibmcastd: %s%s%s%s (try 'ibmcastd --help')\n", what,
		arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
	return 2;
}

static int num(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out, int base)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	*out = strtoul(s, &end, base);
	return errno || *end || *out < min || *out > max ? -EINVAL : 0;
}

static int secs(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || *end || end == s || !(*out >= 0 && *out <= 86400.0) ?
	       -EINVAL : 0;
}

static int parse_port(const char *s, struct port_spec *p)
{
	const char *colon = strrchr(s, ':');
	unsigned long v;

	memset(p, 0, sizeof(*p));
	if (colon) {
		size_t n = (size_t)(colon - s);

		if (!n || n >= sizeof(p->device))
			return -EINVAL;
		memcpy(p->device, s, n);
		s = colon + 1;
	}
	if (num(s, 1, 254, &v, 10))
		return -EINVAL;
	p->port = (unsigned)v;
	return 0;
}

static int parse_watch(const char *s, enum imc_mcast_umad_watch *w)
{
	static const char *const names[] = { "auto", "verbs", "poll", "none" };

	for (size_t i = 0; i < IMC_ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*w = (enum imc_mcast_umad_watch)i;
			return 0;
		}
	return -EINVAL;
}

static void defaults(struct daemon_opts *o)
{
	struct imc_mcastd_server_config sc;

	imc_mcastd_server_config_init(&sc);
	memset(o, 0, sizeof(*o));
	o->runtime_dir = "/run/ibmcast";
	o->mode = 0660;
	o->level = IMC_MCASTD_LOG_INFO;
	o->limits = sc.limits;
	o->grace = 5;
	o->audit = 10;
	o->poll = 1;
	o->timeout = IMC_SA_DEFAULT_TIMEOUT;
	o->retries = IMC_SA_DEFAULT_RETRIES;
	o->watch = IMC_MCAST_UMAD_WATCH_AUTO;
}

/* One option; returns 0, or 2 after the usage message. */
static int take_opt(struct daemon_opts *o, int ch, const char *arg)
{
	unsigned long v = 0;
	int bad = 0;

	switch (ch) {
	case OPT_RUNTIME_DIR: o->runtime_dir = arg; break;
	case OPT_SOCKET: o->socket = arg; break;
	case OPT_GROUP: o->group = arg; break;
	case OPT_MODE:
		bad = num(arg, 0, 0777, &v, 8);
		o->mode = (unsigned)v;
		break;
	case OPT_POLICY: o->policy = arg; break;
	case OPT_LOG_LEVEL: bad = dlog_parse_level(arg, &o->level); break;
	case OPT_PORT:
		if (o->n_ports == IBMCASTD_MAX_PORTS)
			return usage_error("too many --port", arg);
		bad = parse_port(arg, &o->ports[o->n_ports++]);
		break;
	case OPT_CONNS_UID:
		bad = num(arg, 1, 1u << 20, &v, 10);
		o->limits.conns_per_uid = (unsigned)v;
		break;
	case OPT_CONNS:
		bad = num(arg, 1, 1u << 20, &v, 10);
		o->limits.conns = (unsigned)v;
		break;
	case OPT_MEMBERS:
		bad = num(arg, 1, 1u << 24, &v, 10);
		o->limits.members = (unsigned)v;
		break;
	case OPT_IN_FLIGHT:
		bad = num(arg, 1, 1u << 20, &v, 10);
		o->limits.in_flight = (unsigned)v;
		break;
	case OPT_GRACE: bad = secs(arg, &o->grace); break;
	case OPT_AUDIT: bad = secs(arg, &o->audit); break;
	case OPT_POLL: bad = secs(arg, &o->poll); break;
	case OPT_WATCH: bad = parse_watch(arg, &o->watch); break;
	case OPT_TIMEOUT:
		bad = num(arg, 1, 3600000, &v, 10);
		o->timeout = (imc_time_t)v * IMC_NSEC_PER_MSEC;
		break;
	case OPT_RETRIES:
		bad = num(arg, 0, 100, &v, 10);
		o->retries = (unsigned)v;
		break;
	case OPT_SM_KEY: {
		char *end;

		errno = 0;
		o->sm_key = strtoull(arg, &end, 0);
		bad = errno || !*arg || *end || *arg == '-';
		break;
	}
	default:
		return usage_error("unknown option or missing value", NULL);
	}
	return bad ? usage_error("bad value", arg) : 0;
}

static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	static const struct option lo[] = {
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "max-conns-per-uid", required_argument, NULL, OPT_CONNS_UID },
		{ "max-conns", required_argument, NULL, OPT_CONNS },
		{ "max-members", required_argument, NULL, OPT_MEMBERS },
		{ "max-in-flight", required_argument, NULL, OPT_IN_FLIGHT },
		{ "grace", required_argument, NULL, OPT_GRACE },
		{ "audit", required_argument, NULL, OPT_AUDIT },
		{ "poll", required_argument, NULL, OPT_POLL },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "retries", required_argument, NULL, OPT_RETRIES },
		{ "sm-key", required_argument, NULL, OPT_SM_KEY },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int ch, r;

	defaults(o);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (ch == OPT_HELP || ch == 'h') {
			help(stdout);
			exit(0);
		}
		if (ch == '?')
			return usage_error("unknown option or missing value",
					   argv[optind - 1]);
		r = take_opt(o, ch, optarg);
		if (r)
			return r;
	}
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	return 0;
}

/* ---- signals ---- */

void daemon_set_state(struct daemon *d, enum daemon_state next)
{
	static const bool ok[3][3] = {
		[DAEMON_STARTING] = { [DAEMON_RUNNING] = true,
				      [DAEMON_STOPPING] = true },
		[DAEMON_RUNNING] = { [DAEMON_STOPPING] = true },
	};

	if (!ok[d->state][next]) {
		dlog(IMC_MCASTD_LOG_ERR, "bad state change %d -> %d", d->state,
		     next);
		abort();
	}
	d->state = next;
}

static void on_shutdown_done(void *arg, int status)
{
	struct daemon *d = arg;

	if (status < 0)
		dlog(IMC_MCASTD_LOG_WARN, "stopped with Deletes unanswered: %s",
		     strerror(-status));
	else
		dlog(IMC_MCASTD_LOG_INFO, "every member left, every Delete "
		     "answered");
	imc_loop_stop(d->loop);
}

static void stop(struct daemon *d, int sig)
{
	int r;

	if (d->state == DAEMON_STOPPING) {
		dlog(IMC_MCASTD_LOG_WARN, "%s again: exiting now",
		     strsignal(sig));
		d->exit_code = 1;
		imc_loop_stop(d->loop);
		return;
	}
	daemon_set_state(d, DAEMON_STOPPING);
	daemon_notify("STOPPING=1");
	dlog(IMC_MCASTD_LOG_INFO, "%s: leaving every member", strsignal(sig));
	daemon_unlisten(d);
	r = imc_mcastd_server_shutdown(d->srv, on_shutdown_done, d);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "shutdown: %s", strerror(-r));
		imc_loop_stop(d->loop);
	}
}

static void reload(struct daemon *d)
{
	unsigned revoked;

	daemon_notify("RELOADING=1");
	if (daemon_load_policy(d, true) == 0) {
		revoked = imc_mcastd_server_reauthorize(d->srv);
		dlog(IMC_MCASTD_LOG_INFO, "policy applied: %u member%s revoked",
		     revoked, revoked == 1 ? "" : "s");
	}
	daemon_notify("READY=1");
}

static void on_signal(struct imc_fd_watch *w, unsigned int events)
{
	struct daemon *d = imc_container_of(w, struct daemon, sig_watch);
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			reload(d);
		else
			stop(d, (int)si.ssi_signo);
	}
}

static int watch_signals(struct daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	d->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sig_fd < 0)
		return -errno;
	imc_fd_watch_init(&d->sig_watch, d->sig_fd, on_signal);
	return imc_loop_watch_fd(d->loop, &d->sig_watch, IMC_EV_READ);
}

/* ---- main ---- */

static void server_log(void *ctx, enum imc_mcastd_log_level lvl,
		       const char *msg)
{
	dlog(lvl, "%s", msg);
}

static int start(struct daemon *d)
{
	struct imc_mcastd_server_config sc;
	int r;

	r = imc_loop_create_realtime(&d->loop);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "loop: %s", strerror(-r));
		return r;
	}
	r = watch_signals(d);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "signals: %s", strerror(-r));
		return r;
	}
	r = daemon_resolve_group(d);
	if (r == 0)
		r = daemon_load_policy(d, false);
	if (r < 0)
		return r;
	imc_mcastd_server_config_init(&sc);
	sc.limits = d->o.limits;
	sc.grace = (imc_time_t)(d->o.grace * 1e9);
	sc.sm_key = d->o.sm_key;
	sc.authorize = daemon_authorize;
	sc.log = server_log;
	sc.ctx = d;
	r = imc_mcastd_server_create(d->loop, &sc, &d->srv);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "server: %s", strerror(-r));
		return r;
	}
	r = daemon_open_ports(d);
	if (r == 0)
		r = daemon_listen(d);
	return r;
}

static void finish(struct daemon *d)
{
	daemon_unlisten(d);
	imc_mcastd_server_destroy(d->srv);
	daemon_close_ports(d);
	imc_mcastd_policy_destroy(d->policy);
	if (d->sig_fd >= 0) {
		if (d->loop)
			imc_loop_unwatch_fd(d->loop, &d->sig_watch);
		close(d->sig_fd);
	}
	if (d->loop)
		imc_loop_destroy(d->loop);
}

int main(int argc, char **argv)
{
	struct daemon d;
	int r;

	memset(&d, 0, sizeof(d));
	d.listen_fd = d.sig_fd = -1;
	r = parse_args(argc, argv, &d.o);
	if (r)
		return r;
	dlog_set_level(d.o.level);
	if (start(&d) < 0) {
		finish(&d);
		return 1;
	}
	dlog(IMC_MCASTD_LOG_INFO, "listening on %s (mode %04o%s%s), %zu "
	     "port%s", d.sock_path, d.o.mode, d.has_gid ? ", group " : "",
	     d.has_gid ? (d.o.group ? d.o.group : "ibmcast") : "",
	     d.n_ports, d.n_ports == 1 ? "" : "s");
	daemon_set_state(&d, DAEMON_RUNNING);
	daemon_notify("READY=1");
	/* The loop stops when the shutdown is done (or a second signal). */
	r = imc_loop_run(d.loop);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "loop: %s", strerror(-r));
		d.exit_code = 1;
	}
	finish(&d);
	dlog(IMC_MCASTD_LOG_INFO, "exit %d", d.exit_code);
	return d.exit_code;
}
