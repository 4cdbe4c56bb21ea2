/* SIGINT and SIGTERM as loop events: the signals are blocked and read
 * from a signalfd the loop watches, so that a command reacts to them in
 * its loop thread, between two callbacks, never inside one. */
#ifndef IMC_TOOLS_SIGWATCH_H
#define IMC_TOOLS_SIGWATCH_H

#include "ibmcast/loop.h"

struct sigwatch {
	struct imc_fd_watch w;
	struct imc_loop *loop;      /* NULL until started */
	unsigned hits;              /* signals read so far */
	int signo;                  /* the last one */
	/* Called from the loop for each signal; NULL: imc_loop_stop(). */
	void (*cb)(struct sigwatch *sw);
};

/* Blocks SIGINT and SIGTERM in the calling thread and watches them on
 * loop. Call it before any thread starts (libibumad's helper threads
 * inherit the mask; a thread that does not block the signals would take
 * them with the default action). Returns 0 or a negative errno. */
int sigwatch_start(struct sigwatch *sw, struct imc_loop *loop,
		   void (*cb)(struct sigwatch *sw));

/* Stops watching and closes the signalfd; the signals stay blocked.
 * A zero-filled sigwatch that never started is a no-op. */
void sigwatch_stop(struct sigwatch *sw);

#endif
