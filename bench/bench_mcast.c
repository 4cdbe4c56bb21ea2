/* The join tracker's local join and leave: a join whose group already
 * holds its bits completes from the loop without a MAD; its leave sends
 * nothing either. Cost per join+leave with 1,000, 100,000 and 1,000,000
 * groups on one port, and memory per group and per member.
 *
 * Usage: bench_mcast [OPS [BIG]]   (defaults 1000000 and 1000000)
 *
 * Each group is made by one holder member (FullMember, a QP attached)
 * through an SA client whose fake transport answers every Set at once
 * from the loop. Then, per operation: imc_mcast_join() of a random group
 * (FullMember, the holder's QP: the attachment is shared), the loop runs
 * (the work timer reconciles the group and calls the member back),
 * imc_mcast_leave(), the loop runs again. Random groups defeat the caches
 * the way a real port's traffic would: what the ratio shows is the cost of
 * the lookups as the table grows, not of a hot group.
 *
 * Figures: join+leave pairs per second (wall), ns per pair (CPU time of
 * the process), and the ratio of the largest table's ns to the smallest's,
 * all in one run. Memory: heap bytes (mallinfo2 uordblks) of the groups
 * with their holders, then of one more member per group: bytes per member,
 * and per group (with its hash slot and its QP attachment). CLOCK_MONOTONIC
 * and the CPU clock only measure; the tracker runs on a virtual loop.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcast.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "util/bytes.h"

#define BATCH 4096

static struct imc_loop *loop;
static struct imc_sa_client *client;

/* ---- a fake SA that answers every request at once, from the loop ---- */

static uint8_t (*queue)[IMC_MAD_SIZE];
static size_t qlen, qcap;
static struct imc_timer answer_timer;
static uint16_t next_mlid = 0xC000;

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_mcast: %s: %s\n", what, strerror(-err));
	exit(1);
}

static int fake_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct imc_sa_mad m;
	struct imc_mcmr r;

	if (imc_sa_mad_unpack(&m, mad, len) < 0 ||
	    imc_mcmr_unpack(&r, m.data, sizeof(m.data)) < 0)
		return -EINVAL;
	m.mad.method |= UMAD_METHOD_RESP_MASK;
	if (m.mad.method == (UMAD_METHOD_SET | UMAD_METHOD_RESP_MASK)) {
		m.mad.method = UMAD_METHOD_GET_RESP;
		r.mlid = next_mlid++;
		if (next_mlid == 0xFFFF)
			next_mlid = 0xC000;
		r.mtu = 4;
		r.rate = 3;
		r.mtu_sel = r.rate_sel = r.life_sel = UMAD_SA_SELECTOR_EXACTLY;
	}
	m.sa.attr_offset = IMC_MCMR_SIZE / 8;
	if (imc_mcmr_pack(&r, m.data, sizeof(m.data)) < 0)
		return -EINVAL;
	if (qlen == qcap) {
		qcap = qcap ? qcap * 2 : 1024;
		queue = realloc(queue, qcap * sizeof(*queue));
		if (!queue)
			die("realloc", -ENOMEM);
	}
	imc_sa_mad_pack(&m, queue[qlen++], IMC_MAD_SIZE);
	if (!imc_timer_armed(&answer_timer))
		imc_timer_arm(loop, &answer_timer, imc_loop_now(loop));
	return 0;
}

static void on_answer_timer(struct imc_timer *t)
{
	size_t n = qlen;
	uint8_t (*batch)[IMC_MAD_SIZE] = malloc(n * sizeof(*batch));

	if (!batch)
		die("malloc", -ENOMEM);
	memcpy(batch, queue, n * sizeof(*batch));
	qlen = 0;
	for (size_t i = 0; i < n; i++)
		imc_sa_client_recv(client, batch[i], IMC_MAD_SIZE);
	free(batch);
}

/* ---- members ---- */

static int the_qp;
static uint64_t joined, failed;

static void on_event(void *arg, struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev)
{
	if (ev->type == IMC_MCAST_EV_JOINED)
		joined++;
	else
		failed++;
}

static struct imc_gid mgid_of(uint64_t i)
{
	struct imc_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xff;
	g.raw[1] = 0x12;
	g.raw[2] = 0x12;
	g.raw[3] = 0x34;
	imc_put64(g.raw + 8, i + 1);
	return g;
}

static struct imc_mcast_join_req req_of(uint64_t i)
{
	struct imc_mcast_join_req r;

	memset(&r, 0, sizeof(r));
	r.rec.mgid = mgid_of(i);
	r.rec.qkey = 0x1234;
	r.rec.pkey = 0xffff;
	r.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
		      UMAD_SA_MCM_COMP_MASK_PORT_GID |
		      UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_TCLASS |
		      UMAD_SA_MCM_COMP_MASK_PKEY | UMAD_SA_MCM_COMP_MASK_SL |
		      UMAD_SA_MCM_COMP_MASK_FLOW_LABEL |
		      UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	r.join_state = IMC_JOIN_FULL;
	r.qp = &the_qp;
	return r;
}

static void join_or_die(struct imc_mcast *t, uint64_t i,
			struct imc_mcast_member **out)
{
	struct imc_mcast_join_req r = req_of(i);
	int rc = imc_mcast_join(t, &r, on_event, NULL, out);

	if (rc < 0)
		die("imc_mcast_join", rc);
}

static void run(void)
{
	int rc = imc_loop_run(loop);

	if (rc < 0)
		die("imc_loop_run", rc);
}

static double clock_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t heap(void)
{
	return mallinfo2().uordblks;
}

static int attach_op(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	return 0;
}

struct result {
	size_t groups;
	double pairs_per_s, ns_per_pair;       /* working set */
	double rnd_pairs_per_s, rnd_ns_per_pair; /* uniform over the table */
	double group_bytes, member_bytes;
};

#define WORKING_SET 1000
#define ROUNDS 5

/* ops join+leave pairs on groups drawn by pick(); CPU ns per pair and
 * pairs per second (wall). */
static void pairs(struct imc_mcast *t, uint64_t ops, struct imc_rng *rng,
		  const uint64_t *ws, size_t groups, double *ns, double *rate)
{
	struct imc_mcast_member *m;
	double w0, c0;

	joined = 0;
	w0 = clock_of(CLOCK_MONOTONIC);
	c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t g = ws ? ws[imc_rng_below(rng, WORKING_SET)] :
				  imc_rng_below(rng, groups);

		join_or_die(t, g, &m);
		run();
		imc_mcast_leave(m);
		run();
	}
	*ns = (clock_of(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e9 / (double)ops;
	*rate = (double)ops / (clock_of(CLOCK_MONOTONIC) - w0);
	if (joined != ops || failed)
		die("local joins failed", -EPROTO);
}

struct table {
	struct imc_mcast *t;
	struct imc_mcast_member **holders;
	size_t groups;
	uint64_t ws[WORKING_SET];
};

/* groups groups, one holder each; memory per group and per member. */
static void table_up(struct table *tb, size_t groups, struct result *res)
{
	struct imc_mcast_config cfg;
	struct imc_mcast_ops ops_v = { attach_op, attach_op, NULL };
	struct imc_mcast_member **extra;
	struct imc_mcast_stats st;
	struct imc_rng rng;
	size_t h0, h1, h2;

	imc_mcast_config_init(&cfg);
	imc_gid_set(&cfg.port_gid, 0xfe80000000000000ULL, 0x1002);
	tb->groups = groups;
	tb->holders = malloc(groups * sizeof(*tb->holders));
	extra = malloc(groups * sizeof(*extra));
	if (!tb->holders || !extra)
		die("malloc", -ENOMEM);
	run();
	h0 = heap();
	if (imc_mcast_create(loop, client, &cfg, &ops_v, &tb->t) < 0)
		die("imc_mcast_create", -ENOMEM);
	for (size_t i = 0; i < groups; i += BATCH) {
		for (size_t k = i; k < groups && k < i + BATCH; k++)
			join_or_die(tb->t, k, &tb->holders[k]);
		run();
	}
	h1 = heap();
	for (size_t i = 0; i < groups; i++)
		join_or_die(tb->t, i, &extra[i]);
	run();
	h2 = heap();
	for (size_t i = 0; i < groups; i++)
		imc_mcast_leave(extra[i]);
	run();
	free(extra);
	imc_mcast_get_stats(tb->t, &st);
	if (st.groups != groups || st.joins_local != groups || failed)
		die("set-up", -EPROTO);
	res->groups = groups;
	res->member_bytes = (double)(h2 - h1) / (double)groups;
	res->group_bytes = (double)(h1 - h0) / (double)groups -
			   res->member_bytes;
	res->ns_per_pair = res->rnd_ns_per_pair = 1e30;
	/* A working set of 1,000 groups spread over the whole table (all
	 * of them in the smallest): what grows with the table is then the
	 * cost of its structures, not of the memory hierarchy. */
	imc_rng_seed(&rng, 42);
	for (size_t i = 0; i < WORKING_SET; i++)
		tb->ws[i] = groups == WORKING_SET ? i :
						    imc_rng_below(&rng, groups);
}

static void table_down(struct table *tb)
{
	struct imc_mcast_stats st;

	imc_mcast_get_stats(tb->t, &st);
	if (st.mads_sent != tb->groups)
		die("local joins sent MADs", -EPROTO);
	for (size_t i = 0; i < tb->groups; i++)
		imc_mcast_leave(tb->holders[i]);
	run();
	imc_mcast_destroy(tb->t);
	free(tb->holders);
}

int main(int argc, char **argv)
{
	uint64_t ops = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	size_t big = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000;
	size_t sizes[3] = { 1000, 100000, big };
	struct imc_sa_client_config cc;
	struct imc_sa_transport tr = { fake_send, NULL };
	struct result r[3];
	struct table tb[3];
	struct imc_rng rng;
	int rc;

	if (ops < ROUNDS || big < 1000) {
		fprintf(stderr, "usage: bench_mcast [OPS [BIG]] (BIG >= 1000)\n");
		return 2;
	}
	rc = imc_loop_create_virtual(0, &loop);
	if (rc < 0)
		die("imc_loop_create_virtual", rc);
	imc_timer_init(&answer_timer, on_answer_timer);
	imc_sa_client_config_init(&cc);
	cc.window = 4096;
	rc = imc_sa_client_create(loop, &tr, &cc, &client);
	if (rc < 0)
		die("imc_sa_client_create", rc);
	printf("local join+leave (no MAD), %llu pairs per table size and "
	       "access pattern, best of %d rounds\n", (unsigned long long)ops,
	       ROUNDS);
	printf("%9s | %-24s | %-24s | %11s %12s\n", "", "1,000-group working set",
	       "uniform over all groups", "", "");
	printf("%9s | %12s %11s | %12s %11s | %11s %12s\n", "groups",
	       "pairs/s", "CPU ns/pair", "pairs/s", "CPU ns/pair",
	       "bytes/group", "bytes/member");
	for (int i = 0; i < 3; i++)
		table_up(&tb[i], sizes[i], &r[i]);
	/* Rounds interleave the sizes, so that a busy moment of the
	 * machine hits them all; each keeps its best round. */
	imc_rng_seed(&rng, 7);
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < 3; i++) {
			double ns, rate;

			pairs(tb[i].t, ops / ROUNDS, &rng, tb[i].ws, sizes[i],
			      &ns, &rate);
			if (ns < r[i].ns_per_pair) {
				r[i].ns_per_pair = ns;
				r[i].pairs_per_s = rate;
			}
			pairs(tb[i].t, ops / ROUNDS, &rng, NULL, sizes[i],
			      &ns, &rate);
			if (ns < r[i].rnd_ns_per_pair) {
				r[i].rnd_ns_per_pair = ns;
				r[i].rnd_pairs_per_s = rate;
			}
		}
	}
	for (int i = 0; i < 3; i++) {
		table_down(&tb[i]);
		printf("%9zu | %12.0f %11.1f | %12.0f %11.1f | %11.1f %12.1f\n",
		       r[i].groups, r[i].pairs_per_s, r[i].ns_per_pair,
		       r[i].rnd_pairs_per_s, r[i].rnd_ns_per_pair,
		       r[i].group_bytes, r[i].member_bytes);
	}
	printf("cost ratio %zu/%zu groups: working set %.2f (bound 1.5), "
	       "uniform %.2f\n", sizes[2], sizes[0],
	       r[2].ns_per_pair / r[0].ns_per_pair,
	       r[2].rnd_ns_per_pair / r[0].rnd_ns_per_pair);
	imc_sa_client_destroy(client);
	imc_timer_cancel(loop, &answer_timer);
	imc_loop_destroy(loop);
	free(queue);
	return 0;
}
