/* ibmcast bench: lists and runs the benchmark programs (bench/ of the
 * source tree), which print their own figures (docs/performance.md). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "tools.h"

#define PREFIX "bench_"

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast bench [--list] [--dir DIR] [NAME [ARGS...]]\n"
		"\n"
		"Runs a benchmark program of ibmcast and passes ARGS to it; each\n"
		"prints its figures and the ratios docs/performance.md quotes. NAME\n"
		"is a program's name with or without 'bench_' (e.g. 'sa', 'mcast',\n"
		"'timers'). Without NAME, lists them (as --list does).\n"
		"\n"
		"  --list      list the benchmark programs found\n"
		"  --dir DIR   where they are; default: IBMCAST_BENCH_DIR, else\n"
		"              bench/ beside this ibmcast (a build tree), else\n"
		"              ../libexec/ibmcast beside it (an installation)\n"
		"\n"
		"Exit: the program's own exit code; 1 when it could not run or\n"
		"was killed; 2 bad usage or no such benchmark.\n");
}

static bool is_prog(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (strncmp(name, PREFIX, strlen(PREFIX)) || strchr(name, '.'))
		return false;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return false;
	return !stat(path, &st) && S_ISREG(st.st_mode) &&
	       !access(path, X_OK);
}

static bool has_progs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while (!any && (e = readdir(d)))
		any = is_prog(dir, e->d_name);
	closedir(d);
	return any;
}

/* The benchmark directory: the first of the candidates holding one. */
static int find_dir(char *out, size_t len)
{
	const char *env = getenv("IBMCAST_BENCH_DIR");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return has_progs(out) ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	static const char *const rel[] = { "bench", "../libexec/ibmcast" };

	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		int w = snprintf(out, len, "%s/%s", exe, rel[i]);

		if (w > 0 && (size_t)w < len && has_progs(out))
			return 0;
	}
	return -ENOENT;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return IMC_EXIT_FAIL;
	while ((e = readdir(d))) {
		if (!is_prog(dir, e->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 16) *
					    sizeof(*nn));
			if (!nn)
				break;
			names = nn;
		}
		names[n] = strdup(e->d_name + strlen(PREFIX));
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	printf("benchmarks in %s:\n", dir);
	for (size_t i = 0; i < n; i++) {
		printf("  %s\n", names[i]);
		free(names[i]);
	}
	free(names);
	return IMC_EXIT_OK;
}

static double secs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* On a terminal: the program runs on a pseudo-terminal of its own (so
 * its rows come line by line, as on a terminal), its output is passed
 * on, and while it is silent at the start of a line a progress line on
 * stderr says what runs and for how long. Returns the pid or -1. */
static pid_t spawn_watched(const char *path, char **argv, int *master)
{
	struct winsize ws;
	struct termios tio, *tp = NULL;
	pid_t pid;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		memset(&ws, 0, sizeof(ws));
	/* Bytes pass as written: our own terminal maps "\n" already. */
	if (!tcgetattr(STDOUT_FILENO, &tio)) {
		tio.c_oflag &= ~(tcflag_t)OPOST;
		tp = &tio;
	}
	pid = forkpty(master, NULL, tp, ws.ws_col ? &ws : NULL);
	if (!pid) {
		execv(path, argv);
		fprintf(stderr, "ibmcast bench: %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	return pid;
}

static void watch(int master, const char *name)
{
	double t0 = secs_now();
	bool bol = true, shown = false;
	char buf[4096];

	for (;;) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		int n;
		ssize_t got;

		if (bol) {
			fprintf(stderr, "\r  [bench_%s running, %.0f s]",
				name, secs_now() - t0);
			fflush(stderr);
			shown = true;
		}
		n = poll(&p, 1, 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		got = read(master, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;   /* EIO: the program has closed its terminal */
		if (shown) {
			fputs("\r\033[K", stderr);
			fflush(stderr);
			shown = false;
		}
		fwrite(buf, 1, (size_t)got, stdout);
		fflush(stdout);
		bol = buf[got - 1] == '\n';
	}
	if (shown)
		fputs("\r\033[K", stderr);
}

static int run(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *name, *given_dir = NULL;
	bool want_list = false;
	int i = 1, status;
	pid_t pid;

	/* Options stop at NAME: what follows is the benchmark's. */
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--list")) {
			want_list = true;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			given_dir = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help(stdout);
			return IMC_EXIT_OK;
		} else {
			fprintf(stderr, "ibmcast bench: unknown option '%s'\n",
				argv[i]);
			help(stderr);
			return IMC_EXIT_USAGE;
		}
	}
	if (given_dir) {
		snprintf(dir, sizeof(dir), "%s", given_dir);
		if (!has_progs(dir)) {
			fprintf(stderr, "ibmcast bench: no benchmark program in %s\n",
				dir);
			return IMC_EXIT_USAGE;
		}
	} else if (find_dir(dir, sizeof(dir))) {
		fprintf(stderr, "ibmcast bench: no benchmark programs found "
			"(build them with the project, or set IBMCAST_BENCH_DIR)\n");
		return IMC_EXIT_FAIL;
	}
	if (want_list || i == argc)
		return list(dir);
	name = argv[i];
	if (!strncmp(name, PREFIX, strlen(PREFIX)))
		name += strlen(PREFIX);
	snprintf(path, sizeof(path), "%s/" PREFIX "%s", dir, name);
	if (strchr(name, '/') || !is_prog(dir, path + strlen(dir) + 1)) {
		fprintf(stderr, "ibmcast bench: no benchmark '%s' (ibmcast bench --list)\n",
			argv[i]);
		return IMC_EXIT_USAGE;
	}
	fflush(stdout);
	argv[i] = path;
	if (isatty(STDOUT_FILENO) && isatty(STDERR_FILENO)) {
		int master = -1;

		pid = spawn_watched(path, argv + i, &master);
		if (pid > 0) {
			watch(master, name);
			close(master);
		}
	} else {
		pid = fork();
		if (!pid) {
			execv(path, argv + i);
			fprintf(stderr, "ibmcast bench: %s: %s\n", path,
				strerror(errno));
			_exit(127);
		}
	}
	if (pid < 0) {
		perror("ibmcast bench: fork");
		return IMC_EXIT_FAIL;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return IMC_EXIT_FAIL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 127 ? IMC_EXIT_FAIL :
		       WEXITSTATUS(status);
	fprintf(stderr, "ibmcast bench: %s killed by signal %d\n", name,
		WTERMSIG(status));
	return IMC_EXIT_FAIL;
}

const struct imc_cmd imc_cmd_bench = {
	.name = "bench",
	.summary = "run a benchmark program and print its figures",
	.run = run,
	.help = help,
	.own_help = true,
};
