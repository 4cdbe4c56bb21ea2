/* The whole-system fault sweep: for each seed, a random scenario over the
 * whole stack, written as scenario text (docs/scenarios.md) and run
 * through the scenario API, so that a failing seed is a .scn file that
 * `ibmcast run FILE` replays event for event.
 *
 * A scenario, drawn whole from its seed: a fat tree or a single switch of
 * 3 to 16 hosts, the SA on the SM's port, sometimes a second partition
 * (0x8001; hosts full or limited members of it, one interface on it and
 * one on the default partition, some default interfaces with addresses
 * on the other partition's subnet, so that their pings try to cross).
 * IPoIB interfaces come up on most hosts; then, over one to four
 * seconds, applications join and leave groups through the join trackers
 * (FullMember and SendOnlyFullMember creates of a few fixed MGIDs,
 * NonMember and SendOnlyNonMember joins of those, which lose their last
 * full member to leaves and SA restarts, creates with MGID 0, and
 * FullMember, NonMember and SendOnlyNonMember joins of the IPoIB
 * broadcast group, which the interfaces hold too; each application joins
 * again after a failure, retry=), interfaces go down
 * and up, listen to groups and stop, ping and send unicast and multicast
 * datagrams; host cables lose packets (MADs and data alike); every cable
 * may duplicate and reorder (by at most one cable latency, less than a
 * round trip: see test_mcast_sweep.c); cables flap, shorter and longer
 * than the SM's sweep; ports are reregistered, one or all; the SA
 * restarts empty, followed by a reregister of every port as a new SM
 * gives; a host's P_Key table loses the second partition and gets it
 * back; the SA may serve at a finite rate from a small queue and give
 * the broadcast groups another Q_Key, and the IPoIB queues may be small.
 *
 * Then the faults heal (losses cleared, cables up, P_Key tables as at the
 * start), up to two hosts take a new LID in the first half of the calm
 * that follows, and the system is left alone for 20 s (more than the IPoIB
 * broadcast join's longest backoff, 16 s); a ping-all round pings every
 * pair of interfaces that can reach each other, and at the end:
 *  - every live handle is JOINED, of applications and IPoIB alike, but
 *    the non-full members of a fixed MGID that no live application holds
 *    with a full bit: they are WAITING for the group to be created
 *    (mcast-unjoined counts them; each application's mcast-state);
 *  - the SA's membership of every port in every group is the union of
 *    the JoinState bits of the live handles of the port's tracker
 *    (mcast-consistent == 0), but for orphan creates, which no client can
 *    know of (mcast-orphans; see docs/scenarios.md);
 *  - every interface that is up has carrier, ping-all pinged exactly the
 *    pairs the generator computes (same partition, not two limited
 *    members, an address on a prefix of the other's) and every reply
 *    came;
 *  - no IP packet was delivered from an interface of another partition
 *    (ipoib-cross-partition == 0);
 *  - no queue went above its bound: IPoIB's per endpoint, per group and
 *    in total, the SA's request queue, the trackers' requests in flight;
 *  - once the run has freed everything, no timer is left in the loop
 *    (and the sanitizer build finds no leak).
 *
 * Seeds: 200 from seed 1 by default (100 under AddressSanitizer);
 * IMC_SEEDS=N and IMC_SEED_FIRST=S (or --seeds N --first S) change them,
 * IMC_SEED=N (or --seed N) runs one, --verbose prints a line per seed,
 * --write DIR writes every scenario. A failing seed prints its failed
 * expectations, writes system-sweep-SEED.scn (into IMC_SWEEP_DIR, else
 * the current directory) and the command that replays it. Every draw
 * from the seed's generator is a statement of its own (the order of a
 * call's arguments is the compiler's), so a seed draws the same scenario
 * in every build.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/rng.h"
#include "ibmcast/scenario.h"

#include "sweep_seeds.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifdef SANITIZED
#define DEFAULT_SEEDS 100
#else
#define DEFAULT_SEEDS 200
#endif

#define US ((uint64_t)1000)
#define MS (1000 * US)
#define SEC (1000 * MS)

#define MAXH 16
#define MAXIF (2 * MAXH)
#define MAXADDR 3
#define MAXAPP 96
#define MAXEV 1024
#define MAXPORT (MAXH + 16)
#define PART 0x0001u          /* the second partition, low 15 bits */
#define SETTLE (20 * SEC)     /* > IPoIB's broadcast join backoff, 16 s */
#define SA_WINDOW 32          /* IMC_SA_DEFAULT_WINDOW */

/* ------------------------------------------------------------------ */
/* The model the generator keeps of what it wrote. */

struct addr {
	bool v6;
	uint32_t v4;
	uint8_t v6b[16];
	unsigned plen;
	char text[48];           /* "10.0.0.3/16" */
};

struct iface {
	unsigned host;           /* 0-based */
	uint16_t pkey;           /* as the interface is made: 0xffff, 0x8001
				  * or 0x0001 */
	struct addr a[MAXADDR];
	unsigned na;
	bool up;                 /* administratively, now */
	bool listening[4];       /* 239.1.1.1..4 */
};

struct host {
	char name[16];
	uint16_t part;           /* its entry of the second partition (0x8001
				  * full, 0x0001 limited) or 0 */
	int ifs[2];              /* default, second partition; -1: none */
};

struct event {
	uint64_t at;             /* ns */
	unsigned seq;
	char text[160];
};

struct gen {
	struct imc_rng rng;
	uint64_t seed;
	char spec[64];
	unsigned nh, leaves, hosts_per_leaf, spines;
	struct host h[MAXH];
	struct iface ifc[MAXIF];
	unsigned nif;
	bool partitions;
	unsigned qe, qg, qt;     /* IPoIB bounds */
	unsigned bqkey;          /* the broadcast groups' Q_Key */
	unsigned sa_queue;
	char port[MAXPORT][16];  /* cables that may flap */
	uint64_t port_busy[MAXPORT]; /* down (or flapping) until */
	unsigned nport;
	bool lossy[MAXH];
	unsigned napp;
	bool app_live[MAXAPP];
	unsigned app_group[MAXAPP];  /* N of ff15::N, else 0 */
	bool app_full[MAXAPP];       /* FullMember or SendOnlyFullMember */
	struct event *ev;
	unsigned nev;
	uint64_t heal;
	/* what the seed did, for the summary */
	unsigned n_flaps, n_rereg, n_restarts, n_pkey, n_pings, n_sends,
		n_downs, n_joins, n_leaves;
	unsigned pairs;
};

static struct gen G;

static uint64_t below(uint64_t n)
{
	return imc_rng_below(&G.rng, n);
}

static bool chance(unsigned permille)
{
	return below(1000) < permille;
}

/* A time in [lo, hi). */
static uint64_t when(uint64_t lo, uint64_t hi)
{
	return lo + (hi > lo ? below(hi - lo) : 0);
}

static void ev(uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ev(uint64_t at, const char *fmt, ...)
{
	struct event *e;
	va_list ap;

	assert_true(G.nev < MAXEV);
	e = &G.ev[G.nev];
	e->at = at / US * US;    /* whole microseconds */
	e->seq = G.nev++;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

static int ev_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "H-000003" or "H-000003 pkey=0x8001": an interface as verbs name it. */
static const char *ifname(const struct iface *i)
{
	static char buf[2][40];
	static int k;

	k ^= 1;
	if (i->pkey == 0xffff)
		snprintf(buf[k], sizeof(buf[k]), "%s", G.h[i->host].name);
	else
		snprintf(buf[k], sizeof(buf[k]), "%s pkey=0x%04x",
			 G.h[i->host].name, i->pkey);
	return buf[k];
}

/* The host of an interface, and " pkey=P" (or nothing) for the end of a
 * line. */
static const char *hostof(const struct iface *i)
{
	return G.h[i->host].name;
}

static const char *pkeyof(const struct iface *i)
{
	static char buf[2][16];
	static int k;

	k ^= 1;
	buf[k][0] = '\0';
	if (i->pkey != 0xffff)
		snprintf(buf[k], sizeof(buf[k]), " pkey=0x%04x", i->pkey);
	return buf[k];
}

static void addr_v4(struct addr *a, unsigned b1, unsigned b2, unsigned b3,
		    unsigned plen)
{
	memset(a, 0, sizeof(*a));
	a->v4 = 10u << 24 | b1 << 16 | b2 << 8 | b3;
	a->plen = plen;
	snprintf(a->text, sizeof(a->text), "10.%u.%u.%u/%u", b1, b2, b3, plen);
}

static void addr_v6(struct addr *a, unsigned n)
{
	memset(a, 0, sizeof(*a));
	a->v6 = true;
	a->v6b[0] = 0xfd;
	a->v6b[14] = (uint8_t)(n >> 8);
	a->v6b[15] = (uint8_t)n;
	a->plen = 64;
	snprintf(a->text, sizeof(a->text), "fd00::%x/64", n);
}

/* The address without its length. */
static const char *bare(const struct addr *a)
{
	static char buf[2][48];
	static int k;
	char *slash;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s", a->text);
	slash = strchr(buf[k], '/');
	if (slash)
		*slash = '\0';
	return buf[k];
}

static bool on_prefix(const struct addr *a, const struct addr *d)
{
	if (a->v6 != d->v6)
		return false;
	if (!a->v6)
		return !((a->v4 ^ d->v4) &
			 (a->plen ? ~0u << (32 - a->plen) : 0));
	for (unsigned b = 0; b < a->plen; b++)
		if ((a->v6b[b / 8] ^ d->v6b[b / 8]) & (0x80 >> (b % 8)))
			return false;
	return true;
}

static bool has_v6(const struct iface *i)
{
	for (unsigned k = 0; k < i->na; k++)
		if (i->a[k].v6)
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Drawing a scenario */

static void draw_fabric(void)
{
	if (chance(750)) {
		G.leaves = 2 + (unsigned)below(3);
		G.hosts_per_leaf = 2 + (unsigned)below(3);
		G.spines = 1 + (unsigned)below(2);
		G.nh = G.leaves * G.hosts_per_leaf;
		snprintf(G.spec, sizeof(G.spec),
			 "fat-tree:leaves=%u,hosts=%u,spines=%u", G.leaves,
			 G.hosts_per_leaf, G.spines);
	} else {
		G.nh = 3 + (unsigned)below(6);
		snprintf(G.spec, sizeof(G.spec), "switch:hosts=%u", G.nh);
	}
	for (unsigned i = 0; i < G.nh; i++) {
		snprintf(G.h[i].name, sizeof(G.h[i].name), "H-%06u", i + 1);
		G.h[i].ifs[0] = G.h[i].ifs[1] = -1;
		snprintf(G.port[G.nport++], sizeof(G.port[0]), "H-%06u",
			 i + 1);
	}
	for (unsigned s = 1; s <= G.spines; s++)
		for (unsigned l = 1; l <= G.leaves && G.nport < MAXPORT; l++)
			snprintf(G.port[G.nport++], sizeof(G.port[0]),
				 "S-%04u:%u", s, l);
}

static int iface_new(unsigned host, uint16_t pkey)
{
	struct iface *i = &G.ifc[G.nif];

	memset(i, 0, sizeof(*i));
	i->host = host;
	i->pkey = pkey;
	G.h[host].ifs[pkey == 0xffff ? 0 : 1] = (int)G.nif;
	return (int)G.nif++;
}

/* Settings, P_Key tables and the interfaces with their addresses. */
static void draw_settings(FILE *f)
{
	static const char *const spread[] = { "1ms", "20ms", "100ms" };
	double loss_dup = chance(300) ? 0 : 0.01 * (double)(1 + below(4));
	double reorder = chance(500) ? 0 : 0.05 * (double)(1 + below(3));
	unsigned latency = 100 + (unsigned)below(900);

	fprintf(f, "# whole-system sweep, seed %" PRIu64 "\n", G.seed);
	fprintf(f, "topology %s\nseed %" PRIu64 "\n", G.spec, G.seed);
	fprintf(f, "links latency=%uns", latency);
	if (loss_dup > 0)
		fprintf(f, " dup=%g", loss_dup);
	if (reorder > 0)
		fprintf(f, " reorder=%g reorder-delay=%uns", reorder, latency);
	fputc('\n', f);
	G.partitions = chance(650);
	G.sa_queue = 4096;
	/* The broadcast groups' Q_Key: the interfaces take it from the
	 * join's answer (RFC 4391 section 4). */
	G.bqkey = chance(700) ? 0x0b1b : 0x10000u + (unsigned)below(0x10000);
	fprintf(f, "sa%s", G.partitions ? " partitions=0x8001" : "");
	if (G.bqkey != 0x0b1b)
		fprintf(f, " bcast-qkey=0x%x", G.bqkey);
	if (chance(300)) {
		G.sa_queue = 8 + (unsigned)below(24);
		fprintf(f, " rate=%u queue=%u", 2000 + (unsigned)below(20000),
			G.sa_queue);
	}
	fputc('\n', f);
	G.qe = 16;
	G.qg = 64;
	G.qt = 4096;
	if (chance(400)) {
		/* Two in all at least: a request waiting for its neighbour
		 * and the neighbour solicitation waiting for its send-only
		 * join (IPv6 ND) are queued at once; with room for one,
		 * IPv6 resolution never starts on the first try. */
		G.qe = 1 + (unsigned)below(6);
		G.qg = 1 + (unsigned)below(10);
		G.qt = 2 + (unsigned)below(40);
		fprintf(f, "ipoib queue=%u queue-group=%u queue-total=%u\n",
			G.qe, G.qg, G.qt);
	}
	if (chance(500)) {
		/* One draw a statement: argument order is the compiler's. */
		const char *sp = spread[below(3)];
		unsigned timeout = 20 + (unsigned)below(200);
		unsigned retries = 2 + (unsigned)below(6);

		fprintf(f, "mcast-tracker spread=%s timeout=%ums retries=%u\n",
			sp, timeout, retries);
	}
	for (unsigned h = 0; h < G.nh; h++) {
		struct host *x = &G.h[h];

		if (G.partitions && chance(600)) {
			x->part = chance(700) ? 0x8001 : 0x0001;
			fprintf(f, "pkeys %s 0xffff 0x%04x\n", x->name, x->part);
		}
		if (chance(850)) {
			struct iface *i = &G.ifc[iface_new(h, 0xffff)];

			addr_v4(&i->a[i->na++], 0, h / 256, h % 256 + 1, 16);
			if (chance(400))
				addr_v6(&i->a[i->na++], h + 1);
			/* An address on the second partition's subnet: its
			 * pings go nowhere (another partition). */
			if (G.partitions && chance(200))
				addr_v4(&i->a[i->na++], 1, 100 + h / 256,
					h % 256 + 1, 16);
		}
		if (x->part && chance(800)) {
			struct iface *i = &G.ifc[iface_new(h, x->part)];

			addr_v4(&i->a[i->na++], 1, h / 256, h % 256 + 1, 16);
		}
	}
}

static struct iface *any_iface(void)
{
	return G.nif ? &G.ifc[below(G.nif)] : NULL;
}

static void up_all(void)
{
	for (unsigned k = 0; k < G.nif; k++) {
		struct iface *i = &G.ifc[k];
		char line[160];
		size_t n;

		n = (size_t)snprintf(line, sizeof(line), "ipoib-up %s",
				     ifname(i));
		for (unsigned a = 0; a < i->na; a++)
			n += (size_t)snprintf(line + n, sizeof(line) - n,
					      " %s", i->a[a].text);
		ev(when(1 * MS, 50 * MS), "%s", line);
		i->up = true;
	}
}

static void do_app_join(uint64_t t)
{
	unsigned h = (unsigned)below(G.nh);
	unsigned a = G.napp;
	uint64_t r = below(100);
	char what[96], bcast[64];

	snprintf(bcast, sizeof(bcast), "ff12:401b:ffff::ffff:ffff qkey=0x%x",
		 G.bqkey);

	if (a >= MAXAPP)
		return;
	G.app_group[a] = 0;
	G.app_full[a] = r < 70;
	if (r < 30 || (r >= 80 && r < 90)) {
		unsigned n = 1 + (unsigned)below(4);

		/* Non-full members of these groups wait while no full
		 * member holds them (they lose their last full member to
		 * leaves and SA restarts). */
		snprintf(what, sizeof(what), "ff15::%u create%s", n,
			 r < 30 ? "" : r < 85 ? " state=nonmember" :
						" state=sendonly");
		G.app_group[a] = n;
	} else if (r < 40) {
		G.app_group[a] = 1 + (unsigned)below(4);
		snprintf(what, sizeof(what),
			 "ff15::%u create state=sendonly-full",
			 G.app_group[a]);
	} else if (r < 55) {
		snprintf(what, sizeof(what), "0 create");
	} else if (r < 70) {
		snprintf(what, sizeof(what), "%s", bcast);
	} else if (r < 80) {
		snprintf(what, sizeof(what), "%s state=nonmember%s", bcast,
			 chance(300) ? " noqp" : "");
	} else {
		snprintf(what, sizeof(what), "%s state=sendonly", bcast);
	}
	ev(t, "mcast-join %s %s retry=%ums as=a%u", G.h[h].name, what,
	   10 + (unsigned)below(500), a);
	G.app_live[a] = true;
	G.napp++;
	G.n_joins++;
	if (chance(500)) {
		ev(t + when(0, 2 * SEC), "mcast-leave a%u", a);
		G.app_live[a] = false;
		G.n_leaves++;
	}
}

/* A live application without a full bit waits at the end when no live
 * application holds its group with one (the SA deleted the group with
 * its last full member, or lost it in a restart). */
static bool app_waits(unsigned a)
{
	if (!G.app_live[a] || G.app_full[a] || !G.app_group[a])
		return false;
	for (unsigned b = 0; b < G.napp; b++)
		if (G.app_live[b] && G.app_full[b] &&
		    G.app_group[b] == G.app_group[a])
			return false;
	return true;
}

static unsigned waiting_apps(void)
{
	unsigned n = 0;

	for (unsigned a = 0; a < G.napp; a++)
		n += app_waits(a);
	return n;
}

static void do_traffic(uint64_t t, bool ping)
{
	struct iface *s = any_iface(), *d = any_iface();
	const struct addr *to;
	bool v6;

	if (!s || !d)
		return;
	v6 = has_v6(s) && has_v6(d) && chance(500);
	to = NULL;
	for (unsigned k = 0; k < d->na && !to; k++)
		if (d->a[k].v6 == v6 && (v6 || chance(700) || k + 1 == d->na))
			to = &d->a[k];
	if (!to) {
		if (v6)
			return;
		to = &d->a[0];
	}
	if (ping) {
		unsigned count = 1 + (unsigned)below(5);
		unsigned gap = 100 + (unsigned)below(2000);

		ev(t, "ping %s %s count=%u interval=%uus%s", hostof(s),
		   bare(to), count, gap, pkeyof(s));
		G.n_pings++;
	} else if (chance(600)) {
		unsigned count = 1 + (unsigned)below(30);
		unsigned gap = 1 + (unsigned)below(200);
		unsigned size = (unsigned)below(1500);

		ev(t, "ipoib-send %s %s count=%u interval=%uus size=%u%s",
		   hostof(s), bare(to), count, gap, size, pkeyof(s));
		G.n_sends++;
	} else {
		/* to a group: a send-only join unless listened to here */
		unsigned count = 1 + (unsigned)below(20);
		unsigned gap = 1 + (unsigned)below(500);

		ev(t, "ipoib-send %s %s count=%u interval=%uus%s", hostof(s),
		   v6 ? "ff12::1:1" : "239.1.1.1", count, gap, pkeyof(s));
		G.n_sends++;
	}
}

static void do_listen(uint64_t t)
{
	struct iface *i = any_iface();
	unsigned g = (unsigned)below(4);

	if (!i)
		return;
	ev(t, "ipoib-%s %s 239.1.1.%u%s", i->listening[g] ? "unlisten" :
							      "listen",
	   hostof(i), g + 1, pkeyof(i));
	i->listening[g] = !i->listening[g];
}

static void do_updown(uint64_t t)
{
	struct iface *i = any_iface();

	if (!i)
		return;
	ev(t, "ipoib-%s %s", i->up ? "down" : "up", ifname(i));
	i->up = !i->up;
	G.n_downs++;
}

static void do_flap(uint64_t t)
{
	unsigned p = (unsigned)below(G.nport);
	/* Shorter or longer than the SM's sweep (fabric default). */
	uint64_t d = chance(500) ? when(10 * US, 5 * MS) :
				   when(20 * MS, 500 * MS);

	if (G.port_busy[p] > t)
		return;
	ev(t, "link down %s", G.port[p]);
	ev(t + d, "link up %s", G.port[p]);
	/* ACTIVE again one SM sweep after the cable (1 ms by default). */
	G.port_busy[p] = t + d + 5 * MS;
	G.n_flaps++;
}

static void do_loss(uint64_t t)
{
	unsigned h = (unsigned)below(G.nh);

	if (chance(300))
		ev(t, "fault %s loss=0", G.h[h].name);
	else
		ev(t, "fault %s loss=%u%%", G.h[h].name,
		   2 + (unsigned)below(20));
	G.lossy[h] = true;
}

static void do_rereg(uint64_t t)
{
	unsigned h = (unsigned)below(G.nh);

	/* The SM reaches no port whose cable is down (host cables are the
	 * first ports of the list): then every port that is up. */
	if (chance(300) || G.port_busy[h] > t)
		ev(t, "reregister all");
	else
		ev(t, "reregister %s", G.h[h].name);
	G.n_rereg++;
}

static void do_restart(uint64_t t)
{
	ev(t, "sa-restart");
	ev(t + when(0, 50 * MS), "reregister all");
	G.n_restarts++;
}

static void do_pkeys(uint64_t t)
{
	unsigned h = (unsigned)below(G.nh);
	struct host *x = &G.h[h];
	uint64_t back;

	if (!x->part)
		return;
	/* Back by the heal at the latest; two changes of one host may
	 * overlap, the table is whole after the last. */
	back = t + when(10 * MS, 1500 * MS);
	if (back > G.heal)
		back = G.heal;
	ev(t, "pkeys %s 0xffff", x->name);
	ev(back, "pkeys %s 0xffff 0x%04x", x->name, x->part);
	G.n_pkey++;
}

/* Up to two hosts take a new LID once the faults have healed (then no
 * announcement is lost): their peers must follow them, without a
 * PathRecord, for every ping-all reply to come. Drawn from a stream of
 * their own, so that a seed's other draws stay as they were. */
static void do_lid_changes(uint64_t seed)
{
	struct imc_rng r;
	unsigned n;

	imc_rng_seed(&r, seed ^ 0x11dc4a11dull);
	n = (unsigned)imc_rng_below(&r, 3);
	for (unsigned k = 0; k < n; k++) {
		unsigned h = (unsigned)imc_rng_below(&r, G.nh);
		uint64_t t = G.heal + imc_rng_below(&r, SETTLE / 2);

		ev(t, "lid %s 0x%x", G.h[h].name, 0x1000 + k);
	}
}

/* The pairs ping-all pings at the end, as docs/scenarios.md says. */
static unsigned expected_pairs(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < G.nif; i++)
		for (unsigned j = 0; j < G.nif; j++) {
			const struct iface *a = &G.ifc[i], *b = &G.ifc[j];

			if (i == j || !a->up || !b->up ||
			    ((a->pkey ^ b->pkey) & 0x7fff) ||
			    !((a->pkey | b->pkey) & 0x8000))
				continue;
			for (unsigned k = 0; k < b->na; k++)
				for (unsigned m = 0; m < a->na; m++)
					if (on_prefix(&a->a[m], &b->a[k])) {
						n++;
						break;
					}
		}
	return n;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The whole scenario text into f. */
static void draw(uint64_t seed, FILE *f)
{
	uint64_t active, end, times[100];
	unsigned steps;

	memset(&G, 0, sizeof(G));
	G.seed = seed;
	G.ev = calloc(MAXEV, sizeof(*G.ev));
	assert_non_null(G.ev);
	imc_rng_seed(&G.rng, seed ^ 0x5157e55eedull);
	draw_fabric();
	draw_settings(f);
	up_all();
	active = when(1 * SEC, 4 * SEC);
	G.heal = active + 10 * MS;
	steps = 20 + (unsigned)below(80);
	/* Steps in time order: the model's state (interfaces up, groups
	 * listened to, cables down) is the state at the step's time. */
	for (unsigned s = 0; s < steps; s++)
		times[s] = when(60 * MS, active);
	qsort(times, steps, sizeof(times[0]), u64_cmp);
	for (unsigned s = 0; s < steps; s++) {
		uint64_t t = times[s];
		uint64_t r = below(1000);

		if (r < 250)
			do_app_join(t);
		else if (r < 420)
			do_traffic(t, true);
		else if (r < 540)
			do_traffic(t, false);
		else if (r < 600)
			do_listen(t);
		else if (r < 650)
			do_updown(t);
		else if (r < 760)
			do_flap(t);
		else if (r < 830)
			do_loss(t);
		else if (r < 900)
			do_rereg(t);
		else if (r < 940)
			do_restart(t);
		else
			do_pkeys(t);
	}
	/* Heal: losses cleared (cables keep the links line's duplication
	 * and reordering), interfaces up but a few; cables are up and P_Key
	 * tables whole by now. */
	for (unsigned h = 0; h < G.nh; h++)
		if (G.lossy[h])
			ev(G.heal, "fault %s loss=0", G.h[h].name);
	for (unsigned k = 0; k < G.nif; k++) {
		struct iface *i = &G.ifc[k];
		bool want = !chance(100);

		if (i->up != want)
			ev(G.heal, "ipoib-%s %s", want ? "up" : "down",
			   ifname(i));
		i->up = want;
	}
	do_lid_changes(seed);
	/* One request a millisecond: each resolves its neighbour before the
	 * next, so queues as small as one packet do not drop them. */
	G.pairs = expected_pairs();
	ev(G.heal + SETTLE, "ping-all interval=1ms");
	end = G.heal + SETTLE + (G.pairs + 1000) * MS;
	qsort(G.ev, G.nev, sizeof(*G.ev), ev_cmp);
	fprintf(f, "stop %" PRIu64 "ms\n\n", end / MS + 1);
	for (unsigned k = 0; k < G.nev; k++)
		fprintf(f, "at %" PRIu64 "us %s\n", G.ev[k].at / US,
			G.ev[k].text);
	fputc('\n', f);
	fprintf(f, "expect mcast-unjoined == %u\n", waiting_apps());
	fprintf(f, "expect mcast-consistent == 0\n");
	fprintf(f, "expect mcast-orphans >= 0\n");
	for (unsigned a = 0; a < G.napp; a++)
		fprintf(f, "expect mcast-state a%u == %s\n", a,
			!G.app_live[a] ? "left" :
			app_waits(a) ? "waiting" : "joined");
	for (unsigned k = 0; k < G.nif; k++)
		fprintf(f, "expect ipoib-carrier %s == %s\n",
			ifname(&G.ifc[k]), G.ifc[k].up ? "up" : "down");
	fprintf(f, "expect ping-all-pairs == %u\n", G.pairs);
	fprintf(f, "expect ping-all-unanswered == 0\n");
	fprintf(f, "expect ipoib-cross-partition == 0\n");
	fprintf(f, "expect ipoib-max-queued endpoint <= %u\n", G.qe);
	fprintf(f, "expect ipoib-max-queued group <= %u\n", G.qg);
	fprintf(f, "expect ipoib-max-queued total <= %u\n", G.qt);
	fprintf(f, "expect sa-queue-max <= %u\n", G.sa_queue);
	fprintf(f, "expect mcast-max-in-flight <= %u\n", SA_WINDOW);
	free(G.ev);
	G.ev = NULL;
}

/* ------------------------------------------------------------------ */
/* Running seeds */

static struct {
	uint64_t seeds, events, orphans, pairs, apps, ifs, flaps, rereg,
		restarts, pkey, pings, sends, downs;
	uint64_t virt_ns;
} T;

static struct sweep_seeds seeds = { .first = 1, .count = DEFAULT_SEEDS };
static bool arg_verbose;
static const char *arg_write;

static char *draw_text(uint64_t seed, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	draw(seed, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		printf("  (could not write %s)\n", path);
}

/* Runs one seed; false when an expectation failed or the run could not
 * be made, after printing why and writing the scenario. */
static bool run_seed(uint64_t seed)
{
	struct imc_scenario_result r;
	struct imc_scenario *s = NULL;
	char err[512], path[512], name[64];
	const char *dir = getenv("IMC_SWEEP_DIR");
	size_t len;
	char *text = draw_text(seed, &len);
	bool ok;
	int rc;

	snprintf(name, sizeof(name), "system-sweep-%" PRIu64 ".scn", seed);
	if (arg_write) {
		snprintf(path, sizeof(path), "%s/%s", arg_write, name);
		write_file(path, text, len);
	}
	rc = imc_scenario_parse(text, len, name, NULL, &s, err, sizeof(err));
	if (rc) {
		printf("system_sweep: seed %" PRIu64 ": the scenario does not parse: %s\n",
		       seed, err);
		ok = false;
		goto out;
	}
	rc = imc_scenario_run(s, NULL, &r, err, sizeof(err));
	if (rc) {
		printf("system_sweep: seed %" PRIu64 ": the run failed: %s\n",
		       seed, err);
		ok = false;
		goto out;
	}
	ok = r.nfailed == 0 && r.leftover == 0;
	if (!ok) {
		printf("system_sweep: seed %" PRIu64 " failed:\n", seed);
		for (unsigned i = 0; i < r.nchecks; i++)
			if (r.checks[i].state == IMC_SCN_CHECK_FAIL)
				printf("  line %u: %s: observed %s\n",
				       r.checks[i].line, r.checks[i].text,
				       r.checks[i].observed_str);
		if (r.leftover)
			printf("  %zu timers left in the loop\n", r.leftover);
	}
	for (unsigned i = 0; i < r.nchecks; i++)
		if (!strcmp(r.checks[i].text, "mcast-orphans >= 0"))
			T.orphans += r.checks[i].observed;
	T.events += r.events;
	T.virt_ns += r.end;
	if (arg_verbose || !ok)
		printf("  seed %" PRIu64 ": %s, %u interfaces%s, %u apps "
		       "(%u leave), %u pings, %u sends, %u downs, %u flaps, "
		       "%u reregisters, %u SA restarts, %u P_Key changes, "
		       "%u pairs, %" PRIu64 " events\n",
		       seed, G.spec, G.nif, G.partitions ? " (2 partitions)" :
							   "",
		       G.napp, G.n_leaves, G.n_pings, G.n_sends, G.n_downs,
		       G.n_flaps, G.n_rereg, G.n_restarts, G.n_pkey, G.pairs,
		       r.events);
	imc_scenario_result_free(&r);
out:
	T.seeds++;
	T.pairs += G.pairs;
	T.apps += G.napp;
	T.ifs += G.nif;
	T.flaps += G.n_flaps;
	T.rereg += G.n_rereg;
	T.restarts += G.n_restarts;
	T.pkey += G.n_pkey;
	T.pings += G.n_pings;
	T.sends += G.n_sends;
	T.downs += G.n_downs;
	if (!ok) {
		snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : ".",
			 name);
		write_file(path, text, len);
		printf("  scenario: %s\n"
		       "  replay:   ibmcast run %s   (build/ibmcast from the "
		       "source tree)\n"
		       "       or:  IMC_SEED=%" PRIu64
		       " build/tests/test_system_sweep\n", path, path, seed);
	}
	imc_scenario_destroy(s);
	free(text);
	return ok;
}

static void test_sweep(void **state)
{
	unsigned nfail = 0;
	uint64_t first_fail = 0;
	struct timespec a, b;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < (seeds.one ? 1 : seeds.count); i++) {
		uint64_t seed = seeds.one ? seeds.seed : seeds.first + i;

		if (run_seed(seed))
			continue;
		if (!nfail++)
			first_fail = seed;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("system_sweep: %" PRIu64 " seeds from %" PRIu64
	       ", %u failed, %.2f s (%.0f s of virtual time, %" PRIu64
	       " events)\n"
	       "  %" PRIu64 " interfaces, %" PRIu64 " application joins, %"
	       PRIu64 " pings and %" PRIu64 " sends, %" PRIu64
	       " interface downs, %" PRIu64 " flaps, %" PRIu64
	       " reregisters, %" PRIu64 " SA restarts, %" PRIu64
	       " P_Key changes; %" PRIu64 " ping-all pairs, %" PRIu64
	       " orphan creates\n",
	       T.seeds, seeds.one ? seeds.seed : seeds.first, nfail,
	       (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       (double)T.virt_ns / 1e9, T.events, T.ifs, T.apps, T.pings,
	       T.sends, T.downs, T.flaps, T.rereg, T.restarts, T.pkey,
	       T.pairs, T.orphans);
	if (nfail)
		fail_msg("%u seeds failed, the first %" PRIu64, nfail,
			 first_fail);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: test_system_sweep [--seed N | --first N --seeds N] [--verbose] [--write DIR]\n"
		"  env: IMC_SEED, IMC_SEED_FIRST, IMC_SEEDS, IMC_SWEEP_DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep),
	};

	if (!sweep_seeds_env(&seeds))
		usage();
	for (int i = 1; i < argc; i++) {
		int taken = sweep_seeds_arg(&seeds, argc, argv, &i);

		if (taken < 0)
			usage();
		if (taken > 0)
			continue;
		if (!strcmp(argv[i], "--write") && i + 1 < argc) {
			arg_write = argv[++i];
		} else if (!strcmp(argv[i], "--verbose")) {
			arg_verbose = true;
		} else {
			usage();
		}
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
