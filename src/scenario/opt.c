/* Option tables: the key=value words of verbs, settings and subjects,
 * each described once (struct scn_opt) and parsed, checked and printed
 * back by the functions here, so that print(parse(x)) parses to the same
 * values and every option reports errors in one form. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/desc.h"

/* Appends word i of n (then suffix) to the list "a, b or c" in buf of
 * len bytes, *at long so far. */
static void list_add(char *buf, size_t len, size_t *at, unsigned i,
		     unsigned n, const char *word, const char *suffix)
{
	int w = *at >= len ? -1 :
		snprintf(buf + *at, len - *at, "%s%s%s",
			 !i ? "" : i + 1 == n ? " or " : ", ", word, suffix);

	if (w > 0)
		*at += (size_t)w;
}

/* The valid words of a table, "a=, b= or c", for unknown-key errors. */
static void keys_list(const struct scn_optset *set, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < set->n; i++)
		list_add(buf, len, &at, i, set->n, set->opt[i].key,
			 set->opt[i].type == SCN_OPT_FLAG ? "" : "=");
}

static int enum_parse(struct imc_scn_parser *p, const struct scn_opt *o,
		      const char *v, uint64_t *x)
{
	char list[256] = "";
	size_t at = 0;
	unsigned n = 0;

	for (; o->names[n]; n++)
		if (!strcmp(o->names[n], v)) {
			*x = n;
			return 0;
		}
	for (unsigned i = 0; i < n; i++)
		list_add(list, sizeof(list), &at, i, n, o->names[i], "");
	return imc_scn_parse_error(p, "%s: expected %s, got '%s'", o->key,
				   list, v);
}

/* A value under the option's minimum: its help text, or the bound. */
static int below_min(struct imc_scn_parser *p, const struct scn_opt *o,
		     const char *v, uint64_t x)
{
	if (x >= o->min)
		return 0;
	if (o->help && (o->flags & SCN_OPT_GOT))
		return imc_scn_parse_error(p, "%s: %s, got '%s'", o->key,
					   o->help, v);
	if (o->help)
		return imc_scn_parse_error(p, "%s: %s", o->key, o->help);
	return imc_scn_parse_error(p, "%s: expected at least %" PRIu64,
				   o->key, o->min);
}

static int uint_parse(struct imc_scn_parser *p, const struct scn_opt *o,
		      const char *v, uint64_t *x)
{
	uint64_t max = o->max ? o->max :
		       o->size >= 8 ? UINT64_MAX : (1ull << (8 * o->size)) - 1;
	int rc;

	if (o->type == SCN_OPT_BPS && !strcmp(v, "auto")) {
		*x = 0;
		return 0;
	}
	if (o->type == SCN_OPT_BPS)
		rc = imc_scn_parse_bps(p, o->key, v, x);
	else
		rc = imc_scn_parse_uint(p, o->key, v, max, x);
	return rc ? rc : below_min(p, o, v, *x);
}

int scn_opt_value_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			const char *v, void *base)
{
	void *dst = scn_at(base, o->offset);
	uint64_t x = 0;
	int rc;

	switch (o->type) {
	case SCN_OPT_UINT:
	case SCN_OPT_HEX:
	case SCN_OPT_BPS:
		rc = uint_parse(p, o, v, &x);
		break;
	case SCN_OPT_ENUM:
		rc = enum_parse(p, o, v, &x);
		break;
	case SCN_OPT_TIME:
		rc = imc_scn_parse_time(p, o->key, v, dst);
		return rc ? rc : below_min(p, o, v, *(imc_time_t *)dst);
	case SCN_OPT_PROB:
		return imc_scn_parse_prob(p, o->key, v, dst);
	case SCN_OPT_FLAG:
		*(bool *)dst = true;
		return 0;
	case SCN_OPT_HOST:
		return imc_scn_parse_host(p, v, &((struct scn_port_arg *)dst)->node,
					  &((struct scn_port_arg *)dst)->port);
	case SCN_OPT_BOOL:
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return imc_scn_parse_error(p,
				"%s: expected yes or no, got '%s'", o->key, v);
		*(bool *)dst = !strcmp(v, "yes");
		return 0;
	default:
		return o->parse(p, o, v, dst);
	}
	if (!rc)
		scn_field_put(dst, 0, o->size, x);
	return rc;
}

const struct scn_opt *scn_opt_find(const struct scn_optset *set,
				   const char *word, const char **v,
				   unsigned *idx)
{
	for (unsigned i = 0; set && i < set->n; i++) {
		const struct scn_opt *o = &set->opt[i];
		bool hit = o->type == SCN_OPT_FLAG ? !strcmp(word, o->key) :
			   imc_scn_kv(word, o->key, v);

		if (hit) {
			*idx = i;
			return o;
		}
	}
	return NULL;
}

int scn_opt_word(struct imc_scn_parser *p, const struct scn_optset *set,
		 const char *word, void *base, uint64_t *given, bool *matched)
{
	const struct scn_opt *o;
	const char *v = NULL;
	unsigned i;

	o = scn_opt_find(set, word, &v, &i);
	*matched = o != NULL;
	if (!o)
		return 0;
	if (*given & (1ull << i))
		return imc_scn_parse_error(p, "%s%s given twice on this line",
					   o->key,
					   o->type == SCN_OPT_FLAG ? "" : "=");
	*given |= 1ull << i;
	return scn_opt_value_parse(p, o, v, base);
}

/* The error for a word no option of set takes. */
static int unknown(struct imc_scn_parser *p, const struct scn_optset *set,
		   const char *word)
{
	char list[512];

	if (set->usage)
		return imc_scn_parse_error(p, "%s", set->usage);
	keys_list(set, list, sizeof(list));
	return imc_scn_parse_error(p, "expected %s, got '%s'", list, word);
}

int scn_opts_parse(struct imc_scn_parser *p, const struct scn_optset *set,
		   unsigned argc, const char *const *argv, void *base,
		   uint64_t *given)
{
	const char *first[64] = { NULL };
	uint64_t mask = 0;

	if (set->n > 64)
		return -EINVAL;   /* the given mask has 64 bits */
	for (unsigned i = 0; i < argc; i++) {
		const struct scn_opt *o;
		const char *v = NULL;
		unsigned k;
		int rc;

		o = scn_opt_find(set, argv[i], &v, &k);
		if (!o)
			return unknown(p, set, argv[i]);
		if (mask & (1ull << k))
			return imc_scn_parse_error(p,
				"%s%s given twice on this line: '%s' and '%s'",
				o->key, o->type == SCN_OPT_FLAG ? "" : "=",
				first[k], argv[i]);
		mask |= 1ull << k;
		first[k] = argv[i];
		rc = scn_opt_value_parse(p, o, v, base);
		if (rc)
			return rc;
	}
	for (unsigned k = 0; k < set->n; k++)
		if ((set->opt[k].flags & SCN_OPT_REQUIRED) &&
		    !(mask & (1ull << k)))
			return imc_scn_parse_error(p, "%s= is required",
						   set->opt[k].key);
	if (given)
		*given = mask;
	return 0;
}

void scn_opts_print(FILE *f, const struct imc_topo *t,
		    const struct scn_optset *set, const void *base,
		    uint64_t given)
{
	for (unsigned k = 0; k < set->n; k++) {
		const struct scn_opt *o = &set->opt[k];
		const void *src = scn_cat(base, o->offset);
		uint64_t x;

		if (!(given & (1ull << k)))
			continue;
		if (o->type == SCN_OPT_FLAG) {
			if (*(const bool *)src)
				fprintf(f, " %s", o->key);
			continue;
		}
		fprintf(f, " %s=", o->key);
		switch (o->type) {
		case SCN_OPT_UINT:
			fprintf(f, "%" PRIu64, scn_field_at(src, 0, o->size));
			break;
		case SCN_OPT_HEX:
			fprintf(f, "0x%0*" PRIx64, 2 * o->size,
				scn_field_at(src, 0, o->size));
			break;
		case SCN_OPT_BPS:
			x = scn_field_at(src, 0, o->size);
			if (x)
				fprintf(f, "%" PRIu64 "bps", x);
			else
				fputs("auto", f);
			break;
		case SCN_OPT_ENUM:
			fputs(o->names[scn_field_at(src, 0, o->size)], f);
			break;
		case SCN_OPT_TIME:
			imc_scn_print_time(f, *(const imc_time_t *)src);
			break;
		case SCN_OPT_PROB:
			imc_scn_print_prob(f, *(const double *)src);
			break;
		case SCN_OPT_BOOL:
			fputs(*(const bool *)src ? "yes" : "no", f);
			break;
		case SCN_OPT_HOST:
			imc_scn_print_port(f, t, ((const struct scn_port_arg *)src)->node,
					   ((const struct scn_port_arg *)src)->port);
			break;
		default:
			o->print(f, o, src);
			break;
		}
	}
}

uint64_t scn_opt_bit(const struct scn_optset *set, const char *key)
{
	for (unsigned k = 0; k < set->n; k++)
		if (!strcmp(set->opt[k].key, key))
			return 1ull << k;
	return 0;
}

/* The bytes of an option's field. */
static size_t opt_size(const struct scn_opt *o)
{
	switch (o->type) {
	case SCN_OPT_TIME: return sizeof(imc_time_t);
	case SCN_OPT_PROB: return sizeof(double);
	case SCN_OPT_FLAG:
	case SCN_OPT_BOOL: return sizeof(bool);
	case SCN_OPT_HOST: return sizeof(struct scn_port_arg);
	default: return o->size;
	}
}

void scn_opts_copy(const struct scn_optset *set, void *dst, const void *src,
		   uint64_t given)
{
	for (unsigned k = 0; k < set->n; k++)
		if (given & (1ull << k))
			memcpy(scn_at(dst, set->opt[k].offset),
			       scn_cat(src, set->opt[k].offset),
			       opt_size(&set->opt[k]));
}
