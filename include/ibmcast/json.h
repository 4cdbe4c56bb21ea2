/* A typed JSON writer (RFC 8259): objects, arrays, keys and scalars
 * written to a stdio stream, with the commas, quoting and escaping done
 * in one place.
 *
 * Layout: indent 0 writes everything on one line; IMC_JSON_SPACED then
 * puts a space after each ':' and ','. indent N > 0 puts each member of a
 * container on a line of its own, N spaces deeper per level, except in
 * containers opened with imc_json_*_begin_line(), which stay on one line
 * (", " and ": " between their members) with all they contain, except
 * containers opened inside them with imc_json_*_begin_lines(): those put
 * each member on a line again. Only containers that are not on one line
 * count as a level of indentation.
 *
 * Errors stick: the first one (-EINVAL for a value where a key is due or a
 * key in an array, -E2BIG past IMC_JSON_DEPTH_MAX levels, -EDOM for a
 * double that is NaN or infinite, -EIO when the stream fails) is kept,
 * every later call returns it and writes nothing, and imc_json_finish()
 * reports it.
 */
#ifndef IBMCAST_JSON_H
#define IBMCAST_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/gid.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_JSON_DEPTH_MAX = 32,
	IMC_JSON_SPACED = 1u << 0,   /* ", " and ": " on one-line output */
	IMC_JSON_G = 0xffffu,        /* imc_json_double(): "%g" */
};

struct imc_json_level {
	bool object;
	bool line;          /* this container stays on one line */
	bool keyed;         /* an object's key is written, its value due */
	unsigned n;         /* members written */
};

struct imc_json {
	FILE *f;
	unsigned indent;
	unsigned flags;
	unsigned base;      /* columns already taken at depth 0 */
	unsigned depth;
	bool done;          /* the top-level value is written */
	int err;
	struct imc_json_level lv[IMC_JSON_DEPTH_MAX];
};

/* Starts a document on f. base is the column the document starts at
 * (a value nested in text written by hand) and counts for indentation. */
void imc_json_init(struct imc_json *j, FILE *f, unsigned indent,
		   unsigned flags);
void imc_json_init_at(struct imc_json *j, FILE *f, unsigned indent,
		      unsigned flags, unsigned base);

int imc_json_object_begin(struct imc_json *j);
int imc_json_object_begin_line(struct imc_json *j);
int imc_json_object_end(struct imc_json *j);
int imc_json_array_begin(struct imc_json *j);
int imc_json_array_begin_line(struct imc_json *j);
int imc_json_array_begin_lines(struct imc_json *j);
int imc_json_array_end(struct imc_json *j);

int imc_json_key(struct imc_json *j, const char *key);
int imc_json_string(struct imc_json *j, const char *s);
int imc_json_u64(struct imc_json *j, uint64_t v);
int imc_json_i64(struct imc_json *j, int64_t v);
/* prec digits after the point ("%.*f"), or with IMC_JSON_G the shortest
 * of "%g" (six significant digits). */
int imc_json_double(struct imc_json *j, double v, unsigned prec);
int imc_json_bool(struct imc_json *j, bool v);
int imc_json_null(struct imc_json *j);
/* A GID as a string in the text of RFC 5952. */
int imc_json_gid(struct imc_json *j, const struct imc_gid *g);
/* v as the string "0x" and at least width hex digits. */
int imc_json_hex(struct imc_json *j, uint64_t v, unsigned width);

/* The caller writes one complete JSON value to the stream itself, right
 * after this call (a printer of its own that takes a FILE): writes what
 * goes before a value and counts it as written. */
int imc_json_value_follows(struct imc_json *j);

/* A key and its value in one call. */
int imc_json_kv_string(struct imc_json *j, const char *key, const char *s);
int imc_json_kv_u64(struct imc_json *j, const char *key, uint64_t v);
int imc_json_kv_i64(struct imc_json *j, const char *key, int64_t v);
int imc_json_kv_double(struct imc_json *j, const char *key, double v,
		       unsigned prec);
int imc_json_kv_bool(struct imc_json *j, const char *key, bool v);
int imc_json_kv_gid(struct imc_json *j, const char *key,
		    const struct imc_gid *g);
int imc_json_kv_hex(struct imc_json *j, const char *key, uint64_t v,
		    unsigned width);

/* 0 when one complete value was written and the stream has no error,
 * else the first error (-EINVAL when containers are left open). Writes
 * nothing, not even a newline. */
int imc_json_finish(struct imc_json *j);

#ifdef __cplusplus
}
#endif
#endif
