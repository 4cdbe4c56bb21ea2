/* SMPs per second through the embedded fabric's SMAs: the directed-route
 * discovery an SM makes of a fat tree, in process (fabric_mad.h).
 *
 * Usage: bench_smp [PODS...]   (default 2 18)
 *
 * Each size is the three-level fat tree of bench_bringup
 * ("fat-tree:pods=P,leaves=24,hosts=24,aggs=12,spines=144": 2 pods give
 * 1,152 HCAs and 84 switches, 18 pods 10,368 HCAs and 792 switches),
 * with an external SM (the fabric's own steps aside). An agent on the SM
 * port discovers it breadth first as OpenSM's first sweep does: for each
 * node found, a NodeInfo through every port of a switch (the SMP that
 * finds the neighbour), then its NodeDescription and the PortInfo of
 * each of its ports. One BFS level is sent at once, so that thousands of
 * SMPs are in flight, and the loop runs until every answer is in.
 *
 * Printed: SMPs sent and answered, cable crossings, the loop's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and wall time, SMPs/s (answered requests per
 * CPU second, and per wall second), and the virtual
 * time the discovery took at 100 ns per cable. Nodes found are checked
 * against the topology's counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/fabric.h"
#include "ibmcast/fabric_mad.h"
#include "ibmcast/loop.h"
#include "ibmcast/topo.h"

struct found {
	uint64_t guid;
	uint8_t type, nports;
	uint8_t hops;
	uint8_t path[64];
};

struct req {
	uint32_t from;            /* index in found */
	uint8_t port;             /* NodeInfo out of this port; 0 other */
	uint16_t attr;
};

struct sm {
	struct imc_fabric_mad_agent *a;
	struct found *n;
	size_t nn, cap;
	uint64_t *known;          /* sorted GUIDs */
	size_t nknown;
	struct req *rq;
	size_t nrq, caprq;
	/* NodeInfo answers of the level: (guid, index of the answer) */
	struct found *fresh;
	size_t nfresh, capfresh;
	uint64_t answered, lost;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall and CPU seconds spent in the loop, added up over the levels. */
struct spent {
	double wall, cpu;
};

static void loop_timed(struct imc_loop *loop, struct spent *sp)
{
	double w = clock_s(CLOCK_MONOTONIC);
	double c = clock_s(CLOCK_THREAD_CPUTIME_ID);

	imc_loop_run(loop);
	sp->wall += clock_s(CLOCK_MONOTONIC) - w;
	sp->cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - c;
}

static uint64_t g64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need * 2;
	p = realloc(p, *cap * size);
	if (!p) {
		perror("realloc");
		exit(1);
	}
	return p;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_found(const void *a, const void *b)
{
	return cmp64(&((const struct found *)a)->guid,
		     &((const struct found *)b)->guid);
}

static void recv_cb(struct imc_fabric_mad_agent *a,
		    const struct imc_fabric_mad_addr *from, const uint8_t *mad,
		    size_t len, void *ctx)
{
	struct sm *s = ctx;
	uint64_t tid = g64(mad + 8);
	const struct req *r;
	const struct found *f;
	struct found *e;

	(void)a;
	(void)from;
	(void)len;
	if (tid >= s->nrq || (mad[4] & 0x7f) != 0 || mad[5] != 0)
		return;
	s->answered++;
	r = &s->rq[tid];
	if (r->attr != 0x11)
		return;
	f = &s->n[r->from];
	s->fresh = grow(s->fresh, &s->capfresh, s->nfresh + 1,
			sizeof(*s->fresh));
	e = &s->fresh[s->nfresh++];
	e->guid = g64(mad + 64 + 12);
	e->type = mad[64 + 2];
	e->nports = mad[64 + 3];
	e->hops = (uint8_t)(f->hops + (r->port ? 1 : 0));
	memcpy(e->path, f->path, f->hops);
	if (r->port)
		e->path[f->hops] = r->port;
}

static void send_smp(struct sm *s, const struct found *f, uint32_t from,
		     uint8_t port, uint16_t attr, uint32_t mod)
{
	struct imc_fabric_mad_addr to = { .dlid = 0xffff };
	uint8_t mad[256] = { 1, 0x81, 1, 1 };
	unsigned hops = f->hops + (port ? 1 : 0);
	uint64_t tid = s->nrq;

	s->rq = grow(s->rq, &s->caprq, s->nrq + 1, sizeof(*s->rq));
	s->rq[s->nrq++] = (struct req){ from, port, attr };
	mad[7] = (uint8_t)hops;
	for (int i = 0; i < 8; i++)
		mad[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	mad[20] = (uint8_t)(mod >> 24);
	mad[21] = (uint8_t)(mod >> 16);
	mad[22] = (uint8_t)(mod >> 8);
	mad[23] = (uint8_t)mod;
	memset(mad + 32, 0xff, 4);
	memcpy(mad + 129, f->path, f->hops);
	if (port)
		mad[129 + f->hops] = port;
	if (imc_fabric_mad_send(s->a, &to, mad, sizeof(mad)))
		s->lost++;
}

/* Keeps the NodeInfo answers of the level that name a node not seen
 * before (the first path found), in GUID order. */
static size_t take_fresh(struct sm *s)
{
	size_t added = 0, start = s->nn;

	qsort(s->fresh, s->nfresh, sizeof(*s->fresh), cmp_found);
	for (size_t i = 0; i < s->nfresh; i++) {
		const struct found *e = &s->fresh[i];

		if (i && s->fresh[i - 1].guid == e->guid)
			continue;
		if (bsearch(&e->guid, s->known, s->nknown, sizeof(uint64_t),
			    cmp64))
			continue;
		s->n = grow(s->n, &s->cap, s->nn + 1, sizeof(*s->n));
		s->n[s->nn++] = *e;
		added++;
	}
	s->known = realloc(s->known, (s->nknown + added) * sizeof(uint64_t) +
					     8);
	for (size_t i = start; i < s->nn; i++)
		s->known[s->nknown++] = s->n[i].guid;
	qsort(s->known, s->nknown, sizeof(uint64_t), cmp64);
	s->nfresh = 0;
	return added;
}

/* Level 0: the SM's own node, by a 0-hop NodeInfo. */
static int find_self(struct sm *s, struct imc_loop *loop, struct spent *sp)
{
	struct found self = { 0 };

	s->n = grow(s->n, &s->cap, 1, sizeof(*s->n));
	s->n[0] = self;
	s->nn = 1;
	send_smp(s, &self, 0, 0, 0x11, 0);
	loop_timed(loop, sp);
	if (!s->nfresh) {
		fprintf(stderr, "no answer from the SM's own node\n");
		return 1;
	}
	s->n[0] = s->fresh[0];
	s->known = malloc(8);
	s->known[0] = s->n[0].guid;
	s->nknown = 1;
	s->nfresh = 0;
	return 0;
}

/* The SMPs of one BFS level: NodeDescription and PortInfos of every
 * node of [lo, hi), and the NodeInfos that find their neighbours. */
static void send_level(struct sm *s, size_t lo, size_t hi, unsigned sm_port)
{
	for (size_t i = lo; i < hi; i++) {
		const struct found *e = &s->n[i];
		bool sw = e->type == 2;

		send_smp(s, e, (uint32_t)i, 0, 0x10, 0);
		if (!sw) {
			send_smp(s, e, (uint32_t)i, 0, 0x15, 0);
			if (i == 0)
				send_smp(s, e, 0, (uint8_t)sm_port, 0x11, 0);
			continue;
		}
		for (unsigned p = 0; p <= e->nports; p++)
			send_smp(s, e, (uint32_t)i, 0, 0x15, p);
		for (unsigned p = 1; p <= e->nports; p++)
			send_smp(s, e, (uint32_t)i, (uint8_t)p, 0x11, 0);
	}
}

static void report(const struct sm *s, struct imc_fabric *f,
		   struct imc_loop *loop, unsigned pods, uint32_t hcas,
		   uint32_t switches, unsigned levels, const struct spent *sp)
{
	struct imc_fabric_mad_stats st;
	uint32_t fh = 0, fs = 0;

	imc_fabric_mad_stats(f, &st);
	for (size_t i = 0; i < s->nn; i++) {
		if (s->n[i].type == 2)
			fs++;
		else
			fh++;
	}
	printf("%u pods: %u HCAs %u switches; found %u HCAs %u switches in "
	       "%u levels%s\n",
	       pods, hcas, switches, fh, fs, levels,
	       fh == hcas && fs == switches ? "" : "  MISMATCH");
	printf("  SMPs sent %llu answered %llu (agent: %llu), dropped %llu, "
	       "cable crossings %llu\n",
	       (unsigned long long)st.smps_sent,
	       (unsigned long long)st.smps_answered,
	       (unsigned long long)s->answered,
	       (unsigned long long)st.smps_dropped,
	       (unsigned long long)st.smp_hops);
	printf("  CPU %.3f s: %.0f SMPs/s answered, %.0f cable crossings/s "
	       "(wall %.3f s: %.0f SMPs/s); virtual %.1f us\n",
	       sp->cpu, (double)st.smps_answered / sp->cpu,
	       (double)st.smp_hops / sp->cpu, sp->wall,
	       (double)st.smps_answered / sp->wall,
	       (double)imc_loop_now(loop) / 1000.0);
}

static int run(unsigned pods)
{
	char spec[128], err[256];
	struct imc_fabric_config cfg;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct sm s = { 0 };
	struct spent sp = { 0, 0 };
	uint32_t hcas, switches;
	size_t lo = 0;
	unsigned levels = 0;

	snprintf(spec, sizeof(spec),
		 "fat-tree:pods=%u,leaves=24,hosts=24,aggs=12,spines=144",
		 pods);
	if (imc_topo_generate(spec, &t, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	imc_topo_counts(t, &hcas, &switches, NULL);
	imc_loop_create_virtual(0, &loop);
	imc_fabric_config_default(&cfg);
	cfg.external_sm = true;
	if (imc_fabric_create(t, loop, &cfg, &f) || imc_fabric_bring_up(f) ||
	    imc_fabric_mad_attach(f, t->sm_node, t->sm_port, recv_cb, &s,
				  &s.a)) {
		fprintf(stderr, "fabric setup failed\n");
		return 1;
	}
	imc_loop_run(loop);
	if (find_self(&s, loop, &sp))
		return 1;
	while (lo < s.nn) {
		size_t hi = s.nn;

		send_level(&s, lo, hi, t->sm_port);
		loop_timed(loop, &sp);
		take_fresh(&s);
		lo = hi;
		levels++;
	}
	report(&s, f, loop, pods, hcas, switches, levels, &sp);
	imc_fabric_mad_detach(s.a);
	imc_fabric_destroy(f);
	imc_loop_destroy(loop);
	imc_topo_destroy(t);
	free(s.n);
	free(s.known);
	free(s.rq);
	free(s.fresh);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned def[] = { 2, 18 };
	int rc = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			rc |= run((unsigned)strtoul(argv[i], NULL, 10));
		return rc;
	}
	for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
		rc |= run(def[i]);
	return rc;
}
