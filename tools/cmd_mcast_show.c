/* ibmcast mcast show: the multicast groups of a port, as the `ibmcast join`
 * processes of the port hold them, read from their control sockets
 * (mcast_ctl.h). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/mcast_ctl.h"
#include "mcastd_show.h"
#include "tools.h"

void imc_mcast_show_help(FILE *f)
{
	fprintf(f,
"usage: ibmcast mcast show [--device D] [--port N] [--all] [--run-dir DIR]\n"
"                          [--socket PATH] [--json]\n"
"\n"
"Lists the multicast groups of a port as the join trackers of the port's\n"
"`ibmcast join` processes hold them: for each process, its port (device,\n"
"port number, GID, LID, SM LID) and, in MGID order, each group's MLID,\n"
"the JoinState held at the SA, the JoinState its members want, the\n"
"number of members, whether the SA holds it now (joined) or a request\n"
"is on its way, and the group's record (Q_Key, P_Key, MTU, rate, SL,\n"
"TClass, FlowLabel, HopLimit, scope).\n"
"\n"
"When ibmcastd runs, it comes first: its ports, each port's groups as\n"
"the daemon's tracker holds them at the SA (MLID, JoinState held, wanted,\n"
"members, joined or pending), and each client process (pid, uid, gid,\n"
"command) with its members (MGID, JoinState, state, last status).\n"
"\n"
"How it learns the rest: every standalone `ibmcast join` serves a unix socket\n"
"RUN_DIR/<port GUID>-<pid>.sock; show opens the port through libibumad\n"
"only to learn its GUID (no MAD is sent), connects to each socket of\n"
"that GUID and reads the listing. The SA's own view of the port is\n"
"`ibmcast sa query` (or saquery -m) with a trusted SM_Key; the two agree\n"
"once every request of the trackers is answered.\n"
"\n"
"Options:\n"
"  --device D, --port N  the port (default: libibumad's first active)\n"
"  --all                 every port's processes in RUN_DIR; the port is\n"
"                        not opened\n"
"  --run-dir DIR         default $IBMCAST_RUN_DIR, $XDG_RUNTIME_DIR/ibmcast,\n"
"                        /run/ibmcast for root, /tmp/ibmcast-UID\n"
"  --socket PATH         ibmcastd's socket (default $IBMCAST_SOCKET, else\n"
"                        RUN_DIR/ibmcastd.sock when --run-dir or\n"
"                        $IBMCAST_RUN_DIR is set, else\n"
"                        /run/ibmcast/ibmcastd.sock)\n"
"  --json                {\"daemon\":null|{\"socket\",\"ports\":[{\"device\",\n"
"                        \"port\",\"gid\"}],\"groups\":[{\"port_gid\",\"mgid\",\n"
"                        \"mlid\",\"join_state\",\"wanted\",\"members\",\n"
"                        \"is_joined\"}],\"clients\":[{\"pid\",\"uid\",\"gid\",\n"
"                        \"comm\",\"members\":[{\"mgid\",\"port_gid\",\n"
"                        \"join_state\",\"state\",\"status\"}]}]},\n"
"                        \"processes\":[{\"device\",\"port\",\"port_gid\",\n"
"                        \"lid\",\"sm_lid\",\"pid\",\"watch\",\"groups\":[{\"mgid\",\n"
"                        \"mlid\",\"join_state\",\"wanted\",\"members\",\n"
"                        \"is_joined\",\"qkey\",\"pkey\",\"mtu\",\"rate\",\"sl\",\n"
"                        \"tclass\",\"flow_label\",\"hop_limit\",\"scope\"}]}]}\n"
"\n"
"Sockets left by a process that died are removed.\n"
"\n"
"Exit: 0 listed (possibly nothing), 1 the port could not be read, 2 bad\n"
"usage.\n");
}

static int usage_error(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "ibmcast mcast: %s '%s' (try 'ibmcast mcast show "
			"--help')\n", what, arg);
	else
		fprintf(stderr, "ibmcast mcast: %s (try 'ibmcast mcast show "
			"--help')\n", what);
	return IMC_EXIT_USAGE;
}

static int cmp_listing(const void *a, const void *b)
{
	const struct imc_ctl_listing *x = a, *y = b;
	int c = imc_gid_cmp(&x->port_gid, &y->port_gid);

	if (c)
		return c;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* A process's group as the tracker's printers take it. */
static struct imc_mcast_group_info info_of(const struct imc_ctl_group *x)
{
	struct imc_mcast_group_info g = {
		.rec = x->rec, .join_state = x->join_state,
		.wanted = x->wanted, .members = x->members,
		.joined = x->joined,
	};

	return g;
}

static void print_text(const struct imc_ctl_listing *l, size_t n)
{
	char g[IMC_GID_STRLEN];

	for (size_t i = 0; i < n; i++) {
		imc_gid_format(&l[i].port_gid, g);
		printf("port device=%s port=%u gid=%s lid=%u sm_lid=%u pid=%ld "
		       "watch=%s groups=%zu\n", l[i].device, l[i].port, g,
		       l[i].lid, l[i].sm_lid, l[i].pid, l[i].watch, l[i].n);
		for (size_t j = 0; j < l[i].n; j++) {
			struct imc_mcast_group_info gi = info_of(&l[i].groups[j]);

			fputs("  ", stdout);
			imc_mcast_group_info_print_text(stdout, &gi);
		}
	}
}

/* dview: the daemon's view, already JSON, or NULL. */
static void print_json(const char *dview, const struct imc_ctl_listing *l,
		       size_t n)
{
	struct imc_json j;

	imc_json_init(&j, stdout, 0, 0);
	imc_json_object_begin(&j);
	imc_json_key(&j, "daemon");
	if (!dview)
		imc_json_null(&j);
	else if (!imc_json_value_follows(&j))
		fputs(dview, stdout);
	imc_json_key(&j, "processes");
	imc_json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		imc_json_object_begin(&j);
		imc_json_kv_string(&j, "device", l[i].device);
		imc_json_kv_u64(&j, "port", l[i].port);
		imc_json_kv_gid(&j, "port_gid", &l[i].port_gid);
		imc_json_kv_u64(&j, "lid", l[i].lid);
		imc_json_kv_u64(&j, "sm_lid", l[i].sm_lid);
		imc_json_kv_i64(&j, "pid", l[i].pid);
		imc_json_kv_string(&j, "watch", l[i].watch);
		imc_json_key(&j, "groups");
		imc_json_array_begin(&j);
		for (size_t k = 0; k < l[i].n; k++) {
			struct imc_mcast_group_info g = info_of(&l[i].groups[k]);

			imc_mcast_group_info_json(&j, &g);
		}
		imc_json_array_end(&j);
		imc_json_object_end(&j);
	}
	imc_json_array_end(&j);
	imc_json_object_end(&j);
	(void)imc_tool_json_end(&j, "ibmcast mcast");
}

static int is_sock(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && !strcmp(d->d_name + n - 5, ".sock");
}

/* The daemon's view into *buf; returns as imc_mcastd_show_write(). */
static int daemon_view(const char *sock_opt, const char *run_dir,
		       uint64_t guid, bool json, char **buf)
{
	char sock[108];
	size_t len;
	FILE *f;
	int r;

	*buf = NULL;
	if (imc_mcastd_socket_path(sock_opt, run_dir, sock, sizeof(sock)) < 0) {
		fprintf(stderr, "ibmcast mcast: ibmcastd's socket path is too "
			"long\n");
		return -ENAMETOOLONG;
	}
	f = open_memstream(buf, &len);
	if (!f)
		return -ENOMEM;
	r = imc_mcastd_show_write(f, sock, guid, json);
	if (fclose(f) && r > 0)
		r = -ENOMEM;
	return r;
}

static int do_show(const char *device, unsigned port, bool all,
		   const char *run_dir, const char *sock_opt, bool json)
{
	char *dview = NULL;
	uint64_t port_guid = 0;
	int dr;
	struct imc_ctl_listing *ls = NULL;
	struct dirent **ents = NULL;
	char dir[256], prefix[32] = "";
	size_t n = 0;
	int ne, rc = IMC_EXIT_OK;

	if (imc_ctl_run_dir(run_dir, dir, sizeof(dir)) < 0)
		return usage_error("run directory name too long", NULL);
	if (!all) {
		umad_port_t up;
		uint64_t guid;

		memset(&up, 0, sizeof(up));
		if (umad_init() < 0 || umad_get_port(device, (int)port, &up) < 0) {
			fprintf(stderr, "ibmcast mcast: cannot read %s port %u "
				"through libibumad\n",
				device ? device : "the default CA", port);
			imc_port_hint("ibmcast mcast", -ENODEV);
			return IMC_EXIT_FAIL;
		}
		memcpy(&guid, &up.port_guid, sizeof(guid));
		umad_release_port(&up);
		port_guid = be64toh(guid);
		snprintf(prefix, sizeof(prefix), "%016" PRIx64 "-", port_guid);
	}
	dr = daemon_view(sock_opt, run_dir, port_guid, json, &dview);
	if (dr < 0)
		rc = IMC_EXIT_FAIL;
	ne = scandir(dir, &ents, is_sock, alphasort);
	if (ne < 0) {
		if (errno != ENOENT) {
			fprintf(stderr, "ibmcast mcast: %s: %s\n", dir,
				strerror(errno));
			return IMC_EXIT_FAIL;
		}
		ne = 0;
	}
	ls = calloc((size_t)ne + 1, sizeof(*ls));
	for (int i = 0; i < ne; i++) {
		char path[512];
		int r;

		if (ls &&
		    !strncmp(ents[i]->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 ents[i]->d_name);
			r = imc_ctl_fetch(path, &ls[n]);
			if (r == 0)
				n++;
			else if (r == -ECONNREFUSED)
				(void)unlink(path);
			else
				fprintf(stderr, "ibmcast mcast: %s: %s\n", path,
					strerror(-r));
		}
		free(ents[i]);
	}
	free(ents);
	if (!ls) {
		rc = IMC_EXIT_FAIL;
	} else {
		qsort(ls, n, sizeof(*ls), cmp_listing);
		if (json) {
			print_json(dr > 0 ? dview : NULL, ls, n);
		} else {
			if (dr > 0)
				fputs(dview, stdout);
			print_text(ls, n);
		}
		if (!n && !json && dr <= 0)
			fprintf(stderr, "ibmcast mcast: no `ibmcast join` process "
				"found in %s%s\n", dir,
				all ? "" : " for this port");
	}
	for (size_t i = 0; i < n; i++)
		imc_ctl_listing_free(&ls[i]);
	free(ls);
	free(dview);
	return rc;
}

enum { OPT_DEVICE = 256, OPT_PORT, OPT_ALL, OPT_RUN_DIR, OPT_JSON, OPT_SOCKET };

/* argv[0] is "show". */
int imc_mcast_show_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *device = NULL, *run_dir = NULL, *sock = NULL;
	unsigned port = 0;
	bool all = false, json = false;
	int ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'h':
			imc_mcast_show_help(stdout);
			return IMC_EXIT_OK;
		case OPT_DEVICE: device = optarg; break;
		case OPT_PORT: {
			uint64_t v;

			if (imc_opt_num("ibmcast mcast", "port", optarg, 0,
					255, &v))
				return IMC_EXIT_USAGE;
			port = (unsigned)v;
			break;
		}
		case OPT_ALL: all = true; break;
		case OPT_RUN_DIR: run_dir = optarg; break;
		case OPT_JSON: json = true; break;
		case OPT_SOCKET: sock = optarg; break;
		default:
			return usage_error("unknown option or missing value",
					   argv[optind - 1]);
		}
	}
	if (optind != argc)
		return usage_error("show takes no operands", argv[optind]);
	if (all && (device || port))
		return usage_error("--all lists every port: no --device/--port",
				   NULL);
	return do_show(device, port, all, run_dir, sock, json);
}
