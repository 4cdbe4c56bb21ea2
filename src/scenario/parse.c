/* Scenario parser.
 *
 * Three passes over the text: split it into lines of words; read the
 * topology line and load the topology (names resolve against it, so it
 * may stand anywhere in the file); then read every other line in order.
 *
 *   [at TIME|at end] VERB WORDS...
 *
 * "at" sets the current time, which never goes back; a line without it
 * runs at the current time. Expectations without "at" are checked at the
 * end of the run. topology, seed, stop, fabric and links are settings the
 * core reads itself; every other verb comes from the language.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scn.h"
#include "util/vec.h"

struct line {
	unsigned no;
	const char *raw;
	struct scn_words w;
};

static int verror(struct imc_scn_parser *p, const char *fmt, va_list ap)
{
	int n;

	if (p->failed || !p->err || !p->errlen) {
		p->failed = true;
		return -EINVAL;
	}
	p->failed = true;
	if (p->verb)
		n = snprintf(p->err, p->errlen, "%s:%u: %s: ", p->s->name,
			     p->line, p->verb);
	else
		n = snprintf(p->err, p->errlen, "%s:%u: ", p->s->name, p->line);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	return -EINVAL;
}

int imc_scn_parse_error(struct imc_scn_parser *p, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verror(p, fmt, ap);
	va_end(ap);
	return rc;
}

const struct imc_topo *imc_scn_parser_topo(const struct imc_scn_parser *p)
{
	return p->s->topo;
}

/* A node of the name index; an added one holds its name after it. */
struct scn_name {
	const void *space;
	const void *data;
	const char *name;
};

static int name_cmp(const void *a, const void *b)
{
	const struct scn_name *x = a, *y = b;
	uintptr_t sx = (uintptr_t)x->space, sy = (uintptr_t)y->space;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return strcmp(x->name, y->name);
}

int scn_name_add(struct imc_scenario *s, const void *space, const char *name,
		 const void *data)
{
	size_t len = strlen(name);
	struct scn_name *n = malloc(sizeof(*n) + len + 1);
	struct scn_name **slot;

	if (!n)
		return -ENOMEM;
	n->space = space;
	n->data = data;
	n->name = memcpy(n + 1, name, len + 1);
	slot = tsearch(n, &s->names, name_cmp);
	if (!slot) {
		free(n);
		return -ENOMEM;
	}
	if (*slot != n) {
		free(n);
		return -EEXIST;
	}
	return 0;
}

const void *scn_name_find(const struct imc_scenario *s, const void *space,
			  const char *name)
{
	const struct scn_name key = { .space = space, .name = name };
	struct scn_name *const *hit = tfind(&key, &s->names, name_cmp);

	return hit ? (*hit)->data : NULL;
}

static unsigned first_cabled(const struct imc_topo_node *n)
{
	for (unsigned i = 1; i <= n->nports; i++)
		if (n->port[i].peer != IMC_TOPO_NONE)
			return i;
	return 1;
}

int imc_scn_parse_port(struct imc_scn_parser *p, const char *word,
		       bool cabled, uint32_t *node, unsigned *port)
{
	const struct imc_topo *t = p->s->topo;
	const struct imc_topo_node *n;
	const char *colon;
	uint32_t idx;
	uint64_t pn;

	if (!t)
		return imc_scn_parse_error(p, "no topology to find '%s' in",
					   word);
	/* A whole-word match first: names may hold ':'. */
	if (!imc_topo_find(t, word, &idx)) {
		n = &t->node[idx];
		pn = n->type == IMC_NODE_HCA ? first_cabled(n) : 0;
	} else {
		char name[IMC_TOPO_MAX_NAME + 1];
		size_t len;

		colon = strrchr(word, ':');
		if (!colon)
			return imc_scn_parse_error(p, "unknown node '%s'", word);
		len = (size_t)(colon - word);
		if (len == 0 || len > IMC_TOPO_MAX_NAME)
			return imc_scn_parse_error(p, "unknown node '%s'", word);
		memcpy(name, word, len);
		name[len] = '\0';
		if (imc_topo_find(t, name, &idx))
			return imc_scn_parse_error(p, "unknown node '%s'", name);
		n = &t->node[idx];
		if (imc_scn_parse_uint(NULL, "port", colon + 1, 255, &pn) ||
		    pn > n->nports)
			return imc_scn_parse_error(p,
				"'%s' has ports 1..%u, not '%s'", name,
				n->nports, colon + 1);
		if (pn == 0 && n->type == IMC_NODE_HCA)
			return imc_scn_parse_error(p,
				"'%s' is an HCA: ports 1..%u, not 0", name,
				n->nports);
	}
	if (cabled && (pn == 0 || n->port[pn].peer == IMC_TOPO_NONE))
		return imc_scn_parse_error(p, "port %s:%u is not cabled",
					   n->name, (unsigned)pn);
	*node = idx;
	*port = (unsigned)pn;
	return 0;
}

int imc_scn_parse_host(struct imc_scn_parser *p, const char *word,
		       uint32_t *node, unsigned *port)
{
	uint32_t idx;
	unsigned pn;
	int rc = imc_scn_parse_port(p, word, false, &idx, &pn);

	if (rc)
		return rc;
	if (p->s->topo->node[idx].type != IMC_NODE_HCA)
		return imc_scn_parse_error(p,
			"'%s' is a switch; expected a host (HCA)",
			p->s->topo->node[idx].name);
	*node = idx;
	*port = pn;
	return 0;
}

/* The HCAs of nodes lo..hi with a cabled port, in node order. */
static int hosts_fill(struct imc_scn_parser *p, uint32_t lo, uint32_t hi,
		      struct imc_scn_hosts *out)
{
	const struct imc_topo *t = p->s->topo;

	out->h = calloc(hi - lo + 1, sizeof(*out->h));
	if (!out->h)
		return -ENOMEM;
	for (uint32_t i = lo; i <= hi; i++) {
		const struct imc_topo_node *nd = &t->node[i];
		unsigned pn = first_cabled(nd);

		if (nd->type == IMC_NODE_HCA &&
		    nd->port[pn].peer != IMC_TOPO_NONE)
			out->h[out->n++] = (struct imc_scn_host){ i, pn };
	}
	if (out->n)
		return 0;
	imc_scn_hosts_free(out);
	return imc_scn_parse_error(p, "no host with a cable there");
}

int imc_scn_parse_hosts(struct imc_scn_parser *p, const char *word,
			struct imc_scn_hosts *out)
{
	const struct imc_topo *t = p->s->topo;
	const char *dots = strstr(word, "..");
	char name[IMC_TOPO_MAX_NAME + 1];
	uint32_t lo, hi;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (!t)
		return imc_scn_parse_error(p, "no topology to find '%s' in",
					   word);
	if (!strcmp(word, "all")) {
		out->form = IMC_SCN_HOSTS_ALL;
		return t->nnodes ? hosts_fill(p, 0, t->nnodes - 1, out) :
				   imc_scn_parse_error(p, "no hosts");
	}
	/* A whole-word name first, as for ports. */
	if (!dots || !imc_topo_find(t, word, &lo)) {
		out->h = calloc(1, sizeof(*out->h));
		if (!out->h)
			return -ENOMEM;
		out->n = 1;
		return imc_scn_parse_host(p, word, &out->h[0].node,
					  &out->h[0].port);
	}
	len = (size_t)(dots - word);
	if (len > IMC_TOPO_MAX_NAME)
		return imc_scn_parse_error(p, "unknown node in '%s'", word);
	memcpy(name, word, len);
	name[len] = '\0';
	if (imc_topo_find(t, name, &lo) || imc_topo_find(t, dots + 2, &hi))
		return imc_scn_parse_error(p,
			"expected FIRST..LAST with two host names, got '%s'",
			word);
	if (t->node[lo].type != IMC_NODE_HCA ||
	    t->node[hi].type != IMC_NODE_HCA)
		return imc_scn_parse_error(p,
			"'%s': a range runs from a host to a host", word);
	if (lo > hi)
		return imc_scn_parse_error(p,
			"'%s': %s comes after %s", word, name, dots + 2);
	out->form = IMC_SCN_HOSTS_RANGE;
	return hosts_fill(p, lo, hi, out);
}

void imc_scn_print_hosts(FILE *f, const struct imc_topo *t,
			 const struct imc_scn_hosts *hs)
{
	char buf[2 * IMC_TOPO_MAX_NAME + 3];

	fputc(' ', f);
	switch (hs->form) {
	case IMC_SCN_HOSTS_ALL:
		fputs("all", f);
		break;
	case IMC_SCN_HOSTS_RANGE:
		snprintf(buf, sizeof(buf), "%s..%s",
			 t->node[hs->h[0].node].name,
			 t->node[hs->h[hs->n - 1].node].name);
		scn_print_name(f, buf);
		break;
	default:
		imc_scn_print_port(f, t, hs->h[0].node, hs->h[0].port);
		break;
	}
}

void imc_scn_hosts_free(struct imc_scn_hosts *hs)
{
	if (!hs)
		return;
	free(hs->h);
	memset(hs, 0, sizeof(*hs));
}

const struct scn_group *scn_group_find(const struct imc_scenario *s,
				       uint16_t mlid)
{
	unsigned i;

	if (!s->group_by_mlid || mlid < SCN_MLID_MIN || mlid > SCN_MLID_MAX)
		return NULL;
	i = s->group_by_mlid[mlid - SCN_MLID_MIN];
	return i ? &s->groups[i - 1] : NULL;
}

unsigned scn_setting_line(const struct imc_scenario *s, const char *verb)
{
	for (unsigned i = 0; i < s->nsettings; i++)
		if (!strcmp(s->settings[i].verb->name, verb))
			return s->settings[i].line;
	return 0;
}

int scn_group_add(struct imc_scenario *s, const struct scn_group *g)
{
	if (g->mlid < SCN_MLID_MIN || g->mlid > SCN_MLID_MAX)
		return -EINVAL;
	if (!s->group_by_mlid) {
		s->group_by_mlid = calloc(SCN_MLID_MAX - SCN_MLID_MIN + 1,
					  sizeof(*s->group_by_mlid));
		if (!s->group_by_mlid)
			return -ENOMEM;
	}
	if (s->group_by_mlid[g->mlid - SCN_MLID_MIN])
		return -EEXIST;
	if (IMC_VEC_RESERVE(&s->groups, &s->capgroups, s->ngroups + 1))
		return -ENOMEM;
	s->groups[s->ngroups++] = *g;
	s->group_by_mlid[g->mlid - SCN_MLID_MIN] = s->ngroups;
	return 0;
}

/* ---- settings the core reads ---- */

static int topology_words(struct imc_scn_parser *p, const struct scn_words *w)
{
	struct imc_scenario *s = p->s;

	if (w->argc == 2 && strcmp(w->argv[1], "file")) {
		s->topo_is_file = false;
		s->topo_arg = strdup(w->argv[1]);
	} else if (w->argc == 3 && !strcmp(w->argv[1], "file")) {
		s->topo_is_file = true;
		s->topo_arg = strdup(w->argv[2]);
	} else {
		return scn_error(p,
			"expected 'topology GENERATOR' (e.g. fat-tree:leaves=2,hosts=2,spines=1) or 'topology file PATH'");
	}
	if (!s->topo_arg)
		return -ENOMEM;
	if (!*s->topo_arg)
		return scn_error(p, "empty topology");
	return 0;
}

static int topology_load(struct imc_scn_parser *p)
{
	struct imc_scenario *s = p->s;
	char e[512];
	int rc;

	if (!s->topo_is_file) {
		rc = imc_topo_generate(s->topo_arg, &s->own_topo, e, sizeof(e));
	} else {
		bool rel = s->topo_arg[0] != '/' && s->dir && *s->dir;
		char *path;

		if (asprintf(&path, "%s%s%s", rel ? s->dir : "", rel ? "/" : "",
			     s->topo_arg) < 0)
			return -ENOMEM;
		rc = imc_topo_parse_file(path, &s->own_topo, e, sizeof(e));
		free(path);
	}
	if (rc) {
		s->own_topo = NULL;
		if (rc == -ENOMEM)
			return rc;
		return scn_error(p, "topology: %s", e);
	}
	s->topo = s->own_topo;
	return 0;
}

/* seed NUMBER and stop TIME, each once a file. */
static int once_words(struct imc_scn_parser *p, const struct scn_words *w)
{
	bool seed = !strcmp(w->argv[0], "seed");
	unsigned *line = seed ? &p->seed_line : &p->s->stop_line;

	if (w->argc != 2)
		return scn_error(p, "expected '%s %s'", w->argv[0],
				 seed ? "NUMBER" : "TIME");
	if (*line)
		return scn_error(p, "%s already given on line %u", w->argv[0],
				 *line);
	*line = p->line;
	if (seed)
		return imc_scn_parse_uint(p, "seed", w->argv[1], UINT64_MAX,
					  &p->s->seed);
	return imc_scn_parse_time(p, "stop", w->argv[1], &p->s->stop);
}

static const unsigned mtu_sizes[] = { 0, 256, 512, 1024, 2048, 4096 };

/* IBA 7.7: MTU codes 1..5 stand for 256..4096 bytes; the line gives
 * bytes. */
static int mtu_parse(struct imc_scn_parser *p, const struct scn_opt *o,
		     const char *v, void *field)
{
	uint64_t x;
	int rc = imc_scn_parse_uint(p, o->key, v, 4096, &x);

	for (unsigned m = 1; !rc && m < IMC_ARRAY_SIZE(mtu_sizes); m++)
		if (mtu_sizes[m] == x) {
			*(unsigned *)field = m;
			return 0;
		}
	return rc ? rc : scn_error(p,
		"mtu: expected 256, 512, 1024, 2048 or 4096, got '%s'", v);
}

static void mtu_print(FILE *f, const struct scn_opt *o, const void *field)
{
	unsigned m = *(const unsigned *)field;

	(void)o;
	fprintf(f, "%u", m < IMC_ARRAY_SIZE(mtu_sizes) ? mtu_sizes[m] : 0);
}

/* By fabric_line index. SA rate codes are 6 bits (IBA 15.2.5.17). */
static const struct scn_opt fabric_opts[] = {
	{ .key = "mtu", .type = SCN_OPT_CUSTOM,
	  .offset = offsetof(struct imc_fabric_config, mtu),
	  .parse = mtu_parse, .print = mtu_print },
	{ .key = "rate", .type = SCN_OPT_UINT, .size = sizeof(unsigned),
	  .offset = offsetof(struct imc_fabric_config, rate), .min = 2,
	  .max = 63, .help = "expected an SA rate code 2..63",
	  .flags = SCN_OPT_GOT },
	{ .key = "rq", .type = SCN_OPT_UINT, .size = sizeof(unsigned),
	  .offset = offsetof(struct imc_fabric_config, rq_depth), .min = 1,
	  .max = 1u << 20, .help = "expected a depth of at least 1" },
	SCN_O_TIME("sweep", struct imc_fabric_config, sm_sweep_delay),
	SCN_O_HEX("prefix", struct imc_fabric_config, subnet_prefix, 0),
};
static const struct scn_optset fabric_optset = SCN_OPTSET(fabric_opts);

/* The fabric or links line: its keys into field (size bytes of the
 * configuration), all or nothing. A key given again on a later line is
 * an error naming the first: line[] has an entry per option of set. */
static int cfg_words(struct imc_scn_parser *p, const struct scn_words *w,
		     const char *usage, const struct scn_optset *set,
		     unsigned *line, void *field, size_t size)
{
	union {
		struct imc_fabric_config c;
		struct imc_link_params l;
	} copy;
	uint64_t given = 0;
	int rc;

	if (w->argc < 2)
		return scn_error(p, "%s", usage);
	memcpy(&copy, field, size);
	rc = scn_opts_parse(p, set, w->argc - 1,
			    (const char *const *)w->argv + 1, &copy, &given);
	for (unsigned k = 0; !rc && k < set->n; k++)
		if ((given & (1ull << k)) && line[k])
			return scn_error(p, "%s %s= already given on line %u",
					 w->argv[0], set->opt[k].key, line[k]);
	for (unsigned k = 0; !rc && k < set->n; k++)
		if (given & (1ull << k))
			line[k] = p->line;
	if (!rc)
		memcpy(field, &copy, size);
	return rc;
}

/* ---- expectations ---- */

static int value_word(struct imc_scn_parser *p,
		      const struct imc_scn_subject *subj, const char *word,
		      uint64_t *v)
{
	if (subj->value_parse && !subj->value_parse(word, v))
		return 0;
	return imc_scn_parse_uint(p, "value", word, UINT64_MAX, v);
}

/* The words after a verb or subject name, parsed by parse into *data
 * (parse is given its value before, a subject's constant), which holds
 * NULL after an error or when parse kept the constant: what free frees.
 * Messages name the verb or subject. */
static int words_parse(struct imc_scn_parser *p, const char *name,
		       int (*parse)(struct imc_scn_parser *, unsigned,
				    const char *const *, void **),
		       void (*free_fn)(void *), unsigned argc,
		       const char *const *argv, void **data)
{
	const void *before = *data;
	int rc;

	p->verb = name;
	rc = scn_words_unique(p, argc, argv);
	if (!rc)
		rc = parse(p, argc, argv, data);
	p->verb = NULL;
	if (rc && *data != before && free_fn)
		free_fn(*data);
	if (rc || *data == before)
		*data = NULL;
	return rc;
}

static int operand(struct imc_scn_parser *p, unsigned argc,
		   const char *const *argv, struct scn_operand *o)
{
	o->subj = imc_scn_lang_subject(p->s->lang, argv[0]);
	if (!o->subj)
		return scn_error(p, "unknown subject '%s'", argv[0]);
	o->data = (void *)o->subj->arg;
	return words_parse(p, o->subj->name, o->subj->parse, o->subj->free,
			   argc - 1, argv + 1, &o->data);
}

static void operand_free(struct scn_operand *o)
{
	if (o->subj && o->subj->free)
		o->subj->free(o->data);
	o->subj = NULL;
	o->data = NULL;
}

static void expect_free(struct scn_expect *e)
{
	operand_free(&e->lhs);
	for (unsigned i = 0; i < e->nrhs; i++)
		operand_free(&e->rhs[i].subj);
	free(e->rhs);
	free(e->text);
}

/* VALUE-OR-SUBJECT (('+' | '-') VALUE-OR-SUBJECT)* */
static int rhs_words(struct imc_scn_parser *p, struct scn_expect *e,
		     unsigned argc, const char *const *argv)
{
	unsigned i = 0;
	bool neg = false;

	e->rhs = calloc(argc / 2 + 1, sizeof(*e->rhs));
	if (!e->rhs)
		return -ENOMEM;
	while (i < argc) {
		struct scn_term *t = &e->rhs[e->nrhs];
		unsigned j = i;
		int rc;

		while (j < argc && strcmp(argv[j], "+") && strcmp(argv[j], "-"))
			j++;
		if (j == i)
			return scn_error(p, "expected a value or a subject %s",
					 i ? "after '+' or '-'" : "after the operator");
		t->neg = neg;
		e->nrhs++;
		if (!imc_scn_lang_subject(p->s->lang, argv[i])) {
			rc = value_word(p, e->lhs.subj, argv[i], &t->value);
			if (!rc && j - i > 1)
				rc = scn_error(p, "expected '+' or '-' after '%s', got '%s'",
					       argv[i], argv[i + 1]);
		} else {
			t->is_subject = true;
			e->rhs_observed = true;
			rc = operand(p, j - i, argv + i, &t->subj);
		}
		if (rc)
			return rc;
		if (j == argc)
			break;
		neg = !strcmp(argv[j], "-");
		i = j + 1;
		if (i == argc)
			return scn_error(p, "expected a value or a subject after '%s'",
					 argv[j]);
	}
	return 0;
}

static int expect_words(struct imc_scn_parser *p, const struct line *l,
			unsigned first, bool at_end, imc_time_t at)
{
	struct imc_scenario *s = p->s;
	const char *const *argv = (const char *const *)l->w.argv + first + 1;
	unsigned argc = l->w.argc - first - 1, k;
	struct scn_expect e;
	int op = -1, rc;

	if (argc == 0)
		return scn_error(p, "expected 'expect SUBJECT ... OP VALUE'");
	for (k = 1; k < argc; k++) {
		op = scn_op_parse(argv[k]);
		if (op >= 0)
			break;
	}
	if (op < 0)
		return scn_error(p,
			"expected an operator (== != < <= > >= in) after '%s'",
			argv[0]);
	if (k + 1 >= argc)
		return scn_error(p, "expected a value after '%s'",
				 scn_op_str((enum scn_op)op));
	memset(&e, 0, sizeof(e));
	e.line = l->no;
	e.at_end = at_end;
	e.at = at;
	e.op = (enum scn_op)op;
	rc = operand(p, k, argv, &e.lhs);
	if (rc)
		return rc;
	if (e.op == SCN_IN) {
		const char *r = argv[k + 1];
		const char *dots = strstr(r, "..");
		char lo[64];

		if (k + 2 != argc || !dots || (size_t)(dots - r) >= sizeof(lo)) {
			expect_free(&e);
			return scn_error(p, "expected a range A..B after 'in'");
		}
		memcpy(lo, r, (size_t)(dots - r));
		lo[dots - r] = '\0';
		rc = value_word(p, e.lhs.subj, lo, &e.a);
		if (!rc)
			rc = value_word(p, e.lhs.subj, dots + 2, &e.b);
		if (!rc && e.a > e.b)
			rc = scn_error(p, "empty range %s", r);
	} else {
		rc = rhs_words(p, &e, argc - k - 1, argv + k + 1);
	}
	if (!rc) {
		size_t from = l->w.start[first + 1];
		size_t to = l->w.end[l->w.argc - 1];

		e.text = strndup(l->raw + from, to - from);
		if (!e.text)
			rc = -ENOMEM;
	}
	if (!rc) {
		rc = IMC_VEC_RESERVE(&s->expects, &s->capexpects,
				     s->nexpects + 1);
		if (!rc) {
			s->expects[s->nexpects++] = e;
			return 0;
		}
	}
	expect_free(&e);
	return rc;
}

/* ---- lines ---- */

static int verb_words(struct imc_scn_parser *p, const struct line *l,
		      unsigned first, imc_time_t at, bool timed)
{
	struct imc_scenario *s = p->s;
	const struct imc_scn_verb *v = imc_scn_lang_verb(s->lang,
							 l->w.argv[first]);
	struct scn_action a, **list;
	size_t *n, *cap;
	void *data = NULL;
	int rc;

	if (!v)
		return scn_error(p, "unknown verb '%s'", l->w.argv[first]);
	if (v->kind == IMC_SCN_SETTING && timed)
		return scn_error(p, "'%s' is a setting: it takes no time",
				 v->name);
	rc = words_parse(p, v->name, v->parse, v->free, l->w.argc - first - 1,
			 (const char *const *)l->w.argv + first + 1, &data);
	if (rc)
		return rc;
	if (v->kind == IMC_SCN_SETTING) {
		list = &s->settings;
		n = &s->nsettings;
		cap = &s->capsettings;
	} else {
		list = &s->actions;
		n = &s->nactions;
		cap = &s->capactions;
	}
	a = (struct scn_action){ .line = l->no, .index = (unsigned)*n, .at = at,
				 .verb = v, .data = data };
	if (IMC_VEC_RESERVE(list, cap, *n + 1)) {
		if (v->free)
			v->free(data);
		return -ENOMEM;
	}
	(*list)[(*n)++] = a;
	return 0;
}

static int parse_line(struct imc_scn_parser *p, const struct line *l,
		      imc_time_t *now, unsigned *now_line)
{
	const struct scn_words *w = &l->w;
	const char *word;
	unsigned i = 0;
	bool timed = false, at_end = false;
	imc_time_t t = *now;
	int rc;

	if (!strcmp(w->argv[0], "at")) {
		if (w->argc < 2)
			return scn_error(p, "expected 'at TIME VERB ...'");
		if (!strcmp(w->argv[1], "end")) {
			at_end = true;
		} else {
			rc = imc_scn_parse_time(p, "at", w->argv[1], &t);
			if (rc)
				return rc;
			if (t < *now) {
				char a[32], b[32];

				imc_scn_format_time(t, a, sizeof(a));
				imc_scn_format_time(*now, b, sizeof(b));
				return scn_error(p,
					"time goes backwards: %s is before %s (line %u)",
					a, b, *now_line);
			}
			timed = true;
		}
		i = 2;
		if (w->argc < 3)
			return scn_error(p, "expected a verb after '%s %s'",
					 w->argv[0], w->argv[1]);
	}
	word = w->argv[i];
	if (!strcmp(word, "expect")) {
		rc = expect_words(p, l, i, at_end || !timed, t);
	} else if (at_end) {
		return scn_error(p, "only expectations can be 'at end'");
	} else if (scn_reserved(word)) {
		if (timed || i)
			return scn_error(p, "'%s' is a setting: it takes no time",
					 word);
		if (!strcmp(word, "topology") || !strcmp(word, "at"))
			rc = 0;   /* read in the second pass */
		else if (!strcmp(word, "seed") || !strcmp(word, "stop"))
			rc = once_words(p, w);
		else if (!strcmp(word, "fabric"))
			rc = cfg_words(p, w,
				"expected fabric mtu=BYTES rate=CODE rq=DEPTH sweep=TIME prefix=HEX",
				&fabric_optset, p->fabric_line, &p->s->cfg,
				sizeof(p->s->cfg));
		else
			rc = cfg_words(p, w,
				"expected links latency=TIME bandwidth=RATE loss=P dup=P reorder=P reorder-delay=TIME",
				&scn_link_optset, p->links_line,
				&p->s->cfg.link, sizeof(p->s->cfg.link));
	} else {
		rc = verb_words(p, l, i, t, timed);
	}
	if (!rc && timed) {
		*now = t;
		*now_line = l->no;
	}
	return rc;
}

/* Every timed line must be within the stop time. */
static int check_stop(struct imc_scn_parser *p)
{
	struct imc_scenario *s = p->s;
	unsigned ia = 0, ie = 0;
	char a[32], b[32];

	imc_scn_format_time(s->stop, b, sizeof(b));
	for (; ia < s->nactions; ia++)
		if (s->actions[ia].at > s->stop)
			break;
	for (; ie < s->nexpects; ie++)
		if (!s->expects[ie].at_end && s->expects[ie].at > s->stop)
			break;
	if (ia == s->nactions && ie == s->nexpects)
		return 0;
	if (ie == s->nexpects ||
	    (ia < s->nactions && s->actions[ia].line < s->expects[ie].line)) {
		p->line = s->actions[ia].line;
		imc_scn_format_time(s->actions[ia].at, a, sizeof(a));
	} else {
		p->line = s->expects[ie].line;
		imc_scn_format_time(s->expects[ie].at, a, sizeof(a));
	}
	return scn_error(p, "time %s is after the stop time %s%s", a, b,
			 s->stop_line ? "" : " (the default; add a stop line)");
}

static char *dir_of(const char *name)
{
	const char *slash = strrchr(name, '/');

	if (!slash)
		return strdup(".");
	if (slash == name)
		return strdup("/");
	return strndup(name, (size_t)(slash - name));
}

void imc_scenario_destroy(struct imc_scenario *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nsettings; i++)
		if (s->settings[i].verb->free)
			s->settings[i].verb->free(s->settings[i].data);
	for (unsigned i = 0; i < s->nactions; i++)
		if (s->actions[i].verb->free)
			s->actions[i].verb->free(s->actions[i].data);
	for (unsigned i = 0; i < s->nexpects; i++)
		expect_free(&s->expects[i]);
	free(s->settings);
	free(s->actions);
	free(s->expects);
	free(s->groups);
	free(s->group_by_mlid);
	tdestroy(s->names, free);
	imc_topo_destroy(s->own_topo);
	imc_scn_lang_destroy(s->own_lang);
	free(s->topo_arg);
	free(s->topo_desc);
	free(s->dir);
	free(s->name);
	free(s);
}

static int split_lines(struct imc_scn_parser *p, const char *text, size_t len,
		       struct line **out, unsigned *nout)
{
	struct line *lines = NULL;
	unsigned n = 0, no = 0;
	size_t cap = 0;
	size_t i = 0;
	int rc = 0;

	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t start = i, end = nl ? (size_t)(nl - text) : len;
		struct scn_words w;
		const char *why;

		no++;
		if (no == UINT32_MAX) {
			p->line = no;
			rc = scn_error(p, "too many lines");
			break;
		}
		rc = scn_tokenize(text + i, end - i, &w, &why);
		if (rc) {
			p->line = no;
			if (rc != -ENOMEM)
				rc = scn_error(p, "%s", why);
			break;
		}
		i = end + 1;
		if (!w.argc) {
			scn_words_free(&w);
			continue;
		}
		if (IMC_VEC_RESERVE(&lines, &cap, n + 1)) {
			scn_words_free(&w);
			rc = -ENOMEM;
			break;
		}
		lines[n++] = (struct line){ .no = no, .raw = text + start,
					    .w = w };
	}
	*out = lines;
	*nout = n;
	p->line = no ? no : 1;
	return rc;
}

/* The topology line is read before every other line: the others name
 * its nodes. opts->topo, when given, is the topology instead. */
static int topology_lines(struct imc_scn_parser *p,
			  const struct imc_scenario_parse_opts *opts,
			  const struct line *lines, unsigned nlines)
{
	struct imc_scenario *s = p->s;
	int rc = 0;

	for (unsigned i = 0; !rc && i < nlines; i++) {
		if (strcmp(lines[i].w.argv[0], "topology"))
			continue;
		p->line = lines[i].no;
		if (s->topo_arg)
			rc = scn_error(p, "topology already given on line %u",
				       s->topo_line);
		else
			rc = topology_words(p, &lines[i].w);
		s->topo_line = lines[i].no;
	}
	if (rc)
		return rc;
	if (opts->topo) {
		s->topo = opts->topo;
		return 0;
	}
	if (!s->topo_arg) {
		p->line = nlines ? lines[nlines - 1].no : 1;
		return scn_error(p,
			"expected a topology line (topology GENERATOR or topology file PATH)");
	}
	p->line = s->topo_line;
	return topology_load(p);
}

int imc_scenario_parse(const char *text, size_t len, const char *name,
		       const struct imc_scenario_parse_opts *opts,
		       struct imc_scenario **out, char *err, size_t errlen)
{
	struct imc_scenario_parse_opts none = { 0 };
	struct imc_scn_parser p = { .err = err, .errlen = errlen };
	struct imc_scenario *s;
	struct line *lines = NULL;
	unsigned nlines = 0, now_line = 0;
	imc_time_t now = 0;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!opts)
		opts = &none;
	if (!name)
		name = "<scenario>";
	if (!text && len)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	p.s = s;
	s->name = strdup(name);
	s->dir = opts->dir ? strdup(opts->dir) : dir_of(name);
	if (!s->name || !s->dir) {
		imc_scenario_destroy(s);
		return -ENOMEM;
	}
	if (opts->lang) {
		s->lang = opts->lang;
	} else {
		rc = imc_scn_lang_create(&s->own_lang);
		if (rc) {
			imc_scenario_destroy(s);
			return rc;
		}
		s->lang = s->own_lang;
	}
	imc_fabric_config_default(&s->cfg);
	s->seed = s->cfg.seed;
	s->stop = IMC_SCN_STOP_DEFAULT;

	rc = split_lines(&p, text, len, &lines, &nlines);
	if (!rc)
		rc = topology_lines(&p, opts, lines, nlines);
	for (unsigned i = 0; !rc && i < nlines; i++) {
		p.line = lines[i].no;
		rc = parse_line(&p, &lines[i], &now, &now_line);
	}
	if (!rc)
		rc = check_stop(&p);
	if (!rc && s->topo_arg &&
	    asprintf(&s->topo_desc, "%s%s", s->topo_is_file ? "file " : "",
		     s->topo_arg) < 0) {
		s->topo_desc = NULL;
		rc = -ENOMEM;
	}
	for (unsigned i = 0; i < nlines; i++)
		scn_words_free(&lines[i].w);
	free(lines);
	if (rc) {
		if (rc == -ENOMEM && err && errlen && s->topo_arg &&
		    p.line == s->topo_line)
			snprintf(err, errlen,
				 "%s:%u: out of memory for the topology %s",
				 s->name, p.line, s->topo_arg);
		else if (rc == -ENOMEM && err && errlen)
			snprintf(err, errlen,
				 "%s:%u: out of memory for what this line makes",
				 s->name, p.line);
		imc_scenario_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The largest scenario read: 100,000 lines take about 5 MB, and a file
 * past this is not a scenario (/dev/zero, a disk image) to grow into. */
#define SCN_MAX_FILE (64u << 20)

/* Reads all of f (a file, a pipe, /dev/stdin) into *out. Fails on the
 * first chunk with a NUL byte: no scenario holds one. */
static int read_all(FILE *f, const char *path, char **out, size_t *outlen,
		    char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		size_t got;
		const char *nul;

		if (cap - len < 4096) {
			char *nt;
			size_t nc = cap ? cap * 2 : 8192;

			if (cap >= SCN_MAX_FILE) {
				if (err && errlen)
					snprintf(err, errlen,
						 "%s: larger than %u MiB, the most a scenario may be",
						 path, SCN_MAX_FILE >> 20);
				free(text);
				return -EFBIG;
			}
			nt = realloc(text, nc + 1);
			if (!nt) {
				if (err && errlen)
					snprintf(err, errlen,
						 "%s: out of memory for %zu bytes of text",
						 path, nc + 1);
				free(text);
				return -ENOMEM;
			}
			text = nt;
			cap = nc;
		}
		got = fread(text + len, 1, cap - len, f);
		nul = got ? memchr(text + len, '\0', got) : NULL;
		if (nul) {
			unsigned line = 1;

			for (const char *c = text; c < nul; c++)
				line += *c == '\n';
			if (err && errlen)
				snprintf(err, errlen,
					 "%s:%u: a NUL byte: not scenario text",
					 path, line);
			free(text);
			return -EINVAL;
		}
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", path);
		free(text);
		return -EIO;
	}
	*out = text;
	*outlen = len;
	return 0;
}

int imc_scenario_parse_file(const char *path,
			    const struct imc_scenario_parse_opts *opts,
			    struct imc_scenario **out, char *err,
			    size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (!f) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = read_all(f, path, &text, &len, err, errlen);
	fclose(f);
	if (rc)
		return rc;
	rc = imc_scenario_parse(text, len, path, opts, out, err, errlen);
	free(text);
	return rc;
}

/* ---- printing ---- */

static void print_value(FILE *f, const struct imc_scn_subject *subj,
			uint64_t v)
{
	char buf[64];

	if (subj->value_format) {
		subj->value_format(v, buf, sizeof(buf));
		fputs(buf, f);
	} else {
		fprintf(f, "%" PRIu64, v);
	}
}

static void print_expect(const struct imc_scenario *s,
			 const struct scn_expect *e, FILE *f)
{
	if (!e->at_end) {
		fputs("at ", f);
		imc_scn_print_time(f, e->at);
		fputc(' ', f);
	}
	fprintf(f, "expect %s", e->lhs.subj->name);
	e->lhs.subj->print(f, s->topo, e->lhs.data);
	fprintf(f, " %s ", scn_op_str(e->op));
	if (e->op == SCN_IN) {
		print_value(f, e->lhs.subj, e->a);
		fputs("..", f);
		print_value(f, e->lhs.subj, e->b);
	} else {
		for (unsigned i = 0; i < e->nrhs; i++) {
			const struct scn_term *t = &e->rhs[i];

			if (i)
				fputs(t->neg ? " - " : " + ", f);
			if (t->is_subject) {
				fputs(t->subj.subj->name, f);
				t->subj.subj->print(f, s->topo, t->subj.data);
			} else {
				print_value(f, e->lhs.subj, t->value);
			}
		}
	}
	fputc('\n', f);
}

void imc_scenario_print(const struct imc_scenario *s, FILE *f)
{
	const struct imc_fabric_config *c = &s->cfg;
	unsigned ia = 0, ie = 0;

	if (s->topo_arg) {
		fputs("topology ", f);
		if (s->topo_is_file)
			fputs("file ", f);
		/* Generator specs hold ':' and '=': quote only for blanks. */
		if (strpbrk(s->topo_arg, " \t#") || !*s->topo_arg)
			fprintf(f, "\"%s\"", s->topo_arg);
		else
			fputs(s->topo_arg, f);
		fputc('\n', f);
	}
	fprintf(f, "seed %" PRIu64 "\nstop ", s->seed);
	imc_scn_print_time(f, s->stop);
	fputs("\nfabric", f);
	scn_opts_print(f, s->topo, &fabric_optset, c, ~0ull);
	fputs("\nlinks", f);
	scn_opts_print(f, s->topo, &scn_link_optset, &c->link, ~0ull);
	fputc('\n', f);
	for (unsigned i = 0; i < s->nsettings; i++) {
		fputs(s->settings[i].verb->name, f);
		s->settings[i].verb->print(f, s->topo, s->settings[i].data);
		fputc('\n', f);
	}
	/* Timed lines in file order, which is time order. */
	while (ia < s->nactions || ie < s->nexpects) {
		const struct scn_expect *e = ie < s->nexpects ?
			&s->expects[ie] : NULL;

		if (e && e->at_end) {
			ie++;
			continue;
		}
		if (ia < s->nactions &&
		    (!e || s->actions[ia].line < e->line)) {
			const struct scn_action *a = &s->actions[ia++];

			fputs("at ", f);
			imc_scn_print_time(f, a->at);
			fprintf(f, " %s", a->verb->name);
			a->verb->print(f, s->topo, a->data);
			fputc('\n', f);
		} else {
			print_expect(s, e, f);
			ie++;
		}
	}
	for (unsigned i = 0; i < s->nexpects; i++)
		if (s->expects[i].at_end)
			print_expect(s, &s->expects[i], f);
}

const char *imc_scenario_name(const struct imc_scenario *s)
{
	return s->name;
}

const char *imc_scenario_topo_desc(const struct imc_scenario *s)
{
	return s->topo_desc ? s->topo_desc : "(given)";
}

const struct imc_topo *imc_scenario_topo(const struct imc_scenario *s)
{
	return s->topo;
}

uint64_t imc_scenario_seed(const struct imc_scenario *s)
{
	return s->seed;
}

imc_time_t imc_scenario_stop(const struct imc_scenario *s)
{
	return s->stop;
}

void imc_scenario_config(const struct imc_scenario *s,
			 struct imc_fabric_config *out)
{
	*out = s->cfg;
	out->seed = s->seed;
}

unsigned imc_scenario_nactions(const struct imc_scenario *s)
{
	return s->nactions;
}

unsigned imc_scenario_nexpects(const struct imc_scenario *s)
{
	return s->nexpects;
}
