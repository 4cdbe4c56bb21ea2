/* SIGINT and SIGTERM through a signalfd watched by the loop. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sigwatch.h"

static void on_signal(struct imc_fd_watch *w, unsigned int events)
{
	struct sigwatch *sw = imc_container_of(w, struct sigwatch, w);
	struct signalfd_siginfo si;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		sw->hits++;
		sw->signo = (int)si.ssi_signo;
		if (sw->cb)
			sw->cb(sw);
		else
			imc_loop_stop(sw->loop);
	}
}

int sigwatch_start(struct sigwatch *sw, struct imc_loop *loop,
		   void (*cb)(struct sigwatch *sw))
{
	sigset_t set;
	int fd, r;

	memset(sw, 0, sizeof(*sw));
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	sw->cb = cb;
	imc_fd_watch_init(&sw->w, fd, on_signal);
	r = imc_loop_watch_fd(loop, &sw->w, IMC_EV_READ);
	if (r < 0) {
		close(fd);
		return r;
	}
	sw->loop = loop;
	return 0;
}

void sigwatch_stop(struct sigwatch *sw)
{
	if (!sw->loop)
		return;
	imc_loop_unwatch_fd(sw->loop, &sw->w);
	close(sw->w.fd);
	sw->loop = NULL;
}
