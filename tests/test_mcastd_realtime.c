/* ibmcastd's server core and client library on real time and real
 * sockets: a listening Unix socket (the accept is this test's, as the
 * daemon process's is), the client's own connect() and backoff timer
 * (timerfd), imc_mcastd_loop_attach() on a real-time loop, a forked
 * client process killed with SIGKILL, and a daemon that goes away and
 * comes back while its client waits.
 *
 * The SA is a fake on the loop that answers every Set at once. Times are
 * printed, not asserted: the machine is shared. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/mcastd_server.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"

static struct {
	struct imc_loop *loop;
	struct imc_sa_client *sa;
	struct imc_mcast *t;
	struct imc_mcastd_server *srv;
	int lfd;
	struct imc_fd_watch lw;
	char path[108];
	uint8_t q[64][IMC_MAD_SIZE];
	size_t nq;
	struct imc_timer answer;
	pid_t child;                /* killed at teardown if still there */
} R;

static int fake_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct imc_sa_mad m;
	struct imc_mcmr r;

	(void)ctx;
	if (imc_sa_mad_unpack(&m, mad, len) < 0 || R.nq == 64)
		return -EINVAL;
	imc_mcmr_unpack(&r, m.data, sizeof(m.data));
	m.mad.method |= UMAD_METHOD_RESP_MASK;
	if (m.mad.method == (UMAD_METHOD_SET | UMAD_METHOD_RESP_MASK)) {
		m.mad.method = UMAD_METHOD_GET_RESP;
		r.mlid = 0xc001;
		r.mtu = 4;
		r.rate = 3;
		r.mtu_sel = r.rate_sel = r.life_sel = UMAD_SA_SELECTOR_EXACTLY;
	}
	m.sa.attr_offset = IMC_MCMR_SIZE / 8;
	imc_mcmr_pack(&r, m.data, sizeof(m.data));
	imc_sa_mad_pack(&m, R.q[R.nq++], IMC_MAD_SIZE);
	imc_timer_arm(R.loop, &R.answer, imc_loop_now(R.loop));
	return 0;
}

static void on_answer(struct imc_timer *t)
{
	size_t n = R.nq;
	uint8_t q[64][IMC_MAD_SIZE];

	(void)t;
	memcpy(q, R.q, n * IMC_MAD_SIZE);
	R.nq = 0;
	for (size_t i = 0; i < n; i++)
		imc_sa_client_recv(R.sa, q[i], IMC_MAD_SIZE);
}

static void on_listen(struct imc_fd_watch *w, unsigned ev)
{
	struct imc_mcastd_cred cr = { 0 };
	struct ucred uc;
	socklen_t l = sizeof(uc);
	int fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC);

	(void)ev;
	if (fd < 0)
		return;
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l), 0);
	cr.pid = (uint32_t)uc.pid;
	cr.uid = uc.uid;
	cr.gid = uc.gid;
	if (imc_mcastd_server_accept(R.srv, fd, &cr, NULL) < 0)
		close(fd);
}

static void daemon_up(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct imc_mcastd_server_config cfg;
	struct imc_mcastd_port_desc d = { 0 };

	imc_mcastd_server_config_init(&cfg);
	assert_int_equal(imc_mcastd_server_create(R.loop, &cfg, &R.srv), 0);
	imc_gid_set(&d.gid, 0xfe80000000000000ull, 2);
	assert_int_equal(imc_mcastd_server_add_port(R.srv, &d, R.t, NULL), 0);
	R.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(R.lfd >= 0);
	strcpy(sa.sun_path, R.path);
	unlink(R.path);
	assert_int_equal(bind(R.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(R.lfd, 16), 0);
	imc_fd_watch_init(&R.lw, R.lfd, on_listen);
	assert_int_equal(imc_loop_watch_fd(R.loop, &R.lw, IMC_EV_READ), 0);
}

static void daemon_down(void)
{
	imc_loop_unwatch_fd(R.loop, &R.lw);
	close(R.lfd);
	unlink(R.path);
	imc_mcastd_server_destroy(R.srv);
	R.srv = NULL;
}

static int setup(void **state)
{
	struct imc_sa_transport tr = { fake_send, NULL };
	struct imc_sa_client_config cc;
	struct imc_mcast_config mc;

	(void)state;
	memset(&R, 0, sizeof(R));
	snprintf(R.path, sizeof(R.path), "/tmp/imc-mcastd-test-%d.sock",
		 (int)getpid());
	assert_int_equal(imc_loop_create_realtime(&R.loop), 0);
	imc_timer_init(&R.answer, on_answer);
	imc_sa_client_config_init(&cc);
	assert_int_equal(imc_sa_client_create(R.loop, &tr, &cc, &R.sa), 0);
	imc_mcast_config_init(&mc);
	mc.subscribe = false;
	imc_gid_set(&mc.port_gid, 0xfe80000000000000ull, 2);
	assert_int_equal(imc_mcast_create(R.loop, R.sa, &mc, NULL, &R.t), 0);
	daemon_up();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (R.child > 0) {
		kill(R.child, SIGKILL);
		waitpid(R.child, NULL, 0);
	}
	if (R.srv)
		daemon_down();
	imc_loop_run_until(R.loop, imc_loop_now(R.loop) + IMC_NSEC_PER_MSEC);
	imc_mcast_destroy(R.t);
	imc_sa_client_destroy(R.sa);
	imc_timer_cancel(R.loop, &R.answer);
	assert_int_equal(imc_loop_destroy(R.loop), 0);
	return 0;
}

static size_t members(void)
{
	struct imc_mcast_stats st;

	imc_mcast_get_stats(R.t, &st);
	return st.members;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static struct imc_mcast_join_req req(void)
{
	struct imc_mcast_join_req r = { 0 };

	assert_int_equal(imc_gid_parse("ff12:e001::1", &r.rec.mgid), 0);
	r.rec.qkey = 0x80010000;
	r.rec.pkey = 0xffff;
	r.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
		      UMAD_SA_MCM_COMP_MASK_PORT_GID |
		      UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_PKEY |
		      UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	r.join_state = IMC_JOIN_FULL;
	return r;
}

/* Runs the loop until cond() or about 10 s. */
static bool run_until(bool (*cond)(void))
{
	for (int i = 0; i < 10000 && !cond(); i++)
		imc_loop_run_until(R.loop, imc_loop_now(R.loop) +
					   IMC_NSEC_PER_MSEC);
	return cond();
}

/* ---- a client on the same loop ---- */

static unsigned joined, rejoining, ups;

static void on_ev(void *arg, struct imc_mcastd_member *m,
		  const struct imc_mcast_event *ev)
{
	(void)arg;
	(void)m;
	if (ev->type == IMC_MCAST_EV_JOINED)
		joined++;
	if (ev->type == IMC_MCAST_EV_REJOINING)
		rejoining++;
}

static void on_conn(void *arg, bool up, int err)
{
	(void)arg;
	(void)err;
	ups += up;
}

static bool one_joined(void) { return joined == 1; }
static bool two_joined(void) { return joined == 2; }
static bool one_member(void) { return members() == 1; }
static bool no_member(void) { return members() == 0; }
static bool rejoined(void) { return rejoining == 1; }

static void test_loop_attach_and_restart(void **state)
{
	struct imc_mcastd_config cfg;
	struct imc_mcast_join_req r = req();
	struct imc_mcastd_member *m;
	struct imc_mcastd *c;
	double t0;

	(void)state;
	joined = rejoining = ups = 0;
	imc_mcastd_config_init(&cfg);
	cfg.path = R.path;
	cfg.conn_cb = on_conn;
	cfg.backoff_min = 5 * IMC_NSEC_PER_MSEC;
	cfg.backoff_max = 50 * IMC_NSEC_PER_MSEC;
	assert_int_equal(imc_mcastd_create(&cfg, &c), 0);
	assert_int_equal(imc_mcastd_loop_attach(c, R.loop), 0);
	assert_int_equal(imc_mcastd_join(c, NULL, &r, on_ev, NULL, &m), 0);
	assert_true(run_until(one_joined));
	assert_int_equal(ups, 1);
	assert_int_equal(members(), 1);

	/* The daemon goes away (its members with it: a new tracker would
	 * start empty; here the same one stays), then comes back. */
	daemon_down();
	assert_true(run_until(rejoined));
	assert_int_equal(members(), 0);
	t0 = now_ms();
	daemon_up();
	assert_true(run_until(two_joined));
	printf("  re-joined %.1f ms after the daemon came back\n",
	       now_ms() - t0);
	assert_int_equal(ups, 2);
	assert_int_equal(members(), 1);
	imc_mcastd_leave(m);
	assert_true(run_until(no_member));
	imc_mcastd_destroy(c);
}

static void test_no_daemon(void **state)
{
	struct imc_mcastd_config cfg;
	struct imc_mcastd *c;

	(void)state;
	imc_mcastd_config_init(&cfg);
	cfg.path = "/tmp/imc-mcastd-nobody-listens.sock";
	assert_int_equal(imc_mcastd_create(&cfg, &c), -ENOENT);
}

/* A client process killed with SIGKILL: its member is left as soon as
 * the daemon reads the EOF. */
static void test_sigkill(void **state)
{
	int sync[2];
	pid_t pid;
	char b;
	double t0;

	(void)state;
	joined = 0;
	assert_int_equal(pipe(sync), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct imc_mcastd_config cfg;
		struct imc_mcast_join_req r = req();
		struct imc_mcastd_member *m;
		struct imc_mcastd *c;
		struct pollfd p;

		imc_mcastd_config_init(&cfg);
		cfg.path = R.path;
		if (imc_mcastd_create(&cfg, &c) ||
		    imc_mcastd_join(c, NULL, &r, on_ev, NULL, &m))
			_exit(1);
		p.fd = imc_mcastd_fd(c);
		p.events = POLLIN;
		while (joined == 0) {
			poll(&p, 1, 100);
			imc_mcastd_process(c);
		}
		(void)!write(sync[1], "j", 1);
		for (;;)
			pause();
	}
	close(sync[1]);
	R.child = pid;
	{
		struct pollfd p = { .fd = sync[0], .events = POLLIN };

		while (poll(&p, 1, 0) == 0)
			imc_loop_run_until(R.loop, imc_loop_now(R.loop) +
						   IMC_NSEC_PER_MSEC);
	}
	assert_int_equal(read(sync[0], &b, 1), 1);
	assert_true(run_until(one_member));
	t0 = now_ms();
	kill(pid, SIGKILL);
	assert_true(run_until(no_member));
	printf("  member of the killed client left %.2f ms after SIGKILL\n",
	       now_ms() - t0);
	waitpid(pid, NULL, 0);
	R.child = 0;
	close(sync[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_loop_attach_and_restart,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_daemon, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sigkill, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
