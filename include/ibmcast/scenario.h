/* Scenarios: small line-based scripts that build a fabric, act on it at
 * given virtual times and check what happened (docs/scenarios.md).
 *
 *   topology fat-tree:leaves=4,hosts=4,spines=2
 *   seed 7
 *   stop 20ms
 *   at 0 send H-1 H-9 count=100 interval=10us
 *   at 1ms link down L-2:5
 *   expect drops link_down in 1..20
 *
 * A scenario is parsed once (imc_scenario_parse*) and run any number of
 * times (imc_scenario_run); a run with the same seed gives the same result
 * and trace hash. The parser loads the topology first and resolves every
 * host and port name against it, so a bad name is a parse error naming
 * FILE:LINE.
 *
 * The words a line can start with come from a language (struct
 * imc_scn_lang): the built-in verbs and expectation subjects, plus any that
 * other modules add with imc_scn_lang_add_verb() and
 * imc_scn_lang_add_subject(). A verb is a name with a parse function (the
 * words after it -> private data) and a run function (that data, at the
 * line's time, against the running fabric); a subject is a name with a
 * parse function and an observe function that yields a number.
 */
#ifndef IBMCAST_SCENARIO_H
#define IBMCAST_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/common.h"
#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/pcap.h"
#include "ibmcast/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define IMC_SCN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IMC_SCN_PRINTF(a, b)
#endif

/* Q_Key of the QPs unicast traffic uses (a group's QPs take its own). */
#define IMC_SCN_QKEY 0x00001234u
/* Default stop time when the file has no stop line. */
#define IMC_SCN_STOP_DEFAULT IMC_NSEC_PER_SEC
/* Datagrams of scenario traffic start with this 12-byte header when they
 * are large enough: magic, flow number (the line's action index), sequence
 * number, each 32 bits big-endian. Receivers use it to count duplicates. */
#define IMC_SCN_MAGIC 0x494d4353u /* "IMCS" */
#define IMC_SCN_HDR_SIZE 12

struct imc_scenario;
struct imc_scn_lang;
struct imc_scn_parser;  /* parse state, handed to parse functions */
struct imc_scn_ctx;     /* a run's state, handed to run and observe */

/* ---- extending the language ---- */

enum imc_scn_verb_kind {
	/* No time; run (optional) is called once per run, in file order,
	 * after the fabric is created and before the SM's first sweep. */
	IMC_SCN_SETTING,
	/* Runs at the time of its line ("at TIME", or the time of the line
	 * before). */
	IMC_SCN_ACTION,
};

struct imc_scn_verb {
	const char *name;   /* [a-z][a-z0-9-]*, not "at" or "expect" */
	enum imc_scn_verb_kind kind;
	/* Parses argv[0..argc-1], the words after the verb, into *data
	 * (which the verb allocates; may stay NULL). Returns 0, or the
	 * value of imc_scn_parse_error(). */
	int (*parse)(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data);
	/* Writes the arguments back in a form parse accepts, each preceded
	 * by one space, without the verb and with no newline: parsing what
	 * it prints gives data that prints the same. */
	void (*print)(FILE *f, const struct imc_topo *t, const void *data);
	/* Does the work. Returns 0 or a negative errno; the run then stops
	 * and reports FILE:LINE with the message of imc_scn_fail() or the
	 * errno's text. May be NULL for a setting. */
	int (*run)(struct imc_scn_ctx *c, void *data);
	void (*free)(void *data);  /* may be NULL */
};

/* An expectation is "expect SUBJECT ARGS OP RIGHT"; OP is one of == !=
 * < <= > >= or "in A..B"; RIGHT is terms joined by "+" and "-", each a
 * number, a word the left subject's value_parse knows (e.g. "active"), or
 * another subject with its arguments, observed at the same time. */
struct imc_scn_subject {
	const char *name;   /* [a-z][a-z0-9-]* */
	/* The words between the subject and the operator. */
	int (*parse)(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data);
	void (*print)(FILE *f, const struct imc_topo *t, const void *data);
	int (*observe)(struct imc_scn_ctx *c, const void *data,
		       uint64_t *value);
	/* Named values: 0 and *value set, or -EINVAL. NULL: numbers only. */
	int (*value_parse)(const char *word, uint64_t *value);
	/* Text of a value; NULL: decimal. */
	void (*value_format)(uint64_t value, char *buf, size_t len);
	void (*free)(void *data);
	/* The subject's own constant, for subjects that share their
	 * functions (e.g. counters read at an offset): parse finds it in
	 * *data and replaces it with what print, observe and free get.
	 * NULL for most subjects. */
	const void *arg;
};

/* A language with the built-in verbs and subjects. Verbs and subjects
 * added later are referenced, not copied: they must outlive the language
 * and every scenario parsed with it. */
int imc_scn_lang_create(struct imc_scn_lang **out);
void imc_scn_lang_destroy(struct imc_scn_lang *l);

/* -EEXIST when the name is taken, -EINVAL for a bad name or a missing
 * function (parse always; print; run for an action; observe). */
int imc_scn_lang_add_verb(struct imc_scn_lang *l, const struct imc_scn_verb *v);
int imc_scn_lang_add_subject(struct imc_scn_lang *l,
			     const struct imc_scn_subject *s);

/* Looks a name up; NULL when absent. O(log n). */
const struct imc_scn_verb *imc_scn_lang_verb(const struct imc_scn_lang *l,
					     const char *name);
const struct imc_scn_subject *
imc_scn_lang_subject(const struct imc_scn_lang *l, const char *name);

/* ---- plugins ----
 *
 * A module of verbs (sa, mcast, ipoib, ...) hears of the run through
 * hooks, never by another module or the runner calling it by name. Each
 * hook may be NULL. start hooks run in ascending order after the
 * settings' run functions and before the fabric comes up; links_changed
 * after a verb changed cables (imc_scn_links_changed()); teardown hooks
 * in descending order at the end of the run (of every plugin once the
 * start hooks began, even when one failed), before run data
 * (imc_scn_data_set()) is freed, so a module may still use the state of
 * a module of lower order while it tears its own down. */
struct imc_scn_plugin {
	const char *name;   /* [a-z][a-z0-9-]*, once per language */
	int order;          /* the library's: sa 100, mcast 200, ipoib 300 */
	int (*start)(struct imc_scn_ctx *c);   /* 0 or -errno: fails the run */
	void (*links_changed)(struct imc_scn_ctx *c);
	void (*teardown)(struct imc_scn_ctx *c);
};

/* -EEXIST when the name is taken, -EINVAL for a bad name. Referenced,
 * not copied. */
int imc_scn_lang_add_plugin(struct imc_scn_lang *l,
			    const struct imc_scn_plugin *p);

/* Tells every plugin that cables changed (a link went down or up). */
void imc_scn_links_changed(struct imc_scn_ctx *c);

/* ---- the report ---- */

/* At the end of a run, before anything is freed, every report section of
 * the language is asked what its part of the run did: the SA's groups
 * and requests, the joins' latencies, the packets, ... A section writes
 * values (a tree of objects, lists, numbers and strings, for --json and
 * for programs: imc_scenario_report_u64()) and a few lines of text (for
 * the summary). A section whose module the run did not use writes
 * nothing and is left out of the report. */
struct imc_scn_report;

struct imc_scn_section {
	const char *name;   /* [a-z][a-z0-9-]*: the JSON key, the label */
	/* Place in the report: lower first, then by name. The library's:
	 * sa 100, mcast 150, joins 200, packets 300, ipoib 400; the
	 * expectations come last. */
	unsigned rank;
	/* Writes the section with the imc_scn_report_*() functions (run
	 * data, imc_scn_data(), is still there). Returns 0 or a negative
	 * errno, which fails the run. */
	int (*report)(struct imc_scn_ctx *c, struct imc_scn_report *rep);
};

/* -EEXIST when the name is taken, -EINVAL for a bad name or no report
 * function. The section is referenced, not copied. */
int imc_scn_lang_add_section(struct imc_scn_lang *l,
			     const struct imc_scn_section *s);

/* Writing a section. Values go into the current object or list: in an
 * object each needs a key ([a-z][a-z0-9_]*, once per object), in a list
 * none (NULL). imc_scn_report_object() and imc_scn_report_list() open a
 * nested one, imc_scn_report_end() closes it. Errors (a bad or repeated
 * key, no memory) are kept and returned when the section ends, so a
 * section may write without checking each call. */
void imc_scn_report_u64(struct imc_scn_report *rep, const char *key,
			uint64_t v);
void imc_scn_report_str(struct imc_scn_report *rep, const char *key,
			const char *s);
void imc_scn_report_object(struct imc_scn_report *rep, const char *key);
void imc_scn_report_list(struct imc_scn_report *rep, const char *key);
void imc_scn_report_end(struct imc_scn_report *rep);
/* One line of the section's text (no newline), at most 200 bytes. */
void imc_scn_report_line(struct imc_scn_report *rep, const char *fmt, ...)
	IMC_SCN_PRINTF(2, 3);

/* ---- helpers for parse functions ---- */

/* Records "FILE:LINE: VERB: message" as the parse error and returns
 * -EINVAL, for "return imc_scn_parse_error(p, ...)". */
int imc_scn_parse_error(struct imc_scn_parser *p, const char *fmt, ...)
	IMC_SCN_PRINTF(2, 3);

/* The topology names resolve against. */
const struct imc_topo *imc_scn_parser_topo(const struct imc_scn_parser *p);

/* "NAME:PORT", or "NAME" alone: an HCA's first cabled port, a switch's
 * port 0. A whole-word name match comes first, so names may hold ':'.
 * imc_scn_parse_host() also requires an HCA. Errors are reported through
 * p: unknown name, switch named as host, port out of range or (with
 * cabled) not cabled. */
int imc_scn_parse_port(struct imc_scn_parser *p, const char *word,
		       bool cabled, uint32_t *node, unsigned *port);
int imc_scn_parse_host(struct imc_scn_parser *p, const char *word,
		       uint32_t *node, unsigned *port);

/* A set of hosts: "all" (every HCA with a cabled port), "FIRST..LAST"
 * (the HCAs from FIRST to LAST, both included), or one host as
 * imc_scn_parse_host() reads it. In node order (the topology's; H-000001,
 * H-000002, ... for a generated one), each HCA as its first cabled port.
 * Free with imc_scn_hosts_free(); print back with imc_scn_print_hosts(). */
struct imc_scn_host {
	uint32_t node;
	unsigned port;
};

enum imc_scn_hosts_form {
	IMC_SCN_HOSTS_ONE,       /* a host */
	IMC_SCN_HOSTS_ALL,       /* "all" */
	IMC_SCN_HOSTS_RANGE,     /* "FIRST..LAST" */
};

struct imc_scn_hosts {
	uint32_t n;
	struct imc_scn_host *h;  /* n of them */
	enum imc_scn_hosts_form form;   /* as written, for printing */
};

int imc_scn_parse_hosts(struct imc_scn_parser *p, const char *word,
			struct imc_scn_hosts *out);
void imc_scn_print_hosts(FILE *f, const struct imc_topo *t,
			 const struct imc_scn_hosts *hs);
void imc_scn_hosts_free(struct imc_scn_hosts *hs);

/* Values. Each reports a bad word through p when p is not NULL, and
 * returns 0, -EINVAL (bad syntax) or -ERANGE. what names the value in the
 * message ("count", "size", ...). */
/* Decimal or 0x hexadecimal, at most max. */
int imc_scn_parse_uint(struct imc_scn_parser *p, const char *what,
		       const char *word, uint64_t max, uint64_t *out);
/* NUMBER[.FRACTION]UNIT with UNIT ns, us, ms or s, or a bare 0; exact in
 * nanoseconds; at most IMC_TIME_LIMIT (-ERANGE beyond). */
int imc_scn_parse_time(struct imc_scn_parser *p, const char *what,
		       const char *word, imc_time_t *out);
/* A probability, 0 or 1e-9..1, as a fraction (0.05) or a percentage
 * (5%). */
int imc_scn_parse_prob(struct imc_scn_parser *p, const char *what,
		       const char *word, double *out);
/* A rate in bits per second: NUMBER[.FRACTION] with bps, Kbps, Mbps, Gbps
 * or Tbps (powers of 1000), or a bare integer. */
int imc_scn_parse_bps(struct imc_scn_parser *p, const char *what,
		      const char *word, uint64_t *out);

/* True when word is "key=VALUE"; *value then points at VALUE. */
bool imc_scn_kv(const char *word, const char *key, const char **value);

/* Printing in the forms the parsers read. */
void imc_scn_print_time(FILE *f, imc_time_t t);
void imc_scn_print_prob(FILE *f, double p);
/* "NAME:PORT", quoting NAME when it holds a space, '#', '"' or ':'. */
void imc_scn_print_port(FILE *f, const struct imc_topo *t, uint32_t node,
			unsigned port);
/* The largest unit that keeps t exact: "0", "250ns", "10us", "3ms",
 * "2s". Returns the length written (at most 24 with the NUL). */
int imc_scn_format_time(imc_time_t t, char *buf, size_t len);

/* ---- helpers for run and observe functions ---- */

struct imc_fabric *imc_scn_fabric(struct imc_scn_ctx *c);
struct imc_loop *imc_scn_loop(struct imc_scn_ctx *c);
const struct imc_topo *imc_scn_topo(struct imc_scn_ctx *c);
/* The fabric configuration of this run (seed override applied). */
const struct imc_fabric_config *imc_scn_config(struct imc_scn_ctx *c);
/* Scenario time: the loop's time since the run started (the loop's own
 * time on the run's virtual loop; on a caller's loop, time since t0). */
imc_time_t imc_scn_now(struct imc_scn_ctx *c);

/* The scenario's UD QP on an HCA port for a P_Key and Q_Key, created on
 * first use; QPNs follow the order of first use, so they are the same in
 * every run. Datagrams it receives count as delivered to the host. The
 * run owns it. -EINVAL when pkey is not in the port's table, -ENOSPC past
 * IMC_SCN_HOST_QPS QPs on one port. */
#define IMC_SCN_HOST_QPS 32
int imc_scn_qp(struct imc_scn_ctx *c, uint32_t node, unsigned port,
	       uint16_t pkey, uint32_t qkey, struct imc_qp **out);

/* Counts one datagram sent (or refused, err < 0) by the host node:port,
 * for verbs that send through imc_scn_qp() QPs. */
void imc_scn_count_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
			int err);

/* Sets the message reported for the failing line; returns err. */
int imc_scn_fail(struct imc_scn_ctx *c, int err, const char *fmt, ...)
	IMC_SCN_PRINTF(3, 4);

/* State a verb keeps for the length of one run, found by key (any
 * pointer the verb owns, e.g. its parse data). free runs when the run
 * ends, before the fabric is destroyed, last set first (state set later
 * may use state set before it).
 * imc_scn_data_set returns -EEXIST for a key already set. O(1). */
void *imc_scn_data(struct imc_scn_ctx *c, const void *key);
int imc_scn_data_set(struct imc_scn_ctx *c, const void *key, void *data,
		     void (*free)(void *data));

/* ---- parsing ---- */

struct imc_scenario_parse_opts {
	const struct imc_scn_lang *lang; /* NULL: the built-in language */
	/* Not NULL: use this topology (the caller keeps it alive while the
	 * scenario lives); a topology line is then optional and only
	 * checked, not loaded. */
	const struct imc_topo *topo;
	/* Directory for relative net-file paths; NULL: the directory of the
	 * file name given to the parser. */
	const char *dir;
};

/* Parses a scenario. On error returns a negative errno and writes
 * "FILE:LINE: what was expected" into err (when not NULL). opts may be
 * NULL. The scenario is freed with imc_scenario_destroy(). */
int imc_scenario_parse_file(const char *path,
			    const struct imc_scenario_parse_opts *opts,
			    struct imc_scenario **out, char *err,
			    size_t errlen);
/* The same from len bytes of text; name stands for the file in messages
 * (and its directory for net-file paths). */
int imc_scenario_parse(const char *text, size_t len, const char *name,
		       const struct imc_scenario_parse_opts *opts,
		       struct imc_scenario **out, char *err, size_t errlen);
void imc_scenario_destroy(struct imc_scenario *s);

/* Writes s in canonical form (every setting, then the timed lines, then
 * the expectations at the end; full port names; exact units). Parsing the
 * output gives a scenario that prints the same. */
void imc_scenario_print(const struct imc_scenario *s, FILE *f);

const char *imc_scenario_name(const struct imc_scenario *s);
/* The topology line's argument: a generator spec or "file PATH". */
const char *imc_scenario_topo_desc(const struct imc_scenario *s);
const struct imc_topo *imc_scenario_topo(const struct imc_scenario *s);
uint64_t imc_scenario_seed(const struct imc_scenario *s);
imc_time_t imc_scenario_stop(const struct imc_scenario *s);
/* Fabric configuration from the seed, fabric and links lines. */
void imc_scenario_config(const struct imc_scenario *s,
			 struct imc_fabric_config *out);
unsigned imc_scenario_nactions(const struct imc_scenario *s);
unsigned imc_scenario_nexpects(const struct imc_scenario *s);

/* ---- running ---- */

struct imc_scenario_run_opts {
	bool seed_set;           /* use seed instead of the file's */
	uint64_t seed;
	bool until_set;          /* stop at until instead of the file's */
	imc_time_t until;
	struct imc_pcap *pcap;   /* not NULL: capture every port into it */
	/* Called between slices of the run (a few times per wall-clock
	 * second of a long run) with the virtual time and loop events so
	 * far. May be NULL. */
	void (*progress)(void *ctx, imc_time_t now, uint64_t events);
	/* Wall clock in ns for result.wall_ns; NULL leaves it 0. The
	 * library never reads a clock itself. */
	uint64_t (*wall_clock)(void *ctx);
	/* Not NULL: run on this loop instead of a virtual loop of the
	 * run's own, e.g. a real-time loop (`ibmcast up`). The caller keeps
	 * it; scenario time 0 is the loop's time when the run starts, and
	 * result.leftover counts what is still armed or watched on it once
	 * the run has freed everything. */
	struct imc_loop *loop;
	/* Not NULL: called once the SM's first sweep is done and every
	 * action of time 0 has run, with the running context, so that the
	 * caller can attach its own objects to the fabric; a negative
	 * return ends the run with that error. ending (required with
	 * started) is then called when the run ends, however it ends,
	 * before the run frees anything. */
	int (*started)(void *ctx, struct imc_scn_ctx *c);
	void (*ending)(void *ctx, struct imc_scn_ctx *c);
	/* Not NULL: asked between slices of the run; true ends the run
	 * there, as if --until had been reached (expectations after it are
	 * skipped). With a real-time loop, imc_loop_wake() from a signal
	 * handler cuts the current slice short. */
	bool (*interrupted)(void *ctx);
	void *ctx;
	/* A scenario with an opensm line: how long OpenSM may take to
	 * bring the subnet up (0: the line's wait=, else 60 s). */
	imc_time_t sm_wait;
};

enum imc_scn_check_state {
	IMC_SCN_CHECK_PASS,
	IMC_SCN_CHECK_FAIL,
	IMC_SCN_CHECK_SKIPPED,   /* its time is after the end of the run */
};

struct imc_scenario_check {
	unsigned line;
	const char *text;        /* "delivered H-2 == 100" */
	bool at_end;             /* no "at": checked when the run ends */
	imc_time_t at;           /* when it was checked */
	enum imc_scn_check_state state;
	uint64_t observed;
	char observed_str[64];   /* "95", "active", "95 vs 100" */
};

struct imc_scenario_host {
	uint32_t node;
	unsigned port;
	const char *name;        /* owned by the topology */
	uint64_t sent;           /* datagrams imc_qp_send accepted */
	uint64_t send_errors;    /* datagrams it refused */
	uint64_t delivered;      /* datagrams received */
	uint64_t dups;           /* received again (same flow and sequence) */
};

struct imc_scenario_result {
	uint64_t seed;
	imc_time_t end;          /* virtual time reached */
	uint64_t events;         /* loop callbacks run */
	uint64_t trace_hash;
	uint64_t wall_ns;
	struct imc_fabric_totals totals;
	unsigned nchecks, npassed, nfailed, nskipped;
	struct imc_scenario_check *checks;   /* in file order */
	unsigned nhosts;
	struct imc_scenario_host *hosts;     /* hosts with a QP, by node, port */
	/* Timers still armed in the loop once the run had freed everything
	 * (QPs, flows, the fabric): 0 unless something leaks. */
	size_t leftover;
	/* What the run's parts did (see "the report" above); read it with
	 * imc_scenario_report_*(). */
	struct imc_scn_report *report;
};

/* Runs s once: a virtual loop from time 0, the fabric, the SM's first
 * sweep, each action at its time, each expectation checked after every
 * event of its time, until the stop time. Returns 0 when the run
 * completed (r->nfailed tells whether every expectation held), or a
 * negative errno with "FILE:LINE: ..." in err when it could not (a
 * failing action, no memory); r is then empty. Free r with
 * imc_scenario_result_free() before s: its strings are s's. opts may be
 * NULL. */
int imc_scenario_run(const struct imc_scenario *s,
		     const struct imc_scenario_run_opts *opts,
		     struct imc_scenario_result *r, char *err, size_t errlen);
void imc_scenario_result_free(struct imc_scenario_result *r);

/* A value of the report by path: section, then keys and list indexes
 * joined by dots ("sa.groups", "joins.first.p50_ns", "sa.list.0.mgid").
 * imc_scenario_report_u64() returns 0 and the number, -ENOENT (no such
 * path) or -EINVAL (not a number); imc_scenario_report_str() the string
 * or NULL; imc_scenario_report_len() the entries of an object or list
 * (a section's, with its name alone), 0 when there is none. O(log n) per
 * step. */
int imc_scenario_report_u64(const struct imc_scenario_result *r,
			    const char *path, uint64_t *out);
const char *imc_scenario_report_str(const struct imc_scenario_result *r,
				    const char *path);
size_t imc_scenario_report_len(const struct imc_scenario_result *r,
			       const char *path);

/* Writes the report: as text, "report" and each section's lines under
 * its name; as JSON, one object with a key per section (no newline at
 * the end). Returns 0, or -EIO when f reports an error. */
int imc_scenario_report_print(const struct imc_scenario_result *r, FILE *f,
			      bool json);

#ifdef __cplusplus
}
#endif
#endif
