/* Net-file reader and writer: the text ibnetdiscover prints and ibsim
 * reads.
 *
 *   switchguid=0x2c90200402d88(2c90200402d88)    GUID of the next switch
 *   Switch  8 "Switch1"        # "desc" enhanced port 0 lid 1 lmc 0
 *   [1]     "Hca1"[1]          w=4   # comment
 *   [2](2c9..)  "Hca2"[1](2c9..)     (port GUIDs of either end)
 *
 *   caguid=0x100000                              GUID of the next HCA
 *   Hca     2 "Hca1"           (also "Ca")
 *   [1]     "Switch1"[1]
 *
 * A block is a node header and the port lines right after it; any other
 * line ends it, and a port line outside a block is an error (ibsim would
 * silently drop it). Peers may be named before they are declared, so
 * cables are made after the whole input is read, in file order.
 *
 * GUIDs follow ibsim: switches take GUIDs from a base starting at
 * 0x200000 and HCAs from one starting at 0x100000; "switchguid=" and
 * "caguid=" ("hcaguids=") set the base ("caguid+N" moves it relative to
 * the last absolute value), a switch uses one GUID and an HCA reserves
 * nports + 1 (node GUID, then one per port).
 *
 * "w=" is the link width in lanes (1, 4, 8, 12; default 4), as ibsim's
 * example documents it. ibsim itself reads it as a LinkWidthEnabled mask
 * (IBA 14.2.5.6), so the writer marks only links that are not 4x.
 *
 * SM port: an "smport "name"[N]" (or "smport none") line names it;
 * otherwise the node of the first port line of the input ("The first
 * port in the file is used as the SM port", ibsim's net example): that
 * port on an HCA, port 0 on a switch, since a switch's SMA and SM sit
 * behind its management port 0 (where ibsim attaches a client too).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibmcast/topo.h"
#include "util/text.h"
#include "util/vec.h"

#define MAX_LINE 4096                 /* bytes in one line, '\n' excluded */
#define MAX_DEPTH 8                   /* nested includes */
#define MAX_FILE (256u << 20)         /* bytes in one file */
#define SW_GUID_BASE 0x200000ull      /* ibsim's first switch GUID */
#define CA_GUID_BASE 0x100000ull      /* ibsim's first HCA GUID */
#define SHOW 40                       /* bytes of bad input quoted */

/* One port line. */
struct entry {
	uint32_t node;
	uint32_t peer_name;   /* offset into names */
	uint32_t file;
	uint32_t line;
	uint64_t lguid;       /* port GUID of this end, if has_lguid */
	uint64_t pguid;       /* port GUID of the peer end, if has_pguid */
	uint8_t port;
	uint8_t peer_port;
	uint8_t width;        /* 0: not given */
	bool has_lguid;
	bool has_pguid;
};

struct opened {
	dev_t dev;
	ino_t ino;
};

struct parser {
	struct imc_topo *t;
	char *err;
	size_t errlen;

	char **file;          /* names of every file read, for messages */
	uint32_t nfile;

	struct entry *ent;
	size_t nent, capent;
	char *names;          /* peer names, NUL-terminated, back to back */
	size_t nnames, capnames;

	/* Per node: first slot in the per-port arrays, header location. */
	size_t *base;
	uint32_t *hfile, *hline;
	size_t capnode;
	/* Per port slot (nports + 1 per node): entry index + 1 of the port's
	 * own line, and of the line that set its GUID; 0 = none. */
	uint32_t *pl, *gl;
	size_t npl, cappl;

	uint64_t sw_base, sw_abs, ca_base, ca_abs;
	bool has_p0;          /* switchguid=..(port 0 GUID) pending */
	uint64_t p0;

	bool in_block;
	uint32_t cur;         /* node of the open block */

	struct opened stack[MAX_DEPTH + 1];
	unsigned depth;

	bool sm_given, sm_none;
	uint32_t sm_name, sm_file, sm_line;
	unsigned sm_port;
};

static int fail(struct parser *ps, uint32_t file, uint32_t line, int rc,
		const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(struct parser *ps, uint32_t file, uint32_t line, int rc,
		const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ps->err || !ps->errlen)
		return rc;
	n = snprintf(ps->err, ps->errlen, "%s:%u: ", ps->file[file], line);
	if (n >= 0 && (size_t)n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Room for n nodes in the per-node arrays, which share one capacity. */
static int node_room(struct parser *ps, size_t n)
{
	size_t cb = ps->capnode, cf = ps->capnode, cl = ps->capnode;

	if (IMC_VEC_RESERVE(&ps->base, &cb, n) ||
	    IMC_VEC_RESERVE(&ps->hfile, &cf, n) ||
	    IMC_VEC_RESERVE(&ps->hline, &cl, n))
		return -ENOMEM;
	ps->capnode = cb;
	return 0;
}

/* Room for n port slots in the per-slot arrays. */
static int slot_room(struct parser *ps, size_t n)
{
	size_t cp = ps->cappl, cg = ps->cappl;

	if (IMC_VEC_RESERVE(&ps->pl, &cp, n) ||
	    IMC_VEC_RESERVE(&ps->gl, &cg, n))
		return -ENOMEM;
	ps->cappl = cp;
	return 0;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Length of the word at s, for quoting bad input. */
static int word(const char *s)
{
	int n = 0;

	while (s[n] && s[n] != ' ' && s[n] != '\t' && n < SHOW)
		n++;
	return n;
}

static const char *got(const char *s)
{
	return *s ? s : "end of line";
}

static int wlen(const char *s)
{
	return *s ? word(s) : (int)strlen("end of line");
}

/* A decimal number of at most 9 digits. */
static bool dec(const char **s, unsigned long *v)
{
	const char *p = *s;
	unsigned long x = 0;
	int n = 0;

	while (*p >= '0' && *p <= '9') {
		if (++n > 9)
			return false;
		x = x * 10 + (unsigned long)(*p++ - '0');
	}
	if (!n)
		return false;
	*s = p;
	*v = x;
	return true;
}

/* Up to 16 hex digits, with "0x" when prefix is set (else optional). */
static bool hex(const char **s, uint64_t *v, bool prefix)
{
	const char *p = *s;
	uint64_t x = 0;
	int n = 0, d;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	else if (prefix)
		return false;
	while ((d = imc_hexval(*p)) >= 0) {
		if (++n > 16)
			return false;
		x = x << 4 | (uint64_t)d;
		p++;
	}
	if (!n)
		return false;
	*s = p;
	*v = x;
	return true;
}

/* A GUID in "=" lines: 0x-prefixed hex or decimal. */
static bool number(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return hex(s, v, true);
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p++ - '0');

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*s = p;
	*v = x;
	return true;
}

/* End of meaningful text: nothing or a comment. */
static bool at_end(const char *s)
{
	s = skip_ws(s);
	return !*s || *s == '#';
}

/* A quoted name at *s (the opening quote); NUL-terminates it in place. */
static int quoted(struct parser *ps, uint32_t f, uint32_t l, char **s,
		  char **name)
{
	char *p = *s, *e;

	if (*p != '"')
		return fail(ps, f, l, -EINVAL,
			    "expected a quoted node name, got '%.*s'",
			    wlen(p), got(p));
	e = strchr(p + 1, '"');
	if (!e)
		return fail(ps, f, l, -EINVAL, "unterminated '\"'");
	*e = '\0';
	*name = p + 1;
	*s = e + 1;
	return 0;
}

static int add_file(struct parser *ps, const char *name, uint32_t *idx)
{
	char **f = realloc(ps->file, (ps->nfile + 1) * sizeof(*f));

	if (!f)
		return -ENOMEM;
	ps->file = f;
	f[ps->nfile] = strdup(name);
	if (!f[ps->nfile])
		return -ENOMEM;
	*idx = ps->nfile++;
	return 0;
}

static int header(struct parser *ps, uint32_t f, uint32_t l, char *s,
		  enum imc_node_type type, const char *kw)
{
	struct imc_topo *t = ps->t;
	unsigned long np;
	char *name;
	uint64_t guid;
	uint32_t idx;
	size_t slots;
	int rc;

	s = (char *)skip_ws(s);
	if (!dec((const char **)&s, &np))
		return fail(ps, f, l, -EINVAL,
			    "expected a port count after '%s', got '%.*s'", kw,
			    wlen(s), got(s));
	s = (char *)skip_ws(s);
	rc = quoted(ps, f, l, &s, &name);
	if (rc)
		return rc;
	if (np < 1 || np > IMC_TOPO_MAX_PORTS)
		return fail(ps, f, l, -EINVAL,
			    "port count %lu out of range 1..%u for \"%s\"", np,
			    IMC_TOPO_MAX_PORTS, name);
	/* ibnetdiscover and ibsim mark switches whose port 0 is enhanced. */
	s = (char *)skip_ws(s);
	if (!strncmp(s, "enhanced port 0", 15))
		s += 15;
	else if (!strncmp(s, "base port 0", 11))
		s += 11;
	if (!at_end(s)) {
		s = (char *)skip_ws(s);
		return fail(ps, f, l, -EINVAL,
			    "expected '#' or end of line after \"%s\", got "
			    "'%.*s'", name, word(s), s);
	}
	if (!imc_topo_find(t, name, &idx))
		return fail(ps, f, l, -EINVAL,
			    "node \"%s\" is already declared (%s:%u)", name,
			    ps->file[ps->hfile[idx]], ps->hline[idx]);
	if (type == IMC_NODE_SWITCH) {
		guid = ps->sw_base++;
	} else {
		guid = ps->ca_base;
		ps->ca_base += np + 1;
	}
	if (!guid)
		return fail(ps, f, l, -EINVAL, "GUID 0 for \"%s\" is not valid",
			    name);
	rc = imc_topo_add_node(t, type, (unsigned)np, name, guid, &idx);
	if (rc == -EINVAL)
		return fail(ps, f, l, rc,
			    "bad node name \"%s\" (1..%u bytes, no control "
			    "characters)", name, IMC_TOPO_MAX_NAME);
	if (rc == -ENOSPC)
		return fail(ps, f, l, rc, "more than %u nodes",
			    IMC_TOPO_MAX_NODES);
	if (rc)
		return fail(ps, f, l, rc, "%s", strerror(-rc));
	if (type == IMC_NODE_SWITCH && ps->has_p0)
		t->node[idx].port[0].guid = ps->p0;
	ps->has_p0 = false;

	slots = ps->npl + np + 1;
	if (node_room(ps, t->nnodes) || slot_room(ps, slots))
		return -ENOMEM;
	memset(ps->pl + ps->npl, 0, (np + 1) * sizeof(*ps->pl));
	memset(ps->gl + ps->npl, 0, (np + 1) * sizeof(*ps->gl));
	ps->base[idx] = ps->npl;
	ps->hfile[idx] = f;
	ps->hline[idx] = l;
	ps->npl = slots;
	ps->in_block = true;
	ps->cur = idx;
	return 0;
}

/* The options after a port line's peer: "w=" widths, then '#' or the
 * end of the line. */
static int port_width(struct parser *ps, uint32_t f, uint32_t l, char *s,
		      unsigned long *w)
{
	char *opt;

	for (;;) {
		if (at_end(s))
			break;
		if (*s != ' ' && *s != '\t')
			return fail(ps, f, l, -EINVAL,
				    "expected 'w=', '#' or end of line, got "
				    "'%.*s'", word(s), s);
		s = (char *)skip_ws(s);
		opt = s;
		if (strncmp(s, "w=", 2))
			return fail(ps, f, l, -EINVAL,
				    "expected 'w=', '#' or end of line, got "
				    "'%.*s'", word(s), s);
		s += 2;
		if (!dec((const char **)&s, w) ||
		    (*w != 1 && *w != 4 && *w != 8 && *w != 12) ||
		    (*s && *s != ' ' && *s != '\t' && *s != '#'))
			return fail(ps, f, l, -EINVAL,
				    "bad width '%.*s': expected w=1, w=4, w=8 "
				    "or w=12", word(opt), opt);
	}
	return 0;
}

/* Keeps x, a port line of the open block whose peer is name, for
 * resolve(). */
static int port_add(struct parser *ps, const struct entry *x,
		    const char *name)
{
	const struct imc_topo_node *n = &ps->t->node[ps->cur];
	size_t slot = ps->base[ps->cur] + x->port, len;
	struct entry *e;

	if (ps->pl[slot]) {
		const struct entry *o = &ps->ent[ps->pl[slot] - 1];

		return fail(ps, x->file, x->line, -EINVAL,
			    "port %u of \"%s\" is already listed (%s:%u)",
			    x->port, n->name, ps->file[o->file], o->line);
	}
	if (ps->nent >= UINT32_MAX - 1)
		return fail(ps, x->file, x->line, -ENOSPC,
			    "too many port lines");
	len = strlen(name) + 1;
	if (ps->nnames + len > UINT32_MAX)
		return fail(ps, x->file, x->line, -ENOSPC,
			    "too many port lines");
	if (IMC_VEC_RESERVE(&ps->ent, &ps->capent, ps->nent + 1) ||
	    IMC_VEC_RESERVE(&ps->names, &ps->capnames, ps->nnames + len))
		return -ENOMEM;
	memcpy(ps->names + ps->nnames, name, len);
	e = &ps->ent[ps->nent++];
	*e = *x;
	e->node = ps->cur;
	e->peer_name = (uint32_t)ps->nnames;
	ps->nnames += len;
	ps->pl[slot] = (uint32_t)ps->nent;
	return 0;
}

/* "[p](guid) "peer"[pp](guid) w=W" in a node block. */
static int port_line(struct parser *ps, uint32_t f, uint32_t l, char *s)
{
	struct imc_topo_node *n;
	struct entry x = { .file = f, .line = l };
	unsigned long p, pp = 1, w = 0;
	char *name;
	int rc;

	if (!ps->in_block)
		return fail(ps, f, l, -EINVAL,
			    "port line outside a node block (a blank line "
			    "ends the block)");
	n = &ps->t->node[ps->cur];
	s++;
	if (!dec((const char **)&s, &p) || *s != ']')
		return fail(ps, f, l, -EINVAL,
			    "expected a port number and ']' after '['");
	s++;
	if (p < 1 || p > n->nports)
		return fail(ps, f, l, -EINVAL,
			    "port %lu out of range 1..%u for \"%s\"", p,
			    n->nports, n->name);
	if (*s == '(') {
		s++;
		if (!hex((const char **)&s, &x.lguid, false) || *s != ')')
			return fail(ps, f, l, -EINVAL,
				    "expected a port GUID and ')' after '[%lu]('",
				    p);
		s++;
		x.has_lguid = true;
	}
	s = (char *)skip_ws(s);
	if (*s != '"')
		return fail(ps, f, l, -EINVAL,
			    "expected '\"peer\"' after '[%lu]', got '%.*s'", p,
			    wlen(s), got(s));
	rc = quoted(ps, f, l, &s, &name);
	if (rc)
		return rc;
	if (*s == '[') {
		s++;
		if (!dec((const char **)&s, &pp) || *s != ']')
			return fail(ps, f, l, -EINVAL,
				    "expected a port number and ']' after "
				    "\"%s\"[", name);
		s++;
	}
	if (*s == '(') {
		s++;
		if (!hex((const char **)&s, &x.pguid, false) || *s != ')')
			return fail(ps, f, l, -EINVAL,
				    "expected a port GUID and ')' after "
				    "\"%s\"[%lu](", name, pp);
		s++;
		x.has_pguid = true;
	}
	rc = port_width(ps, f, l, s, &w);
	if (rc)
		return rc;
	if (pp < 1 || pp > IMC_TOPO_MAX_PORTS)
		return fail(ps, f, l, -EINVAL,
			    "port %lu out of range 1..%u for \"%s\"", pp,
			    IMC_TOPO_MAX_PORTS, name);
	x.port = (uint8_t)p;
	x.peer_port = (uint8_t)pp;
	x.width = (uint8_t)w;
	return port_add(ps, &x, name);
}

/* "key=value" lines before a node header. */
static int guid_line(struct parser *ps, uint32_t f, uint32_t l, char *s,
		     int klen)
{
	bool rel = false;
	uint64_t v, p0;
	char *key = s;

	s += klen;
	if (*s == '+')
		rel = true;
	else if (*s != '=')
		return fail(ps, f, l, -EINVAL, "expected '=' after '%.*s'",
			    klen, key);
	s++;
	if (!number((const char **)&s, &v))
		return fail(ps, f, l, -EINVAL,
			    "expected a number after '%.*s%c', got '%.*s'",
			    klen, key, rel ? '+' : '=', wlen(s), got(s));
	if (*s == '(' && klen == 10 && !strncmp(key, "switchguid", 10)) {
		/* ibnetdiscover appends the port 0 GUID. */
		s++;
		if (!hex((const char **)&s, &p0, false) || *s != ')')
			return fail(ps, f, l, -EINVAL,
				    "expected a port GUID and ')' after "
				    "'switchguid=...('");
		s++;
		ps->has_p0 = true;
		ps->p0 = p0;
	}
	if (!at_end(s))
		return fail(ps, f, l, -EINVAL,
			    "expected '#' or end of line, got '%.*s'",
			    word(skip_ws(s)), skip_ws(s));
	if (!strncmp(key, "switchguid", 10)) {
		if (!rel)
			ps->sw_abs = v;
		ps->sw_base = ps->sw_abs + (rel ? v : 0);
	} else if (!strncmp(key, "caguid", 6) || !strncmp(key, "hcaguids", 8)) {
		if (!rel)
			ps->ca_abs = v;
		ps->ca_base = ps->ca_abs + (rel ? v : 0);
	} else if (rel) {
		return fail(ps, f, l, -EINVAL, "expected '=' after '%.*s'",
			    klen, key);
	}
	return 0;
}

static int smport_line(struct parser *ps, uint32_t f, uint32_t l, char *s)
{
	unsigned long p;
	char *name;
	size_t len;
	int rc;

	if (ps->sm_given)
		return fail(ps, f, l, -EINVAL,
			    "second 'smport' line (first at %s:%u)",
			    ps->file[ps->sm_file], ps->sm_line);
	s = (char *)skip_ws(s);
	if (!strncmp(s, "none", 4) && at_end(s + 4)) {
		ps->sm_given = ps->sm_none = true;
		ps->sm_file = f;
		ps->sm_line = l;
		return 0;
	}
	if (*s != '"')
		return fail(ps, f, l, -EINVAL,
			    "expected '\"node\"[port]' or 'none' after "
			    "'smport', got '%.*s'", wlen(s), got(s));
	rc = quoted(ps, f, l, &s, &name);
	if (rc)
		return rc;
	if (*s != '[')
		return fail(ps, f, l, -EINVAL, "expected '[port]' after \"%s\"",
			    name);
	s++;
	if (!dec((const char **)&s, &p) || *s != ']' || p > IMC_TOPO_MAX_PORTS)
		return fail(ps, f, l, -EINVAL,
			    "expected a port number and ']' after \"%s\"[",
			    name);
	s++;
	if (!at_end(s))
		return fail(ps, f, l, -EINVAL,
			    "expected '#' or end of line, got '%.*s'",
			    word(skip_ws(s)), skip_ws(s));
	len = strlen(name) + 1;
	if (ps->nnames + len > UINT32_MAX)
		return fail(ps, f, l, -ENOSPC, "input too large");
	if (IMC_VEC_RESERVE(&ps->names, &ps->capnames, ps->nnames + len))
		return -ENOMEM;
	memcpy(ps->names + ps->nnames, name, len);
	ps->sm_name = (uint32_t)ps->nnames;
	ps->nnames += len;
	ps->sm_port = (unsigned)p;
	ps->sm_given = true;
	ps->sm_file = f;
	ps->sm_line = l;
	return 0;
}

static int parse_text(struct parser *ps, const char *text, size_t size,
		      uint32_t f, uint32_t *nlines);
static int read_file(struct parser *ps, const char *path, uint32_t f,
		     uint32_t l, uint32_t from);

static int include_line(struct parser *ps, uint32_t f, uint32_t l, char *s)
{
	const char *cur = ps->file[f], *slash;
	char *name, *path;
	uint32_t nf;
	size_t dl;
	int rc;

	s = (char *)skip_ws(s);
	if (*s == '"') {
		rc = quoted(ps, f, l, &s, &name);
		if (rc)
			return rc;
		if (!at_end(s))
			return fail(ps, f, l, -EINVAL,
				    "expected '#' or end of line, got '%.*s'",
				    word(skip_ws(s)), skip_ws(s));
	} else {
		name = s;
		s += strcspn(s, " \t#");
		if (!at_end(s))
			return fail(ps, f, l, -EINVAL,
				    "expected '#' or end of line, got '%.*s'",
				    word(skip_ws(s)), skip_ws(s));
		*s = '\0';
	}
	if (!*name)
		return fail(ps, f, l, -EINVAL,
			    "expected a file name after 'include'");
	if (ps->depth >= MAX_DEPTH)
		return fail(ps, f, l, -ELOOP,
			    "includes nested deeper than %u", MAX_DEPTH);
	/* Relative names are relative to the including file. */
	slash = strrchr(cur, '/');
	dl = name[0] != '/' && slash ? (size_t)(slash - cur + 1) : 0;
	path = malloc(dl + strlen(name) + 1);
	if (!path)
		return -ENOMEM;
	memcpy(path, cur, dl);
	strcpy(path + dl, name);
	rc = add_file(ps, path, &nf);
	free(path);
	if (rc)
		return rc;
	return read_file(ps, ps->file[nf], nf, l, f);
}

static int parse_line(struct parser *ps, uint32_t f, uint32_t l, char *s)
{
	int klen;

	s = (char *)skip_ws(s);
	if (!*s) {
		ps->in_block = false;
		return 0;
	}
	if (*s == '#')
		return 0;
	if (*s == '[')
		return port_line(ps, f, l, s);
	ps->in_block = false;
	klen = (int)strcspn(s, " \t=+(\"");
#define KW(k) (klen == (int)sizeof(k) - 1 && !strncmp(s, k, sizeof(k) - 1))
	if (KW("Switch"))
		return header(ps, f, l, s + klen, IMC_NODE_SWITCH, "Switch");
	if (KW("Hca") || KW("Ca"))
		return header(ps, f, l, s + klen, IMC_NODE_HCA,
			      klen == 3 ? "Hca" : "Ca");
	if (KW("Rt"))
		return fail(ps, f, l, -EINVAL, "router nodes are not supported");
	if (KW("switchguid") || KW("caguid") || KW("hcaguids") ||
	    KW("vendid") || KW("devid") || KW("sysimgguid"))
		return guid_line(ps, f, l, s, klen);
	if (KW("include"))
		return include_line(ps, f, l, s + klen);
	if (KW("smport"))
		return smport_line(ps, f, l, s + klen);
	if (KW("do"))
		return fail(ps, f, l, -EINVAL,
			    "ibsim console commands ('do ...') are not "
			    "supported in a topology");
#undef KW
	return fail(ps, f, l, -EINVAL,
		    "expected '[port]' or a node header, got '%.*s'", word(s),
		    s);
}

static int parse_text(struct parser *ps, const char *text, size_t size,
		      uint32_t f, uint32_t *nlines)
{
	char line[MAX_LINE + 2];
	size_t off = 0;
	uint32_t l = 0;
	int rc;

	while (off < size) {
		const char *p = text + off, *nl;
		size_t len;

		nl = memchr(p, '\n', size - off);
		len = nl ? (size_t)(nl - p) : size - off;
		off += len + (nl ? 1 : 0);
		if (l == UINT32_MAX - 1)
			return fail(ps, f, l, -EINVAL, "too many lines");
		l++;
		if (len && p[len - 1] == '\r')
			len--;
		if (len > MAX_LINE)
			return fail(ps, f, l, -EINVAL,
				    "line longer than %u bytes", MAX_LINE);
		if (memchr(p, '\0', len))
			return fail(ps, f, l, -EINVAL, "NUL byte in line");
		memcpy(line, p, len);
		line[len] = '\0';
		rc = parse_line(ps, f, l, line);
		if (rc)
			return rc;
	}
	/* A file's blocks end with it. */
	ps->in_block = false;
	*nlines = l;
	return 0;
}

static int read_file(struct parser *ps, const char *path, uint32_t f,
		     uint32_t l, uint32_t from)
{
	struct stat st;
	char *buf = NULL;
	size_t size = 0, cap = 0;
	uint32_t nlines;
	unsigned i;
	ssize_t r;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto open_fail;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		goto open_fail;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		rc = -EINVAL;
		goto open_fail;
	}
	for (i = 0; i < ps->depth; i++) {
		if (ps->stack[i].dev == st.st_dev &&
		    ps->stack[i].ino == st.st_ino) {
			close(fd);
			return fail(ps, from, l, -ELOOP,
				    "include loop: \"%s\" is already being "
				    "read", path);
		}
	}
	for (;;) {
		if (size == cap) {
			char *nb;

			if (cap >= MAX_FILE) {
				free(buf);
				close(fd);
				return fail(ps, from == UINT32_MAX ? f : from, l,
					    -EFBIG, "\"%s\" is larger than %u bytes",
					    path, MAX_FILE);
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		r = read(fd, buf + size, cap - size);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			free(buf);
			close(fd);
			goto open_fail;
		}
		if (!r)
			break;
		size += (size_t)r;
	}
	close(fd);
	ps->stack[ps->depth].dev = st.st_dev;
	ps->stack[ps->depth].ino = st.st_ino;
	ps->depth++;
	rc = parse_text(ps, buf ? buf : "", size, f, &nlines);
	ps->depth--;
	free(buf);
	return rc;

open_fail:
	if (from == UINT32_MAX) {
		if (ps->err && ps->errlen)
			snprintf(ps->err, ps->errlen, "%s: %s", path,
				 rc == -EINVAL ? "not a regular file"
					       : strerror(-rc));
		return rc;
	}
	return fail(ps, from, l, rc, "cannot read include file \"%s\": %s",
		    path, rc == -EINVAL ? "not a regular file" : strerror(-rc));
}

static const char *where(const struct parser *ps, uint32_t e, uint32_t *line)
{
	*line = ps->ent[e].line;
	return ps->file[ps->ent[e].file];
}

static int set_guid(struct parser *ps, uint32_t e, uint32_t node,
		    unsigned port, uint64_t guid)
{
	struct imc_topo_node *n = &ps->t->node[node];
	size_t slot = ps->base[node] + port;
	const struct entry *x = &ps->ent[e];

	if (ps->gl[slot]) {
		uint32_t ol;
		const char *of = where(ps, ps->gl[slot] - 1, &ol);

		if (n->port[port].guid != guid)
			return fail(ps, x->file, x->line, -EINVAL,
				    "GUID 0x%016" PRIx64 " of \"%s\"[%u] "
				    "disagrees with 0x%016" PRIx64 " (%s:%u)",
				    guid, n->name, port, n->port[port].guid,
				    of, ol);
		return 0;
	}
	n->port[port].guid = guid;
	ps->gl[slot] = e + 1;
	return 0;
}

/* e's cable against the line of its peer port (other, an entry index
 * + 1), when there is one: both must name each other, and the widths
 * agree; *w gets the width given on either line. */
static int peer_agrees(struct parser *ps, const struct entry *e,
		       uint32_t other, const struct imc_topo_node *a,
		       const struct imc_topo_node *b, unsigned *w)
{
	const struct entry *o = &ps->ent[other - 1];
	uint32_t ol;
	const char *of = where(ps, other - 1, &ol);

	if (o->peer_port != e->port ||
	    strcmp(ps->names + o->peer_name, a->name))
		return fail(ps, e->file, e->line, -EINVAL,
			    "cable \"%s\"[%u] -> \"%s\"[%u] "
			    "disagrees with \"%s\"[%u] -> "
			    "\"%s\"[%u] (%s:%u)", a->name,
			    e->port, b->name, e->peer_port,
			    b->name, o->port,
			    ps->names + o->peer_name,
			    o->peer_port, of, ol);
	if (o->width && *w && o->width != *w)
		return fail(ps, e->file, e->line, -EINVAL,
			    "width %u of \"%s\"[%u] disagrees "
			    "with width %u (%s:%u)", *w,
			    a->name, e->port, o->width, of, ol);
	if (!*w)
		*w = o->width;
	return 0;
}

/* The peer port of e is cabled to a third port already. */
static int busy_fail(struct parser *ps, const struct entry *e,
		     const struct imc_topo_node *a,
		     const struct imc_topo_node *b)
{
	const struct imc_topo_port *bp = &b->port[e->peer_port];
	uint32_t by = ps->pl[ps->base[bp->peer] + bp->peer_port], ol = 0;
	const char *of = by ? where(ps, by - 1, &ol) : "?";

	return fail(ps, e->file, e->line, -EINVAL,
		    "cable \"%s\"[%u] -> \"%s\"[%u]: \"%s\"[%u] "
		    "is already cabled to \"%s\"[%u] (%s:%u)",
		    a->name, e->port, b->name, e->peer_port,
		    b->name, e->peer_port,
		    ps->t->node[bp->peer].name, bp->peer_port, of, ol);
}

/* The cable of entry i, and the port GUIDs its line gives. */
static int cable_entry(struct parser *ps, uint32_t i)
{
	struct imc_topo *t = ps->t;
	const struct entry *e = &ps->ent[i];
	const char *pname = ps->names + e->peer_name;
	struct imc_topo_node *a = &t->node[e->node], *b;
	unsigned w = e->width;
	uint32_t bi, other;
	int rc;

	if (imc_topo_find(t, pname, &bi))
		return fail(ps, e->file, e->line, -EINVAL,
			    "\"%s\" is not declared", pname);
	b = &t->node[bi];
	if (e->peer_port > b->nports)
		return fail(ps, e->file, e->line, -EINVAL,
			    "port %u out of range 1..%u for \"%s\"",
			    e->peer_port, b->nports, b->name);
	if (bi == e->node && e->peer_port == e->port)
		return fail(ps, e->file, e->line, -EINVAL,
			    "\"%s\"[%u] is cabled to itself", a->name,
			    e->port);
	other = ps->pl[ps->base[bi] + e->peer_port];
	if (other) {
		rc = peer_agrees(ps, e, other, a, b, &w);
		if (rc)
			return rc;
	}
	rc = imc_topo_connect(t, e->node, e->port, bi, e->peer_port, w);
	if (rc == -EBUSY)
		return busy_fail(ps, e, a, b);
	if (rc)
		return fail(ps, e->file, e->line, rc, "%s", strerror(-rc));
	if (e->has_lguid) {
		rc = set_guid(ps, i, e->node, e->port, e->lguid);
		if (rc)
			return rc;
	}
	if (e->has_pguid)
		return set_guid(ps, i, bi, e->peer_port, e->pguid);
	return 0;
}

/* The SM's port: the "sm" line, else the first port line's node. */
static int resolve_sm(struct parser *ps)
{
	struct imc_topo *t = ps->t;

	if (ps->sm_given) {
		uint32_t n;

		if (ps->sm_none)
			return 0;
		if (imc_topo_find(t, ps->names + ps->sm_name, &n))
			return fail(ps, ps->sm_file, ps->sm_line, -EINVAL,
				    "\"%s\" is not declared",
				    ps->names + ps->sm_name);
		if (ps->sm_port > t->node[n].nports ||
		    (!ps->sm_port && t->node[n].type != IMC_NODE_SWITCH))
			return fail(ps, ps->sm_file, ps->sm_line, -EINVAL,
				    "port %u out of range %u..%u for \"%s\"",
				    ps->sm_port,
				    t->node[n].type == IMC_NODE_SWITCH ? 0 : 1,
				    t->node[n].nports, t->node[n].name);
		t->sm_node = n;
		t->sm_port = (uint8_t)ps->sm_port;
	} else if (ps->nent) {
		const struct entry *e = &ps->ent[0];

		t->sm_node = e->node;
		t->sm_port = t->node[e->node].type == IMC_NODE_SWITCH ?
			     0 : e->port;
	}
	return 0;
}

/* Makes every cable, in file order, then places the SM. */
static int resolve(struct parser *ps)
{
	for (size_t i = 0; i < ps->nent; i++) {
		int rc = cable_entry(ps, (uint32_t)i);

		if (rc)
			return rc;
	}
	return resolve_sm(ps);
}

/* One GUID and where it was given, for the duplicate check. */
struct gref {
	uint64_t guid;
	uint32_t node;
	uint32_t port;        /* UINT32_MAX: the node GUID */
	uint32_t file;
	uint32_t line;
};

static int gref_cmp(const void *a, const void *b)
{
	const struct gref *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->port > y->port) - (x->port < y->port);
}

static void gref_name(const struct parser *ps, const struct gref *g,
		      char *buf, size_t len)
{
	const char *name = ps->t->node[g->node].name;

	if (g->port == UINT32_MAX)
		snprintf(buf, len, "\"%s\"", name);
	else
		snprintf(buf, len, "\"%s\"[%u]", name, g->port);
}

/* Sorted by GUID, a GUID given twice is two neighbours: O(n log n). */
static int guids_unique(struct parser *ps, struct gref *g, size_t n,
			const char *what)
{
	char a[IMC_TOPO_MAX_NAME + 16], b[IMC_TOPO_MAX_NAME + 16];

	qsort(g, n, sizeof(*g), gref_cmp);
	for (size_t i = 1; i < n; i++) {
		if (g[i].guid != g[i - 1].guid)
			continue;
		gref_name(ps, &g[i], a, sizeof(a));
		gref_name(ps, &g[i - 1], b, sizeof(b));
		return fail(ps, g[i].file, g[i].line, -EEXIST,
			    "%s GUID 0x%016" PRIx64 " of %s is also the %s "
			    "GUID of %s (%s:%u)", what, g[i].guid, a, what, b,
			    ps->file[g[i - 1].file], g[i - 1].line);
	}
	return 0;
}

/* A GUID is unique to its node or port (IBA 4.1.1), and a port's GID is
 * its subnet prefix and port GUID: two ports with one GUID would share
 * one GID. An include, a "caguid=" or a "(guid)" can give a GUID twice.
 * A port GUID set on a port line is located there, a derived one at its
 * node's header. */
static int check_guids(struct parser *ps)
{
	const struct imc_topo *t = ps->t;
	struct gref *g;
	size_t n = 0, np = 0;
	int rc;

	for (uint32_t i = 0; i < t->nnodes; i++)
		np += (size_t)t->node[i].nports + 1;
	g = malloc((np > t->nnodes ? np : t->nnodes) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nnodes; i++)
		g[n++] = (struct gref){ t->node[i].guid, i, UINT32_MAX,
					ps->hfile[i], ps->hline[i] };
	rc = guids_unique(ps, g, n, "node");
	n = 0;
	for (uint32_t i = 0; !rc && i < t->nnodes; i++) {
		const struct imc_topo_node *nd = &t->node[i];

		for (unsigned p = 0; p <= nd->nports; p++) {
			uint32_t by = ps->gl[ps->base[i] + p];

			if (!nd->port[p].guid)
				continue;
			g[n] = (struct gref){ nd->port[p].guid, i, p,
					      ps->hfile[i], ps->hline[i] };
			if (by) {
				g[n].file = ps->ent[by - 1].file;
				g[n].line = ps->ent[by - 1].line;
			}
			n++;
		}
	}
	if (!rc)
		rc = guids_unique(ps, g, n, "port");
	free(g);
	return rc;
}

static void parser_free(struct parser *ps)
{
	uint32_t i;

	for (i = 0; i < ps->nfile; i++)
		free(ps->file[i]);
	free(ps->file);
	free(ps->ent);
	free(ps->names);
	free(ps->base);
	free(ps->hfile);
	free(ps->hline);
	free(ps->pl);
	free(ps->gl);
}

static int parse(const char *name, const char *text, size_t size,
		 bool is_file, struct imc_topo **out, char *err,
		 size_t errlen)
{
	struct parser ps = {
		.err = err, .errlen = errlen,
		.sw_base = SW_GUID_BASE, .sw_abs = SW_GUID_BASE,
		.ca_base = CA_GUID_BASE, .ca_abs = CA_GUID_BASE,
	};
	uint32_t f, nlines = 0;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	rc = imc_topo_create(&ps.t);
	if (rc)
		return rc;
	rc = add_file(&ps, name, &f);
	if (rc)
		goto out;
	if (is_file)
		rc = read_file(&ps, name, f, 0, UINT32_MAX);
	else
		rc = parse_text(&ps, text, size, f, &nlines);
	if (rc)
		goto out;
	if (!ps.t->nnodes) {
		rc = fail(&ps, f, nlines ? nlines : 1, -EINVAL,
			  "no node declared");
		goto out;
	}
	rc = resolve(&ps);
	if (!rc)
		rc = check_guids(&ps);
out:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen,
			 "%s: out of memory for the topology (%u nodes, %zu port lines read)",
			 name, ps.t ? ps.t->nnodes : 0, ps.nent);
	parser_free(&ps);
	if (rc) {
		imc_topo_destroy(ps.t);
		return rc;
	}
	*out = ps.t;
	return 0;
}

int imc_topo_parse_file(const char *path, struct imc_topo **out, char *err,
			size_t errlen)
{
	return parse(path, NULL, 0, true, out, err, errlen);
}

int imc_topo_parse_string(const char *text, const char *name,
			  struct imc_topo **out, char *err, size_t errlen)
{
	return parse(name ? name : "<string>", text, strlen(text), false, out,
		     err, errlen);
}

/* The SM port a reader infers when no smport line is given. */
static void natural_sm(const struct imc_topo *t, uint32_t *node,
		       unsigned *port)
{
	uint32_t i;
	unsigned p;

	for (i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];

		for (p = 1; p <= n->nports; p++) {
			if (n->port[p].peer == IMC_TOPO_NONE)
				continue;
			*node = i;
			*port = n->type == IMC_NODE_SWITCH ? 0 : p;
			return;
		}
	}
	*node = IMC_TOPO_NONE;
	*port = 0;
}

static uint64_t default_guid(const struct imc_topo_node *n, unsigned p)
{
	if (n->type == IMC_NODE_SWITCH)
		return 0;
	return n->guid + p;
}

int imc_topo_write(const struct imc_topo *t, FILE *f)
{
	uint32_t i, sn, nh, ns, nc;
	unsigned p, sp;

	/* Check first: nothing is written for a topology a file cannot
	 * hold. */
	if (t->sm_node != IMC_TOPO_NONE &&
	    (t->sm_node >= t->nnodes ||
	     t->sm_port > t->node[t->sm_node].nports ||
	     (!t->sm_port && t->node[t->sm_node].type != IMC_NODE_SWITCH)))
		return -EINVAL;
	for (i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];

		if (!n->guid)
			return -EINVAL;
		for (p = 1; p <= n->nports; p++)
			if (n->port[p].peer == IMC_TOPO_NONE &&
			    n->port[p].guid != default_guid(n, p))
				return -EINVAL;
	}
	imc_topo_counts(t, &nh, &ns, &nc);
	fprintf(f, "# %u HCAs, %u switches, %u cables\n\n", nh, ns, nc);
	natural_sm(t, &sn, &sp);
	if (sn != t->sm_node || (sn != IMC_TOPO_NONE && sp != t->sm_port)) {
		if (t->sm_node == IMC_TOPO_NONE)
			fprintf(f, "smport none\n\n");
		else
			fprintf(f, "smport \"%s\"[%u]\n\n",
				t->node[t->sm_node].name, t->sm_port);
	}
	for (i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *n = &t->node[i];

		if (i)
			fputc('\n', f);
		if (n->type == IMC_NODE_SWITCH)
			fprintf(f, "switchguid=0x%016" PRIx64 "(%" PRIx64 ")\n"
				"Switch\t%u \"%s\"\n", n->guid,
				n->port[0].guid, n->nports, n->name);
		else
			fprintf(f, "caguid=0x%016" PRIx64 "\nHca\t%u \"%s\"\n",
				n->guid, n->nports, n->name);
		for (p = 1; p <= n->nports; p++) {
			const struct imc_topo_port *tp = &n->port[p];

			if (tp->peer == IMC_TOPO_NONE)
				continue;
			fprintf(f, "[%u]", p);
			if (tp->guid != default_guid(n, p))
				fprintf(f, "(%" PRIx64 ")", tp->guid);
			fprintf(f, "\t\"%s\"[%u]", t->node[tp->peer].name,
				tp->peer_port);
			if (tp->width != 4)
				fprintf(f, "\tw=%u", tp->width);
			fputc('\n', f);
		}
	}
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}
