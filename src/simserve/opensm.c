/* OpenSM on a served fabric (ibmcast/opensm.h): the process, its private
 * directory, the wait for SUBNET UP, its stop.
 *
 *   from            event                          to
 *   IDLE, EXITED    start                          STARTING
 *   STARTING        SUBNET UP, every port ACTIVE   UP
 *   STARTING, UP    the process exited, reaped     EXITED
 *   STARTING, UP    stop, restart (killed)         IDLE
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibmcast/opensm.h"

#define WAIT_DEFAULT (60 * IMC_NSEC_PER_SEC)
#define GRACE_DEFAULT (2 * IMC_NSEC_PER_SEC)
#define POLL (50 * IMC_NSEC_PER_MSEC)

struct imc_opensm {
	struct imc_simserve *srv;
	struct imc_fabric *f;
	struct imc_loop *loop;
	enum imc_opensm_state state;
	uint32_t node;
	char **args;             /* copied, NULL-terminated */
	imc_time_t grace;
	bool keep;
	char tmpdir[256];
	pid_t pid;
	int wait_status;
	unsigned starts;
	imc_time_t t_start;      /* loop time of the last start */
	imc_time_t up_time;
	struct imc_timer tick;   /* the wait's poll */
	bool ticked;             /* it fired: the loop was not stopped */
	long log_off;            /* osm.log read up to here */
	bool log_up;             /* SUBNET UP seen since the last start */
	char opensm[512];        /* config, IBMCAST_OPENSM or "opensm" */
	char u2s[512];
	char exe[512];           /* opensm as found */
	char dir[300];
	char reason[512];
};

/* The one place the state changes; the table of the file's top. */
static void set_state(struct imc_opensm *o, enum imc_opensm_state to)
{
	static const unsigned ok[] = {
		[IMC_OPENSM_IDLE] = 1u << IMC_OPENSM_STARTING,
		[IMC_OPENSM_EXITED] = 1u << IMC_OPENSM_STARTING,
		[IMC_OPENSM_STARTING] = 1u << IMC_OPENSM_UP |
			1u << IMC_OPENSM_EXITED | 1u << IMC_OPENSM_IDLE,
		[IMC_OPENSM_UP] = 1u << IMC_OPENSM_EXITED |
			1u << IMC_OPENSM_IDLE,
	};

	if (!(ok[o->state] & 1u << to))
		abort();
	o->state = to;
}

static int fail(struct imc_opensm *o, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct imc_opensm *o, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
	return rc;
}

static const struct imc_opensm_config defaults = { .node = IMC_TOPO_NONE };

void imc_opensm_config_init(struct imc_opensm_config *c)
{
	*c = defaults;
}

static const char *pick(const char *cfg, const char *env, const char *def)
{
	const char *e = getenv(env);

	if (cfg && *cfg)
		return cfg;
	return e && *e ? e : def;
}

static int copy_args(struct imc_opensm *o, const char *const *args)
{
	size_t n = 0;

	while (args && args[n])
		n++;
	o->args = calloc(n + 1, sizeof(*o->args));
	if (!o->args)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(o->args[i] = strdup(args[i])))
			return -ENOMEM;
	return 0;
}

static void free_args(char **args)
{
	for (size_t i = 0; args && args[i]; i++)
		free(args[i]);
	free(args);
}

/* The wait's poll: the run of the loop ends here, unless someone else
 * stopped it first (fds run before timers in a round, and a stop skips
 * the round's timers, so a stop is never taken for a tick). */
static void tick(struct imc_timer *t)
{
	struct imc_opensm *o = imc_container_of(t, struct imc_opensm, tick);

	o->ticked = true;
	imc_loop_stop(o->loop);
}

int imc_opensm_create(struct imc_simserve *srv, struct imc_fabric *f,
		      struct imc_loop *loop,
		      const struct imc_opensm_config *cfg,
		      struct imc_opensm **out)
{
	struct imc_opensm *o;

	*out = NULL;
	cfg = cfg ? cfg : &defaults;
	if (!srv || !f || !loop || imc_loop_is_virtual(loop) ||
	    (cfg->node != IMC_TOPO_NONE &&
	     cfg->node >= imc_fabric_topo(f)->nnodes))
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o || copy_args(o, cfg->args)) {
		if (o)
			free_args(o->args);
		free(o);
		return -ENOMEM;
	}
	o->srv = srv;
	o->f = f;
	o->loop = loop;
	o->node = cfg->node;
	o->grace = cfg->term_grace ? cfg->term_grace : GRACE_DEFAULT;
	o->keep = cfg->keep_dir;
	imc_timer_init(&o->tick, tick);
	snprintf(o->tmpdir, sizeof(o->tmpdir), "%s",
		 pick(cfg->tmpdir, "TMPDIR", "/tmp"));
	snprintf(o->opensm, sizeof(o->opensm), "%s",
		 pick(cfg->opensm, "IBMCAST_OPENSM", "opensm"));
	snprintf(o->u2s, sizeof(o->u2s), "%s",
		 pick(cfg->umad2sim, "IBMCAST_UMAD2SIM",
		      IMC_OPENSM_UMAD2SIM_DEFAULT));
	*out = o;
	return 0;
}

/* An executable on PATH, or name itself when it holds a '/'; a path
 * longer than out is not tried. */
static int find_exec(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	int k;

	if (strchr(name, '/')) {
		k = snprintf(out, len, "%s", name);
		return (size_t)k >= len || access(out, X_OK) ? -ENOENT : 0;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		k = snprintf(out, len, "%.*s/%s", (int)n, path, name);
		if (n && (size_t)k < len && !access(out, X_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/* OpenSM's environment: the caller's, with the variables umad2sim and
 * OpenSM read set for this process (made before fork(): the child only
 * calls what is async-signal-safe). Entries from first on are ours. */
static char **make_env(const struct imc_opensm *o, size_t *first)
{
	static const char *const keys[] = {
		"IBSIM_SOCKNAME=", "OSM_TMP_DIR=", "OSM_CACHE_DIR=",
		"LD_PRELOAD=", "SIM_HOST=",
	};
	const struct imc_topo *t = imc_fabric_topo(o->f);
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
		     imc_simserve_sockname(o->srv)) < 0 ||
	    asprintf(&env[k++], "OSM_TMP_DIR=%s", o->dir) < 0 ||
	    asprintf(&env[k++], "OSM_CACHE_DIR=%s", o->dir) < 0 ||
	    asprintf(&env[k++], "LD_PRELOAD=%s", o->u2s) < 0 ||
	    (o->node != IMC_TOPO_NONE &&
	     asprintf(&env[k++], "SIM_HOST=%s", t->node[o->node].name) < 0)) {
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

/* opensm -d2 -f LOG ARGS..., NULL-terminated. */
static char **make_argv(const struct imc_opensm *o, char *log)
{
	size_t n = 0;
	char **argv;

	while (o->args[n])
		n++;
	argv = calloc(n + 5, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)o->exe;
	argv[1] = (char *)"-d2";
	argv[2] = (char *)"-f";
	argv[3] = log;
	memcpy(&argv[4], o->args, n * sizeof(*argv));
	return argv;
}

/* In the child: only async-signal-safe calls. OpenSM goes when its
 * parent does, however that ends; the signals the parent blocked (a
 * signalfd's) are unblocked, as OpenSM keeps the mask it inherits and
 * would never see SIGTERM. */
static void child_exec(const struct imc_opensm *o, const char *out,
		       char **argv, char **env)
{
	sigset_t none;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	if (chdir(o->dir) < 0)
		_exit(127);
	execve(o->exe, argv, env);
	_exit(127);
}

/* Where osm.log ends now: a new OpenSM's SUBNET UP is looked for after
 * it (OpenSM appends to its log). */
static long log_size(const struct imc_opensm *o)
{
	char path[320];
	struct stat st;

	snprintf(path, sizeof(path), "%s/osm.log", o->dir);
	return stat(path, &st) ? 0 : (long)st.st_size;
}

static int spawn(struct imc_opensm *o)
{
	char out[320], log[320];
	char **env, **argv;
	size_t first;
	pid_t pid;
	int rc;

	snprintf(out, sizeof(out), "%s/osm.out", o->dir);
	snprintf(log, sizeof(log), "%s/osm.log", o->dir);
	env = make_env(o, &first);
	argv = make_argv(o, log);
	if (!env || !argv) {
		env_free(env, env ? first : 0);
		free(argv);
		return fail(o, -ENOMEM, "%s", strerror(ENOMEM));
	}
	o->log_off = log_size(o);
	o->log_up = false;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child_exec(o, out, argv, env);
	rc = pid < 0 ? -errno : 0;
	env_free(env, first);
	free(argv);
	if (rc)
		return fail(o, rc, "cannot start opensm: %s", strerror(-rc));
	o->pid = pid;
	o->starts++;
	o->t_start = imc_loop_now(o->loop);
	set_state(o, IMC_OPENSM_STARTING);
	return 0;
}

int imc_opensm_start(struct imc_opensm *o)
{
	int rc;

	if (o->pid > 0)
		return fail(o, -EBUSY, "opensm runs already (pid %ld)",
			    (long)o->pid);
	if (find_exec(o->opensm, o->exe, sizeof(o->exe))) {
		o->exe[0] = 0;
		return fail(o, -ENOPKG, "opensm not found (install opensm or "
			    "set IBMCAST_OPENSM)");
	}
	if (access(o->u2s, R_OK))
		return fail(o, -ENOPKG, "umad2sim not found at %s (install "
			    "libumad2sim0 or set IBMCAST_UMAD2SIM)", o->u2s);
	if (!o->dir[0]) {
		snprintf(o->dir, sizeof(o->dir), "%s/ibmcast-opensm.XXXXXX",
			 o->tmpdir);
		if (!mkdtemp(o->dir)) {
			rc = -errno;
			fail(o, rc, "cannot make %s: %s", o->dir, strerror(-rc));
			o->dir[0] = 0;
			return rc;
		}
	}
	rc = spawn(o);
	if (!rc)
		o->reason[0] = 0;
	return rc;
}

/* Reads what OpenSM appended to osm.log since the last call; true once
 * it has logged SUBNET UP. */
static bool log_says_up(struct imc_opensm *o)
{
	char path[320], buf[4096];
	FILE *f;
	size_t n;

	if (o->log_up)
		return true;
	snprintf(path, sizeof(path), "%s/osm.log", o->dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* Step back so that a line cut by the last read is seen whole; a
	 * log shorter than what was read was started again. */
	if (o->log_off > log_size(o))
		o->log_off = 0;
	if (o->log_off > 64)
		fseek(f, o->log_off - 64, SEEK_SET);
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
		buf[n] = 0;
		if (memmem(buf, n, "SUBNET UP", 9))
			o->log_up = true;
		if (n > 64)
			fseek(f, -64, SEEK_CUR);
		if (n < sizeof(buf) - 1)
			break;
	}
	o->log_off = ftell(f);
	fclose(f);
	return o->log_up;
}

/* Every cabled port ACTIVE with a LID (IBA 14.4: the SM has configured
 * the subnet), a switch's through its port 0. */
static bool all_active(const struct imc_opensm *o)
{
	const struct imc_topo *t = imc_fabric_topo(o->f);
	struct imc_port_attr pa;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			if (imc_fabric_port_attr(o->f, i, p, &pa) ||
			    pa.state == IMC_PORT_DOWN)
				continue;
			if (pa.state != IMC_PORT_ACTIVE ||
			    (n->type == IMC_NODE_HCA && !pa.lid))
				return false;
		}
	}
	return true;
}

/* Reaps the child if it has exited: 0 running (or none), else -ECHILD
 * with the reason. */
static int reap(struct imc_opensm *o)
{
	int st;

	if (o->pid <= 0 || waitpid(o->pid, &st, WNOHANG) != o->pid)
		return 0;
	o->pid = 0;
	o->wait_status = st;
	set_state(o, IMC_OPENSM_EXITED);
	return fail(o, -ECHILD, "opensm exited (%s %d; see %s/osm.out)",
		    WIFEXITED(st) ? "status" : "signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), o->dir);
}

int imc_opensm_wait_up(struct imc_opensm *o, imc_time_t timeout)
{
	imc_time_t t0 = imc_loop_now(o->loop), now = t0;
	int rc;

	if (!timeout)
		timeout = WAIT_DEFAULT;
	if (o->state == IMC_OPENSM_UP)
		return 0;
	if (o->state != IMC_OPENSM_STARTING)
		return o->state == IMC_OPENSM_EXITED ? -ECHILD :
		       fail(o, -ESRCH, "opensm was not started");
	while (!log_says_up(o) || !all_active(o)) {
		if (now - t0 >= timeout)
			return fail(o, -ETIMEDOUT, "OpenSM did not bring the "
				    "subnet up in %.1f s (%s; see %s/osm.log)",
				    (double)timeout / 1e9, o->log_up ?
				    "SUBNET UP, but ports not ACTIVE" :
				    "no SUBNET UP", o->dir);
		o->ticked = false;
		rc = imc_timer_arm_in(o->loop, &o->tick, POLL);
		if (!rc)
			rc = imc_loop_run(o->loop);
		imc_timer_cancel(o->loop, &o->tick);
		if (rc < 0)
			return fail(o, rc, "loop: %s", strerror(-rc));
		rc = reap(o);
		if (rc)
			return rc;
		if (!o->ticked)
			return fail(o, -EINTR, "stopped before the subnet was up");
		now = imc_loop_now(o->loop);
	}
	o->up_time = now - o->t_start;
	set_state(o, IMC_OPENSM_UP);
	o->reason[0] = 0;
	return 0;
}

/* Waits for the child after kill(): the loop keeps serving meanwhile,
 * as OpenSM may still send. */
static void kill_wait(struct imc_opensm *o, int sig, imc_time_t grace)
{
	imc_time_t t0;

	kill(o->pid, sig);
	t0 = imc_loop_now(o->loop);
	while (imc_loop_now(o->loop) - t0 < grace) {
		if (waitpid(o->pid, &o->wait_status, WNOHANG) == o->pid) {
			o->pid = 0;
			return;
		}
		if (imc_loop_run_until(o->loop, imc_loop_now(o->loop) +
				       POLL / 5) < 0)
			break;
	}
	kill(o->pid, SIGKILL);
	waitpid(o->pid, &o->wait_status, 0);
	o->pid = 0;
}

void imc_opensm_stop(struct imc_opensm *o)
{
	if (reap(o) || o->pid <= 0)
		return;
	kill_wait(o, SIGTERM, o->grace);
	set_state(o, IMC_OPENSM_IDLE);
}

int imc_opensm_restart(struct imc_opensm *o)
{
	if (!reap(o) && o->pid > 0) {
		kill(o->pid, SIGKILL);
		waitpid(o->pid, &o->wait_status, 0);
		o->pid = 0;
		set_state(o, IMC_OPENSM_IDLE);
	}
	return imc_opensm_start(o);
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

void imc_opensm_destroy(struct imc_opensm *o)
{
	if (!o)
		return;
	imc_opensm_stop(o);
	if (o->dir[0] && !o->keep && !getenv("IBMCAST_OPENSM_KEEP"))
		nftw(o->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free_args(o->args);
	free(o);
}

void imc_opensm_get_status(struct imc_opensm *o, struct imc_opensm_status *st)
{
	reap(o);
	memset(st, 0, sizeof(*st));
	st->state = o->state;
	st->pid = o->pid;
	st->dir = o->dir;
	st->opensm = o->exe;
	st->umad2sim = o->starts ? o->u2s : "";
	st->node = o->node;
	st->up_time = o->up_time;
	st->starts = o->starts;
	st->wait_status = o->wait_status;
}

const char *imc_opensm_reason(const struct imc_opensm *o)
{
	return o->reason;
}
