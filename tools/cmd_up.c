/* ibmcast up: a scenario's fabric in real time, with chosen hosts' IPoIB
 * interfaces bridged to Linux TUN interfaces, so that the kernel's IP
 * stack (ping, iperf3, anything) runs over ibmcast (docs/real-ip.md).
 *
 * Order of work, and of undoing it:
 *   1. parse the command line and the scenario (exit 2 on errors);
 *   2. check /dev/net/tun and the privilege (exit 1, saying what is
 *      missing); reap namespaces earlier instances left when killed;
 *   3. create the namespaces (--netns, --tun HOST=NETNS);
 *   4. run the scenario on a real-time loop; once its actions of time 0
 *      have run, bridge each chosen host's IPoIB interface to a TUN in
 *      its namespace with the scenario's addresses; print them;
 *   5. run until SIGINT, SIGTERM or SIGHUP (or --until);
 *   6. the run's ending hook removes the bridges (TUNs) before the
 *      fabric and the IPoIB interfaces go; then the namespaces go.
 * Every error path from 3 on goes through the same teardown, and a second
 * instance never collides with the first: namespace names carry the PID
 * and TUN names are picked by the kernel in their own namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/json.h"
#include "ibmcast/pcap.h"
#include "ibmcast/scenario.h"
#include "ibmcast/scenario_ipoib.h"
#include "ibmcast/tun.h"
#include "ibmcast/tun_bridge.h"
#include "tools.h"

#define NETNS_PREFIX "ibmcast-"
#define MAX_TUNS 64
#define ADDRS_MAX 16

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast up SCENARIO --tun HOST[=NETNS] [--tun ...] [--netns]\n"
		"                  [--pkey P] [--until TIME] [--seed N] [--pcap FILE]\n"
		"                  [--snaplen N] [--json]\n"
		"\n"
		"Runs SCENARIO's fabric in real time and gives each HOST named by --tun\n"
		"a Linux TUN interface bridged to the IPoIB interface the scenario\n"
		"brings up on it (its addresses, its MTU, its carrier), so that the\n"
		"kernel's IP stack runs over ibmcast: ping, iperf3 and the like work\n"
		"between the TUN interfaces. Prints what it set up, then runs until\n"
		"SIGINT (Ctrl-C), SIGTERM or SIGHUP, or until --until, and removes every\n"
		"interface and namespace it made, on errors too.\n"
		"\n"
		"  --tun HOST[=NETNS]  bridge HOST (NAME or NAME:PORT) to a TUN interface;\n"
		"                   with =NETNS, in that network namespace (created,\n"
		"                   and removed at the end, unless it exists)\n"
		"  --netns          give each --tun without =NETNS a namespace of its\n"
		"                   own, ibmcast-HOST-PID (`ip netns exec` reaches it);\n"
		"                   without it, such TUNs are in the caller's namespace\n"
		"  --pkey P         bridge the interfaces of partition P (default 0xffff)\n"
		"  --until TIME     stop at scenario time TIME (e.g. 30s) instead of on a\n"
		"                   signal; the scenario's stop line is ignored\n"
		"  --seed N         seed of the run instead of the file's seed line\n"
		"  --pcap FILE      capture every packet on every port into FILE, with\n"
		"                   wall-clock timestamps\n"
		"  --snaplen N      keep the first N bytes of each packet (default\n"
		"                   and most 65535)\n"
		"  --json           print the set-up and the final counters as JSON\n"
		"                   lines ({\"event\": \"ready\", ...}, {\"event\": \"stopped\", ...})\n"
		"\n"
		"Two TUNs in one namespace talk through the kernel, not ibmcast: give\n"
		"each host its own (--netns). Needs root (CAP_NET_ADMIN, and\n"
		"CAP_SYS_ADMIN for namespaces) and /dev/net/tun. Namespaces that a\n"
		"killed instance left behind are removed at the next start.\n"
		"\n"
		"The scenario's expectations are not checked: on a bridged host the\n"
		"kernel stands where they look (the scenario's host model).\n"
		"\n"
		"Exit: 0 stopped cleanly, 1 the set-up or the run failed, 2 bad usage\n"
		"or a scenario that does not parse.\n");
}

/* ---- signals ---- */

static struct imc_loop *sig_loop;
static volatile sig_atomic_t sig_got;

static void on_signal(int sig)
{
	sig_got = sig;
	if (sig_loop)
		imc_loop_wake(sig_loop);
}

static int signals_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void signals_restore(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sig_loop = NULL;
}

/* ---- what is set up ---- */

struct tun_spec {
	const char *arg;            /* HOST[=NETNS] as given */
	char host[128];
	uint32_t node;
	unsigned port;
	const char *netns_name;     /* =NETNS, or NULL */
	struct imc_netns *netns;    /* where the TUN goes; NULL: ours */
	bool netns_made;            /* created here (removed at the end) */
	struct imc_tun_bridge *bridge;
	struct up *owner;
	bool tapped;                /* the interface's ops lead here */
	/* for the report */
	unsigned naddrs;
	struct imc_ip_addr addr[ADDRS_MAX];
	unsigned plen[ADDRS_MAX];
	struct imc_tun_bridge_stats bst;
	struct imc_tun_stats tst;
	struct imc_ipoib_stats ist;
};

struct up {
	const char *path;
	struct imc_scenario *s;
	struct tun_spec spec[MAX_TUNS];
	unsigned nspecs;
	uint16_t pkey;
	bool own_netns;
	bool json;
	struct imc_loop *loop;
	struct imc_timer until;     /* --until */
	bool until_reached;
	imc_time_t ended_at;        /* scenario time the run ended */
	char err[512];
};

/* HOST or HOST:PORT against the topology: an HCA, its first cabled port
 * by default (as scenarios name hosts). */
static int resolve_host(const struct imc_topo *t, struct tun_spec *sp,
			char *err, size_t errlen)
{
	const struct imc_topo_node *n;
	char name[128];
	char *colon;
	unsigned long port = 0;

	snprintf(name, sizeof(name), "%s", sp->host);
	if (imc_topo_find(t, name, &sp->node) != 0) {
		colon = strrchr(name, ':');
		if (!colon || !colon[1]) {
			snprintf(err, errlen, "--tun %s: no host '%s' in the topology",
				 sp->arg, name);
			return -ENOENT;
		}
		*colon = '\0';
		port = strtoul(colon + 1, NULL, 10);
		if (imc_topo_find(t, name, &sp->node) != 0) {
			snprintf(err, errlen, "--tun %s: no host '%s' in the topology",
				 sp->arg, name);
			return -ENOENT;
		}
	}
	n = &t->node[sp->node];
	if (n->type != IMC_NODE_HCA) {
		snprintf(err, errlen, "--tun %s: '%s' is a switch, not a host",
			 sp->arg, name);
		return -EINVAL;
	}
	if (!port) {
		for (unsigned p = 1; p <= n->nports && !port; p++)
			if (n->port[p].peer != IMC_TOPO_NONE)
				port = p;
	}
	if (!port || port > n->nports ||
	    n->port[port].peer == IMC_TOPO_NONE) {
		snprintf(err, errlen, "--tun %s: '%s' has no cabled port%s",
			 sp->arg, name, port ? " of that number" : "");
		return -EINVAL;
	}
	sp->port = (unsigned)port;
	return 0;
}

/* ibmcast-HOST-PID, with the characters a namespace name cannot hold
 * replaced by '_' and HOST shortened to fit. */
static void netns_name_for(const struct tun_spec *sp, unsigned port,
			   char out[IMC_NETNS_NAME_MAX])
{
	char host[40];
	size_t i;

	snprintf(host, sizeof(host), "%.*s", (int)sizeof(host) - 1, sp->host);
	for (i = 0; host[i]; i++) {
		char c = host[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			host[i] = '_';
	}
	(void)port;
	snprintf(out, IMC_NETNS_NAME_MAX, NETNS_PREFIX "%s-%ld", host,
		 (long)getpid());
}

static const char *errno_hint(int rc)
{
	switch (rc) {
	case -EPERM:
	case -EACCES:
		return " (run as root: TUN interfaces need CAP_NET_ADMIN, "
		       "namespaces CAP_SYS_ADMIN)";
	case -ENOENT:
		return " (no /dev/net/tun: load the tun module, modprobe tun)";
	default:
		return "";
	}
}

static int check_tun_device(char *err, size_t errlen)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
		snprintf(err, errlen, "no TUN device: /dev/net/tun is missing "
			 "(load the tun module: modprobe tun)");
	else if (errno == EACCES || errno == EPERM)
		snprintf(err, errlen, "cannot open /dev/net/tun: %s (run as root: "
			 "TUN interfaces need CAP_NET_ADMIN)", strerror(errno));
	else
		snprintf(err, errlen, "cannot open /dev/net/tun: %s",
			 strerror(errno));
	return -errno;
}

static void on_reaped(const char *name, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "ibmcast up: removed namespace %s left by an instance "
		"that was killed\n", name);
}

static int netns_setup(struct up *u)
{
	for (unsigned i = 0; i < u->nspecs; i++) {
		struct tun_spec *sp = &u->spec[i];
		char name[IMC_NETNS_NAME_MAX];
		int rc;

		if (sp->netns_name) {
			/* Several --tun may name one namespace. */
			for (unsigned j = 0; j < i; j++) {
				if (u->spec[j].netns_name &&
				    !strcmp(u->spec[j].netns_name, sp->netns_name)) {
					sp->netns = u->spec[j].netns;
					break;
				}
			}
			if (sp->netns)
				continue;
			rc = imc_netns_open(sp->netns_name, &sp->netns);
			if (rc == -ENOENT) {
				rc = imc_netns_create(sp->netns_name, &sp->netns);
				sp->netns_made = !rc;
			}
			if (rc) {
				snprintf(u->err, sizeof(u->err),
					 "--tun %s: namespace %s: %s%s", sp->arg,
					 sp->netns_name, strerror(-rc),
					 errno_hint(rc));
				return rc;
			}
		} else if (u->own_netns) {
			netns_name_for(sp, sp->port, name);
			rc = imc_netns_create(name, &sp->netns);
			if (rc) {
				snprintf(u->err, sizeof(u->err),
					 "--tun %s: namespace %s: %s%s", sp->arg,
					 name, strerror(-rc), errno_hint(rc));
				return rc;
			}
			sp->netns_made = true;
		}
	}
	return 0;
}

static void netns_teardown(struct up *u)
{
	for (unsigned i = 0; i < u->nspecs; i++) {
		struct tun_spec *sp = &u->spec[i];
		bool shared = false;

		for (unsigned j = 0; j < i; j++)
			if (u->spec[j].netns == sp->netns)
				shared = true;
		if (sp->netns && !shared)
			imc_netns_destroy(sp->netns);
	}
	for (unsigned i = 0; i < u->nspecs; i++)
		u->spec[i].netns = NULL;
}

/* ---- bridges ---- */

static void op_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	imc_tun_bridge_deliver(ctx, p);
}

static void op_carrier(void *ctx, bool up)
{
	imc_tun_bridge_carrier(ctx, up);
}

/* Gives the interfaces back to the scenario's host model and removes the
 * TUNs, keeping their counters for the report. */
static void bridges_teardown(struct up *u, struct imc_scn_ctx *c)
{
	for (unsigned i = 0; i < u->nspecs; i++) {
		struct tun_spec *sp = &u->spec[i];
		struct imc_scn_ipoib_iface ifc;

		if (sp->tapped &&
		    !imc_scn_ipoib_tap(c, sp->node, sp->port, u->pkey, NULL,
				       &ifc))
			imc_ipoib_get_stats(ifc.ifc, &sp->ist);
		sp->tapped = false;
		if (!sp->bridge)
			continue;
		imc_tun_bridge_get_stats(sp->bridge, &sp->bst);
		imc_tun_get_stats(imc_tun_bridge_tun(sp->bridge), &sp->tst);
		imc_tun_bridge_destroy(sp->bridge);
		sp->bridge = NULL;
	}
}

/* A JSON event ends with its line. */
static void json_line(struct imc_json *j)
{
	(void)imc_tool_json_end(j, "ibmcast up");
}

/* The kernel of a bridged host joined or left an IP multicast group, and
 * the IPoIB interface followed: one line each. */
static void on_mcast(void *ctx, enum imc_tun_bridge_mcast ev,
		     const struct imc_ip_addr *group, const struct imc_gid *mgid)
{
	const struct tun_spec *sp = ctx;
	const struct imc_topo *t = imc_scenario_topo(sp->owner->s);
	char a[IMC_IP_ADDR_STRLEN], g[IMC_GID_STRLEN];

	imc_ip_addr_format(group, a);
	imc_gid_format(mgid, g);
	if (sp->owner->json) {
		struct imc_json j;

		imc_json_init(&j, stdout, 0, IMC_JSON_SPACED);
		imc_json_object_begin(&j);
		imc_json_kv_string(&j, "event", "mcast");
		imc_json_kv_string(&j, "host", t->node[sp->node].name);
		imc_json_kv_string(&j, "action", imc_tun_bridge_mcast_str(ev));
		imc_json_kv_string(&j, "group", a);
		imc_json_kv_gid(&j, "mgid", mgid);
		imc_json_object_end(&j);
		json_line(&j);
	} else {
		printf("  %s:%u  multicast %s (MGID %s): %s\n",
		       t->node[sp->node].name, sp->port, a, g,
		       imc_tun_bridge_mcast_str(ev));
	}
	fflush(stdout);
}

static int bridge_one(struct up *u, struct imc_scn_ctx *c, struct tun_spec *sp)
{
	struct imc_tun_config cfg = { 0 };
	struct imc_ipoib_host_ops ops = { .deliver = op_deliver,
					  .carrier = op_carrier };
	struct imc_scn_ipoib_iface ifc;
	char a[IMC_IP_ADDR_STRLEN];
	int rc;

	rc = imc_scn_ipoib_tap(c, sp->node, sp->port, u->pkey, NULL, &ifc);
	if (rc == -ENOENT)
		return imc_scn_fail(c, rc,
			"%s: no IPoIB interface for P_Key 0x%04x once the "
			"actions of time 0 have run (the scenario needs "
			"'at 0 ipoib-up %s ADDR/LEN ...')", sp->arg, u->pkey,
			sp->host);
	if (rc)
		return rc;
	/* Inside a namespace of its own the TUN looks like an IPoIB
	 * interface; beside the host's own interfaces it says whose it is. */
	cfg.name = sp->netns ? "ib%d" : "imc%d";
	cfg.netns = sp->netns;
	rc = imc_tun_bridge_create(u->loop, ifc.ifc, &cfg, &sp->bridge);
	if (rc)
		return imc_scn_fail(c, rc, "%s: TUN interface: %s%s", sp->arg,
				    strerror(-rc), errno_hint(rc));
	sp->naddrs = 0;
	for (unsigned k = 0; k < ifc.naddrs && k < ADDRS_MAX; k++) {
		rc = imc_tun_bridge_addr_add(sp->bridge, &ifc.addr[k],
					     ifc.plen[k]);
		if (rc) {
			imc_ip_addr_format(&ifc.addr[k], a);
			return imc_scn_fail(c, rc, "%s: address %s/%u on %s: %s",
				sp->arg, a, ifc.plen[k],
				imc_tun_name(imc_tun_bridge_tun(sp->bridge)),
				strerror(-rc));
		}
		sp->addr[sp->naddrs] = ifc.addr[k];
		sp->plen[sp->naddrs++] = ifc.plen[k];
	}
	sp->owner = u;
	imc_tun_bridge_on_mcast(sp->bridge, on_mcast, sp);
	ops.ctx = sp->bridge;
	rc = imc_scn_ipoib_tap(c, sp->node, sp->port, u->pkey, &ops, NULL);
	if (rc)
		return rc;
	sp->tapped = true;
	return 0;
}

static void iface_json(struct imc_json *j, const struct up *u,
		       const struct tun_spec *sp)
{
	const struct imc_topo *t = imc_scenario_topo(u->s);
	struct imc_tun *tun = imc_tun_bridge_tun(sp->bridge);
	struct imc_ipoib *ifc = imc_tun_bridge_ipoib(sp->bridge);
	struct imc_ipoib_hwaddr hw;
	char hws[IMC_IPOIB_HWADDR_STRLEN], a[IMC_IP_ADDR_STRLEN + 8];
	size_t n;

	imc_ipoib_hwaddr(ifc, &hw);
	imc_ipoib_hwaddr_format(&hw, hws);
	imc_json_object_begin(j);
	imc_json_kv_string(j, "host", t->node[sp->node].name);
	/* P_Key a number, as in every command's JSON. */
	imc_json_kv_u64(j, "port", sp->port);
	imc_json_kv_u64(j, "pkey", u->pkey);
	imc_json_kv_string(j, "ifname", imc_tun_name(tun));
	imc_json_key(j, "netns");
	if (sp->netns)
		imc_json_string(j, imc_netns_name(sp->netns));
	else
		imc_json_null(j);
	imc_json_kv_u64(j, "mtu", imc_tun_mtu(tun));
	imc_json_kv_bool(j, "has_carrier", imc_ipoib_carrier(ifc));
	imc_json_kv_string(j, "hwaddr", hws);
	imc_json_key(j, "addresses");
	imc_json_array_begin(j);
	for (unsigned k = 0; k < sp->naddrs; k++) {
		imc_ip_addr_format(&sp->addr[k], a);
		n = strlen(a);
		snprintf(a + n, sizeof(a) - n, "/%u", sp->plen[k]);
		imc_json_string(j, a);
	}
	imc_json_array_end(j);
	imc_json_object_end(j);
}

static void print_ready_json(const struct up *u)
{
	uint32_t hcas, sws, cables;
	struct imc_json j;

	imc_topo_counts(imc_scenario_topo(u->s), &hcas, &sws, &cables);
	imc_json_init(&j, stdout, 0, IMC_JSON_SPACED);
	imc_json_object_begin(&j);
	imc_json_kv_string(&j, "event", "ready");
	imc_json_kv_i64(&j, "pid", (int64_t)getpid());
	imc_json_kv_string(&j, "scenario", u->path);
	imc_json_kv_u64(&j, "hcas", hcas);
	imc_json_kv_u64(&j, "switches", sws);
	imc_json_key(&j, "interfaces");
	imc_json_array_begin(&j);
	for (unsigned i = 0; i < u->nspecs; i++)
		iface_json(&j, u, &u->spec[i]);
	imc_json_array_end(&j);
	imc_json_object_end(&j);
	json_line(&j);
}

static void print_ready(const struct up *u, struct imc_scn_ctx *c)
{
	const struct imc_topo *t = imc_scenario_topo(u->s);
	uint32_t hcas, sws, cables;
	char a[IMC_IP_ADDR_STRLEN];

	(void)c;
	if (u->json) {
		print_ready_json(u);
		fflush(stdout);
		return;
	}
	imc_topo_counts(t, &hcas, &sws, &cables);
	printf("ibmcast up: %s in real time (%" PRIu32 " HCAs, %" PRIu32
	       " switches), pid %ld\n", u->path, hcas, sws, (long)getpid());
	for (unsigned i = 0; i < u->nspecs; i++) {
		const struct tun_spec *sp = &u->spec[i];
		struct imc_tun *tun = imc_tun_bridge_tun(sp->bridge);
		struct imc_ipoib *ifc = imc_tun_bridge_ipoib(sp->bridge);
		struct imc_ipoib_hwaddr hw;
		char hws[IMC_IPOIB_HWADDR_STRLEN];

		imc_ipoib_hwaddr(ifc, &hw);
		imc_ipoib_hwaddr_format(&hw, hws);
		printf("  %s:%u  %s  netns %s  mtu %u  carrier %s\n",
		       t->node[sp->node].name, sp->port, imc_tun_name(tun),
		       sp->netns ? imc_netns_name(sp->netns) : "(this one)",
		       imc_tun_mtu(tun), imc_ipoib_carrier(ifc) ? "up" : "down");
		printf("      hwaddr %s\n     ", hws);
		for (unsigned k = 0; k < sp->naddrs; k++) {
			imc_ip_addr_format(&sp->addr[k], a);
			printf(" %s/%u", a, sp->plen[k]);
		}
		printf("%s\n", sp->naddrs ? "" : " (no addresses)");
	}
	printf("ready: SIGINT (Ctrl-C) or SIGTERM stops and removes it all");
	if (u->nspecs && u->spec[0].netns)
		printf("\n  e.g. ip netns exec %s ping ...",
		       imc_netns_name(u->spec[0].netns));
	printf("\n");
	fflush(stdout);
}

static int on_started(void *ctx, struct imc_scn_ctx *c)
{
	struct up *u = ctx;
	int rc = 0;

	for (unsigned i = 0; i < u->nspecs && !rc; i++)
		rc = bridge_one(u, c, &u->spec[i]);
	if (rc) {
		bridges_teardown(u, c);
		return rc;
	}
	print_ready(u, c);
	return 0;
}

static void on_ending(void *ctx, struct imc_scn_ctx *c)
{
	struct up *u = ctx;

	u->ended_at = imc_scn_now(c);
	imc_timer_cancel(u->loop, &u->until);
	bridges_teardown(u, c);
}

static bool on_interrupted(void *ctx)
{
	struct up *u = ctx;

	return sig_got || u->until_reached;
}

static void on_until(struct imc_timer *t)
{
	struct up *u = imc_container_of(t, struct up, until);

	u->until_reached = true;
	imc_loop_stop(u->loop);
}

/* The SA's groups at the end, with their members by JoinState: what the
 * kernels' joins and leaves left there. */
static void sa_groups_json(struct imc_json *j,
			   const struct imc_scenario_result *r)
{
	static const char *const keys[] = { "full", "nonmember", "sendonly" };
	size_t n = imc_scenario_report_len(r, "sa.list");
	char path[64];

	imc_json_key(j, "sa_groups");
	imc_json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		const char *mgid;

		snprintf(path, sizeof(path), "sa.list.%zu.mgid", i);
		mgid = imc_scenario_report_str(r, path);
		imc_json_object_begin(j);
		imc_json_kv_string(j, "mgid", mgid ? mgid : "");
		for (size_t k = 0; k < IMC_ARRAY_SIZE(keys); k++) {
			uint64_t v = 0;

			snprintf(path, sizeof(path), "sa.list.%zu.%s", i,
				 keys[k]);
			imc_scenario_report_u64(r, path, &v);
			imc_json_kv_u64(j, keys[k], v);
		}
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
}

static void bridge_json(struct imc_json *j, const struct up *u,
			const struct tun_spec *sp)
{
	const struct imc_topo *t = imc_scenario_topo(u->s);
	const struct imc_tun_bridge_stats *b = &sp->bst;
	uint64_t idrops = 0;

	for (int d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
		idrops += sp->ist.drops[d];
	imc_json_object_begin(j);
	imc_json_kv_string(j, "host", t->node[sp->node].name);
	imc_json_kv_u64(j, "to_ipoib", b->to_ipoib);
	imc_json_kv_u64(j, "to_ipoib_bytes", b->to_ipoib_bytes);
	imc_json_kv_u64(j, "to_kernel", b->to_kernel);
	imc_json_kv_u64(j, "to_kernel_bytes", b->to_kernel_bytes);
	imc_json_kv_u64(j, "tun_wakeups", sp->tst.wakeups);
	imc_json_kv_u64(j, "carrier_changes", b->carrier_changes);
	imc_json_kv_u64(j, "mcast_listens", b->mcast_listens);
	imc_json_kv_u64(j, "mcast_leaves", b->mcast_leaves);
	imc_json_kv_u64(j, "ipoib_drops", idrops);
	imc_json_key(j, "drops");
	imc_json_object_begin(j);
	for (int d = 0; d < IMC_TUN_BRIDGE_DROP__COUNT; d++)
		imc_json_kv_u64(j, imc_tun_bridge_drop_str(d), b->drops[d]);
	imc_json_object_end(j);
	imc_json_object_end(j);
}

static void print_stopped_json(const struct up *u, const char *why,
			       const struct imc_scenario_result *r)
{
	const struct imc_fabric_totals *tot = &r->totals;
	struct imc_json j;

	imc_json_init(&j, stdout, 0, IMC_JSON_SPACED);
	imc_json_object_begin(&j);
	imc_json_kv_string(&j, "event", "stopped");
	imc_json_kv_string(&j, "reason", why);
	imc_json_kv_double(&j, "seconds", (double)u->ended_at / 1e9, 3);
	imc_json_key(&j, "fabric");
	imc_json_object_begin(&j);
	imc_json_kv_u64(&j, "sent", tot->sent);
	imc_json_kv_u64(&j, "delivered", tot->delivered);
	imc_json_key(&j, "drops");
	imc_json_object_begin(&j);
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		imc_json_kv_u64(&j, imc_drop_str((enum imc_drop)d),
				tot->drops[d]);
	imc_json_object_end(&j);
	imc_json_object_end(&j);
	sa_groups_json(&j, r);
	imc_json_key(&j, "interfaces");
	imc_json_array_begin(&j);
	for (unsigned i = 0; i < u->nspecs; i++)
		bridge_json(&j, u, &u->spec[i]);
	imc_json_array_end(&j);
	imc_json_object_end(&j);
	json_line(&j);
}

static void print_stopped(const struct up *u, const char *why,
			  const struct imc_scenario_result *r)
{
	const struct imc_fabric_totals *tot = &r->totals;
	const struct imc_topo *t = imc_scenario_topo(u->s);
	bool any = false;

	if (u->json) {
		print_stopped_json(u, why, r);
		fflush(stdout);
		return;
	}
	printf("stopped (%s) after %.3f s\n", why,
	       (double)u->ended_at / 1e9);
	printf("  fabric: sent %" PRIu64 ", delivered %" PRIu64
	       ", dropped:", tot->sent, tot->delivered);
	for (int d = 0; d < IMC_DROP__COUNT; d++) {
		if (!tot->drops[d])
			continue;
		printf(" %s %" PRIu64, imc_drop_str((enum imc_drop)d),
		       tot->drops[d]);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
	for (unsigned i = 0; i < u->nspecs; i++) {
		const struct tun_spec *sp = &u->spec[i];
		const struct imc_tun_bridge_stats *b = &sp->bst;
		uint64_t idrops = 0;
		for (int d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
			idrops += sp->ist.drops[d];
		printf("  %s:%u  kernel->ipoib %" PRIu64 " packets (%" PRIu64
		       " bytes), ipoib->kernel %" PRIu64 " packets (%" PRIu64
		       " bytes)\n      dropped:", t->node[sp->node].name,
		       sp->port, b->to_ipoib, b->to_ipoib_bytes, b->to_kernel,
		       b->to_kernel_bytes);
		any = false;
		for (int d = 0; d < IMC_TUN_BRIDGE_DROP__COUNT; d++) {
			if (!b->drops[d])
				continue;
			printf(" %s %" PRIu64, imc_tun_bridge_drop_str(d),
			       b->drops[d]);
			any = true;
		}
		printf("%s (IPoIB counted %" PRIu64 " drops)\n",
		       any ? "" : " none", idrops);
	}
	fflush(stdout);
}

/* ---- the command ---- */

static int parse_tun(struct up *u, char *arg)
{
	struct tun_spec *sp;
	char *eq;

	if (u->nspecs == MAX_TUNS) {
		fprintf(stderr, "ibmcast up: at most %d --tun\n", MAX_TUNS);
		return IMC_EXIT_USAGE;
	}
	sp = &u->spec[u->nspecs++];
	memset(sp, 0, sizeof(*sp));
	sp->arg = arg;
	eq = strchr(arg, '=');
	if (eq) {
		*eq = '\0';
		sp->netns_name = eq + 1;
	}
	if (!arg[0] || strlen(arg) >= sizeof(sp->host) ||
	    (eq && !eq[1])) {
		if (eq)
			*eq = '=';
		fprintf(stderr, "ibmcast up: bad --tun '%s' (HOST or HOST=NETNS)\n",
			arg);
		return IMC_EXIT_USAGE;
	}
	snprintf(sp->host, sizeof(sp->host), "%s", arg);
	if (eq)
		*eq = '=';
	return 0;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns, now. */
static int64_t wall_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000 +
	       ((int64_t)r.tv_nsec - (int64_t)m.tv_nsec);
}

/* What the command line asks of the run, besides the bridges in u. */
struct up_opts {
	struct imc_scenario_run_opts ro;
	struct imc_pcap_config pcfg;
	const char *pcap_path;
	imc_time_t until;
	bool until_set;
};

/* One option: 0, or IMC_EXIT_USAGE once told. */
static int up_opt(struct up *u, struct up_opts *uo, int opt)
{
	uint64_t v;

	switch (opt) {
	case 't':
		return parse_tun(u, optarg) ? IMC_EXIT_USAGE : 0;
	case 'n':
		u->own_netns = true;
		return 0;
	case 'u':
		if (imc_opt_time("ibmcast up", "until", optarg, 0,
				 IMC_TIME_LIMIT, &uo->until))
			return IMC_EXIT_USAGE;
		uo->until_set = true;
		return 0;
	case 's':
		if (imc_opt_num("ibmcast up", "seed", optarg, 0, UINT64_MAX,
				&uo->ro.seed))
			return IMC_EXIT_USAGE;
		uo->ro.seed_set = true;
		return 0;
	case 'k':
		if (imc_opt_num("ibmcast up", "pkey", optarg, 0, 0xffff, &v) ||
		    (!(v & 0x7fff) &&
		     imc_opt_bad("ibmcast up", "pkey", optarg,
				 "the invalid P_Key (IBA 10.9.1.2); a P_Key such as 0xffff")))
			return IMC_EXIT_USAGE;
		u->pkey = (uint16_t)v;
		return 0;
	case 'S':
		if (imc_opt_num("ibmcast up", "snaplen", optarg, 1,
				IMC_PCAP_SNAPLEN, &v))
			return IMC_EXIT_USAGE;
		uo->pcfg.snaplen = (uint32_t)v;
		return 0;
	case 'p':
		uo->pcap_path = optarg;
		return 0;
	case 'j':
		u->json = true;
		return 0;
	default:
		help(stderr);
		return IMC_EXIT_USAGE;
	}
}

static int up_opts(struct up *u, struct up_opts *uo, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tun", required_argument, NULL, 't' },
		{ "netns", no_argument, NULL, 'n' },
		{ "until", required_argument, NULL, 'u' },
		{ "seed", required_argument, NULL, 's' },
		{ "pkey", required_argument, NULL, 'k' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "snaplen", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		rc = up_opt(u, uo, opt);
		if (rc)
			return rc;
	}
	if (optind != argc - 1 || !u->nspecs) {
		if (optind == argc - 1)
			fprintf(stderr, "ibmcast up: no --tun: name at least one host to bridge\n");
		else
			help(stderr);
		return IMC_EXIT_USAGE;
	}
	u->path = argv[optind];
	return 0;
}

/* Each --tun names a host of the scenario, and a port only once. */
static int resolve_hosts(struct up *u)
{
	for (unsigned i = 0; i < u->nspecs; i++) {
		struct tun_spec *sp = &u->spec[i];
		int rc = resolve_host(imc_scenario_topo(u->s), sp, u->err,
				      sizeof(u->err));

		for (unsigned j = 0; !rc && j < i; j++)
			if (u->spec[j].node == sp->node &&
			    u->spec[j].port == sp->port) {
				snprintf(u->err, sizeof(u->err),
					 "--tun %s: that port is bridged already",
					 sp->arg);
				rc = -EEXIST;
			}
		if (rc) {
			fprintf(stderr, "ibmcast up: %s\n", u->err);
			return IMC_EXIT_USAGE;
		}
	}
	return 0;
}

/* The real-time loop, the scenario on it until a signal or --until, and
 * the final report. */
static int run_loop(struct up *u, struct up_opts *uo)
{
	struct imc_scenario_run_opts *ro = &uo->ro;
	struct imc_scenario_result r;
	const char *why;
	int rc, code = IMC_EXIT_FAIL;

	rc = imc_loop_create_realtime(&u->loop);
	if (rc) {
		fprintf(stderr, "ibmcast up: event loop: %s\n", strerror(-rc));
		return IMC_EXIT_FAIL;
	}
	sig_loop = u->loop;
	if (sig_got)
		imc_loop_wake(u->loop);
	imc_timer_init(&u->until, on_until);
	if (uo->until_set && imc_timer_arm_in(u->loop, &u->until, uo->until)) {
		fprintf(stderr, "ibmcast up: out of memory\n");
		goto out;
	}
	/* The scenario's stop line does not apply: a signal or --until ends
	 * the run (the timer, because under steady traffic the real-time
	 * loop may not return to the run's slicing on its own). */
	ro->until_set = true;
	ro->until = IMC_TIME_MAX;
	ro->loop = u->loop;
	ro->started = on_started;
	ro->ending = on_ending;
	ro->interrupted = on_interrupted;
	ro->ctx = u;
	rc = imc_scenario_run(u->s, ro, &r, u->err, sizeof(u->err));
	imc_timer_cancel(u->loop, &u->until);
	if (rc) {
		fprintf(stderr, "ibmcast up: %s\n", u->err);
		goto out;
	}
	why = sig_got == SIGINT ? "SIGINT" : sig_got == SIGTERM ? "SIGTERM" :
	      sig_got == SIGHUP ? "SIGHUP" : u->until_reached ? "--until" :
	      "end";
	print_stopped(u, why, &r);
	code = IMC_EXIT_OK;
	if (r.leftover) {
		fprintf(stderr, "ibmcast up: %zu timers or watches left behind\n",
			r.leftover);
		code = IMC_EXIT_FAIL;
	}
	imc_scenario_result_free(&r);
out:
	sig_loop = NULL;
	imc_loop_destroy(u->loop);
	return code;
}

/* The machine's part: TUN device, signals, namespaces, the capture, then
 * the run; everything set up is taken down again. */
static int serve(struct up *u, struct up_opts *uo)
{
	struct imc_pcap *pc = NULL;
	int rc, code = IMC_EXIT_FAIL;

	if (check_tun_device(u->err, sizeof(u->err))) {
		fprintf(stderr, "ibmcast up: %s\n", u->err);
		return IMC_EXIT_FAIL;
	}
	/* Sub-millisecond waits of the real-time loop would otherwise be
	 * rounded up by the default 50 us timer slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* Caught from before the first namespace exists: a signal during
	 * the set-up ends the run at its first slice, through the teardown. */
	rc = signals_catch();
	if (rc) {
		fprintf(stderr, "ibmcast up: signals: %s\n", strerror(-rc));
		return IMC_EXIT_FAIL;
	}
	rc = imc_netns_reap(NETNS_PREFIX, on_reaped, NULL);
	if (rc < 0 && rc != -ENOENT)
		fprintf(stderr, "ibmcast up: looking for namespaces left behind: %s\n",
			strerror(-rc));
	if (netns_setup(u)) {
		fprintf(stderr, "ibmcast up: %s\n", u->err);
		goto out_netns;
	}
	if (uo->pcap_path) {
		/* The loop's clock is CLOCK_MONOTONIC; a capture is read
		 * against the wall clock. */
		uo->pcfg.ts_offset_ns = wall_offset();
		rc = imc_pcap_open_config(uo->pcap_path, &uo->pcfg, &pc);
		if (rc < 0) {
			fprintf(stderr, "ibmcast up: %s: %s\n", uo->pcap_path,
				strerror(-rc));
			code = IMC_EXIT_USAGE;
			goto out_netns;
		}
		uo->ro.pcap = pc;
	}
	code = run_loop(u, uo);
	if (pc && imc_pcap_close(pc) < 0 && code == IMC_EXIT_OK) {
		fprintf(stderr, "ibmcast up: cannot write %s\n", uo->pcap_path);
		code = IMC_EXIT_FAIL;
	}
out_netns:
	netns_teardown(u);
	signals_restore();
	return code;
}

static int run(int argc, char **argv)
{
	struct up_opts uo = {
		.pcfg = { .linktype = IMC_PCAP_LINKTYPE_USER0 },
	};
	struct up *u;
	int rc, code;

	u = calloc(1, sizeof(*u));
	if (!u) {
		fprintf(stderr, "ibmcast up: out of memory\n");
		return IMC_EXIT_FAIL;
	}
	u->pkey = 0xffff;
	code = up_opts(u, &uo, argc, argv);
	if (code) {
		free(u);
		return code;
	}
	rc = imc_scenario_parse_file(u->path, NULL, &u->s, u->err,
				     sizeof(u->err));
	if (rc) {
		fprintf(stderr, "ibmcast up: %s\n", u->err);
		free(u);
		return IMC_EXIT_USAGE;
	}
	code = resolve_hosts(u);
	if (!code)
		code = serve(u, &uo);
	imc_scenario_destroy(u->s);
	free(u);
	return code;
}

const struct imc_cmd imc_cmd_up = {
	.name = "up",
	.summary = "bridge a scenario's IPoIB hosts to Linux TUN interfaces, in real time",
	.run = run,
	.help = help,
};
