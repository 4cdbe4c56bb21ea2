/* The end of every command's JSON document (tools.h). */
#include <stdio.h>

#include "ibmcast/json.h"
#include "tools.h"

int imc_tool_json_end(struct imc_json *j, const char *prog)
{
	int rc = imc_json_finish(j);

	if (rc == 0)
		printf("\n");
	else
		fprintf(stderr, "%s: JSON output failed\n", prog);
	return rc;
}
