/* Verb descriptors (desc.h): each argument kind parsed, printed and
 * freed once, driven by a verb's table of arguments and its options. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/desc.h"

int scn_mlid_parse(struct imc_scn_parser *p, const char *word,
		   uint16_t *mlid)
{
	uint64_t v;
	int rc = imc_scn_parse_uint(p, "MLID", word, 0xFFFF, &v);

	if (rc)
		return rc;
	if (v < SCN_MLID_MIN || v > SCN_MLID_MAX)
		return imc_scn_parse_error(p,
			"MLID: expected a multicast LID 0xc000..0xfffe, got '%s'",
			word);
	*mlid = (uint16_t)v;
	return 0;
}

int scn_named_parse(const struct scn_named *t, size_t n, const char *word,
		    uint64_t *v)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(word, t[i].name)) {
			*v = t[i].value;
			return 0;
		}
	return -EINVAL;
}

const char *scn_named_str(const struct scn_named *t, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == v)
			return t[i].name;
	return NULL;
}

void scn_named_format(const struct scn_named *t, size_t n, uint64_t v,
		      bool hex, char *buf, size_t len)
{
	const char *name = scn_named_str(t, n, v);

	if (name)
		snprintf(buf, len, "%s", name);
	else if (hex)
		snprintf(buf, len, "0x%04" PRIx64, v);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

void scn_lid_format(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%04" PRIx64, v);
}

/* The index of word among a WORD argument's names, or -1. */
static int word_index(const struct scn_arg *a, const char *word)
{
	for (int i = 0; a->names[i]; i++)
		if (!strcmp(a->names[i], word))
			return i;
	return -1;
}

/* A UINT argument's word into dst, parsed as an option of its bounds
 * (a REST entry: any value of its size). */
static int uint_parse(struct imc_scn_parser *p, const struct scn_arg *a,
		      const char *word, void *dst, bool entry)
{
	const struct scn_opt o = {
		.key = a->what, .type = SCN_OPT_UINT, .size = a->size,
		.flags = SCN_OPT_GOT, .min = entry ? 0 : a->min,
		.max = entry ? 0 : a->max, .help = a->help,
	};

	return scn_opt_value_parse(p, &o, word, dst);
}

/* A NAMED_MGID argument's word: a names service's when space is NULL
 * (a verb that several plugins add, each with the names of its own
 * as=). */
static int named_mgid_parse(struct imc_scn_parser *p, const struct scn_arg *a,
			    const char *word, void *base)
{
	const struct scn_svc_ops *o;

	if (a->space)
		return scn_mgid_parse(p, word, a->space, a->help,
				      (unsigned)a->min, scn_at(base, a->offset));
	o = scn_service(p->s->lang, (enum scn_svc)a->max);
	if (!o)
		return imc_scn_parse_error(p, "@NAME: no plugin names groups");
	memcpy(scn_at(base, a->count_off), &o, sizeof(o));
	return scn_mgid_parse(p, word, o->space, o->what, o->mgid_flags,
			      scn_at(base, a->offset));
}

static int arg_parse(struct imc_scn_parser *p, const struct scn_desc *d,
		     const struct scn_arg *a, const char *word, void *base)
{
	struct scn_port_arg *pa = scn_at(base, a->offset);
	struct imc_gid *gid;
	int i;

	switch (a->kind) {
	case SCN_ARG_WORD:
		i = word_index(a, word);
		if (i < 0)
			return imc_scn_parse_error(p, "%s", d->usage);
		scn_field_put(pa, 0, a->size, (uint64_t)i);
		return 0;
	case SCN_ARG_PORT:
		return imc_scn_parse_port(p, word, a->flags & SCN_ARG_CABLED,
					  &pa->node, &pa->port);
	case SCN_ARG_HOST_ALL:
		if (!strcmp(word, "all")) {
			pa->node = IMC_TOPO_NONE;
			return 0;
		}
		/* fallthrough */
	case SCN_ARG_HOST:
		return imc_scn_parse_host(p, word, &pa->node, &pa->port);
	case SCN_ARG_HOSTS:
		return imc_scn_parse_hosts(p, word, scn_at(base, a->offset));
	case SCN_ARG_UINT:
		return uint_parse(p, a, word, pa, false);
	case SCN_ARG_MGID:
		gid = scn_at(base, a->offset);
		if (imc_gid_parse(word, gid) || !imc_gid_is_multicast(gid))
			return imc_scn_parse_error(p,
				"MGID: expected a multicast GID (ff..), got '%s'",
				word);
		return 0;
	case SCN_ARG_NAMED_MGID:
		return named_mgid_parse(p, a, word, base);
	default:
		return a->parse(p, a, word, base);
	}
}

/* One more entry of a REST argument. */
static int rest_parse(struct imc_scn_parser *p, const struct scn_arg *a,
		      const char *word, void *base)
{
	unsigned *n = scn_at(base, a->count_off);
	int rc;

	if (a->kind != SCN_ARG_UINT)
		return a->parse(p, a, word, base);
	if (*n >= a->max)
		return imc_scn_parse_error(p, "at most %u %s",
					   (unsigned)a->max, a->help);
	rc = uint_parse(p, a, word, scn_at(base, a->offset + *n * a->size),
			true);
	*n += !rc;
	return rc;
}

/* The words after the positional arguments: options, and the entries
 * of a REST argument among them. */
static int tail_parse(struct imc_scn_parser *p, const struct scn_desc *d,
		      const struct scn_arg *rest, unsigned argc,
		      const char *const *argv, void *base, uint64_t *given)
{
	static const struct scn_optset none = { NULL, 0, NULL };
	const struct scn_optset *set = d->opts ? d->opts : &none;
	void *obase = scn_at(base, d->opts_off);

	if (!rest)
		return scn_opts_parse(p, set, argc, argv, obase, given);
	for (unsigned i = 0; i < argc; i++) {
		bool m = false;
		int rc = scn_opt_word(p, set, argv[i], obase, given, &m);

		if (!rc && !m)
			rc = rest_parse(p, rest, argv[i], base);
		if (rc)
			return rc;
	}
	return 0;
}

int scn_desc_parse(struct imc_scn_parser *p, const struct scn_desc *d,
		   unsigned argc, const char *const *argv, void **data)
{
	const struct scn_arg *rest = d->narg ? &d->arg[d->narg - 1] : NULL;
	const void *arg = *data;
	unsigned max = d->max, i = 0;
	uint64_t given = 0;
	bool bounded;
	void *base;
	int rc;

	rest = rest && (rest->flags & SCN_ARG_REST) ? rest : NULL;
	bounded = max || (!d->opts && !rest);

	if (d->once && scn_setting_line(p->s, p->verb))
		return imc_scn_parse_error(p, "%s on line %u", d->once,
					   scn_setting_line(p->s, p->verb));
	if (bounded && !max)
		max = d->narg;
	if (bounded && argc > max && (d->keep & SCN_KEEP_GOT))
		return imc_scn_parse_error(p, "%s, got '%s'", d->usage,
					   argv[max]);
	if (argc < d->min || (bounded && argc > max))
		return imc_scn_parse_error(p, "%s", d->usage);
	base = calloc(1, d->size ? d->size : 1);
	*data = base;
	if (!base)
		return -ENOMEM;
	if (d->defaults)
		memcpy(base, d->defaults, d->size);
	if (d->init)
		d->init(base);
	if (d->keep & SCN_KEEP_ARG)
		memcpy(scn_at(base, d->arg_off), &arg, sizeof(arg));
	/* Too many entries is said before what the others say. */
	if (rest && rest->kind == SCN_ARG_UINT && !d->opts &&
	    argc + 1 > d->narg && argc + 1 - d->narg > rest->max)
		return imc_scn_parse_error(p, "at most %u %s",
					   (unsigned)rest->max, rest->help);
	for (unsigned k = 0; k < d->narg; k++) {
		const struct scn_arg *a = &d->arg[k];
		const char *v;
		unsigned j;
		int w;

		if (a->flags & SCN_ARG_REST)
			break;
		if ((a->flags & SCN_ARG_OPTIONAL) && a->kind != SCN_ARG_WORD &&
		    (i >= argc || (a->kind == SCN_ARG_CUSTOM &&
				   scn_opt_find(d->opts, argv[i], &v, &j))))
			continue;
		if ((a->flags & SCN_ARG_OPTIONAL) && a->kind == SCN_ARG_WORD) {
			w = i < argc ? word_index(a, argv[i]) : -1;
			scn_field_put(base, a->offset, a->size,
				      (uint64_t)(w + 1));
			i += w >= 0;
			continue;
		}
		if (i >= argc)
			return imc_scn_parse_error(p, "expected %s", a->what);
		rc = arg_parse(p, d, a, argv[i++], base);
		if (rc)
			return rc;
	}
	rc = tail_parse(p, d, rest, argc - i, argv + i, base, &given);
	if (rc)
		return rc;
	if (d->keep & SCN_KEEP_GIVEN)
		scn_field_put(base, d->given_off,
			      d->given_size ? d->given_size : 8, given);
	return d->done ? d->done(p, base) : 0;
}

static void arg_print(FILE *f, const struct imc_topo *t,
		      const struct scn_arg *a, const void *base)
{
	const struct scn_port_arg *pa = scn_cat(base, a->offset);
	char gid[IMC_GID_STRLEN];
	uint64_t v;

	switch (a->kind) {
	case SCN_ARG_WORD:
		v = a->size ? scn_field_at(base, a->offset, a->size) : 0;
		if (a->flags & SCN_ARG_OPTIONAL) {
			if (v)
				fprintf(f, " %s", a->names[v - 1]);
		} else {
			fprintf(f, " %s", a->names[v]);
		}
		return;
	case SCN_ARG_HOST_ALL:
		if (pa->node == IMC_TOPO_NONE) {
			fputs(" all", f);
			return;
		}
		/* fallthrough */
	case SCN_ARG_PORT:
	case SCN_ARG_HOST:
		if (pa->node != IMC_TOPO_NONE)
			scn_print_port_arg(f, t, pa);
		return;
	case SCN_ARG_HOSTS:
		if (((const struct imc_scn_hosts *)scn_cat(base, a->offset))->n)
			imc_scn_print_hosts(f, t, scn_cat(base, a->offset));
		return;
	case SCN_ARG_UINT:
		break;
	case SCN_ARG_MGID:
		imc_gid_format(scn_cat(base, a->offset), gid);
		fprintf(f, " %s", gid);
		return;
	case SCN_ARG_NAMED_MGID:
		scn_mgid_print(f, scn_cat(base, a->offset));
		return;
	default:
		if (a->print)
			a->print(f, t, a, base);
		return;
	}
	for (unsigned i = 0, n = (a->flags & SCN_ARG_REST) ?
	     *(const unsigned *)scn_cat(base, a->count_off) : 1; i < n; i++) {
		v = scn_field_at(base, a->offset + i * a->size, a->size);
		if (a->flags & SCN_ARG_HEX)
			fprintf(f, " 0x%0*" PRIx64, 2 * a->size, v);
		else
			fprintf(f, " %" PRIu64, v);
	}
}

void scn_desc_print(FILE *f, const struct imc_topo *t,
		    const struct scn_desc *d, const void *data)
{
	uint64_t given = 0;

	if (d->keep & SCN_KEEP_GIVEN)
		given = scn_field_at(data, d->given_off,
				     d->given_size ? d->given_size : 8);
	given |= d->print_always;
	for (unsigned k = 0; k < d->narg; k++) {
		if ((d->arg[k].flags & SCN_ARG_REST) && d->opts_first)
			scn_opts_print(f, t, d->opts, scn_cat(data, d->opts_off),
				       given);
		arg_print(f, t, &d->arg[k], data);
	}
	if (d->opts && !(d->opts_first && d->narg &&
			 (d->arg[d->narg - 1].flags & SCN_ARG_REST)))
		scn_opts_print(f, t, d->opts, scn_cat(data, d->opts_off),
			       given);
}

void scn_desc_free(const struct scn_desc *d, void *data)
{
	if (!data)
		return;
	for (unsigned k = 0; k < d->narg; k++) {
		const struct scn_arg *a = &d->arg[k];

		if (a->kind == SCN_ARG_HOSTS)
			imc_scn_hosts_free(scn_at(data, a->offset));
		else if (a->kind == SCN_ARG_CUSTOM && a->free)
			a->free(a, data);
	}
	free(data);
}

static const struct scn_desc bare_desc = { .usage = "expected no argument" };

int scn_bare_parse(struct imc_scn_parser *p, unsigned argc,
		   const char *const *argv, void **data)
{
	return scn_desc_parse(p, &bare_desc, argc, argv, data);
}

void scn_bare_print(FILE *f, const struct imc_topo *t, const void *data)
{
	scn_desc_print(f, t, &bare_desc, data);
}

void scn_bare_free(void *data)
{
	scn_desc_free(&bare_desc, data);
}

int scn_arg_unknown_parse(struct imc_scn_parser *p, const struct scn_arg *a,
			  const char *word, void *base)
{
	(void)base;
	return imc_scn_parse_error(p, "unknown option '%s'; %s", word,
				   a->help);
}
