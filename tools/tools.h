/* Subcommands of the ibmcast command. Each returns the process exit code:
 * 0 success, 1 the work failed (a check did not hold), 2 bad usage. */
#ifndef IMC_TOOLS_H
#define IMC_TOOLS_H

#include <stdio.h>

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
};

extern const struct imc_cmd imc_cmd_decode;
extern const struct imc_cmd imc_cmd_run;
extern const struct imc_cmd imc_cmd_sa;
extern const struct imc_cmd imc_cmd_sa_serve;
extern const struct imc_cmd imc_cmd_up;

#endif
