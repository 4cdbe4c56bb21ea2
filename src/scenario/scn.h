/* Scenario internals shared by the parser, the built-in verbs and
 * subjects, and the runner. Names here are scn_*: private to the library
 * (the export map keeps only imc_*). */
#ifndef IMC_SCENARIO_SCN_H
#define IMC_SCENARIO_SCN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/scenario.h"

/* Words of one line after quote removal; start/end are byte offsets of
 * each word in the raw line, for quoting the line back in messages. */
struct scn_words {
	unsigned argc;
	char **argv;     /* argc + 1 entries, argv[argc] == NULL */
	size_t *start;
	size_t *end;
	char *buf;
};

/* Splits one line (no newline) into words. Returns 0, or -EINVAL with
 * *why set to a static message. */
int scn_tokenize(const char *line, size_t len, struct scn_words *w,
		 const char **why);
void scn_words_free(struct scn_words *w);

/* A node name, quoted when it would not survive scn_tokenize() as one
 * word. */
void scn_print_name(FILE *f, const char *name);

/* Whether two names are one, '_' standing for '-' (counter and drop
 * names are written either way). */
bool scn_word_eq(const char *a, const char *b);

enum scn_op {
	SCN_EQ,
	SCN_NE,
	SCN_LT,
	SCN_LE,
	SCN_GT,
	SCN_GE,
	SCN_IN,
};

/* The operator a word spells, or -1. */
int scn_op_parse(const char *word);
const char *scn_op_str(enum scn_op op);

struct scn_operand {
	const struct imc_scn_subject *subj;
	void *data;
};

/* One term of the right side: a value or a subject, added or taken
 * away. */
struct scn_term {
	bool neg;
	bool is_subject;
	struct scn_operand subj;
	uint64_t value;
};

struct scn_expect {
	unsigned line;
	bool at_end;
	imc_time_t at;
	struct scn_operand lhs;
	enum scn_op op;
	uint64_t a, b;     /* the range of "in" */
	struct scn_term *rhs;
	unsigned nrhs;
	bool rhs_observed; /* a term is a subject */
	char *text;        /* as written, from the subject on */
};

struct scn_action {
	unsigned line;
	unsigned index;    /* position among actions: the flow number */
	imc_time_t at;
	const struct imc_scn_verb *verb;
	void *data;
};

/* Multicast groups defined so far, for mcast lines. */
struct scn_group {
	uint16_t mlid;
	struct imc_gid mgid;
	uint16_t pkey;
	uint32_t qkey;
	unsigned line;
};

struct imc_scenario {
	char *name;
	char *dir;
	struct imc_scn_lang *own_lang;
	const struct imc_scn_lang *lang;

	/* topology line */
	unsigned topo_line;
	bool topo_is_file;
	char *topo_arg;        /* generator spec or path as written */
	char *topo_desc;
	struct imc_topo *own_topo;
	const struct imc_topo *topo;

	uint64_t seed;
	imc_time_t stop;
	unsigned stop_line;
	struct imc_fabric_config cfg;

	/* Arrays grow geometrically (cap* entries allocated), so a long
	 * file parses in time linear in its length. */
	struct scn_action *settings;  /* added settings, file order */
	size_t nsettings, capsettings;
	struct scn_action *actions;   /* file order = time order */
	size_t nactions, capactions;
	struct scn_expect *expects;
	size_t nexpects, capexpects;
	struct scn_group *groups;
	size_t ngroups, capgroups;
	unsigned *group_by_mlid;      /* index + 1, by MLID - 0xC000 */
	void *names;                  /* tsearch() tree of struct scn_name */
};

/* Names lines give to what they make (as=NAME), for later lines to find
 * in O(log n): a balanced tree keyed by (space, name). space is the
 * address of anything private to the verbs sharing one namespace; data
 * is the verb's own (never read by the index). scn_name_add() returns 0,
 * -EEXIST when the name is taken in that space, or -ENOMEM. */
int scn_name_add(struct imc_scenario *s, const void *space, const char *name,
		 const void *data);
const void *scn_name_find(const struct imc_scenario *s, const void *space,
			  const char *name);

#define SCN_MLID_MIN 0xC000   /* IBA 4.1.3 multicast LIDs */
#define SCN_MLID_MAX 0xFFFE

struct imc_scn_parser {
	struct imc_scenario *s;
	unsigned line;
	const char *verb;      /* for messages, NULL outside a verb */
	char *err;
	size_t errlen;
	bool failed;
	/* Lines that set each setting, 0 for none: a second one is an
	 * error naming the first. */
	unsigned seed_line;
	unsigned fabric_line[5];   /* mtu, rate, rq, sweep, prefix */
	unsigned links_line[6];    /* by scn_link_optset index */
};

/* An error when two of the argc words are KEY=VALUE with one KEY (an
 * option given twice on one line): 0 or the parse error. */
int scn_words_unique(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv);

/* Option tables: each key=value (or bare flag) word of a verb, setting or
 * subject is described once, and one parser and one printer serve all
 * (opt.c). A table holds at most 64 options: the given mask has a bit per
 * option index. */
enum scn_opt_type {
	SCN_OPT_UINT,    /* unsigned field of size bytes, min..max (0: the type's) */
	SCN_OPT_HEX,     /* the same, printed 0x and 2*size digits */
	SCN_OPT_BPS,     /* bits per second, or auto (0) */
	SCN_OPT_ENUM,    /* index into names (NULL-terminated), field of size bytes */
	SCN_OPT_TIME,    /* imc_time_t */
	SCN_OPT_PROB,    /* double */
	SCN_OPT_FLAG,    /* a bare word: bool true */
	SCN_OPT_BOOL,    /* yes or no: bool */
	SCN_OPT_HOST,    /* an HCA port: struct scn_port_arg */
	SCN_OPT_CUSTOM,  /* parse and print below */
};

enum {
	SCN_OPT_REQUIRED = 1u << 0,
	SCN_OPT_GOT = 1u << 2,       /* the min error quotes the word */
};

struct scn_opt {
	const char *key;
	uint8_t type;        /* enum scn_opt_type */
	uint8_t size;        /* bytes of an integer field */
	uint16_t flags;
	size_t offset;
	uint64_t min, max;
	/* below min: "KEY: HELP", with SCN_OPT_GOT ", got 'V'" after */
	const char *help;
	const char *const *names;
	int (*parse)(struct imc_scn_parser *p, const struct scn_opt *o,
		     const char *value, void *field);
	void (*print)(FILE *f, const struct scn_opt *o, const void *field);
};

struct scn_optset {
	const struct scn_opt *opt;
	unsigned n;
	/* the unknown-word error; NULL lists the keys */
	const char *usage;
};

#define SCN_OPTSET(tab) { (tab), sizeof(tab) / sizeof((tab)[0]), NULL }
#define SCN_O_UINT(k, T, f, lo, hi) \
	{ .key = (k), .type = SCN_OPT_UINT, .size = sizeof(((T *)0)->f), \
	  .offset = offsetof(T, f), .min = (lo), .max = (hi) }
#define SCN_O_HEX(k, T, f, hi) \
	{ .key = (k), .type = SCN_OPT_HEX, .size = sizeof(((T *)0)->f), \
	  .offset = offsetof(T, f), .max = (hi) }
#define SCN_O_TIME(k, T, f) \
	{ .key = (k), .type = SCN_OPT_TIME, .offset = offsetof(T, f) }
/* An integer or time with a minimum and its own message below it. */
#define SCN_O_UINT_H(k, T, f, lo, hi, h) \
	{ .key = (k), .type = SCN_OPT_UINT, .size = sizeof(((T *)0)->f), \
	  .offset = offsetof(T, f), .min = (lo), .max = (hi), .help = (h) }
#define SCN_O_TIME_H(k, T, f, lo, h) \
	{ .key = (k), .type = SCN_OPT_TIME, .offset = offsetof(T, f), \
	  .min = (lo), .help = (h) }
#define SCN_O_PROB(k, T, f) \
	{ .key = (k), .type = SCN_OPT_PROB, .offset = offsetof(T, f) }
#define SCN_O_BPS(k, T, f) \
	{ .key = (k), .type = SCN_OPT_BPS, .size = sizeof(((T *)0)->f), \
	  .offset = offsetof(T, f) }
#define SCN_O_BOOL(k, T, f) \
	{ .key = (k), .type = SCN_OPT_BOOL, .offset = offsetof(T, f) }
#define SCN_O_HOST(k, T, f) \
	{ .key = (k), .type = SCN_OPT_HOST, .offset = offsetof(T, f) }
#define SCN_O_FLAG(k, T, f) \
	{ .key = (k), .type = SCN_OPT_FLAG, .offset = offsetof(T, f) }
#define SCN_O_ENUM(k, T, f, nm) \
	{ .key = (k), .type = SCN_OPT_ENUM, .size = sizeof(((T *)0)->f), \
	  .offset = offsetof(T, f), .names = (nm) }

/* One value of option o into its field in base: 0 or the parse error. */
int scn_opt_value_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			const char *v, void *base);
/* Parses every word of argv[0..argc) as an option of set into base: an
 * unknown word, a repeated key, a bad value or a missing required key is
 * a parse error. *given (may be NULL) gets a bit per option index. */
int scn_opts_parse(struct imc_scn_parser *p, const struct scn_optset *set,
		   unsigned argc, const char *const *argv, void *base,
		   uint64_t *given);
/* The option of set (NULL: none) the word names, or NULL; its index in
 * *idx and, for key=value, the value in *v. */
const struct scn_opt *scn_opt_find(const struct scn_optset *set,
				   const char *word, const char **v,
				   unsigned *idx);
/* One word among others a verb reads itself: *matched says whether it is
 * an option of set; given accumulates as above. */
int scn_opt_word(struct imc_scn_parser *p, const struct scn_optset *set,
		 const char *word, void *base, uint64_t *given, bool *matched);
/* " key=value" for each option in given, in table order (t: the
 * topology a HOST's name is in). */
void scn_opts_print(FILE *f, const struct imc_topo *t,
		    const struct scn_optset *set, const void *base,
		    uint64_t given);
/* The bit of option key in a given mask of set, 0 when set has none. */
uint64_t scn_opt_bit(const struct scn_optset *set, const char *key);

/* Built-in verbs and subjects (verbs.c, subjects.c). */
extern const struct imc_scn_verb *const scn_builtin_verbs[];
extern const unsigned scn_builtin_nverbs;
extern const struct imc_scn_subject scn_builtin_subjects[];
extern const unsigned scn_builtin_nsubjects;

/* Makes the run measure the joins of tracker t for the report's joins
 * section (joins.c): every verb module that creates a tracker calls it
 * once for it. 0 or -ENOMEM. */
struct imc_mcast;
int scn_joins_watch(struct imc_scn_ctx *c, struct imc_mcast *t);
extern const struct imc_scn_section scn_section_joins;

extern const struct imc_scn_section *const scn_builtin_sections[];
extern const unsigned scn_builtin_nsections;

/* ---- services ----
 *
 * How plugins find each other: a plugin never calls another by name; at
 * registration it adds the services it provides to the language, and a
 * consumer asks for a kind through scn_svc_*(), which without a provider
 * gives the error the provider gives when it is not in use.
 *
 * Teardown order is the plugins' order (struct imc_scn_plugin): sa (100)
 * provides GSIs and the SA engine, mcast (200) trackers on those GSIs;
 * ipoib, above them (300), uses the trackers and needs no hook. Teardown
 * hooks run from the highest order down while everything still works;
 * run data is freed after them, last set first, so a consumer makes its
 * provider's state before its own (scn_svc_tracker_prepare()). */
enum scn_svc {
	SCN_SVC_PORT_GSI,      /* gsi: a port's GSI (QP1), one per port */
	SCN_SVC_PORT_TRACKER,  /* prepare, tracker: a port's join tracker */
	SCN_SVC_SA_ENGINE,     /* engine, send: the built-in SA */
	SCN_SVC_NAME_MCAST,    /* space, what, resolve: mcast-join as= */
	SCN_SVC_NAME_SA,       /* space, what, resolve: sa-join as= */
	SCN_SVC_N,
};

/* An MGID word: a GID, 0, or @NAME, the as= of an earlier line (line:
 * that line's data in the name index, scn_name_add(); NULL for a GID). */
#define SCN_LABEL_MAX 32
struct scn_mgid {
	const void *line;
	char label[SCN_LABEL_MAX + 1];
	struct imc_gid gid;
};

enum {
	SCN_MGID_ZERO = 1u << 0,    /* 0 is taken (a group the SA names) */
	SCN_MGID_MCAST = 1u << 1,   /* a GID must be multicast */
};

/* An as= name: 1 to SCN_LABEL_MAX letters, digits, '_', '-' or '.'. */
bool scn_label_ok(const char *name);
/* The line of verb what whose as= put name in space, or NULL after a
 * parse error saying there is none. */
const void *scn_label_find(struct imc_scn_parser *p, const void *space,
			   const char *what, const char *name);
/* Parses word into m, @NAME as scn_label_find() finds it. 0 or the
 * parse error. scn_mgid_print(): " @NAME", " 0" or " GID". */
int scn_mgid_parse(struct imc_scn_parser *p, const char *word,
		   const void *space, const char *what, unsigned flags,
		   struct scn_mgid *m);
void scn_mgid_print(FILE *f, const struct scn_mgid *m);

struct imc_gsi;
struct imc_mcast;
struct imc_sa;

/* A provider sets the functions of its kinds (the comments of enum
 * scn_svc), each as its scn_svc_*() caller below describes. */
struct scn_svc_ops {
	int (*gsi)(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		   bool optional, struct imc_gsi **out);
	int (*prepare)(struct imc_scn_ctx *c);
	int (*tracker)(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		       struct imc_mcast **out);
	const struct imc_sa *(*engine)(struct imc_scn_ctx *c);
	int (*send)(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    const struct imc_gid *mgid, uint32_t count, uint32_t size,
		    imc_time_t interval, uint8_t sl);
	/* NAME_*: the arguments of scn_mgid_parse(); the group m names
	 * now, failing the run when it has none yet. */
	const void *space;
	const char *what;
	unsigned mgid_flags;
	int (*resolve)(struct imc_scn_ctx *c, const struct scn_mgid *m,
		       struct imc_gid *out);
};

/* What a plugin (or the core) adds to a language: verbs, subjects,
 * report sections, the services it provides and its hooks; NULL or 0 for
 * none. SCN_PARTS(f, arr) sets f and nf to a static array, SCN_LIST(f, T,
 * ...) to an array of T of the elements given. */
struct scn_svc_entry {
	enum scn_svc kind;
	const struct scn_svc_ops *ops;
};
struct scn_parts {
	const struct imc_scn_verb *const *verbs;
	size_t nverbs;
	const struct imc_scn_subject *subjects;
	size_t nsubjects;
	const struct imc_scn_section *const *sections;
	size_t nsections;
	const struct scn_svc_entry *services;
	size_t nservices;
	const struct imc_scn_plugin *plugin;
};
#define SCN_PARTS(f, arr) .f = (arr), .n##f = sizeof(arr) / sizeof((arr)[0])
#define SCN_LIST(f, T, ...) \
	.f = (T const []){ __VA_ARGS__ }, \
	.n##f = sizeof((T const []){ __VA_ARGS__ }) / sizeof(T)

/* Adds every part in the order of struct scn_parts, stopping at the
 * first error, which it returns. */
int scn_lang_add_parts(struct imc_scn_lang *l, const struct scn_parts *p);

/* 0, -EEXIST when kind has a provider, -EINVAL when ops lacks a function
 * of kind. Referenced, not copied. scn_service(): the provider or NULL. */
int scn_lang_add_service(struct imc_scn_lang *l, enum scn_svc kind,
			 const struct scn_svc_ops *ops);
const struct scn_svc_ops *scn_service(const struct imc_scn_lang *l,
				      enum scn_svc kind);

/* node:port's GSI, made on first use and shared by every MAD user of the
 * port; fails the run without a provider in use, or with optional
 * returns -ENOENT and the run goes on. */
int scn_svc_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		bool optional, struct imc_gsi **out);
/* Makes the trackers' run state now, so that state set after it is
 * freed before the trackers; node:port's tracker, made on first use. */
int scn_svc_tracker_prepare(struct imc_scn_ctx *c);
int scn_svc_tracker(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct imc_mcast **out);
/* The SA engine running now, or NULL; count datagrams of size bytes
 * from node:port to the SA's group mgid, interval apart, with the
 * group's MLID, Q_Key and P_Key. */
const struct imc_sa *scn_svc_sa_engine(struct imc_scn_ctx *c);
int scn_svc_group_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		       const struct imc_gid *mgid, uint32_t count,
		       uint32_t size, imc_time_t interval, uint8_t sl);

/* mcast-send and sa-mcast (group_send.c): one verb under two names, whose
 * @NAME the mcast plugin's and the sa plugin's name services resolve.
 * Each plugin adds the one of its names. */
extern const struct imc_scn_verb scn_verb_mcast_send;
extern const struct imc_scn_verb scn_verb_sa_mcast;

/* The components of an MCMemberRecord template (qkey=, pkey=, tclass=,
 * sl=, flow=, hop=, scope=, mtu=SEL:CODE, rate=SEL:CODE, life=SEL:CODE,
 * mlid=), as sa-join and mcast-join take them: options of a table whose
 * field is the struct imc_mcmr f of T, in the order they print.
 * scn_mcmr_comp_mask() gives the ComponentMask bits (IBA 15.2.5.17) of
 * those given (sa_verbs.c). */
struct imc_mcmr;
int scn_mcmr_comp_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			const char *value, void *field);
void scn_mcmr_comp_print(FILE *f, const struct scn_opt *o, const void *field);
uint64_t scn_mcmr_comp_mask(const struct scn_optset *set, uint64_t given);
#define SCN_O_MCMR(k, T, f) \
	{ .key = (k), .type = SCN_OPT_CUSTOM, .offset = offsetof(T, f), \
	  .parse = scn_mcmr_comp_parse, .print = scn_mcmr_comp_print }
#define SCN_O_MCMR_COMPS(T, f) \
	SCN_O_MCMR("qkey", T, f), SCN_O_MCMR("pkey", T, f), \
	SCN_O_MCMR("tclass", T, f), SCN_O_MCMR("sl", T, f), \
	SCN_O_MCMR("flow", T, f), SCN_O_MCMR("hop", T, f), \
	SCN_O_MCMR("scope", T, f), SCN_O_MCMR("mtu", T, f), \
	SCN_O_MCMR("rate", T, f), SCN_O_MCMR("life", T, f), \
	SCN_O_MCMR("mlid", T, f)

/* as=NAME (scn_label_ok()) into the char * field, and back. */
int scn_as_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
		     const char *value, void *field);
void scn_as_opt_print(FILE *f, const struct scn_opt *o, const void *field);

/* JoinState as state= takes it into a uint8_t (full, nonmember,
 * sendonly, sendonly-full joined by +, or 0..15), and back; with min 1,
 * at least one bit. */
int scn_join_state_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			 const char *value, void *field);
void scn_join_state_print(FILE *f, const struct scn_opt *o,
			  const void *field);
#define SCN_O_JOIN_STATE(T, f, lo) \
	{ .key = "state", .type = SCN_OPT_CUSTOM, .offset = offsetof(T, f), \
	  .min = (lo), .parse = scn_join_state_parse, \
	  .print = scn_join_state_print }

/* The names sa-status and mcast-status give MAD statuses ("success",
 * "req-invalid", ...): scn_mad_status_parse() returns 0 and the status,
 * or -EINVAL; scn_mad_status_name() the name, or NULL. */
int scn_mad_status_parse(const char *word, uint64_t *status);
const char *scn_mad_status_name(uint64_t status);

/* A language of the built-in verbs, subjects and sections alone, with no
 * plugin (imc_scn_lang_create() adds the library's). 0 or -ENOMEM. */
int scn_lang_create_core(struct imc_scn_lang **out);

/* The plugins' start hooks in order (0 or the first error), and their
 * teardown hooks in reverse order (lang.c). */
int scn_plugins_start(struct imc_scn_ctx *c);
void scn_plugins_teardown(struct imc_scn_ctx *c);

/* Report sections of a language in report order (rank, then name). */
unsigned scn_lang_nsections(const struct imc_scn_lang *l);
const struct imc_scn_section *scn_lang_section(const struct imc_scn_lang *l,
					       unsigned i);

/* The report (report.c). A section is written between begin and finish;
 * finish returns the first error the writer kept (the section is then
 * dropped) and drops a section that wrote nothing. */
int scn_report_create(struct imc_scn_report **out);
void scn_report_free(struct imc_scn_report *rep);
int scn_report_begin(struct imc_scn_report *rep, const char *name);
int scn_report_finish(struct imc_scn_report *rep);

/* Words the core reads itself: no verb may take them. */
bool scn_reserved(const char *name);

/* The options of links and fault lines. */
extern const struct scn_optset scn_link_optset;

/* A HOST or PORT word of a verb, as imc_scn_parse_host() and
 * imc_scn_parse_port() give it. */
struct scn_port_arg {
	uint32_t node;
	unsigned port;
};

/* " NODE:PORT", the canonical form of the word. */
static inline void scn_print_port_arg(FILE *f, const struct imc_topo *t,
				      const struct scn_port_arg *pa)
{
	fputc(' ', f);
	imc_scn_print_port(f, t, pa->node, pa->port);
}

#define SCN_FLOW_SIZE_MAX 4096   /* a flow's largest size=: the largest IB MTU */

/* Records a parse error with the line number; returns -EINVAL. */
#define scn_error imc_scn_parse_error

/* The unsigned field of size bytes (1, 2, 4 or 8) at off in base: how
 * counter subjects read the struct they name by offset. */
static inline uint64_t scn_field_at(const void *base, size_t off, size_t size)
{
	const uint8_t *p = (const uint8_t *)base + off;
	uint64_t u64;
	uint32_t u32;
	uint16_t u16;

	switch (size) {
	case 1: return *p;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

/* Writes v into the unsigned field of size bytes (0: none) at off. */
static inline void scn_field_put(void *base, size_t off, size_t size,
				 uint64_t v)
{
	uint8_t *p = (uint8_t *)base + off;
	uint32_t u32 = (uint32_t)v;
	uint16_t u16 = (uint16_t)v;

	switch (size) {
	case 0: break;
	case 1: *p = (uint8_t)v; break;
	case 2: memcpy(p, &u16, 2); break;
	case 4: memcpy(p, &u32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/* The byte at off in base. */
static inline void *scn_at(void *base, size_t off)
{
	return (uint8_t *)base + off;
}

static inline const void *scn_cat(const void *base, size_t off)
{
	return (const uint8_t *)base + off;
}

#define SCN_FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)

/* Runner hooks used by the built-in subjects. */
struct scn_host_stats {
	uint64_t sent, send_errors, delivered, dups;
};
/* Counters of the host node:port (zero when it has no QP); with node
 * IMC_TOPO_NONE the sum over every host. */
void scn_host_stats(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct scn_host_stats *out);

/* The flow number of the action running now: its index. */
uint32_t scn_flow_id(struct imc_scn_ctx *c);
/* Fails the run from a callback of the action line whose flow number
 * (scn_flow_id() when it ran) is flow, as if the line had failed when it
 * ran: the message is reported for that line and the run stops. Nothing
 * when the run has failed already. For lines whose outcome comes later
 * (an answer from the SA). */
void scn_fail_line(struct imc_scn_ctx *c, uint32_t flow, int err,
		   const char *fmt, ...) IMC_SCN_PRINTF(4, 5);

/* A traffic flow (flow.c): count datagrams of size bytes from the QP qp
 * of the port from, interval apart, to dqpn with qkey and the address
 * ah; with follow, ah's DLID and DGID are the port to's at each datagram
 * (none when it has no attributes). Each datagram of size >= 12 carries
 * IMC_SCN_MAGIC, id and its sequence number. */
struct scn_flow {
	struct scn_port_arg from;
	struct imc_qp *qp;
	struct imc_ah ah;
	bool follow;
	struct scn_port_arg to;
	uint32_t dqpn, qkey;
	uint32_t count, size;
	imc_time_t interval;
	uint32_t id;
};
/* Starts f for the length of the run, its first datagram now (from the
 * loop). Returns 0 or -ENOMEM. */
int scn_flow_start(struct imc_scn_ctx *c, const struct scn_flow *f);
/* Starts the flow tmpl (from, ah.sl, count, size, interval, id) to the
 * group g: from the port's QP of g's Q_Key and of its P_Key in g's
 * partition (scn_local_pkey), to QP 0xFFFFFF, g's MLID and MGID with a
 * GRH (IBA 10.5.2.5). Returns 0, -ENOMEM, or imc_scn_qp()'s error. */
int scn_flow_to_group(struct imc_scn_ctx *c, const struct scn_flow *tmpl,
		      const struct scn_group *g);
/* The run's GSI of node:port (port_gsi.c): QP1 as a shared GSI (gsi.h)
 * for every MAD user of the port, made on first use; it has a QP1 of the
 * run's unless the port's QP1 is lent. -ENOMEM when it cannot be made
 * (or node:port is no port). The GSIs are freed after the run data:
 * their users remove their agents. */
int scn_port_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		 struct imc_gsi **out);
/* Lends node:port's QP1 to a MAD engine of the port's own (the SA): the
 * run's QP1 goes and *out, the port's GSI with no QP, is the engine's to
 * set its QP on and to feed the MADs it does not take. Returning it
 * gives the GSI a QP1 of the run's again. */
int scn_port_qp1_lend(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      struct imc_gsi **out);
int scn_port_qp1_return(struct imc_scn_ctx *c, uint32_t node, unsigned port);
/* The run's port GSIs (run.c keeps them, port_gsi.c makes and frees them). */
struct scn_port_gsis;
struct scn_port_gsis **scn_ctx_port_gsis(struct imc_scn_ctx *c);
void scn_port_gsis_free(struct scn_port_gsis *g);
/* A P_Key of node:port's table in the partition of pkey (IBA 10.9.1.2:
 * the low 15 bits), full membership first; pkey itself when none. */
uint16_t scn_local_pkey(struct imc_fabric *f, uint32_t node, unsigned port,
			uint16_t pkey);

/* The scenario being run. */
const struct imc_scenario *scn_scenario(struct imc_scn_ctx *c);

extern const struct imc_scn_section scn_section_sa;

extern const struct imc_scn_section scn_section_ipoib;

/* The line of the earlier setting line of verb, or 0 (settings are few). */
unsigned scn_setting_line(const struct imc_scenario *s, const char *verb);

/* The group a mcast line names (parse time), in O(1). */
const struct scn_group *scn_group_find(const struct imc_scenario *s,
				       uint16_t mlid);
int scn_group_add(struct imc_scenario *s, const struct scn_group *g);


#endif
