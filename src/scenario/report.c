/* The report of a run (ibmcast/scenario.h, "the report"): a tree of
 * named values that the sections write at the end of a run, and each
 * section's text lines.
 *
 * The root is an object with one object per section (its lines hang on
 * it). Objects keep their entries in the order written, for output, and
 * an index sorted by key, made when the object is closed, for lookups by
 * path (binary search) and to refuse a key written twice.
 *
 * A writer:
 *
 *   state    event                       next
 *   IDLE     scn_report_begin()          SECTION (depth 1)
 *   SECTION  object/list                 depth + 1
 *   SECTION  end, depth > 1              depth - 1
 *   SECTION  scn_report_finish()         IDLE: kept when it wrote
 *                                        anything, else dropped
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/json.h"
#include "ibmcast/topo.h"
#include "scenario/scn.h"
#include "scenario/snaps.h"
#include "util/vec.h"

#define DEPTH_MAX 16
#define LINE_MAX_LEN 200
#define NAME_COL 13        /* text: the section's name, padded */

enum rkind { R_U64, R_STR, R_OBJ, R_LIST };

struct rnode {
	char *key;                /* NULL in a list and for the root */
	enum rkind kind;
	uint64_t u;
	char *s;
	struct rnode **kid;       /* in the order written */
	size_t n, cap;
	struct rnode **by_key;    /* R_OBJ, once closed: sorted by key */
	char **line;              /* a section's text */
	size_t nlines, lcap;
};

enum wstate { W_IDLE, W_SECTION };

struct imc_scn_report {
	struct rnode root;
	enum wstate state;
	struct rnode *stack[DEPTH_MAX];
	unsigned depth;
	int err;
};

static void node_free(struct rnode *n)
{
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->kid[i]);
		free(n->kid[i]);
	}
	for (size_t i = 0; i < n->nlines; i++)
		free(n->line[i]);
	free(n->kid);
	free(n->by_key);
	free(n->line);
	free(n->key);
	free(n->s);
}

int scn_report_create(struct imc_scn_report **out)
{
	struct imc_scn_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return -ENOMEM;
	rep->root.kind = R_OBJ;
	*out = rep;
	return 0;
}

void scn_report_free(struct imc_scn_report *rep)
{
	if (!rep)
		return;
	node_free(&rep->root);
	free(rep);
}

static void fail(struct imc_scn_report *rep, int err)
{
	if (!rep->err)
		rep->err = err;
}

static bool key_ok(const char *k)
{
	if (!k || !(*k >= 'a' && *k <= 'z'))
		return false;
	for (k++; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
		      *k == '_'))
			return false;
	return true;
}

static int key_cmp(const void *a, const void *b)
{
	const struct rnode *x = *(const struct rnode *const *)a;
	const struct rnode *y = *(const struct rnode *const *)b;

	return strcmp(x->key, y->key);
}

/* The index of a closed object; -EEXIST for a key written twice. */
static int index_keys(struct rnode *o)
{
	if (!o->n)
		return 0;
	o->by_key = malloc(o->n * sizeof(*o->by_key));
	if (!o->by_key)
		return -ENOMEM;
	memcpy(o->by_key, o->kid, o->n * sizeof(*o->kid));
	qsort(o->by_key, o->n, sizeof(*o->by_key), key_cmp);
	for (size_t i = 1; i < o->n; i++)
		if (!strcmp(o->by_key[i - 1]->key, o->by_key[i]->key))
			return -EEXIST;
	return 0;
}

struct keyref {
	const char *s;
	size_t len;
};

static int keyref_cmp(const void *key, const void *e)
{
	const struct keyref *k = key;
	const char *x = (*(const struct rnode *const *)e)->key;
	int c = strncmp(k->s, x, k->len);

	return c ? c : x[k->len] ? -1 : 0;
}

/* The entry of the first len bytes of key in a closed object, or NULL. */
static struct rnode *find_key(const struct rnode *o, const char *key,
			      size_t len)
{
	struct keyref k = { key, len };
	long i = o->by_key ? imc_vec_bsearch(o->by_key, o->n, sizeof(*o->by_key),
					     &k, keyref_cmp) : -1;

	return i >= 0 ? o->by_key[i] : NULL;
}

/* A new node of p, or NULL (out of memory). */
static struct rnode *add_kid(struct rnode *p, const char *key,
			     enum rkind kind)
{
	struct rnode *n = calloc(1, sizeof(*n));

	if (!n || (key && !(n->key = strdup(key))) ||
	    IMC_VEC_RESERVE(&p->kid, &p->cap, p->n + 1)) {
		if (n)
			free(n->key);
		free(n);
		return NULL;
	}
	n->kind = kind;
	p->kid[p->n++] = n;
	return n;
}

/* A new value in the current container, or NULL (the error kept). */
static struct rnode *put(struct imc_scn_report *rep, const char *key,
			 enum rkind kind)
{
	struct rnode *p, *n;

	if (rep->state != W_SECTION) {
		fail(rep, -EINVAL);
		return NULL;
	}
	p = rep->stack[rep->depth - 1];
	if (p->kind == R_OBJ ? !key_ok(key) : key != NULL) {
		fail(rep, -EINVAL);
		return NULL;
	}
	n = add_kid(p, key, kind);
	if (!n)
		fail(rep, -ENOMEM);
	return n;
}

void imc_scn_report_u64(struct imc_scn_report *rep, const char *key,
			uint64_t v)
{
	struct rnode *n = put(rep, key, R_U64);

	if (n)
		n->u = v;
}

void imc_scn_report_str(struct imc_scn_report *rep, const char *key,
			const char *s)
{
	struct rnode *n = put(rep, key, R_STR);

	if (n && !(n->s = strdup(s ? s : "")))
		fail(rep, -ENOMEM);
}

static void open_container(struct imc_scn_report *rep, const char *key,
			   enum rkind kind)
{
	struct rnode *n;

	if (rep->depth == DEPTH_MAX) {
		fail(rep, -E2BIG);
		return;
	}
	n = put(rep, key, kind);
	/* On error the writer carries on at this depth; the section is
	 * refused at its end anyway. */
	if (n)
		rep->stack[rep->depth++] = n;
}

void imc_scn_report_object(struct imc_scn_report *rep, const char *key)
{
	open_container(rep, key, R_OBJ);
}

void imc_scn_report_list(struct imc_scn_report *rep, const char *key)
{
	open_container(rep, key, R_LIST);
}

void imc_scn_report_end(struct imc_scn_report *rep)
{
	struct rnode *n;
	int rc;

	if (rep->state != W_SECTION || rep->depth <= 1) {
		fail(rep, -EINVAL);
		return;
	}
	n = rep->stack[--rep->depth];
	if (n->kind == R_OBJ && (rc = index_keys(n)))
		fail(rep, rc);
}

void imc_scn_report_line(struct imc_scn_report *rep, const char *fmt, ...)
{
	struct rnode *sec;
	char buf[LINE_MAX_LEN + 1];
	va_list ap;

	if (rep->state != W_SECTION) {
		fail(rep, -EINVAL);
		return;
	}
	sec = rep->stack[0];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (IMC_VEC_RESERVE(&sec->line, &sec->lcap, sec->nlines + 1) ||
	    !(sec->line[sec->nlines] = strdup(buf))) {
		fail(rep, -ENOMEM);
		return;
	}
	sec->nlines++;
}

int scn_report_begin(struct imc_scn_report *rep, const char *name)
{
	struct rnode *n;

	if (rep->state != W_IDLE || find_key(&rep->root, name, strlen(name)))
		return -EINVAL;
	n = add_kid(&rep->root, name, R_OBJ);
	if (!n)
		return -ENOMEM;
	rep->state = W_SECTION;
	rep->stack[0] = n;
	rep->depth = 1;
	rep->err = 0;
	return 0;
}

int scn_report_finish(struct imc_scn_report *rep)
{
	struct rnode *sec = rep->stack[0];
	int rc = rep->err;

	if (rep->state != W_SECTION)
		return -EINVAL;
	if (!rc && rep->depth != 1)
		rc = -EINVAL;     /* an object or list left open */
	if (!rc)
		rc = index_keys(sec);
	rep->state = W_IDLE;
	rep->depth = 0;
	if (!rc && (sec->n || sec->nlines)) {
		free(rep->root.by_key);
		rep->root.by_key = NULL;
		return index_keys(&rep->root);
	}
	/* Nothing written (the module was not used), or refused. */
	rep->root.n--;
	node_free(sec);
	free(sec);
	free(rep->root.by_key);
	rep->root.by_key = NULL;
	return rc ? rc : index_keys(&rep->root);
}

/* ------------------------------------------------------------------ */
/* Reading */

static const struct rnode *lookup(const struct imc_scenario_result *r,
				  const char *path)
{
	const struct rnode *n;

	if (!r || !r->report || !path)
		return NULL;
	n = &r->report->root;
	while (n) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);

		if (n->kind == R_OBJ) {
			n = find_key(n, path, len);
		} else if (n->kind == R_LIST) {
			char *end;
			unsigned long i;

			if (!len || path[0] < '0' || path[0] > '9')
				return NULL;
			i = strtoul(path, &end, 10);
			if ((size_t)(end - path) != len || i >= n->n)
				return NULL;
			n = n->kid[i];
		} else {
			return NULL;
		}
		if (!dot)
			return n;
		path = dot + 1;
	}
	return NULL;
}

int imc_scenario_report_u64(const struct imc_scenario_result *r,
			    const char *path, uint64_t *out)
{
	const struct rnode *n = lookup(r, path);

	if (!n)
		return -ENOENT;
	if (n->kind != R_U64)
		return -EINVAL;
	*out = n->u;
	return 0;
}

const char *imc_scenario_report_str(const struct imc_scenario_result *r,
				    const char *path)
{
	const struct rnode *n = lookup(r, path);

	return n && n->kind == R_STR ? n->s : NULL;
}

size_t imc_scenario_report_len(const struct imc_scenario_result *r,
			       const char *path)
{
	const struct rnode *n = lookup(r, path);

	return n && (n->kind == R_OBJ || n->kind == R_LIST) ? n->n : 0;
}

/* ------------------------------------------------------------------ */
/* Printing */

static bool flat(const struct rnode *n)
{
	for (size_t i = 0; i < n->n; i++)
		if (n->kid[i]->kind == R_OBJ || n->kid[i]->kind == R_LIST)
			return false;
	return true;
}

/* A container of scalars on one line; others one entry a line, two
 * spaces deeper per level. */
static void json_node(struct imc_json *j, const struct rnode *n)
{
	bool one = flat(n);

	if (n->kind == R_U64) {
		imc_json_u64(j, n->u);
		return;
	}
	if (n->kind == R_STR) {
		imc_json_string(j, n->s);
		return;
	}
	if (n->kind == R_OBJ)
		one ? imc_json_object_begin_line(j) : imc_json_object_begin(j);
	else
		one ? imc_json_array_begin_line(j) : imc_json_array_begin(j);
	for (size_t i = 0; i < n->n; i++) {
		if (n->kid[i]->key)
			imc_json_key(j, n->kid[i]->key);
		json_node(j, n->kid[i]);
	}
	if (n->kind == R_OBJ)
		imc_json_object_end(j);
	else
		imc_json_array_end(j);
}

int imc_scenario_report_print(const struct imc_scenario_result *r, FILE *f,
			      bool json)
{
	const struct rnode *root;

	if (!r || !f)
		return -EINVAL;
	if (!r->report) {
		if (json)
			fputs("{}", f);
		return ferror(f) ? -EIO : 0;
	}
	root = &r->report->root;
	if (json) {
		/* Laid out as the value of a key of a top-level object. */
		struct imc_json j;

		imc_json_init_at(&j, f, 2, 0, 2);
		json_node(&j, root);
		return imc_json_finish(&j);
	}
	fputs("report\n", f);
	for (size_t i = 0; i < root->n; i++) {
		const struct rnode *sec = root->kid[i];

		for (size_t k = 0; k < sec->nlines; k++)
			fprintf(f, "  %-*s %s\n", NAME_COL - 1,
				k ? "" : sec->key, sec->line[k]);
		if (!sec->nlines)
			fprintf(f, "  %s\n", sec->key);
	}
	return ferror(f) ? -EIO : 0;
}

int scn_snaps_add(struct scn_snaps *s, const void *snap)
{
	size_t sz = s->k->size;

	if (imc_vec_reserve(&s->v, &s->cap, (s->n + 1) * sz, 1))
		return -ENOMEM;
	memcpy(s->v + s->n++ * sz, snap, sz);
	return 0;
}

const void *scn_snaps_last(const struct scn_snaps *s)
{
	return s->n ? s->v + (s->n - 1) * s->k->size : NULL;
}

void scn_snaps_clear(struct scn_snaps *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->k->fini(s->v + i * s->k->size);
	s->n = 0;
}

void scn_snaps_fini(struct scn_snaps *s)
{
	scn_snaps_clear(s);
	free(s->v);
	s->v = NULL;
	s->cap = 0;
}

void scn_snap_text_head(FILE *f, const char *what, const char *verb,
			imc_time_t at, unsigned line)
{
	char t[32];

	imc_scn_format_time(at, t, sizeof(t));
	if (line)
		fprintf(f, "%s at %s (%s, line %u):", what, t, verb, line);
	else
		fprintf(f, "%s at the end of the run (%s):", what, t);
}

void scn_snap_json_head(struct imc_json *j, imc_time_t at, unsigned line)
{
	char t[32];

	imc_scn_format_time(at, t, sizeof(t));
	imc_json_object_begin_line(j);
	imc_json_kv_u64(j, "at_ns", at);
	imc_json_kv_string(j, "at", t);
	if (line)
		imc_json_kv_u64(j, "line", line);
	else
		imc_json_kv_bool(j, "end", true);
}

/* A JSON array laid out as the value of a key of a top-level object. */
int scn_snaps_write(const struct scn_snaps *s, FILE *f, bool json)
{
	size_t sz = s->k->size;
	struct imc_json j;

	if (!json) {
		for (size_t i = 0; i < s->n; i++)
			s->k->text(f, s->v + i * sz);
		return ferror(f) ? -EIO : 0;
	}
	imc_json_init_at(&j, f, 2, 0, 2);
	imc_json_array_begin(&j);
	for (size_t i = 0; i < s->n; i++)
		s->k->to_json(&j, s->v + i * sz);
	imc_json_array_end(&j);
	return imc_json_finish(&j);
}
