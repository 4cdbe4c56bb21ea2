/* Shared fixture of the scenario tests: parse a scenario text (failing
 * the test with the parser's message), print it canonically, expect an
 * exact parse error, run it with nothing left alive, and the text checks
 * the tests make on printed output.
 *
 * Include after <cmocka.h>. A test that parses against its own topology
 * defines SCENARIO_FIXTURE_OWN_PARSE and builds its parse() and
 * expect_error() on scn_fx_parse() and scn_fx_expect_error(). The
 * helpers are static inline so a test using only some of them still
 * builds under -Werror. */
#ifndef IMC_TESTS_SCENARIO_FIXTURE_H
#define IMC_TESTS_SCENARIO_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/scenario.h"

/* Text read by these checks comes from open_memstream(&buf, ...); gcc 12
 * at -O3 cannot tell the stream's buffer from &buf itself and warns that
 * the string may dangle once the helper returns. It is heap memory. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif

/* Appends a printf-formatted note to the NUL-terminated log (size bytes
 * in all): the order in which a test's hooks ran, checked as one
 * string. A note past the end is cut. */
static inline void scn_fx_note(char *log, size_t size, const char *fmt, ...)
{
	size_t n = strlen(log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(log + n, size - n, fmt, ap);
	va_end(ap);
}

static inline struct imc_scenario *
scn_fx_parse(const char *text, const struct imc_scenario_parse_opts *o)
{
	struct imc_scenario *s = NULL;
	char err[512];
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", o, &s, err,
				    sizeof(err));

	if (rc)
		fail_msg("parse failed (%d): %s", rc, err);
	return s;
}

/* Parses text and checks that it fails with exactly the message want. */
static inline void scn_fx_expect_error(const char *text,
				       const struct imc_scenario_parse_opts *o,
				       const char *want)
{
	struct imc_scenario *s = NULL;
	char err[512];
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", o, &s, err,
				    sizeof(err));

	if (rc >= 0)
		fail_msg("parsed, expected error '%s' for:\n%s", want, text);
	assert_null(s);
	if (strcmp(err, want))
		fail_msg("error\n  got  '%s'\n  want '%s'", err, want);
}

#ifndef SCENARIO_FIXTURE_OWN_PARSE
static inline struct imc_scenario *parse(const char *text)
{
	return scn_fx_parse(text, NULL);
}

static inline void expect_error(const char *text, const char *want)
{
	scn_fx_expect_error(text, NULL, want);
}
#endif

/* The canonical print of s; the caller frees it. */
static inline char *print(const struct imc_scenario *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	imc_scenario_print(s, f);
	fclose(f);
	return buf;
}

static inline void run_ok(const struct imc_scenario *s,
			  const struct imc_scenario_run_opts *o,
			  struct imc_scenario_result *r)
{
	char err[512];
	int rc = imc_scenario_run(s, o, r, err, sizeof(err));

	if (rc)
		fail_msg("run failed (%d): %s", rc, err);
	assert_int_equal(r->leftover, 0);
}

/* Every check passed; prints the ones that did not. */
static inline void all_pass(const struct imc_scenario_result *r)
{
	for (unsigned i = 0; i < r->nchecks; i++)
		if (r->checks[i].state != IMC_SCN_CHECK_PASS)
			print_error("line %u: %s: observed %s\n",
				    r->checks[i].line, r->checks[i].text,
				    r->checks[i].observed_str);
	assert_int_equal(r->nfailed, 0);
	assert_int_equal(r->nskipped, 0);
	assert_int_equal(r->npassed, r->nchecks);
}

static inline void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

static inline unsigned count_of(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

#endif
