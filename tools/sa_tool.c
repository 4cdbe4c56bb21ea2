/* The shared parts of the SA tools (see sa_tool.h). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mad.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/scenario.h"
#include "sa_tool.h"
#include "tools.h"

int sa_tool_num(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int sa_tool_gid(const char *s, struct imc_gid *g)
{
	if (!strcmp(s, "0")) {
		memset(g, 0, sizeof(*g));
		return 0;
	}
	return imc_gid_parse(s, g);
}

static const struct { const char *name; uint8_t method; } methods[] = {
	{ "get", UMAD_METHOD_GET },
	{ "set", UMAD_METHOD_SET },
	{ "gettable", UMAD_SA_METHOD_GET_TABLE },
	{ "delete", UMAD_SA_METHOD_DELETE },
	{ "getmulti", UMAD_SA_METHOD_GET_MULTI },
	{ "gettracetable", UMAD_SA_METHOD_GET_TRACE_TABLE },
	{ "report", UMAD_METHOD_REPORT },
};

int sa_tool_method(const char *s, unsigned max)
{
	uint64_t v;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(methods); i++)
		if (!strcmp(s, methods[i].name))
			return methods[i].method;
	if (sa_tool_num(s, max, &v) < 0)
		return -EINVAL;
	return (int)v;
}

const char *sa_tool_method_name(unsigned m)
{
	switch (m) {
	case UMAD_METHOD_GET: return "Get";
	case UMAD_METHOD_SET: return "Set";
	case UMAD_METHOD_GET_RESP: return "GetResp";
	case UMAD_METHOD_REPORT: return "Report";
	case UMAD_METHOD_REPORT_RESP: return "ReportResp";
	case UMAD_SA_METHOD_GET_TABLE: return "GetTable";
	case UMAD_SA_METHOD_GET_TABLE_RESP: return "GetTableResp";
	case UMAD_SA_METHOD_GET_TRACE_TABLE: return "GetTraceTable";
	case UMAD_SA_METHOD_GET_MULTI: return "GetMulti";
	case UMAD_SA_METHOD_GET_MULTI_RESP: return "GetMultiResp";
	case UMAD_SA_METHOD_DELETE: return "Delete";
	case UMAD_SA_METHOD_DELETE_RESP: return "DeleteResp";
	default: return NULL;
	}
}

int sa_tool_attr(const char *s, uint16_t *out)
{
	static const struct { const char *name; uint16_t id; } attrs[] = {
		{ "mcmr", UMAD_SA_ATTR_MCMEMBER_REC },
		{ "cpi", UMAD_ATTR_CLASS_PORT_INFO },
		{ "path", UMAD_SA_ATTR_PATH_REC },
		{ "inform", UMAD_ATTR_INFORM_INFO },
	};
	uint64_t v;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(attrs); i++)
		if (!strcmp(s, attrs[i].name)) {
			*out = attrs[i].id;
			return 0;
		}
	if (sa_tool_num(s, 0xffff, &v) < 0)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

int sa_tool_state(const char *s, uint8_t *out)
{
	static const struct { const char *name; uint8_t v; } names[] = {
		{ "full", UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER },
		{ "nonmember", UMAD_SA_MCM_JOIN_STATE_NON_MEMBER },
		{ "sendonly", UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_NON_MEMBER },
		{ "sendonly-full", UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_FULL_MEMBER },
	};
	uint64_t v;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i].name)) {
			*out = names[i].v;
			return 0;
		}
	if (sa_tool_num(s, 0xf, &v) < 0)
		return -EINVAL;
	*out = (uint8_t)v;
	return 0;
}

int sa_tool_join_state(const char *s, uint8_t *out)
{
	uint8_t v;

	if (sa_tool_state(s, &v) < 0 || !v)
		return -EINVAL;
	*out = v;
	return 0;
}

int sa_tool_real(const char *s, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0) || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int sa_tool_hex(const char *s, uint8_t *buf, size_t max)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > max)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 2) {
		if (!isxdigit((unsigned char)s[i]) ||
		    !isxdigit((unsigned char)s[i + 1]))
			return -EINVAL;
		buf[i / 2] = (uint8_t)strtoul((char[]){ s[i], s[i + 1], 0 },
					       NULL, 16);
	}
	return 0;
}

/* ---- MCMemberRecord fields ---- */

/* A field of the MCMemberRecord table (ibmcast/mcmr.h) from its text: a
 * GID (or "self" for port_gid) or a number within the field's bits. */
static int set_field(const struct imc_mcmr_field *f, const char *v,
		     const struct imc_gid *self, struct imc_mcmr *r)
{
	uint64_t x;

	if (f->kind == IMC_MCMR_F_GID) {
		struct imc_gid g;

		if (self && f->comp == UMAD_SA_MCM_COMP_MASK_PORT_GID &&
		    !strcmp(v, "self"))
			g = *self;
		else if (sa_tool_gid(v, &g) < 0)
			return -EINVAL;
		memcpy((uint8_t *)r + f->offset, &g, sizeof(g));
		return 0;
	}
	if (imc_scn_parse_uint(NULL, f->name, v, UINT64_MAX, &x) < 0 ||
	    *v == '-')
		return -EINVAL;
	return imc_mcmr_field_set(r, f, x);
}

int sa_tool_record(const char *prog, const char *spec,
		   const struct imc_gid *self, struct imc_mcmr *r,
		   uint64_t *mask)
{
	char *copy = strdup(spec), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const struct imc_mcmr_field *f;

		if (!eq) {
			fprintf(stderr, "%s: expected FIELD=VALUE: '%s'\n",
				prog, tok);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		f = imc_mcmr_field_find(tok, false);
		if (!f) {
			fprintf(stderr, "%s: unknown field '%s'\n", prog, tok);
			rc = -EINVAL;
			break;
		}
		rc = set_field(f, eq + 1, self, r);
		if (rc == -ERANGE) {
			bool hex = eq[1] == '0' && (eq[2] == 'x' || eq[2] == 'X');

			fprintf(stderr, hex ? "%s: %s=%s: at most 0x%" PRIx64 "\n" :
					      "%s: %s=%s: at most %" PRIu64 "\n",
				prog, tok, eq + 1, f->max);
			break;
		}
		if (rc) {
			fprintf(stderr, "%s: %s=%s: not a valid value\n", prog,
				tok, eq + 1);
			break;
		}
		*mask |= f->comp;
	}
	free(copy);
	return rc;
}

/* ---- options ---- */

enum { MAX_OPTS = 32 };

/* num: the value of an SA_OPT_NUM, checked by imc_opt_num(). */
static int store(const struct sa_opt *t, const char *arg, uint64_t num,
		 void *opts)
{
	uint8_t *p = (uint8_t *)opts + t->off;
	uint64_t v = num;

	switch (t->kind) {
	case SA_OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case SA_OPT_STR:
		*(const char **)p = arg;
		return 0;
	case SA_OPT_GID:
		return imc_gid_parse(arg, (struct imc_gid *)p);
	case SA_OPT_FN:
		return t->fn(arg, p);
	case SA_OPT_NUM:
		v *= t->scale ? t->scale : 1;
		switch (t->size) {
		case 1: *p = (uint8_t)v; break;
		case 2: { uint16_t y = (uint16_t)v; memcpy(p, &y, 2); break; }
		case 4: { uint32_t y = (uint32_t)v; memcpy(p, &y, 4); break; }
		default: memcpy(p, &v, 8); break;
		}
		return 0;
	}
	return -EINVAL;
}

int sa_tool_usage(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s (try '%s --help')\n", prog, what, prog);
	return IMC_EXIT_USAGE;
}

int sa_tool_getopt(const char *prog, int argc, char **argv,
		   const struct sa_opt *table, size_t n, void *opts)
{
	struct option lo[MAX_OPTS + 1];
	const char *given[MAX_OPTS] = { NULL };
	uint64_t num = 0;
	int ch, idx, rc;

	if (n > MAX_OPTS)
		return sa_tool_usage(prog, "too many options");
	memset(lo, 0, sizeof(lo));
	for (size_t i = 0; i < n; i++) {
		lo[i].name = table[i].name;
		lo[i].has_arg = table[i].kind == SA_OPT_FLAG ? no_argument
							     : required_argument;
		lo[i].val = 256 + (int)i;
	}
	opterr = 0;
	/* ':' first: a missing value is told apart from an unknown option. */
	while ((ch = getopt_long(argc, argv, ":", lo, &idx)) != -1) {
		const struct sa_opt *t;

		if (ch < 256 || ch >= 256 + (int)n) {
			fprintf(stderr, "%s: %s option '%s' (try '%s --help')\n",
				prog, ch == ':' ? "a value is missing for the" :
				"unknown", argv[optind - 1], prog);
			return IMC_EXIT_USAGE;
		}
		t = &table[ch - 256];
		/* A value given twice is a mistake, not an override. */
		if (t->kind != SA_OPT_FLAG && given[ch - 256]) {
			fprintf(stderr, "%s: --%s given twice: '%s' and '%s'\n",
				prog, t->name, given[ch - 256], optarg);
			return IMC_EXIT_USAGE;
		}
		given[ch - 256] = optarg;
		if (t->kind == SA_OPT_NUM &&
		    imc_opt_num(prog, t->name, optarg, t->min, t->max, &num))
			return IMC_EXIT_USAGE;
		rc = store(t, optarg, num, opts);
		if (rc == IMC_EXIT_USAGE)
			return rc;   /* an SA_OPT_FN told why */
		if (rc < 0)
			return imc_opt_bad(prog, t->name, optarg,
					   "not a valid value (try '%s --help')",
					   prog);
		if (t->set_off >= 0)
			*(bool *)((uint8_t *)opts + t->set_off) = true;
	}
	return 0;
}
