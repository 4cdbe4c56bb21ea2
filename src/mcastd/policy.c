/* ibmcastd's access policy (mcastd_policy.h): a parsed rule list, checked
 * first match wins. Rules are few and written by an administrator, so a
 * check walks them in file order, as a firewall does. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcastd_policy.h"
#include "util/vec.h"

enum who { WHO_ANY, WHO_UID, WHO_GID };

struct mrange {                 /* MGIDs lo..hi; zero..zero is "0" */
	struct imc_gid lo, hi;
};

struct prange {
	uint16_t lo, hi;
};

struct rule {
	bool allow;
	enum who who;
	uint32_t id;
	unsigned line;
	bool mgid_any, pkey_any;
	uint8_t states;             /* JoinState bits allowed */
	size_t n_mgid, n_pkey;
	struct mrange *mgid;
	struct prange *pkey;
};

struct imc_mcastd_policy {
	struct rule *rules;
	size_t n;
};

/* ---- resolving names ---- */

static int nss_user(void *ctx, const char *name, uint32_t *uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) || !res)
		return -ENOENT;
	*uid = (uint32_t)res->pw_uid;
	return 0;
}

static int nss_group(void *ctx, const char *name, uint32_t *gid)
{
	struct group gr, *res = NULL;
	char buf[16384];

	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) || !res)
		return -ENOENT;
	*gid = (uint32_t)res->gr_gid;
	return 0;
}

static const struct imc_mcastd_policy_resolver nss = {
	.user = nss_user,
	.group = nss_group,
};

const struct imc_mcastd_policy_resolver *imc_mcastd_policy_nss(void)
{
	return &nss;
}

/* ---- parsing ---- */

struct parser {
	const char *file;
	unsigned line;
	const struct imc_mcastd_policy_resolver *r;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static int perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->errlen)
		return -EINVAL;
	n = snprintf(p->err, p->errlen, "%s:%u: ", p->file, p->line);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 0);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int parse_who(struct parser *p, const char *s, struct rule *ru)
{
	unsigned long v;
	uint32_t id;
	bool user;

	if (!strcmp(s, "*")) {
		ru->who = WHO_ANY;
		return 0;
	}
	if (!strncmp(s, "user:", 5))
		user = true;
	else if (!strncmp(s, "group:", 6))
		user = false;
	else
		return perr(p, "expected user:NAME, group:NAME or * after "
			    "allow/deny, not '%s'", s);
	s += user ? 5 : 6;
	ru->who = user ? WHO_UID : WHO_GID;
	if (!*s)
		return perr(p, "empty %s name", user ? "user" : "group");
	if (num(s, UINT32_MAX - 1, &v) == 0) {
		ru->id = (uint32_t)v;
		return 0;
	}
	if ((user && (!p->r || !p->r->user || p->r->user(p->r->ctx, s, &id))) ||
	    (!user && (!p->r || !p->r->group ||
		       p->r->group(p->r->ctx, s, &id))))
		return perr(p, "unknown %s '%s'", user ? "user" : "group", s);
	ru->id = id;
	return 0;
}

/* The MGIDs with the first len bits of g: lo..hi. */
static void prefix_range(const struct imc_gid *g, unsigned len,
			 struct mrange *m)
{
	m->lo = *g;
	m->hi = *g;
	for (unsigned b = len; b < 128; b++) {
		uint8_t bit = (uint8_t)(0x80u >> (b % 8));

		m->lo.raw[b / 8] &= (uint8_t)~bit;
		m->hi.raw[b / 8] |= bit;
	}
}

static int parse_mgid_item(struct parser *p, char *s, struct mrange *m)
{
	char *slash = strchr(s, '/'), *dash = strchr(s, '-');
	unsigned long len;

	if (!strcmp(s, "0")) {
		memset(m, 0, sizeof(*m));
		return 0;
	}
	if (slash) {
		*slash = '\0';
		if (imc_gid_parse(s, &m->lo) < 0)
			return perr(p, "bad MGID '%s' (IPv6 notation, e.g. "
				    "ff12:401b::1)", s);
		if (num(slash + 1, 128, &len) < 0)
			return perr(p, "bad prefix length '%s' (0..128)",
				    slash + 1);
		if (len < 8)
			return perr(p, "prefix /%lu reaches beyond ff00::/8 "
				    "(the multicast GIDs); write any", len);
		prefix_range(&m->lo, (unsigned)len, m);
	} else if (dash) {
		*dash = '\0';
		if (imc_gid_parse(s, &m->lo) < 0 ||
		    imc_gid_parse(dash + 1, &m->hi) < 0)
			return perr(p, "bad MGID range '%s-%s'", s, dash + 1);
		if (imc_gid_cmp(&m->lo, &m->hi) > 0)
			return perr(p, "MGID range '%s-%s' ends before it "
				    "starts", s, dash + 1);
	} else {
		if (imc_gid_parse(s, &m->lo) < 0)
			return perr(p, "bad MGID '%s' (IPv6 notation, e.g. "
				    "ff12:401b::1)", s);
		m->hi = m->lo;
	}
	/* IBA 4.1.1: multicast GIDs begin with 0xff. */
	if (!imc_gid_is_multicast(&m->lo) || !imc_gid_is_multicast(&m->hi))
		return perr(p, "'%s' is not a multicast GID (ff...)", s);
	return 0;
}

static int parse_state_item(struct parser *p, const char *s, uint8_t *bits)
{
	static const struct { const char *name; uint8_t bits; } names[] = {
		{ "full", 0x1 }, { "nonmember", 0x2 }, { "sendonly", 0x4 },
		{ "sendonly-full", 0x8 }, { "any", 0xf },
	};
	unsigned long v;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i].name)) {
			*bits |= names[i].bits;
			return 0;
		}
	if (num(s, 15, &v) < 0 || !v)
		return perr(p, "bad JoinState '%s' (full, nonmember, sendonly, "
			    "sendonly-full, any, or 1..15)", s);
	*bits |= (uint8_t)v;
	return 0;
}

static int parse_pkey_item(struct parser *p, char *s, struct prange *r)
{
	char *dash = strchr(s, '-');
	unsigned long lo, hi;

	if (dash)
		*dash = '\0';
	if (num(s, 0xffff, &lo) < 0 ||
	    (dash && num(dash + 1, 0xffff, &hi) < 0))
		return perr(p, "bad P_Key '%s%s%s' (0..0xffff, or LO-HI)", s,
			    dash ? "-" : "", dash ? dash + 1 : "");
	if (!dash)
		hi = lo;
	if (lo > hi)
		return perr(p, "P_Key range '%s-%s' ends before it starts", s,
			    dash + 1);
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

/* Splits a comma list; "any" alone means no list. */
static int parse_list(struct parser *p, const char *key, char *val,
		      struct rule *ru)
{
	char *items[IMC_POLICY_MAX_ITEMS], *save = NULL, *t;
	size_t n = 0;
	int r = 0;

	for (t = strtok_r(val, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == IMC_ARRAY_SIZE(items))
			return perr(p, "more than %d items in one %s list",
				    IMC_POLICY_MAX_ITEMS, key);
		items[n++] = t;
	}
	if (!n)
		return perr(p, "empty %s list", key);
	if (!strcmp(key, "state")) {
		ru->states = 0;
		for (size_t i = 0; i < n && !r; i++)
			r = parse_state_item(p, items[i], &ru->states);
		return r;
	}
	if (n == 1 && !strcmp(items[0], "any"))
		return 0;
	if (!strcmp(key, "mgid")) {
		ru->mgid_any = false;
		ru->mgid = calloc(n, sizeof(*ru->mgid));
		if (!ru->mgid)
			return -ENOMEM;
		for (size_t i = 0; i < n && !r; i++)
			r = parse_mgid_item(p, items[i], &ru->mgid[i]);
		ru->n_mgid = n;
		return r;
	}
	ru->pkey_any = false;
	ru->pkey = calloc(n, sizeof(*ru->pkey));
	if (!ru->pkey)
		return -ENOMEM;
	for (size_t i = 0; i < n && !r; i++)
		r = parse_pkey_item(p, items[i], &ru->pkey[i]);
	ru->n_pkey = n;
	return r;
}

static void rule_free(struct rule *ru)
{
	free(ru->mgid);
	free(ru->pkey);
}

/* One non-empty line, split in place into words. */
static int parse_rule(struct parser *p, char *line, struct rule *ru)
{
	static const char *const keys[] = { "mgid", "state", "pkey" };
	char *save = NULL, *w = strtok_r(line, " \t\r", &save);
	unsigned seen = 0;
	int r;

	memset(ru, 0, sizeof(*ru));
	ru->line = p->line;
	ru->mgid_any = ru->pkey_any = true;
	ru->states = 0xf;
	if (!strcmp(w, "allow"))
		ru->allow = true;
	else if (strcmp(w, "deny"))
		return perr(p, "expected allow or deny, not '%s'", w);
	w = strtok_r(NULL, " \t\r", &save);
	if (!w)
		return perr(p, "expected user:NAME, group:NAME or * after %s",
			    ru->allow ? "allow" : "deny");
	r = parse_who(p, w, ru);
	while (!r && (w = strtok_r(NULL, " \t\r", &save))) {
		size_t k;
		char *val;

		for (k = 0; k < IMC_ARRAY_SIZE(keys); k++)
			if (!strcmp(w, keys[k]))
				break;
		if (k == IMC_ARRAY_SIZE(keys))
			return perr(p, "unknown word '%s' (expected mgid, state "
				    "or pkey)", w);
		if (seen & (1u << k))
			return perr(p, "%s given twice", keys[k]);
		seen |= 1u << k;
		val = strtok_r(NULL, " \t\r", &save);
		if (!val)
			return perr(p, "%s needs a value", keys[k]);
		r = parse_list(p, keys[k], val, ru);
	}
	return r;
}

static int add_rule(struct imc_mcastd_policy *pol, size_t *cap,
		    const struct rule *ru)
{
	if (IMC_VEC_RESERVE(&pol->rules, cap, pol->n + 1))
		return -ENOMEM;
	pol->rules[pol->n++] = *ru;
	return 0;
}

/* Copies line number p->line of text into buf, comment cut; returns
 * -EINVAL when it is too long or holds a NUL. */
static int take_line(struct parser *p, const char *s, size_t n, char *buf)
{
	if (n >= IMC_POLICY_MAX_LINE)
		return perr(p, "line longer than %d bytes",
			    IMC_POLICY_MAX_LINE - 1);
	if (memchr(s, '\0', n))
		return perr(p, "NUL byte in the line");
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (strchr(buf, '#'))
		*strchr(buf, '#') = '\0';
	return 0;
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r")] == '\0';
}

int imc_mcastd_policy_parse(const char *text, size_t len, const char *file,
			    const struct imc_mcastd_policy_resolver *r,
			    struct imc_mcastd_policy **out,
			    char *err, size_t errlen)
{
	struct parser p = { file ? file : "policy", 0, r, err, errlen };
	struct imc_mcastd_policy *pol;
	char buf[IMC_POLICY_MAX_LINE];
	size_t off = 0, cap = 0;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	if (len > IMC_POLICY_MAX_BYTES) {
		perr(&p, "larger than %u bytes", IMC_POLICY_MAX_BYTES);
		return -EFBIG;
	}
	pol = calloc(1, sizeof(*pol));
	if (!pol)
		return -ENOMEM;
	while (off < len && !rc) {
		const char *s = text + off, *nl = memchr(s, '\n', len - off);
		size_t n = nl ? (size_t)(nl - s) : len - off;
		struct rule ru;

		off += n + (nl ? 1 : 0);
		p.line++;
		rc = take_line(&p, s, n, buf);
		if (rc || blank(buf))
			continue;
		if (pol->n == IMC_POLICY_MAX_RULES) {
			rc = perr(&p, "more than %d rules", IMC_POLICY_MAX_RULES);
			break;
		}
		rc = parse_rule(&p, buf, &ru);
		if (!rc)
			rc = add_rule(pol, &cap, &ru);
		if (rc)
			rule_free(&ru);
	}
	if (rc) {
		imc_mcastd_policy_destroy(pol);
		return rc;
	}
	*out = pol;
	return 0;
}

int imc_mcastd_policy_load(const char *path,
			   const struct imc_mcastd_policy_resolver *r,
			   struct imc_mcastd_policy **out,
			   char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	buf = malloc(IMC_POLICY_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, IMC_POLICY_MAX_BYTES + 1, f);
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (rc)
		snprintf(err, errlen, "%s: read error", path);
	else
		rc = imc_mcastd_policy_parse(buf, n, path, r, out, err, errlen);
	free(buf);
	return rc;
}

int imc_mcastd_policy_default(bool has_gid, uint32_t gid,
			      struct imc_mcastd_policy **out)
{
	struct imc_mcastd_policy *pol = calloc(1, sizeof(*pol));

	if (!pol)
		return -ENOMEM;
	pol->rules = calloc(2, sizeof(*pol->rules));
	if (!pol->rules) {
		free(pol);
		return -ENOMEM;
	}
	for (size_t i = 0; i < 2; i++) {
		struct rule *ru = &pol->rules[i];

		ru->allow = true;
		ru->mgid_any = ru->pkey_any = true;
		ru->states = 0xf;
		ru->who = i ? WHO_GID : WHO_UID;
		ru->id = i ? gid : 0;
	}
	pol->n = has_gid ? 2 : 1;
	*out = pol;
	return 0;
}

void imc_mcastd_policy_destroy(struct imc_mcastd_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		rule_free(&p->rules[i]);
	free(p->rules);
	free(p);
}

size_t imc_mcastd_policy_rules(const struct imc_mcastd_policy *p)
{
	return p->n;
}

/* ---- checking ---- */

static bool who_matches(const struct rule *ru,
			const struct imc_mcastd_policy_peer *peer)
{
	switch (ru->who) {
	case WHO_ANY:
		return true;
	case WHO_UID:
		return peer->uid == ru->id;
	case WHO_GID:
		if (peer->gid == ru->id)
			return true;
		for (size_t i = 0; i < peer->n_groups; i++)
			if (peer->groups[i] == ru->id)
				return true;
		return false;
	}
	return false;
}

static bool mgid_matches(const struct rule *ru, const struct imc_gid *g)
{
	if (ru->mgid_any)
		return true;
	for (size_t i = 0; i < ru->n_mgid; i++)
		if (imc_gid_cmp(&ru->mgid[i].lo, g) <= 0 &&
		    imc_gid_cmp(g, &ru->mgid[i].hi) <= 0)
			return true;
	return false;
}

static bool pkey_matches(const struct rule *ru,
			 const struct imc_mcastd_policy_query *q)
{
	if (ru->pkey_any)
		return true;
	if (!q->has_pkey)
		return false;
	for (size_t i = 0; i < ru->n_pkey; i++)
		if (ru->pkey[i].lo <= q->pkey && q->pkey <= ru->pkey[i].hi)
			return true;
	return false;
}

int imc_mcastd_policy_check(const struct imc_mcastd_policy *p,
			    const struct imc_mcastd_policy_peer *peer,
			    const struct imc_mcastd_policy_query *q,
			    unsigned *line)
{
	*line = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct rule *ru = &p->rules[i];

		if (!who_matches(ru, peer) || !mgid_matches(ru, &q->mgid) ||
		    (q->join_state & ~ru->states) || !q->join_state ||
		    !pkey_matches(ru, q))
			continue;
		*line = ru->line;
		return ru->allow ? 0 : -EACCES;
	}
	return -EACCES;
}

/* ---- printing ---- */

static void print_rule(FILE *f, const struct rule *ru)
{
	char a[IMC_GID_STRLEN], b[IMC_GID_STRLEN];

	fprintf(f, "%s ", ru->allow ? "allow" : "deny");
	if (ru->who == WHO_ANY)
		fputc('*', f);
	else
		fprintf(f, "%s:%u", ru->who == WHO_UID ? "user" : "group",
			ru->id);
	if (!ru->mgid_any) {
		fputs(" mgid ", f);
		for (size_t i = 0; i < ru->n_mgid; i++) {
			const struct mrange *m = &ru->mgid[i];

			imc_gid_format(&m->lo, a);
			imc_gid_format(&m->hi, b);
			if (imc_gid_is_zero(&m->lo))
				fprintf(f, "%s0", i ? "," : "");
			else if (imc_gid_equal(&m->lo, &m->hi))
				fprintf(f, "%s%s", i ? "," : "", a);
			else
				fprintf(f, "%s%s-%s", i ? "," : "", a, b);
		}
	}
	fprintf(f, " state %u", ru->states);
	if (!ru->pkey_any) {
		fputs(" pkey ", f);
		for (size_t i = 0; i < ru->n_pkey; i++)
			fprintf(f, "%s0x%04x-0x%04x", i ? "," : "",
				ru->pkey[i].lo, ru->pkey[i].hi);
	}
	fputc('\n', f);
}

int imc_mcastd_policy_print(const struct imc_mcastd_policy *p, char **out,
			    size_t *len)
{
	FILE *f;

	*out = NULL;
	f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		print_rule(f, &p->rules[i]);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
