/* The load generator of `ibmcast storm` (storm.h).
 *
 * The run's states, changed only by set_state():
 *
 *   state      event                                     next
 *   IDLE       imc_storm_start()                             RUNNING
 *   IDLE       imc_storm_stop()                              TEARDOWN
 *   RUNNING    imc_storm_stop()                              DRAINING
 *   RUNNING    the last cycle done, nothing in flight    TEARDOWN
 *   DRAINING   nothing in flight                         TEARDOWN
 *   TEARDOWN   every taken slot left (or keep)           DONE
 *   any        imc_storm_abort()                             DONE
 *
 * RUNNING sends the operations of the cycles; DRAINING sends nothing and
 * waits for the answers still due; TEARDOWN sends a leave per slot taken
 * or in doubt; DONE calls done from the loop.
 *
 * Window: a request is sent only while fewer than inflight are in flight,
 * and a cycle starts only when its first request can be sent at once, so
 * the slots waiting for their next operation (the ready ring) and those
 * in flight together never exceed inflight. Each slot has at most one
 * request in flight, so the operations of a cycle reach the SA in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mad.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/storm.h"
#include "util/bytes.h"

/* Pacing lets requests catch up with a pump timer that fired late by up
 * to this much (a burst of at most slack * rate), and starts afresh after
 * a longer lull. */
#define PACE_SLACK (10 * IMC_NSEC_PER_MSEC)

enum state {
	IDLE,
	RUNNING,
	DRAINING,
	TEARDOWN,
	DONE,
};

/* What the run knows of a slot's membership. */
enum hold {
	FREE,       /* not taken by the run */
	TAKEN,      /* joined or created, answered SUCCESS */
	DOUBT,      /* a join or leave went unanswered */
};

struct slot {
	struct imc_storm *s;
	struct imc_gid assigned;    /* MGID of the last create; zero: none */
	struct imc_sa_query *q;     /* request in flight */
	struct imc_storm_tally *tally;  /* where its answer is counted */
	imc_time_t t0;              /* when it was started */
	uint8_t pos;                /* next operation of the cycle running
				     * on it; cycle_len when none runs */
	uint8_t op;                 /* enum imc_storm_op in flight */
	uint8_t hold;               /* enum hold */
	uint8_t flight;             /* index in s->flight while in flight */
};

struct imc_storm {
	struct imc_loop *loop;
	struct imc_sa_client *c;
	struct imc_storm_config cfg;
	imc_storm_done_cb done;
	void *arg;
	enum state state;
	struct slot *slots;
	/* Slots with a request in flight (unordered, swap-removed). */
	struct slot *flight[IMC_STORM_MAX_INFLIGHT];
	unsigned in_flight;
	/* Slots whose next operation waits for a window slot, FIFO. */
	uint32_t ready[IMC_STORM_MAX_INFLIGHT];
	unsigned ready_head, ready_len;
	uint32_t teardown_next;     /* the next slot the teardown looks at */
	imc_time_t t_start, t_teardown, pace_next;
	double pace_step;           /* ns between two starts; 0: no pacing */
	struct imc_timer pump_timer;
	struct imc_timer done_timer;
	struct imc_storm_report r;
};

static const char *const op_names[IMC_STORM_OPS] = {
	[IMC_STORM_JOIN] = "join",
	[IMC_STORM_REJOIN] = "rejoin",
	[IMC_STORM_LEAVE] = "leave",
	[IMC_STORM_CREATE] = "create",
};

const char *imc_storm_op_name(enum imc_storm_op op)
{
	return (unsigned)op < IMC_STORM_OPS ? op_names[op] : NULL;
}

int imc_storm_parse_ops(const char *s, enum imc_storm_op *cycle)
{
	int n = 0;

	while (*s) {
		size_t len = strcspn(s, ",");
		unsigned i;

		for (i = 0; i < IMC_STORM_OPS; i++)
			if (strlen(op_names[i]) == len &&
			    !strncmp(s, op_names[i], len))
				break;
		if (i == IMC_STORM_OPS || n == IMC_STORM_MAX_CYCLE)
			return -EINVAL;
		cycle[n++] = (enum imc_storm_op)i;
		s += len;
		if (*s == ',' && !*++s)
			return -EINVAL;     /* a trailing comma */
	}
	return n ? n : -EINVAL;
}

int imc_storm_cycle_repeats(const enum imc_storm_op *cycle, unsigned n)
{
	/* Walk the cycle twice from a slot without a created group: a
	 * create while the slot holds the last create's group loses that
	 * group (the slot names one MGID). */
	bool created = false;

	for (unsigned i = 0; i < 2 * n; i++) {
		enum imc_storm_op op = cycle[i % n];

		if (op == IMC_STORM_CREATE && created)
			return i < n ? -EINVAL : 0;
		if (op == IMC_STORM_CREATE)
			created = true;
		else if (op == IMC_STORM_LEAVE)
			created = false;
	}
	return 1;
}

/* ---- latency histogram ---- */

static unsigned hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < IMC_STORM_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);   /* 6..63 */
	return IMC_STORM_HIST_SUB * (e - 5) +
	       (unsigned)(v >> (e - 6) & (IMC_STORM_HIST_SUB - 1));
}

/* The largest value of bucket b. */
static uint64_t hist_top(unsigned b)
{
	unsigned e, sub;

	if (b < IMC_STORM_HIST_SUB)
		return b;
	e = b / IMC_STORM_HIST_SUB + 5;
	sub = b % IMC_STORM_HIST_SUB;
	/* (64 + sub + 1) << (e - 6), less one; e = 63, sub = 63 wraps to
	 * UINT64_MAX as it should. */
	return ((uint64_t)(IMC_STORM_HIST_SUB + sub + 1) << (e - 6)) - 1;
}

void imc_storm_hist_add(struct imc_storm_hist *h, uint64_t v)
{
	h->b[hist_bucket(v)]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

uint64_t imc_storm_hist_quantile(const struct imc_storm_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	if (q <= 0)
		q = 0;
	rank = (uint64_t)(q * (double)h->n);
	if ((double)rank < q * (double)h->n)
		rank++;             /* ceil */
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	for (unsigned b = 0; b < IMC_STORM_HIST_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= rank)
			return hist_top(b) < h->max ? hist_top(b) : h->max;
	}
	return h->max;
}

/* ---- counting ---- */

/* Counts n answers of status in t (statuses kept sorted). */
static void count_status(struct imc_storm_tally *t, uint16_t status, uint64_t n)
{
	unsigned lo = 0, hi = t->n_statuses;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (t->statuses[mid].status < status)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n_statuses && t->statuses[lo].status == status) {
		t->statuses[lo].count += n;
		return;
	}
	if (t->n_statuses == IMC_STORM_MAX_STATUSES) {
		t->other_statuses += n;
		return;
	}
	memmove(&t->statuses[lo + 1], &t->statuses[lo],
		(t->n_statuses - lo) * sizeof(t->statuses[0]));
	t->statuses[lo].status = status;
	t->statuses[lo].count = n;
	t->n_statuses++;
}

void imc_storm_tally_add(struct imc_storm_tally *d, const struct imc_storm_tally *t)
{
	d->sent += t->sent;
	d->answered += t->answered;
	d->success += t->success;
	d->timeouts += t->timeouts;
	d->errors += t->errors;
	d->retries += t->retries;
	d->other_statuses += t->other_statuses;
	for (unsigned i = 0; i < t->n_statuses; i++)
		count_status(d, t->statuses[i].status, t->statuses[i].count);
	d->latency.n += t->latency.n;
	if (t->latency.max > d->latency.max)
		d->latency.max = t->latency.max;
	for (unsigned b = 0; b < IMC_STORM_HIST_BUCKETS; b++)
		d->latency.b[b] += t->latency.b[b];
}

/* ---- slots ---- */

static imc_time_t now(const struct imc_storm *s)
{
	return s->cfg.clock ? s->cfg.clock(s->cfg.clock_ctx) :
			      imc_loop_now(s->loop);
}

static uint32_t slot_index(const struct imc_storm *s, const struct slot *sl)
{
	return (uint32_t)(sl - s->slots);
}

static void slot_mgid(const struct imc_storm *s, const struct slot *sl,
		      struct imc_gid *g)
{
	if (!imc_gid_is_zero(&sl->assigned)) {
		*g = sl->assigned;
		return;
	}
	/* ff15:1234:TAG::N: site-local, no IPoIB signature (RFC 4391
	 * section 4 would make it an IPoIB group). */
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xff;
	g->raw[1] = 0x15;
	imc_put16(g->raw + 2, 0x1234);
	imc_put16(g->raw + 4, s->cfg.tag);
	imc_put32(g->raw + 12, slot_index(s, sl) + 1);
}

void imc_storm_slot_mgid(const struct imc_storm *s, uint32_t i, struct imc_gid *g)
{
	slot_mgid(s, &s->slots[i], g);
}

static void set_hold(struct imc_storm *s, struct slot *sl, enum hold h)
{
	bool was = sl->hold != FREE, is = h != FREE;

	if (h == FREE)
		memset(&sl->assigned, 0, sizeof(sl->assigned));
	sl->hold = (uint8_t)h;
	if (was && !is)
		s->r.held--;
	else if (!was && is)
		s->r.held++;
}

/* What an answer (or its absence, err < 0) tells of the membership. */
static void settle(struct imc_storm *s, struct slot *sl, enum imc_storm_op op,
		   int err, const struct imc_sa_answer *a)
{
	struct imc_mcmr rec;

	if (err) {
		/* The SA may or may not have acted on it. */
		if (op == IMC_STORM_CREATE && sl->hold == FREE)
			s->r.unnamed++;     /* no MGID to leave */
		else if (op == IMC_STORM_JOIN || op == IMC_STORM_LEAVE ||
			 op == IMC_STORM_CREATE)
			set_hold(s, sl, DOUBT);
		return;
	}
	if (a->status == UMAD_STATUS_SUCCESS) {
		switch (op) {
		case IMC_STORM_CREATE:
			if (a->len >= IMC_MCMR_SIZE &&
			    imc_mcmr_unpack(&rec, a->data, a->len) ==
				    IMC_MCMR_SIZE &&
			    !imc_gid_is_zero(&rec.mgid)) {
				set_hold(s, sl, TAKEN);
				sl->assigned = rec.mgid;
			} else {
				s->r.unnamed++;
			}
			break;
		case IMC_STORM_JOIN:
			set_hold(s, sl, TAKEN);
			break;
		case IMC_STORM_LEAVE:
			set_hold(s, sl, FREE);
			break;
		default:
			break;
		}
	} else if (op == IMC_STORM_LEAVE &&
		   imc_sa_status_code(a->status) == UMAD_SA_STATUS_REQ_INVALID) {
		/* Not a member (IBA 15.2.5.17.2; OpenSM answers so). */
		set_hold(s, sl, FREE);
	}
}

/* ---- state ---- */

static void set_state(struct imc_storm *s, enum state to)
{
	static const bool ok[DONE + 1][DONE + 1] = {
		[IDLE] = { [RUNNING] = true, [TEARDOWN] = true, [DONE] = true },
		[RUNNING] = { [DRAINING] = true, [TEARDOWN] = true,
			      [DONE] = true },
		[DRAINING] = { [TEARDOWN] = true, [DONE] = true },
		[TEARDOWN] = { [DONE] = true },
	};

	enum state from = s->state;

	if (!ok[from][to])
		abort();            /* a bug of this file */
	s->state = to;
	switch (to) {
	case RUNNING:
		s->t_start = now(s);
		s->pace_next = s->t_start;
		break;
	case TEARDOWN:
		s->t_teardown = now(s);
		if (from != IDLE)
			s->r.run_time = s->t_teardown - s->t_start;
		break;
	case DONE:
		if (from == TEARDOWN)
			s->r.teardown_time = now(s) - s->t_teardown;
		else if (from != IDLE)
			s->r.run_time = now(s) - s->t_start;
		imc_timer_cancel(s->loop, &s->pump_timer);
		/* done runs from the loop, never inside an API call. */
		imc_timer_arm_in(s->loop, &s->done_timer, 0);
		break;
	default:
		break;
	}
}

/* ---- sending ---- */

static void on_answer(void *arg, int err, const struct imc_sa_answer *a);

static void flight_add(struct imc_storm *s, struct slot *sl)
{
	sl->flight = (uint8_t)s->in_flight;
	s->flight[s->in_flight++] = sl;
	if (s->in_flight > s->r.max_in_flight)
		s->r.max_in_flight = s->in_flight;
}

static void flight_remove(struct imc_storm *s, struct slot *sl)
{
	struct slot *last = s->flight[--s->in_flight];

	s->flight[sl->flight] = last;
	last->flight = sl->flight;
	sl->q = NULL;
}

/* Sends op for sl, counted in t. */
static void issue(struct imc_storm *s, struct slot *sl, enum imc_storm_op op,
		  struct imc_storm_tally *t)
{
	uint64_t mask = UMAD_SA_MCM_COMP_MASK_MGID |
			UMAD_SA_MCM_COMP_MASK_PORT_GID |
			UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	struct imc_sa_mad m;
	struct imc_mcmr r;
	int rc;

	memset(&m, 0, sizeof(m));
	memset(&r, 0, sizeof(r));
	m.mad.method = op == IMC_STORM_LEAVE ? UMAD_SA_METHOD_DELETE :
					   UMAD_METHOD_SET;
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m.sa.sm_key = s->cfg.sm_key;
	if (op != IMC_STORM_CREATE)
		slot_mgid(s, sl, &r.mgid);
	r.port_gid = s->cfg.port_gid;
	r.join_state = s->cfg.join_state;
	if (op == IMC_STORM_JOIN || op == IMC_STORM_CREATE) {
		/* OpenSM's minimum to create a group (protocol.md). */
		r.qkey = s->cfg.qkey;
		r.pkey = s->cfg.pkey;
		mask |= UMAD_SA_MCM_COMP_MASK_QKEY |
			UMAD_SA_MCM_COMP_MASK_TCLASS |
			UMAD_SA_MCM_COMP_MASK_PKEY |
			UMAD_SA_MCM_COMP_MASK_SL |
			UMAD_SA_MCM_COMP_MASK_FLOW_LABEL;
	}
	m.sa.comp_mask = mask;
	imc_mcmr_pack(&r, m.data, sizeof(m.data));
	sl->op = (uint8_t)op;
	sl->tally = t;
	sl->t0 = now(s);
	t->sent++;
	if (s->pace_step > 0) {
		/* Catch up with timers that fired late, but after a lull
		 * (nothing to send, a full window) start afresh: no burst. */
		if (s->pace_next + PACE_SLACK < sl->t0)
			s->pace_next = sl->t0;
		s->pace_next += (imc_time_t)s->pace_step;
	}
	rc = imc_sa_query_start(s->c, &m, on_answer, sl, &sl->q);
	if (rc < 0) {
		/* Only -ENOMEM can get here: count it as a failed send and
		 * let the slot move on without a request in flight. */
		t->errors++;
		settle(s, sl, op, rc, NULL);
		sl->q = NULL;
		return;
	}
	flight_add(s, sl);
}

static void ready_push(struct imc_storm *s, struct slot *sl)
{
	s->ready[(s->ready_head + s->ready_len++) % IMC_STORM_MAX_INFLIGHT] =
		slot_index(s, sl);
}

static struct slot *ready_pop(struct imc_storm *s)
{
	uint32_t i;

	if (!s->ready_len)
		return NULL;
	i = s->ready[s->ready_head];
	s->ready_head = (s->ready_head + 1) % IMC_STORM_MAX_INFLIGHT;
	s->ready_len--;
	return &s->slots[i];
}

/* The slot of the next cycle, when it may start now. */
static struct slot *next_cycle(struct imc_storm *s)
{
	struct slot *sl;

	if (s->cfg.count && s->r.cycles_started >= s->cfg.count)
		return NULL;
	sl = &s->slots[s->r.cycles_started % s->cfg.groups];
	if (sl->pos < s->cfg.cycle_len)
		return NULL;        /* its previous cycle still runs */
	sl->pos = 0;
	s->r.cycles_started++;
	return sl;
}

/* The next slot the teardown leaves, or NULL. */
static struct slot *next_held(struct imc_storm *s)
{
	while (s->teardown_next < s->cfg.groups) {
		struct slot *sl = &s->slots[s->teardown_next++];

		if (sl->hold != FREE)
			return sl;
	}
	return NULL;
}

/* Whether pacing lets a request go now; if not, the pump timer is set
 * for when it will. */
static bool paced(struct imc_storm *s)
{
	imc_time_t t;

	if (s->pace_step <= 0)
		return true;
	t = now(s);
	if (t >= s->pace_next)
		return true;
	if (!imc_timer_armed(&s->pump_timer))
		imc_timer_arm_in(s->loop, &s->pump_timer, s->pace_next - t);
	return false;
}

/* Sends what the window and pacing allow, then moves the state on. */
static void pump(struct imc_storm *s)
{
	while ((s->state == RUNNING || s->state == TEARDOWN) &&
	       s->in_flight < s->cfg.inflight && paced(s)) {
		struct slot *sl;

		if (s->state == TEARDOWN) {
			sl = next_held(s);
			if (!sl)
				break;
			issue(s, sl, IMC_STORM_LEAVE, &s->r.teardown);
			if (sl->q)
				continue;
			imc_timer_arm_in(s->loop, &s->pump_timer, 0);
			return;
		}
		sl = ready_pop(s);
		if (!sl)
			sl = next_cycle(s);
		if (!sl)
			break;
		issue(s, sl, s->cfg.cycle[sl->pos],
		      &s->r.op[s->cfg.cycle[sl->pos]]);
		if (sl->q)
			continue;
		/* An operation that could not start (no memory) moves its
		 * cycle on, and the next try waits for the next round. */
		if (++sl->pos < s->cfg.cycle_len)
			ready_push(s, sl);
		else
			s->r.cycles_done++;
		imc_timer_arm_in(s->loop, &s->pump_timer, 0);
		return;
	}
	if (s->in_flight)
		return;
	switch (s->state) {
	case RUNNING:
		if (s->cfg.count && s->r.cycles_done == s->cfg.count &&
		    !s->ready_len)
			break;
		return;
	case DRAINING:
		break;
	case TEARDOWN:
		if (s->teardown_next < s->cfg.groups)
			return;     /* paced: the timer comes back */
		set_state(s, DONE);
		return;
	default:
		return;
	}
	set_state(s, TEARDOWN);
	if (s->cfg.keep) {
		s->teardown_next = s->cfg.groups;
		set_state(s, DONE);
		return;
	}
	pump(s);
}

static void on_answer(void *arg, int err, const struct imc_sa_answer *a)
{
	struct slot *sl = arg;
	struct imc_storm *s = sl->s;
	struct imc_storm_tally *t = sl->tally;
	enum imc_storm_op op = (enum imc_storm_op)sl->op;

	flight_remove(s, sl);
	if (err == -ETIMEDOUT) {
		t->timeouts++;
	} else if (err) {
		t->errors++;
	} else {
		t->answered++;
		t->retries += a->attempts > 1 ? a->attempts - 1 : 0;
		if (a->status == UMAD_STATUS_SUCCESS)
			t->success++;
		count_status(t, a->status, 1);
		imc_storm_hist_add(&t->latency, now(s) - sl->t0);
	}
	settle(s, sl, op, err, a);
	if (t != &s->r.teardown) {
		if (++sl->pos < s->cfg.cycle_len) {
			if (s->state == RUNNING)
				ready_push(s, sl);
			else
				sl->pos = s->cfg.cycle_len;   /* dropped */
		} else {
			s->r.cycles_done++;
		}
	}
	pump(s);
}

static void on_pump(struct imc_timer *t)
{
	pump(imc_container_of(t, struct imc_storm, pump_timer));
}

static void on_done(struct imc_timer *t)
{
	struct imc_storm *s = imc_container_of(t, struct imc_storm, done_timer);

	s->r.done = true;
	s->done(s->arg, s);
}

/* ---- API ---- */

void imc_storm_config_init(struct imc_storm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cycle[0] = IMC_STORM_JOIN;
	cfg->cycle[1] = IMC_STORM_LEAVE;
	cfg->cycle_len = 2;
	cfg->count = 1000;
	cfg->groups = 1000;
	cfg->inflight = IMC_STORM_MAX_INFLIGHT;
	cfg->join_state = UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER;
	cfg->tag = 1;
	cfg->qkey = 0x1234;
	cfg->pkey = 0xffff;
}

int imc_storm_create(struct imc_loop *loop, struct imc_sa_client *c,
		 const struct imc_storm_config *cfg, imc_storm_done_cb done,
		 void *arg, struct imc_storm **out)
{
	struct imc_storm *s;
	int rep;

	*out = NULL;
	if (!loop || !c || !cfg || !done || !cfg->cycle_len ||
	    cfg->cycle_len > IMC_STORM_MAX_CYCLE || !cfg->groups ||
	    cfg->groups > IMC_STORM_MAX_GROUPS || !cfg->inflight ||
	    cfg->inflight > IMC_STORM_MAX_INFLIGHT || !(cfg->rate >= 0) ||
	    !cfg->join_state || cfg->join_state > 0xf)
		return -EINVAL;
	for (unsigned i = 0; i < cfg->cycle_len; i++)
		if ((unsigned)cfg->cycle[i] >= IMC_STORM_OPS)
			return -EINVAL;
	rep = imc_storm_cycle_repeats(cfg->cycle, cfg->cycle_len);
	if (rep < 0 || (!rep && cfg->count > cfg->groups))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->slots = calloc(cfg->groups, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return -ENOMEM;
	}
	s->loop = loop;
	s->c = c;
	s->cfg = *cfg;
	/* A cycle that runs once per slot ends when every slot ran it. */
	if (!rep && !s->cfg.count)
		s->cfg.count = cfg->groups;
	s->done = done;
	s->arg = arg;
	s->state = IDLE;
	s->pace_step = cfg->rate > 0 ? 1e9 / cfg->rate : 0;
	for (uint32_t i = 0; i < cfg->groups; i++) {
		s->slots[i].s = s;
		s->slots[i].pos = (uint8_t)cfg->cycle_len;
	}
	imc_timer_init(&s->pump_timer, on_pump);
	imc_timer_init(&s->done_timer, on_done);
	*out = s;
	return 0;
}

void imc_storm_start(struct imc_storm *s)
{
	if (s->state != IDLE)
		return;
	set_state(s, RUNNING);
	imc_timer_arm_in(s->loop, &s->pump_timer, 0);
}

void imc_storm_stop(struct imc_storm *s)
{
	switch (s->state) {
	case IDLE:
		set_state(s, TEARDOWN);   /* nothing taken yet */
		set_state(s, DONE);
		break;
	case RUNNING:
		set_state(s, DRAINING);
		/* Slots waiting for their next operation get none. */
		while (s->ready_len)
			ready_pop(s)->pos = (uint8_t)s->cfg.cycle_len;
		if (!s->in_flight)
			imc_timer_arm_in(s->loop, &s->pump_timer, 0);
		break;
	default:
		break;
	}
}

/* Cancels every request in flight; their memberships are in doubt. */
static void cancel_all(struct imc_storm *s)
{
	while (s->in_flight) {
		struct slot *sl = s->flight[s->in_flight - 1];
		struct imc_storm_tally *t = sl->tally;

		imc_sa_query_cancel(sl->q);
		flight_remove(s, sl);
		t->errors++;
		settle(s, sl, (enum imc_storm_op)sl->op, -ECANCELED, NULL);
		sl->pos = (uint8_t)s->cfg.cycle_len;
	}
}

void imc_storm_abort(struct imc_storm *s)
{
	if (s->state == DONE)
		return;
	cancel_all(s);
	s->ready_len = 0;
	set_state(s, DONE);
}

void imc_storm_destroy(struct imc_storm *s)
{
	if (!s)
		return;
	cancel_all(s);
	imc_timer_cancel(s->loop, &s->pump_timer);
	imc_timer_cancel(s->loop, &s->done_timer);
	free(s->slots);
	free(s);
}

const struct imc_storm_report *imc_storm_get_report(struct imc_storm *s)
{
	if (s->state == RUNNING || s->state == DRAINING)
		s->r.run_time = now(s) - s->t_start;
	else if (s->state == TEARDOWN)
		s->r.teardown_time = now(s) - s->t_teardown;
	return &s->r;
}
