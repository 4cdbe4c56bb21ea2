/* The typed JSON writer of ibmcast/json.h. Strings are escaped as RFC 8259
 * section 7 asks: quote and backslash with a backslash, the control
 * characters U+0000..U+001F (and DEL, harmless to escape) as \u00XX. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ibmcast/json.h"

void imc_json_init_at(struct imc_json *j, FILE *f, unsigned indent,
		      unsigned flags, unsigned base)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->indent = indent;
	j->flags = flags;
	j->base = base;
	if (!f)
		j->err = -EINVAL;
}

void imc_json_init(struct imc_json *j, FILE *f, unsigned indent,
		   unsigned flags)
{
	imc_json_init_at(j, f, indent, flags, 0);
}

static int check_io(struct imc_json *j)
{
	if (!j->err && ferror(j->f))
		j->err = -EIO;
	return j->err;
}

static struct imc_json_level *top(struct imc_json *j)
{
	return j->depth ? &j->lv[j->depth - 1] : NULL;
}

static bool multiline(const struct imc_json *j, const struct imc_json_level *l)
{
	return j->indent && !l->line;
}

/* A new line indented by the multi-line containers among the outer n
 * levels: one-line containers add no indentation of their own. */
static void newline(struct imc_json *j, unsigned n)
{
	unsigned lines = 0;

	for (unsigned i = 0; i < n; i++)
		lines += !j->lv[i].line;
	fprintf(j->f, "\n%*s", (int)(j->base + lines * j->indent), "");
}

/* What goes before a member of l: a comma after the first, then a new
 * line or a space as the layout says. */
static void separate(struct imc_json *j, struct imc_json_level *l)
{
	if (l->n)
		fputc(',', j->f);
	if (multiline(j, l))
		newline(j, j->depth);
	else if (l->n && (j->indent || (j->flags & IMC_JSON_SPACED)))
		fputc(' ', j->f);
	l->n++;
}

/* Is a value due here? Writes what goes before it. */
static int value_due(struct imc_json *j)
{
	struct imc_json_level *l = top(j);

	if (j->err)
		return j->err;
	if (!l) {
		if (j->done)
			return j->err = -EINVAL;
		return 0;
	}
	if (l->object) {
		if (!l->keyed)
			return j->err = -EINVAL;
		l->keyed = false;
		return 0;
	}
	separate(j, l);
	return 0;
}

static int value_done(struct imc_json *j)
{
	if (!j->depth)
		j->done = true;
	return check_io(j);
}

enum layout { INHERIT, LINE, LINES };

static int begin(struct imc_json *j, bool object, enum layout lay)
{
	struct imc_json_level *l;
	int rc = value_due(j);

	if (rc)
		return rc;
	if (j->depth == IMC_JSON_DEPTH_MAX)
		return j->err = -E2BIG;
	l = &j->lv[j->depth++];
	memset(l, 0, sizeof(*l));
	l->object = object;
	/* A container inside a one-line container stays on that line
	 * unless asked otherwise. */
	l->line = lay == LINE ||
		  (lay == INHERIT && j->depth > 1 && j->lv[j->depth - 2].line);
	fputc(object ? '{' : '[', j->f);
	return check_io(j);
}

static int end(struct imc_json *j, bool object)
{
	struct imc_json_level *l = top(j);

	if (j->err)
		return j->err;
	if (!l || l->object != object || l->keyed)
		return j->err = -EINVAL;
	if (multiline(j, l) && l->n)
		newline(j, j->depth - 1);
	fputc(object ? '}' : ']', j->f);
	j->depth--;
	return value_done(j);
}

int imc_json_object_begin(struct imc_json *j)
{
	return begin(j, true, INHERIT);
}

int imc_json_object_begin_line(struct imc_json *j)
{
	return begin(j, true, LINE);
}

int imc_json_object_end(struct imc_json *j)
{
	return end(j, true);
}

int imc_json_array_begin(struct imc_json *j)
{
	return begin(j, false, INHERIT);
}

int imc_json_array_begin_line(struct imc_json *j)
{
	return begin(j, false, LINE);
}

int imc_json_array_begin_lines(struct imc_json *j)
{
	return begin(j, false, LINES);
}

int imc_json_array_end(struct imc_json *j)
{
	return end(j, false);
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

int imc_json_key(struct imc_json *j, const char *key)
{
	struct imc_json_level *l = top(j);

	if (j->err)
		return j->err;
	if (!key || !l || !l->object || l->keyed)
		return j->err = -EINVAL;
	separate(j, l);
	put_string(j->f, key);
	fputs(j->indent || (j->flags & IMC_JSON_SPACED) ? ": " : ":", j->f);
	l->keyed = true;
	return check_io(j);
}

int imc_json_string(struct imc_json *j, const char *s)
{
	int rc = s ? value_due(j) : (j->err ? j->err : (j->err = -EINVAL));

	if (rc)
		return rc;
	put_string(j->f, s);
	return value_done(j);
}

int imc_json_u64(struct imc_json *j, uint64_t v)
{
	int rc = value_due(j);

	if (rc)
		return rc;
	fprintf(j->f, "%" PRIu64, v);
	return value_done(j);
}

int imc_json_i64(struct imc_json *j, int64_t v)
{
	int rc = value_due(j);

	if (rc)
		return rc;
	fprintf(j->f, "%" PRId64, v);
	return value_done(j);
}

int imc_json_double(struct imc_json *j, double v, unsigned prec)
{
	int rc;

	/* RFC 8259 section 6: NaN and infinities are not numbers in JSON. */
	if (!j->err && !isfinite(v))
		j->err = -EDOM;
	rc = value_due(j);
	if (rc)
		return rc;
	if (prec == IMC_JSON_G)
		fprintf(j->f, "%g", v);
	else
		fprintf(j->f, "%.*f", (int)prec, v);
	return value_done(j);
}

int imc_json_bool(struct imc_json *j, bool v)
{
	int rc = value_due(j);

	if (rc)
		return rc;
	fputs(v ? "true" : "false", j->f);
	return value_done(j);
}

int imc_json_null(struct imc_json *j)
{
	int rc = value_due(j);

	if (rc)
		return rc;
	fputs("null", j->f);
	return value_done(j);
}

int imc_json_value_follows(struct imc_json *j)
{
	int rc = value_due(j);

	if (rc)
		return rc;
	return value_done(j);
}

int imc_json_gid(struct imc_json *j, const struct imc_gid *g)
{
	char s[IMC_GID_STRLEN];

	if (!g)
		return j->err ? j->err : (j->err = -EINVAL);
	imc_gid_format(g, s);
	return imc_json_string(j, s);
}

int imc_json_hex(struct imc_json *j, uint64_t v, unsigned width)
{
	char s[24];

	if (width > 16)
		width = 16;
	snprintf(s, sizeof(s), "0x%0*" PRIx64, (int)width, v);
	return imc_json_string(j, s);
}

int imc_json_kv_string(struct imc_json *j, const char *key, const char *s)
{
	return imc_json_key(j, key) ? j->err : imc_json_string(j, s);
}

int imc_json_kv_u64(struct imc_json *j, const char *key, uint64_t v)
{
	return imc_json_key(j, key) ? j->err : imc_json_u64(j, v);
}

int imc_json_kv_i64(struct imc_json *j, const char *key, int64_t v)
{
	return imc_json_key(j, key) ? j->err : imc_json_i64(j, v);
}

int imc_json_kv_double(struct imc_json *j, const char *key, double v,
		       unsigned prec)
{
	return imc_json_key(j, key) ? j->err : imc_json_double(j, v, prec);
}

int imc_json_kv_bool(struct imc_json *j, const char *key, bool v)
{
	return imc_json_key(j, key) ? j->err : imc_json_bool(j, v);
}

int imc_json_kv_gid(struct imc_json *j, const char *key,
		    const struct imc_gid *g)
{
	return imc_json_key(j, key) ? j->err : imc_json_gid(j, g);
}

int imc_json_kv_hex(struct imc_json *j, const char *key, uint64_t v,
		    unsigned width)
{
	return imc_json_key(j, key) ? j->err : imc_json_hex(j, v, width);
}

int imc_json_finish(struct imc_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth || !j->done)
		return j->err = -EINVAL;
	if (fflush(j->f) == EOF)
		j->err = -EIO;
	return check_io(j);
}
