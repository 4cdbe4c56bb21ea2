/* The `opensm` setting: the scenario's fabric is served with ibsim's
 * client protocol (src/simserve) on a real-time loop and the real
 * OpenSM, started here through LD_PRELOAD=libumad2sim.so, is its SM and
 * SA: the fabric's own SM and SA step aside (external_sm), OpenSM
 * assigns the LIDs and writes the LFTs and MFTs, and the hosts' SA MADs
 * go to OpenSM's SA at the SM LID of their PortInfo.
 *
 *   opensm [wait=TIME] [hold=TIME] [node=NODE]
 *
 * wait bounds the wait for SUBNET UP (default 60s), hold keeps the
 * fabric served after the end of the run so that saquery & co. can read
 * OpenSM's state (a line on stderr gives the exports; the hold ends
 * early when DIR/release appears), node is where OpenSM attaches
 * (SIM_HOST; default the server's default node, the first of the
 * topology).
 *
 * OpenSM runs in a private directory (its OSM_TMP_DIR and OSM_CACHE_DIR,
 * umad2sim's fake sysfs, osm.log), on a private socket name unless
 * IBSIM_SOCKNAME is set. The opensm binary is IBMCAST_OPENSM, else
 * "opensm" on PATH; umad2sim is IBMCAST_UMAD2SIM, else Debian's path.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibmcast/simserve.h"
#include "scenario/scn.h"
#include "scenario/scn_served.h"

#define U2S_DEFAULT "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
#define WAIT_DEFAULT (60 * IMC_NSEC_PER_SEC)
#define POLL (50 * IMC_NSEC_PER_MSEC)
#define TERM_GRACE (2 * IMC_NSEC_PER_SEC)

struct scn_served_cfg {
	imc_time_t wait;         /* 0: WAIT_DEFAULT */
	imc_time_t hold;
	bool has_node;
	uint32_t node;
};

struct scn_served {
	const struct scn_served_cfg *cfg;
	struct imc_fabric *f;
	struct imc_loop *loop;
	struct imc_simserve *srv;
	pid_t pid;
	char dir[256];
	char u2s[512];
	long log_off;            /* osm.log read up to here */
	bool subnet_up;
	imc_time_t up_time;
	uint32_t node;           /* where OpenSM attached */
	unsigned restarts;       /* opensm-restart lines run */
};

/* ---- the setting ---- */

static int served_parse(struct imc_scn_parser *p, unsigned argc,
			const char *const *argv, void **data)
{
	struct scn_served_cfg *c;
	const char *v;
	int rc = scn_words_unique(p, argc, argv);

	if (rc)
		return rc;
	if (scn_served_cfg(p->s))
		return imc_scn_parse_error(p, "a second opensm line");
	c = calloc(1, sizeof(*c));
	if (!c)
		return imc_scn_parse_error(p, "out of memory");
	*data = c;
	for (unsigned i = 0; i < argc; i++) {
		unsigned port;

		if (imc_scn_kv(argv[i], "wait", &v))
			rc = imc_scn_parse_time(p, "wait", v, &c->wait);
		else if (imc_scn_kv(argv[i], "hold", &v))
			rc = imc_scn_parse_time(p, "hold", v, &c->hold);
		else if (imc_scn_kv(argv[i], "node", &v)) {
			rc = imc_scn_parse_port(p, v, false, &c->node, &port);
			c->has_node = true;
		} else
			rc = imc_scn_parse_error(p, "unknown option '%s' "
				"(wait=TIME, hold=TIME, node=NODE)", argv[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void served_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct scn_served_cfg *c = data;

	if (c->wait) {
		fprintf(f, " wait=");
		imc_scn_print_time(f, c->wait);
	}
	if (c->hold) {
		fprintf(f, " hold=");
		imc_scn_print_time(f, c->hold);
	}
	if (c->has_node) {
		fprintf(f, " node=");
		scn_print_name(f, t->node[c->node].name);
	}
}

/* No run function: the runner reads the line before it makes the
 * fabric, which must know that its SM is external. */
static const struct imc_scn_verb verb_opensm = {
	.name = "opensm", .kind = IMC_SCN_SETTING, .parse = served_parse,
	.print = served_print, .free = free,
};

/* opensm-restart: OpenSM killed (SIGKILL) and started again on the
 * same node, as a crashed SM restarted: the new one sweeps, keeps the
 * LIDs it finds in the ports, and sets ClientReregister on every port
 * (IBA 14.4.11), so that the hosts join again. Does not wait for it. */
static int osm_spawn(struct scn_served *sv, const char *node, char *msg,
		     size_t msglen);

static int restart_parse(struct imc_scn_parser *p, unsigned argc,
			 const char *const *argv, void **data)
{
	(void)argv;
	(void)data;
	if (argc)
		return imc_scn_parse_error(p, "expected 'opensm-restart' alone");
	return 0;
}

static void restart_print(FILE *f, const struct imc_topo *t, const void *data)
{
	(void)f;
	(void)t;
	(void)data;
}

static int restart_run(struct imc_scn_ctx *c, void *data)
{
	struct scn_served *sv = scn_ctx_served(c);
	char msg[256] = "";
	int rc;

	(void)data;
	if (!sv)
		return imc_scn_fail(c, -ENOENT,
				    "no OpenSM runs: the scenario has no opensm line");
	if (sv->pid > 0) {
		kill(sv->pid, SIGKILL);
		waitpid(sv->pid, NULL, 0);
		sv->pid = 0;
	}
	rc = osm_spawn(sv, sv->cfg->has_node ?
		       imc_scn_topo(c)->node[sv->node].name : NULL,
		       msg, sizeof(msg));
	if (rc)
		return imc_scn_fail(c, rc, "%s", msg[0] ? msg : strerror(-rc));
	sv->restarts++;
	return 0;
}

static const struct imc_scn_verb verb_restart = {
	.name = "opensm-restart", .kind = IMC_SCN_ACTION,
	.parse = restart_parse, .print = restart_print, .run = restart_run,
};

/* The report's opensm section: where OpenSM ran and how long it took
 * to bring the subnet up; absent from runs without an opensm line. */
static int served_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	const struct scn_served *sv = scn_ctx_served(c);
	const char *node;

	if (!sv)
		return 0;
	node = imc_scn_topo(c)->node[sv->node].name;
	imc_scn_report_str(rep, "node", node);
	imc_scn_report_u64(rep, "subnet_up_ns", sv->up_time);
	imc_scn_report_u64(rep, "restarts", sv->restarts);
	imc_scn_report_line(rep, "OpenSM at %s: SUBNET UP, every port ACTIVE "
			    "after %.3f s; it was the SM and the SA", node,
			    (double)sv->up_time / 1e9);
	return 0;
}

static const struct imc_scn_section section_opensm = {
	.name = "opensm", .rank = 50, .report = served_report,
};

int scn_lang_add_served(struct imc_scn_lang *l)
{
	int rc = imc_scn_lang_add_verb(l, &verb_opensm);

	if (!rc)
		rc = imc_scn_lang_add_verb(l, &verb_restart);
	return rc ? rc : imc_scn_lang_add_section(l, &section_opensm);
}

const struct scn_served_cfg *scn_served_cfg(const struct imc_scenario *s)
{
	for (unsigned i = 0; i < s->nsettings; i++)
		if (!strcmp(s->settings[i].verb->name, verb_opensm.name))
			return s->settings[i].data;
	return NULL;
}

/* ---- OpenSM ---- */

/* An executable on PATH, or name itself when it holds a '/'. */
static int find_exec(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) ? -ENOENT : 0;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(out, len, "%.*s/%s", (int)n, path, name);
		if (n && !access(out, X_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/* OpenSM's environment: the caller's, with the variables umad2sim and
 * OpenSM read set for this run (made before fork(): the child only
 * calls what is async-signal-safe). */
static char **make_env(const struct scn_served *sv, const char *node,
		       size_t *first)
{
	static const char *const keys[] = {
		"IBSIM_SOCKNAME=", "OSM_TMP_DIR=", "OSM_CACHE_DIR=",
		"LD_PRELOAD=", "SIM_HOST=",
	};
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;
	bool ours;

	while (environ[n])
		n++;
	env = calloc(n + 6, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		ours = false;
		for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
			ours |= !strncmp(environ[i], keys[j], strlen(keys[j]));
		if (!ours)
			env[k++] = environ[i];
	}
	*first = k;
	if (asprintf(&env[k++], "IBSIM_SOCKNAME=%s",
		     imc_simserve_sockname(sv->srv)) < 0 ||
	    asprintf(&env[k++], "OSM_TMP_DIR=%s", sv->dir) < 0 ||
	    asprintf(&env[k++], "OSM_CACHE_DIR=%s", sv->dir) < 0 ||
	    asprintf(&env[k++], "LD_PRELOAD=%s", sv->u2s) < 0 ||
	    (node && asprintf(&env[k++], "SIM_HOST=%s", node) < 0)) {
		env[k - 1] = NULL;
		/* The ones made are leaked: out of memory already. */
		free(env);
		return NULL;
	}
	return env;
}

static void env_free(char **env, size_t first)
{
	for (size_t i = first; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* In the child. OpenSM goes when the run does, however it ends. */
static void child_exec(const struct scn_served *sv, const char *osm,
		       const char *out, const char *log, char **env)
{
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	if (chdir(sv->dir) < 0)
		_exit(127);
	/* -d2: OpenSM flushes its log after each message, so SUBNET UP is
	 * seen when it is written. */
	execve(osm, (char *const[]){ (char *)osm, "-d2", "-f", (char *)log,
				     NULL }, env);
	_exit(127);
}

static int osm_spawn(struct scn_served *sv, const char *node, char *msg,
		     size_t msglen)
{
	const char *osm_env = getenv("IBMCAST_OPENSM");
	const char *u2s = getenv("IBMCAST_UMAD2SIM");
	char osm[512], out[300], log[300];
	char **env;
	size_t first;
	pid_t pid;
	int rc;

	if (find_exec(osm_env && *osm_env ? osm_env : "opensm", osm,
		      sizeof(osm))) {
		snprintf(msg, msglen, "opensm not found (install opensm or "
			 "set IBMCAST_OPENSM)");
		return -ENOPKG;
	}
	snprintf(sv->u2s, sizeof(sv->u2s), "%s", u2s && *u2s ? u2s :
		 U2S_DEFAULT);
	if (access(sv->u2s, R_OK)) {
		snprintf(msg, msglen, "umad2sim not found at %s (install "
			 "libumad2sim0 or set IBMCAST_UMAD2SIM)", sv->u2s);
		return -ENOPKG;
	}
	snprintf(out, sizeof(out), "%s/osm.out", sv->dir);
	snprintf(log, sizeof(log), "%s/osm.log", sv->dir);
	env = make_env(sv, node, &first);
	if (!env)
		return -ENOMEM;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child_exec(sv, osm, out, log, env);
	rc = pid < 0 ? -errno : 0;
	env_free(env, first);
	if (rc)
		return rc;
	sv->pid = pid;
	return 0;
}

/* Reads what OpenSM appended to osm.log since the last call; true once
 * it has logged SUBNET UP. */
static bool log_says_up(struct scn_served *sv)
{
	char path[300], buf[4096];
	FILE *f;
	size_t n;

	if (sv->subnet_up)
		return true;
	snprintf(path, sizeof(path), "%s/osm.log", sv->dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* Step back so that a line cut by the last read is seen whole. */
	if (sv->log_off > 64)
		fseek(f, sv->log_off - 64, SEEK_SET);
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
		buf[n] = 0;
		if (memmem(buf, n, "SUBNET UP", 9))
			sv->subnet_up = true;
		if (n > 64)
			fseek(f, -64, SEEK_CUR);
		if (n < sizeof(buf) - 1)
			break;
	}
	sv->log_off = ftell(f);
	fclose(f);
	return sv->subnet_up;
}

/* Every cabled port ACTIVE with a LID (IBA 14.4: the SM has configured
 * the subnet), a switch's through its port 0. */
static bool all_active(const struct scn_served *sv)
{
	const struct imc_topo *t = imc_fabric_topo(sv->f);
	struct imc_port_attr pa;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			if (imc_fabric_port_attr(sv->f, i, p, &pa) ||
			    pa.state == IMC_PORT_DOWN)
				continue;
			if (pa.state != IMC_PORT_ACTIVE ||
			    (n->type == IMC_NODE_HCA && !pa.lid))
				return false;
		}
	}
	return true;
}

/* The child's state: 0 running, else -ECHILD with the reason in msg
 * (when msg is not NULL). */
static int osm_check(struct scn_served *sv, char *msg, size_t msglen)
{
	int st;

	if (sv->pid <= 0 || waitpid(sv->pid, &st, WNOHANG) != sv->pid)
		return 0;
	sv->pid = 0;
	if (msg)
		snprintf(msg, msglen, "opensm exited (%s %d; see %s/osm.out)",
			 WIFEXITED(st) ? "status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 sv->dir);
	return -ECHILD;
}

static int wait_up(struct scn_served *sv, imc_time_t wait, char *msg,
		   size_t msglen)
{
	imc_time_t t0 = imc_loop_now(sv->loop), now = t0;
	int rc;

	while (!log_says_up(sv) || !all_active(sv)) {
		if (now - t0 >= wait) {
			snprintf(msg, msglen, "OpenSM did not bring the subnet "
				 "up in %.1f s (%s; see %s/osm.log)",
				 (double)wait / 1e9, sv->subnet_up ?
				 "SUBNET UP, but ports not ACTIVE" :
				 "no SUBNET UP", sv->dir);
			return -ETIMEDOUT;
		}
		rc = imc_loop_run_until(sv->loop, now + POLL);
		if (rc < 0)
			return rc;
		rc = osm_check(sv, msg, msglen);
		if (rc)
			return rc;
		now = imc_loop_now(sv->loop);
	}
	sv->up_time = now - t0;
	return 0;
}

/* The server, on a private socket name unless IBSIM_SOCKNAME is set
 * (parallel runs never meet), OpenSM's node its default node. */
static int serve(struct scn_served *sv, const char **node, char *msg,
		 size_t msglen)
{
	const struct imc_topo *t = imc_fabric_topo(sv->f);
	struct imc_simserve_config sc;
	char name[48];
	int rc;

	imc_simserve_config_init(&sc);
	if (!getenv("IBSIM_SOCKNAME")) {
		snprintf(name, sizeof(name), "imcscn%ld", (long)getpid());
		sc.sockname = name;     /* copied by the server */
	}
	*node = NULL;
	if (sv->cfg->has_node) {
		sc.default_node = sv->cfg->node;
		*node = t->node[sv->cfg->node].name;
	}
	/* The server's default: the topology's SM node, else the first. */
	sv->node = sv->cfg->has_node ? sv->cfg->node :
		   t->sm_node < t->nnodes ? t->sm_node : 0;
	rc = imc_simserve_create(sv->f, sv->loop, &sc, &sv->srv);
	if (rc)
		snprintf(msg, msglen, "cannot serve the fabric: %s%s",
			 strerror(-rc), rc == -EADDRINUSE ?
			 " (another simulator uses the socket name)" : "");
	return rc;
}

int scn_served_start(const struct scn_served_cfg *cfg, struct imc_fabric *f,
		     struct imc_loop *loop, imc_time_t wait,
		     struct scn_served **out, char *msg, size_t msglen)
{
	const char *tmp = getenv("TMPDIR");
	const char *node = NULL;
	struct scn_served *sv;
	int rc;

	*out = NULL;
	sv = calloc(1, sizeof(*sv));
	if (!sv)
		return -ENOMEM;
	sv->cfg = cfg;
	sv->f = f;
	sv->loop = loop;
	snprintf(sv->dir, sizeof(sv->dir), "%s/ibmcast-opensm.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(sv->dir)) {
		rc = -errno;
		snprintf(msg, msglen, "cannot make %s: %s", sv->dir,
			 strerror(-rc));
		sv->dir[0] = 0;
		goto fail;
	}
	rc = serve(sv, &node, msg, msglen);
	if (rc)
		goto fail;
	rc = osm_spawn(sv, node, msg, msglen);
	if (!rc)
		rc = wait_up(sv, wait ? wait : cfg->wait ? cfg->wait :
			     WAIT_DEFAULT, msg, msglen);
	if (rc)
		goto fail;
	fprintf(stderr, "opensm: SUBNET UP, every port ACTIVE after %.3f s\n",
		(double)sv->up_time / 1e9);
	*out = sv;
	return 0;
fail:
	if (!msg[0])
		snprintf(msg, msglen, "%s", strerror(-rc));
	scn_served_stop(sv);
	return rc;
}

void scn_served_hold(struct scn_served *sv)
{
	char release[300];
	imc_time_t end;

	if (!sv || !sv->cfg->hold)
		return;
	snprintf(release, sizeof(release), "%s/release", sv->dir);
	fprintf(stderr, "opensm: holding the fabric %.1f s: export "
		"IBSIM_SOCKNAME=%s LD_PRELOAD=%s; touch %s ends it\n",
		(double)sv->cfg->hold / 1e9, imc_simserve_sockname(sv->srv),
		sv->u2s, release);
	fflush(stderr);
	end = imc_loop_now(sv->loop) + sv->cfg->hold;
	while (imc_loop_now(sv->loop) < end && access(release, F_OK))
		if (imc_loop_run_until(sv->loop,
				       imc_loop_now(sv->loop) + POLL) < 0)
			break;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* SIGTERM, then SIGKILL when OpenSM has not gone after TERM_GRACE; the
 * loop keeps serving meanwhile, as OpenSM may still send. */
static void osm_stop(struct scn_served *sv)
{
	imc_time_t t0;

	if (sv->pid <= 0)
		return;
	kill(sv->pid, SIGTERM);
	t0 = imc_loop_now(sv->loop);
	while (sv->pid > 0 && imc_loop_now(sv->loop) - t0 < TERM_GRACE) {
		if (imc_loop_run_until(sv->loop, imc_loop_now(sv->loop) +
				       POLL / 5) < 0)
			break;
		osm_check(sv, NULL, 0);
	}
	if (sv->pid > 0) {
		kill(sv->pid, SIGKILL);
		waitpid(sv->pid, NULL, 0);
		sv->pid = 0;
	}
}

void scn_served_stop(struct scn_served *sv)
{
	if (!sv)
		return;
	osm_stop(sv);
	imc_simserve_destroy(sv->srv);
	if (sv->dir[0] && !getenv("IBMCAST_OPENSM_KEEP"))
		nftw(sv->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free(sv);
}
