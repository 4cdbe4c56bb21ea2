/* The ibmcastd client library (src/mcastd/client.c) fed arbitrary bytes
 * as its daemon's: whatever they are, the client neither crashes nor
 * hangs, runs its callbacks only from imc_mcastd_process(), never calls
 * back a member after its leave, and frees everything at destroy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ibmcast/mcastd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int peer = -1;
static bool in_api;
static unsigned attached;

static int fz_connect(void *ctx, const char *path)
{
	int sv[2];

	(void)ctx;
	(void)path;
	if (peer >= 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -ECONNREFUSED;   /* one connection per input */
	peer = sv[1];
	return sv[0];
}

static imc_time_t fz_clock(void *ctx)
{
	(void)ctx;
	return 0;   /* no reconnect within one input */
}

static int fz_attach(void *ctx, void *qp, const struct imc_gid *g,
		     uint16_t mlid)
{
	(void)ctx;
	(void)qp;
	(void)g;
	(void)mlid;
	attached++;
	return 0;
}

static int fz_detach(void *ctx, void *qp, const struct imc_gid *g,
		     uint16_t mlid)
{
	(void)ctx;
	(void)qp;
	(void)g;
	(void)mlid;
	if (!attached)
		abort();   /* a detach without its attach */
	attached--;
	return 0;
}

struct h {
	struct imc_mcastd_member *m;
	bool left;
};

static void on_ev(void *arg, struct imc_mcastd_member *m,
		  const struct imc_mcast_event *ev)
{
	struct h *h = arg;

	(void)ev;
	if (in_api || h->left || h->m != m)
		abort();
	if (ev->type == IMC_MCAST_EV_REJOINING) {
		h->left = true;   /* leave from a callback, now and then */
		imc_mcastd_leave(m);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_mcastd_config cfg;
	struct imc_mcast_join_req req = { 0 };
	struct imc_mcastd *c;
	struct h hs[3] = { { 0 } };
	static int qp;

	imc_mcastd_config_init(&cfg);
	cfg.clock = fz_clock;
	cfg.connect = fz_connect;
	cfg.comm = "fuzz";
	cfg.ops.attach = fz_attach;
	cfg.ops.detach = fz_detach;
	peer = -1;
	attached = 0;
	if (imc_mcastd_create(&cfg, &c))
		abort();
	req.rec.mgid.raw[0] = 0xff;
	req.rec.mgid.raw[1] = 0x12;
	req.rec.mgid.raw[15] = 1;
	req.join_state = 3;
	req.qp = &qp;
	in_api = true;
	for (int i = 0; i < 3; i++)
		if (imc_mcastd_join(c, NULL, &req, on_ev, &hs[i], &hs[i].m))
			abort();
	in_api = false;
	if (send(peer, data, size, MSG_NOSIGNAL) < 0 && errno != EPIPE)
		abort();
	for (int i = 0; i < 4; i++)
		(void)imc_mcastd_process(c);
	in_api = true;
	if (!hs[1].left)
		imc_mcastd_leave(hs[1].m);
	hs[1].left = true;
	in_api = false;
	(void)imc_mcastd_process(c);
	in_api = true;
	imc_mcastd_destroy(c);
	in_api = false;
	if (attached)
		abort();   /* destroy detaches what is left */
	close(peer);
	return 0;
}
