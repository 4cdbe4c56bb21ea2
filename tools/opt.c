/* The one form of every command's option value errors (see tools.h):
 * "PROG: --NAME VALUE: at most MAX", so a user sees what was wrong and
 * what would be right. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/scenario.h"
#include "tools.h"

int imc_opt_bad(const char *prog, const char *name, const char *arg,
		const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: --%s %s: ", prog, name, arg);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return IMC_EXIT_USAGE;
}

/* A limit in the base the user wrote the value in. */
static void limit(char *buf, size_t len, const char *arg, uint64_t v)
{
	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X'))
		snprintf(buf, len, "0x%" PRIx64, v);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

int imc_opt_num(const char *prog, const char *name, const char *arg,
		uint64_t min, uint64_t max, uint64_t *out)
{
	char lim[32];
	uint64_t v;
	int rc = imc_scn_parse_uint(NULL, name, arg, UINT64_MAX, &v);

	if (rc == -ERANGE) {
		limit(lim, sizeof(lim), arg, max);
		return imc_opt_bad(prog, name, arg, "at most %s", lim);
	}
	if (rc)
		return imc_opt_bad(prog, name, arg,
				   "expected a number (decimal or 0x hex)");
	if (v > max) {
		limit(lim, sizeof(lim), arg, max);
		return imc_opt_bad(prog, name, arg, "at most %s", lim);
	}
	if (v < min) {
		limit(lim, sizeof(lim), arg, min);
		return imc_opt_bad(prog, name, arg, "at least %s", lim);
	}
	*out = v;
	return 0;
}

int imc_opt_time(const char *prog, const char *name, const char *arg,
		 imc_time_t min, imc_time_t max, imc_time_t *out)
{
	char lim[32];
	imc_time_t v;
	int rc = imc_scn_parse_time(NULL, name, arg, &v);

	if (rc == -ERANGE || (!rc && v > max)) {
		imc_scn_format_time(max, lim, sizeof(lim));
		return imc_opt_bad(prog, name, arg, "at most %s", lim);
	}
	if (rc)
		return imc_opt_bad(prog, name, arg,
				   "expected a time with a unit (ns, us, ms, s), such as 5ms");
	if (v < min) {
		imc_scn_format_time(min, lim, sizeof(lim));
		return imc_opt_bad(prog, name, arg, "at least %s", lim);
	}
	*out = v;
	return 0;
}

void imc_port_hint(const char *prog, int err)
{
	/* ENOENT/ENODEV: no such CA or port; EACCES/EPERM: the umad device
	 * files need privilege. Either way say how to get a port. */
	if (err == -EACCES || err == -EPERM)
		fprintf(stderr,
			"%s: hint: /dev/infiniband/umad* needs read-write access (root, or the rdma group)\n",
			prog);
	fprintf(stderr,
		"%s: hint: name a port with --device NAME --port N (ibstat lists them), or run on a simulated fabric:\n"
		"  scripts/ibsim-harness.sh run examples/ibsim-2sw.net -- %s ...\n"
		"  (OpenSM on ibsim; SIM_HOST=NODE picks the HCA, see docs/real-fabric.md)\n",
		prog, prog);
}
