/* ibmcast mcast tree: the multicast spanning tree of a group in the
 * simulator, as Graphviz DOT, read from the switches' MFTs at the end of a
 * scenario run (or at --until). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/scenario.h"
#include "ibmcast/scenario_sa.h"
#include "tools.h"

void imc_mcast_tree_help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast mcast tree MGID [--dot] [--seed N] [--until TIME]\n"
		"                          SCENARIO\n"
		"\n"
		"Runs SCENARIO (docs/scenarios.md; it needs an sa line) on the\n"
		"embedded fabric and prints the multicast forwarding of group MGID\n"
		"as the switches' MFTs hold it at the end of the run, as a Graphviz\n"
		"DOT graph: switches with an entry (boxes, with the entry's ports),\n"
		"tree edges between switches, edges forwarded over from one side\n"
		"only (dashed red: a broken tree), and the HCA ports reached\n"
		"(ellipses). Render with: dot -Tsvg -o tree.svg\n"
		"\n"
		"  --dot          DOT output (the only format; accepted for clarity)\n"
		"  --seed N       seed of the run instead of the file's seed line\n"
		"  --until TIME   stop the run at TIME (e.g. 5ms) and draw then\n"
		"\n"
		"Exit: 0 drawn, 1 the run failed or the group did not exist at the\n"
		"end, 2 bad usage, a bad MGID or a scenario that does not parse.\n");
}

int imc_mcast_tree_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dot", no_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct imc_scenario_run_opts ro = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s = NULL;
	struct imc_scn_sa_show *sh = NULL;
	struct imc_gid mgid;
	char err[1024];
	int opt, rc, code = IMC_EXIT_FAIL;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			break;
		case 's':
			if (imc_opt_num("ibmcast mcast tree", "seed", optarg, 0,
					UINT64_MAX, &ro.seed))
				return IMC_EXIT_USAGE;
			ro.seed_set = true;
			break;
		case 'u':
			if (imc_opt_time("ibmcast mcast tree", "until", optarg, 0,
					 IMC_TIME_LIMIT, &ro.until))
				return IMC_EXIT_USAGE;
			ro.until_set = true;
			break;
		case 'h':
			imc_mcast_tree_help(stdout);
			return IMC_EXIT_OK;
		default:
			imc_mcast_tree_help(stderr);
			return IMC_EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		imc_mcast_tree_help(stderr);
		return IMC_EXIT_USAGE;
	}
	if (imc_gid_parse(argv[optind], &mgid) || !imc_gid_is_multicast(&mgid)) {
		fprintf(stderr, "ibmcast mcast tree: '%s' is not a multicast GID (ff..::..)\n",
			argv[optind]);
		return IMC_EXIT_USAGE;
	}
	rc = imc_scenario_parse_file(argv[optind + 1], NULL, &s, err,
				     sizeof(err));
	if (rc) {
		fprintf(stderr, "ibmcast mcast tree: %s\n", err);
		return IMC_EXIT_USAGE;
	}
	rc = imc_scn_sa_show_create(s, &sh);
	if (!rc)
		rc = imc_scn_sa_show_tree(sh, &mgid);
	if (rc) {
		fprintf(stderr, "ibmcast mcast tree: %s\n",
			rc == -ENOENT ? "the scenario has no sa line" :
			strerror(-rc));
		imc_scenario_destroy(s);
		return IMC_EXIT_USAGE;
	}
	rc = imc_scenario_run(s, &ro, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ibmcast mcast tree: %s\n", err);
	} else {
		rc = imc_scn_sa_show_dot(sh, stdout);
		if (rc == -ENOENT)
			fprintf(stderr, "ibmcast mcast tree: no group %s at the end of the run\n",
				argv[optind]);
		else if (rc)
			fprintf(stderr, "ibmcast mcast tree: %s\n",
				strerror(-rc));
		else
			code = IMC_EXIT_OK;
		imc_scenario_result_free(&r);
	}
	imc_scn_sa_show_destroy(sh);
	imc_scenario_destroy(s);
	return code;
}
