/* ibmcast fabric serve --joins: join trackers (mcast_fabric.h) on HCAs of
 * the served fabric, whose SA requests go through the fabric to the SA of
 * the port's SM, i.e. OpenSM's when OpenSM runs the fabric. They join as
 * their ports come ACTIVE and re-join on client reregister (IBA 14.4.11),
 * as OpenSM asks of every port when it starts as master. Progress lines
 * on stderr let a script time the join storm against OpenSM's SA:
 *
 *   joins all N at T_MS          every member JOINED (T from the start)
 *   joins rejoining              the first member went REJOINING
 *   joins back N after T_MS sent S retries R timeouts X failed F
 *                                every member JOINED again; T from the
 *                                first REJOINING; since then S requests
 *                                on the wire, R of them resends, X that
 *                                used up their retries
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_joins.h"
#include "ibmcast/gid.h"
#include "ibmcast/mcast_fabric.h"

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define MAX_GROUPS 64

struct member {
	struct fabric_joins *j;
	struct imc_mcast_member *m;
	bool joined;
};

struct port {
	struct member mem[MAX_GROUPS];
};

struct fabric_joins {
	struct imc_loop *loop;
	struct imc_mcast_fabric_set *set;
	struct port *p;
	unsigned np, ng;
	unsigned joined, failed;
	bool all_once, storm;
	imc_time_t t0, storm_t0;
	uint64_t sent0, retries0, timeouts0;
};

/* As bench_join_storm counts them: requests on the wire (first sends
 * and resends), resends, requests that used up their retries. */
static void sums(struct fabric_joins *j, uint64_t *sent, uint64_t *retries,
		 uint64_t *timeouts)
{
	struct imc_mcast_fabric_totals t;

	imc_mcast_fabric_set_totals(j->set, &t);
	*sent = t.sa_sent;
	*retries = t.sa_resent;
	*timeouts = t.timeouts;
}

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	struct member *x = arg;
	struct fabric_joins *j = x->j;
	bool joined = ev->type == IMC_MCAST_EV_JOINED;
	imc_time_t now = imc_loop_now(j->loop);
	unsigned total = j->np * j->ng;

	(void)m;
	if (ev->type == IMC_MCAST_EV_REJOINING && j->all_once && !j->storm) {
		j->storm = true;
		j->storm_t0 = now;
		sums(j, &j->sent0, &j->retries0, &j->timeouts0);
		fprintf(stderr, "joins rejoining\n");
	}
	if (ev->type == IMC_MCAST_EV_ERROR)
		j->failed++;
	if (joined != x->joined)
		j->joined += joined ? 1u : (unsigned)-1;
	x->joined = joined;
	if (j->joined < total)
		return;
	if (!j->all_once) {
		j->all_once = true;
		fprintf(stderr, "joins all %u at %.1f\n", total,
			(double)(now - j->t0) / 1e6);
	} else if (j->storm) {
		uint64_t s, r, t;

		sums(j, &s, &r, &t);
		j->storm = false;
		fprintf(stderr, "joins back %u after %.1f sent %" PRIu64
			" retries %" PRIu64 " timeouts %" PRIu64
			" failed %u\n", total,
			(double)(now - j->storm_t0) / 1e6, s - j->sent0,
			r - j->retries0, t - j->timeouts0, j->failed);
	}
}

int fabric_joins_parse(const char *s, struct fabric_joins_opts *o)
{
	char pol[16] = "paced";
	int n = sscanf(s, "%u,%u,%15s", &o->ports, &o->groups, pol);

	if (n < 2 || !o->ports || !o->groups || o->groups > MAX_GROUPS)
		return -EINVAL;
	if (!strcmp(pol, "paced"))
		o->immediate = false;
	else if (!strcmp(pol, "immediate"))
		o->immediate = true;
	else
		return -EINVAL;
	return 0;
}

int fabric_joins_start(struct imc_fabric *f, const struct fabric_joins_opts *o,
		       struct fabric_joins **out)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	struct fabric_joins *j = calloc(1, sizeof(*j));
	struct imc_gid mgid[MAX_GROUPS];
	int r = -ENOMEM;

	if (!j)
		return -ENOMEM;
	j->loop = imc_fabric_loop(f);
	j->t0 = imc_loop_now(j->loop);
	j->ng = o->groups;
	j->p = calloc(o->ports, sizeof(*j->p));
	if (!j->p)
		goto fail;
	r = imc_mcast_fabric_set_create(f, &j->set);
	if (r < 0)
		goto fail;
	for (unsigned g = 0; g < j->ng; g++) {
		char s[64];

		snprintf(s, sizeof(s), "ff15:1234:5707::%u", g + 1);
		if (imc_gid_parse(s, &mgid[g]) < 0) {
			r = -EINVAL;
			goto fail;
		}
	}
	/* The first HCAs, past the SM's node (OpenSM's own port). */
	for (uint32_t n = 0; n < t->nnodes && j->np < o->ports; n++) {
		struct imc_mcast_fabric_config cfg;
		struct imc_mcast_fabric *mf;
		struct port *p = &j->p[j->np];

		if (t->node[n].type != IMC_NODE_HCA || n == t->sm_node)
			continue;
		imc_mcast_fabric_config_init(&cfg);
		cfg.mcast.rejoin = o->immediate ? IMC_MCAST_REJOIN_IMMEDIATE
						: IMC_MCAST_REJOIN_PACED;
		cfg.mcast.seed = 1000003ull + j->np;
		cfg.client.seed = 7919ull + j->np;
		r = imc_mcast_fabric_set_get(j->set, n, 1, NULL, &cfg, &mf);
		if (r < 0)
			goto fail;
		j->np++;
		for (unsigned g = 0; g < j->ng; g++) {
			struct imc_mcast_join_req req;

			memset(&req, 0, sizeof(req));
			req.rec.mgid = mgid[g];
			req.rec.qkey = 0x1234;
			req.rec.pkey = 0xffff;
			req.comp_mask = CM(MGID) | CM(QKEY) | CM(TCLASS) |
					CM(PKEY) | CM(FLOW_LABEL) | CM(SL);
			req.join_state = IMC_JOIN_FULL;
			p->mem[g].j = j;
			r = imc_mcast_join(imc_mcast_fabric_tracker(mf),
					   &req, on_member, &p->mem[g],
					   &p->mem[g].m);
			if (r < 0)
				goto fail;
		}
	}
	if (j->np < o->ports) {
		r = -ENOSPC;
		goto fail;
	}
	*out = j;
	return 0;
fail:
	fabric_joins_stop(j);
	return r;
}

void fabric_joins_stop(struct fabric_joins *j)
{
	if (!j)
		return;
	for (unsigned i = 0; i < j->np; i++)
		for (unsigned g = 0; g < j->ng; g++)
			if (j->p[i].mem[g].m)
				imc_mcast_leave(j->p[i].mem[g].m);
	imc_mcast_fabric_set_destroy(j->set);
	free(j->p);
	free(j);
}
