/* Verb descriptors: the words after a verb described as a table of
 * positional arguments ({kind, offset, flags}) and an option set, so
 * that one parser, one printer and one free (desc.c) serve every verb
 * built on them, with one wording of each error. print(parse(x)) parses
 * to the same data. */
#ifndef IMC_SCENARIO_DESC_H
#define IMC_SCENARIO_DESC_H

#include <stdio.h>

#include "scenario/scn.h"

enum scn_arg_kind {
	SCN_ARG_WORD,      /* one of names; its index into a field of size bytes */
	SCN_ARG_PORT,      /* NODE:PORT into struct scn_port_arg */
	SCN_ARG_HOST,      /* an HCA port into struct scn_port_arg */
	SCN_ARG_HOST_ALL,  /* a host, or "all": node IMC_TOPO_NONE */
	SCN_ARG_HOSTS,     /* a host set: struct imc_scn_hosts */
	SCN_ARG_UINT,      /* unsigned field of size bytes, min..max */
	SCN_ARG_MGID,      /* struct imc_gid, multicast */
	/* struct scn_mgid: a GID, or @NAME, an as= of the verb help's lines
	 * in space; min holds the SCN_MGID_* flags. With space NULL, the
	 * language's names service max (enum scn_svc) gives the three, and
	 * its ops are kept at count_off for the run. */
	SCN_ARG_NAMED_MGID,
	SCN_ARG_CUSTOM,    /* parse, print (NULL: nothing) and free below */
};

enum {
	/* May be absent: a WORD's field is 0 then, else index + 1; another
	 * kind takes the next word when there is one and keeps its
	 * defaults else (a PORT or HOST left at node IMC_TOPO_NONE, a set
	 * with no host, prints nothing); a CUSTOM one leaves an option's
	 * word to the options. */
	SCN_ARG_OPTIONAL = 1u << 0,
	SCN_ARG_CABLED = 1u << 1,   /* PORT: a cable leaves it */
	SCN_ARG_HEX = 1u << 2,      /* UINT: printed 0x and 2*size digits */
	/* The last argument: every word no option takes. A UINT REST is an
	 * array of max entries of size bytes with an unsigned count at
	 * count_off; a CUSTOM REST parses one word a call and prints all. */
	SCN_ARG_REST = 1u << 3,
};

struct scn_arg;
typedef int scn_arg_parse_fn(struct imc_scn_parser *p, const struct scn_arg *a,
			     const char *word, void *base);
typedef void scn_arg_print_fn(FILE *f, const struct imc_topo *t,
			      const struct scn_arg *a, const void *base);

struct scn_arg {
	uint8_t kind;        /* enum scn_arg_kind */
	uint8_t size;        /* bytes of a WORD or UINT field (entry) */
	uint16_t flags;
	size_t offset;
	/* UINT: the name in its errors; a missing argument: "expected WHAT" */
	const char *what;
	const char *const *names;   /* WORD, NULL-terminated */
	const void *space;          /* NAMED_MGID */
	uint64_t min, max;
	/* UINT below min: "WHAT: HELP, got 'W'"; REST past max entries:
	 * "at most MAX HELP"; NAMED_MGID: the verb of as= */
	const char *help;
	size_t count_off;
	scn_arg_parse_fn *parse;
	scn_arg_print_fn *print;
	void (*free)(const struct scn_arg *a, void *base);
};

enum {
	SCN_KEEP_GIVEN = 1u << 0,
	SCN_KEEP_ARG = 1u << 1,
	SCN_KEEP_GOT = 1u << 2,
};

struct scn_desc {
	/* The error when the number of words is outside min..max (max 0:
	 * no bound) or a WORD argument is none of its names; with
	 * SCN_KEEP_GOT, ", got 'W'" follows, W the first word past max. */
	const char *usage;
	/* max 0: without options or a REST argument, the number of
	 * arguments; else no bound */
	unsigned min, max;
	const struct scn_arg *arg;
	unsigned narg;
	const struct scn_optset *opts;   /* NULL: none */
	size_t opts_off;     /* where the options' struct is in the data */
	bool opts_first;     /* options print before a REST argument */
	uint64_t print_always;   /* options printed when not given */
	unsigned keep;       /* SCN_KEEP_* */
	size_t given_off;    /* KEEP_GIVEN: the mask of the options given */
	uint8_t given_size;  /* its bytes; 0: a uint64_t */
	size_t arg_off;      /* KEEP_ARG: the subject's arg (a pointer) */
	size_t size;         /* bytes of the data */
	const void *defaults;    /* the data before parsing; NULL: zeros */
	void (*init)(void *data);   /* then this, when not NULL */
	/* A setting given once a file: the error for a second line is
	 * "ONCE on line N", N the first. */
	const char *once;
	/* After every word: checks across arguments, completes the data. */
	int (*done)(struct imc_scn_parser *p, void *data);
};

/* The field of argument a in the data base. */
static inline void *scn_arg_at(void *base, const struct scn_arg *a)
{
	return (uint8_t *)base + a->offset;
}

static inline const void *scn_arg_cat(const void *base, const struct scn_arg *a)
{
	return (const uint8_t *)base + a->offset;
}

#define SCN_ARGS(tab) .arg = (tab), .narg = sizeof(tab) / sizeof((tab)[0])

#define SCN_A_PORT(T, f, fl) \
	{ .kind = SCN_ARG_PORT, .flags = (fl), .offset = offsetof(T, f), \
	  .what = "a port" }
#define SCN_A_HOST(T, f) \
	{ .kind = SCN_ARG_HOST, .offset = offsetof(T, f), .what = "a host" }
#define SCN_A_HOSTS(T, f) \
	{ .kind = SCN_ARG_HOSTS, .offset = offsetof(T, f), .what = "hosts" }
#define SCN_A_WORD(T, f, nm, fl) \
	{ .kind = SCN_ARG_WORD, .size = sizeof(((T *)0)->f), .flags = (fl), \
	  .offset = offsetof(T, f), .names = (nm) }
#define SCN_A_MGID(T, f, sp, verb, fl) \
	{ .kind = SCN_ARG_NAMED_MGID, .offset = offsetof(T, f), \
	  .what = "an MGID", .space = (sp), .help = (verb), .min = (fl) }
#define SCN_A_SVC_MGID(T, f, svc, opsf) \
	{ .kind = SCN_ARG_NAMED_MGID, .offset = offsetof(T, f), \
	  .what = "an MGID", .max = (svc), .count_off = offsetof(T, opsf) }
#define SCN_A_CUSTOM(T, f, w, pa, pr, fl) \
	{ .kind = SCN_ARG_CUSTOM, .flags = (fl), .offset = offsetof(T, f), \
	  .what = (w), .parse = (pa), .print = (pr) }

/* The last argument of a verb whose other words are all options: a word
 * none of them takes is "unknown option 'W'; USAGE" (u); fr frees what
 * the options allocated. */
int scn_arg_unknown_parse(struct imc_scn_parser *p, const struct scn_arg *a,
			  const char *word, void *base);
#define SCN_A_UNKNOWN(u, fr) \
	{ .kind = SCN_ARG_CUSTOM, .flags = SCN_ARG_REST, .help = (u), \
	  .parse = scn_arg_unknown_parse, .free = (fr) }

/* A flow of packets' count= (at least 1), size= (bytes, at most
 * SCN_FLOW_SIZE_MAX) and interval=, in fields of those names. */
#define SCN_O_FLOW(T) \
	SCN_O_UINT("count", T, count, 1, 0), \
	SCN_O_UINT("size", T, size, 0, SCN_FLOW_SIZE_MAX), \
	SCN_O_TIME("interval", T, interval)
/* A flow's defaults: one datagram of 64 bytes, 1 us apart. */
#define SCN_FLOW_DEFAULTS \
	.count = 1, .size = 64, .interval = IMC_NSEC_PER_USEC
/* A flow to a multicast group: SCN_O_FLOW and sl= (IBA 7.6.5: service
 * levels are 4 bits), in a field sl. */
#define SCN_O_FLOW_SL(T) \
	SCN_O_FLOW(T), SCN_O_UINT("sl", T, sl, 0, 15)

/* The generic parse, print and free of a verb or subject described by
 * d. */
int scn_desc_parse(struct imc_scn_parser *p, const struct scn_desc *d,
		   unsigned argc, const char *const *argv, void **data);
void scn_desc_print(FILE *f, const struct imc_topo *t,
		    const struct scn_desc *d, const void *data);
void scn_desc_free(const struct scn_desc *d, void *data);

/* Copies the fields of the options in given (a bit per option of set)
 * from src to dst, two structs of the set's type (opt.c); a CUSTOM
 * option's field is its size bytes. */
void scn_opts_copy(const struct scn_optset *set, void *dst, const void *src,
		   uint64_t given);

/* A subject's named values ("joined", "timeout", ...): its value_parse
 * and value_format read one table. scn_named_parse() returns 0 or
 * -EINVAL; scn_named_str() the name of v, or NULL. */
struct scn_named {
	const char *name;
	uint64_t value;
};
int scn_named_parse(const struct scn_named *t, size_t n, const char *word,
		    uint64_t *v);
const char *scn_named_str(const struct scn_named *t, size_t n, uint64_t v);
/* Writes the name of v in t into buf, or, for a value without a name,
 * the number: "0x%04x" when hex, decimal otherwise. */
void scn_named_format(const struct scn_named *t, size_t n, uint64_t v,
		      bool hex, char *buf, size_t len);

/* The value_format of a LID: "0x%04x" (IBA 4.1.3 writes them so). */
void scn_lid_format(uint64_t v, char *buf, size_t len);

/* A subject's value_parse and value_format reading the table tab:
 * pre_value_parse and pre_value_format. */
#define SCN_NAMED_FUNCS(pre, tab, hex) \
	static int pre##_value_parse(const char *word, uint64_t *v) \
	{ return scn_named_parse(tab, sizeof(tab) / sizeof((tab)[0]), \
				 word, v); } \
	static void pre##_value_format(uint64_t v, char *buf, size_t len) \
	{ scn_named_format(tab, sizeof(tab) / sizeof((tab)[0]), v, hex, \
			   buf, len); }

/* A multicast LID word, 0xc000..0xfffe (IBA 4.1.3). */
int scn_mlid_parse(struct imc_scn_parser *p, const char *word,
		   uint16_t *mlid);

/* Static functions pre_parse, pre_print and pre_free of descriptor d. */
#define SCN_DESC_FUNCS(pre, d) \
	static int pre##_parse(struct imc_scn_parser *p, unsigned argc, \
			       const char *const *argv, void **data) \
	{ return scn_desc_parse(p, &(d), argc, argv, data); } \
	static void pre##_print(FILE *f, const struct imc_topo *t, \
				const void *data) \
	{ scn_desc_print(f, t, &(d), data); } \
	static void pre##_free(void *data) { scn_desc_free(&(d), data); }

/* The parse, print and free of a subject that takes no argument
 * (SCN_DESC_SUBJECT(nm, scn_bare, obs)). */
int scn_bare_parse(struct imc_scn_parser *p, unsigned argc,
		   const char *const *argv, void **data);
void scn_bare_print(FILE *f, const struct imc_topo *t, const void *data);
void scn_bare_free(void *data);

/* The initializer of a subject named nm observed by obs, whose parse,
 * print and free are pre_parse, pre_print and pre_free (e.g. from
 * SCN_DESC_FUNCS); SCN_NAMED_SUBJECT adds vpre_value_parse and
 * vpre_value_format (e.g. from SCN_NAMED_FUNCS). */
#define SCN_DESC_SUBJECT(nm, pre, obs) \
	{ .name = (nm), .parse = pre##_parse, .print = pre##_print, \
	  .observe = (obs), .free = pre##_free }
#define SCN_NAMED_SUBJECT(nm, pre, obs, vpre) \
	{ .name = (nm), .parse = pre##_parse, .print = pre##_print, \
	  .observe = (obs), .value_parse = vpre##_value_parse, \
	  .value_format = vpre##_value_format, .free = pre##_free }

/* A verb whose parse, print and free are descriptor d's: pre_verb. */
#define SCN_DESC_VERB(pre, nm, k, d, runfn) \
	SCN_DESC_FUNCS(pre, d) \
	static const struct imc_scn_verb pre##_verb = { \
		.name = (nm), .kind = (k), .parse = pre##_parse, \
		.print = pre##_print, .run = (runfn), .free = pre##_free, \
	}

#endif
