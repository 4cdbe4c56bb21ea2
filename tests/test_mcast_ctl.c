/* The control socket of `ibmcast join` (src/umad/mcast_ctl.c): the listing
 * parser accepts what the writer writes and rejects damaged text; a server
 * on a real-time loop answers a client with its tracker's groups; the run
 * directory follows its precedence. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_client.h"

#include "ibmcast/mcast_ctl.h"

static const char good[] =
	"ibmcast-mcast 1\n"
	"port mlx5_0 1 fe80::2:c903:a:1 12 1 4242 verbs\n"
	"group ff12:401b:ffff::1 49152 1 1 3 1 11 65535 4 3 0 0 0 0 2\n"
	"group ff12:e001::2 49153 9 9 2 0 4660 32769 5 7 1 2 3 4 5\n"
	"end\n";

static void test_parse_good(void **state)
{
	struct imc_ctl_listing l;
	struct imc_gid g;

	assert_int_equal(imc_ctl_parse(good, &l), 0);
	assert_string_equal(l.device, "mlx5_0");
	assert_int_equal(l.port, 1);
	assert_int_equal(imc_gid_parse("fe80::2:c903:a:1", &g), 0);
	assert_true(imc_gid_equal(&l.port_gid, &g));
	assert_int_equal(l.lid, 12);
	assert_int_equal(l.sm_lid, 1);
	assert_int_equal(l.pid, 4242);
	assert_string_equal(l.watch, "verbs");
	assert_int_equal(l.n, 2);
	assert_int_equal(imc_gid_parse("ff12:e001::2", &g), 0);
	assert_true(imc_gid_equal(&l.groups[1].rec.mgid, &g));
	assert_int_equal(l.groups[0].rec.mlid, 0xc000);
	assert_int_equal(l.groups[0].members, 3);
	assert_true(l.groups[0].joined);
	assert_false(l.groups[1].joined);
	assert_int_equal(l.groups[1].join_state, 9);
	assert_int_equal(l.groups[1].rec.qkey, 0x1234);
	assert_int_equal(l.groups[1].rec.pkey, 0x8001);
	assert_int_equal(l.groups[1].rec.mtu, 5);
	assert_int_equal(l.groups[1].rec.rate, 7);
	assert_int_equal(l.groups[1].rec.sl, 1);
	assert_int_equal(l.groups[1].rec.tclass, 2);
	assert_int_equal(l.groups[1].rec.flow_label, 3);
	assert_int_equal(l.groups[1].rec.hop_limit, 4);
	assert_int_equal(l.groups[1].rec.scope, 5);
	imc_ctl_listing_free(&l);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"ibmcast-mcast 2\nport d 1 fe80::1 1 1 1 poll\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n",  /* no end */
		"ibmcast-mcast 1\nport d 1 nonsense 1 1 1 poll\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 70000 1 1 poll\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll x\nend\n",
		/* JoinState above 4 bits, an SL above 4 bits, a short line */
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group ff12::1 1 16 1 1 1 0 0 0 0 0 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group ff12::1 1 1 1 1 1 0 0 0 0 16 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group ff12::1 1 1 1 1 1 0 0 0 0 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\nend\nend\n",
		/* Not as the writer spells it: no space after the keyword,
		 * two spaces, a sign, a GID not in canonical form. */
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group1::2 1 1 1 1 1 0 0 0 0 0 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group ff12::1  1 1 1 1 1 0 0 0 0 0 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group ff12::1 +1 1 1 1 1 0 0 0 0 0 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nport d 1 fe80::1 1 1 1 poll\n"
		"group FF12::1 1 1 1 1 1 0 0 0 0 0 0 0 0 0\nend\n",
		"ibmcast-mcast 1\nportd 1 fe80::1 1 1 1 poll\nend\n",
	};
	struct imc_ctl_listing l;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(bad); i++) {
		l.n = 99;
		assert_int_equal(imc_ctl_parse(bad[i], &l), -EPROTO);
		assert_null(l.groups);
		assert_int_equal(l.n, 0);
	}
}

static void test_run_dir(void **state)
{
	char buf[256];

	setenv("IBMCAST_RUN_DIR", "/a", 1);
	setenv("XDG_RUNTIME_DIR", "/x", 1);
	assert_int_equal(imc_ctl_run_dir("/opt", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/opt");
	assert_int_equal(imc_ctl_run_dir(NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/a");
	unsetenv("IBMCAST_RUN_DIR");
	assert_int_equal(imc_ctl_run_dir(NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/x/ibmcast");
	unsetenv("XDG_RUNTIME_DIR");
	assert_int_equal(imc_ctl_run_dir(NULL, buf, sizeof(buf)), 0);
	assert_true(!strcmp(buf, "/run/ibmcast") ||
		    !strncmp(buf, "/tmp/ibmcast-", 13));
	assert_int_equal(imc_ctl_run_dir("/very/long", buf, 5), -ENAMETOOLONG);
}

/* ---- server and client ---- */

static int sent_mads;

static int fake_send(void *ctx, const uint8_t *mad, size_t len)
{
	sent_mads++;
	return 0;   /* never answered: the group stays pending */
}

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	(*(int *)arg)++;
}

struct fetcher {
	char path[256];
	struct imc_ctl_listing l;
	int r;
	struct imc_loop *loop;
};

static void *fetch_thread(void *arg)
{
	struct fetcher *f = arg;

	f->r = imc_ctl_fetch(f->path, &f->l);
	imc_loop_wake(f->loop);
	return NULL;
}

static void test_server(void **state)
{
	struct imc_sa_transport tr = { fake_send, NULL };
	struct imc_mcast_config cfg;
	struct imc_mcast_join_req req;
	struct imc_umad_port port;
	struct imc_loop *loop;
	struct imc_sa_client *sa;
	struct imc_mcast *t;
	struct imc_mcast_member *m[2];
	struct imc_ctl_server *srv;
	struct fetcher f;
	struct imc_gid g;
	char dir[] = "/tmp/imc-ctl-XXXXXX";
	pthread_t th;
	int calls = 0;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	assert_int_equal(imc_sa_client_create(loop, &tr, NULL, &sa), 0);
	imc_mcast_config_init(&cfg);
	imc_gid_set(&cfg.port_gid, 0xfe80000000000000ull, 0x0002c9030000abcdull);
	assert_int_equal(imc_mcast_create(loop, sa, &cfg, NULL, &t), 0);
	memset(&req, 0, sizeof(req));
	assert_int_equal(imc_gid_parse("ff12:e001::7", &req.rec.mgid), 0);
	req.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID;
	req.join_state = IMC_JOIN_FULL;
	assert_int_equal(imc_mcast_join(t, &req, on_member, &calls, &m[0]), 0);
	assert_int_equal(imc_gid_parse("ff12:e001::3", &req.rec.mgid), 0);
	assert_int_equal(imc_mcast_join(t, &req, on_member, &calls, &m[1]), 0);

	memset(&port, 0, sizeof(port));
	strcpy(port.device, "sim0");
	port.port = 2;
	port.lid = 7;
	port.sm_lid = 1;
	port.gid = cfg.port_gid;
	assert_int_equal(imc_ctl_server_open(loop, dir, &port, "poll", t, &srv), 0);
	snprintf(f.path, sizeof(f.path), "%s/0002c9030000abcd-%ld.sock", dir,
		 (long)getpid());
	assert_string_equal(imc_ctl_server_path(srv), f.path);
	assert_int_equal(access(f.path, F_OK), 0);

	f.loop = loop;
	f.r = 1;
	assert_int_equal(pthread_create(&th, NULL, fetch_thread, &f), 0);
	/* Serve until the client is done (it wakes the loop). */
	while (__atomic_load_n(&f.r, __ATOMIC_SEQ_CST) == 1)
		assert_true(imc_loop_run_once(loop) >= 0);
	pthread_join(th, NULL);
	assert_int_equal(f.r, 0);
	assert_string_equal(f.l.device, "sim0");
	assert_int_equal(f.l.port, 2);
	assert_int_equal(f.l.lid, 7);
	assert_int_equal(f.l.pid, (long)getpid());
	assert_true(imc_gid_equal(&f.l.port_gid, &cfg.port_gid));
	/* Both groups, in MGID order, not answered yet. */
	assert_int_equal(f.l.n, 2);
	assert_int_equal(imc_gid_parse("ff12:e001::3", &g), 0);
	assert_true(imc_gid_equal(&f.l.groups[0].rec.mgid, &g));
	assert_int_equal(imc_gid_parse("ff12:e001::7", &g), 0);
	assert_true(imc_gid_equal(&f.l.groups[1].rec.mgid, &g));
	assert_false(f.l.groups[0].joined);
	assert_int_equal(f.l.groups[0].members, 1);
	assert_int_equal(f.l.groups[0].wanted, IMC_JOIN_FULL);
	imc_ctl_listing_free(&f.l);
	assert_int_equal(calls, 0);

	imc_ctl_server_close(srv);
	/* The socket is gone: a client finds nothing there. */
	assert_int_not_equal(access(f.path, F_OK), 0);
	assert_int_equal(imc_ctl_fetch(f.path, &f.l), -ENOENT);
	imc_mcast_leave(m[0]);
	imc_mcast_leave(m[1]);
	imc_mcast_destroy(t);
	imc_sa_client_destroy(sa);
	assert_int_equal(imc_loop_destroy(loop), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_run_dir),
		cmocka_unit_test(test_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
