/* Event loop: timer heap, virtual clock, and the epoll real-time loop.
 *
 * Timers fire in (deadline, seq) order; seq comes from a counter bumped on
 * every arm, so equal deadlines fire in arming order.
 *
 * Timers sit in a binary min-heap ordered by (deadline, seq), entries
 * being (deadline, timer) pairs; each timer in the heap stores its index
 * + 1, so cancel and re-arm find it without searching. Simulations arm
 * many timers for one instant (completions at now, the cables of a
 * symmetric tree delivering broadcast copies in step), and a heap of
 * equal deadlines sifts through ties whose order is read from the timers
 * themselves, a cache miss per comparison. So a timer armed for the
 * deadline of a timer already in the heap (its leader) does not enter the
 * heap: it joins the leader's chain, a circular list in arming order
 * (appending keeps it sorted by seq, every follower after its leader).
 * When the leader fires or goes, its first follower takes its heap slot
 * and sifts down from there: its key grew, but no further than the next
 * deadline unless other leaders share the deadline, so the sift stops at
 * once. Leaders are found by deadline in a small direct-mapped table and
 * at the heap's top, where calls deferred to now go; a tie the table
 * misses (two deadlines in one slot) gets a leader of its own, which
 * costs time, not order. Arming, cancelling and firing a follower is
 * O(1); a leader costs O(log n) as any heap entry.
 *
 * A round runs the timers due when it begins: it notes the counter on
 * entry (end) and stops at the first heap top that is not due or has
 * seq >= end. Stopping there loses nothing: a timer armed during the round
 * has a deadline >= the round's time (earlier deadlines are raised to now),
 * so when such a timer is on top, any due timer below it has the same
 * deadline and a later seq, i.e. was armed during the round as well.
 *
 * Real time: a step waits in epoll until the earliest deadline (or the
 * caller's limit), runs the fd callbacks of the readiness it collected,
 * then a timer round. The fd events of a step are kept in the loop so that
 * unwatching a watch blanks its pending entry: no callback after unwatch.
 * imc_loop_wake() sets an atomic flag and writes an eventfd registered in
 * the same epoll set, which interrupts the wait.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "ibmcast/loop.h"

_Static_assert(ATOMIC_INT_LOCK_FREE == 2,
	       "imc_loop_wake() needs a lock-free int to be signal-safe");

enum {
	MAX_EVENTS = 64,
	HEAP_MIN = 16,
	LEADERS = 256,             /* slots of the leader table */
};

/* A heap entry caches its timer's deadline so that sifting compares
 * within the array instead of loading every timer it passes; so does a
 * leader table entry. */
struct slot {
	imc_time_t deadline;
	struct imc_timer *t;
};

struct imc_loop {
	imc_time_t now;
	uint64_t seq;              /* next arming sequence number */
	struct slot *heap;         /* heap[0] is the earliest timer */
	struct slot *mem;          /* allocation holding heap */
	size_t nheap;              /* leaders */
	size_t cap;
	size_t ntimers;            /* leaders and followers */
	struct slot leader[LEADERS];  /* by deadline: t NULL or a leader */
	bool realtime;
	bool running;              /* inside imc_loop_run*() */
	bool stop;
	atomic_int woken;          /* set by imc_loop_wake() */
	struct imc_loop_stats st;

	/* Real time only. */
	int epfd;
	int wakefd;
	bool no_pwait2;            /* kernel lacks epoll_pwait2(): ms waits */
	size_t nwatch;
	int npending;              /* events[0..npending) being dispatched */
	struct epoll_event events[MAX_EVENTS];
};

/* ---- heap of leaders ---- */

static bool before(const struct slot *a, const struct slot *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return a->t->seq < b->t->seq;
}

static void place(struct imc_loop *loop, size_t i, struct slot s)
{
	loop->heap[i] = s;
	s.t->pos = i + 1;
}

static void sift_up(struct imc_loop *loop, size_t i)
{
	struct slot s = loop->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(&s, &loop->heap[parent]))
			break;
		place(loop, i, loop->heap[parent]);
		i = parent;
	}
	place(loop, i, s);
}

static void sift_down(struct imc_loop *loop, size_t i)
{
	struct slot s = loop->heap[i];
	size_t n = loop->nheap;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&loop->heap[c + 1], &loop->heap[c]))
			c++;
		if (!before(&loop->heap[c], &s))
			break;
		place(loop, i, loop->heap[c]);
		i = c;
	}
	place(loop, i, s);
}

/* Restores heap order around index i after its key changed. */
static void fix(struct imc_loop *loop, size_t i)
{
	if (i > 0 && before(&loop->heap[i], &loop->heap[(i - 1) / 2]))
		sift_up(loop, i);
	else
		sift_down(loop, i);
}

/* The array starts one slot into a cache-line-aligned block, so that the
 * two children of any node (2i+1, 2i+2) share one 32-byte-aligned pair. */
static int grow(struct imc_loop *loop)
{
	size_t cap = loop->cap ? loop->cap * 2 : HEAP_MIN;
	size_t bytes;
	struct slot *mem;

	if (cap > SIZE_MAX / sizeof(*mem) - 4)
		return -ENOMEM;
	bytes = (cap + 4) * sizeof(*mem); /* a multiple of 64 */
	mem = aligned_alloc(64, bytes);
	if (!mem)
		return -ENOMEM;
	if (loop->nheap)
		memcpy(mem + 1, loop->heap, loop->nheap * sizeof(*mem));
	free(loop->mem);
	loop->mem = mem;
	loop->heap = mem + 1;
	loop->cap = cap;
	return 0;
}

/* ---- chains of one deadline ---- */

/* Fibonacci hashing: consecutive deadlines spread over the table. */
static size_t leader_slot(imc_time_t deadline)
{
	return (size_t)((deadline * 0x9e3779b97f4a7c15ull) >> 56) &
	       (LEADERS - 1);
}

/* An armed leader of deadline, or NULL when none is known. */
static struct imc_timer *leader_find(const struct imc_loop *loop,
				     imc_time_t deadline)
{
	const struct slot *l;

	if (loop->nheap && loop->heap[0].deadline == deadline)
		return loop->heap[0].t;
	l = &loop->leader[leader_slot(deadline)];
	return l->deadline == deadline ? l->t : NULL;
}

/* Takes t out: a follower leaves its chain; a leader hands its heap slot
 * to its first follower, or leaves the heap. */
static void unlink_timer(struct imc_loop *loop, struct imc_timer *t)
{
	loop->ntimers--;
	if (!t->pos) {
		t->prev->next = t->next;
		t->next->prev = t->prev;
		t->next = t->prev = NULL;
		return;
	}
	{
		size_t i = t->pos - 1;
		struct slot *ls = &loop->leader[leader_slot(t->deadline)];

		assert(loop->heap[i].t == t);
		t->pos = 0;
		if (t->next != t) {
			struct imc_timer *f = t->next;

			t->prev->next = f;
			f->prev = t->prev;
			if (ls->t == t)
				ls->t = f;
			size_t c = 2 * i + 1;
			imc_time_t d = loop->heap[i].deadline;

			loop->heap[i].t = f;
			f->pos = i + 1;
			/* f's seq is larger than t's: only a child of the
			 * same deadline can come before it now. */
			if (c < loop->nheap &&
			    (loop->heap[c].deadline <= d ||
			     (c + 1 < loop->nheap &&
			      loop->heap[c + 1].deadline <= d)))
				sift_down(loop, i);
		} else {
			struct slot last = loop->heap[--loop->nheap];

			if (ls->t == t)
				*ls = (struct slot){ 0, NULL };
			if (last.t != t) {
				place(loop, i, last);
				fix(loop, i);
			}
		}
		t->next = t->prev = NULL;
	}
}

/* ---- timers ---- */

void imc_timer_init(struct imc_timer *t, void (*cb)(struct imc_timer *t))
{
	t->cb = cb;
	t->deadline = 0;
	t->seq = 0;
	t->pos = 0;
	t->next = t->prev = NULL;
}

int imc_timer_arm(struct imc_loop *loop, struct imc_timer *t,
		  imc_time_t deadline)
{
	struct imc_timer *l;

	if (deadline < loop->now)
		deadline = loop->now;
	/* Room for one more leader first, so that a failure leaves t as it
	 * was. */
	if (loop->nheap == loop->cap) {
		int err = grow(loop);

		if (err)
			return err;
	}
	if (t->next)
		unlink_timer(loop, t);
	l = leader_find(loop, deadline);
	t->deadline = deadline;
	t->seq = loop->seq++;
	if (l) {
		/* Last of l's chain. */
		t->prev = l->prev;
		t->next = l;
		l->prev->next = t;
		l->prev = t;
	} else {
		t->next = t->prev = t;
		loop->heap[loop->nheap++] = (struct slot){ deadline, t };
		sift_up(loop, loop->nheap - 1);
		loop->leader[leader_slot(deadline)] =
			(struct slot){ deadline, t };
	}
	if (++loop->ntimers > loop->st.timers_max)
		loop->st.timers_max = loop->ntimers;
	return 0;
}

int imc_timer_arm_in(struct imc_loop *loop, struct imc_timer *t,
		     imc_time_t delay)
{
	imc_time_t now = imc_loop_now(loop);

	return imc_timer_arm(loop, t,
			     delay > IMC_TIME_MAX - now ? IMC_TIME_MAX :
							  now + delay);
}

void imc_timer_cancel(struct imc_loop *loop, struct imc_timer *t)
{
	if (t->next)
		unlink_timer(loop, t);
}

bool imc_timer_armed(const struct imc_timer *t)
{
	return t->next != NULL;
}

imc_time_t imc_timer_deadline(const struct imc_timer *t)
{
	return t->deadline;
}

/* ---- dispatch ---- */

static bool stopping(struct imc_loop *loop)
{
	return loop->stop ||
	       atomic_load_explicit(&loop->woken, memory_order_relaxed);
}

static int run_timers(struct imc_loop *loop, imc_time_t now)
{
	uint64_t end = loop->seq;
	int ran = 0;

	loop->st.rounds++;
	while (loop->nheap && !stopping(loop)) {
		struct imc_timer *t = loop->heap[0].t;

		if (t->deadline > now || t->seq >= end)
			break;
		unlink_timer(loop, t);
		loop->st.timers_fired++;
		ran++;
		/* t may be freed by its callback: not touched after this. */
		t->cb(t);
	}
	return ran;
}

static imc_time_t monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (imc_time_t)ts.tv_sec * IMC_NSEC_PER_SEC + (imc_time_t)ts.tv_nsec;
}

/* Advances a real-time loop's now to the clock (never backwards). */
static imc_time_t refresh(struct imc_loop *loop)
{
	imc_time_t t = monotonic();

	if (t > loop->now)
		loop->now = t;
	return loop->now;
}

static int virt_step(struct imc_loop *loop)
{
	if (!loop->nheap)
		return 0;
	if (loop->heap[0].deadline > loop->now)
		loop->now = loop->heap[0].deadline;
	return run_timers(loop, loop->now);
}

/* Waits for fd events until the clock reaches until (IMC_TIME_MAX: no
 * limit); returns the number of events, 0 on timeout or signal. */
static int wait_events(struct imc_loop *loop, imc_time_t now, imc_time_t until)
{
	imc_time_t d = until > now ? until - now : 0;
	int n, timeout;

	if (!loop->no_pwait2) {
		struct timespec ts, *tp = NULL;

		if (until != IMC_TIME_MAX) {
			ts.tv_sec = (time_t)(d / IMC_NSEC_PER_SEC);
			ts.tv_nsec = (long)(d % IMC_NSEC_PER_SEC);
			tp = &ts;
		}
		n = epoll_pwait2(loop->epfd, loop->events, MAX_EVENTS, tp, NULL);
		if (n >= 0)
			return n;
		/* ENOSYS before Linux 5.11; EPERM from seccomp filters
		 * that predate the call. */
		if (errno != ENOSYS && errno != EPERM)
			return errno == EINTR ? 0 : -errno;
		loop->no_pwait2 = true;
	}
	/* Round the millisecond timeout up so the wait never ends before
	 * the deadline. */
	if (until == IMC_TIME_MAX)
		timeout = -1;
	else if (d / IMC_NSEC_PER_MSEC >= INT_MAX)
		timeout = INT_MAX;
	else
		timeout = (int)((d + IMC_NSEC_PER_MSEC - 1) / IMC_NSEC_PER_MSEC);
	n = epoll_wait(loop->epfd, loop->events, MAX_EVENTS, timeout);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n;
}

static unsigned int to_imc(uint32_t ev)
{
	return (ev & EPOLLIN ? IMC_EV_READ : 0u) |
	       (ev & EPOLLOUT ? IMC_EV_WRITE : 0u) |
	       (ev & (EPOLLERR | EPOLLHUP) ? IMC_EV_ERROR : 0u);
}

static void drain_wake(struct imc_loop *loop)
{
	uint64_t v;
	ssize_t r;

	/* Reading an eventfd zeroes it; the fd is non-blocking. */
	do
		r = read(loop->wakefd, &v, sizeof(v));
	while (r < 0 && errno == EINTR);
}

static int run_fds(struct imc_loop *loop, int n)
{
	int ran = 0;

	loop->npending = n;
	for (int i = 0; i < loop->npending && !stopping(loop); i++) {
		void *p = loop->events[i].data.ptr;
		struct imc_fd_watch *w;
		unsigned int ev;

		if (!p)
			continue; /* unwatched during this step */
		if (p == loop) {
			drain_wake(loop);
			continue;
		}
		w = p;
		ev = to_imc(loop->events[i].events) &
		     (w->events | IMC_EV_ERROR);
		if (!ev)
			continue;
		loop->st.fd_events++;
		ran++;
		w->cb(w, ev);
	}
	loop->npending = 0;
	return ran;
}

static int rt_step(struct imc_loop *loop, imc_time_t limit)
{
	imc_time_t now = refresh(loop);
	imc_time_t until = limit;
	int n, ran;

	if (loop->nheap && loop->heap[0].deadline < until)
		until = loop->heap[0].deadline;
	n = wait_events(loop, now, until);
	if (n < 0)
		return n;
	refresh(loop);
	ran = run_fds(loop, n);
	if (!stopping(loop))
		ran += run_timers(loop, refresh(loop));
	return ran;
}

static int enter(struct imc_loop *loop)
{
	if (loop->running)
		return -EBUSY;
	loop->running = true;
	return 0;
}

/* A stop request ends the run it interrupted and nothing after it. */
static void leave(struct imc_loop *loop)
{
	loop->running = false;
	loop->stop = false;
	atomic_store_explicit(&loop->woken, 0, memory_order_relaxed);
}

int imc_loop_run_once(struct imc_loop *loop)
{
	int ret = enter(loop);

	if (ret)
		return ret;
	if (stopping(loop))
		ret = 0;
	else if (!loop->realtime)
		ret = virt_step(loop);
	else if (loop->nheap || loop->nwatch)
		ret = rt_step(loop, IMC_TIME_MAX);
	leave(loop);
	return ret;
}

int imc_loop_run(struct imc_loop *loop)
{
	int ret = enter(loop);

	if (ret)
		return ret;
	while (!stopping(loop)) {
		if (!loop->realtime) {
			if (!loop->nheap)
				break;
			virt_step(loop);
			continue;
		}
		if (!loop->nheap && !loop->nwatch)
			break;
		ret = rt_step(loop, IMC_TIME_MAX);
		if (ret < 0)
			break;
		ret = 0;
	}
	leave(loop);
	return ret;
}

int imc_loop_run_until(struct imc_loop *loop, imc_time_t deadline)
{
	int ret = enter(loop);

	if (ret)
		return ret;
	if (!loop->realtime) {
		while (!stopping(loop) && loop->nheap &&
		       loop->heap[0].deadline <= deadline)
			virt_step(loop);
		if (!stopping(loop) && loop->now < deadline)
			loop->now = deadline;
		leave(loop);
		return 0;
	}
	/* Done once a round at or after deadline left nothing due at its
	 * time; calls deferred by that round (armed at now) get their round. */
	while (!stopping(loop)) {
		ret = rt_step(loop, deadline);
		if (ret < 0)
			break;
		ret = 0;
		if (loop->now >= deadline &&
		    (!loop->nheap || loop->heap[0].deadline > loop->now))
			break;
	}
	leave(loop);
	return ret;
}

void imc_loop_stop(struct imc_loop *loop)
{
	loop->stop = true;
}

void imc_loop_wake(struct imc_loop *loop)
{
	int saved = errno;

	atomic_store_explicit(&loop->woken, 1, memory_order_relaxed);
	if (loop->wakefd >= 0) {
		uint64_t one = 1;
		/* Only fails (EAGAIN) when the counter is already huge, i.e.
		 * the loop has a wake-up pending anyway. */
		ssize_t r = write(loop->wakefd, &one, sizeof(one));

		(void)r;
	}
	errno = saved;
}

imc_time_t imc_loop_now(struct imc_loop *loop)
{
	/* Inside a run the clock is read at the start of each round, so
	 * every callback of a round sees one time. */
	if (loop->realtime && !loop->running)
		return refresh(loop);
	return loop->now;
}

bool imc_loop_is_virtual(const struct imc_loop *loop)
{
	return !loop->realtime;
}

void imc_loop_get_stats(const struct imc_loop *loop,
			struct imc_loop_stats *st)
{
	*st = loop->st;
	st->timers_armed = loop->ntimers;
	st->fds_watched = loop->nwatch;
}

/* ---- fd watches ---- */

void imc_fd_watch_init(struct imc_fd_watch *w, int fd,
		       void (*cb)(struct imc_fd_watch *w, unsigned int events))
{
	w->cb = cb;
	w->fd = fd;
	w->events = 0;
}

int imc_loop_watch_fd(struct imc_loop *loop, struct imc_fd_watch *w,
		      unsigned int events)
{
	struct epoll_event ev = { 0 };

	if (!loop->realtime)
		return -EOPNOTSUPP;
	if (!events || (events & ~(unsigned int)(IMC_EV_READ | IMC_EV_WRITE)))
		return -EINVAL;
	ev.events = (events & IMC_EV_READ ? EPOLLIN : 0u) |
		    (events & IMC_EV_WRITE ? EPOLLOUT : 0u);
	ev.data.ptr = w;
	if (epoll_ctl(loop->epfd, w->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
		      w->fd, &ev) < 0)
		return -errno;
	if (!w->events)
		loop->nwatch++;
	w->events = events;
	return 0;
}

int imc_loop_unwatch_fd(struct imc_loop *loop, struct imc_fd_watch *w)
{
	int ret = 0;

	if (!w->events)
		return 0;
	if (!loop->realtime)
		return -EOPNOTSUPP;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL) < 0)
		ret = -errno;
	w->events = 0;
	loop->nwatch--;
	for (int i = 0; i < loop->npending; i++)
		if (loop->events[i].data.ptr == w)
			loop->events[i].data.ptr = NULL;
	return ret;
}

bool imc_fd_watch_active(const struct imc_fd_watch *w)
{
	return w->events != 0;
}

/* ---- create / destroy ---- */

int imc_loop_create_virtual(imc_time_t start, struct imc_loop **out)
{
	struct imc_loop *loop = calloc(1, sizeof(*loop));

	if (!loop)
		return -ENOMEM;
	loop->now = start;
	loop->epfd = -1;
	loop->wakefd = -1;
	atomic_init(&loop->woken, 0);
	*out = loop;
	return 0;
}

int imc_loop_create_realtime(struct imc_loop **out)
{
	struct imc_loop *loop = calloc(1, sizeof(*loop));
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	if (!loop)
		return -ENOMEM;
	loop->realtime = true;
	atomic_init(&loop->woken, 0);
	loop->wakefd = -1;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0)
		goto fail;
	loop->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (loop->wakefd < 0)
		goto fail;
	ev.data.ptr = loop;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wakefd, &ev) < 0)
		goto fail;
	refresh(loop);
	*out = loop;
	return 0;
fail:
	err = -errno;
	imc_loop_destroy(loop);
	return err;
}

size_t imc_loop_destroy(struct imc_loop *loop)
{
	size_t left;

	if (!loop)
		return 0;
	left = loop->ntimers + loop->nwatch;
	if (loop->wakefd >= 0)
		close(loop->wakefd);
	if (loop->epfd >= 0)
		close(loop->epfd);
	free(loop->mem);
	free(loop);
	return left;
}
