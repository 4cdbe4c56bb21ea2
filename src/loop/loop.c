/* Event loop: timer heap, virtual clock, and the epoll real-time loop.
 *
 * Timers fire in (deadline, seq) order; seq comes from a counter bumped on
 * every arm, so equal deadlines fire in arming order. The timers of one
 * deadline share a bucket, a list in arming order (appending keeps it
 * sorted by seq), and the buckets sit in a binary min-heap ordered by
 * deadline alone, since no two share one, plus a hash table from deadline
 * to bucket. Simulations arm many timers for the same instant (a
 * completion at now, the cables of a symmetric tree carrying the same
 * broadcast copies in step): arming, cancelling and firing such a timer
 * is O(1) list work, and only the first or last timer of a deadline pays
 * the O(log d) heap operation. The heap never compares two timers of one
 * deadline, so sifting reads no timer at all. Each bucket stores its heap
 * index + 1, so removing an emptied bucket finds it without searching.
 *
 * A round runs the timers due when it begins: it notes the counter on
 * entry (end) and stops at the first timer (the head of the earliest
 * bucket) that is not due or has seq >= end. Stopping there loses nothing:
 * a timer armed during the round has a deadline >= the round's time
 * (earlier deadlines are raised to now), so when such a timer is first,
 * any due timer after it has the same deadline and a later seq, i.e. was
 * armed during the round as well.
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
	TAB_MIN_BITS = 4,
};

/* The armed timers of one deadline, in arming order. */
struct imc_timer_bucket {
	imc_time_t deadline;
	struct imc_timer *head, *tail;
	struct imc_timer_bucket *hnext;  /* hash chain; the spare list */
	size_t pos;                      /* heap index + 1 */
};

/* A heap entry caches its bucket's deadline so that sifting compares
 * within the array instead of loading every bucket it passes. */
struct slot {
	imc_time_t deadline;
	struct imc_timer_bucket *b;
};

struct imc_loop {
	imc_time_t now;
	uint64_t seq;              /* next arming sequence number */
	struct slot *heap;         /* heap[0]: the earliest deadline */
	struct slot *mem;          /* allocation holding heap */
	size_t nheap;              /* buckets, i.e. distinct deadlines */
	size_t cap;
	struct imc_timer_bucket **tab;  /* by deadline, 1 << tab_bits chains */
	unsigned tab_bits;
	struct imc_timer_bucket *last;  /* the bucket last armed into */
	struct imc_timer_bucket *spare; /* emptied buckets, for reuse */
	size_t ntimers;            /* armed timers */
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

/* ---- heap of buckets ---- */

static void place(struct imc_loop *loop, size_t i, struct slot s)
{
	loop->heap[i] = s;
	s.b->pos = i + 1;
}

static void sift_up(struct imc_loop *loop, size_t i)
{
	struct slot s = loop->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (s.deadline >= loop->heap[parent].deadline)
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
		if (c + 1 < n &&
		    loop->heap[c + 1].deadline < loop->heap[c].deadline)
			c++;
		if (loop->heap[c].deadline >= s.deadline)
			break;
		place(loop, i, loop->heap[c]);
		i = c;
	}
	place(loop, i, s);
}

static void heap_del(struct imc_loop *loop, struct imc_timer_bucket *b)
{
	size_t i = b->pos - 1;
	struct slot last = loop->heap[--loop->nheap];

	assert(i <= loop->nheap && loop->heap[i].b == b);
	b->pos = 0;
	if (last.b == b)
		return;
	place(loop, i, last);
	if (i > 0 && last.deadline < loop->heap[(i - 1) / 2].deadline)
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

/* ---- buckets by deadline ---- */

/* Fibonacci hashing: consecutive deadlines spread over the chains. */
static size_t chain(const struct imc_loop *loop, imc_time_t deadline)
{
	return (size_t)((deadline * 0x9e3779b97f4a7c15ull) >>
			(64 - loop->tab_bits));
}

static struct imc_timer_bucket *bucket_find(struct imc_loop *loop,
					    imc_time_t deadline)
{
	struct imc_timer_bucket *b = loop->last;

	/* The bucket armed into last, or the earliest one (calls deferred
	 * to now land there), before the table. */
	if (b && b->deadline == deadline)
		return b;
	if (loop->nheap && loop->heap[0].deadline == deadline)
		return loop->heap[0].b;
	if (!loop->tab)
		return NULL;
	for (b = loop->tab[chain(loop, deadline)]; b; b = b->hnext)
		if (b->deadline == deadline)
			return b;
	return NULL;
}

/* Doubles the table at load 1; when that fails the chains grow longer
 * instead, which costs time but loses nothing. */
static void tab_grow(struct imc_loop *loop)
{
	unsigned bits = loop->tab ? loop->tab_bits + 1 : TAB_MIN_BITS;
	struct imc_timer_bucket **nt = calloc((size_t)1 << bits, sizeof(*nt));
	size_t old = loop->tab ? (size_t)1 << loop->tab_bits : 0;

	if (!nt)
		return;
	loop->tab_bits = bits;
	for (size_t i = 0; i < old; i++) {
		struct imc_timer_bucket *b = loop->tab[i], *next;

		for (; b; b = next) {
			size_t c = chain(loop, b->deadline);

			next = b->hnext;
			b->hnext = nt[c];
			nt[c] = b;
		}
	}
	free(loop->tab);
	loop->tab = nt;
}

/* Out of line: the first timer of a deadline is the rarer case, and
 * inlined it would weigh on every arm. */
__attribute__((noinline))
static struct imc_timer_bucket *bucket_new(struct imc_loop *loop,
					   imc_time_t deadline)
{
	struct imc_timer_bucket *b;
	size_t c;

	if (!loop->tab || loop->nheap >> loop->tab_bits)
		tab_grow(loop);
	if (!loop->tab || (loop->nheap == loop->cap && grow(loop)))
		return NULL;
	b = loop->spare;
	if (b)
		loop->spare = b->hnext;
	else if (!(b = malloc(sizeof(*b))))
		return NULL;
	b->deadline = deadline;
	b->head = b->tail = NULL;
	c = chain(loop, deadline);
	b->hnext = loop->tab[c];
	loop->tab[c] = b;
	loop->heap[loop->nheap++] = (struct slot){ deadline, b };
	sift_up(loop, loop->nheap - 1);
	return b;
}

__attribute__((noinline))
static void bucket_free(struct imc_loop *loop, struct imc_timer_bucket *b)
{
	struct imc_timer_bucket **pp = &loop->tab[chain(loop, b->deadline)];

	heap_del(loop, b);
	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	if (loop->last == b)
		loop->last = NULL;
	b->hnext = loop->spare;
	loop->spare = b;
}

/* Takes t out of its bucket, and the bucket out of the loop once empty. */
static void unlink_timer(struct imc_loop *loop, struct imc_timer *t)
{
	struct imc_timer_bucket *b = t->bucket;

	if (t->prev)
		t->prev->next = t->next;
	else
		b->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		b->tail = t->prev;
	t->next = t->prev = NULL;
	t->bucket = NULL;
	loop->ntimers--;
	if (!b->head)
		bucket_free(loop, b);
}

/* ---- timers ---- */

void imc_timer_init(struct imc_timer *t, void (*cb)(struct imc_timer *t))
{
	t->cb = cb;
	t->deadline = 0;
	t->seq = 0;
	t->next = t->prev = NULL;
	t->bucket = NULL;
}

int imc_timer_arm(struct imc_loop *loop, struct imc_timer *t,
		  imc_time_t deadline)
{
	struct imc_timer_bucket *b;

	if (deadline < loop->now)
		deadline = loop->now;
	b = bucket_find(loop, deadline);
	if (!b) {
		b = bucket_new(loop, deadline);
		if (!b)
			return -ENOMEM;
	}
	loop->last = b;
	t->seq = loop->seq++;
	if (t->bucket == b && b->tail == t)
		return 0;   /* last of its deadline already: order unchanged */
	if (t->bucket)
		unlink_timer(loop, t);
	t->deadline = deadline;
	t->bucket = b;
	t->next = NULL;
	t->prev = b->tail;
	if (b->tail)
		b->tail->next = t;
	else
		b->head = t;
	b->tail = t;
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
	if (t->bucket)
		unlink_timer(loop, t);
}

bool imc_timer_armed(const struct imc_timer *t)
{
	return t->bucket != NULL;
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
		struct imc_timer *t = loop->heap[0].b->head;

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
	for (size_t i = 0; i < loop->nheap; i++)
		free(loop->heap[i].b);
	while (loop->spare) {
		struct imc_timer_bucket *b = loop->spare;

		loop->spare = b->hnext;
		free(b);
	}
	free(loop->tab);
	free(loop->mem);
	free(loop);
	return left;
}
