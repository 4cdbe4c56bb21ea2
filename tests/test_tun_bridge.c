/* TUN bridges to IPoIB interfaces of a scenario run on the real-time
 * loop: UDP datagrams over IPv4 and IPv6 from a socket in one namespace
 * reach a socket in another through kernel -> TUN -> IPoIB (ARP and ND
 * included) -> simulated fabric -> IPoIB -> TUN -> kernel, every one of
 * them, in order, intact; the TUNs take the IPoIB MTU, and the kernel
 * sees the carrier go when the IPoIB interface goes down and come back
 * after its re-join; after the run no interface or namespace is left.
 * Datagrams are sent once both carriers are up (the burst fits the IPoIB
 * queues the scenario sets while ARP and ND run), and the run ends when
 * the carrier is back (or after 20 s of scenario time, a guard: nothing
 * here asserts on time).
 *
 * Needs root and /dev/net/tun; skipped, saying why, without them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibmcast/scenario.h"
#include "ibmcast/scenario_ipoib.h"
#include "ibmcast/tun.h"
#include "ibmcast/tun_bridge.h"
#include "tun/tun_int.h"

enum { N = 50, PORT = 5001, SIZE = 1400 };

static const char text[] =
	"topology fat-tree:leaves=2,hosts=2,spines=1\n"
	"seed 9\n"
	"stop 20s\n"
	"sa\n"
	"ipoib queue=128 queue-total=1024\n"
	"at 0 ipoib-up H-000001 10.0.0.1/24 fd00::1/64\n"
	"ipoib-up H-000003 10.0.0.3/24 fd00::3/64\n";

static char skip_why[128];

struct side {
	struct imc_netns *ns;
	struct imc_tun_bridge *b;
	bool carrier;
	char tun_name[IMC_TUN_IFNAME_MAX];
	unsigned tun_mtu;
};

struct world {
	struct side side[2];
	struct imc_ipoib *ifc1;
	struct imc_timer again;          /* brings ifc1 up from the loop */
	bool went_down, came_back, no_carrier_seen;
	int tx4, tx6, rx4, rx6;          /* sockets in the namespaces */
	struct imc_fd_watch w4, w6;
	struct imc_loop *loop;
	unsigned got4, got6, bad;
	uint32_t next4, next6;
	bool sent, done;
	struct imc_tun_bridge_stats st[2];
};

static int sock_in(struct imc_netns *ns, int family, int type)
{
	int saved, s;

	assert_int_equal(tunl_netns_enter(ns, &saved), 0);
	s = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_int_equal(tunl_netns_leave(saved), 0);
	assert_true(s >= 0);
	return s;
}

static void fill(uint8_t *b, uint32_t seq)
{
	for (unsigned i = 0; i < SIZE; i++)
		b[i] = (uint8_t)(seq * 7 + i);
	memcpy(b, &seq, 4);
}

static void send_all(struct world *w)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(PORT) };
	uint8_t b[SIZE];

	inet_pton(AF_INET, "10.0.0.3", &a4.sin_addr);
	inet_pton(AF_INET6, "fd00::3", &a6.sin6_addr);
	for (uint32_t i = 0; i < N; i++) {
		fill(b, i);
		assert_int_equal(sendto(w->tx4, b, SIZE, 0,
					(struct sockaddr *)&a4, sizeof(a4)),
				 SIZE);
		assert_int_equal(sendto(w->tx6, b, SIZE, 0,
					(struct sockaddr *)&a6, sizeof(a6)),
				 SIZE);
	}
	w->sent = true;
}

static void on_carrier(void *ctx, bool up);

static void on_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	imc_tun_bridge_deliver(ctx, p);
}

static struct world *the_world;

static void run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	assert_non_null(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	pclose(p);
}

static void up_again(struct imc_timer *t)
{
	struct world *w = imc_container_of(t, struct world, again);

	assert_int_equal(imc_ipoib_up(w->ifc1), 0);
}

static void on_carrier(void *ctx, bool up)
{
	struct world *w = the_world;
	char cmd[128], out[1024];

	imc_tun_bridge_carrier(ctx, up);
	for (int i = 0; i < 2; i++)
		if (w->side[i].b == ctx)
			w->side[i].carrier = up;
	if (ctx == w->side[1].b && w->went_down) {
		snprintf(cmd, sizeof(cmd), "ip -n %s -o link show %s",
			 imc_netns_name(w->side[1].ns), w->side[1].tun_name);
		run_cmd(cmd, out, sizeof(out));
		if (!up && strstr(out, "NO-CARRIER")) {
			w->no_carrier_seen = true;
			/* Not from the op: ipoib.h forbids calls back. */
			imc_timer_arm_in(w->loop, &w->again, 0);
		}
		if (up && w->no_carrier_seen && !strstr(out, "NO-CARRIER")) {
			w->came_back = true;
			w->done = true;
		}
	}
	/* The kernel would drop (no carrier) or queue what it sends before
	 * both links are up: send once they are. */
	if (w->side[0].carrier && w->side[1].carrier && !w->sent &&
	    w->tx4 > 0)
		send_all(w);
}

static void on_rx(struct imc_fd_watch *fw, unsigned int events)
{
	struct world *w = the_world;
	bool v4 = fw->fd == w->rx4;
	uint8_t b[SIZE + 100], want[SIZE];
	ssize_t n;

	(void)events;
	while ((n = recv(fw->fd, b, sizeof(b), 0)) > 0) {
		uint32_t seq;

		memcpy(&seq, b, 4);
		fill(want, seq);
		if (n != SIZE || memcmp(b, want, SIZE) ||
		    seq != (v4 ? w->next4 : w->next6)) {
			w->bad++;
			continue;
		}
		if (v4) {
			w->next4++;
			w->got4++;
		} else {
			w->next6++;
			w->got6++;
		}
	}
	if (w->got4 == N && w->got6 == N && !w->went_down) {
		/* All here: take side 1's interface down (not an op). */
		w->went_down = true;
		imc_ipoib_down(w->ifc1);
	}
}

static bool interrupted(void *ctx)
{
	return ((struct world *)ctx)->done;
}

static int started(void *ctx, struct imc_scn_ctx *c)
{
	static const char *const names[2] = { "H-000001", "H-000003" };
	static const uint32_t nodes[2] = { 0, 2 };
	struct world *w = ctx;
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(PORT) };
	int one = 1;

	for (int i = 0; i < 2; i++) {
		struct side *sd = &w->side[i];
		struct imc_tun_config cfg = { .name = "ib%d", .netns = sd->ns };
		struct imc_ipoib_host_ops ops = { .deliver = on_deliver,
						  .carrier = on_carrier };
		struct imc_scn_ipoib_iface ifc;

		assert_string_equal(imc_scn_topo(c)->node[nodes[i]].name,
				    names[i]);
		assert_int_equal(imc_scn_ipoib_tap(c, nodes[i], 1, 0xffff,
						   NULL, &ifc), 0);
		assert_int_equal(imc_tun_bridge_create(w->loop, ifc.ifc, &cfg,
						       &sd->b), 0);
		for (unsigned k = 0; k < ifc.naddrs; k++)
			assert_int_equal(imc_tun_bridge_addr_add(sd->b,
					 &ifc.addr[k], ifc.plen[k]), 0);
		ops.ctx = sd->b;
		/* The join may have been answered already. */
		sd->carrier = imc_ipoib_carrier(ifc.ifc);
		if (i == 1)
			w->ifc1 = ifc.ifc;
		assert_int_equal(imc_scn_ipoib_tap(c, nodes[i], 1, 0xffff,
						   &ops, NULL), 0);
		snprintf(sd->tun_name, sizeof(sd->tun_name), "%s",
			 imc_tun_name(imc_tun_bridge_tun(sd->b)));
		sd->tun_mtu = imc_tun_mtu(imc_tun_bridge_tun(sd->b));
	}
	w->tx4 = sock_in(w->side[0].ns, AF_INET, SOCK_DGRAM);
	w->tx6 = sock_in(w->side[0].ns, AF_INET6, SOCK_DGRAM);
	w->rx4 = sock_in(w->side[1].ns, AF_INET, SOCK_DGRAM);
	w->rx6 = sock_in(w->side[1].ns, AF_INET6, SOCK_DGRAM);
	assert_int_equal(bind(w->rx4, (struct sockaddr *)&a4, sizeof(a4)), 0);
	/* The IPv4 socket has the port: keep this one to IPv6. */
	assert_int_equal(setsockopt(w->rx6, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				    sizeof(one)), 0);
	assert_int_equal(bind(w->rx6, (struct sockaddr *)&a6, sizeof(a6)), 0);
	imc_fd_watch_init(&w->w4, w->rx4, on_rx);
	imc_fd_watch_init(&w->w6, w->rx6, on_rx);
	assert_int_equal(imc_loop_watch_fd(w->loop, &w->w4, IMC_EV_READ), 0);
	assert_int_equal(imc_loop_watch_fd(w->loop, &w->w6, IMC_EV_READ), 0);
	if (w->side[0].carrier && w->side[1].carrier)
		send_all(w);
	return 0;
}

static void ending(void *ctx, struct imc_scn_ctx *c)
{
	static const uint32_t nodes[2] = { 0, 2 };
	struct world *w = ctx;

	imc_timer_cancel(w->loop, &w->again);
	imc_loop_unwatch_fd(w->loop, &w->w4);
	imc_loop_unwatch_fd(w->loop, &w->w6);
	close(w->tx4);
	close(w->tx6);
	close(w->rx4);
	close(w->rx6);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(imc_scn_ipoib_tap(c, nodes[i], 1, 0xffff,
						   NULL, NULL), 0);
		imc_tun_bridge_get_stats(w->side[i].b, &w->st[i]);
		imc_tun_bridge_destroy(w->side[i].b);
		w->side[i].b = NULL;
	}
}

static void test_udp_over_ipoib(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s;
	struct world w = { 0 };
	char err[256], name[64];
	struct stat st;

	(void)state;
	if (skip_why[0]) {
		print_message("skipped: %s\n", skip_why);
		skip();
	}
	the_world = &w;
	imc_timer_init(&w.again, up_again);
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "imc-test-%ld-br%d",
			 (long)getpid(), i);
		assert_int_equal(imc_netns_create(name, &w.side[i].ns), 0);
	}
	assert_int_equal(imc_scenario_parse(text, strlen(text), "br.scn", NULL,
					    &s, err, sizeof(err)), 0);
	assert_int_equal(imc_loop_create_realtime(&w.loop), 0);
	o.loop = w.loop;
	o.started = started;
	o.ending = ending;
	o.interrupted = interrupted;
	o.ctx = &w;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)), 0);
	assert_true(w.done);
	assert_int_equal(w.got4, N);
	assert_int_equal(w.got6, N);
	assert_int_equal(w.bad, 0);
	assert_true(w.no_carrier_seen);
	assert_true(w.came_back);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(w.side[i].tun_name, "ib0");
		/* IB MTU 2048 - the 4-byte IPoIB header (RFC 4391 3). */
		assert_int_equal(w.side[i].tun_mtu, 2044);
		for (int d = 0; d < IMC_TUN_BRIDGE_DROP__COUNT; d++)
			assert_int_equal(w.st[i].drops[d], 0);
		/* The kernel's own groups, 224.0.0.1 and ff02::1, became
		 * listens of the IPoIB interface; none was left. */
		assert_true(w.st[i].mcast_listens >= 2);
		assert_int_equal(w.st[i].mcast_leaves, 0);
		assert_int_equal(w.st[i].mcast_errors, 0);
	}
	/* Side 0 sent all 2N (and perhaps an IPv6 router solicitation or
	 * MLD report), side 1 wrote them all to its kernel. */
	assert_true(w.st[0].to_ipoib >= 2 * N);
	assert_true(w.st[1].to_kernel >= 2 * N);
	assert_int_equal(w.st[1].carrier_changes, 2);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	assert_int_equal(imc_loop_destroy(w.loop), 0);
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "/run/netns/%s",
			 imc_netns_name(w.side[i].ns));
		imc_netns_destroy(w.side[i].ns);
		assert_int_not_equal(stat(name, &st), 0);
	}
}

static int setup(void **state)
{
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		snprintf(skip_why, sizeof(skip_why), "not root");
	else if (stat("/dev/net/tun", &st))
		snprintf(skip_why, sizeof(skip_why), "no /dev/net/tun");
	return 0;
}

/* Removes what a failed assertion left (namespaces of this process). */
static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	if (skip_why[0])
		return 0;
	snprintf(cmd, sizeof(cmd),
		 "for n in $(ip netns list | awk '{print $1}' | "
		 "grep '^imc-test-%ld-'); do ip netns del $n; done; "
		 "rm -f /run/ibmcast/netns/imc-test-%ld-*",
		 (long)getpid(), (long)getpid());
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_over_ipoib),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
