/* ibmcastd's seeded sweep: deterministic simulations of one daemon and
 * its client processes on the embedded SA, each drawn whole from its
 * seed.
 *
 * A run: the daemon's port and another port (which holds FullMember in
 * three of the four groups, so that those outlive any client), three to
 * five client connections, then 80 steps at random virtual times:
 * clients join a random group with random JoinState bits, with or
 * without a QP; leave from outside or from inside a callback; die (the
 * connection closes with its members) and come back as a new process;
 * the daemon is killed (its sockets close, the SA keeps its memberships)
 * and started again some time later, its clients reconnecting by
 * themselves; half the runs give the daemon the SM_Key for its audit.
 *
 * After quiescence (the daemon up, past its audit's grace period):
 *  - every live handle completed exactly once and is JOINED or FAILED,
 *    or it is WAITING for a group the SA does not have (a NonMember or
 *    send-only member whose group lost its last full member);
 *  - the SA holds for the daemon's port, group by group, exactly the
 *    union of the JoinState bits of the live JOINED handles;
 *  - each client has a QP attached to a group exactly when a JOINED
 *    receiving handle of it uses the group;
 * throughout: callbacks only from imc_mcastd_process(), none after a
 * leave or a client's destroy, nothing after ERROR, REJOINING only after
 * JOINED. Then every handle leaves: the SA holds nothing of the port,
 * the tracker no member, and once everything is destroyed no timer is
 * left armed (fx_fini). The sanitizer build finds leaks.
 *
 * Seeds: 200 from seed 1 by default; IMC_SEEDS=N and IMC_SEED_FIRST=S
 * (or --seeds N --first S) change them, IMC_SEED=N (or --seed N) runs
 * one; a failure prints the seed and the command that replays it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>

#include "ibmcast/rng.h"
#include "mcastd_world.h"
#include "sweep_seeds.h"

#define DEFAULT_SEEDS 200
#define NGROUPS 4
#define MAXCL 5
#define MAXH 256
#define STEPS 80

struct sh {
	int cl;
	struct imc_mcastd_member *m;
	int g;
	uint8_t js;
	bool qp;
	bool live;
	bool completed;
	bool leave_in_cb;
	enum imc_mcast_state st;
	unsigned events;
	enum imc_mcast_event_type last;
};

static struct {
	uint64_t seed;
	struct imc_rng rng;
	struct wclient cl[MAXCL];
	struct wclient *clp[MAXCL];
	int ncl;
	struct sh h[MAXH];
	int nh;
	struct imc_gid mgid[NGROUPS];
	struct imc_mcast_member *other[NGROUPS];
	int other_res[NGROUPS];
	bool daemon_up;
	bool trace;
	bool running;
} S;

static struct {
	uint64_t seeds, steps, joins, joined, failed, cb_leaves, deaths,
		 kills, audit_deletes, waiting;
} T;

static unsigned draw(unsigned n)
{
	return (unsigned)(imc_rng_next(&S.rng) % n);
}

static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!S.trace)
		return;
	printf("  %8.3f ms  ", (double)imc_loop_now(WW->f.loop) / 1e6);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void sh_cb(void *arg, struct imc_mcastd_member *m,
		  const struct imc_mcast_event *ev)
{
	struct sh *h = arg;

	if (WW->in_api)
		fail_msg("seed %" PRIu64 ": callback inside an API call",
			 S.seed);
	if (!h->live)
		fail_msg("seed %" PRIu64 ": callback after leave (handle %d)",
			 S.seed, (int)(h - S.h));
	assert_ptr_equal(h->m, m);
	if (h->events && h->last == IMC_MCAST_EV_ERROR)
		fail_msg("seed %" PRIu64 ": event after ERROR", S.seed);
	if (ev->type == IMC_MCAST_EV_REJOINING &&
	    h->st != IMC_MCAST_JOINED)
		fail_msg("seed %" PRIu64 ": REJOINING from %s", S.seed,
			 imc_mcast_state_str(h->st));
	trace("h%d c%d g%d js %x: %s %d", (int)(h - S.h), h->cl, h->g, h->js,
	      imc_mcast_event_str(ev->type), ev->status);
	h->events++;
	h->last = ev->type;
	h->st = imc_mcastd_member_state(m);
	if (ev->type == IMC_MCAST_EV_JOINED) {
		assert_true(imc_gid_equal(&ev->rec->mgid, &S.mgid[h->g]));
		assert_int_equal(ev->rec->join_state & h->js, h->js);
	}
	if ((ev->type == IMC_MCAST_EV_JOINED ||
	     ev->type == IMC_MCAST_EV_ERROR) && !h->completed) {
		h->completed = true;
		if (ev->type == IMC_MCAST_EV_JOINED)
			T.joined++;
		else
			T.failed++;
	}
	if (h->leave_in_cb) {
		T.cb_leaves++;
		h->live = false;
		imc_mcastd_leave(m);
	}
}

static void client_new(int i)
{
	memset(&S.cl[i], 0, sizeof(S.cl[i]));
	S.cl[i].uid = 1000 + (unsigned)i;
	w_client_new(&S.cl[i], S.seed * 16 + (uint64_t)i + T.deaths, true);
}

static void client_die(int i)
{
	for (int k = 0; k < S.nh; k++)
		if (S.h[k].live && S.h[k].cl == i)
			S.h[k].live = false;
	w_client_destroy(&S.cl[i]);
	T.deaths++;
}

static void step_join(void)
{
	static const uint8_t js[] = { IMC_JOIN_FULL, IMC_JOIN_FULL,
				      IMC_JOIN_NON, IMC_JOIN_FULL | IMC_JOIN_NON,
				      IMC_JOIN_SENDONLY_NON };
	struct imc_mcast_join_req req = { 0 };
	struct sh *h;
	int i = (int)draw((unsigned)S.ncl);

	if (S.nh == MAXH)
		return;
	h = &S.h[S.nh++];
	memset(h, 0, sizeof(*h));
	h->cl = i;
	h->g = (int)draw(NGROUPS);
	h->js = js[draw(IMC_ARRAY_SIZE(js))];
	h->qp = draw(2);
	h->leave_in_cb = draw(8) == 0;
	h->live = true;
	h->st = IMC_MCAST_PENDING;
	req.rec = fx_create_rec(&S.mgid[h->g], DLID, h->js);
	req.comp_mask = CREATE_MASK;
	req.join_state = h->js;
	req.qp = h->qp ? &S.cl[i] : NULL;
	trace("h%d c%d joins g%d js %x%s", S.nh - 1, i, h->g, h->js,
	      h->qp ? " qp" : "");
	WW->in_api = true;
	assert_int_equal(imc_mcastd_join(S.cl[i].c, NULL, &req, sh_cb, h,
					 &h->m), 0);
	WW->in_api = false;
	T.joins++;
}

static void step_leave(void)
{
	int live[MAXH], n = 0;
	struct sh *h;

	for (int k = 0; k < S.nh; k++)
		if (S.h[k].live)
			live[n++] = k;
	if (!n)
		return;
	h = &S.h[live[draw((unsigned)n)]];
	trace("h%d leaves", (int)(h - S.h));
	h->live = false;
	WW->in_api = true;
	imc_mcastd_leave(h->m);
	WW->in_api = false;
}

static void step(void)
{
	unsigned r = draw(100);

	T.steps++;
	if (r < 50) {
		step_join();
	} else if (r < 80) {
		step_leave();
	} else if (r < 90) {
		int i = (int)draw((unsigned)S.ncl);

		trace("c%d dies and comes back", i);
		client_die(i);
		client_new(i);
	} else if (r < 95 && S.daemon_up) {
		trace("daemon killed");
		daemon_kill();
		S.daemon_up = false;
		T.kills++;
	} else if (!S.daemon_up) {
		trace("daemon started");
		daemon_start();
		S.daemon_up = true;
	}
}

static void check_settled(void)
{
	for (int g = 0; g < NGROUPS; g++) {
		uint8_t want = 0;
		int have;

		for (int k = 0; k < S.nh; k++)
			if (S.h[k].live && S.h[k].g == g &&
			    S.h[k].st == IMC_MCAST_JOINED)
				want |= S.h[k].js;
		have = w_sa_js(&S.mgid[g], DLID);
		if (have != want)
			fail_msg("seed %" PRIu64 ": group %d: the SA holds "
				 "JoinState 0x%x for the port, the live handles "
				 "0x%x", S.seed, g, have, want);
	}
	for (int k = 0; k < S.nh; k++) {
		struct sh *h = &S.h[k];

		if (!h->live)
			continue;
		if (h->st == IMC_MCAST_WAITING) {
			struct imc_sa_group_info gi;

			if (h->js & IMC_JOIN_FULL)
				fail_msg("seed %" PRIu64 ": handle %d, a full "
					 "member, waits", S.seed, k);
			if (imc_sa_group_get(WW->f.sa, &S.mgid[h->g], &gi) == 0)
				fail_msg("seed %" PRIu64 ": handle %d waits for "
					 "group %d, which the SA has", S.seed, k,
					 h->g);
			T.waiting++;
			continue;
		}
		if (!h->completed)
			fail_msg("seed %" PRIu64 ": handle %d never completed",
				 S.seed, k);
		if (h->st != IMC_MCAST_JOINED && h->st != IMC_MCAST_FAILED)
			fail_msg("seed %" PRIu64 ": handle %d settled %s",
				 S.seed, k, imc_mcast_state_str(h->st));
	}
	for (int i = 0; i < S.ncl; i++) {
		struct imc_mcastd_stats st;
		size_t want = 0;

		for (int g = 0; g < NGROUPS; g++) {
			for (int k = 0; k < S.nh; k++) {
				struct sh *h = &S.h[k];

				if (h->live && h->cl == i && h->g == g &&
				    h->qp && h->st == IMC_MCAST_JOINED &&
				    (h->js & (IMC_JOIN_FULL | IMC_JOIN_NON))) {
					want++;
					break;
				}
			}
		}
		imc_mcastd_get_stats(S.cl[i].c, &st);
		if (st.attached != want)
			fail_msg("seed %" PRIu64 ": client %d has %zu QP "
				 "attachments, %zu expected", S.seed, i,
				 st.attached, want);
	}
}

static void on_other(void *arg, struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev)
{
	(void)m;
	*(int *)arg = ev->type == IMC_MCAST_EV_JOINED ? 1 : -1;
}

static void run_seed(uint64_t seed)
{
	char s[64];

	memset(&S.h, 0, sizeof(S.h));
	S.seed = seed;
	S.nh = 0;
	imc_rng_seed(&S.rng, seed);
	w_world_init();
	WW->scfg.grace = 300 * MS;
	/* Half the runs audit with the SM_Key (the old bits held through
	 * the grace period), half without (one-bit Deletes). */
	WW->scfg.sm_key = draw(2);
	for (int i = 0; i < MAXCL; i++)
		S.clp[i] = &S.cl[i];
	S.ncl = 3 + (int)draw(3);
	w_set_clients(S.clp, (size_t)S.ncl);
	for (int g = 0; g < NGROUPS; g++) {
		struct imc_mcast_join_req req = { 0 };

		snprintf(s, sizeof(s), "ff12:e001::%d", g + 1);
		S.mgid[g] = fx_mgid(s);
		S.other[g] = NULL;
		if (g == NGROUPS - 1)
			continue;   /* the last one lives on clients only */
		req.rec = fx_create_rec(&S.mgid[g], OLID, IMC_JOIN_FULL);
		req.comp_mask = CREATE_MASK;
		req.join_state = IMC_JOIN_FULL;
		assert_int_equal(imc_mcast_join(WW->ports[1].t, &req,
						 on_other, &S.other_res[g],
						 &S.other[g]), 0);
	}
	daemon_start();
	S.daemon_up = true;
	for (int i = 0; i < S.ncl; i++)
		client_new(i);
	for (int n = 0; n < STEPS; n++) {
		step();
		w_run_for(draw(30) * MS + draw(1000) * IMC_NSEC_PER_USEC);
	}
	if (!S.daemon_up) {
		trace("daemon started");
		daemon_start();
		S.daemon_up = true;
	}
	w_run_for(3000 * MS);
	check_settled();
	for (int k = 0; k < S.nh; k++) {
		if (!S.h[k].live)
			continue;
		S.h[k].live = false;
		WW->in_api = true;
		imc_mcastd_leave(S.h[k].m);
		WW->in_api = false;
	}
	w_run_for(200 * MS);
	if (w_sa_memberships(DLID))
		fail_msg("seed %" PRIu64 ": %u memberships of the port left at "
			 "the SA after every handle left", S.seed,
			 w_sa_memberships(DLID));
	{
		struct imc_mcast_stats st;
		struct imc_mcastd_server_stats ss;

		imc_mcast_get_stats(WW->ports[0].t, &st);
		assert_int_equal(st.members, 0);
		imc_mcastd_server_get_stats(WW->srv, &ss);
		assert_int_equal(ss.conns, (size_t)S.ncl);
		assert_int_equal(ss.members, 0);
	}
	for (int g = 0; g < NGROUPS; g++) {
		assert_true(!S.other[g] || S.other_res[g] == 1);
		imc_mcast_leave(S.other[g]);
	}
	for (int i = 0; i < S.ncl; i++)
		w_client_destroy(&S.cl[i]);
	w_run_for(10 * MS);
	T.audit_deletes += WW->audit_deletes;
	w_world_fini();
	T.seeds++;
}

static struct sweep_seeds seeds = { .first = 1, .count = DEFAULT_SEEDS };

static int sweep_teardown(void **state)
{
	(void)state;
	if (S.running)
		printf("mcastd_sweep: seed %" PRIu64 " failed\n"
		       "  replay: IMC_SEED=%" PRIu64
		       " ctest --test-dir build -R mcastd_sweep --output-on-failure\n"
		       "      or: build/tests/test_mcastd_sweep --seed %" PRIu64
		       " --trace\n", S.seed, S.seed, S.seed);
	return 0;
}

static void test_sweep(void **state)
{
	(void)state;
	for (uint64_t i = 0; i < (seeds.one ? 1 : seeds.count); i++) {
		S.running = true;
		run_seed(seeds.one ? seeds.seed : seeds.first + i);
		S.running = false;
	}
	printf("mcastd_sweep: %" PRIu64 " seeds from %" PRIu64 ": %" PRIu64
	       " steps, %" PRIu64 " joins (%" PRIu64 " JOINED, %" PRIu64
	       " ERROR first), %" PRIu64 " leaves from callbacks, %" PRIu64
	       " client deaths, %" PRIu64 " daemon kills, %" PRIu64
	       " audit Deletes, %" PRIu64 " handles waiting at the end\n",
	       T.seeds,
	       seeds.one ? seeds.seed : seeds.first, T.steps, T.joins,
	       T.joined, T.failed, T.cb_leaves, T.deaths, T.kills,
	       T.audit_deletes, T.waiting);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: test_mcastd_sweep [--seed N | --first N --seeds N] [--trace]\n"
		"  env: IMC_SEED, IMC_SEED_FIRST, IMC_SEEDS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sweep, sweep_teardown),
	};

	if (!sweep_seeds_env(&seeds))
		usage();
	for (int i = 1; i < argc; i++) {
		int taken = sweep_seeds_arg(&seeds, argc, argv, &i);

		if (taken < 0)
			usage();
		if (taken > 0)
			continue;
		if (!strcmp(argv[i], "--trace"))
			S.trace = true;
		else
			usage();
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
