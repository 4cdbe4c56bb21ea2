/* ibmcast mcast: multicast groups of a port and trees of the fabric.
 * Subcommands: show, tree. */
#include <stdio.h>
#include <string.h>

#include "tools.h"

struct sub {
	const char *name;
	const char *summary;
	int (*main)(int argc, char **argv);
	void (*help)(FILE *f);
};

static const struct sub subs[] = {
	{ "show", "the groups a real port's join trackers hold (libibumad)",
	  imc_mcast_show_main, imc_mcast_show_help },
	{ "tree", "a group's multicast tree in the simulator, as Graphviz DOT",
	  imc_mcast_tree_main, imc_mcast_tree_help },
};

static void help(FILE *f)
{
	fprintf(f, "usage: ibmcast mcast SUBCOMMAND [ARGS] (--help for each)\n\n");
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		fprintf(f, "  %-8s %s\n", subs[i].name, subs[i].summary);
	fprintf(f, "\nExit: 0 success, 1 the work failed, 2 bad usage.\n");
}

static void help_all(FILE *f)
{
	help(f);
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		fprintf(f, "\n");
		subs[i].help(f);
	}
}

static int run(int argc, char **argv)
{
	if (argc < 2) {
		help(stderr);
		return IMC_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help(stdout);
		return IMC_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].main(argc - 1, argv + 1);
	fprintf(stderr, "ibmcast mcast: unknown subcommand '%s'\n", argv[1]);
	help(stderr);
	return IMC_EXIT_USAGE;
}

const struct imc_cmd imc_cmd_mcast = {
	.name = "mcast",
	.summary = "a port's multicast groups; multicast trees of the simulator",
	.run = run,
	.help = help,
	.own_help = true,
	.help_all = help_all,
};
