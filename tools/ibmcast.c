/* ibmcast: the command-line front end. */
#include <stdio.h>
#include <string.h>

#include "ibmcast/common.h"
#include "tools.h"

static const struct imc_cmd *const cmds[] = {
	&imc_cmd_decode,
	&imc_cmd_join,
	&imc_cmd_run,
	&imc_cmd_sa,
	&imc_cmd_sa_serve,
	&imc_cmd_mcast,
	&imc_cmd_storm,
	&imc_cmd_bench,
	&imc_cmd_up,
	&imc_cmd_fabric,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibmcast [--version] [--help] [--man] COMMAND [ARGS]\n"
		"       ibmcast COMMAND --help\n"
		"\n"
		"A userspace InfiniBand multicast stack.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(f,
		"\n"
		"Exit codes: 0 success, 1 the work failed or a check did not hold,\n"
		"2 bad usage or unreadable input; 128+N when signal N cut a run\n"
		"short (storm, after its partial report).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return IMC_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return IMC_EXIT_OK;
	}
	if (!strcmp(argv[1], "--man"))
		return imc_man_print(stdout, cmds, IMC_ARRAY_SIZE(cmds), usage) ?
		       IMC_EXIT_FAIL : IMC_EXIT_OK;
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("ibmcast %s\n", imc_version());
		return IMC_EXIT_OK;
	}
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cmds); i++) {
		if (strcmp(argv[1], cmds[i]->name))
			continue;
		for (int a = 2; a < argc && !cmds[i]->own_help; a++) {
			if (!strcmp(argv[a], "--"))
				break;
			if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
				cmds[i]->help(stdout);
				return IMC_EXIT_OK;
			}
		}
		return cmds[i]->run(argc - 1, argv + 1);
	}
	fprintf(stderr, "ibmcast: unknown command '%s' (try 'ibmcast --help')\n",
		argv[1]);
	return IMC_EXIT_USAGE;
}
