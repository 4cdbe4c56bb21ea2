/* Event loop on CLOCK_MONOTONIC and epoll: fd watches, real waiting, and
 * wake-ups from another thread and from a signal handler. Real-time checks
 * assert lower bounds only; upper bounds are loose sanity limits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>

#include "ibmcast/loop.h"

#define MS IMC_NSEC_PER_MSEC

static struct imc_loop *loop;

static imc_time_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (imc_time_t)ts.tv_sec * IMC_NSEC_PER_SEC + (imc_time_t)ts.tv_nsec;
}

static int setup(void **state)
{
	int err = imc_loop_create_realtime(&loop);

	if (err) {
		fprintf(stderr, "imc_loop_create_realtime: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	size_t left = imc_loop_destroy(loop);

	loop = NULL;
	if (left)
		fprintf(stderr, "%zu timers or watches left\n", left);
	return left ? -1 : 0;
}

static void make_pipe(int fds[2])
{
	assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
}

static int stamp_seq; /* timer firings so far, numbered from 1 */

struct reader {
	struct imc_fd_watch w;
	unsigned int events;   /* last events delivered */
	int calls;
	char buf[16];
	ssize_t got;
	bool consume;
	struct reader *other;  /* unwatched and freed by this callback */
	struct imc_timer *deferred;
	bool deferred_ran_in_arm;
};

static void reader_cb(struct imc_fd_watch *w, unsigned int events)
{
	struct reader *r = imc_container_of(w, struct reader, w);

	r->events = events;
	r->calls++;
	if (r->consume)
		r->got = read(w->fd, r->buf, sizeof(r->buf));
	if (r->other) {
		assert_int_equal(imc_loop_unwatch_fd(loop, &r->other->w), 0);
		free(r->other);
		r->other = NULL;
	}
	if (r->deferred) {
		int before = stamp_seq;

		assert_int_equal(imc_timer_arm(loop, r->deferred,
					       imc_loop_now(loop)), 0);
		r->deferred_ran_in_arm = stamp_seq != before;
		r->deferred = NULL;
	}
}

static void test_pipe_readable(void **state)
{
	struct reader r = { .consume = true };
	int fds[2];
	struct imc_loop_stats st;

	make_pipe(fds);
	imc_fd_watch_init(&r.w, fds[0], reader_cb);
	assert_int_equal(imc_loop_watch_fd(loop, &r.w, IMC_EV_READ), 0);
	assert_true(imc_fd_watch_active(&r.w));
	assert_int_equal(write(fds[1], "abc", 3), 3);

	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.events, IMC_EV_READ);
	assert_int_equal(r.got, 3);
	assert_memory_equal(r.buf, "abc", 3);

	/* Level-triggered: unread data is reported again. */
	r.consume = false;
	assert_int_equal(write(fds[1], "d", 1), 1);
	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(r.calls, 3);

	imc_loop_get_stats(loop, &st);
	assert_int_equal(st.fd_events, 3);
	assert_int_equal(st.fds_watched, 1);
	assert_int_equal(imc_loop_unwatch_fd(loop, &r.w), 0);
	assert_false(imc_fd_watch_active(&r.w));
	close(fds[0]);
	close(fds[1]);
}

static void test_pipe_writable_and_modify(void **state)
{
	struct reader wr = { 0 };
	int fds[2];

	make_pipe(fds);
	imc_fd_watch_init(&wr.w, fds[1], reader_cb);
	assert_int_equal(imc_loop_watch_fd(loop, &wr.w, IMC_EV_WRITE), 0);
	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(wr.events, IMC_EV_WRITE);

	/* Same watch, new event set: MOD, not a second registration. */
	assert_int_equal(imc_loop_watch_fd(loop, &wr.w,
					   IMC_EV_READ | IMC_EV_WRITE), 0);
	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(wr.events, IMC_EV_WRITE); /* never readable */

	struct imc_loop_stats st;

	imc_loop_get_stats(loop, &st);
	assert_int_equal(st.fds_watched, 1);
	assert_int_equal(imc_loop_watch_fd(loop, &wr.w, 0), -EINVAL);
	assert_int_equal(imc_loop_watch_fd(loop, &wr.w, IMC_EV_ERROR),
			 -EINVAL);
	assert_int_equal(imc_loop_unwatch_fd(loop, &wr.w), 0);
	assert_int_equal(imc_loop_unwatch_fd(loop, &wr.w), 0); /* no-op */

	struct reader bad = { 0 };

	imc_fd_watch_init(&bad.w, 1000000, reader_cb);
	assert_int_equal(imc_loop_watch_fd(loop, &bad.w, IMC_EV_READ),
			 -EBADF);
	assert_false(imc_fd_watch_active(&bad.w));
	close(fds[0]);
	close(fds[1]);
}

static void test_hangup(void **state)
{
	struct reader r = { .consume = true };
	int fds[2];

	make_pipe(fds);
	imc_fd_watch_init(&r.w, fds[0], reader_cb);
	assert_int_equal(imc_loop_watch_fd(loop, &r.w, IMC_EV_READ), 0);
	close(fds[1]);
	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_true(r.events & IMC_EV_ERROR);
	assert_int_equal(r.got, 0); /* EOF */
	assert_int_equal(imc_loop_unwatch_fd(loop, &r.w), 0);
	close(fds[0]);
}

struct stamp {
	struct imc_timer t;
	imc_time_t fired_clock;
	imc_time_t fired_now;
	int order;
};

static void stamp_cb(struct imc_timer *t)
{
	struct stamp *s = imc_container_of(t, struct stamp, t);

	s->fired_clock = clock_ns();
	s->fired_now = imc_loop_now(loop);
	s->order = ++stamp_seq;
}

/* A watch unwatched after the loop collected its readiness gets no call:
 * whichever of two ready pipes runs first unwatches and frees the other. */
static void test_unwatch_pending(void **state)
{
	struct reader *a = calloc(1, sizeof(*a));
	struct reader *b = calloc(1, sizeof(*b));
	struct reader *first;
	int p[2], q[2];

	assert_non_null(a);
	assert_non_null(b);
	make_pipe(p);
	make_pipe(q);
	imc_fd_watch_init(&a->w, p[0], reader_cb);
	imc_fd_watch_init(&b->w, q[0], reader_cb);
	a->other = b;
	b->other = a;
	assert_int_equal(imc_loop_watch_fd(loop, &a->w, IMC_EV_READ), 0);
	assert_int_equal(imc_loop_watch_fd(loop, &b->w, IMC_EV_READ), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(write(q[1], "y", 1), 1);

	assert_int_equal(imc_loop_run_once(loop), 1);
	first = a->calls ? a : b;
	assert_int_equal(first->calls, 1);
	assert_null(first->other);
	assert_int_equal(imc_loop_unwatch_fd(loop, &first->w), 0);
	free(first);
	for (int i = 0; i < 2; i++) {
		close(p[i]);
		close(q[i]);
	}
}

/* After unwatch, ready data no longer calls back: only the timer runs. */
static void test_unwatch_stops_delivery(void **state)
{
	struct reader r = { 0 };
	struct stamp s = { 0 };
	int fds[2];
	char c;

	make_pipe(fds);
	imc_fd_watch_init(&r.w, fds[0], reader_cb);
	assert_int_equal(imc_loop_watch_fd(loop, &r.w, IMC_EV_READ), 0);
	assert_int_equal(imc_loop_unwatch_fd(loop, &r.w), 0);
	assert_int_equal(write(fds[1], "z", 1), 1);
	imc_timer_init(&s.t, stamp_cb);
	assert_int_equal(imc_timer_arm_in(loop, &s.t, 30 * MS), 0);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(r.calls, 0);
	assert_int_not_equal(s.order, 0);
	assert_int_equal(read(fds[0], &c, 1), 1); /* still unread */
	assert_int_equal(c, 'z');
	close(fds[0]);
	close(fds[1]);
}

static void test_timer_not_early(void **state)
{
	struct stamp a = { 0 }, b = { 0 };
	imc_time_t t0 = clock_ns();
	imc_time_t da, db;

	stamp_seq = 0;
	imc_timer_init(&a.t, stamp_cb);
	imc_timer_init(&b.t, stamp_cb);
	assert_int_equal(imc_timer_arm_in(loop, &a.t, 20 * MS), 0);
	assert_int_equal(imc_timer_arm_in(loop, &b.t, 5 * MS), 0);
	da = imc_timer_deadline(&a.t);
	db = imc_timer_deadline(&b.t);
	assert_true(da >= t0 + 20 * MS);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(b.order, 1);
	assert_int_equal(a.order, 2);
	assert_true(a.fired_clock >= t0 + 20 * MS);
	assert_true(a.fired_clock >= da);
	assert_true(a.fired_now >= da);
	assert_true(b.fired_clock >= db);
	assert_true(imc_loop_now(loop) >= da);
	print_message("20 ms timer fired %.3f ms after its deadline\n",
		      (double)(a.fired_clock - da) / MS);
}

static void test_run_until_realtime(void **state)
{
	struct stamp a = { 0 }, b = { 0 };
	imc_time_t t0 = imc_loop_now(loop), end;

	stamp_seq = 0;
	/* Nothing armed: still waits for real. */
	assert_int_equal(imc_loop_run_until(loop, t0 + 15 * MS), 0);
	assert_true(clock_ns() >= t0 + 15 * MS);

	imc_timer_init(&a.t, stamp_cb);
	imc_timer_init(&b.t, stamp_cb);
	t0 = imc_loop_now(loop);
	imc_timer_arm(loop, &a.t, t0 + 10 * MS);
	imc_timer_arm(loop, &b.t, t0 + 10 * IMC_NSEC_PER_SEC);
	end = t0 + 30 * MS;
	assert_int_equal(imc_loop_run_until(loop, end), 0);
	assert_true(clock_ns() >= end);
	assert_int_equal(a.order, 1);
	assert_true(a.fired_clock >= t0 + 10 * MS);
	assert_int_equal(b.order, 0);
	assert_true(imc_timer_armed(&b.t));
	imc_timer_cancel(loop, &b.t);
}

/* An fd callback defers a call by arming at now: it is not called inside
 * imc_timer_arm() and runs in the same step's timer round. */
static void test_deferred_from_fd(void **state)
{
	struct reader r = { .consume = true };
	struct stamp s = { 0 };
	int fds[2];

	stamp_seq = 0;
	make_pipe(fds);
	imc_timer_init(&s.t, stamp_cb);
	imc_fd_watch_init(&r.w, fds[0], reader_cb);
	r.deferred = &s.t;
	assert_int_equal(imc_loop_watch_fd(loop, &r.w, IMC_EV_READ), 0);
	assert_int_equal(write(fds[1], "q", 1), 1);
	assert_int_equal(imc_loop_run_once(loop), 2);
	assert_false(r.deferred_ran_in_arm);
	assert_int_equal(s.order, 1);
	assert_false(imc_timer_armed(&s.t));
	assert_int_equal(imc_loop_unwatch_fd(loop, &r.w), 0);
	close(fds[0]);
	close(fds[1]);
}

/* A run with only an fd watched ends when the callback unwatches it. */
static void unwatch_self(struct imc_fd_watch *w, unsigned int events)
{
	imc_loop_unwatch_fd(loop, w);
}

static void test_run_ends_without_work(void **state)
{
	struct imc_fd_watch w;
	int fds[2];

	make_pipe(fds);
	imc_fd_watch_init(&w, fds[1], unwatch_self);
	assert_int_equal(imc_loop_watch_fd(loop, &w, IMC_EV_WRITE), 0);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_false(imc_fd_watch_active(&w));
	/* Nothing to wait for: returns without blocking. */
	assert_int_equal(imc_loop_run_once(loop), 0);
	assert_int_equal(imc_loop_run(loop), 0);
	close(fds[0]);
	close(fds[1]);
}

static void *waker(void *arg)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	imc_loop_wake(arg);
	return NULL;
}

/* A wake from another thread interrupts the wait and ends the run while a
 * timer is still 10 s away. */
static void test_wake_from_thread(void **state)
{
	struct stamp s = { 0 };
	pthread_t th;
	imc_time_t t0 = clock_ns();

	imc_timer_init(&s.t, stamp_cb);
	assert_int_equal(imc_timer_arm_in(loop, &s.t, 10 * IMC_NSEC_PER_SEC),
			 0);
	assert_int_equal(pthread_create(&th, NULL, waker, loop), 0);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(clock_ns() >= t0 + 50 * MS);
	assert_int_equal(s.order, 0);
	assert_true(imc_timer_armed(&s.t));

	/* The wake was consumed by that run; the loop still works. */
	imc_timer_arm_in(loop, &s.t, 1 * MS);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_not_equal(s.order, 0);
}

static struct imc_loop *sig_loop;

static void on_alarm(int sig)
{
	imc_loop_wake(sig_loop);
}

static void test_wake_from_signal(void **state)
{
	struct stamp s = { 0 };
	struct sigaction sa, old;
	struct itimerval it = { .it_value = { 0, 40 * 1000 } };
	imc_time_t t0 = clock_ns();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sig_loop = loop;
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);

	imc_timer_init(&s.t, stamp_cb);
	assert_int_equal(imc_timer_arm_in(loop, &s.t, 10 * IMC_NSEC_PER_SEC),
			 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_true(clock_ns() >= t0 + 40 * 1000 * 1000ull);
	assert_int_equal(s.order, 0);
	assert_true(imc_timer_armed(&s.t));
	imc_timer_cancel(loop, &s.t);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pipe_readable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pipe_writable_and_modify,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwatch_pending, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unwatch_stops_delivery,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_not_early, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_until_realtime, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_deferred_from_fd, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_ends_without_work,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wake_from_thread, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wake_from_signal, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
