/* ibmcastd's server core under load: joins answered without a MAD,
 * through the daemon, from client processes.
 *
 * Usage: bench_mcastd [PAIRS_PER_CLIENT [CLIENTS]]   (defaults 200000, 10)
 *
 * The daemon side is this process: the server core on a real-time loop,
 * one port's tracker whose SA client has a fake transport answering
 * every Set at once, and GROUPS groups already joined by holder members
 * of the bench, so that every client join is answered without a MAD.
 * Clients are forked processes using the client library over
 * socketpairs (the daemon accepts one end).
 *
 * Figures, all from one run:
 *  - memory of the daemon (mallinfo2 heap bytes) per connected client
 *    and per member (server and tracker together);
 *  - throughput: CLIENTS processes, each with WINDOW joins in flight,
 *    leaving each member from its JOINED callback and joining again,
 *    PAIRS_PER_CLIENT pairs each: pairs per second of wall time, and
 *    pairs per second of the daemon's CPU time (getrusage of this
 *    process: the rate on one core for the daemon);
 *  - latency of one join (imc_mcastd_join() to the JOINED callback, one
 *    at a time) through the daemon, against the in-process tracker on a
 *    real-time loop (imc_mcast_join() to its callback): p50 and p99.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/mcastd_server.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "util/bytes.h"

#define GROUPS 100
#define WINDOW 32
#define HOLD 1000           /* members per client for the memory figure */
#define LAT_JOINS 20000

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_mcastd: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static size_t heap(void)
{
	return mallinfo2().uordblks;
}

/* ---- a fake SA answering every request at once, from the loop ---- */

struct fake {
	struct imc_loop *loop;
	struct imc_sa_client *client;
	uint8_t (*q)[IMC_MAD_SIZE];
	size_t n, cap;
	struct imc_timer timer;
	uint16_t mlid;
};

static int fake_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct fake *f = ctx;
	struct imc_sa_mad m;
	struct imc_mcmr r;

	if (imc_sa_mad_unpack(&m, mad, len) < 0 ||
	    imc_mcmr_unpack(&r, m.data, sizeof(m.data)) < 0)
		return -EINVAL;
	m.mad.method |= UMAD_METHOD_RESP_MASK;
	if (m.mad.method == (UMAD_METHOD_SET | UMAD_METHOD_RESP_MASK)) {
		m.mad.method = UMAD_METHOD_GET_RESP;
		r.mlid = f->mlid++;
		r.mtu = 4;
		r.rate = 3;
		r.mtu_sel = r.rate_sel = r.life_sel = UMAD_SA_SELECTOR_EXACTLY;
	}
	m.sa.attr_offset = IMC_MCMR_SIZE / 8;
	imc_mcmr_pack(&r, m.data, sizeof(m.data));
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 256;
		f->q = realloc(f->q, f->cap * sizeof(*f->q));
		if (!f->q)
			die("realloc", ENOMEM);
	}
	imc_sa_mad_pack(&m, f->q[f->n++], IMC_MAD_SIZE);
	if (!imc_timer_armed(&f->timer))
		imc_timer_arm(f->loop, &f->timer, imc_loop_now(f->loop));
	return 0;
}

static void fake_answer(struct imc_timer *t)
{
	struct fake *f = imc_container_of(t, struct fake, timer);
	size_t n = f->n;
	uint8_t (*b)[IMC_MAD_SIZE] = malloc(n * sizeof(*b) + 1);

	if (!b)
		die("malloc", ENOMEM);
	memcpy(b, f->q, n * sizeof(*b));
	f->n = 0;
	for (size_t i = 0; i < n; i++)
		imc_sa_client_recv(f->client, b[i], IMC_MAD_SIZE);
	free(b);
}

static struct imc_gid mgid_of(unsigned i)
{
	struct imc_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xff;
	g.raw[1] = 0x12;
	g.raw[2] = 0xe0;
	g.raw[3] = 0x01;
	imc_put32(g.raw + 12, i + 1);
	return g;
}

static struct imc_mcast_join_req req_of(unsigned i)
{
	struct imc_mcast_join_req r;

	memset(&r, 0, sizeof(r));
	r.rec.mgid = mgid_of(i);
	r.rec.qkey = 0x80010000;
	r.rec.pkey = 0xffff;
	r.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
		      UMAD_SA_MCM_COMP_MASK_PORT_GID |
		      UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_PKEY |
		      UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	r.join_state = IMC_JOIN_FULL;
	return r;
}

/* One port: a real-time loop, the fake SA, a tracker, GROUPS holders. */
struct port {
	struct imc_loop *loop;
	struct fake fake;
	struct imc_mcast *t;
	struct imc_mcast_member *holders[GROUPS];
};

static unsigned holders_joined;

static void on_holder(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	(void)arg;
	(void)m;
	if (ev->type != IMC_MCAST_EV_JOINED)
		die("holder join", EIO);
	holders_joined++;
}

static void port_up(struct port *p)
{
	struct imc_sa_transport tr = { fake_send, &p->fake };
	struct imc_sa_client_config cc;
	struct imc_mcast_config mc;
	int r;

	memset(p, 0, sizeof(*p));
	if ((r = imc_loop_create_realtime(&p->loop)))
		die("loop", r);
	p->fake.loop = p->loop;
	p->fake.mlid = 0xc000;
	imc_timer_init(&p->fake.timer, fake_answer);
	imc_sa_client_config_init(&cc);
	if ((r = imc_sa_client_create(p->loop, &tr, &cc, &p->fake.client)))
		die("sa client", r);
	imc_mcast_config_init(&mc);
	mc.subscribe = false;
	imc_gid_set(&mc.port_gid, 0xfe80000000000000ull, 2);
	if ((r = imc_mcast_create(p->loop, p->fake.client, &mc, NULL, &p->t)))
		die("tracker", r);
	holders_joined = 0;
	for (unsigned i = 0; i < GROUPS; i++) {
		struct imc_mcast_join_req req = req_of(i);

		if ((r = imc_mcast_join(p->t, &req, on_holder, NULL,
					&p->holders[i])))
			die("join", r);
	}
	while (holders_joined < GROUPS)
		imc_loop_run_once(p->loop);
}

static void port_down(struct port *p)
{
	for (unsigned i = 0; i < GROUPS; i++)
		imc_mcast_leave(p->holders[i]);
	imc_loop_run_until(p->loop, imc_loop_now(p->loop) + IMC_NSEC_PER_MSEC);
	imc_mcast_destroy(p->t);
	imc_sa_client_destroy(p->fake.client);
	imc_timer_cancel(p->loop, &p->fake.timer);
	free(p->fake.q);
	imc_loop_destroy(p->loop);
}

/* ---- a client process ---- */

struct result {
	unsigned long pairs;
	double secs;
	double p50_us, p99_us;
};

static struct {
	struct imc_mcastd *c;
	int fd;
	struct imc_rng rng;
	unsigned long started, done, target;
	unsigned held;
	struct imc_mcastd_member *hold[HOLD];
	bool latency;
	double t0;
	double *lat;
} C;

static int child_connect(void *ctx, const char *path)
{
	int fd = C.fd;

	(void)ctx;
	(void)path;
	C.fd = -1;
	return fd >= 0 ? fd : -ECONNREFUSED;
}

static void c_wait(bool (*until)(void))
{
	struct pollfd p = { .fd = imc_mcastd_fd(C.c), .events = POLLIN };

	while (!until()) {
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			die("poll", errno);
		if (imc_mcastd_process(C.c) == -EPROTONOSUPPORT)
			die("refused", EPROTONOSUPPORT);
	}
}

static bool c_up(void) { return imc_mcastd_connected(C.c); }
static bool c_held(void) { return C.held == HOLD; }
static bool c_done(void) { return C.done >= C.target; }

static void c_join(void);

static void on_pair(void *arg, struct imc_mcastd_member *m,
		    const struct imc_mcast_event *ev)
{
	(void)arg;
	if (ev->type != IMC_MCAST_EV_JOINED)
		die("client join", ev->status);
	if (C.latency)
		C.lat[C.done] = (mono() - C.t0) * 1e6;
	imc_mcastd_leave(m);
	C.done++;
	if (C.started < C.target)
		c_join();
}

static void c_join(void)
{
	struct imc_mcast_join_req req = req_of((unsigned)(imc_rng_next(&C.rng) %
							  GROUPS));
	struct imc_mcastd_member *m;
	int r;

	C.started++;
	if (C.latency)
		C.t0 = mono();
	if ((r = imc_mcastd_join(C.c, NULL, &req, on_pair, NULL, &m)))
		die("imc_mcastd_join", r);
}

static void on_hold(void *arg, struct imc_mcastd_member *m,
		    const struct imc_mcast_event *ev)
{
	(void)arg;
	(void)m;
	if (ev->type != IMC_MCAST_EV_JOINED)
		die("hold join", ev->status);
	C.held++;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void child(int fd, unsigned idx, unsigned long pairs, bool latency,
		  int sync_r, int res_w)
{
	struct imc_mcastd_config cfg;
	struct result res = { 0 };
	char b;
	int r;

	C.fd = fd;
	imc_rng_seed(&C.rng, idx + 1);
	imc_mcastd_config_init(&cfg);
	cfg.connect = child_connect;
	cfg.comm = "bench";
	if ((r = imc_mcastd_create(&cfg, &C.c)))
		die("imc_mcastd_create", r);
	c_wait(c_up);
	if (!latency) {
		/* Memory phase: HOLD members held until the daemon measured. */
		for (unsigned i = 0; i < HOLD; i++) {
			struct imc_mcast_join_req req = req_of(i % GROUPS);

			if ((r = imc_mcastd_join(C.c, NULL, &req, on_hold,
						 NULL, &C.hold[i])))
				die("join", r);
		}
		c_wait(c_held);
		if (write(res_w, &res, sizeof(res)) != sizeof(res) ||
		    read(sync_r, &b, 1) != 1)
			die("sync", errno);
		for (unsigned i = 0; i < HOLD; i++)
			imc_mcastd_leave(C.hold[i]);
	}
	C.latency = latency;
	C.target = pairs;
	if (latency) {
		C.lat = calloc(pairs, sizeof(*C.lat));
		if (!C.lat)
			die("calloc", ENOMEM);
	}
	res.secs = mono();
	for (unsigned i = 0; i < (latency ? 1 : WINDOW) && C.started < pairs;
	     i++)
		c_join();
	c_wait(c_done);
	res.secs = mono() - res.secs;
	res.pairs = C.done;
	if (latency) {
		qsort(C.lat, pairs, sizeof(*C.lat), cmp_d);
		res.p50_us = C.lat[pairs / 2];
		res.p99_us = C.lat[pairs * 99 / 100];
	}
	if (write(res_w, &res, sizeof(res)) != sizeof(res))
		die("write", errno);
	imc_mcastd_destroy(C.c);
	_exit(0);
}

/* ---- the daemon side ---- */

static struct port P;
static struct imc_mcastd_server *S;

static pid_t spawn(unsigned idx, unsigned long pairs, bool latency,
		   int *sync_w, int *res_r)
{
	struct imc_mcastd_cred cr = { .uid = (uint32_t)getuid() };
	int sv[2], sy[2], rs[2], r;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
	    pipe(sy) || pipe(rs))
		die("socketpair", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		/* Only its own ends: a client that holds another's socket
		 * would hide that one's exit from the daemon. */
		int a = fcntl(sv[0], F_DUPFD, 64), b = fcntl(sy[0], F_DUPFD, 64);
		int w = fcntl(rs[1], F_DUPFD, 64);

		if (a < 0 || b < 0 || w < 0 || dup2(a, 3) < 0 ||
		    dup2(b, 4) < 0 || dup2(w, 5) < 0 ||
		    close_range(6, ~0u, 0) < 0)
			die("dup2", errno);
		child(3, idx, pairs, latency, 4, 5);
	}
	close(sv[0]);
	close(sy[0]);
	close(rs[1]);
	cr.pid = (uint32_t)pid;
	if ((r = imc_mcastd_server_accept(S, sv[1], &cr, NULL)))
		die("accept", r);
	*sync_w = sy[1];
	*res_r = rs[0];
	return pid;
}

/* Runs the daemon's loop until fd (not one of the loop's) is readable:
 * the loop waits at most 1 ms at a time, so a result is seen in time. */
static void serve_until(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, 0) == 0)
		imc_loop_run_until(P.loop, imc_loop_now(P.loop) +
					   IMC_NSEC_PER_MSEC);
}

static double inproc_latency(double *p99)
{
	static double lat[LAT_JOINS];
	struct port q;
	unsigned long got;

	port_up(&q);
	for (unsigned i = 0; i < LAT_JOINS; i++) {
		struct imc_mcast_join_req req = req_of(i % GROUPS);
		struct imc_mcast_member *m;
		unsigned before = holders_joined;
		double t0 = mono();

		if (imc_mcast_join(q.t, &req, on_holder, NULL, &m))
			die("join", EIO);
		while (holders_joined == before)
			imc_loop_run_once(q.loop);
		lat[i] = (mono() - t0) * 1e6;
		imc_mcast_leave(m);
	}
	got = LAT_JOINS;
	qsort(lat, got, sizeof(*lat), cmp_d);
	port_down(&q);
	*p99 = lat[got * 99 / 100];
	return lat[got / 2];
}

/* One client, one join at a time. */
static void daemon_latency(unsigned idx, struct result *lat)
{
	struct imc_mcastd_server_stats st;
	int sw, rr;

	spawn(idx, LAT_JOINS, true, &sw, &rr);
	serve_until(rr);
	if (read(rr, lat, sizeof(*lat)) != sizeof(*lat))
		die("read", errno);
	do {
		imc_loop_run_once(P.loop);
		imc_mcastd_server_get_stats(S, &st);
	} while (st.conns);
	while (wait(NULL) > 0)
		;
	close(sw);
	close(rr);
}

static void daemon_up(void)
{
	struct imc_mcastd_server_config cfg;
	struct imc_mcastd_port_desc d = { 0 };
	int r;

	port_up(&P);
	imc_mcastd_server_config_init(&cfg);
	cfg.limits.in_flight = 2 * HOLD;   /* the memory phase sends HOLD */
	if ((r = imc_mcastd_server_create(P.loop, &cfg, &S)))
		die("server", r);
	imc_gid_set(&d.gid, 0xfe80000000000000ull, 2);
	if ((r = imc_mcastd_server_add_port(S, &d, P.t, NULL)))
		die("add_port", r);
}

int main(int argc, char **argv)
{
	unsigned long pairs = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
	unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 10;
	struct imc_mcastd_server_stats st;
	int sync_w[64], res_r[64];
	struct result res[64], lat;
	size_t h0, h1, h2;
	double t0, c0, wall, cpu, ip50, ip99;
	unsigned long total = 0;
	uint64_t mads0, joins0;

	if (!pairs || !n || n > 64)
		die("usage: bench_mcastd [PAIRS_PER_CLIENT [CLIENTS<=64]]", EINVAL);
	signal(SIGPIPE, SIG_IGN);
	daemon_up();

	h0 = heap();
	for (unsigned i = 0; i < n; i++)
		spawn(i, pairs, false, &sync_w[i], &res_r[i]);
	do {
		imc_loop_run_once(P.loop);
		imc_mcastd_server_get_stats(S, &st);
	} while (st.msgs_in < n);   /* every hello */
	h1 = heap();
	for (unsigned i = 0; i < n; i++) {
		serve_until(res_r[i]);
		if (read(res_r[i], &res[i], sizeof(res[i])) != sizeof(res[i]))
			die("read", errno);
	}
	h2 = heap();
	printf("bench_mcastd: %u clients, %d groups joined at the SA "
	       "beforehand\n", n, GROUPS);
	printf("  memory: %.0f bytes per client connection, %.0f bytes per "
	       "member (%u clients x %d members held)\n",
	       (double)(h1 - h0) / n, (double)(h2 - h1) / (n * HOLD), n, HOLD);

	{
		struct imc_mcast_stats ts;

		imc_mcast_get_stats(P.t, &ts);
		mads0 = ts.mads_sent;
		imc_mcastd_server_get_stats(S, &st);
		joins0 = st.joins;
	}
	t0 = mono();
	c0 = cpu_self();
	for (unsigned i = 0; i < n; i++)
		if (write(sync_w[i], "g", 1) != 1)
			die("write", errno);
	for (unsigned i = 0; i < n; i++) {
		serve_until(res_r[i]);
		if (read(res_r[i], &res[i], sizeof(res[i])) != sizeof(res[i]))
			die("read", errno);
		total += res[i].pairs;
	}
	wall = mono() - t0;
	cpu = cpu_self() - c0;
	do {
		imc_loop_run_once(P.loop);
		imc_mcastd_server_get_stats(S, &st);
	} while (st.conns);
	while (wait(NULL) > 0)
		;
	{
		struct imc_mcast_stats ts;

		imc_mcast_get_stats(P.t, &ts);
		printf("  the daemon served %" PRIu64 " joins in that phase; SA "
		       "MADs sent meanwhile: %" PRIu64 "\n", st.joins - joins0,
		       ts.mads_sent - mads0);
	}
	printf("  throughput: %lu join+leave pairs (window %d per client, "
	       "no MAD): %.0f pairs/s wall, %.0f pairs/s per daemon CPU "
	       "second (daemon CPU %.2f s of %.2f s wall)\n", total, WINDOW,
	       (double)total / wall, (double)total / cpu, cpu, wall);

	daemon_latency(n, &lat);
	ip50 = inproc_latency(&ip99);
	printf("  join latency (%d joins, one at a time): through the daemon "
	       "p50 %.1f us p99 %.1f us; in-process tracker p50 %.1f us "
	       "p99 %.1f us\n", LAT_JOINS, lat.p50_us, lat.p99_us, ip50, ip99);
	for (unsigned i = 0; i < n; i++) {
		close(sync_w[i]);
		close(res_r[i]);
	}
	imc_mcastd_server_destroy(S);
	port_down(&P);
	return 0;
}
