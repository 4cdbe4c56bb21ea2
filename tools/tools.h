/* Subcommands of the ibmcast command. Each returns the process exit code:
 * 0 success, 1 the work failed (a check did not hold), 2 bad usage. */
#ifndef IMC_TOOLS_H
#define IMC_TOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/loop.h"

enum {
	IMC_EXIT_OK = 0,
	IMC_EXIT_FAIL = 1,
	IMC_EXIT_USAGE = 2,
};

struct imc_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
	void (*help)(FILE *f);
	/* run() answers --help itself (for its subcommands) */
	bool own_help;
	/* the manual's text when help() is only a list of subcommands */
	void (*help_all)(FILE *f);
};

/* Option values (opt.c). Each checks one value of --NAME, prints
 * "PROG: --NAME VALUE: at most MAX" (or "at least MIN", or what was
 * expected) to stderr when it is wrong, and returns 0 or IMC_EXIT_USAGE:
 * the one form of every command's value errors. */
int imc_opt_num(const char *prog, const char *name, const char *arg,
		uint64_t min, uint64_t max, uint64_t *out);
/* A time with a unit (ns, us, ms, s), as scenarios write it. */
int imc_opt_time(const char *prog, const char *name, const char *arg,
		 imc_time_t min, imc_time_t max, imc_time_t *out);
/* "PROG: --NAME VALUE: " and the rest; returns IMC_EXIT_USAGE. */
int imc_opt_bad(const char *prog, const char *name, const char *arg,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Finishes JSON document j (imc_json_finish) and ends its line on
 * stdout, or says "PROG: JSON output failed" on stderr. Returns what
 * imc_json_finish returned. */
struct imc_json;
int imc_tool_json_end(struct imc_json *j, const char *prog);

/* After "cannot open ... port": how to get a usable port (--device and
 * --port, or the ibsim harness with SIM_HOST), to stderr. err is the
 * open's negative errno. */
void imc_port_hint(const char *prog, int err);

/* Writes ibmcast(1) from usage() and each command's help. 0 or -1. */
int imc_man_print(FILE *out, const struct imc_cmd *const *cmds, size_t n,
		  void (*usage)(FILE *f));

extern const struct imc_cmd imc_cmd_decode;
extern const struct imc_cmd imc_cmd_join;
extern const struct imc_cmd imc_cmd_run;
extern const struct imc_cmd imc_cmd_sa;
extern const struct imc_cmd imc_cmd_sa_serve;
extern const struct imc_cmd imc_cmd_up;
extern const struct imc_cmd imc_cmd_mcast;
extern const struct imc_cmd imc_cmd_bench;
extern const struct imc_cmd imc_cmd_storm;
extern const struct imc_cmd imc_cmd_fabric;

/* ibmcast mcast show */
int imc_mcast_show_main(int argc, char **argv);
void imc_mcast_show_help(FILE *f);

/* ibmcast mcast tree */
int imc_mcast_tree_main(int argc, char **argv);
void imc_mcast_tree_help(FILE *f);

#endif
