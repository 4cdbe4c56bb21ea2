/* ibmcastd's log: one line per event on stderr, with its level. Under
 * systemd (stderr is the stream JOURNAL_STREAM names) each line starts
 * with the syslog priority in sd-daemon(3)'s "<N>" form instead, so the
 * journal files it at the right level. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ibmcastd.h"

static enum imc_mcastd_log_level level = IMC_MCASTD_LOG_INFO;

void dlog_set_level(enum imc_mcastd_log_level lvl)
{
	level = lvl;
}

int dlog_parse_level(const char *s, enum imc_mcastd_log_level *out)
{
	static const char *const names[] = { "err", "warn", "info", "debug" };

	for (size_t i = 0; i < IMC_ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum imc_mcastd_log_level)i;
			return 0;
		}
	if (!strcmp(s, "error"))
		*out = IMC_MCASTD_LOG_ERR;
	else if (!strcmp(s, "warning"))
		*out = IMC_MCASTD_LOG_WARN;
	else
		return -EINVAL;
	return 0;
}

/* systemd.exec(5): JOURNAL_STREAM is "DEVICE:INODE" of the stream that
 * stderr was connected to; it is the journal only if stderr still is. */
static bool to_journal(void)
{
	static int known = -1;
	const char *js;
	unsigned long long dev, ino;
	struct stat st;

	if (known >= 0)
		return known;
	js = getenv("JOURNAL_STREAM");
	known = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
		fstat(STDERR_FILENO, &st) == 0 &&
		(unsigned long long)st.st_dev == dev &&
		(unsigned long long)st.st_ino == ino;
	return known;
}

void dlog(enum imc_mcastd_log_level lvl, const char *fmt, ...)
{
	/* syslog priorities (RFC 5424 section 6.2.1) of the four levels */
	static const int prio[] = { 3, 4, 6, 7 };
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	char line[1024];
	va_list ap;

	if (lvl > level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (to_journal())
		fprintf(stderr, "<%d>%s\n", prio[lvl], line);
	else
		fprintf(stderr, "ibmcastd: %s: %s\n", names[lvl], line);
	fflush(stderr);
}

void daemon_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')         /* abstract namespace */
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		dlog(IMC_MCASTD_LOG_WARN, "sd_notify %s: %s", state,
		     strerror(errno));
	close(fd);
}
