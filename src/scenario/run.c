/* Scenario runner.
 *
 * One run: a virtual loop from time 0, the fabric, the settings' run
 * functions, the SM's first sweep, then one timer per action at its time
 * (armed in file order, so actions of equal time run in file order). The
 * loop advances in slices to each expectation time and to the end;
 * expectations are checked after every event of their time. Slices only
 * decide when progress is reported: timers fire by (deadline, arming
 * order) whatever the slicing, so the result does not depend on it.
 *
 * A run may also go on a loop the caller owns (imc_scenario_run_opts
 * loop), a real-time one for `ibmcast up`: scenario time then counts from
 * the loop's time when the run starts (t0), every action is armed at t0
 * plus its time, and the caller's hooks see the running fabric once the
 * actions of time 0 have run and again before anything is freed.
 *
 * With an `opensm` line (served.c) the run makes its own real-time loop,
 * serves the fabric to OpenSM once it is up and counts scenario time
 * from the moment OpenSM has brought the subnet up.
 *
 * Hosts (HCA ports) get state when first used: their QPs (one per P_Key,
 * numbered in order of first use) and counters, in a slot per node:port
 * (struct scn_ports). Receivers recognise scenario datagrams by their
 * header and keep a bitmap of sequence numbers per flow to count
 * duplicates.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"
#include "scenario/runner.h"
#include "scenario/scn.h"
#include "scenario/scn_served.h"
#include "util/bytes.h"
#include "util/hash.h"
#include "util/mix.h"
#include "util/vec.h"

#define SLICE_MIN 1000ull                 /* 1 us */
#define SLICE_MAX (10 * IMC_NSEC_PER_SEC)
#define SLICE_EVENTS 200000               /* aim per slice */
#define SEEN_MAX_SEQ (1u << 26)           /* bitmap cap: 8 MiB per flow */

struct seen {
	uint64_t *bits;
	size_t nwords;
};

struct host {
	struct imc_scn_ctx *c;
	uint32_t node;
	unsigned port;
	struct scn_host_stats st;
	unsigned nqps;
	uint16_t pkey[IMC_SCN_HOST_QPS];
	uint32_t qkey[IMC_SCN_HOST_QPS];
	struct imc_qp *qp[IMC_SCN_HOST_QPS];
	struct seen *seen;        /* per flow, nactions entries, lazily */
};

struct data_ent {
	struct imc_hnode hn;
	struct data_ent *older;
	const void *key;
	void *data;
	void (*free)(void *data);
};

struct act {
	struct imc_timer timer;
	struct imc_scn_ctx *c;
	const struct scn_action *a;
};

struct imc_scn_ctx {
	const struct imc_scenario *s;
	struct imc_loop *loop;
	bool own_loop;            /* created by the run, destroyed with it */
	imc_time_t t0;            /* loop time of scenario time 0 */
	struct imc_fabric *fab;
	struct imc_fabric_config cfg;
	struct scn_served *served;  /* an opensm line: OpenSM's fabric */

	struct scn_ports hosts;   /* struct host, made on first use */
	size_t nhosts;

	struct scn_port_gsis *gsis;  /* port_gsi.c: after the data, freed */
	struct imc_htab data;     /* struct data_ent by key */
	struct data_ent *newest;  /* then older ones: freed in this order */

	struct act *acts;
	const struct scn_action *cur;

	int err;
	bool msg_set;
	char msg[256];
	bool started;             /* plugin start hooks ran: teardown runs */
};

/* ---- context accessors ---- */

struct imc_fabric *imc_scn_fabric(struct imc_scn_ctx *c)
{
	return c->fab;
}

struct imc_loop *imc_scn_loop(struct imc_scn_ctx *c)
{
	return c->loop;
}

const struct imc_topo *imc_scn_topo(struct imc_scn_ctx *c)
{
	return c->s->topo;
}

const struct imc_fabric_config *imc_scn_config(struct imc_scn_ctx *c)
{
	return &c->cfg;
}

imc_time_t imc_scn_now(struct imc_scn_ctx *c)
{
	return imc_loop_now(c->loop) - c->t0;
}

static imc_time_t at_loop(const struct imc_scn_ctx *c, imc_time_t t)
{
	return t > IMC_TIME_MAX - c->t0 ? IMC_TIME_MAX : c->t0 + t;
}

uint32_t scn_flow_id(struct imc_scn_ctx *c)
{
	return c->cur ? c->cur->index : UINT32_MAX;
}

struct scn_port_gsis **scn_ctx_port_gsis(struct imc_scn_ctx *c)
{
	return &c->gsis;
}

const struct imc_scenario *scn_scenario(struct imc_scn_ctx *c)
{
	return c->s;
}

int imc_scn_fail(struct imc_scn_ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	c->msg_set = true;
	return err;
}

/* ---- hosts ---- */

static struct host *host_find(struct imc_scn_ctx *c, uint32_t node,
			      unsigned port)
{
	return c->hosts.slot ? *scn_ports_at(&c->hosts, node, port) : NULL;
}

static int host_get(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct host **out)
{
	const struct imc_topo *t = c->s->topo;
	struct host *h;

	if (node >= t->nnodes || t->node[node].type != IMC_NODE_HCA ||
	    port < 1 || port > t->node[node].nports)
		return -EINVAL;
	if (!c->hosts.slot && scn_ports_init(&c->hosts, t))
		return -ENOMEM;
	h = host_find(c, node, port);
	if (h) {
		*out = h;
		return 0;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->c = c;
	h->node = node;
	h->port = port;
	*scn_ports_at(&c->hosts, node, port) = h;
	c->nhosts++;
	*out = h;
	return 0;
}

static void host_free(void *data)
{
	struct host *h = data;

	for (unsigned i = 0; i < h->nqps; i++)
		imc_qp_destroy(h->qp[i]);
	if (h->seen) {
		for (unsigned i = 0; i < h->c->s->nactions; i++)
			free(h->seen[i].bits);
		free(h->seen);
	}
	free(h);
}

/* Counts a repeat of (flow, seq) as a duplicate. */
static void track(struct host *h, uint32_t flow, uint32_t seq)
{
	const struct imc_scenario *s = h->c->s;
	struct seen *sn;
	uint32_t w = seq / 64;

	if (flow >= s->nactions || seq >= SEEN_MAX_SEQ)
		return;
	if (!h->seen) {
		h->seen = calloc(s->nactions, sizeof(*h->seen));
		if (!h->seen)
			return;
	}
	sn = &h->seen[flow];
	if (w >= sn->nwords) {
		size_t old = sn->nwords;

		if (IMC_VEC_RESERVE(&sn->bits, &sn->nwords, (size_t)w + 1))
			return;
		memset(sn->bits + old, 0,
		       (sn->nwords - old) * sizeof(*sn->bits));
	}
	if (sn->bits[w] >> (seq % 64) & 1)
		h->st.dups++;
	else
		sn->bits[w] |= 1ull << (seq % 64);
}

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	struct host *h = ctx;

	h->st.delivered++;
	if (r->len >= IMC_SCN_HDR_SIZE && imc_get32(r->data) == IMC_SCN_MAGIC)
		track(h, imc_get32(r->data + 4), imc_get32(r->data + 8));
}

int imc_scn_qp(struct imc_scn_ctx *c, uint32_t node, unsigned port,
	       uint16_t pkey, uint32_t qkey, struct imc_qp **out)
{
	struct host *h;
	int rc = host_get(c, node, port, &h);

	if (rc)
		return rc;
	for (unsigned i = 0; i < h->nqps; i++) {
		if (h->pkey[i] == pkey && h->qkey[i] == qkey) {
			*out = h->qp[i];
			return 0;
		}
	}
	if (h->nqps == IMC_SCN_HOST_QPS)
		return -ENOSPC;
	rc = imc_qp_create(c->fab, node, port, 0, qkey, pkey, on_recv, h,
			   &h->qp[h->nqps]);
	if (rc)
		return rc;
	h->pkey[h->nqps] = pkey;
	h->qkey[h->nqps] = qkey;
	*out = h->qp[h->nqps++];
	return 0;
}

void imc_scn_count_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
			int err)
{
	struct host *h;

	if (host_get(c, node, port, &h))
		return;
	if (err < 0)
		h->st.send_errors++;
	else
		h->st.sent++;
}

void scn_host_stats(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct scn_host_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (node != IMC_TOPO_NONE) {
		struct host *h = host_find(c, node, port);

		if (h)
			*out = h->st;
		return;
	}
	for (size_t i = 0; i < c->hosts.n; i++) {
		const struct host *h = c->hosts.slot[i];

		if (h) {
			out->sent += h->st.sent;
			out->send_errors += h->st.send_errors;
			out->delivered += h->st.delivered;
			out->dups += h->st.dups;
		}
	}
}

/* ---- run data ---- */

static bool data_eq(const struct imc_hnode *n, const void *key)
{
	return imc_container_of(n, struct data_ent, hn)->key == key;
}

static struct data_ent *data_find(struct imc_scn_ctx *c, const void *key)
{
	struct imc_hnode *n = NULL;

	if (c->data.b)
		n = imc_htab_find(&c->data, imc_mix64((uintptr_t)key), data_eq,
				  key);
	return n ? imc_container_of(n, struct data_ent, hn) : NULL;
}

void *imc_scn_data(struct imc_scn_ctx *c, const void *key)
{
	struct data_ent *e = data_find(c, key);

	return e ? e->data : NULL;
}

int imc_scn_data_set(struct imc_scn_ctx *c, const void *key, void *data,
		     void (*free_fn)(void *data))
{
	struct data_ent *e;

	if (data_find(c, key))
		return -EEXIST;
	if (!c->data.b && imc_htab_init(&c->data, 64))
		return -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct data_ent){ .older = c->newest, .key = key, .data = data,
				.free = free_fn };
	c->newest = e;
	imc_htab_insert(&c->data, &e->hn, imc_mix64((uintptr_t)key));
	return 0;
}

/* ---- actions ---- */

static void set_error(struct imc_scn_ctx *c, int rc)
{
	c->err = rc;
	if (!c->msg_set)
		snprintf(c->msg, sizeof(c->msg), "%s", strerror(-rc));
}

void scn_fail_line(struct imc_scn_ctx *c, uint32_t flow, int err,
		   const char *fmt, ...)
{
	va_list ap;

	if (c->err || flow >= c->s->nactions)
		return;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	c->msg_set = true;
	/* advance() sees the error when the loop returns and reports the
	 * line c->cur names. */
	c->cur = &c->s->actions[flow];
	set_error(c, err);
	imc_loop_stop(c->loop);
}

static void act_fire(struct imc_timer *t)
{
	struct act *x = imc_container_of(t, struct act, timer);
	struct imc_scn_ctx *c = x->c;
	int rc;

	if (c->err)
		return;
	c->cur = x->a;
	c->msg_set = false;
	rc = x->a->verb->run(c, x->a->data);
	if (rc < 0) {
		set_error(c, rc);
		imc_loop_stop(c->loop);
		return;
	}
	c->cur = NULL;
}

/* ---- expectations ---- */

static void format_value(const struct imc_scn_subject *subj, uint64_t v,
			 char *buf, size_t len)
{
	if (subj->value_format)
		subj->value_format(v, buf, len);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

/* Sides of an expectation: sums and differences of 64-bit values, exact
 * in 128 bits (at most 2^63 terms would be needed to wrap), so that no
 * value wraps or saturates into a false verdict. */
typedef __int128 wide_t;

static void format_wide(wide_t x, char *buf, size_t len)
{
	char d[48];
	size_t n = 0;
	bool neg = x < 0;
	unsigned __int128 u = neg ? -(unsigned __int128)x : (unsigned __int128)x;

	do {
		d[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u && n < sizeof(d));
	if (len < n + 2)
		return;
	if (neg)
		*buf++ = '-';
	while (n)
		*buf++ = d[--n];
	*buf = '\0';
}

static int check(struct imc_scn_ctx *c, const struct scn_expect *e,
		 struct imc_scenario_check *out)
{
	uint64_t v;
	wide_t lhs, rhs = 0;
	bool ok;
	int rc;

	out->at = imc_scn_now(c);
	rc = e->lhs.subj->observe(c, e->lhs.data, &v);
	if (rc)
		return rc;
	for (unsigned i = 0; i < e->nrhs; i++) {
		const struct scn_term *t = &e->rhs[i];
		uint64_t w = t->value;

		if (t->is_subject &&
		    (rc = t->subj.subj->observe(c, t->subj.data, &w)))
			return rc;
		rhs += t->neg ? -(wide_t)w : (wide_t)w;
	}
	lhs = v;
	switch (e->op) {
	case SCN_EQ: ok = lhs == rhs; break;
	case SCN_NE: ok = lhs != rhs; break;
	case SCN_LT: ok = lhs < rhs; break;
	case SCN_LE: ok = lhs <= rhs; break;
	case SCN_GT: ok = lhs > rhs; break;
	case SCN_GE: ok = lhs >= rhs; break;
	default: ok = v >= e->a && v <= e->b; break;
	}
	out->observed = v;
	format_value(e->lhs.subj, v, out->observed_str,
		     sizeof(out->observed_str));
	if (e->rhs_observed) {
		size_t n = strlen(out->observed_str);

		char w[48];

		if (e->nrhs == 1 && rhs >= 0 && e->rhs[0].subj.subj->value_format)
			e->rhs[0].subj.subj->value_format((uint64_t)rhs, w,
							  sizeof(w));
		else
			format_wide(rhs, w, sizeof(w));
		snprintf(out->observed_str + n, sizeof(out->observed_str) - n,
			 " vs %s", w);
	}
	out->state = ok ? IMC_SCN_CHECK_PASS : IMC_SCN_CHECK_FAIL;
	return 0;
}

/* ---- the run ---- */

struct slicer {
	imc_time_t slice;
	const struct imc_scenario_run_opts *o;
};

/* Runs the loop to scenario time to. Returns 0, 1 when the caller's
 * interrupted() hook ended the run early, or a negative errno. */
static int advance(struct imc_scn_ctx *c, struct slicer *sl, imc_time_t to)
{
	struct imc_loop_stats st;

	to = at_loop(c, to);
	do {
		imc_time_t now = imc_loop_now(c->loop);
		imc_time_t next = now + sl->slice;
		uint64_t before;
		int rc;

		if (next > to || next < now)
			next = to;
		imc_loop_get_stats(c->loop, &st);
		before = st.timers_fired;
		rc = imc_loop_run_until(c->loop, next);
		if (c->err)
			return c->err;
		if (rc < 0)
			return rc;
		imc_loop_get_stats(c->loop, &st);
		if (st.timers_fired - before < SLICE_EVENTS / 4 &&
		    (sl->slice < SLICE_MAX ||
		     (c->own_loop && st.timers_fired == before &&
		      sl->slice <= IMC_TIME_LIMIT)))
			/* Virtual time with nothing to do: leap, so that a
			 * run to a distant stop takes O(log) idle slices. */
			sl->slice *= 2;
		else if (sl->slice > SLICE_MAX)
			sl->slice = SLICE_MAX;
		else if (st.timers_fired - before > SLICE_EVENTS &&
			 sl->slice > SLICE_MIN)
			sl->slice /= 2;
		if (sl->o->progress)
			sl->o->progress(sl->o->ctx, imc_scn_now(c),
					st.timers_fired + st.fd_events);
		if (sl->o->interrupted && sl->o->interrupted(sl->o->ctx))
			return 1;
	} while (imc_loop_now(c->loop) < to);
	return 0;
}

/* The hosts in node:port order: the order of their slots. */
static int fill_hosts(struct imc_scn_ctx *c, struct imc_scenario_result *r)
{
	const struct imc_topo *t = c->s->topo;
	unsigned n = 0;

	r->hosts = calloc(c->nhosts ? c->nhosts : 1, sizeof(*r->hosts));
	if (!r->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < c->hosts.n; i++) {
		const struct host *h = c->hosts.slot[i];
		struct imc_scenario_host *o = &r->hosts[n];

		if (!h)
			continue;
		o->node = h->node;
		o->port = h->port;
		o->name = t->node[h->node].name;
		o->sent = h->st.sent;
		o->send_errors = h->st.send_errors;
		o->delivered = h->st.delivered;
		o->dups = h->st.dups;
		n++;
	}
	r->nhosts = n;
	return 0;
}

/* The report: each section of the language, then the expectations. */
static int make_report(struct imc_scn_ctx *c, struct imc_scenario_result *r)
{
	const struct imc_scn_lang *l = c->s->lang;
	struct imc_scn_report *rep;
	int rc = scn_report_create(&rep);

	if (rc)
		return rc;
	r->report = rep;
	for (unsigned i = 0; !rc && i < scn_lang_nsections(l); i++) {
		const struct imc_scn_section *sec = scn_lang_section(l, i);

		rc = scn_report_begin(rep, sec->name);
		if (rc)
			break;
		c->msg_set = false;
		rc = sec->report(c, rep);
		if (rc)
			scn_report_finish(rep);
		else
			rc = scn_report_finish(rep);
		if (rc) {
			char why[sizeof(c->msg)];

			snprintf(why, sizeof(why), "%s",
				 c->msg_set ? c->msg : strerror(-rc));
			snprintf(c->msg, sizeof(c->msg), "section %.32s: %.200s",
				 sec->name, why);
			c->msg_set = true;
		}
	}
	if (!rc)
		rc = scn_report_begin(rep, "expectations");
	if (!rc) {
		imc_scn_report_u64(rep, "held", r->npassed);
		imc_scn_report_u64(rep, "failed", r->nfailed);
		imc_scn_report_u64(rep, "skipped", r->nskipped);
		imc_scn_report_list(rep, "held_lines");
		for (unsigned i = 0; i < r->nchecks; i++)
			if (r->checks[i].state == IMC_SCN_CHECK_PASS)
				imc_scn_report_u64(rep, NULL,
						   r->checks[i].line);
		imc_scn_report_end(rep);
		imc_scn_report_line(rep,
			"%u of %u held%s", r->npassed, r->nchecks,
			r->nfailed ? "" : r->nskipped ?
			", the others skipped (after the end)" : "");
		for (unsigned i = 0; i < r->nchecks; i++)
			if (r->checks[i].state == IMC_SCN_CHECK_FAIL)
				imc_scn_report_line(rep, "FAILED line %u: %s",
						    r->checks[i].line,
						    r->checks[i].text);
		rc = scn_report_finish(rep);
	}
	return rc;
}

/* Returns how many timers were left in the loop. */
static size_t ctx_free(struct imc_scn_ctx *c)
{
	size_t left = 0;

	/* Run data first: flows cancel their timers and stop sending.
	 * Last set, first freed: state made later may use state made
	 * before it (IPoIB interfaces leave through trackers, trackers
	 * send through the SA verbs' GSIs). */
	if (c->started)
		scn_plugins_teardown(c);
	while (c->newest) {
		struct data_ent *e = c->newest;

		c->newest = e->older;
		imc_htab_remove(&c->data, &e->hn);
		if (e->free)
			e->free(e->data);
		free(e);
	}
	imc_htab_fini(&c->data);
	/* The GSIs after their users (trackers, SA clients), which took
	 * their agents off them. */
	scn_port_gsis_free(c->gsis);
	if (c->acts) {
		for (unsigned i = 0; i < c->s->nactions; i++)
			imc_timer_cancel(c->loop, &c->acts[i].timer);
		free(c->acts);
	}
	scn_ports_fini(&c->hosts, host_free);
	/* OpenSM goes and the server with it, before the fabric it serves. */
	scn_served_stop(c->served);
	if (c->fab)
		imc_fabric_destroy(c->fab);
	if (c->loop && c->own_loop) {
		left = imc_loop_destroy(c->loop);
	} else if (c->loop) {
		struct imc_loop_stats st;

		imc_loop_get_stats(c->loop, &st);
		left = st.timers_armed + st.fds_watched;
	}
	return left;
}

static int error_out(struct imc_scn_ctx *c, const struct scn_action *a,
		     unsigned line, const char *verb, int rc, char *err,
		     size_t errlen)
{
	if (!err || !errlen)
		return rc;
	if (a)
		snprintf(err, errlen, "%s:%u: %s: %s", c->s->name, a->line,
			 a->verb->name, c->msg);
	else if (line)
		snprintf(err, errlen, "%s:%u: %s: %s", c->s->name, line, verb,
			 c->msg_set ? c->msg : strerror(-rc));
	else
		snprintf(err, errlen, "%s: %s: %s", c->s->name, verb,
			 c->msg_set ? c->msg : strerror(-rc));
	return rc;
}

int scn_ports_init(struct scn_ports *p, const struct imc_topo *t)
{
	uint32_t n = 0;

	p->base = calloc((size_t)t->nnodes + 1, sizeof(*p->base));
	for (uint32_t i = 0; p->base && i < t->nnodes; i++) {
		p->base[i] = n;
		n += t->node[i].nports + 1u;
	}
	p->slot = p->base ? calloc(n ? n : 1, sizeof(*p->slot)) : NULL;
	if (!p->slot) {
		free(p->base);
		p->base = NULL;
		return -ENOMEM;
	}
	p->base[t->nnodes] = n;
	p->n = n;
	return 0;
}

void scn_ports_fini(struct scn_ports *p, void (*free_fn)(void *))
{
	for (uint32_t i = 0; free_fn && i < p->n; i++)
		if (p->slot[i])
			free_fn(p->slot[i]);
	free(p->slot);
	free(p->base);
	*p = (struct scn_ports){ 0 };
}

char *scn_port_name(const struct imc_topo *t, uint32_t node, unsigned port)
{
	char name[IMC_TOPO_MAX_NAME + 8];

	snprintf(name, sizeof(name), "%s:%u", t->node[node].name, port);
	return strdup(name);
}

uint64_t scn_mcmr_create(struct imc_mcmr *rec, uint64_t given)
{
	if (!(given & UMAD_SA_MCM_COMP_MASK_QKEY))
		rec->qkey = IMC_SCN_QKEY;
	if (!(given & UMAD_SA_MCM_COMP_MASK_PKEY))
		rec->pkey = IMC_PKEY_DEFAULT;
	return given | UMAD_SA_MCM_COMP_MASK_QKEY |
	       UMAD_SA_MCM_COMP_MASK_TCLASS | UMAD_SA_MCM_COMP_MASK_PKEY |
	       UMAD_SA_MCM_COMP_MASK_FLOW_LABEL | UMAD_SA_MCM_COMP_MASK_SL;
}

struct scn_served *scn_ctx_served(struct imc_scn_ctx *c)
{
	return c->served;
}

/* An opensm line: the fabric's SM and SA step aside for OpenSM's, and
 * the run goes on a real-time loop of its own (OpenSM is a process with
 * its own clock). */
static int served_loop(struct imc_scn_ctx *c,
		       const struct imc_scenario_run_opts *opts)
{
	int rc;

	if (!scn_served_cfg(c->s))
		return 0;
	if (opts->loop || opts->started) {
		snprintf(c->msg, sizeof(c->msg), "a scenario with an opensm "
			 "line runs on a loop of its own (ibmcast run)");
		c->msg_set = true;
		return -EINVAL;
	}
	c->cfg.external_sm = true;
	rc = imc_loop_create_realtime(&c->loop);
	if (rc)
		c->loop = NULL;
	else
		c->own_loop = true;
	return rc;
}

/* Serves the fabric to OpenSM and waits for SUBNET UP: scenario time 0
 * is then. */
static int served_start(struct imc_scn_ctx *c,
			const struct imc_scenario_run_opts *opts, char *err,
			size_t errlen)
{
	const struct scn_served_cfg *cfg = scn_served_cfg(c->s);
	int rc;

	if (!cfg)
		return 0;
	c->msg[0] = 0;
	rc = scn_served_start(cfg, c->fab, c->loop, opts->sm_wait,
			      &c->served, c->msg, sizeof(c->msg));
	if (rc) {
		c->msg_set = true;
		return error_out(c, NULL, 0, "opensm", rc, err, errlen);
	}
	c->t0 = imc_loop_now(c->loop);
	return 0;
}

/* The result's checks, one per expect line, skipped until checked. */
static int checks_init(const struct imc_scenario *s,
		       struct imc_scenario_result *r, imc_time_t end)
{
	r->checks = calloc(s->nexpects ? s->nexpects : 1, sizeof(*r->checks));
	if (!r->checks)
		return -ENOMEM;
	r->nchecks = s->nexpects;
	for (unsigned i = 0; i < s->nexpects; i++) {
		r->checks[i].line = s->expects[i].line;
		r->checks[i].text = s->expects[i].text;
		r->checks[i].at_end = s->expects[i].at_end;
		r->checks[i].at = s->expects[i].at_end ? end : s->expects[i].at;
		r->checks[i].state = IMC_SCN_CHECK_SKIPPED;
	}
	return 0;
}

/* The run's loop: OpenSM's real-time one, the caller's, or a virtual
 * one of its own; then the fabric on it, captured when asked. */
static int fabric_setup(struct imc_scn_ctx *c,
			const struct imc_scenario_run_opts *opts, char *err,
			size_t errlen)
{
	const struct imc_scenario *s = c->s;
	int rc = served_loop(c, opts);

	if (rc)
		return error_out(c, NULL, 0, "opensm", rc, err, errlen);
	if (c->loop) {
		/* served_loop() made it */
	} else if (opts->loop) {
		c->loop = opts->loop;
		c->t0 = imc_loop_now(c->loop);
	} else {
		rc = imc_loop_create_virtual(0, &c->loop);
		if (rc)
			return error_out(c, NULL, 0, "loop", rc, err, errlen);
		c->own_loop = true;
	}
	rc = imc_fabric_create(s->topo, c->loop, &c->cfg, &c->fab);
	if (rc) {
		c->fab = NULL;
		return error_out(c, NULL, s->topo_line, "fabric", rc, err,
				 errlen);
	}
	if (opts->pcap) {
		rc = imc_fabric_capture(c->fab, opts->pcap, IMC_TOPO_NONE, 0);
		if (rc)
			return error_out(c, NULL, 0, "capture", rc, err,
					 errlen);
	}
	return 0;
}

/* Settings run before the fabric comes up, in file order; then the
 * plugins start, the fabric comes up and OpenSM, if any, starts. */
static int settings_run(struct imc_scn_ctx *c,
			const struct imc_scenario_run_opts *opts, char *err,
			size_t errlen)
{
	const struct imc_scenario *s = c->s;
	int rc;

	for (unsigned i = 0; i < s->nsettings; i++) {
		const struct scn_action *a = &s->settings[i];

		if (!a->verb->run)
			continue;
		c->cur = a;
		c->msg_set = false;
		rc = a->verb->run(c, a->data);
		if (rc < 0) {
			set_error(c, rc);
			return error_out(c, a, 0, NULL, rc, err, errlen);
		}
	}
	c->cur = NULL;
	c->started = true;
	rc = scn_plugins_start(c);
	if (rc)
		return error_out(c, NULL, 0, "plugin start", rc, err, errlen);
	rc = imc_fabric_bring_up(c->fab);
	if (rc)
		return error_out(c, NULL, s->topo_line, "bring-up", rc, err,
				 errlen);
	return served_start(c, opts, err, errlen);
}

/* A timer per action line, armed at its time; lines after end are not
 * armed. */
static int actions_arm(struct imc_scn_ctx *c, imc_time_t end)
{
	const struct imc_scenario *s = c->s;
	int rc;

	c->acts = calloc(s->nactions ? s->nactions : 1, sizeof(*c->acts));
	if (!c->acts)
		return -ENOMEM;
	for (unsigned i = 0; i < s->nactions; i++) {
		c->acts[i].c = c;
		c->acts[i].a = &s->actions[i];
		imc_timer_init(&c->acts[i].timer, act_fire);
		if (s->actions[i].at > end)
			continue;
		rc = imc_timer_arm(c->loop, &c->acts[i].timer,
				   at_loop(c, s->actions[i].at));
		if (rc)
			return rc;
	}
	return 0;
}

/* The error of a run that advance() failed: of the action line running,
 * else of the run. */
static int advance_error(struct imc_scn_ctx *c, int rc, char *err,
			 size_t errlen)
{
	if (c->cur)
		return error_out(c, c->cur, 0, NULL, rc, err, errlen);
	return error_out(c, NULL, 0, "run", rc, err, errlen);
}

/* The caller's started() hook, once time 0's actions have run. Returns
 * what the rest of the run goes on from (0 to go on, 1 interrupted, or
 * what started() returned), or a negative errno. */
static int run_started(struct imc_scn_ctx *c, struct slicer *sl,
		       bool *started, char *err, size_t errlen)
{
	const struct imc_scenario_run_opts *opts = sl->o;
	int rc = advance(c, sl, 0);

	if (rc < 0)
		return advance_error(c, rc, err, errlen);
	if (rc == 0) {
		c->msg_set = false;
		rc = opts->started(opts->ctx, c);
		if (rc < 0)
			return error_out(c, NULL, 0, "start", rc, err, errlen);
		*started = true;
	}
	return rc;
}

/* Timed expectations, at their times (the parser put them in time
 * order), then the run to its end. rc: what the run goes on from. */
static int timed_run(struct imc_scn_ctx *c, struct slicer *sl,
		     struct imc_scenario_result *r, imc_time_t end, int rc,
		     char *err, size_t errlen)
{
	const struct imc_scenario *s = c->s;
	unsigned ie = 0;

	while (!rc) {
		imc_time_t t;

		while (ie < s->nexpects && s->expects[ie].at_end)
			ie++;
		if (ie == s->nexpects || s->expects[ie].at > end)
			break;
		t = s->expects[ie].at;
		rc = advance(c, sl, t);
		if (rc)
			break;
		for (; ie < s->nexpects; ie++) {
			const struct scn_expect *e = &s->expects[ie];

			if (e->at_end)
				continue;
			if (e->at != t)
				break;
			rc = check(c, e, &r->checks[ie]);
			if (rc)
				return error_out(c, NULL, e->line, "expect",
						 rc, err, errlen);
		}
	}
	if (!rc)
		rc = advance(c, sl, end);
	if (rc == 1)
		rc = 0;     /* interrupted: the run ends here */
	if (rc)
		return advance_error(c, rc, err, errlen);
	return 0;
}

/* The expectations checked at the end, then the result's counts, the
 * fabric's figures, the hosts and the report. */
static int result_fill(struct imc_scn_ctx *c, struct imc_scenario_result *r,
		       char *err, size_t errlen)
{
	const struct imc_scenario *s = c->s;
	struct imc_loop_stats st;
	int rc;

	for (unsigned i = 0; i < s->nexpects; i++) {
		if (!s->expects[i].at_end)
			continue;
		rc = check(c, &s->expects[i], &r->checks[i]);
		if (rc)
			return error_out(c, NULL, s->expects[i].line, "expect",
					 rc, err, errlen);
	}
	scn_served_hold(c->served);
	for (unsigned i = 0; i < r->nchecks; i++) {
		if (r->checks[i].state == IMC_SCN_CHECK_PASS)
			r->npassed++;
		else if (r->checks[i].state == IMC_SCN_CHECK_FAIL)
			r->nfailed++;
		else
			r->nskipped++;
	}
	r->seed = c->cfg.seed;
	r->end = imc_scn_now(c);
	imc_loop_get_stats(c->loop, &st);
	r->events = st.timers_fired + st.fd_events;
	r->trace_hash = imc_fabric_trace_hash(c->fab);
	imc_fabric_totals(c->fab, &r->totals);
	rc = fill_hosts(c, r);
	if (!rc)
		rc = make_report(c, r);
	if (rc)
		return error_out(c, NULL, 0, "report", rc, err, errlen);
	return 0;
}

int imc_scenario_run(const struct imc_scenario *s,
		     const struct imc_scenario_run_opts *opts,
		     struct imc_scenario_result *r, char *err, size_t errlen)
{
	static const struct imc_scenario_run_opts none;
	struct imc_scn_ctx c;
	struct slicer sl;
	uint64_t wall0 = 0;
	imc_time_t end;
	bool started = false;
	int rc;

	memset(r, 0, sizeof(*r));
	if (err && errlen)
		err[0] = '\0';
	if (!opts)
		opts = &none;
	if (opts->started && !opts->ending)
		return -EINVAL;
	if (opts->wall_clock)
		wall0 = opts->wall_clock(opts->ctx);
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.cfg = s->cfg;
	c.cfg.seed = opts->seed_set ? opts->seed : s->seed;
	end = opts->until_set ? opts->until : s->stop;
	sl.slice = SLICE_MIN;
	sl.o = opts;

	rc = checks_init(s, r, end);
	if (rc)
		return rc;
	rc = fabric_setup(&c, opts, err, errlen);
	if (rc)
		goto fail;
	rc = settings_run(&c, opts, err, errlen);
	if (rc)
		goto fail;
	rc = actions_arm(&c, end);
	if (rc)
		goto fail;
	if (opts->started) {
		rc = run_started(&c, &sl, &started, err, errlen);
		if (rc < 0)
			goto fail;
	}
	rc = timed_run(&c, &sl, r, end, rc, err, errlen);
	if (!rc)
		rc = result_fill(&c, r, err, errlen);
	if (rc)
		goto fail;
	if (started)
		opts->ending(opts->ctx, &c);
	r->leftover = ctx_free(&c);
	if (opts->wall_clock)
		r->wall_ns = opts->wall_clock(opts->ctx) - wall0;
	return 0;

fail:
	if (rc == -ENOMEM && err && errlen && !err[0])
		snprintf(err, errlen, "%s: out of memory", s->name);
	if (started)
		opts->ending(opts->ctx, &c);
	ctx_free(&c);
	imc_scenario_result_free(r);
	return rc < 0 ? rc : -EIO;
}


void imc_scenario_result_free(struct imc_scenario_result *r)
{
	if (!r)
		return;
	free(r->checks);
	free(r->hosts);
	scn_report_free(r->report);
	memset(r, 0, sizeof(*r));
}
