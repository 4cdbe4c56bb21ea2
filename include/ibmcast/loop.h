/* Event loop: timers on a binary min-heap and, in real time, fd
 * readiness.
 *
 * One API, two clocks. A virtual loop's time moves only when the loop jumps
 * to the next timer's deadline, so simulations run fast and replay exactly.
 * A real-time loop reads CLOCK_MONOTONIC and waits in epoll. Core layers
 * never read the clock themselves; they ask imc_loop_now() and arm timers.
 *
 * Time is nanoseconds in a uint64_t (imc_time_t).
 *
 * Dispatch rules:
 *  - Timers fire in order of (deadline, arming sequence): timers with equal
 *    deadlines fire in the order they were last armed, never pointer order.
 *  - A deadline before imc_loop_now() counts as now.
 *  - A round runs the timers that were due when the round began. A timer
 *    armed during a round, even for now, runs in a later round, after every
 *    timer of the current one, and never inside imc_timer_arm(). Arming at
 *    imc_loop_now() is therefore how a core defers a call to the loop
 *    (docs/architecture.md, "The callback contract", rule 1), and a
 *    callback that re-arms itself at now runs once per round instead of
 *    stalling the round.
 *  - A timer is disarmed before its callback runs. A callback may cancel or
 *    re-arm any timer, unwatch any fd, and free its own object: dispatch
 *    never touches a timer after calling it, and a timer or watch cancelled
 *    during a round gets no further callback (callback rule 3).
 *  - imc_loop_stop() takes effect after the running callback; the rest of
 *    the round stays pending (timers stay armed) for the next run.
 *
 * Nothing here is thread-safe except imc_loop_wake(). Timer, watch and run
 * functions must not be called from signal handlers.
 */
#ifndef IBMCAST_LOOP_H
#define IBMCAST_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t imc_time_t;

#define IMC_NSEC_PER_USEC 1000ull
#define IMC_NSEC_PER_MSEC 1000000ull
#define IMC_NSEC_PER_SEC 1000000000ull
#define IMC_TIME_MAX UINT64_MAX       /* never */
/* The latest time input may name (scenario times, latencies, --until):
 * 2^62 ns, about 146 years. Two such times add up without wrapping 64
 * bits, so deadlines computed from them stay in order. */
#define IMC_TIME_LIMIT (1ull << 62)

struct imc_loop;

/* A timer lives inside its owner's object; the callback gets back to the
 * object with imc_container_of(). Fields are private. A zero-filled timer
 * is unarmed; imc_timer_init() also sets the callback. */
struct imc_timer {
	void (*cb)(struct imc_timer *t);
	imc_time_t deadline;
	uint64_t seq;       /* arming order, breaks deadline ties */
	size_t pos;         /* heap index + 1 of a leader; 0 otherwise */
	/* The chain of timers of this deadline, circular, in arming order;
	 * NULL when not armed. */
	struct imc_timer *next, *prev;
};

void imc_timer_init(struct imc_timer *t, void (*cb)(struct imc_timer *t));

/* Arms t to fire at deadline (absolute loop time), moving it if it is
 * already armed; a re-armed timer counts as armed now for tie-breaks.
 * O(log n), and O(1) in the usual case where a timer armed earlier for
 * the same deadline is still armed. Returns 0, or -ENOMEM when the heap
 * cannot grow (t is then left as it was). The loop does not own t: the owner
 * must cancel it before freeing it. */
int imc_timer_arm(struct imc_loop *loop, struct imc_timer *t,
		  imc_time_t deadline);

/* Arms t at imc_loop_now(loop) + delay (saturating). */
int imc_timer_arm_in(struct imc_loop *loop, struct imc_timer *t,
		     imc_time_t delay);

/* Disarms t; no-op when it is not armed. O(log n), O(1) for a timer
 * armed after another one of its deadline. */
void imc_timer_cancel(struct imc_loop *loop, struct imc_timer *t);

bool imc_timer_armed(const struct imc_timer *t);

/* Deadline of the last arming, meaningful while armed. */
imc_time_t imc_timer_deadline(const struct imc_timer *t);

/* Readiness bits for fd watches. IMC_EV_ERROR (error or hang-up) is
 * reported whether asked for or not; read() or SO_ERROR tells which. */
enum {
	IMC_EV_READ = 1u << 0,
	IMC_EV_WRITE = 1u << 1,
	IMC_EV_ERROR = 1u << 2,
};

/* An fd watch lives inside its owner's object, like a timer. Readiness is
 * level-triggered: the callback runs every round while the fd is ready.
 * Fields are private. */
struct imc_fd_watch {
	void (*cb)(struct imc_fd_watch *w, unsigned int events);
	int fd;
	unsigned int events;  /* registered IMC_EV_* bits; 0 when not watched */
};

void imc_fd_watch_init(struct imc_fd_watch *w, int fd,
		       void (*cb)(struct imc_fd_watch *w, unsigned int events));

/* Starts watching w->fd for events (IMC_EV_READ and/or IMC_EV_WRITE), or
 * changes the events of a watch already started. Returns 0, -EINVAL for
 * an empty or unknown event set, -EOPNOTSUPP on a virtual loop, or the
 * negative errno of epoll_ctl(). The loop does not own w or the fd. */
int imc_loop_watch_fd(struct imc_loop *loop, struct imc_fd_watch *w,
		      unsigned int events);

/* Stops watching; no callback for w runs after this returns, even for
 * readiness already collected in the current round. Call it before closing
 * the fd. No-op when w is not watched. Returns 0 or the negative errno of
 * epoll_ctl() (w is not watched afterwards either way). */
int imc_loop_unwatch_fd(struct imc_loop *loop, struct imc_fd_watch *w);

bool imc_fd_watch_active(const struct imc_fd_watch *w);

/* A loop whose clock starts at start and moves only to timer deadlines.
 * Returns 0 or -ENOMEM. */
int imc_loop_create_virtual(imc_time_t start, struct imc_loop **out);

/* A loop on CLOCK_MONOTONIC and epoll. Returns 0 or a negative errno. */
int imc_loop_create_realtime(struct imc_loop **out);

/* Frees the loop. Owners must cancel their timers and unwatch their fds
 * first: whatever is still registered is forgotten, not touched (its
 * imc_timer_armed() stays true). Returns how many timers and watches were
 * forgotten, so that tests can check that none were. Must not be called
 * from a callback of this loop. */
size_t imc_loop_destroy(struct imc_loop *loop);

bool imc_loop_is_virtual(const struct imc_loop *loop);

/* Current loop time. Virtual: the last deadline reached (or run_until
 * target). Real time: inside a run, the clock as read at the start of the
 * current round, so all callbacks of a round see one time; outside a run,
 * CLOCK_MONOTONIC read now. */
imc_time_t imc_loop_now(struct imc_loop *loop);

/* Runs rounds until no timer is armed and (real time) no fd is watched, or
 * until imc_loop_stop()/imc_loop_wake(). Returns 0, -EBUSY when called from
 * a callback of the same loop, or a negative errno from epoll. */
int imc_loop_run(struct imc_loop *loop);

/* Runs every timer due at or before deadline, including those armed along
 * the way for times up to deadline, then returns. Virtual: jumps from
 * deadline to deadline and leaves now == deadline (unless stopped first).
 * Real time: waits, serving fds, until the clock reaches deadline and no
 * timer is due. Returns as imc_loop_run(). */
int imc_loop_run_until(struct imc_loop *loop, imc_time_t deadline);

/* Runs one round. Virtual: if no timer is due now, time first jumps to the
 * earliest deadline; returns 0 without moving time when no timer is armed.
 * Real time: waits until a timer is due, an fd is ready or the loop is
 * woken (returns 0 at once when nothing is armed or watched), runs the
 * ready fds, then a timer round, which includes calls the fd callbacks
 * deferred. Returns the number of callbacks run, or a negative errno as
 * imc_loop_run(). */
int imc_loop_run_once(struct imc_loop *loop);

/* Makes the running imc_loop_run*() return after the current callback; if
 * none is running, the next one returns at once. */
void imc_loop_stop(struct imc_loop *loop);

/* imc_loop_stop() that is safe from another thread or a signal handler
 * (a lock-free atomic flag plus an eventfd write), e.g. for Ctrl-C. */
void imc_loop_wake(struct imc_loop *loop);

struct imc_loop_stats {
	uint64_t timers_fired;  /* timer callbacks run */
	uint64_t fd_events;     /* fd callbacks run */
	uint64_t rounds;        /* dispatch rounds */
	size_t timers_armed;    /* armed now */
	size_t timers_max;      /* most armed at once */
	size_t fds_watched;     /* watched now */
};

void imc_loop_get_stats(const struct imc_loop *loop,
			struct imc_loop_stats *st);

#ifdef __cplusplus
}
#endif
#endif
