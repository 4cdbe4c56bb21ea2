/* The `opensm` setting: the scenario's fabric is served with ibsim's
 * client protocol (src/simserve) on a real-time loop and the real
 * OpenSM, started through LD_PRELOAD=libumad2sim.so (ibmcast/opensm.h),
 * is its SM and SA: the fabric's own SM and SA step aside (external_sm),
 * OpenSM assigns the LIDs and writes the LFTs and MFTs, and the hosts'
 * SA MADs go to OpenSM's SA at the SM LID of their PortInfo.
 *
 *   opensm [wait=TIME] [hold=TIME] [node=NODE]
 *
 * wait bounds the wait for SUBNET UP (default 60s), hold keeps the
 * fabric served after the end of the run so that saquery & co. can read
 * OpenSM's state (a line on stderr gives the exports; the hold ends
 * early when DIR/release appears), node is where OpenSM attaches
 * (SIM_HOST; default the server's default node, the first of the
 * topology).
 *
 * The server runs on a private socket name unless IBSIM_SOCKNAME is set;
 * OpenSM's private directory, binary and umad2sim are ibmcast/opensm.h's
 * (IBMCAST_OPENSM, IBMCAST_UMAD2SIM, IBMCAST_OPENSM_KEEP).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/opensm.h"
#include "ibmcast/simserve.h"
#include "scenario/desc.h"
#include "scenario/scn.h"
#include "scenario/scn_served.h"

#define POLL (50 * IMC_NSEC_PER_MSEC)

struct scn_served_cfg {
	imc_time_t wait;         /* 0: OpenSM's default, 60 s */
	imc_time_t hold;
	bool has_node;
	uint32_t node;
};

struct scn_served {
	const struct scn_served_cfg *cfg;
	struct imc_loop *loop;
	struct imc_simserve *srv;
	struct imc_opensm *osm;
	uint32_t node;           /* where OpenSM attached */
	unsigned restarts;       /* opensm-restart lines run */
};

/* ---- the setting ---- */

static int served_parse(struct imc_scn_parser *p, unsigned argc,
			const char *const *argv, void **data)
{
	struct scn_served_cfg *c;
	const char *v;
	int rc = scn_words_unique(p, argc, argv);

	if (rc)
		return rc;
	if (scn_served_cfg(p->s))
		return imc_scn_parse_error(p, "a second opensm line");
	c = calloc(1, sizeof(*c));
	if (!c)
		return imc_scn_parse_error(p, "out of memory");
	*data = c;
	for (unsigned i = 0; i < argc; i++) {
		unsigned port;

		if (imc_scn_kv(argv[i], "wait", &v))
			rc = imc_scn_parse_time(p, "wait", v, &c->wait);
		else if (imc_scn_kv(argv[i], "hold", &v))
			rc = imc_scn_parse_time(p, "hold", v, &c->hold);
		else if (imc_scn_kv(argv[i], "node", &v)) {
			rc = imc_scn_parse_port(p, v, false, &c->node, &port);
			c->has_node = true;
		} else
			rc = imc_scn_parse_error(p, "unknown option '%s' "
				"(wait=TIME, hold=TIME, node=NODE)", argv[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void served_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct scn_served_cfg *c = data;

	if (c->wait) {
		fprintf(f, " wait=");
		imc_scn_print_time(f, c->wait);
	}
	if (c->hold) {
		fprintf(f, " hold=");
		imc_scn_print_time(f, c->hold);
	}
	if (c->has_node) {
		fprintf(f, " node=");
		scn_print_name(f, t->node[c->node].name);
	}
}

/* No run function: the runner reads the line before it makes the
 * fabric, which must know that its SM is external. */
static const struct imc_scn_verb verb_opensm = {
	.name = "opensm", .kind = IMC_SCN_SETTING, .parse = served_parse,
	.print = served_print, .free = free,
};

/* opensm-restart: OpenSM killed (SIGKILL) and started again on the
 * same node, as a crashed SM restarted: the new one sweeps, keeps the
 * LIDs it finds in the ports, and sets ClientReregister on every port
 * (IBA 14.4.11), so that the hosts join again. Does not wait for it. */
static const struct scn_desc restart_desc = {
	.usage = "expected 'opensm-restart' alone",
};

static int restart_run(struct imc_scn_ctx *c, void *data)
{
	struct scn_served *sv = scn_ctx_served(c);
	int rc;

	(void)data;
	if (!sv)
		return imc_scn_fail(c, -ENOENT,
				    "no OpenSM runs: the scenario has no opensm line");
	rc = imc_opensm_restart(sv->osm);
	if (rc)
		return imc_scn_fail(c, rc, "%s", imc_opensm_reason(sv->osm));
	sv->restarts++;
	return 0;
}

SCN_DESC_VERB(restart, "opensm-restart", IMC_SCN_ACTION, restart_desc,
	      restart_run);

/* The report's opensm section: where OpenSM ran and how long it took
 * to bring the subnet up; absent from runs without an opensm line. */
static int served_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	struct scn_served *sv = scn_ctx_served(c);
	struct imc_opensm_status st;
	const char *node;

	if (!sv)
		return 0;
	imc_opensm_get_status(sv->osm, &st);
	node = imc_scn_topo(c)->node[sv->node].name;
	imc_scn_report_str(rep, "node", node);
	imc_scn_report_u64(rep, "subnet_up_ns", st.up_time);
	imc_scn_report_u64(rep, "restarts", sv->restarts);
	imc_scn_report_line(rep, "OpenSM at %s: SUBNET UP, every port ACTIVE "
			    "after %.3f s; it was the SM and the SA", node,
			    (double)st.up_time / 1e9);
	return 0;
}

static const struct imc_scn_section section_opensm = {
	.name = "opensm", .rank = 50, .report = served_report,
};

int scn_lang_add_served(struct imc_scn_lang *l)
{
	int rc = imc_scn_lang_add_verb(l, &verb_opensm);

	if (!rc)
		rc = imc_scn_lang_add_verb(l, &restart_verb);
	return rc ? rc : imc_scn_lang_add_section(l, &section_opensm);
}

const struct scn_served_cfg *scn_served_cfg(const struct imc_scenario *s)
{
	for (unsigned i = 0; i < s->nsettings; i++)
		if (!strcmp(s->settings[i].verb->name, verb_opensm.name))
			return s->settings[i].data;
	return NULL;
}

/* ---- the served fabric ---- */

/* The server, on a private socket name unless IBSIM_SOCKNAME is set
 * (parallel runs never meet), OpenSM's node its default node. */
static int serve(struct scn_served *sv, struct imc_fabric *f, char *msg,
		 size_t msglen)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	struct imc_simserve_config sc;
	char name[48];
	int rc;

	imc_simserve_config_init(&sc);
	if (!getenv("IBSIM_SOCKNAME")) {
		snprintf(name, sizeof(name), "imcscn%ld", (long)getpid());
		sc.sockname = name;     /* copied by the server */
	}
	if (sv->cfg->has_node)
		sc.default_node = sv->cfg->node;
	/* The server's default: the topology's SM node, else the first. */
	sv->node = sv->cfg->has_node ? sv->cfg->node :
		   t->sm_node < t->nnodes ? t->sm_node : 0;
	rc = imc_simserve_create(f, sv->loop, &sc, &sv->srv);
	if (rc)
		snprintf(msg, msglen, "cannot serve the fabric: %s%s",
			 strerror(-rc), rc == -EADDRINUSE ?
			 " (another simulator uses the socket name)" : "");
	return rc;
}

int scn_served_start(const struct scn_served_cfg *cfg, struct imc_fabric *f,
		     struct imc_loop *loop, imc_time_t wait,
		     struct scn_served **out, char *msg, size_t msglen)
{
	struct imc_opensm_config oc;
	struct imc_opensm_status st;
	struct scn_served *sv;
	int rc;

	*out = NULL;
	sv = calloc(1, sizeof(*sv));
	if (!sv)
		return -ENOMEM;
	sv->cfg = cfg;
	sv->loop = loop;
	rc = serve(sv, f, msg, msglen);
	if (rc)
		goto fail;
	imc_opensm_config_init(&oc);
	if (cfg->has_node)
		oc.node = cfg->node;
	rc = imc_opensm_create(sv->srv, f, loop, &oc, &sv->osm);
	if (!rc) {
		rc = imc_opensm_start(sv->osm);
		if (!rc)
			rc = imc_opensm_wait_up(sv->osm, wait ? wait : cfg->wait);
		if (rc)
			snprintf(msg, msglen, "%s", imc_opensm_reason(sv->osm));
	}
	if (rc)
		goto fail;
	imc_opensm_get_status(sv->osm, &st);
	fprintf(stderr, "opensm: SUBNET UP, every port ACTIVE after %.3f s\n",
		(double)st.up_time / 1e9);
	*out = sv;
	return 0;
fail:
	if (!msg[0])
		snprintf(msg, msglen, "%s", strerror(-rc));
	scn_served_stop(sv);
	return rc;
}

void scn_served_hold(struct scn_served *sv)
{
	struct imc_opensm_status st;
	char release[320];
	imc_time_t end;

	if (!sv || !sv->cfg->hold)
		return;
	imc_opensm_get_status(sv->osm, &st);
	snprintf(release, sizeof(release), "%s/release", st.dir);
	fprintf(stderr, "opensm: holding the fabric %.1f s: export "
		"IBSIM_SOCKNAME=%s LD_PRELOAD=%s; touch %s ends it\n",
		(double)sv->cfg->hold / 1e9, imc_simserve_sockname(sv->srv),
		st.umad2sim, release);
	fflush(stderr);
	end = imc_loop_now(sv->loop) + sv->cfg->hold;
	while (imc_loop_now(sv->loop) < end && access(release, F_OK))
		if (imc_loop_run_until(sv->loop,
				       imc_loop_now(sv->loop) + POLL) < 0)
			break;
}

void scn_served_stop(struct scn_served *sv)
{
	if (!sv)
		return;
	/* OpenSM first: it may still send to the server while it stops. */
	imc_opensm_destroy(sv->osm);
	imc_simserve_destroy(sv->srv);
	free(sv);
}
