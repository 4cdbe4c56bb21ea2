/* Join a multicast group on a real InfiniBand port, through libibumad.
 *
 *   umad_join [MGID]        (default ff12:1234::8)
 *
 * The port is libibumad's default (the first active port of the first
 * CA; under umad2sim, the simulated HCA SIM_HOST names). The program
 * creates the group if it is missing, prints the record the SA answered
 * and the address vector a sender would use, then leaves. Only
 * libibmcast is linked: a host program needs no simulator.
 *
 * Build: cc umad_join.c $(pkg-config --cflags --libs ibmcast)
 */
#include <stdio.h>
#include <string.h>


#include <ibmcast/ibmcast.h>

struct state {
	struct imc_loop *loop;
	int status;       /* 1 until the join completes */
};

static void on_join(void *arg, struct imc_mcast_member *m,
		    const struct imc_mcast_event *ev)
{
	struct state *s = arg;
	struct imc_mcast_av av;
	char mgid[IMC_GID_STRLEN];

	(void)m;
	if (ev->type == IMC_MCAST_EV_JOINED &&
	    imc_mcast_send_av(ev->rec, &av) == 0) {
		imc_gid_format(&ev->rec->mgid, mgid);
		printf("joined %s mlid 0x%04x qkey 0x%x pkey 0x%04x sl %u\n",
		       mgid, ev->rec->mlid, ev->rec->qkey, ev->rec->pkey,
		       ev->rec->sl);
		printf("send av: dlid 0x%04x qpn 0x%06x hop_limit %u\n",
		       av.dlid, av.remote_qpn, av.hop_limit);
		s->status = 0;
	} else {
		printf("join: %s, status %d\n", imc_mcast_event_str(ev->type),
		       ev->status);
		s->status = 2;
	}
	imc_loop_stop(s->loop);
}

int main(int argc, char **argv)
{
	struct state s = { .status = 1 };
	struct imc_mcast_join_req req;
	struct imc_mcmr_create c = { 0 };
	struct imc_mcast_member *m;
	struct imc_mcast_umad *mu;
	char gid[IMC_GID_STRLEN];
	int rc;

	memset(&req, 0, sizeof(req));
	if (imc_gid_parse(argc > 1 ? argv[1] : "ff12:1234::8", &c.mgid)) {
		fprintf(stderr, "umad_join: bad MGID\n");
		return 2;
	}
	/* [port] */
	if (imc_loop_create_realtime(&s.loop))
		return 1;
	rc = imc_mcast_umad_open(s.loop, NULL, NULL, &mu);
	if (rc) {
		fprintf(stderr, "umad_join: no port: %s\n", strerror(-rc));
		return 1;
	}
	imc_gid_format(&imc_mcast_umad_port(mu)->gid, gid);
	printf("port %s lid %u\n", gid, imc_mcast_umad_port(mu)->lid);
	/* [/port] */

	c.qkey = 0x1234;
	if (imc_mcmr_fill_create(&req.rec, &req.comp_mask, &c))
		return 1;
	req.join_state = IMC_JOIN_FULL;
	if (imc_mcast_join(imc_mcast_umad_tracker(mu), &req, on_join, &s, &m))
		return 1;
	/* Real time: at most 10 s for the SA's answer. */
	imc_loop_run_until(s.loop, imc_loop_now(s.loop) + 10 * IMC_NSEC_PER_SEC);
	if (s.status == 1)
		printf("join: no answer\n");
	imc_mcast_leave(m);
	/* Give the Delete time to reach the SA. */
	imc_loop_run_until(s.loop, imc_loop_now(s.loop) + IMC_NSEC_PER_SEC / 2);
	imc_mcast_umad_close(mu);
	imc_loop_destroy(s.loop);
	printf("left\n");
	return s.status;
}
