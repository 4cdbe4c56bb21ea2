/* Scenario words and values: the tokenizer, numbers, times, rates and
 * probabilities, and their canonical printed forms. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scn.h"
#include "util/text.h"

void scn_words_free(struct scn_words *w)
{
	free(w->argv);
	free(w->start);
	free(w->end);
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

/* Words are separated by blanks; '#' outside quotes starts a comment;
 * "..." quotes a span (no escapes: names never hold '"'). */
int scn_tokenize(const char *line, size_t len, struct scn_words *w,
		 const char **why)
{
	size_t i = 0, o = 0, cap = len / 2 + 2;

	memset(w, 0, sizeof(*w));
	w->buf = malloc(len + 1);
	w->argv = malloc(cap * sizeof(*w->argv));
	w->start = malloc(cap * sizeof(*w->start));
	w->end = malloc(cap * sizeof(*w->end));
	if (!w->buf || !w->argv || !w->start || !w->end) {
		scn_words_free(w);
		*why = "out of memory";
		return -ENOMEM;
	}
	for (size_t k = 0; k < len; k++) {
		unsigned char ch = (unsigned char)line[k];

		if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f) {
			scn_words_free(w);
			*why = "unexpected control character";
			return -EINVAL;
		}
	}
	for (;;) {
		bool quoted = false;

		while (i < len && (line[i] == ' ' || line[i] == '\t' ||
				   line[i] == '\r'))
			i++;
		if (i == len || line[i] == '#')
			break;
		/* A word of n bytes needs at most n + 1 bytes of buf, and
		 * there are at most len / 2 + 1 words. */
		w->argv[w->argc] = w->buf + o;
		w->start[w->argc] = i;
		while (i < len) {
			char c = line[i];

			if (c == '"') {
				quoted = !quoted;
				i++;
				continue;
			}
			if (!quoted && (c == ' ' || c == '\t' || c == '\r' ||
					c == '#'))
				break;
			w->buf[o++] = c;
			i++;
		}
		if (quoted) {
			scn_words_free(w);
			*why = "unterminated quote";
			return -EINVAL;
		}
		w->end[w->argc] = i;
		w->buf[o++] = '\0';
		w->argc++;
	}
	w->argv[w->argc] = NULL;
	return 0;
}

static bool needs_quotes(const char *name)
{
	if (!*name)
		return true;
	for (const char *c = name; *c; c++)
		if (*c == ' ' || *c == '\t' || *c == '#' || *c == ':' ||
		    *c == '=' || *c == '"')
			return true;
	return false;
}

void scn_print_name(FILE *f, const char *name)
{
	if (needs_quotes(name))
		fprintf(f, "\"%s\"", name);
	else
		fputs(name, f);
}

bool scn_word_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '_' && *b == '-') ||
				  (*a == '-' && *b == '_')))
			return false;
	return *a == *b;
}

static const char *const op_names[] = {
	[SCN_EQ] = "==", [SCN_NE] = "!=", [SCN_LT] = "<", [SCN_LE] = "<=",
	[SCN_GT] = ">", [SCN_GE] = ">=", [SCN_IN] = "in",
};

int scn_op_parse(const char *word)
{
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(op_names); i++)
		if (!strcmp(word, op_names[i]))
			return (int)i;
	return -1;
}

const char *scn_op_str(enum scn_op op)
{
	return (unsigned)op < IMC_ARRAY_SIZE(op_names) ? op_names[op] : "?";
}

static int bad(struct imc_scn_parser *p, int rc, const char *what,
	       const char *word, const char *expected)
{
	if (p)
		imc_scn_parse_error(p, "%s: expected %s, got '%s'", what,
				    expected, word);
	return rc;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Digits of base 10 or 16 into *v; -ERANGE past UINT64_MAX. Returns the
 * number of bytes read, 0 for no digit. */
static int digits(const char *s, unsigned base, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;
	bool over = false;

	for (;; n++) {
		int d = base == 16 ? imc_hexval(s[n]) : is_digit(s[n]) ? s[n] - '0' : -1;

		if (d < 0)
			break;
		if (x > (UINT64_MAX - (uint64_t)d) / base)
			over = true;
		else
			x = x * base + (uint64_t)d;
	}
	*v = x;
	return over ? -ERANGE : n;
}

int imc_scn_parse_uint(struct imc_scn_parser *p, const char *what,
		       const char *word, uint64_t max, uint64_t *out)
{
	const char *s = word;
	unsigned base = 10;
	uint64_t v;
	int n;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	n = digits(s, base, &v);
	if (n == -ERANGE || (n > 0 && !s[n] && v > max)) {
		if (p)
			imc_scn_parse_error(p, "%s: %s is out of range (at most %" PRIu64 ")",
					    what, word, max);
		return -ERANGE;
	}
	if (n <= 0 || s[n])
		return bad(p, -EINVAL, what, word, "a number");
	*out = v;
	return 0;
}

struct unit {
	const char *name;
	uint64_t scale;
};

/* NUMBER[.FRACTION]UNIT, exact: the value times the unit's scale must be
 * a whole number that fits 64 bits. A unit "" accepts a bare integer. */
static int scaled(const char *word, const struct unit *units, unsigned nunits,
		  uint64_t *out)
{
	const char *s = word;
	uint64_t ip, frac = 0, pow10 = 1;
	int n;

	n = digits(s, 10, &ip);
	if (n == -ERANGE)
		return -ERANGE;
	if (n == 0)
		return -EINVAL;
	s += n;
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return -EINVAL;
		for (; is_digit(*s); s++) {
			if (pow10 >= 1000000000000000000ull) {
				/* Past 18 digits only zeros keep it exact. */
				if (*s != '0')
					return -ERANGE;
				continue;
			}
			frac = frac * 10 + (uint64_t)(*s - '0');
			pow10 *= 10;
		}
	}
	for (unsigned i = 0; i < nunits; i++) {
		uint64_t scale = units[i].scale, whole, part;

		if (strcmp(s, units[i].name))
			continue;
		if (ip && scale > UINT64_MAX / ip)
			return -ERANGE;
		whole = ip * scale;
		/* frac / pow10 * scale, exactly: frac * scale must divide
		 * by pow10. Split scale to avoid overflow. */
		if (frac) {
			uint64_t g = scale, r = pow10;

			/* gcd(scale, pow10) */
			while (r) {
				uint64_t t = g % r;
				g = r;
				r = t;
			}
			if (frac > UINT64_MAX / (scale / g))
				return -ERANGE;
			part = frac * (scale / g);
			if (part % (pow10 / g))
				return -EDOM;
			part /= pow10 / g;
		} else {
			part = 0;
		}
		if (whole > UINT64_MAX - part)
			return -ERANGE;
		*out = whole + part;
		return 0;
	}
	return -EINVAL;
}

static const struct unit time_units[] = {
	{ "ns", 1 },
	{ "us", IMC_NSEC_PER_USEC },
	{ "ms", IMC_NSEC_PER_MSEC },
	{ "s", IMC_NSEC_PER_SEC },
};

int imc_scn_parse_time(struct imc_scn_parser *p, const char *what,
		       const char *word, imc_time_t *out)
{
	uint64_t v;
	int rc;

	if (!strcmp(word, "0")) {
		*out = 0;
		return 0;
	}
	rc = scaled(word, time_units, IMC_ARRAY_SIZE(time_units), &v);
	if (rc == -ERANGE || (!rc && v > IMC_TIME_LIMIT)) {
		if (p)
			imc_scn_parse_error(p,
				"%s: time %s is out of range (at most %" PRIu64 "ns, 2^62 ns or about 146 years)",
				what, word, (uint64_t)IMC_TIME_LIMIT);
		return -ERANGE;
	}
	if (rc == -EDOM)
		return bad(p, -EINVAL, what, word,
			   "a whole number of nanoseconds");
	if (rc < 0)
		return bad(p, -EINVAL, what, word,
			   "a time with a unit (ns, us, ms, s)");
	*out = v;
	return 0;
}

static const struct unit bps_units[] = {
	{ "", 1 },
	{ "bps", 1 },
	{ "Kbps", 1000ull },
	{ "Mbps", 1000000ull },
	{ "Gbps", 1000000000ull },
	{ "Tbps", 1000000000000ull },
};

int imc_scn_parse_bps(struct imc_scn_parser *p, const char *what,
		      const char *word, uint64_t *out)
{
	uint64_t v;
	int rc = scaled(word, bps_units, IMC_ARRAY_SIZE(bps_units), &v);

	if (rc == -ERANGE) {
		if (p)
			imc_scn_parse_error(p, "%s: rate %s is out of range",
					    what, word);
		return -ERANGE;
	}
	if (rc < 0)
		return bad(p, -EINVAL, what, word,
			   "a rate such as 40Gbps (bps, Kbps, Mbps, Gbps, Tbps)");
	*out = v;
	return 0;
}

#define PROB_MIN 1e-9

int imc_scn_parse_prob(struct imc_scn_parser *p, const char *what,
		       const char *word, double *out)
{
	const char *s = word;
	char num[64];
	size_t n;
	bool pct;
	double v;

	while (is_digit(*s))
		s++;
	if (s == word)
		return bad(p, -EINVAL, what, word,
			   "a probability (0.05 or 5%)");
	if (*s == '.') {
		const char *frac = ++s;

		while (is_digit(*s))
			s++;
		if (s == frac)
			return bad(p, -EINVAL, what, word,
				   "a probability (0.05 or 5%)");
	}
	pct = *s == '%';
	if (pct)
		s++;
	n = (size_t)(s - word) - pct;
	if (*s || n >= sizeof(num))
		return bad(p, -EINVAL, what, word,
			   "a probability (0.05 or 5%)");
	memcpy(num, word, n);
	num[n] = '\0';
	v = strtod(num, NULL);
	if (pct)
		v /= 100;
	if (!(v >= 0 && v <= 1)) {
		if (p)
			imc_scn_parse_error(p, "%s: probability %s is above 1",
					    what, word);
		return -ERANGE;
	}
	/* A floor keeps the printed form short and free of exponents
	 * (slack for 1e-9 written as a percentage and divided). */
	if (v != 0 && v < PROB_MIN * 0.999999) {
		if (p)
			imc_scn_parse_error(p,
				"%s: probability %s is below 0.000000001 (write 0)",
				what, word);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
	int c = memcmp(x, y, nx < ny ? nx : ny);

	if (c)
		return c;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	/* Equal keys: in line order (words are in one buffer, in order). */
	return (x > y) - (x < y);
}

int scn_words_unique(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv)
{
	const char **kv;
	unsigned n = 0;
	int rc = 0;

	for (unsigned i = 0; i < argc; i++)
		n += strchr(argv[i], '=') != NULL;
	if (n < 2)
		return 0;
	kv = malloc(n * sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	n = 0;
	for (unsigned i = 0; i < argc; i++)
		if (strchr(argv[i], '='))
			kv[n++] = argv[i];
	/* Sorted by key, a repeated key is two neighbours: O(n log n). */
	qsort(kv, n, sizeof(*kv), key_cmp);
	for (unsigned i = 1; i < n; i++) {
		size_t len = strcspn(kv[i], "=");

		if (len == strcspn(kv[i - 1], "=") &&
		    !memcmp(kv[i], kv[i - 1], len)) {
			rc = imc_scn_parse_error(p,
				"%.*s= given twice on this line: '%s' and '%s'",
				(int)len, kv[i], kv[i - 1], kv[i]);
			break;
		}
	}
	free(kv);
	return rc;
}

bool imc_scn_kv(const char *word, const char *key, const char **value)
{
	size_t n = strlen(key);

	if (strncmp(word, key, n) || word[n] != '=')
		return false;
	*value = word + n + 1;
	return true;
}

/* In the largest unit of time_units that divides t exactly. */
int imc_scn_format_time(imc_time_t t, char *buf, size_t len)
{
	unsigned u = IMC_ARRAY_SIZE(time_units) - 1;

	if (t == 0)
		return snprintf(buf, len, "0");
	while (u > 0 && t % time_units[u].scale)
		u--;
	return snprintf(buf, len, "%" PRIu64 "%s",
			(uint64_t)(t / time_units[u].scale), time_units[u].name);
}

void imc_scn_print_time(FILE *f, imc_time_t t)
{
	char buf[32];

	imc_scn_format_time(t, buf, sizeof(buf));
	fputs(buf, f);
}

/* The shortest %g form that reads back as the same double; values are 0
 * or in [1e-9, 1], so a fixed form of at most 9 + 17 decimals exists. */
void imc_scn_print_prob(FILE *f, double p)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, p);
		if (strtod(buf, NULL) == p)
			break;
	}
	/* %g may choose an exponent, which the parser does not read. */
	if (strchr(buf, 'e')) {
		for (int prec = 1; prec <= 40; prec++) {
			snprintf(buf, sizeof(buf), "%.*f", prec, p);
			if (strtod(buf, NULL) == p)
				break;
		}
	}
	fputs(buf, f);
}

void imc_scn_print_port(FILE *f, const struct imc_topo *t, uint32_t node,
			unsigned port)
{
	if (t && node < t->nnodes)
		scn_print_name(f, t->node[node].name);
	else
		fprintf(f, "#%" PRIu32, node);
	fprintf(f, ":%u", port);
}
