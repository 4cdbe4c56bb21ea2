/* ibmcastd's server core and client library on the embedded fabric:
 * several client connections of one daemon over socketpairs on a virtual
 * loop, the SA engine answering the daemon's tracker.
 *
 * Shown here: one membership per port at the SA holding the union of
 * every client's bits, a Delete only for the bits whose last holder left;
 * the callback contract across the process boundary rule by rule; QPs
 * attached after the SA answered and detached before the Delete; a
 * client that dies has its members left at once and nobody else
 * notices; a malformed, oversized or wrong-version message closes only
 * its client; a client names only its own handles; limits; the authorize
 * hook's refusal and revocation; show; clean shutdown; and a daemon
 * killed and started again (clients re-join, the audit deletes what
 * nobody wants, nothing is held twice). Every test ends with nothing
 * alive and no timer armed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>

#include "mcastd_world.h"
#include "mcastd/proto.h"

#define G1 "ff12:e001::1"
#define G2 "ff12:e001::2"
#define G3 "ff12:e001::3"

struct th {
	struct wclient *wc;
	struct imc_mcastd_member *m;
	unsigned events, joined, errors, rejoining, waiting;
	int status;
	bool left;
	bool leave_in_cb;
	bool destroy_in_cb;
	uint8_t js;
	struct imc_gid mgid;
	enum imc_mcast_event_type last;
};

static void th_cb(void *arg, struct imc_mcastd_member *m,
		  const struct imc_mcast_event *ev)
{
	struct th *h = arg;

	assert_false(WW->in_api);          /* rule 1 */
	assert_false(h->left);             /* rule 3 */
	assert_ptr_equal(h->m, m);
	if (h->events && h->last == IMC_MCAST_EV_ERROR)
		fail_msg("an event after ERROR");
	h->events++;
	h->last = ev->type;
	switch (ev->type) {
	case IMC_MCAST_EV_JOINED:
		h->joined++;
		assert_non_null(ev->rec);
		assert_true(imc_gid_equal(&ev->rec->mgid, &h->mgid));
		assert_int_equal(ev->rec->join_state & h->js, h->js);
		assert_int_equal(imc_mcastd_member_state(m), IMC_MCAST_JOINED);
		break;
	case IMC_MCAST_EV_ERROR:
		h->errors++;
		h->status = ev->status;
		break;
	case IMC_MCAST_EV_REJOINING:
		h->rejoining++;
		break;
	case IMC_MCAST_EV_WAITING:
		h->waiting++;
		h->status = ev->status;
		break;
	}
	if (h->leave_in_cb) {              /* rule 4 */
		h->left = true;
		imc_mcastd_leave(m);
	}
	if (h->destroy_in_cb) {
		imc_mcastd_destroy(h->wc->c);
		h->wc->c = NULL;
	}
}

static void th_join(struct th *h, struct wclient *wc, const char *mgid,
		    uint8_t js, void *qp)
{
	struct imc_mcast_join_req req;

	memset(h, 0, sizeof(*h));
	memset(&req, 0, sizeof(req));
	h->wc = wc;
	h->js = js;
	h->mgid = fx_mgid(mgid);
	req.rec = fx_create_rec(&h->mgid, DLID, js);
	req.comp_mask = CREATE_MASK;
	req.join_state = js;
	req.qp = qp;
	WW->in_api = true;
	assert_int_equal(imc_mcastd_join(wc->c, NULL, &req, th_cb, h, &h->m),
			 0);
	WW->in_api = false;
}

static void th_leave(struct th *h)
{
	WW->in_api = true;
	imc_mcastd_leave(h->m);
	WW->in_api = false;
	h->left = true;
}

/* The other port joins (a standalone tracker: another host). */
static void on_other(void *arg, struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev)
{
	(void)m;
	*(int *)arg = ev->type == IMC_MCAST_EV_JOINED ? 1 : -1;
	if (getenv("IMC_MCASTD_TRACE"))
		printf("other: %s %d\n", imc_mcast_event_str(ev->type), ev->status);
}

static struct imc_mcast_member *other_join(const char *mgid, uint8_t js,
					   int *res)
{
	struct imc_mcast_join_req req = { 0 };
	struct imc_mcast_member *m;
	struct imc_gid g = fx_mgid(mgid);

	req.rec = fx_create_rec(&g, OLID, js);
	req.comp_mask = CREATE_MASK;
	req.join_state = js;
	assert_int_equal(imc_mcast_join(WW->ports[1].t, &req, on_other, res,
					&m), 0);
	return m;
}

static int qp_a, qp_b;   /* the clients' QPs (opaque) */

static struct wclient CL[4];
static struct wclient *CLP[4] = { &CL[0], &CL[1], &CL[2], &CL[3] };

static int setup(void **state)
{
	(void)state;
	w_world_init();
	memset(CL, 0, sizeof(CL));
	w_set_clients(CLP, 4);
	daemon_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 4; i++)
		if (CL[i].c)
			w_client_destroy(&CL[i]);
	w_run_for(10 * MS);
	w_world_fini();
	return 0;
}

static size_t tracker_members(void)
{
	struct imc_mcast_stats st;

	imc_mcast_get_stats(WW->ports[0].t, &st);
	return st.members;
}

/* ---- the union, one membership, last holder ---- */

static void test_union_and_last_holder(void **state)
{
	struct th a, a2, b, c;
	struct imc_mcast_member *om;
	struct imc_gid g = fx_mgid(G1);
	int ores = 0;

	(void)state;
	om = other_join(G1, IMC_JOIN_FULL, &ores);
	w_run_for(10 * MS);
	assert_int_equal(ores, 1);
	for (int i = 0; i < 3; i++)
		w_client_new(&CL[i], 1 + i, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	th_join(&a2, &CL[1], G1, IMC_JOIN_FULL, NULL);
	th_join(&b, &CL[1], G1, IMC_JOIN_NON, &qp_b);
	th_join(&c, &CL[2], G1, IMC_JOIN_SENDONLY_NON, NULL);
	w_run_for(20 * MS);
	assert_int_equal(a.joined + a2.joined + b.joined + c.joined, 4);
	assert_int_equal(a.events + a2.events + b.events + c.events, 4);
	/* One membership of the daemon's port, the union of the bits. */
	assert_int_equal(w_sa_js(&g, DLID), 0x7);
	assert_int_equal(w_sa_js(&g, OLID), IMC_JOIN_FULL);
	assert_int_equal(w_sa_memberships(DLID), 1);
	/* QPs: attached after the SA answered, before JOINED. */
	assert_int_equal(CL[0].attaches, 1);
	assert_int_equal(CL[0].js_at_attach & IMC_JOIN_FULL, IMC_JOIN_FULL);
	assert_int_equal(CL[1].attaches, 1);
	assert_int_equal(CL[2].attaches, 0);   /* send-only: no QP */

	/* A FullMember leaves; another process still holds the bit. */
	th_leave(&a);
	assert_int_equal(CL[0].detaches, 1);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g, DLID), 0x7);
	th_leave(&a2);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g, DLID), 0x6);
	/* NonMember: detached while the SA still held the bit. */
	th_leave(&b);
	assert_int_equal(CL[1].detaches, 1);
	assert_int_equal(CL[1].js_at_detach & IMC_JOIN_NON, IMC_JOIN_NON);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g, DLID), IMC_JOIN_SENDONLY_NON);
	th_leave(&c);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g, DLID), 0);
	assert_int_equal(w_sa_memberships(DLID), 0);
	/* The other port's membership was never touched. */
	assert_int_equal(w_sa_js(&g, OLID), IMC_JOIN_FULL);
	assert_int_equal(tracker_members(), 0);
	imc_mcast_leave(om);
}

/* ---- callback rules ---- */

static void test_rule2_once(void **state)
{
	struct th a, b;

	(void)state;
	w_client_new(&CL[0], 1, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, NULL);
	/* NonMember of a group nobody created: the SA refuses to create it
	 * (IBA 15.2.5.17: a group is created by a full member), so the
	 * member waits for the group (status -ENOENT), once, and stays
	 * pending: its request is not completed by the wait. */
	th_join(&b, &CL[0], G2, IMC_JOIN_NON, NULL);
	assert_int_equal(a.events + b.events, 0);   /* rule 1 */
	w_run_for(50 * MS);
	assert_int_equal(a.events, 1);
	assert_int_equal(a.joined, 1);
	assert_int_equal(b.events, 1);
	assert_int_equal(b.waiting, 1);
	assert_int_equal(b.errors, 0);
	assert_int_equal(b.status, -ENOENT);
	assert_int_equal(imc_mcastd_member_state(b.m), IMC_MCAST_WAITING);
	w_run_for(500 * MS);
	assert_int_equal(a.events + b.events, 2);
	th_leave(&a);
	th_leave(&b);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
}

static void test_rule3_no_callback_after_leave(void **state)
{
	struct th a, b;
	struct imc_gid g = fx_mgid(G1);

	(void)state;
	w_client_new(&CL[0], 1, false);
	/* Left before anything was answered. */
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	th_leave(&a);
	w_run_for(20 * MS);
	assert_int_equal(a.events, 0);
	assert_int_equal(w_sa_js(&g, DLID), 0);
	/* Left while the daemon's JOINED waits unread in the socket: the
	 * client's side does not run while the daemon answers. */
	th_join(&b, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	w_pump();
	w_set_clients(CLP, 0);
	w_run_for(20 * MS);
	w_set_clients(CLP, 4);
	assert_int_equal(w_sa_js(&g, DLID), IMC_JOIN_FULL);
	th_leave(&b);
	w_run_for(20 * MS);
	assert_int_equal(b.events, 0);
	assert_int_equal(CL[0].attaches, 0);   /* never attached */
	assert_int_equal(w_sa_js(&g, DLID), 0);
	assert_int_equal(tracker_members(), 0);
}

static void test_rule4_callback_frees(void **state)
{
	struct th a, b, c;
	struct imc_gid g = fx_mgid(G1);

	(void)state;
	w_client_new(&CL[0], 1, false);
	w_client_new(&CL[1], 2, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	a.leave_in_cb = true;   /* leaves its own member from JOINED */
	w_run_for(20 * MS);
	assert_int_equal(a.events, 1);
	assert_int_equal(CL[0].attaches, 1);
	assert_int_equal(CL[0].detaches, 1);
	/* A callback destroys its whole connection; the other member of
	 * that connection gets nothing after. */
	th_join(&b, &CL[1], G1, IMC_JOIN_FULL, &qp_b);
	th_join(&c, &CL[1], G2, IMC_JOIN_FULL, &qp_b);
	b.destroy_in_cb = true;
	w_run_for(20 * MS);
	assert_null(CL[1].c);
	assert_int_equal(b.events, 1);
	assert_true(c.events <= 1);
	b.left = c.left = true;
	w_run_for(20 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
	assert_int_equal(CL[1].attaches, CL[1].detaches);
	(void)g;
}

/* ---- a client dies ---- */

static void test_client_dies(void **state)
{
	struct th a1, a2, b;
	struct imc_gid g1 = fx_mgid(G1), g2 = fx_mgid(G2);
	struct imc_mcastd_server_stats st;

	(void)state;
	w_client_new(&CL[0], 1, false);
	w_client_new(&CL[1], 2, false);
	th_join(&a1, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	th_join(&a2, &CL[0], G2, IMC_JOIN_FULL, &qp_a);
	th_join(&b, &CL[1], G1, IMC_JOIN_NON, &qp_b);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g1, DLID), 0x3);
	assert_int_equal(w_sa_js(&g2, DLID), 0x1);
	assert_int_equal(tracker_members(), 3);
	/* Its socket closes (exit, SIGKILL): the daemon leaves its members
	 * in the very round that sees the EOF, no time passing. */
	w_client_destroy(&CL[0]);
	a1.left = a2.left = true;
	assert_int_equal(imc_mcastd_server_io(WW->srv) > 0, 1);
	assert_int_equal(tracker_members(), 1);
	imc_mcastd_server_get_stats(WW->srv, &st);
	assert_int_equal(st.closed_eof, 1);
	assert_int_equal(st.conns, 1);
	w_run_for(20 * MS);
	/* The FullMember bit of g1 went (b holds only NonMember)... but the
	 * group lost its last full member: the SA deletes it (IBA
	 * 15.2.5.17), b hears of it (trap 67) and waits for the group to
	 * be created again. g2 is gone. */
	assert_int_equal(w_sa_js(&g2, DLID), 0);
	assert_int_equal(b.joined, 1);
	assert_int_equal(b.errors, 0);
	assert_int_equal(b.waiting, 1);
	assert_int_equal(b.events, 1 + b.rejoining + b.waiting);
	/* No group, no MLID: b's QP was detached with the wait (mcast.h),
	 * and its leave has nothing left to detach. */
	assert_int_equal(CL[1].attaches, 1);
	assert_int_equal(CL[1].detaches, 1);
	th_leave(&b);
	assert_int_equal(CL[1].detaches, 1);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
}

static void test_client_dies_others_keep(void **state)
{
	struct th a, b;
	struct imc_gid g1 = fx_mgid(G1);

	(void)state;
	w_client_new(&CL[0], 1, false);
	w_client_new(&CL[1], 2, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, NULL);
	th_join(&b, &CL[1], G1, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	w_client_destroy(&CL[0]);
	a.left = true;
	w_run_for(100 * MS);
	/* b still holds the bit: no Delete went, b heard nothing. */
	assert_int_equal(w_sa_js(&g1, DLID), IMC_JOIN_FULL);
	assert_int_equal(b.events, 1);
	th_leave(&b);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g1, DLID), 0);
}

/* ---- bad input closes one client ---- */

static int raw_conn(unsigned uid)
{
	struct imc_mcastd_cred cr = { .uid = uid, .gid = uid };
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(imc_mcastd_server_accept(WW->srv, sv[1], &cr, NULL),
			 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	return sv[0];
}

static void raw_send(int fd, const struct mcd_msg *m)
{
	uint8_t buf[512];
	size_t n = mcd_encode(m, buf);

	assert_int_equal(write(fd, buf, n), (ssize_t)n);
}

static void raw_hello(int fd, uint16_t version)
{
	struct mcd_msg m = { .type = MCD_HELLO };

	m.u.hello.version = version;
	strcpy(m.u.hello.comm, "raw");
	raw_send(fd, &m);
}

/* Reads one message; false at EOF or nothing. */
static bool raw_recv(int fd, struct mcd_msg *m, bool *eof)
{
	uint8_t buf[1024];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK);
	int f;

	*eof = n == 0;
	if (n < 8)
		return false;
	f = mcd_frame(buf, (size_t)n, sizeof(buf));
	assert_true(f > 0);
	n = recv(fd, buf, (size_t)f, 0);
	assert_int_equal(n, f);
	assert_int_equal(mcd_decode(m, buf, (size_t)n), 0);
	return true;
}

static void test_malformed_closes_only_that_client(void **state)
{
	static const uint8_t junk[] = { 0, 0, 0, 12, 0, 4, 0, 0,
					1, 2, 3, 4 };   /* JOIN, too short */
	struct imc_mcastd_server_stats st;
	struct mcd_msg m;
	struct th a, b;
	bool eof;
	unsigned from = WW->nlog;
	int fd;

	(void)state;
	w_client_new(&CL[0], 1, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	fd = raw_conn(1001);
	raw_hello(fd, IMC_MCASTD_PROTO_VERSION);
	w_run_for(1 * MS);
	assert_true(raw_recv(fd, &m, &eof));
	assert_int_equal(m.type, MCD_WELCOME);
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	w_run_for(1 * MS);
	assert_false(raw_recv(fd, &m, &eof));
	assert_true(eof);
	close(fd);
	assert_true(w_logged(from, "malformed"));
	/* Nobody else noticed. */
	th_join(&b, &CL[0], G2, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	assert_int_equal(a.events, 1);
	assert_int_equal(b.joined, 1);
	imc_mcastd_server_get_stats(WW->srv, &st);
	assert_int_equal(st.closed_error, 1);
	assert_int_equal(st.conns, 1);
	th_leave(&a);
	th_leave(&b);
}

static void test_oversized_closes(void **state)
{
	uint8_t big[8] = { 0, 0x10, 0, 0, 0, 4, 0, 0 };  /* 1 MiB JOIN */
	struct mcd_msg m;
	bool eof;
	unsigned from = WW->nlog;
	int fd;

	(void)state;
	fd = raw_conn(1001);
	raw_hello(fd, IMC_MCASTD_PROTO_VERSION);
	w_run_for(1 * MS);
	assert_true(raw_recv(fd, &m, &eof));
	assert_int_equal(m.type, MCD_WELCOME);
	assert_int_equal(write(fd, big, sizeof(big)), sizeof(big));
	w_run_for(1 * MS);
	assert_false(raw_recv(fd, &m, &eof));
	assert_true(eof);
	assert_true(w_logged(from, "oversized"));
	close(fd);
}

static void test_version_refused(void **state)
{
	struct mcd_msg m;
	bool eof;
	int fd;

	(void)state;
	fd = raw_conn(1001);
	raw_hello(fd, IMC_MCASTD_PROTO_VERSION + 1);
	w_run_for(1 * MS);
	assert_true(raw_recv(fd, &m, &eof));
	assert_int_equal(m.type, MCD_REFUSE);
	assert_int_equal(m.u.refuse.status, -EPROTONOSUPPORT);
	assert_int_equal(m.u.refuse.version, IMC_MCASTD_PROTO_VERSION);
	assert_non_null(strstr(m.u.refuse.text, "version 2 is not supported"));
	assert_false(raw_recv(fd, &m, &eof));
	assert_true(eof);
	close(fd);
}

/* A client can name only its own handles: another connection's LEAVE of
 * the same handle number changes nothing. */
static void test_own_handles_only(void **state)
{
	struct mcd_msg m = { .type = MCD_LEAVE };
	struct imc_gid g1 = fx_mgid(G1);
	struct th a;
	bool eof;
	int fd;

	(void)state;
	w_client_new(&CL[0], 1, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	fd = raw_conn(1001);
	raw_hello(fd, IMC_MCASTD_PROTO_VERSION);
	m.u.leave.handle = (uint64_t)1 << 32 | 0;   /* a's handle */
	raw_send(fd, &m);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g1, DLID), IMC_JOIN_FULL);
	assert_int_equal(tracker_members(), 1);
	assert_true(raw_recv(fd, &m, &eof));        /* WELCOME */
	assert_false(raw_recv(fd, &m, &eof));
	assert_false(eof);                          /* still open */
	close(fd);
	th_leave(&a);
}

/* ---- limits ---- */

/* Connects as w_connect() does, but hands the client its end even when
 * the daemon refused the connection (the REFUSE waits in it). */
static int connect_refused(void *ctx, const char *path)
{
	struct imc_mcastd_cred cr = { .uid = *(unsigned *)ctx };
	struct mcd_msg m;
	uint8_t buf[512];
	int sv[2];
	ssize_t n;

	(void)path;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(imc_mcastd_server_accept(WW->srv, sv[1], &cr, NULL),
			 -EUSERS);
	close(sv[1]);
	/* What the daemon wrote: a REFUSE that says why. */
	n = recv(sv[0], buf, sizeof(buf), MSG_PEEK);
	assert_true(n > 0);
	assert_int_equal(mcd_decode(&m, buf, (size_t)n), 0);
	assert_int_equal(m.type, MCD_REFUSE);
	assert_int_equal(m.u.refuse.status, -EUSERS);
	assert_non_null(strstr(m.u.refuse.text, "too many connections"));
	return sv[0];
}

static void test_limits(void **state)
{
	struct th h[4];
	struct wclient extra = { 0 };
	struct imc_mcastd_config cfg;
	struct imc_mcastd *c2;

	(void)state;
	daemon_kill();
	WW->scfg.limits.members = 2;
	WW->scfg.limits.in_flight = 1;
	WW->scfg.limits.conns_per_uid = 1;
	daemon_start();
	w_client_new(&CL[0], 1, false);
	/* The second join in flight at once is refused... */
	th_join(&h[0], &CL[0], G1, IMC_JOIN_FULL, NULL);
	th_join(&h[1], &CL[0], G2, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	assert_int_equal(h[0].joined, 1);
	assert_int_equal(h[1].errors, 1);
	assert_int_equal(h[1].status, -EAGAIN);
	/* ...and over the member limit too. */
	th_join(&h[2], &CL[0], G3, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	assert_int_equal(h[2].errors, 1);
	assert_int_equal(h[2].status, -EDQUOT);
	/* Connections per uid, at accept. */
	imc_mcastd_config_init(&cfg);
	cfg.clock = w_clock;
	cfg.connect = w_connect;
	extra.uid = WW->uid;
	cfg.connect_ctx = &extra.uid;
	assert_int_equal(imc_mcastd_create(&cfg, &c2), -EUSERS);
	/* A client that reached the socket is told why, and stops. */
	cfg.connect = connect_refused;
	assert_int_equal(imc_mcastd_create(&cfg, &c2), 0);
	assert_int_equal(imc_mcastd_process(c2), -EUSERS);
	{
		struct imc_mcast_join_req req = { 0 };
		struct imc_mcastd_member *m;

		req.join_state = IMC_JOIN_FULL;
		assert_int_equal(imc_mcastd_join(c2, NULL, &req, th_cb, NULL,
						 &m), -EUSERS);
	}
	assert_false(imc_mcastd_connected(c2));
	imc_mcastd_destroy(c2);
	for (int i = 0; i < 3; i++)
		th_leave(&h[i]);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
}

/* ---- authorization ---- */

static int authorize(void *ctx, const struct imc_mcastd_cred *cr,
		     const struct imc_mcastd_port_desc *port,
		     const struct imc_mcast_join_req *req)
{
	struct imc_gid g2 = fx_mgid(G2);
	unsigned *banned = ctx;

	(void)port;
	if (cr->uid == 1001 && imc_gid_equal(&req->rec.mgid, &g2))
		return -EACCES;
	if (*banned && cr->uid == *banned)
		return -EPERM;
	return 0;
}

static unsigned banned;

static void test_authorize(void **state)
{
	struct th a, b, c;
	struct imc_gid g1 = fx_mgid(G1), g2 = fx_mgid(G2);
	unsigned from = WW->nlog;

	(void)state;
	daemon_kill();
	banned = 0;
	WW->scfg.authorize = authorize;
	WW->scfg.ctx = &banned;
	daemon_start();
	CL[0].uid = 1000;
	CL[1].uid = 1001;
	w_client_new(&CL[0], 1, false);
	w_client_new(&CL[1], 2, false);
	th_join(&a, &CL[0], G2, IMC_JOIN_FULL, &qp_a);
	th_join(&b, &CL[1], G2, IMC_JOIN_FULL, &qp_b);
	th_join(&c, &CL[1], G1, IMC_JOIN_FULL, &qp_b);
	w_run_for(20 * MS);
	assert_int_equal(a.joined, 1);
	assert_int_equal(b.errors, 1);
	assert_int_equal(b.status, -EACCES);
	assert_int_equal(b.events, 1);
	assert_int_equal(c.joined, 1);
	assert_true(w_logged(from, "refused"));
	assert_true(w_logged(from, "uid 1001"));
	/* The policy changes: uid 1000 may join nothing. Its member is
	 * revoked: detached in the client first, then the Delete. */
	banned = 1000;
	assert_int_equal(imc_mcastd_server_reauthorize(WW->srv), 1);
	w_run_for(20 * MS);
	assert_int_equal(a.errors, 1);
	assert_int_equal(a.status, -EPERM);
	assert_int_equal(CL[0].detaches, 1);
	assert_int_equal(CL[0].js_at_detach, IMC_JOIN_FULL);
	assert_int_equal(w_sa_js(&g2, DLID), 0);
	assert_int_equal(w_sa_js(&g1, DLID), IMC_JOIN_FULL);
	th_leave(&a);
	th_leave(&b);
	th_leave(&c);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
	WW->scfg.authorize = NULL;
}

/* A client that answers a revocation with a LEAVE instead of the
 * acknowledgement is settled as well: nothing closes it later. */
static void test_revoke_answered_by_leave(void **state)
{
	struct mcd_msg m = { .type = MCD_JOIN };
	struct imc_mcastd_server_stats st;
	struct imc_gid g1 = fx_mgid(G1);
	bool eof;
	int fd;

	(void)state;
	daemon_kill();
	banned = 0;
	WW->scfg.authorize = authorize;
	WW->scfg.ctx = &banned;
	daemon_start();
	fd = raw_conn(1002);
	raw_hello(fd, IMC_MCASTD_PROTO_VERSION);
	m.u.join.handle = (uint64_t)1 << 32;
	m.u.join.req.rec = fx_create_rec(&g1, DLID, IMC_JOIN_FULL);
	m.u.join.req.comp_mask = CREATE_MASK;
	m.u.join.req.join_state = IMC_JOIN_FULL;
	raw_send(fd, &m);
	w_run_for(20 * MS);
	assert_true(raw_recv(fd, &m, &eof));       /* WELCOME */
	assert_true(raw_recv(fd, &m, &eof));
	assert_int_equal(m.type, MCD_EVENT);
	assert_int_equal(m.u.event.ev, IMC_MCAST_EV_JOINED);
	assert_int_equal(w_sa_js(&g1, DLID), IMC_JOIN_FULL);
	banned = 1002;
	assert_int_equal(imc_mcastd_server_reauthorize(WW->srv), 1);
	w_run_for(1 * MS);
	assert_true(raw_recv(fd, &m, &eof));
	assert_int_equal(m.type, MCD_REVOKE);
	assert_int_equal(m.u.revoke.status, -EPERM);
	/* No Delete before the client answered. */
	assert_int_equal(w_sa_js(&g1, DLID), IMC_JOIN_FULL);
	m.type = MCD_LEAVE;
	m.u.leave.handle = (uint64_t)1 << 32;
	raw_send(fd, &m);
	w_run_for(500 * MS);                        /* past ack_timeout */
	assert_int_equal(w_sa_js(&g1, DLID), 0);
	assert_false(raw_recv(fd, &m, &eof));
	assert_false(eof);                          /* still open */
	imc_mcastd_server_get_stats(WW->srv, &st);
	assert_int_equal(st.conns, 1);
	assert_int_equal(st.closed_error, 0);
	close(fd);
	WW->scfg.authorize = NULL;
}

/* ---- show ---- */

struct show_res {
	int calls;
	int status;
	size_t ports, clients, groups, members[4];
	bool self[4];
	uint32_t uid[4];
	uint8_t js;
	uint16_t mlid;
	char comm[IMC_MCASTD_COMMLEN];
};

static void on_show(void *arg, int status, const struct imc_mcastd_show *s)
{
	struct show_res *r = arg;

	assert_false(WW->in_api);
	r->calls++;
	r->status = status;
	if (status)
		return;
	r->ports = s->n_ports;
	r->clients = s->n_clients;
	r->groups = s->n_groups;
	for (size_t i = 0; i < s->n_clients && i < 4; i++) {
		r->members[i] = s->clients[i].n_members;
		r->self[i] = s->clients[i].self;
		r->uid[i] = s->clients[i].uid;
	}
	memcpy(r->comm, s->clients[0].comm, sizeof(r->comm));
	if (s->n_groups) {
		r->js = s->groups[0].join_state;
		r->mlid = s->groups[0].mlid;
	}
	assert_string_equal(s->ports[0].device, "sim0");
}

static void test_show(void **state)
{
	struct th a, b, c;
	struct show_res r = { 0 };

	(void)state;
	CL[1].uid = 1001;
	w_client_new(&CL[0], 1, false);
	w_client_new(&CL[1], 2, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, NULL);
	th_join(&b, &CL[1], G1, IMC_JOIN_NON, NULL);
	th_join(&c, &CL[1], G2, IMC_JOIN_FULL, NULL);
	w_run_for(20 * MS);
	WW->in_api = true;
	assert_int_equal(imc_mcastd_show(CL[1].c, on_show, &r), 0);
	WW->in_api = false;
	assert_int_equal(r.calls, 0);
	w_run_for(1 * MS);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.ports, 1);
	assert_int_equal(r.clients, 2);
	assert_int_equal(r.members[0], 1);
	assert_int_equal(r.members[1], 2);
	assert_false(r.self[0]);
	assert_true(r.self[1]);
	assert_int_equal(r.uid[1], 1001);
	assert_string_equal(r.comm, "wclient");
	assert_int_equal(r.groups, 2);
	assert_int_equal(r.js, 0x3);
	assert_true(r.mlid >= 0xc000);
	th_leave(&a);
	th_leave(&b);
	th_leave(&c);
}

/* ---- shutdown ---- */

static int shut_status = 1;
static unsigned shut_calls;

static void on_shut(void *arg, int status)
{
	(void)arg;
	shut_calls++;
	shut_status = status;
}

static void test_shutdown(void **state)
{
	struct th a, b;

	(void)state;
	shut_calls = 0;
	w_client_new(&CL[0], 1, false);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	th_join(&b, &CL[0], G2, IMC_JOIN_NON | IMC_JOIN_FULL, &qp_a);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_memberships(DLID), 2);
	assert_int_equal(imc_mcastd_server_shutdown(WW->srv, on_shut, NULL),
			 0);
	assert_int_equal(imc_mcastd_server_shutdown(WW->srv, on_shut, NULL),
			 -EALREADY);
	assert_int_equal(shut_calls, 0);
	w_run_for(200 * MS);
	assert_int_equal(shut_calls, 1);
	assert_int_equal(shut_status, 0);
	/* Detached while the SA still held the bits; then deleted. */
	assert_int_equal(CL[0].detaches, 2);
	assert_true(CL[0].js_at_detach != 0);
	assert_int_equal(a.status, -ESHUTDOWN);
	assert_int_equal(b.status, -ESHUTDOWN);
	assert_int_equal(w_sa_memberships(DLID), 0);
	th_leave(&a);
	th_leave(&b);
}

/* ---- the daemon dies and comes back ---- */

/* With the SM_Key, the first client to re-join a group after a restart
 * does not make the daemon give up the bits of another client still to
 * re-join within the grace period. */
static void test_restart_grace_holds_bits(void **state)
{
	struct th a, b, a2;
	struct imc_gid g1 = fx_mgid(G1);
	unsigned mads;

	(void)state;
	w_client_new(&CL[0], 1, true);
	w_client_new(&CL[1], 2, true);
	th_join(&a, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	th_join(&b, &CL[1], G1, IMC_JOIN_NON, &qp_b);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g1, DLID), 0x3);
	daemon_kill();
	/* a's process is slow to come back: gone for now. */
	w_client_destroy(&CL[0]);
	a.left = true;
	WW->scfg.sm_key = 1;
	daemon_start();
	w_run_for(100 * MS);
	assert_int_equal(b.joined, 2);
	assert_int_equal(b.rejoining, 1);
	/* FullMember kept although only b (NonMember) re-joined so far. */
	assert_int_equal(w_sa_js(&g1, DLID), 0x3);
	{
		struct imc_sa_stats st;

		imc_sa_get_stats(WW->f.sa, &st);
		mads = (unsigned)st.received;
	}
	w_client_new(&CL[0], 3, true);
	th_join(&a2, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	w_run_for(1000 * MS);                        /* past the grace */
	assert_int_equal(a2.joined, 1);
	assert_int_equal(b.events, 3);               /* nothing more */
	assert_int_equal(w_sa_js(&g1, DLID), 0x3);
	{
		struct imc_sa_stats st;

		/* a2's join was answered without a MAD. */
		imc_sa_get_stats(WW->f.sa, &st);
		assert_int_equal((unsigned)st.received, mads);
	}
	th_leave(&a2);
	th_leave(&b);
	w_run_for(50 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
}

static void daemon_restart(bool trusted)
{
	struct th a1, a2, b2, b3;
	struct imc_gid g1 = fx_mgid(G1), g2 = fx_mgid(G2), g3 = fx_mgid(G3);
	struct imc_mcast_member *om;
	int ores = 0;

	om = other_join(G2, IMC_JOIN_FULL, &ores);
	w_client_new(&CL[0], 1, true);
	w_client_new(&CL[1], 2, true);
	th_join(&a1, &CL[0], G1, IMC_JOIN_FULL, &qp_a);
	th_join(&a2, &CL[0], G2, IMC_JOIN_NON, &qp_a);
	th_join(&b2, &CL[1], G2, IMC_JOIN_FULL, &qp_b);
	th_join(&b3, &CL[1], G3, IMC_JOIN_FULL | IMC_JOIN_NON, &qp_b);
	w_run_for(20 * MS);
	assert_int_equal(w_sa_js(&g2, DLID), 0x3);
	assert_int_equal(w_sa_memberships(DLID), 3);

	daemon_kill();
	w_run_for(5 * MS);
	/* Clients saw it: JOINED members re-joining, QPs still attached. */
	assert_int_equal(a1.rejoining, 1);
	assert_int_equal(b3.rejoining, 1);
	assert_int_equal(CL[0].detaches, 0);
	/* b gives up g2 and g3 while no daemon runs. */
	th_leave(&b2);
	th_leave(&b3);
	w_run_for(100 * MS);
	/* The SA still holds what the dead daemon held. */
	assert_int_equal(w_sa_memberships(DLID), 3);

	/* Without the SM_Key the SA hides the JoinState of records: the
	 * audit deletes g3's bits one at a time, FullMember first (and
	 * with the port's last full bit the SA deletes the group, IBA
	 * 15.2.5.17). */
	WW->scfg.sm_key = trusted ? 1 : 0;
	daemon_start();
	w_run_for(3000 * MS);   /* backoff, re-joins, grace, audit */
	assert_int_equal(a1.joined, 2);
	assert_int_equal(a2.joined, 2);
	assert_int_equal(a1.last, IMC_MCAST_EV_JOINED);
	assert_int_equal(a1.events, 3);   /* JOINED REJOINING JOINED */
	/* g3 (nobody) deleted, g2's FullMember bit (nobody) deleted, g1
	 * kept: one membership each, nothing twice. */
	assert_int_equal(w_sa_js(&g1, DLID), IMC_JOIN_FULL);
	assert_int_equal(w_sa_js(&g2, DLID), IMC_JOIN_NON);
	assert_int_equal(w_sa_js(&g3, DLID), 0);
	assert_int_equal(w_sa_memberships(DLID), 2);
	assert_int_equal(w_sa_js(&g2, OLID), IMC_JOIN_FULL);
	{
		struct imc_mcastd_server_stats st;

		imc_mcastd_server_get_stats(WW->srv, &st);
		/* With the key the old bits were held through the grace
		 * period and given back to the tracker, which deleted the
		 * unwanted ones itself. */
		assert_int_equal(st.audit_deletes, trusted ? 0 : 1);
		if (!trusted)
			assert_true(w_logged(0, "JoinState 0x1 of"));
	}
	th_leave(&a1);
	th_leave(&a2);
	w_run_for(50 * MS);
	assert_int_equal(w_sa_memberships(DLID), 0);
	imc_mcast_leave(om);
}

static void test_daemon_restart(void **state)
{
	(void)state;
	daemon_restart(false);
}

static void test_daemon_restart_sm_key(void **state)
{
	(void)state;
	daemon_restart(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_union_and_last_holder,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rule2_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_rule3_no_callback_after_leave, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rule4_callback_frees,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_dies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_client_dies_others_keep,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_malformed_closes_only_that_client, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_oversized_closes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_version_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_own_handles_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_authorize, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_revoke_answered_by_leave,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_show, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_daemon_restart, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_daemon_restart_sm_key,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_grace_holds_bits,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
