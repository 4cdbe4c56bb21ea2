/* The membership audit (see umad/mcast_audit.h).
 *
 *   state    event                                  next
 *   IDLE     timer fires, or _run()                 RUNNING (Gets sent)
 *   RUNNING  no joined group, or port not active    IDLE (timer re-armed)
 *   RUNNING  every Get of the round completed       IDLE (timer re-armed)
 *   RUNNING  NO_RECORDS for a group still joined    IDLE (Gets cancelled,
 *                                                   timer re-armed, lost())
 *   any      destroy                                gone (Gets cancelled)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa_attr.h"
#include "umad/mcast_audit.h"
#include "util/vec.h"

enum state {
	IDLE,
	RUNNING,
};

struct get {
	struct imc_mcast_audit *a;
	struct imc_sa_query *q;     /* NULL: slot free */
	struct imc_gid mgid;
};

struct imc_mcast_audit {
	struct imc_loop *loop;
	struct imc_sa_client *sa;
	struct imc_mcast *t;
	struct imc_mcast_audit_config cfg;
	enum state state;
	bool active;
	struct imc_timer timer;
	struct imc_gid *todo;       /* MGIDs of this round, in MGID order */
	size_t todo_n, todo_cap, todo_next;
	struct get *gets;           /* cfg.window slots */
	struct imc_mcast_audit_stats st;
};

static void set_state(struct imc_mcast_audit *a, enum state s)
{
	/* IDLE <-> RUNNING only (table at the top). */
	if (a->state == s)
		return;
	a->state = s;
	if (s == IDLE && a->cfg.interval)
		(void)imc_timer_arm_in(a->loop, &a->timer, a->cfg.interval);
}

static void cancel_gets(struct imc_mcast_audit *a)
{
	for (unsigned i = 0; i < a->cfg.window; i++) {
		if (!a->gets[i].q)
			continue;
		imc_sa_query_cancel(a->gets[i].q);
		a->gets[i].q = NULL;
	}
	a->st.in_flight = 0;
	a->todo_n = a->todo_next = 0;
}

struct walk {
	struct imc_mcast_audit *a;
	const struct imc_gid *find;   /* NULL: collect every joined MGID */
	bool found;
	int err;
};

static void on_group(void *arg, const struct imc_mcast_group_info *g)
{
	struct walk *w = arg;
	struct imc_mcast_audit *a = w->a;

	if (!g->joined || !g->join_state)
		return;
	if (w->find) {
		w->found |= imc_gid_equal(w->find, &g->rec.mgid);
		return;
	}
	if (w->err)
		return;
	w->err = IMC_VEC_RESERVE(&a->todo, &a->todo_cap, a->todo_n + 1);
	if (w->err)
		return;
	a->todo[a->todo_n++] = g->rec.mgid;
}

static bool still_held(struct imc_mcast_audit *a, const struct imc_gid *mgid)
{
	struct walk w = { .a = a, .find = mgid };

	/* A walk of the groups, only when the SA says one is gone. */
	imc_mcast_foreach_group(a->t, on_group, &w);
	return w.found;
}

static void fill(struct imc_mcast_audit *a);

static void on_get(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct get *g = arg;
	struct imc_mcast_audit *a = g->a;
	struct imc_gid mgid = g->mgid;

	g->q = NULL;
	a->st.in_flight--;
	a->st.gets++;
	if (err) {
		a->st.errors++;
	} else if (imc_sa_status_code(ans->status) ==
		   UMAD_SA_STATUS_NO_RECORDS) {
		if (still_held(a, &mgid)) {
			a->st.lost++;
			cancel_gets(a);
			set_state(a, IDLE);
			/* Last: lost() may destroy the audit. */
			a->cfg.lost(a->cfg.arg, &mgid);
			return;
		}
		/* Left (and its Delete answered) after the Get was sent. */
		a->st.stale++;
	} else if (ans->status != UMAD_STATUS_SUCCESS) {
		a->st.errors++;
	}
	fill(a);
}

/* Sends Gets until the window is full or the round's list is done. */
static void fill(struct imc_mcast_audit *a)
{
	for (unsigned i = 0; i < a->cfg.window && a->todo_next < a->todo_n;
	     i++) {
		struct get *g = &a->gets[i];
		struct imc_sa_mad m;
		struct imc_mcmr r;

		if (g->q)
			continue;
		memset(&m, 0, sizeof(m));
		memset(&r, 0, sizeof(r));
		r.mgid = a->todo[a->todo_next];
		r.port_gid = a->cfg.port_gid;
		m.mad.method = UMAD_METHOD_GET;
		m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
		m.sa.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
				 UMAD_SA_MCM_COMP_MASK_PORT_GID;
		imc_mcmr_pack(&r, m.data, sizeof(m.data));
		g->a = a;
		g->mgid = r.mgid;
		a->todo_next++;
		if (imc_sa_query_start(a->sa, &m, on_get, g, &g->q) < 0) {
			g->q = NULL;
			a->st.errors++;
			continue;
		}
		if (++a->st.in_flight > a->st.max_in_flight)
			a->st.max_in_flight = a->st.in_flight;
	}
	if (!a->st.in_flight && a->todo_next >= a->todo_n) {
		a->todo_n = a->todo_next = 0;
		set_state(a, IDLE);
	}
}

void imc_mcast_audit_run(struct imc_mcast_audit *a)
{
	struct walk w = { .a = a };

	if (a->state == RUNNING)
		return;
	imc_timer_cancel(a->loop, &a->timer);
	a->st.rounds++;
	a->todo_n = a->todo_next = 0;
	a->state = RUNNING;
	if (a->active)
		imc_mcast_foreach_group(a->t, on_group, &w);
	if (w.err)
		a->todo_n = 0;
	fill(a);
}

static void on_timer(struct imc_timer *tm)
{
	imc_mcast_audit_run(imc_container_of(tm, struct imc_mcast_audit,
					     timer));
}

void imc_mcast_audit_set_active(struct imc_mcast_audit *a, bool active)
{
	a->active = active;
}

int imc_mcast_audit_create(struct imc_loop *loop, struct imc_sa_client *sa,
			   struct imc_mcast *t,
			   const struct imc_mcast_audit_config *cfg,
			   struct imc_mcast_audit **out)
{
	struct imc_mcast_audit *a;

	if (!loop || !sa || !t || !cfg || !cfg->window || !cfg->lost || !out)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->gets = calloc(cfg->window, sizeof(*a->gets));
	if (!a->gets) {
		free(a);
		return -ENOMEM;
	}
	a->loop = loop;
	a->sa = sa;
	a->t = t;
	a->cfg = *cfg;
	a->active = true;
	a->state = IDLE;
	imc_timer_init(&a->timer, on_timer);
	if (cfg->interval &&
	    imc_timer_arm_in(loop, &a->timer, cfg->interval) < 0) {
		free(a->gets);
		free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void imc_mcast_audit_destroy(struct imc_mcast_audit *a)
{
	if (!a)
		return;
	imc_timer_cancel(a->loop, &a->timer);
	cancel_gets(a);
	free(a->todo);
	free(a->gets);
	free(a);
}

void imc_mcast_audit_get_stats(const struct imc_mcast_audit *a,
			       struct imc_mcast_audit_stats *st)
{
	*st = a->st;
}
