/* Event loop on the virtual clock: ordering, dispatch safety, run modes,
 * and a differential test of the timers (buckets of one deadline on a
 * heap of deadlines) against a plain model. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/loop.h"
#include "ibmcast/rng.h"

/* ---- a log of timer firings shared by the tests ---- */

struct fired {
	int id;
	imc_time_t at;
};

static struct fired *fired;
static size_t nfired, capfired;
static struct imc_loop *loop;

static void record(int id)
{
	if (nfired == capfired) {
		capfired = capfired ? capfired * 2 : 1024;
		fired = realloc(fired, capfired * sizeof(*fired));
		assert_non_null(fired);
	}
	fired[nfired].id = id;
	fired[nfired].at = imc_loop_now(loop);
	nfired++;
}

static int setup(void **state)
{
	nfired = 0;
	return imc_loop_create_virtual(1000, &loop);
}

/* Every test ends with nothing left armed in the loop. */
static int teardown(void **state)
{
	size_t left = imc_loop_destroy(loop);

	loop = NULL;
	free(fired);
	fired = NULL;
	nfired = capfired = 0;
	if (left)
		fprintf(stderr, "%zu timers left armed\n", left);
	return left ? -1 : 0;
}

struct item {
	struct imc_timer timer;
	int id;
	int order;       /* arming rank, for the expected order */
	void (*then)(struct item *it);
};

static void item_cb(struct imc_timer *t)
{
	struct item *it = imc_container_of(t, struct item, timer);

	record(it->id);
	if (it->then)
		it->then(it);
}

static void item_init(struct item *it, int id)
{
	memset(it, 0, sizeof(*it));
	imc_timer_init(&it->timer, item_cb);
	it->id = id;
}

/* ---- ordering ---- */

static struct item *sort_base;

static int by_deadline_then_order(const void *a, const void *b)
{
	const struct item *x = &sort_base[*(const int *)a];
	const struct item *y = &sort_base[*(const int *)b];
	imc_time_t dx = imc_timer_deadline(&x->timer);
	imc_time_t dy = imc_timer_deadline(&y->timer);

	if (dx != dy)
		return dx < dy ? -1 : 1;
	return x->order - y->order;
}

/* 2,000 timers over only 5 distinct deadlines, 500 of them re-armed
 * afterwards: each deadline's timers fire in (last) arming order. */
static void test_order_equal_deadlines(void **state)
{
	enum { N = 2000 };
	struct item *items = calloc(N, sizeof(*items));
	int *want = calloc(N, sizeof(*want));
	struct imc_rng r;
	int rank = 0;

	assert_non_null(items);
	assert_non_null(want);
	imc_rng_seed(&r, 1);
	for (int i = 0; i < N; i++) {
		item_init(&items[i], i);
		items[i].order = rank++;
		assert_int_equal(imc_timer_arm(loop, &items[i].timer,
					       1000 + 10 * imc_rng_below(&r, 5)),
				 0);
	}
	for (int k = 0; k < 500; k++) {
		int i = (int)imc_rng_below(&r, N);

		items[i].order = rank++;
		assert_int_equal(imc_timer_arm(loop, &items[i].timer,
					       1000 + 10 * imc_rng_below(&r, 5)),
				 0);
	}
	for (int i = 0; i < N; i++)
		want[i] = i;
	sort_base = items;
	qsort(want, N, sizeof(*want), by_deadline_then_order);

	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(nfired, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(fired[i].id, want[i]);
		assert_int_equal(fired[i].at,
				 imc_timer_deadline(&items[want[i]].timer));
	}
	assert_int_equal(imc_loop_now(loop), 1040);
	free(items);
	free(want);
}

/* ---- dispatch safety ---- */

static struct item *victim;

static void cancel_victim(struct item *it)
{
	imc_timer_cancel(loop, &victim->timer);
	assert_false(imc_timer_armed(&victim->timer));
}

/* A cancels B, due at the same time and already collected in the round:
 * B must not run; C, armed after B at that time, still does. */
static void test_cancel_same_time_from_callback(void **state)
{
	struct item a, b, c, d;

	item_init(&a, 1);
	item_init(&b, 2);
	item_init(&c, 3);
	item_init(&d, 4);
	a.then = cancel_victim;
	victim = &b;
	imc_timer_arm(loop, &a.timer, 1100);
	imc_timer_arm(loop, &b.timer, 1100);
	imc_timer_arm(loop, &c.timer, 1100);
	imc_timer_arm(loop, &d.timer, 1200);
	assert_int_equal(imc_loop_run_once(loop), 2);
	assert_int_equal(nfired, 2);
	assert_int_equal(fired[0].id, 1);
	assert_int_equal(fired[1].id, 3);
	assert_false(imc_timer_armed(&b.timer));
	assert_true(imc_timer_armed(&d.timer));
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(nfired, 3);
	assert_int_equal(fired[2].id, 4);
	assert_int_equal(fired[2].at, 1200);
}

static int periods;

static void again_in_10(struct item *it)
{
	if (++periods < 5)
		assert_int_equal(imc_timer_arm_in(loop, &it->timer, 10), 0);
}

static void move_victim_later(struct item *it)
{
	imc_timer_arm(loop, &victim->timer, imc_loop_now(loop) + 500);
}

/* A periodic timer re-arms itself; another callback moves a timer that
 * was due in the same round to later. */
static void test_rearm_in_callback(void **state)
{
	struct item p, a, b;

	item_init(&p, 1);
	item_init(&a, 2);
	item_init(&b, 3);
	p.then = again_in_10;
	periods = 0;
	imc_timer_arm(loop, &p.timer, 1010);
	a.then = move_victim_later;
	victim = &b;
	imc_timer_arm(loop, &a.timer, 1030);
	imc_timer_arm(loop, &b.timer, 1030);

	assert_int_equal(imc_loop_run(loop), 0);
	static const struct fired want[] = {
		/* p's arming for 1030 happened at 1020, after a's: a
		 * goes first. */
		{ 1, 1010 }, { 1, 1020 }, { 2, 1030 }, { 1, 1030 },
		{ 1, 1040 }, { 1, 1050 }, { 3, 1530 },
	};
	assert_int_equal(nfired, IMC_ARRAY_SIZE(want));
	for (size_t i = 0; i < nfired; i++) {
		assert_int_equal(fired[i].id, want[i].id);
		assert_int_equal(fired[i].at, want[i].at);
	}
}

static int freed;

struct owned {
	char pad[24];
	struct imc_timer timer;
	int id;
};

static void owned_free_cb(struct imc_timer *t)
{
	struct owned *o = imc_container_of(t, struct owned, timer);

	record(o->id);
	/* Scribble before freeing so a later read by the loop would be
	 * caught by ASan (use after free) or by the checks below. */
	memset(o, 0xa5, sizeof(*o));
	free(o);
	freed++;
}

/* Callbacks free their own objects, half of them sharing one deadline. */
static void test_free_own_object(void **state)
{
	freed = 0;
	for (int i = 0; i < 200; i++) {
		struct owned *o = calloc(1, sizeof(*o));

		assert_non_null(o);
		o->id = i;
		imc_timer_init(&o->timer, owned_free_cb);
		imc_timer_arm(loop, &o->timer, i < 100 ? 1500 : 1500 + i);
	}
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(freed, 200);
	for (int i = 0; i < 200; i++)
		assert_int_equal(fired[i].id, i);
	struct imc_loop_stats st;

	imc_loop_get_stats(loop, &st);
	assert_int_equal(st.timers_armed, 0);
	assert_int_equal(st.timers_fired, 200);
	assert_int_equal(st.timers_max, 200);
}

/* ---- deferred calls: arming at now ---- */

static struct item *deferred;
static bool ran_inside_arm;

static void arm_deferred_now(struct item *it)
{
	size_t before = nfired;

	assert_int_equal(imc_timer_arm(loop, &deferred->timer,
				       imc_loop_now(loop)), 0);
	ran_inside_arm |= nfired != before;
}

/* Rule: a timer armed at now during a round runs in the next round, after
 * everything the current round collected, at the same time. */
static void test_arm_now_runs_next_round(void **state)
{
	struct item a1, a2, b, late;

	item_init(&a1, 1);
	item_init(&a2, 2);
	item_init(&b, 3);
	item_init(&late, 4);
	ran_inside_arm = false;

	/* Outside a run, arming at now does not call back either. */
	assert_int_equal(imc_timer_arm(loop, &late.timer, imc_loop_now(loop)),
			 0);
	assert_int_equal(nfired, 0);
	imc_timer_arm(loop, &late.timer, 2000);

	a1.then = arm_deferred_now;
	deferred = &b;
	imc_timer_arm(loop, &a1.timer, 1050);
	imc_timer_arm(loop, &a2.timer, 1050);

	assert_int_equal(imc_loop_run_once(loop), 2);
	assert_false(ran_inside_arm);
	assert_int_equal(nfired, 2);
	assert_true(imc_timer_armed(&b.timer));
	assert_int_equal(imc_timer_deadline(&b.timer), 1050);
	assert_int_equal(imc_loop_now(loop), 1050);

	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(fired[2].id, 3);
	assert_int_equal(fired[2].at, 1050);
	assert_int_equal(imc_loop_now(loop), 1050);

	assert_int_equal(imc_loop_run_once(loop), 1);
	assert_int_equal(fired[3].id, 4);
	assert_int_equal(fired[3].at, 2000);
	assert_int_equal(imc_loop_run_once(loop), 0);
}

static int self_rearms;

static void rearm_self_now(struct item *it)
{
	/* If rounds were unbounded, run_once would spin here forever; stop
	 * it instead so the test fails on the count. */
	if (++self_rearms > 5000) {
		imc_loop_stop(loop);
		return;
	}
	imc_timer_arm(loop, &it->timer, imc_loop_now(loop));
}

/* A callback that always re-arms at now runs once per round: each round
 * is bounded and time stands still. A deadline in the past counts as now
 * and queues behind timers already due then. */
static void test_rearm_now_bounded(void **state)
{
	struct item s, t, u;

	item_init(&s, 1);
	item_init(&t, 2);
	item_init(&u, 3);
	s.then = rearm_self_now;
	self_rearms = 0;
	imc_timer_arm(loop, &s.timer, 1000);
	for (int i = 1; i <= 1000; i++) {
		assert_int_equal(imc_loop_run_once(loop), 1);
		assert_int_equal(self_rearms, i);
		assert_int_equal(imc_loop_now(loop), 1000);
	}
	imc_timer_cancel(loop, &s.timer);

	imc_timer_arm(loop, &t.timer, 1200);
	assert_int_equal(imc_loop_run_until(loop, 1300), 0);
	assert_int_equal(imc_loop_now(loop), 1300);
	imc_timer_arm(loop, &t.timer, 1300);
	imc_timer_arm(loop, &u.timer, 5);  /* in the past */
	assert_int_equal(imc_timer_deadline(&u.timer), 1300);
	assert_int_equal(imc_loop_run_once(loop), 2);
	assert_int_equal(fired[nfired - 2].id, 2);
	assert_int_equal(fired[nfired - 1].id, 3);
	assert_int_equal(fired[nfired - 1].at, 1300);
}

/* ---- run modes ---- */

static void defer_from_deadline(struct item *it)
{
	imc_timer_arm(loop, &deferred->timer, imc_loop_now(loop));
}

static void test_run_until(void **state)
{
	struct item it[6];
	static const imc_time_t at[] = { 1010, 1020, 1030, 1030, 1040, 1031 };

	for (int i = 0; i < 5; i++) {
		item_init(&it[i], i);
		imc_timer_arm(loop, &it[i].timer, at[i]);
	}
	item_init(&it[5], 5);
	it[3].then = defer_from_deadline;
	deferred = &it[5];

	assert_int_equal(imc_loop_run_until(loop, 1030), 0);
	assert_int_equal(imc_loop_now(loop), 1030);
	static const struct fired want[] = {
		{ 0, 1010 }, { 1, 1020 }, { 2, 1030 }, { 3, 1030 }, { 5, 1030 },
	};
	assert_int_equal(nfired, IMC_ARRAY_SIZE(want));
	for (size_t i = 0; i < nfired; i++) {
		assert_int_equal(fired[i].id, want[i].id);
		assert_int_equal(fired[i].at, want[i].at);
	}
	assert_true(imc_timer_armed(&it[4].timer));

	assert_int_equal(imc_loop_run_until(loop, 1039), 0);
	assert_int_equal(imc_loop_now(loop), 1039);
	assert_int_equal(nfired, 5);

	/* Never backwards. */
	assert_int_equal(imc_loop_run_until(loop, 1035), 0);
	assert_int_equal(imc_loop_now(loop), 1039);

	assert_int_equal(imc_loop_run_until(loop, 5000), 0);
	assert_int_equal(nfired, 6);
	assert_int_equal(fired[5].id, 4);
	assert_int_equal(fired[5].at, 1040);
	assert_int_equal(imc_loop_now(loop), 5000);
}

static void stop_loop(struct item *it)
{
	imc_loop_stop(loop);
}

static void wake_loop(struct item *it)
{
	imc_loop_wake(loop);
}

static int nested_ret;

static void nested_run(struct item *it)
{
	nested_ret = imc_loop_run(loop);
}

static void test_run_stop(void **state)
{
	struct item it[5];

	/* Empty: returns at once, time unchanged. */
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(imc_loop_run_once(loop), 0);
	assert_int_equal(imc_loop_now(loop), 1000);

	for (int i = 0; i < 5; i++)
		item_init(&it[i], i);
	imc_timer_arm(loop, &it[0].timer, 1010);
	imc_timer_arm(loop, &it[1].timer, 1020);
	imc_timer_arm(loop, &it[2].timer, 1020);
	imc_timer_arm(loop, &it[3].timer, 1030);
	it[1].then = stop_loop;

	/* Stop ends the run after the current callback; it[2], due in the
	 * same round, stays armed. */
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(nfired, 2);
	assert_int_equal(imc_loop_now(loop), 1020);
	assert_true(imc_timer_armed(&it[2].timer));
	assert_true(imc_timer_armed(&it[3].timer));

	/* A stop before run makes that run return at once, once. */
	imc_loop_stop(loop);
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(nfired, 2);

	/* wake() works as stop() on a virtual loop. */
	it[2].then = wake_loop;
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(nfired, 3);
	assert_int_equal(fired[2].id, 2);
	assert_int_equal(fired[2].at, 1020);

	/* A run inside a callback is refused. */
	it[3].then = nested_run;
	nested_ret = 0;
	assert_int_equal(imc_loop_run(loop), 0);
	assert_int_equal(nested_ret, -EBUSY);
	assert_int_equal(nfired, 4);
	assert_int_equal(imc_loop_now(loop), 1030);

	/* Stopped run_until leaves time where it stopped. */
	it[4].then = stop_loop;
	imc_timer_arm(loop, &it[4].timer, 1100);
	assert_int_equal(imc_loop_run_until(loop, 2000), 0);
	assert_int_equal(imc_loop_now(loop), 1100);
}

static void test_virtual_rejects_fd(void **state)
{
	struct imc_fd_watch w;

	imc_fd_watch_init(&w, 0, NULL);
	assert_int_equal(imc_loop_watch_fd(loop, &w, IMC_EV_READ),
			 -EOPNOTSUPP);
	assert_false(imc_fd_watch_active(&w));
	assert_int_equal(imc_loop_unwatch_fd(loop, &w), 0);
	assert_true(imc_loop_is_virtual(loop));
}

static void test_arm_in_saturates(void **state)
{
	struct item a;

	item_init(&a, 1);
	assert_int_equal(imc_timer_arm_in(loop, &a.timer, IMC_TIME_MAX), 0);
	assert_int_equal(imc_timer_deadline(&a.timer), IMC_TIME_MAX);
	assert_int_equal(imc_timer_arm_in(loop, &a.timer, 5), 0);
	assert_int_equal(imc_timer_deadline(&a.timer), 1005);
	imc_timer_cancel(loop, &a.timer);
	imc_timer_cancel(loop, &a.timer);
	assert_false(imc_timer_armed(&a.timer));

	/* A zero-filled timer is unarmed; cancel of it is a no-op. */
	struct imc_timer z;

	memset(&z, 0, sizeof(z));
	assert_false(imc_timer_armed(&z));
	imc_timer_cancel(loop, &z);
}

/* ---- differential test against a plain model ----
 *
 * The model keeps each slot's (armed, deadline, seq) in an array and finds
 * the next timer by scanning: a round at time now runs, in (deadline, seq)
 * order, the timers with deadline <= now armed before the round began.
 * Callbacks take random actions (re-arm self, arm or cancel another slot,
 * arm another at now) drawn from their own stream and log them; the model
 * replays the log and checks each firing's slot and time.
 */

enum { K = 256 };

enum act { ACT_NONE, ACT_ARM, ACT_CANCEL };

struct dslot {
	struct imc_timer timer;
	int id;
};

struct devent {
	int id;
	imc_time_t at;
	enum act act;
	int target;
	imc_time_t deadline;
};

struct model {
	bool armed[K];
	imc_time_t deadline[K];
	uint64_t seq[K];
	uint64_t next_seq;
	imc_time_t now;
};

static struct dslot dslots[K];
static imc_time_t dspan;   /* deadlines drawn within now + dspan */
static struct devent *devents;
static size_t ndevents, capdevents;
static struct imc_rng cb_rng;

static void dlog(struct devent e)
{
	if (ndevents == capdevents) {
		capdevents = capdevents ? capdevents * 2 : 4096;
		devents = realloc(devents, capdevents * sizeof(*devents));
		assert_non_null(devents);
	}
	devents[ndevents++] = e;
}

static void dslot_cb(struct imc_timer *t)
{
	struct dslot *s = imc_container_of(t, struct dslot, timer);
	imc_time_t now = imc_loop_now(loop);
	struct devent e = { .id = s->id, .at = now, .act = ACT_NONE };
	uint64_t a = imc_rng_below(&cb_rng, 10);

	if (a <= 2) {
		e.act = ACT_ARM;
		e.target = s->id;
		e.deadline = now + imc_rng_below(&cb_rng, dspan / 2);
	} else if (a == 3) {
		e.act = ACT_CANCEL;
		e.target = (int)imc_rng_below(&cb_rng, K);
	} else if (a == 4 || a == 5) {
		e.act = ACT_ARM;
		e.target = (int)imc_rng_below(&cb_rng, K);
		e.deadline = a == 4 ? now + imc_rng_below(&cb_rng, dspan / 4) :
				      now;
	}
	if (e.act == ACT_ARM)
		assert_int_equal(imc_timer_arm(loop, &dslots[e.target].timer,
					       e.deadline), 0);
	else if (e.act == ACT_CANCEL)
		imc_timer_cancel(loop, &dslots[e.target].timer);
	dlog(e);
}

static void m_arm(struct model *m, int i, imc_time_t deadline)
{
	m->armed[i] = true;
	m->deadline[i] = deadline < m->now ? m->now : deadline;
	m->seq[i] = m->next_seq++;
}

/* Earliest armed slot by (deadline, seq), among seq < end; -1 if none. */
static int m_min(const struct model *m, uint64_t end)
{
	int best = -1;

	for (int i = 0; i < K; i++) {
		if (!m->armed[i] || m->seq[i] >= end)
			continue;
		if (best < 0 || m->deadline[i] < m->deadline[best] ||
		    (m->deadline[i] == m->deadline[best] &&
		     m->seq[i] < m->seq[best]))
			best = i;
	}
	return best;
}

/* Replays one round from the log starting at *pos; returns its size. */
static int m_round(struct model *m, size_t *pos, uint64_t seed)
{
	int first = m_min(m, UINT64_MAX), ran = 0;
	uint64_t end = m->next_seq;

	if (first < 0)
		return 0;
	if (m->deadline[first] > m->now)
		m->now = m->deadline[first];
	for (;;) {
		int i = m_min(m, end);
		struct devent *e;

		if (i < 0 || m->deadline[i] > m->now)
			break;
		if (*pos >= ndevents)
			fail_msg("seed %llu: model expects slot %d at %llu, "
				 "loop fired nothing",
				 (unsigned long long)seed, i,
				 (unsigned long long)m->now);
		e = &devents[(*pos)++];
		if (e->id != i || e->at != m->now)
			fail_msg("seed %llu: model expects slot %d at %llu, "
				 "loop fired slot %d at %llu",
				 (unsigned long long)seed, i,
				 (unsigned long long)m->now, e->id,
				 (unsigned long long)e->at);
		m->armed[i] = false;
		ran++;
		if (e->act == ACT_ARM)
			m_arm(m, e->target, e->deadline);
		else if (e->act == ACT_CANCEL)
			m->armed[e->target] = false;
	}
	return ran;
}

static void m_check_slots(const struct model *m)
{
	for (int i = 0; i < K; i++) {
		assert_int_equal(imc_timer_armed(&dslots[i].timer),
				 m->armed[i]);
		if (m->armed[i])
			assert_int_equal(imc_timer_deadline(&dslots[i].timer),
					 m->deadline[i]);
	}
}

static void run_differential(uint64_t seed, int ops, imc_time_t span)
{
	struct model m = { .now = imc_loop_now(loop) };
	struct imc_rng r;
	uint64_t total = 0;
	struct imc_loop_stats st;

	dspan = span;
	imc_rng_seed(&r, seed);
	imc_rng_split(&r, &cb_rng);
	ndevents = 0;
	for (int i = 0; i < K; i++) {
		imc_timer_init(&dslots[i].timer, dslot_cb);
		dslots[i].id = i;
	}
	for (int op = 0; op < ops; op++) {
		uint64_t kind = imc_rng_below(&r, 100);
		int i = (int)imc_rng_below(&r, K);
		size_t pos = 0;

		ndevents = 0;
		if (kind < 50) {
			imc_time_t d = m.now + imc_rng_below(&r, span);

			/* Sometimes in the past: counts as now. */
			if (kind < 4)
				d = m.now >= 30 ? m.now - 30 : 0;
			assert_int_equal(imc_timer_arm(loop, &dslots[i].timer,
						       d), 0);
			m_arm(&m, i, d);
		} else if (kind < 58) {
			imc_time_t delay = imc_rng_below(&r, span);

			assert_int_equal(imc_timer_arm_in(loop,
							  &dslots[i].timer,
							  delay), 0);
			m_arm(&m, i, m.now + delay);
		} else if (kind < 68) {
			imc_timer_cancel(loop, &dslots[i].timer);
			m.armed[i] = false;
		} else if (kind < 95) {
			int ran = imc_loop_run_once(loop);

			assert_int_equal(ran, m_round(&m, &pos, seed));
			total += (uint64_t)ran;
		} else {
			imc_time_t until = m.now +
					   imc_rng_below(&r, span * 3 / 2);
			int f;

			assert_int_equal(imc_loop_run_until(loop, until), 0);
			while ((f = m_min(&m, UINT64_MAX)) >= 0 &&
			       m.deadline[f] <= until)
				total += (uint64_t)m_round(&m, &pos, seed);
			if (m.now < until)
				m.now = until;
		}
		if (pos != ndevents)
			fail_msg("seed %llu op %d: loop fired %zu, model %zu",
				 (unsigned long long)seed, op, ndevents, pos);
		assert_int_equal(imc_loop_now(loop), m.now);
		m_check_slots(&m);
	}
	imc_loop_get_stats(loop, &st);
	assert_int_equal(st.timers_fired, total);
	print_message("seed %llu span %llu: %d ops, %llu firings, now %llu, "
		      "max %zu armed\n", (unsigned long long)seed,
		      (unsigned long long)span, ops,
		      (unsigned long long)total, (unsigned long long)m.now,
		      st.timers_max);
	for (int i = 0; i < K; i++)
		imc_timer_cancel(loop, &dslots[i].timer);
	imc_loop_get_stats(loop, &st);
	assert_int_equal(st.timers_armed, 0);
	free(devents);
	devents = NULL;
	capdevents = 0;
}

/* Span 200 spreads the 256 slots over many deadlines; span 8 piles them
 * on a few, so that most arms, cancels and firings happen inside a
 * bucket of one deadline (its head, middle and tail). */
static void test_differential(void **state)
{
	static const struct {
		uint64_t seed;
		imc_time_t span;
	} runs[] = { { 1, 200 }, { 2, 200 }, { 0xdecafbad, 200 },
		     { 3, 8 }, { 4, 8 } };

	for (size_t s = 0; s < IMC_ARRAY_SIZE(runs); s++) {
		if (s) {
			assert_int_equal(imc_loop_destroy(loop), 0);
			assert_int_equal(imc_loop_create_virtual(1000, &loop),
					 0);
		}
		run_differential(runs[s].seed, 100000, runs[s].span);
	}
}

/* 100,000 timers on 30,000 deadlines, armed out of order, some moved
 * and some cancelled: the deadline table and the heap grow, and the
 * firings come out in (deadline, arming order). A loop destroyed with
 * timers armed counts them. */
static void test_many_deadlines(void **state)
{
	enum { N = 100000, D = 30000 };
	struct item *items = calloc(N, sizeof(*items));
	int *want = calloc(N, sizeof(*want));
	struct imc_loop_stats st;
	int rank = 0, nwant = 0;

	assert_non_null(items);
	assert_non_null(want);
	for (int i = 0; i < N; i++) {
		item_init(&items[i], i);
		items[i].order = rank++;
		assert_int_equal(imc_timer_arm(loop, &items[i].timer,
					       2000 + (uint64_t)i * 7919 % D),
				 0);
	}
	for (int i = 0; i < N; i += 3) {
		items[i].order = rank++;
		assert_int_equal(imc_timer_arm(loop, &items[i].timer,
					       2000 + (uint64_t)i * 104729 % D),
				 0);
	}
	for (int i = 1; i < N; i += 5)
		imc_timer_cancel(loop, &items[i].timer);
	imc_loop_get_stats(loop, &st);
	assert_int_equal(st.timers_armed, N - N / 5);
	assert_int_equal(st.timers_max, N);
	for (int i = 0; i < N; i++)
		if (imc_timer_armed(&items[i].timer))
			want[nwant++] = i;
	sort_base = items;
	qsort(want, (size_t)nwant, sizeof(*want), by_deadline_then_order);

	assert_int_equal(imc_loop_run_until(loop, 2000 + D / 2), 0);
	for (size_t i = 0; i < nfired; i++) {
		assert_int_equal(fired[i].id, want[i]);
		assert_int_equal(fired[i].at,
				 imc_timer_deadline(&items[want[i]].timer));
	}
	assert_true(nfired > 0 && nfired < (size_t)nwant);
	assert_int_equal(imc_loop_destroy(loop), (size_t)nwant - nfired);
	assert_int_equal(imc_loop_create_virtual(1000, &loop), 0);
	free(items);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_equal_deadlines,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_cancel_same_time_from_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rearm_in_callback, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_free_own_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_arm_now_runs_next_round,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rearm_now_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_until, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_stop, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_virtual_rejects_fd, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_arm_in_saturates, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_many_deadlines, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_differential, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
