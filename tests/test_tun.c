/* TUN interfaces and namespaces against the real kernel: a namespace made
 * here is one `ip` sees and removes with it; a TUN in it carries the MTU,
 * addresses and states set, and the kernel's own IPv4 and IPv6 stack
 * answers an echo request written into it with a reply read back out.
 * Namespaces left by a dead process are reaped, live ones are not.
 *
 * Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and /dev/net/tun: every test
 * is skipped, saying why, where they are missing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibmcast/tun.h"

static char skip_why[256];
static char prefix[32];     /* imc-test-PID- */

static void name_of(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "%s%s", prefix, what);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static bool netns_listed(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return exists(path);
}

/* Output of a shell command (first len-1 bytes). */
static void run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	assert_non_null(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	pclose(p);
}

static int setup(void **state)
{
	struct imc_netns *ns;
	char name[64];
	int rc;

	(void)state;
	snprintf(prefix, sizeof(prefix), "imc-test-%ld-", (long)getpid());
	if (geteuid() != 0) {
		snprintf(skip_why, sizeof(skip_why), "not root");
		return 0;
	}
	if (!exists("/dev/net/tun")) {
		snprintf(skip_why, sizeof(skip_why), "no /dev/net/tun");
		return 0;
	}
	name_of(name, sizeof(name), "probe");
	rc = imc_netns_create(name, &ns);
	if (rc) {
		snprintf(skip_why, sizeof(skip_why),
			 "cannot create a network namespace: %s", strerror(-rc));
		return 0;
	}
	imc_netns_destroy(ns);
	return 0;
}

#define NEED_PRIVILEGE()                                              \
	do {                                                          \
		if (skip_why[0]) {                                    \
			print_message("skipped: %s\n", skip_why);     \
			skip();                                       \
		}                                                     \
	} while (0)

/* ---- namespaces ---- */

static void test_netns_create_destroy(void **state)
{
	struct imc_netns *ns, *again, *opened;
	char name[64], cmd[256], out[4096];

	(void)state;
	NEED_PRIVILEGE();
	name_of(name, sizeof(name), "a");
	assert_int_equal(imc_netns_create(name, &ns), 0);
	assert_string_equal(imc_netns_name(ns), name);
	assert_true(netns_listed(name));
	/* iproute2 reaches it, and its loopback is up. */
	snprintf(cmd, sizeof(cmd), "ip -n %s -o link show lo", name);
	run_cmd(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "LOOPBACK,UP"));
	assert_int_equal(imc_netns_create(name, &again), -EEXIST);
	assert_null(again);
	/* Opened, not owned: closing it leaves it. */
	assert_int_equal(imc_netns_open(name, &opened), 0);
	imc_netns_destroy(opened);
	assert_true(netns_listed(name));
	imc_netns_destroy(ns);
	assert_false(netns_listed(name));
	run_cmd("ip netns list", out, sizeof(out));
	assert_null(strstr(out, name));
	assert_int_equal(imc_netns_open(name, &opened), -ENOENT);
	imc_netns_destroy(NULL);
}

static void test_netns_bad_names(void **state)
{
	static const char *const bad[] = {
		"", ".", "..", "a/b", "a b", "x\n",
		"0123456789012345678901234567890123456789012345678901234567890123",
	};
	struct imc_netns *ns;

	(void)state;
	for (size_t i = 0; i < IMC_ARRAY_SIZE(bad); i++) {
		assert_int_equal(imc_netns_create(bad[i], &ns), -EINVAL);
		assert_null(ns);
		assert_int_equal(imc_netns_open(bad[i], &ns), -EINVAL);
	}
}

struct reaped {
	unsigned n;
	char last[64];
};

static void on_reaped(const char *name, void *ctx)
{
	struct reaped *r = ctx;

	r->n++;
	snprintf(r->last, sizeof(r->last), "%s", name);
}

static void test_netns_reap(void **state)
{
	struct imc_netns *live;
	struct reaped r = { 0 };
	char dead[64], alive[64], rprefix[64];
	int status;
	pid_t pid;

	(void)state;
	NEED_PRIVILEGE();
	name_of(rprefix, sizeof(rprefix), "r-");
	name_of(dead, sizeof(dead), "r-dead");
	name_of(alive, sizeof(alive), "r-alive");
	assert_int_equal(imc_netns_create(alive, &live), 0);
	/* A process that makes a namespace and dies without removing it. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct imc_netns *ns;

		_exit(imc_netns_create(dead, &ns) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(netns_listed(dead));

	assert_int_equal(imc_netns_reap(rprefix, on_reaped, &r), 1);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.last, dead);
	assert_false(netns_listed(dead));
	assert_true(netns_listed(alive));
	/* Nothing left to reap; the live one stays. */
	assert_int_equal(imc_netns_reap(rprefix, NULL, NULL), 0);
	imc_netns_destroy(live);
	assert_false(netns_listed(alive));
	assert_int_equal(imc_netns_reap(rprefix, NULL, NULL), 0);
}

/* ---- TUN ---- */

static uint16_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

enum { PAYLOAD = 32, ECHO_ID = 0x4d43 };

/* An ICMP echo request from src to dst (RFC 792, RFC 791). */
static size_t echo4(uint8_t *b, const char *src, const char *dst,
		    uint16_t seq)
{
	size_t len = 20 + 8 + PAYLOAD;

	memset(b, 0, len);
	b[0] = 0x45;
	put16(b + 2, (uint16_t)len);
	b[8] = 64;                      /* TTL */
	b[9] = 1;                       /* ICMP */
	inet_pton(AF_INET, src, b + 12);
	inet_pton(AF_INET, dst, b + 16);
	put16(b + 10, (uint16_t)~csum_add(0, b, 20));
	b[20] = 8;                      /* echo request */
	put16(b + 24, ECHO_ID);
	put16(b + 26, seq);
	for (int i = 0; i < PAYLOAD; i++)
		b[28 + i] = (uint8_t)(seq + i);
	put16(b + 22, (uint16_t)~csum_add(0, b + 20, 8 + PAYLOAD));
	return len;
}

/* An ICMPv6 echo request (RFC 4443 4.1), checksum over the pseudo-header
 * (RFC 8200 8.1). */
static size_t echo6(uint8_t *b, const char *src, const char *dst,
		    uint16_t seq)
{
	size_t plen = 8 + PAYLOAD;
	uint8_t pseudo[40];
	uint32_t sum;

	memset(b, 0, 40 + plen);
	b[0] = 0x60;
	put16(b + 4, (uint16_t)plen);
	b[6] = 58;                      /* ICMPv6 */
	b[7] = 64;
	inet_pton(AF_INET6, src, b + 8);
	inet_pton(AF_INET6, dst, b + 24);
	b[40] = 128;                    /* echo request */
	put16(b + 44, ECHO_ID);
	put16(b + 46, seq);
	for (int i = 0; i < PAYLOAD; i++)
		b[48 + i] = (uint8_t)(seq + i);
	memset(pseudo, 0, sizeof(pseudo));
	memcpy(pseudo, b + 8, 32);
	pseudo[35] = (uint8_t)plen;
	pseudo[39] = 58;
	sum = csum_add(0, pseudo, sizeof(pseudo));
	put16(b + 42, (uint16_t)~csum_add(sum, b + 40, plen));
	return 40 + plen;
}

struct catch {
	struct imc_loop *loop;
	struct imc_tun *tun;
	unsigned replies4, replies6, other;
	unsigned calls;
	bool destroy_in_cb;
	bool headroom_ok;
};

static void on_pkt(struct imc_tun *tun, uint8_t *pkt, size_t len, void *ctx)
{
	struct catch *c = ctx;

	assert_ptr_equal(tun, c->tun);
	c->calls++;
	/* The headroom is ours to write. */
	memset(pkt - IMC_TUN_HEADROOM, 0xa5, IMC_TUN_HEADROOM);
	c->headroom_ok = true;
	if (len >= 28 + PAYLOAD && (pkt[0] >> 4) == 4 && pkt[9] == 1 &&
	    pkt[20] == 0 && pkt[24] == (ECHO_ID >> 8) &&
	    pkt[25] == (ECHO_ID & 0xff) && pkt[28] == pkt[27]) {
		char s[16], d[16];

		inet_ntop(AF_INET, pkt + 12, s, sizeof(s));
		inet_ntop(AF_INET, pkt + 16, d, sizeof(d));
		assert_string_equal(s, "10.77.0.1");
		assert_string_equal(d, "10.77.0.2");
		c->replies4++;
	} else if (len >= 48 + PAYLOAD && (pkt[0] >> 4) == 6 &&
		   pkt[6] == 58 && pkt[40] == 129 &&
		   pkt[44] == (ECHO_ID >> 8)) {
		char s[64];

		inet_ntop(AF_INET6, pkt + 8, s, sizeof(s));
		assert_true(!strcmp(s, "fd77::1") || !strcmp(s, "fd78::1"));
		c->replies6++;
	} else {
		/* IPv6 router solicitations, MLD reports and the like. */
		c->other++;
	}
	if (c->destroy_in_cb) {
		imc_tun_destroy(tun);
		c->tun = NULL;
	}
	if (c->replies4 + c->replies6 >= 2 || !c->tun)
		imc_loop_stop(c->loop);
}

/* Gives up a wait that would otherwise hang the test: the assertions are
 * on what arrived, never on how long it took. */
struct guard {
	struct imc_timer t;
	struct imc_loop *loop;
	bool fired;
};

static void on_guard(struct imc_timer *t)
{
	struct guard *g = imc_container_of(t, struct guard, t);

	g->fired = true;
	imc_loop_stop(g->loop);
}

static void run_guarded(struct imc_loop *loop, struct guard *g)
{
	g->loop = loop;
	g->fired = false;
	imc_timer_init(&g->t, on_guard);
	assert_int_equal(imc_timer_arm_in(loop, &g->t, 10 * IMC_NSEC_PER_SEC),
			 0);
	assert_int_equal(imc_loop_run(loop), 0);
	imc_timer_cancel(loop, &g->t);
}

static void test_tun_kernel_echo(void **state)
{
	struct imc_tun_config cfg = { .name = "ib%d", .mtu = 2044 };
	struct catch c = { 0 };
	struct imc_netns *ns;
	struct imc_loop *loop;
	struct imc_tun_stats st;
	struct guard g;
	uint8_t v4[4], v6[16], pkt[256];
	char name[64], cmd[256], out[4096];
	char root_before[2048], root_after[2048];
	size_t len;

	(void)state;
	NEED_PRIVILEGE();
	run_cmd("ip -o link show | cut -d' ' -f2", root_before,
		sizeof(root_before));
	name_of(name, sizeof(name), "echo");
	assert_int_equal(imc_netns_create(name, &ns), 0);
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	cfg.netns = ns;
	c.loop = loop;
	assert_int_equal(imc_tun_create(loop, &cfg, on_pkt, &c, &c.tun), 0);
	assert_string_equal(imc_tun_name(c.tun), "ib0");
	assert_int_equal(imc_tun_mtu(c.tun), 2044);
	assert_true(imc_tun_ifindex(c.tun) > 0);
	assert_false(imc_tun_is_up(c.tun));
	inet_pton(AF_INET, "10.77.0.1", v4);
	inet_pton(AF_INET6, "fd77::1", v6);
	assert_int_equal(imc_tun_addr_add(c.tun, AF_INET, v4, 24), 0);
	assert_int_equal(imc_tun_addr_add(c.tun, AF_INET6, v6, 64), 0);
	assert_int_equal(imc_tun_addr_add(c.tun, AF_INET, v4, 24), -EEXIST);
	assert_int_equal(imc_tun_addr_add(c.tun, AF_INET, v4, 33), -EINVAL);
	assert_int_equal(imc_tun_addr_add(c.tun, 12345, v4, 8), -EINVAL);
	assert_int_equal(imc_tun_set_up(c.tun, true), 0);
	assert_true(imc_tun_is_up(c.tun));
	/* Created in its namespace only. */
	snprintf(cmd, sizeof(cmd), "ip -n %s -o addr show dev ib0; "
		 "ip -n %s -o link show ib0", name, name);
	run_cmd(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "inet 10.77.0.1/24"));
	assert_non_null(strstr(out, "inet6 fd77::1/64"));
	assert_non_null(strstr(out, "mtu 2044"));
	assert_non_null(strstr(out, ",UP"));
	assert_null(strstr(out, "NO-CARRIER"));
	/* Nothing appeared in the caller's namespace. */
	run_cmd("ip -o link show | cut -d' ' -f2", root_after,
		sizeof(root_after));
	assert_string_equal(root_before, root_after);

	/* The kernel answers, through the TUN, requests written into it. */
	len = echo4(pkt, "10.77.0.2", "10.77.0.1", 7);
	assert_int_equal(imc_tun_write(c.tun, pkt, len), 0);
	len = echo6(pkt, "fd77::2", "fd77::1", 8);
	assert_int_equal(imc_tun_write(c.tun, pkt, len), 0);
	/* Callbacks run from the loop, never inside the call. */
	assert_int_equal(c.calls, 0);
	run_guarded(loop, &g);
	assert_false(g.fired);
	assert_int_equal(c.replies4, 1);
	assert_int_equal(c.replies6, 1);
	assert_true(c.headroom_ok);
	/* An IPv6 address added to an interface that is up works at once:
	 * the call waited for the kernel's local route. */
	inet_pton(AF_INET6, "fd78::1", v6);
	assert_int_equal(imc_tun_addr_add(c.tun, AF_INET6, v6, 64), 0);
	len = echo6(pkt, "fd78::2", "fd78::1", 10);
	assert_int_equal(imc_tun_write(c.tun, pkt, len), 0);
	c.replies6 = 0;
	c.replies4 = 1;
	run_guarded(loop, &g);
	assert_false(g.fired);
	assert_int_equal(c.replies6, 1);
	imc_tun_get_stats(c.tun, &st);
	assert_int_equal(st.write_packets, 3);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(st.read_packets, c.calls);
	assert_true(st.wakeups >= 1);

	/* Carrier and MTU follow. */
	assert_int_equal(imc_tun_set_carrier(c.tun, false), 0);
	snprintf(cmd, sizeof(cmd), "ip -n %s -o link show ib0", name);
	run_cmd(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "NO-CARRIER"));
	assert_int_equal(imc_tun_set_carrier(c.tun, true), 0);
	assert_int_equal(imc_tun_set_mtu(c.tun, 1500), 0);
	assert_int_equal(imc_tun_mtu(c.tun), 1500);
	run_cmd(cmd, out, sizeof(out));
	assert_null(strstr(out, "NO-CARRIER"));
	assert_non_null(strstr(out, "mtu 1500"));
	assert_int_equal(imc_tun_set_up(c.tun, false), 0);
	assert_false(imc_tun_is_up(c.tun));
	/* A down interface refuses packets. */
	len = echo4(pkt, "10.77.0.2", "10.77.0.1", 9);
	assert_true(imc_tun_write(c.tun, pkt, len) < 0);
	imc_tun_get_stats(c.tun, &st);
	assert_int_equal(st.write_errors, 1);

	imc_tun_destroy(c.tun);
	snprintf(cmd, sizeof(cmd), "ip -n %s -o link show 2>&1", name);
	run_cmd(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "lo:"));
	assert_null(strstr(out, "ib0"));
	assert_int_equal(imc_loop_destroy(loop), 0);
	imc_netns_destroy(ns);
	assert_false(netns_listed(name));
}

static void test_tun_destroy_from_callback(void **state)
{
	struct imc_tun_config cfg = { .name = "ib%d" };
	struct catch c = { .destroy_in_cb = true };
	struct imc_netns *ns;
	struct imc_loop *loop;
	struct imc_loop_stats ls;
	struct guard g;
	uint8_t v4[4], pkt[256];
	char name[64];
	size_t len;

	(void)state;
	NEED_PRIVILEGE();
	name_of(name, sizeof(name), "cb");
	assert_int_equal(imc_netns_create(name, &ns), 0);
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	cfg.netns = ns;
	c.loop = loop;
	assert_int_equal(imc_tun_create(loop, &cfg, on_pkt, &c, &c.tun), 0);
	inet_pton(AF_INET, "10.77.0.1", v4);
	assert_int_equal(imc_tun_addr_add(c.tun, AF_INET, v4, 24), 0);
	assert_int_equal(imc_tun_set_up(c.tun, true), 0);
	/* Three replies queue up; the first callback frees the TUN and no
	 * other callback follows. */
	for (uint16_t s = 0; s < 3; s++) {
		len = echo4(pkt, "10.77.0.2", "10.77.0.1", s);
		assert_int_equal(imc_tun_write(c.tun, pkt, len), 0);
	}
	run_guarded(loop, &g);
	assert_false(g.fired);
	assert_int_equal(c.calls, 1);
	assert_null(c.tun);
	imc_loop_get_stats(loop, &ls);
	assert_int_equal(ls.fds_watched, 0);
	assert_int_equal(imc_loop_destroy(loop), 0);
	imc_netns_destroy(ns);
	assert_false(netns_listed(name));
}

static void test_tun_errors(void **state)
{
	struct imc_tun_config cfg = { .name = "ib%d" };
	struct imc_tun_config longname = {
		.name = "abcdefghijklmnopq",
	};
	struct imc_loop *virt, *rt;
	struct imc_netns *ns;
	struct imc_tun *a, *b;
	struct catch c = { 0 };
	char name[64];

	(void)state;
	NEED_PRIVILEGE();
	assert_int_equal(imc_loop_create_virtual(0, &virt), 0);
	assert_int_equal(imc_tun_create(virt, NULL, on_pkt, &c, &a),
			 -EOPNOTSUPP);
	assert_null(a);
	assert_int_equal(imc_loop_destroy(virt), 0);
	assert_int_equal(imc_loop_create_realtime(&rt), 0);
	assert_int_equal(imc_tun_create(rt, &longname, on_pkt, &c, &a),
			 -EINVAL);
	assert_int_equal(imc_tun_create(rt, NULL, NULL, &c, &a), -EINVAL);
	/* A name taken in the namespace. */
	name_of(name, sizeof(name), "err");
	assert_int_equal(imc_netns_create(name, &ns), 0);
	cfg.netns = ns;
	cfg.name = "ibx";
	assert_int_equal(imc_tun_create(rt, &cfg, on_pkt, &c, &a), 0);
	assert_int_equal(imc_tun_create(rt, &cfg, on_pkt, &c, &b), -EEXIST);
	assert_null(b);
	assert_int_equal(imc_tun_set_mtu(a, 0), -EINVAL);
	assert_int_equal(imc_tun_set_mtu(a, 70000), -EINVAL);
	imc_tun_destroy(a);
	imc_tun_destroy(NULL);
	assert_int_equal(imc_loop_destroy(rt), 0);
	imc_netns_destroy(ns);
	assert_false(netns_listed(name));
}

static int teardown(void **state)
{
	char out[4096];

	(void)state;
	if (skip_why[0])
		return 0;
	/* Nothing of ours is left anywhere. */
	run_cmd("ip netns list", out, sizeof(out));
	if (strstr(out, prefix)) {
		fprintf(stderr, "namespaces left behind:\n%s", out);
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns_create_destroy),
		cmocka_unit_test(test_netns_bad_names),
		cmocka_unit_test(test_netns_reap),
		cmocka_unit_test(test_tun_kernel_echo),
		cmocka_unit_test(test_tun_destroy_from_callback),
		cmocka_unit_test(test_tun_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
