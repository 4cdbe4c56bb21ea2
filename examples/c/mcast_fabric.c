/* Join a multicast group on the embedded fabric and send to it.
 *
 * Three HCAs on one switch; the first runs the SM and the SA. The two
 * others each have a join tracker and a UD QP; both join ff12:1234::7 as
 * FullMember, the first sends one datagram to the group with the address
 * vector of its JOINED record, the second receives it. Everything runs
 * on a virtual clock: the output is the same at every run.
 *
 * Build: cc mcast_fabric.c $(pkg-config --cflags --libs ibmcast-sim)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>


#include <ibmcast/sim.h>

#define GROUP "ff12:1234::7"
#define QKEY 0x1234u

struct host {
	const char *name;
	struct imc_mcast_fabric *mf;     /* the port's join tracker */
	struct imc_qp *qp;
	struct imc_mcast_member *member;
	struct imc_mcmr rec;             /* the group, once joined */
	int joined;
};

/* [callback] Joins complete from the loop, never inside imc_mcast_join(). */
static void on_join(void *arg, struct imc_mcast_member *m,
		    const struct imc_mcast_event *ev)
{
	struct host *h = arg;
	char mgid[IMC_GID_STRLEN];

	(void)m;
	if (ev->type != IMC_MCAST_EV_JOINED) {
		printf("%s: %s, status %d\n", h->name,
		       imc_mcast_event_str(ev->type), ev->status);
		return;
	}
	h->rec = *ev->rec;   /* ev->rec is valid during the call only */
	h->joined = 1;
	imc_gid_format(&ev->rec->mgid, mgid);
	printf("%s: joined %s mlid 0x%04x qkey 0x%x\n", h->name, mgid,
	       ev->rec->mlid, ev->rec->qkey);
}
/* [/callback] */

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		    void *ctx)
{
	struct host *h = ctx;

	(void)qp;
	printf("%s: received \"%.*s\" from lid %u to mlid 0x%04x\n", h->name,
	       (int)r->len, (const char *)r->data, r->slid, r->dlid);
}

/* [join] */
static int join(struct host *h)
{
	struct imc_mcast_join_req req;
	/* The components an SA needs to create the group (IBA 15.2.5.17:
	 * Q_Key, P_Key, TClass, SL, FlowLabel); zero fields take their
	 * defaults, PortGID is filled by the tracker. */
	struct imc_mcmr_create c = { .qkey = QKEY };

	memset(&req, 0, sizeof(req));
	imc_gid_parse(GROUP, &c.mgid);
	if (imc_mcmr_fill_create(&req.rec, &req.comp_mask, &c))
		return -EINVAL;
	req.join_state = IMC_JOIN_FULL;
	req.qp = h->qp;      /* attached before on_join runs */
	return imc_mcast_join(imc_mcast_fabric_tracker(h->mf), &req, on_join,
			      h, &h->member);
}
/* [/join] */

/* [send] */
static int send_to_group(struct host *h, const char *text)
{
	struct imc_mcast_av av;
	int rc = imc_mcast_send_av(&h->rec, &av);

	if (rc)
		return rc;
	return imc_mcast_fabric_send(h->qp, &av, text, strlen(text));
}
/* [/send] */

int main(void)
{
	struct host hosts[2] = { { .name = "host1" }, { .name = "host2" } };
	struct imc_sa_fabric *sa;
	struct imc_fabric *f;
	struct imc_topo *topo;
	struct imc_loop *loop;
	unsigned n = 0;
	int rc;

	/* [fabric] */
	if (imc_topo_generate("switch:hosts=3", &topo, NULL, 0) ||
	    imc_loop_create_virtual(0, &loop) ||
	    imc_fabric_create(topo, loop, NULL, &f))
		return 1;
	imc_fabric_bring_up(f);        /* the SM assigns LIDs, routes */
	imc_loop_run(loop);            /* until nothing is left to do */
	if (imc_sa_fabric_create(f, NULL, &sa))   /* the SA on the SM port */
		return 1;
	/* [/fabric] */

	for (uint32_t node = 0; node < topo->nnodes && n < 2; node++) {
		struct host *h = &hosts[n];

		if (topo->node[node].type != IMC_NODE_HCA ||
		    node == topo->sm_node)
			continue;
		n++;
		if (imc_mcast_fabric_create(f, node, 1, NULL, NULL, &h->mf) ||
		    imc_qp_create(f, node, 1, 0, QKEY, 0xffff, on_recv, h,
				  &h->qp) ||
		    join(h))
			return 1;
	}
	imc_loop_run(loop);
	if (!hosts[0].joined || !hosts[1].joined)
		return 1;

	rc = send_to_group(&hosts[0], "hello, group");
	printf("host1: sent to the group: %d\n", rc);
	imc_loop_run(loop);

	/* Every join has one leave; the last one deletes the group. */
	for (unsigned i = 0; i < 2; i++) {
		imc_mcast_leave(hosts[i].member);
		imc_loop_run(loop);
		imc_qp_destroy(hosts[i].qp);
		imc_mcast_fabric_destroy(hosts[i].mf);
	}
	imc_sa_fabric_destroy(sa);
	imc_fabric_destroy(f);
	printf("objects left on the loop: %zu\n", imc_loop_destroy(loop));
	imc_topo_destroy(topo);
	return rc ? 1 : 0;
}
