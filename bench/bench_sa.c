/* The SA engine's cost per request, in process.
 *
 * Usage: bench_sa [GROUPS [BIG]]   (defaults 100000 and 1000000)
 *
 * Requests go through the whole engine path: imc_sa_recv() copies them
 * into the service FIFO, a loop round serves them (decode, directory
 * lookups, hash probes, MLID pool, answer encoding) and the answer goes
 * to the send callback, which checks its status. MADs are fed in batches
 * of 4096 at service rate 0. The directory is an array indexed by LID
 * and GUID; the MFT callback only counts. MLIDs are shared once the
 * 16,383 of IBA run out (cfg.mlid_share), so that GROUPS groups can live.
 *
 * Figures:
 *  creates      Set with MGID given, a new group each (GROUPS of them),
 *               on fresh heap memory: every new page is a page fault
 *  creates@N    GROUPS/10 more creates with GROUPS groups live, on heap
 *               memory a first create/delete round left to malloc (the
 *               engine's own cost), then deletes@N of the same groups
 *  re-joins@N   Set by a member already in the group (the JoinState OR of
 *               a client rejoining after a reregister), random groups
 *  get@K        Get by MGID of a random group with K = 1k, 10k, 100k and
 *               BIG groups live: one hash probe whatever K; what grows is
 *               cache and TLB misses once the groups outgrow the caches
 * Each line: operations per second (wall clock) and CPU ns per operation
 * (CLOCK_PROCESS_CPUTIME_ID). CLOCK_MONOTONIC and the CPU clock only
 * measure; the SA runs on a virtual loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "util/bytes.h"

#define NPORTS 1024
#define BATCH 4096
#define PREFIX 0xfe80000000000000ULL
#define CREATE_MASK 0x130c7ULL
#define JOIN_MASK 0x10003ULL

static struct imc_sa_port ports[NPORTS + 1];
static uint16_t pkey = 0xffff;
static uint64_t answers, failures, mft_calls;

static double clock_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_sa: %s failed (%d)\n", what, err);
	exit(1);
}

static int by_gid(void *ctx, const struct imc_gid *gid,
		  struct imc_sa_port *out)
{
	uint64_t guid = imc_gid_guid(gid);

	if (imc_gid_prefix(gid) != PREFIX || (guid & ~0xffffULL) != 0x100000 ||
	    (guid & 0xffff) == 0 || (guid & 0xffff) > NPORTS)
		return -ENOENT;
	*out = ports[guid & 0xffff];
	return 0;
}

static int by_lid(void *ctx, uint16_t lid, struct imc_sa_port *out)
{
	if (lid == 0 || lid > NPORTS)
		return -ENOENT;
	*out = ports[lid];
	return 0;
}

static void on_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	answers++;
	if (imc_get16(mad + 4))
		failures++;
}

static int on_mcast(void *ctx, uint16_t mlid,
		    const struct imc_sa_member_change *c)
{
	mft_calls++;
	return 0;
}

struct run {
	struct imc_loop *loop;
	struct imc_sa *sa;
	uint8_t tmpl[IMC_MAD_SIZE];
	uint64_t tid;
};

static void setup(struct run *r)
{
	static const struct imc_sa_ops ops = {
		.port_by_gid = by_gid,
		.port_by_lid = by_lid,
		.send = on_send,
		.mcast_members = on_mcast,
	};
	struct imc_sa_config cfg;
	struct imc_sa_mad m;
	int err;

	for (uint16_t i = 1; i <= NPORTS; i++) {
		imc_gid_set(&ports[i].gid, PREFIX, 0x100000 | i);
		ports[i].lid = i;
		ports[i].mtu = 4;
		ports[i].rate = 3;
		ports[i].node = i;
		ports[i].port_num = 1;
		ports[i].pkeys = &pkey;
		ports[i].n_pkeys = 1;
	}
	err = imc_loop_create_virtual(0, &r->loop);
	if (err)
		die("loop", err);
	imc_sa_config_init(&cfg);
	cfg.mlid_share = true;
	cfg.queue_max = BATCH;
	cfg.hash_seed = 0x5eed;
	err = imc_sa_create(r->loop, &cfg, &ops, NULL, &r->sa);
	if (err)
		die("imc_sa_create", err);
	memset(&m, 0, sizeof(m));
	m.mad.base_version = 1;
	m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m.mad.class_version = 2;
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	imc_sa_mad_pack(&m, r->tmpl, sizeof(r->tmpl));
	r->tid = 1;
}

static void teardown(struct run *r)
{
	imc_sa_destroy(r->sa);
	if (imc_loop_destroy(r->loop))
		die("timers left", 0);
}

/* The group of index i: ff12:1234::i, created by port i % NPORTS + 1. */
static struct imc_gid mgid_of(uint64_t i)
{
	struct imc_gid g;

	imc_gid_set(&g, 0xff12123400000000ULL, i);
	return g;
}

static uint16_t port_of(uint64_t i)
{
	return (uint16_t)(i % NPORTS + 1);
}

static void request(struct run *r, uint8_t method, uint64_t mask,
		    uint64_t group, uint8_t js, uint64_t sm_key)
{
	struct imc_sa_src src;
	uint8_t mad[IMC_MAD_SIZE];
	struct imc_mcmr rec;
	uint16_t lid = port_of(group);
	int err;

	memcpy(mad, r->tmpl, sizeof(mad));
	mad[3] = method;
	imc_put64(mad + 8, r->tid++);
	imc_put64(mad + 36, sm_key);
	imc_put64(mad + 48, mask);
	memset(&rec, 0, sizeof(rec));
	rec.mgid = mgid_of(group);
	rec.port_gid = ports[lid].gid;
	rec.qkey = 0x80010000;
	rec.pkey = 0xffff;
	rec.join_state = js;
	imc_mcmr_pack(&rec, mad + IMC_SA_DATA_OFFSET, IMC_MCMR_SIZE);
	memset(&src, 0, sizeof(src));
	src.slid = lid;
	src.sqpn = 1;
	src.pkey = 0xffff;
	err = imc_sa_recv(r->sa, &src, mad, sizeof(mad));
	if (err)
		die("imc_sa_recv", err);
}

static void serve(struct run *r)
{
	int err = imc_loop_run_until(r->loop, imc_loop_now(r->loop));

	if (err)
		die("loop run", err);
}

struct figure {
	double wall, cpu;
	uint64_t ops;
};

static void start(struct figure *f)
{
	f->wall = clock_of(CLOCK_MONOTONIC);
	f->cpu = clock_of(CLOCK_PROCESS_CPUTIME_ID);
	f->ops = answers;
	failures = 0;
}

static void report(const char *name, struct figure *f)
{
	double wall = clock_of(CLOCK_MONOTONIC) - f->wall;
	double cpu = clock_of(CLOCK_PROCESS_CPUTIME_ID) - f->cpu;
	uint64_t ops = answers - f->ops;

	printf("%-14s %10llu ops %12.0f ops/s %8.1f CPU ns/op%s\n", name,
	       (unsigned long long)ops, ops / wall, cpu * 1e9 / ops,
	       failures ? "  (FAILED ANSWERS)" : "");
	if (failures)
		exit(1);
}

static void creates(struct run *r, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to;) {
		for (int b = 0; b < BATCH && i < to; b++, i++)
			request(r, UMAD_METHOD_SET, CREATE_MASK, i, 1, 0);
		serve(r);
	}
}

static void deletes(struct run *r, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to;) {
		for (int b = 0; b < BATCH && i < to; b++, i++)
			request(r, UMAD_SA_METHOD_DELETE, JOIN_MASK, i, 1, 0);
		serve(r);
	}
}

static void rejoins(struct run *r, struct imc_rng *rng, uint64_t groups,
		    uint64_t n)
{
	for (uint64_t k = 0; k < n;) {
		for (int b = 0; b < BATCH && k < n; b++, k++)
			request(r, UMAD_METHOD_SET, JOIN_MASK,
				imc_rng_below(rng, groups), 1, 0);
		serve(r);
	}
}

static void gets(struct run *r, struct imc_rng *rng, uint64_t groups,
		 uint64_t n)
{
	for (uint64_t k = 0; k < n;) {
		for (int b = 0; b < BATCH && k < n; b++, k++)
			request(r, UMAD_METHOD_GET, 1,
				imc_rng_below(rng, groups), 0, 0);
		serve(r);
	}
}

int main(int argc, char **argv)
{
	uint64_t groups = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000;
	uint64_t big = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000;
	struct imc_sa_stats st;
	struct imc_rng rng;
	struct figure f;
	struct run r;
	char name[32];

	if (groups < 1000 || big < 1000) {
		fprintf(stderr, "usage: bench_sa [GROUPS [BIG]], >= 1000\n");
		return 2;
	}
	imc_rng_seed(&rng, 1);
	setup(&r);
	start(&f);
	creates(&r, 0, groups);
	report("creates", &f);
	/* one untimed round so that the timed one reuses freed memory */
	creates(&r, groups, groups + groups / 10);
	deletes(&r, groups, groups + groups / 10);
	snprintf(name, sizeof(name), "creates@%llu",
		 (unsigned long long)groups);
	start(&f);
	creates(&r, groups, groups + groups / 10);
	report(name, &f);
	snprintf(name, sizeof(name), "deletes@%llu",
		 (unsigned long long)groups);
	start(&f);
	deletes(&r, groups, groups + groups / 10);
	report(name, &f);
	snprintf(name, sizeof(name), "re-joins@%llu",
		 (unsigned long long)groups);
	start(&f);
	rejoins(&r, &rng, groups, 1000000);
	report(name, &f);
	imc_sa_get_stats(r.sa, &st);
	printf("groups %u members %llu MLIDs %u/%u MFT calls %llu\n",
	       st.groups, (unsigned long long)st.members, st.mlids_in_use,
	       st.mlids_total, (unsigned long long)mft_calls);
	teardown(&r);

	/* lookups: the same Get mix against 1k .. BIG groups */
	for (uint64_t n = 1000;; n *= 10) {
		if (n > big)
			n = big;
		setup(&r);
		creates(&r, 0, n);
		snprintf(name, sizeof(name), "get@%llu", (unsigned long long)n);
		start(&f);
		gets(&r, &rng, n, 1000000);
		report(name, &f);
		teardown(&r);
		if (n == big)
			break;
	}
	return 0;
}
