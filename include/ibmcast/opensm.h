/* The real OpenSM as the SM and SA of a served embedded fabric: an
 * opensm process started on an imc_simserve through
 * LD_PRELOAD=libumad2sim.so (ibsim's shim for libibumad), so that its
 * SMPs cross the simulated switches and it assigns the LIDs and writes
 * the LFTs and MFTs. The fabric must have been made with external_sm
 * (its own SM and SA step aside).
 *
 * Each object owns a private directory (mkdtemp under TMPDIR, else /tmp,
 * named ibmcast-opensm.XXXXXX), OpenSM's current directory: its
 * OSM_TMP_DIR and OSM_CACHE_DIR, osm.log (-f), osm.out (its stdout and
 * stderr) and umad2sim's fake sysfs. The directory is removed by
 * imc_opensm_destroy() unless the configuration or IBMCAST_OPENSM_KEEP
 * in the environment keeps it.
 *
 * OpenSM's environment is the caller's with IBSIM_SOCKNAME (the
 * server's socket name), OSM_TMP_DIR, OSM_CACHE_DIR, LD_PRELOAD and
 * SIM_HOST (the node it attaches to) set. It runs `opensm -d2 -f
 * DIR/osm.log ARGS...`: -d2 makes OpenSM flush its log after each
 * message, so SUBNET UP is seen when it is written. It gets SIGTERM when
 * the process that started it dies (PR_SET_PDEATHSIG), so even a caller
 * killed with SIGKILL leaves no OpenSM behind (only the directory).
 *
 * The subnet is up (IBA 14.4: the SM has configured the subnet) when
 * OpenSM has logged SUBNET UP and every cabled port of the fabric is
 * ACTIVE, a CA's with a LID (a switch's through its port 0).
 *
 * State (changed by one checked function in src/simserve/opensm.c):
 *
 *   from            event                          to
 *   IDLE, EXITED    imc_opensm_start()             STARTING
 *   STARTING        SUBNET UP, every port ACTIVE   UP
 *   STARTING, UP    the process exited, reaped     EXITED
 *   STARTING, UP    imc_opensm_stop()              IDLE
 *   STARTING, UP    imc_opensm_restart()           IDLE, then STARTING
 *
 * Everything runs in the caller's thread; the functions that wait run
 * the loop meanwhile (the server keeps serving OpenSM's MADs), and must
 * not be called from a callback of that loop.
 */
#ifndef IBMCAST_OPENSM_H
#define IBMCAST_OPENSM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/simserve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where Debian's libumad2sim0 puts the shim. */
#define IMC_OPENSM_UMAD2SIM_DEFAULT \
	"/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

struct imc_opensm_config {
	/* The opensm binary: a path when it holds a '/', else looked up
	 * on PATH. NULL or "": IBMCAST_OPENSM, else "opensm". */
	const char *opensm;
	/* libumad2sim.so. NULL or "": IBMCAST_UMAD2SIM, else
	 * IMC_OPENSM_UMAD2SIM_DEFAULT. */
	const char *umad2sim;
	/* The node OpenSM attaches to (SIM_HOST: its first port);
	 * IMC_TOPO_NONE: the server's default node. */
	uint32_t node;
	/* Extra OpenSM arguments after -d2 -f LOG, NULL-terminated; NULL:
	 * none. Copied by imc_opensm_create(). */
	const char *const *args;
	imc_time_t term_grace;   /* SIGTERM to SIGKILL in stop (0: 2 s) */
	const char *tmpdir;      /* NULL or "": TMPDIR, else /tmp */
	bool keep_dir;           /* destroy leaves the directory */
};

/* Defaults: every field as its NULL/0 comment says, node IMC_TOPO_NONE. */
void imc_opensm_config_init(struct imc_opensm_config *c);

enum imc_opensm_state {
	IMC_OPENSM_IDLE,         /* no process (created, or stopped) */
	IMC_OPENSM_STARTING,     /* running, the subnet not seen up yet */
	IMC_OPENSM_UP,           /* running, the subnet seen up */
	IMC_OPENSM_EXITED,       /* exited by itself; the reason is kept */
};

struct imc_opensm;

/* An OpenSM for the fabric f served by srv on loop (a real-time loop),
 * not started yet. cfg is copied (NULL: the defaults); f, loop and srv
 * must outlive the object. Returns 0, -EINVAL (a virtual loop, a node
 * beyond the topology) or -ENOMEM. Free with imc_opensm_destroy(). */
int imc_opensm_create(struct imc_simserve *srv, struct imc_fabric *f,
		      struct imc_loop *loop,
		      const struct imc_opensm_config *cfg,
		      struct imc_opensm **out);

/* Finds opensm and umad2sim, makes the private directory (first start
 * only) and starts OpenSM; does not wait. Returns 0, -ENOPKG (opensm or
 * umad2sim missing), -EBUSY (it runs already), or the errno of
 * mkdtemp()/fork(); imc_opensm_reason() says why. */
int imc_opensm_start(struct imc_opensm *o);

/* Runs the loop until the subnet is up (see above), at most timeout
 * (0: 60 s). Returns 0 (also when it was up already), -ETIMEDOUT,
 * -ECHILD (OpenSM exited; its status in the reason), -EINTR (the loop
 * was stopped by someone else, imc_loop_stop(), e.g. for a signal),
 * -ESRCH (not started) or the loop's error; imc_opensm_reason() says
 * why, naming the log to read. After -ETIMEDOUT and -EINTR OpenSM still
 * runs: wait again, or stop or destroy it. */
int imc_opensm_wait_up(struct imc_opensm *o, imc_time_t timeout);

/* Kills OpenSM with SIGKILL (as a crashed SM) and starts it again in the
 * same directory; does not wait. The new OpenSM sweeps, keeps the LIDs
 * it finds in the ports and sets ClientReregister on every port (IBA
 * 14.4.11). Returns as imc_opensm_start(). */
int imc_opensm_restart(struct imc_opensm *o);

/* SIGTERM, then SIGKILL when OpenSM has not exited after term_grace,
 * serving the fabric meanwhile (OpenSM may still send); reaps it. The
 * object can be started again. No process: a no-op. */
void imc_opensm_stop(struct imc_opensm *o);

/* imc_opensm_stop(), then frees the object and removes the private
 * directory (unless kept). NULL is a no-op. Before srv, f and loop are
 * destroyed. */
void imc_opensm_destroy(struct imc_opensm *o);

struct imc_opensm_status {
	enum imc_opensm_state state;
	pid_t pid;               /* the running process, 0 when none */
	const char *dir;         /* "" before the first start */
	const char *opensm;      /* the binary run ("" before a start) */
	const char *umad2sim;    /* the shim preloaded ("" before a start) */
	uint32_t node;           /* as configured (IMC_TOPO_NONE: default) */
	imc_time_t up_time;      /* its start to the subnet up, last seen */
	unsigned starts;         /* processes started */
	int wait_status;         /* EXITED: as waitpid() gave it */
};

/* Fills st, first reaping OpenSM if it has exited (the state is then
 * EXITED and imc_opensm_reason() says how). The strings live as long
 * as the object. */
void imc_opensm_get_status(struct imc_opensm *o, struct imc_opensm_status *st);

/* Why the last call that failed did, a sentence without a final period
 * ("opensm not found (install opensm or set IBMCAST_OPENSM)", "opensm
 * exited (status 1; see DIR/osm.out)"); "" until one fails. */
const char *imc_opensm_reason(const struct imc_opensm *o);

#ifdef __cplusplus
}
#endif
#endif
