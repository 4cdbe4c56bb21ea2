/* The ibmcastd server core (src/mcastd/server.c) fed arbitrary bytes by
 * one client over a socketpair, beside a well-behaved client that stays:
 * whatever the bytes, the server neither crashes nor hangs, closes the
 * bad client at worst, keeps the other one, and leaves nothing behind. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ibmcast/mcast.h"
#include "ibmcast/mcastd_server.h"
#include "ibmcast/sa_client.h"
#include "mcastd/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int drop(void *ctx, const uint8_t *mad, size_t len)
{
	(void)ctx;
	(void)mad;
	(void)len;
	return 0;   /* the SA never answers: joins stay pending */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_sa_transport tr = { drop, NULL };
	struct imc_mcastd_server_config cfg;
	struct imc_mcastd_port_desc d = { 0 };
	struct imc_mcastd_cred cr = { .pid = 0, .uid = 1 };
	struct imc_mcastd_server_stats st;
	struct imc_sa_client_config cc;
	struct imc_mcast_config mc;
	struct imc_sa_client *sa;
	struct imc_mcastd_server *s;
	struct imc_mcast *t;
	struct imc_loop *loop;
	int bad[2], good[2];

	if (imc_loop_create_virtual(0, &loop))
		return 0;
	imc_sa_client_config_init(&cc);
	imc_mcast_config_init(&mc);
	mc.port_gid.raw[0] = 0xfe;
	mc.port_gid.raw[15] = 2;
	if (imc_sa_client_create(loop, &tr, &cc, &sa) ||
	    imc_mcast_create(loop, sa, &mc, NULL, &t))
		abort();
	imc_mcastd_server_config_init(&cfg);
	cfg.limits.members = 64;
	if (imc_mcastd_server_create(loop, &cfg, &s))
		abort();
	d.gid = mc.port_gid;
	if (imc_mcastd_server_add_port(s, &d, t, NULL))
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, bad) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, good))
		abort();
	if (imc_mcastd_server_accept(s, bad[1], &cr, NULL) ||
	    imc_mcastd_server_accept(s, good[1], &cr, NULL))
		abort();
	/* Written in two pieces, as a stream may deliver it. */
	if (send(bad[0], data, size / 2, MSG_NOSIGNAL) < 0 ||
	    imc_mcastd_server_io(s) < 0 ||
	    (send(bad[0], data + size / 2, size - size / 2,
		  MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET))
		abort();
	(void)imc_mcastd_server_io(s);
	(void)imc_loop_run_until(loop, 10 * IMC_NSEC_PER_MSEC);
	(void)imc_mcastd_server_io(s);
	imc_mcastd_server_get_stats(s, &st);
	if (st.conns < 1 || st.closed_eof)
		abort();   /* the good client must stay */
	close(bad[0]);
	(void)imc_mcastd_server_io(s);
	imc_mcastd_server_get_stats(s, &st);
	if (st.conns != 1)
		abort();
	imc_mcastd_server_destroy(s);
	close(good[0]);
	imc_mcast_destroy(t);
	imc_sa_client_destroy(sa);
	if (imc_loop_destroy(loop))
		abort();
	return 0;
}
