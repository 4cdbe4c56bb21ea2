/* The multicast groups the kernel holds on a TUN (imc_tun_mcast_list):
 * the /proc/net/igmp parser on fixed texts, and against the real kernel,
 * in a namespace of its own, the groups a socket joins and leaves, read
 * both from rtnetlink and from /proc/net/igmp.
 *
 * The kernel part needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and
 * /dev/net/tun; it is skipped, saying why, where they are missing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibmcast/tun.h"
#include "tun/tun_int.h"

#define MAXG 32

struct groups {
	unsigned n;
	int family[MAXG];
	uint8_t addr[MAXG][16];
};

static void add_group(void *ctx, int family, const uint8_t *addr)
{
	struct groups *g = ctx;

	assert_true(family == AF_INET || family == AF_INET6);
	assert_true(g->n < MAXG);
	g->family[g->n] = family;
	memset(g->addr[g->n], 0, 16);
	memcpy(g->addr[g->n], addr, family == AF_INET ? 4 : 16);
	g->n++;
}

static bool has(const struct groups *g, const char *text)
{
	uint8_t a[16] = { 0 };
	int family = strchr(text, ':') ? AF_INET6 : AF_INET;

	assert_int_equal(inet_pton(family, text, a), 1);
	for (unsigned i = 0; i < g->n; i++)
		if (g->family[i] == family && !memcmp(g->addr[i], a, 16))
			return true;
	return false;
}

/* As Linux 6.x prints it (igmp_mc_seq_show), on a little-endian host. */
static const char igmp_text[] =
	"Idx\tDevice    : Count Querier\tGroup    Users Timer\tReporter\n"
	"1\tlo        :     1      V3\n"
	"\t\t\t\t010000E0     1 0:00000000\t\t0\n"
	"4\teth0      :     2      V3\n"
	"\t\t\t\t030201EF     1 0:00000000\t\t0\n"
	"\t\t\t\t010000E0     1 0:00000000\t\t0\n"
	"12\tib0       :     1      V2\n"
	"\t\t\t\t090807EF     2 1:0000012C\t\t1";

static void test_igmp_parse(void **state)
{
	struct groups g;
	uint32_t raw;

	(void)state;
	/* The file's numbers are the groups' bytes in memory: only a
	 * little-endian host prints these. */
	raw = 1;
	if (*(uint8_t *)&raw != 1)
		skip();
	memset(&g, 0, sizeof(g));
	assert_int_equal(tunl_igmp_parse(igmp_text, strlen(igmp_text), 4,
					 add_group, &g), 2);
	assert_int_equal(g.n, 2);
	assert_true(has(&g, "239.1.2.3"));
	assert_true(has(&g, "224.0.0.1"));
	assert_false(has(&g, "239.7.8.9"));
	/* The last device, without a newline at the end. */
	memset(&g, 0, sizeof(g));
	assert_int_equal(tunl_igmp_parse(igmp_text, strlen(igmp_text), 12,
					 add_group, &g), 1);
	assert_true(has(&g, "239.7.8.9"));
	/* No such device; the text cut short in a group line; no text. */
	memset(&g, 0, sizeof(g));
	assert_int_equal(tunl_igmp_parse(igmp_text, strlen(igmp_text), 2,
					 add_group, &g), 0);
	assert_int_equal(tunl_igmp_parse(igmp_text, strlen(igmp_text) - 22,
					 12, add_group, &g), 0);
	assert_int_equal(tunl_igmp_parse(igmp_text, 0, 1, add_group, &g), 0);
	assert_int_equal(tunl_igmp_parse(NULL, 0, 1, add_group, &g), -EINVAL);
	assert_int_equal(g.n, 0);
}

/* Lines that are not the file's shape are skipped, never misread. */
static void test_igmp_parse_bad_lines(void **state)
{
	static const char bad[] =
		"99999999999999999999\teth9 : 1 V3\n"
		"\t\t\t\t010000E0     1 0:00000000\t\t0\n"
		"7\n"
		"\t\t\t\t010000E0     1\n"
		"7\tib0 : 1 V3\n"
		"\t\t\t\t0100E0     1 0:0\n"
		"\t\t\t\t010000E0Z    1 0:0\n"
		"\t\t\t\tXX0000E0     1 0:0\n"
		"\t\t\t\t020000E0\n"
		"x7\tib1 : 1 V3\n"
		"\t\t\t\t030000E0     1 0:0\n";
	struct groups g;
	uint32_t one = 1;

	(void)state;
	if (*(uint8_t *)&one != 1)
		skip();
	memset(&g, 0, sizeof(g));
	/* Only the one well-formed group line of device 7. */
	assert_int_equal(tunl_igmp_parse(bad, sizeof(bad) - 1, 7, add_group,
					 &g), 1);
	assert_int_equal(g.n, 1);
	assert_true(has(&g, "224.0.0.2"));
}

/* ---- against the kernel ---- */

static char skip_why[256];

static void need_privilege(void)
{
	struct stat st;

	if (geteuid() != 0)
		snprintf(skip_why, sizeof(skip_why), "not root");
	else if (stat("/dev/net/tun", &st))
		snprintf(skip_why, sizeof(skip_why), "no /dev/net/tun");
	if (skip_why[0]) {
		print_message("skipped: %s\n", skip_why);
		skip();
	}
}

static void on_pkt(struct imc_tun *tun, uint8_t *pkt, size_t len, void *ctx)
{
	(void)tun;
	(void)pkt;
	(void)len;
	(void)ctx;
}

static struct groups list(struct imc_tun *t)
{
	struct groups g;

	memset(&g, 0, sizeof(g));
	assert_int_equal(imc_tun_mcast_list(t, add_group, &g), 0);
	return g;
}

/* A socket in the TUN's namespace joins 239.7.8.9 and ff15::7 on it:
 * both are listed, beside the kernel's own 224.0.0.1 and ff02::1, from
 * rtnetlink and, for IPv4, from /proc/net/igmp alike; once the sockets
 * close, neither is. */
static void test_kernel_groups(void **state)
{
	struct imc_tun_config cfg = { .name = "ib%d", .mtu = 2044 };
	struct imc_netns *ns;
	struct imc_loop *loop;
	struct imc_tun *t;
	struct groups g, p;
	struct ip_mreqn m4;
	struct ipv6_mreq m6;
	uint8_t v4[4], v6[16];
	char name[64];
	int s4, s6, saved, rc;

	(void)state;
	need_privilege();
	snprintf(name, sizeof(name), "imc-test-%ld-mc", (long)getpid());
	rc = imc_netns_create(name, &ns);
	if (rc) {
		print_message("skipped: cannot create a network namespace: %s\n",
			      strerror(-rc));
		skip();
	}
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	cfg.netns = ns;
	assert_int_equal(imc_tun_create(loop, &cfg, on_pkt, NULL, &t), 0);
	inet_pton(AF_INET, "10.78.0.1", v4);
	inet_pton(AF_INET6, "fd78::1", v6);
	assert_int_equal(imc_tun_addr_add(t, AF_INET, v4, 24), 0);
	assert_int_equal(imc_tun_addr_add(t, AF_INET6, v6, 64), 0);
	assert_int_equal(imc_tun_set_up(t, true), 0);
	g = list(t);
	assert_true(has(&g, "224.0.0.1"));
	assert_true(has(&g, "ff02::1"));
	assert_false(has(&g, "239.7.8.9"));
	/* Sockets of the namespace join on the TUN. */
	assert_int_equal(tunl_netns_enter(ns, &saved), 0);
	s4 = socket(AF_INET, SOCK_DGRAM, 0);
	s6 = socket(AF_INET6, SOCK_DGRAM, 0);
	assert_int_equal(tunl_netns_leave(saved), 0);
	assert_true(s4 >= 0 && s6 >= 0);
	memset(&m4, 0, sizeof(m4));
	inet_pton(AF_INET, "239.7.8.9", &m4.imr_multiaddr);
	m4.imr_ifindex = (int)imc_tun_ifindex(t);
	assert_int_equal(setsockopt(s4, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m4,
				    sizeof(m4)), 0);
	memset(&m6, 0, sizeof(m6));
	inet_pton(AF_INET6, "ff15::7", &m6.ipv6mr_multiaddr);
	m6.ipv6mr_interface = imc_tun_ifindex(t);
	assert_int_equal(setsockopt(s6, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m6,
				    sizeof(m6)), 0);
	g = list(t);
	assert_true(has(&g, "239.7.8.9"));
	assert_true(has(&g, "ff15::7"));
	assert_true(has(&g, "224.0.0.1"));
	/* IPv4 first, as documented. */
	assert_int_equal(g.family[0], AF_INET);
	memset(&p, 0, sizeof(p));
	assert_int_equal(tunl_mcast_list_igmp(t, add_group, &p), 0);
	assert_int_equal(p.n, 2);
	assert_true(has(&p, "239.7.8.9"));
	assert_true(has(&p, "224.0.0.1"));
	close(s4);
	close(s6);
	g = list(t);
	assert_false(has(&g, "239.7.8.9"));
	assert_false(has(&g, "ff15::7"));
	assert_true(has(&g, "224.0.0.1"));
	assert_int_equal(imc_tun_mcast_list(t, NULL, NULL), -EINVAL);
	imc_tun_destroy(t);
	assert_int_equal(imc_loop_destroy(loop), 0);
	imc_netns_destroy(ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_igmp_parse),
		cmocka_unit_test(test_igmp_parse_bad_lines),
		cmocka_unit_test(test_kernel_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
