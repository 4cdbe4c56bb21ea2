/* The OpenSM object (ibmcast/opensm.h) without OpenSM: shell scripts
 * stand in for the opensm binary, on a served two-host fabric with an
 * external SM (no SM of its own, so its ports never go ACTIVE here).
 *
 * Checked: bad arguments; a missing opensm or umad2sim is -ENOPKG with
 * the reason and leaves no directory; the command line and environment
 * OpenSM gets; an OpenSM that exits is -ECHILD with its status; SUBNET
 * UP without ACTIVE ports is -ETIMEDOUT naming both; a stopped loop ends
 * the wait with -EINTR; stop sends SIGTERM first (even when the caller
 * blocks it), and SIGKILL after the grace to one that ignores it;
 * restart replaces the process; destroy removes the directory and the
 * process. The runs with the real OpenSM are tests/opensm_fabric_*.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "stand_in.h"

#include "ibmcast/opensm.h"

struct world {
	struct imc_topo *topo;
	struct imc_loop *loop;
	struct imc_fabric *fab;
	struct imc_simserve *srv;
	char tmp[64];            /* scripts, and the objects' TMPDIR */
	char sock[32];
};

static int setup(void **state)
{
	struct imc_fabric_config fc;
	struct imc_simserve_config sc;
	struct world *w = calloc(1, sizeof(*w));
	char err[256];

	assert_non_null(w);
	snprintf(w->tmp, sizeof(w->tmp), "/tmp/test_opensm.XXXXXX");
	assert_non_null(mkdtemp(w->tmp));
	snprintf(w->sock, sizeof(w->sock), "imcosm%ld", (long)getpid());
	assert_int_equal(imc_topo_generate("switch:hosts=2", &w->topo, err,
					   sizeof(err)), 0);
	assert_int_equal(imc_loop_create_realtime(&w->loop), 0);
	imc_fabric_config_default(&fc);
	fc.external_sm = true;
	assert_int_equal(imc_fabric_create(w->topo, w->loop, &fc, &w->fab), 0);
	assert_int_equal(imc_fabric_bring_up(w->fab), 0);
	imc_simserve_config_init(&sc);
	sc.sockname = w->sock;
	assert_int_equal(imc_simserve_create(w->fab, w->loop, &sc, &w->srv), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	char cmd[128];

	imc_simserve_destroy(w->srv);
	imc_fabric_destroy(w->fab);
	assert_int_equal(imc_loop_destroy(w->loop), 0);
	imc_topo_destroy(w->topo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", w->tmp);
	assert_int_equal(system(cmd), 0);
	free(w);
	return 0;
}

/* A config with opensm as given, umad2sim any readable file (it is only
 * preloaded: a shell ignores a bad one) and w->tmp as TMPDIR. */
static void config(struct world *w, struct imc_opensm_config *c,
		   const char *opensm)
{
	imc_opensm_config_init(c);
	c->opensm = opensm;
	c->umad2sim = "/dev/null";
	c->tmpdir = w->tmp;
}

static void assert_reason(const struct imc_opensm *o, const char *want)
{
	if (!strstr(imc_opensm_reason(o), want))
		fail_msg("reason '%s' lacks '%s'", imc_opensm_reason(o), want);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Waits (at most 60 s) until the stand-in has made DIR/ready: what it
 * does before is done, however slowly the machine runs. */
static void wait_ready(struct imc_opensm *o)
{
	struct imc_opensm_status st;
	char ready[320];

	imc_opensm_get_status(o, &st);
	snprintf(ready, sizeof(ready), "%s/ready", st.dir);
	for (int i = 0; i < 6000 && !exists(ready); i++)
		usleep(10000);
	assert_true(exists(ready));
}

static void test_bad_args(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm *o = (struct imc_opensm *)1;
	struct imc_loop *virt;

	config(w, &c, "/bin/true");
	c.node = w->topo->nnodes;
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o),
			 -EINVAL);
	assert_null(o);
	assert_int_equal(imc_loop_create_virtual(0, &virt), 0);
	assert_int_equal(imc_opensm_create(w->srv, w->fab, virt, NULL, &o),
			 -EINVAL);
	imc_loop_destroy(virt);
	/* Not started: nothing to wait for, nothing to stop. */
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, NULL, &o),
			 0);
	assert_int_equal(imc_opensm_wait_up(o, IMC_NSEC_PER_MSEC), -ESRCH);
	imc_opensm_stop(o);
	imc_opensm_destroy(o);
	imc_opensm_destroy(NULL);
}

static void test_missing(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm_status st;
	struct imc_opensm *o;

	config(w, &c, "/nonexistent/opensm");
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), -ENOPKG);
	assert_reason(o, "opensm not found (install opensm or set IBMCAST_OPENSM)");
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_IDLE);
	assert_string_equal(st.dir, "");
	assert_int_equal(st.starts, 0);
	imc_opensm_destroy(o);

	/* A name without '/' is looked up on PATH. */
	config(w, &c, "no-such-opensm-here");
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), -ENOPKG);
	imc_opensm_destroy(o);

	config(w, &c, "/bin/true");
	c.umad2sim = "/nonexistent/libumad2sim.so";
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), -ENOPKG);
	assert_reason(o, "umad2sim not found at /nonexistent/libumad2sim.so");
	imc_opensm_destroy(o);
	/* No directory was made: w->tmp is still empty. */
	assert_int_equal(rmdir(w->tmp), 0);
	assert_int_equal(mkdir(w->tmp, 0700), 0);
}

/* The stand-in records its arguments, its environment and where it
 * runs, then exits 3 once told to (DIR/go). */
static void test_exits(void **state)
{
	struct world *w = *state;
	const char *args[] = { "-p", "3", NULL };
	struct imc_opensm_config c;
	struct imc_opensm_status st;
	struct imc_opensm *o;
	char dir[300], path[400], line[1024], want[1024];
	FILE *f;

	config(w, &c, stand_in(w->tmp, "exits",
			     "echo \"$*\" > args\n"
			     "echo \"$IBSIM_SOCKNAME $SIM_HOST $OSM_TMP_DIR "
			     "$OSM_CACHE_DIR $LD_PRELOAD\" > env\n"
			     "pwd > cwd\ntouch ready\n"
			     "while [ ! -e go ]; do sleep 0.05; done\nexit 3"));
	c.args = args;
	c.node = 2;
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	assert_int_equal(imc_opensm_start(o), -EBUSY);
	imc_opensm_get_status(o, &st);
	assert_true(st.pid > 0);
	assert_int_equal(st.starts, 1);
	assert_int_equal(strncmp(st.dir, w->tmp, strlen(w->tmp)), 0);
	assert_non_null(strstr(st.dir, "/ibmcast-opensm."));
	snprintf(dir, sizeof(dir), "%s", st.dir);
	wait_ready(o);
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_STARTING);
	snprintf(path, sizeof(path), "%s/go", dir);
	assert_int_equal(mknod(path, S_IFREG | 0600, 0), 0);
	assert_int_equal(imc_opensm_wait_up(o, 60 * IMC_NSEC_PER_SEC), -ECHILD);
	snprintf(want, sizeof(want), "opensm exited (status 3; see %s/osm.out)",
		 dir);
	assert_string_equal(imc_opensm_reason(o), want);
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_EXITED);
	assert_int_equal(st.pid, 0);
	assert_true(WIFEXITED(st.wait_status));
	assert_int_equal(WEXITSTATUS(st.wait_status), 3);
	assert_int_equal(imc_opensm_wait_up(o, IMC_NSEC_PER_SEC), -ECHILD);

	snprintf(path, sizeof(path), "%s/args", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	snprintf(want, sizeof(want), "-d2 -f %s/osm.log -p 3\n", dir);
	assert_string_equal(line, want);
	snprintf(path, sizeof(path), "%s/env", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	snprintf(want, sizeof(want), "%s %s %s %s /dev/null\n", w->sock,
		 w->topo->node[2].name, dir, dir);
	assert_string_equal(line, want);
	snprintf(path, sizeof(path), "%s/cwd", dir);
	assert_true(exists(path));

	/* A second start after the exit, in the same directory (it waits
	 * for DIR/go again). */
	snprintf(path, sizeof(path), "%s/go", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_STARTING);
	assert_string_equal(st.dir, dir);
	assert_int_equal(st.starts, 2);
	imc_opensm_destroy(o);
	assert_false(exists(dir));
}

/* SUBNET UP in the log, but the ports stay INIT (nobody configures
 * them): the wait ends at its bound, saying which half was missing. */
static void test_timeout(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm_status st;
	struct imc_opensm *o;
	pid_t pid;

	config(w, &c, stand_in(w->tmp, "upsays", "echo 'SUBNET UP' >> \"$3\"\n"
			     "touch ready\nexec sleep 60"));
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	wait_ready(o);
	assert_int_equal(imc_opensm_wait_up(o, 300 * IMC_NSEC_PER_MSEC),
			 -ETIMEDOUT);
	assert_reason(o, "OpenSM did not bring the subnet up in 0.3 s "
		      "(SUBNET UP, but ports not ACTIVE; see ");
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_STARTING);
	pid = st.pid;
	assert_true(pid > 0);
	assert_int_equal(kill(pid, 0), 0);
	imc_opensm_destroy(o);
	/* Reaped: no such process any more. */
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

struct stopper {
	struct imc_timer t;
	struct imc_loop *loop;
};

static void stopper_fire(struct imc_timer *t)
{
	struct stopper *s = imc_container_of(t, struct stopper, t);

	imc_loop_stop(s->loop);
}

/* imc_loop_stop() (a signal watched by the caller) ends the wait. */
static void test_interrupted(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm *o;
	struct stopper s = { .loop = w->loop };

	config(w, &c, stand_in(w->tmp, "silent", "exec sleep 60"));
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	imc_timer_init(&s.t, stopper_fire);
	assert_int_equal(imc_timer_arm_in(w->loop, &s.t,
					  100 * IMC_NSEC_PER_MSEC), 0);
	assert_int_equal(imc_opensm_wait_up(o, 60 * IMC_NSEC_PER_SEC), -EINTR);
	assert_reason(o, "stopped before the subnet was up");
	imc_timer_cancel(w->loop, &s.t);
	imc_opensm_destroy(o);
}

/* stop: SIGTERM first, and OpenSM gets it even when the caller blocks
 * SIGTERM (as a signalfd user does); the mask is not inherited. */
static void test_stop_term(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm_status st;
	struct imc_opensm *o;
	sigset_t set, old;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, &old), 0);
	config(w, &c, stand_in(w->tmp, "silent", "exec sleep 60"));
	c.term_grace = 30 * IMC_NSEC_PER_SEC;
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	imc_opensm_get_status(o, &st);
	pid = st.pid;
	imc_opensm_stop(o);
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_IDLE);
	assert_int_equal(st.pid, 0);
	assert_true(WIFSIGNALED(st.wait_status));
	assert_int_equal(WTERMSIG(st.wait_status), SIGTERM);
	assert_int_equal(kill(pid, 0), -1);
	imc_opensm_stop(o);     /* nothing left to stop */
	imc_opensm_destroy(o);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
}

/* One that ignores SIGTERM gets SIGKILL once the grace is over. */
static void test_stop_kill(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm_status st;
	struct imc_opensm *o;
	pid_t pid;

	config(w, &c, stand_in(w->tmp, "stubborn", "trap '' TERM\ntouch ready\n"
			     "while :; do sleep 1; done"));
	c.term_grace = 200 * IMC_NSEC_PER_MSEC;
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	imc_opensm_get_status(o, &st);
	pid = st.pid;
	wait_ready(o);          /* SIGTERM only once the trap is set */
	imc_opensm_stop(o);
	imc_opensm_get_status(o, &st);
	assert_true(WIFSIGNALED(st.wait_status));
	assert_int_equal(WTERMSIG(st.wait_status), SIGKILL);
	assert_int_equal(kill(pid, 0), -1);
	imc_opensm_destroy(o);
}

/* restart: the old process killed, a new one in the same directory. */
static void test_restart(void **state)
{
	struct world *w = *state;
	struct imc_opensm_config c;
	struct imc_opensm_status st;
	struct imc_opensm *o;
	char dir[300];
	pid_t pid;

	config(w, &c, stand_in(w->tmp, "silent", "exec sleep 60"));
	assert_int_equal(imc_opensm_create(w->srv, w->fab, w->loop, &c, &o), 0);
	assert_int_equal(imc_opensm_start(o), 0);
	imc_opensm_get_status(o, &st);
	pid = st.pid;
	snprintf(dir, sizeof(dir), "%s", st.dir);
	assert_int_equal(imc_opensm_restart(o), 0);
	imc_opensm_get_status(o, &st);
	assert_int_equal(st.state, IMC_OPENSM_STARTING);
	assert_int_equal(st.starts, 2);
	assert_true(st.pid > 0 && st.pid != pid);
	assert_string_equal(st.dir, dir);
	assert_int_equal(kill(pid, 0), -1);
	pid = st.pid;
	imc_opensm_destroy(o);
	assert_int_equal(kill(pid, 0), -1);
	assert_false(exists(dir));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_term, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
