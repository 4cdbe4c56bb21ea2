/* The ibsim-protocol server's input (src/simserve): control messages and
 * packets from clients. Per input a server on the two-switch example
 * fabric takes one client attached by a valid CONNECT, then the input as
 * a sequence of chunks: a kind byte, then 80 bytes of control message
 * (sent from the attached client's control address or another, the magic
 * forced or not) or up to 288 bytes of packet from the client; the loop
 * runs after each. The server must not crash, must answer or ignore every
 * control message, and its counters must hold together: attached clients
 * are connects minus disconnects, packets in are the packets fed, queued
 * packets are within the queue limit. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/simserve.h"
#include "ibmcast/topo.h"
#include "simserve/simserve_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char net[] =
	"Hca 2 \"Hca1\"\n[1] \"Switch1\"[1]\n\n"
	"Hca 2 \"Hca2\"\n[1] \"Switch1\"[2]\n\n"
	"Switch 8 \"Switch1\"\n[1] \"Hca1\"[1]\n[2] \"Hca2\"[1]\n";

enum { CLIENT_ID = 7, QUEUE_LIMIT = 64 };

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct imc_topo *topo;
	struct imc_fabric_config fc;
	struct imc_simserve_config sc;
	struct imc_simserve_stats st;
	struct imc_simserve *s = NULL;
	struct imc_fabric *f = NULL;
	struct imc_loop *loop = NULL;
	struct sockaddr_un me, other;
	uint8_t buf[IMC_IBSIM_REQ_SIZE];
	char base[48];
	socklen_t melen, otherlen;
	uint64_t fed = 0;
	int in = -1;
	size_t i = 0;

	if (!topo && imc_topo_parse_string(net, NULL, &topo, NULL, 0))
		abort();
	snprintf(base, sizeof(base), "imcfz%ld", (long)getpid());
	melen = (socklen_t)imc_ibsim_sockaddr(&me, base, "ctl", CLIENT_ID);
	otherlen = (socklen_t)imc_ibsim_sockaddr(&other, base, "ctl", 99);
	imc_fabric_config_default(&fc);
	imc_simserve_config_init(&sc);
	sc.sockname = base;
	sc.queue_limit = QUEUE_LIMIT;
	if (imc_loop_create_realtime(&loop) ||
	    imc_fabric_create(topo, loop, &fc, &f) ||
	    imc_fabric_bring_up(f) || imc_simserve_create(f, loop, &sc, &s))
		abort();
	/* The client's packet socket, which CONNECT connects to. */
	in = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	{
		struct sockaddr_un a;
		int alen = imc_ibsim_sockaddr(&a, base, "in", CLIENT_ID);

		if (in < 0 || bind(in, (struct sockaddr *)&a, (socklen_t)alen))
			abort();
	}
	memset(buf, 0, IMC_IBSIM_CTL_SIZE);
	put32(buf, IMC_IBSIM_MAGIC);
	put32(buf + 8, IMC_IBSIM_CTL_CONNECT);
	put32(buf + 16, CLIENT_ID);
	memcpy(buf + 28, "Hca2", 4);
	if (!ss_ctl_handle(s, buf, &me, melen) || !ss_client_get(s, 0))
		abort();

	while (i < size) {
		uint8_t kind = data[i++];
		size_t n = size - i;
		struct ss_client *c;

		if (kind & 1) {
			if (n > IMC_IBSIM_REQ_SIZE)
				n = IMC_IBSIM_REQ_SIZE;
			memset(buf, 0, sizeof(buf));
			memcpy(buf, data + i, n);
			i += n;
			c = ss_client_get(s, 0);
			if (c) {
				/* Short datagrams are the socket's business;
				 * the kind's bit 1 keeps the length as cut. */
				ss_client_input(c, buf, kind & 2 ? n : sizeof(buf));
				fed++;
			}
		} else {
			if (n > IMC_IBSIM_CTL_SIZE)
				n = IMC_IBSIM_CTL_SIZE;
			memset(buf, 0, IMC_IBSIM_CTL_SIZE);
			memcpy(buf, data + i, n);
			i += n;
			if (kind & 2)
				put32(buf, IMC_IBSIM_MAGIC);
			/* CONNECT from here would need another "in" socket:
			 * it fails as a client that never bound one. */
			(void)ss_ctl_handle(s, buf, kind & 4 ? &other : &me,
					    kind & 4 ? otherlen : melen);
		}
		/* What is due now; waiting for SMPs to cross cables would
		 * cost a millisecond of epoll a chunk. */
		imc_loop_run_until(loop, imc_loop_now(loop));
		while (recv(in, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
	}
	imc_loop_run_until(loop, imc_loop_now(loop) + 20 * IMC_NSEC_PER_USEC);
	imc_simserve_get_stats(s, &st);
	if (st.clients != st.connects - st.disconnects || st.pkts_in != fed ||
	    st.queued > (size_t)QUEUE_LIMIT * (st.clients + 1) ||
	    st.clients > 1 || st.ctl_errors > st.ctl_requests)
		abort();
	imc_simserve_destroy(s);
	close(in);
	imc_fabric_destroy(f);
	if (imc_loop_destroy(loop))
		abort();
	return 0;
}
