/* The kernel's cost of one MAD through ibsim's kind of socket: 288-byte
 * datagrams (struct sim_request) over an AF_UNIX datagram socket pair,
 * sent and received in one process, with no wake-up involved. It is the
 * floor under any SA on ibsim: each SA operation is one such datagram in
 * and one out (the SA pays the receive of one and the send of the
 * other), whatever the SA does in between.
 *
 * Usage: bench_dgram [COUNT]   (default 200000 datagrams per figure)
 *
 * Prints the process CPU time per datagram sent and received, one at a
 * time (send(), recv()) and in batches of 8 and 32 (sendmmsg(),
 * recvmmsg(), as the IMC_UMAD_IBSIM transport does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "umad/ibsim_int.h"

enum { MAXB = 32 };

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run(int sv[2], unsigned batch, unsigned count, double *us)
{
	static uint8_t buf[MAXB][IMC_IBSIM_REQ_SIZE];
	struct mmsghdr mh[MAXB];
	struct iovec iov[MAXB];
	double t0;

	for (unsigned i = 0; i < MAXB; i++) {
		memset(&mh[i], 0, sizeof(mh[i]));
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = cpu_seconds();
	for (unsigned done = 0; done < count; done += batch) {
		if (batch == 1) {
			if (send(sv[0], buf[0], sizeof(buf[0]), 0) < 0 ||
			    recv(sv[1], buf[0], sizeof(buf[0]), 0) < 0)
				return -1;
			continue;
		}
		if (sendmmsg(sv[0], mh, batch, 0) != (int)batch ||
		    recvmmsg(sv[1], mh, batch, MSG_DONTWAIT, NULL) !=
			    (int)batch)
			return -1;
	}
	*us = (cpu_seconds() - t0) * 1e6 / count;
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned batches[] = { 1, 8, 32 };
	unsigned count = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0)
				  : 200000;
	int big = 4 << 20;
	int sv[2];

	if (!count || socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) {
		perror("bench_dgram");
		return 1;
	}
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	printf("AF_UNIX datagrams of %d bytes, %u per figure, CPU time per "
	       "datagram sent and received:\n", IMC_IBSIM_REQ_SIZE, count);
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		double us;

		if (run(sv, batches[i], count - count % batches[i], &us) < 0) {
			perror("bench_dgram");
			return 1;
		}
		printf("  batch %2u: %.2f us\n", batches[i], us);
	}
	return 0;
}
