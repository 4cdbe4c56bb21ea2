/* ibmcast: the command-line front end. */
#include <stdio.h>
#include <string.h>

#include "ibmcast/common.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ibmcast [--version] [--help] COMMAND [ARGS]\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ibmcast %s\n", imc_version());
		return 0;
	}
	fprintf(stderr, "ibmcast: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
