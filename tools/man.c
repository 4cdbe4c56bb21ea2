/* ibmcast --man: the manual page, ibmcast(1) in roff, written from the
 * same help texts the commands print, so the two never disagree. The
 * build writes it to ibmcast.1 and installs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/common.h"
#include "tools.h"

/* Text as roff: a backslash is \e, a line starting with . or ' gets \&,
 * a hyphen is \- (so that options copy and paste as typed). */
static void roff(FILE *out, const char *text)
{
	bool bol = true;

	for (const char *p = text; *p; p++) {
		if (bol && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		if (*p == '\\')
			fputs("\\e", out);
		else if (*p == '-')
			fputs("\\-", out);
		else
			fputc(*p, out);
		bol = *p == '\n';
	}
	if (!bol)
		fputc('\n', out);
}

static int section(FILE *out, void (*help)(FILE *f))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return -1;
	help(m);
	if (fclose(m)) {
		free(buf);
		return -1;
	}
	fputs(".PP\n.nf\n", out);
	roff(out, buf);
	fputs(".fi\n", out);
	free(buf);
	return 0;
}

int imc_man_print(FILE *out, const struct imc_cmd *const *cmds, size_t n,
		  void (*usage)(FILE *f))
{
	fprintf(out, ".TH IBMCAST 1 \"\" \"ibmcast %s\" \"User Commands\"\n",
		imc_version());
	fputs(".SH NAME\nibmcast \\- a userspace InfiniBand multicast stack\n"
	      ".SH SYNOPSIS\n.B ibmcast\n.RB [ \\-\\-version ]\n"
	      ".RB [ \\-\\-help ]\n.RB [ \\-\\-man ]\n.I COMMAND\n"
	      ".RI [ ARGS ]\n"
	      ".SH DESCRIPTION\n"
	      "A join tracker (many local joins, one SA membership per port),\n"
	      "an SA multicast engine, IP over InfiniBand without path queries,\n"
	      "and an embedded deterministic fabric simulator they all run on;\n"
	      "libibumad carries the same client code to a real SA.\n", out);
	if (section(out, usage))
		return -1;
	fputs(".SH COMMANDS\n", out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, ".SS %s\n", cmds[i]->name);
		if (section(out, cmds[i]->help_all ? cmds[i]->help_all :
			    cmds[i]->help))
			return -1;
	}
	fputs(".SH EXIT STATUS\n"
	      "0 success; 1 the work failed or a check did not hold; 2 bad\n"
	      "usage or unreadable input (a scenario or topology error names\n"
	      "FILE:LINE).\n"
	      ".SH FILES\n"
	      "Scenarios and topologies: examples/ of the source tree; the\n"
	      "scenario language: docs/scenarios.md.\n"
	      ".SH SEE ALSO\n"
	      ".BR saquery (8),\n.BR opensm (8),\n.BR ibsim (1)\n", out);
	return ferror(out) ? -1 : 0;
}
