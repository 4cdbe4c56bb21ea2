/* tun_relay: the smallest TUN-to-TUN relay, the yardstick of
 * bench/bench_tun.sh.
 *
 *   tun_relay [--batch] NETNS_A NETNS_B [MTU]
 *
 * Creates one TUN interface (IFF_TUN | IFF_NO_PI) in each of two existing
 * network namespaces, prints "ready A_IFNAME B_IFNAME" once both exist,
 * then copies every packet read from one to the other until SIGINT or
 * SIGTERM. The script addresses the interfaces and brings them up.
 *
 * It does what any TUN design must do and nothing more: one read() and
 * one write() per packet (a TUN fd offers nothing batched), on one
 * thread that waits in epoll and drains up to BATCH packets from a ready
 * fd before looking again, as `ibmcast up` does. What ibmcast adds on top
 * (IPoIB encapsulation, address resolution, the simulated fabric and its
 * timers) is what bench_tun.sh measures against this.
 *
 * By default each packet is written as soon as it is read. A write into a
 * TUN runs the receiving kernel's IP and TCP input inline, in the
 * writer's system call, so the sending side's TUN queue waits meanwhile.
 * --batch reads up to BATCH packets first and then writes them all,
 * which drains that queue in bursts (as ibmcast does: its writes happen
 * later, when the simulated fabric delivers).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

enum { BATCH = 64, BUF = 65536 };

static unsigned char bufs[BATCH][BUF];
static size_t lens[BATCH];

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "tun_relay: %s%s%s: %s\n", what, arg ? " " : "",
		arg ? arg : "", strerror(errno));
	exit(1);
}

/* A TUN created inside the namespace (the kernel puts the device in the
 * namespace of whoever opens /dev/net/tun). */
static int tun_in(const char *netns, unsigned mtu, char name[IFNAMSIZ])
{
	char path[256];
	struct ifreq ifr;
	int self, ns, fd, s;

	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || ns < 0)
		die("cannot open namespace", netns);
	if (setns(ns, CLONE_NEWNET) < 0)
		die("setns", netns);
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("open", "/dev/net/tun");
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	strcpy(ifr.ifr_name, "relay%d");
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		die("TUNSETIFF", netns);
	memcpy(name, ifr.ifr_name, IFNAMSIZ);
	if (mtu) {
		s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		ifr.ifr_mtu = (int)mtu;
		if (s < 0 || ioctl(s, SIOCSIFMTU, &ifr) < 0)
			die("SIOCSIFMTU", netns);
		close(s);
	}
	if (setns(self, CLONE_NEWNET) < 0)
		die("setns back from", netns);
	close(self);
	close(ns);
	return fd;
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[2];
	unsigned long long packets = 0, drops = 0;
	char na[IFNAMSIZ], nb[IFNAMSIZ];
	struct sigaction sa;
	unsigned mtu = 0;
	bool batch = false;
	int fd[2], ep;

	if (argc > 1 && !strcmp(argv[1], "--batch")) {
		batch = true;
		argc--;
		argv++;
	}
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: tun_relay [--batch] NETNS_A NETNS_B [MTU]\n");
		return 2;
	}
	if (argc == 4)
		mtu = (unsigned)strtoul(argv[3], NULL, 10);
	fd[0] = tun_in(argv[1], mtu, na);
	fd[1] = tun_in(argv[2], mtu, nb);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1", NULL);
	for (int i = 0; i < 2; i++) {
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev) < 0)
			die("epoll_ctl", NULL);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("ready %s %s\n", na, nb);
	fflush(stdout);
	while (!stop) {
		int n = epoll_wait(ep, evs, 2, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait", NULL);
		}
		for (int i = 0; i < n; i++) {
			int from = (int)evs[i].data.u32, to = !from;

			int got = 0;

			for (int k = 0; k < BATCH; k++) {
				ssize_t r = read(fd[from], bufs[got], BUF);

				if (r <= 0)
					break;
				lens[got] = (size_t)r;
				if (batch) {
					got++;
					continue;
				}
				if (write(fd[to], bufs[0], (size_t)r) < 0)
					drops++;
				packets++;
			}
			for (int k = 0; k < got; k++) {
				if (write(fd[to], bufs[k], lens[k]) < 0)
					drops++;
				packets++;
			}
		}
	}
	fprintf(stderr, "tun_relay: %llu packets relayed, %llu refused\n",
		packets, drops);
	close(fd[0]);
	close(fd[1]);
	close(ep);
	return 0;
}
