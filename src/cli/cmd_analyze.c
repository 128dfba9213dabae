/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_analyze.c - `heapref analyze`, `why`, `retained` and `goroutines`: the options, the
 * inputs (a dump, a core, or --pid's process), one analysis (analysis.h) asked for what
 * the command shows, and its answer: the chain tree or a view of it as a pprof profile
 * (or, with --text, a condensed text report) through a temporary file renamed into
 * place, and a summary on stderr; why's paths; the retained sizes; the goroutines.
 * analysis_run(), one BINARY DUMP pair read and analysed, serves `diff` and `hprof` too.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "inputs.h"
#include "heapref/binary.h"
#include "heapref/core.h"
#include "heapref/chains.h"
#include "heapref/dump.h"
#include "heapref/writers.h"
#include "outputs.h"
#include "stats.h"

/* The commands that run the analysis: what they add to it. */
enum mode { MODE_ANALYZE, MODE_WHY, MODE_RETAINED, MODE_GOROUTINES, MODE_SUSPECTS };

static const char *const mode_names[] = { "analyze", "why", "retained", "goroutines",
					  "suspects" };

struct analyze_args {
	enum mode mode;
	bool why;             /* heapref why: addresses after BINARY DUMP */
	const char *binary;
	const char *dump;
	int pid;              /* --pid: a running process instead of DUMP */
	const char *save_core; /* --save-core */
	enum hr_pause_mode pause_mode; /* --pause-mode */
	char **addresses;
	int naddresses;
	const char *output;
	struct output *out;   /* the output prepared for it (analyze) */
	const char *binary_name; /* what to call the binary: /proc/PID/exe for --pid */
	uint32_t max_depth;
	unsigned threads;     /* --threads (0: one per processor) */
	double cutoff_percent;
	bool text;
	bool by_index;
	bool full_chains;
	bool stats;
	bool force;
	bool by_dominator;    /* --attribution dominator */
	bool by_alloc;        /* --by-alloc */
	bool by_type;         /* --by-type */
	bool types_first;     /* --types-first */
	bool goroutine_labels; /* --goroutine-labels, or by default (labels() says) */
	bool no_goroutine_labels; /* --no-goroutine-labels */
	unsigned paths;       /* why -n */
	unsigned examples;    /* --examples */
	struct hr_retained_options retained;
	enum hr_suspects_format suspects_format; /* suspects --format */
	double threshold;     /* suspects --threshold */
	const char *baseline_binary, *baseline_dump; /* suspects --baseline */
};



static int usage_error(const struct analyze_args *a, const char *what)
{
	return cli_usage_error(mode_names[a->mode], "%s", what);
}


/* A number from 0 to 100, with an optional % sign. */
static bool parse_percent(const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end != text && *end == '%')
		end++;
	if (errno || end == text || *end || !(v >= 0.0 && v <= 100.0))
		return false;
	*out = v;
	return true;
}

static bool parse_number(const char *text, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(text, &end, 10);
	return !errno && end != text && !*end && text[0] != '-' && *out <= max;
}

/* The values of the options that take one, as cli_parse() found them (NULL: not given). */
struct option_values {
	const char *max_depth, *cutoff, *n, *format, *examples, *attribution, *pid, *threads;
	const char *threshold, *pause_mode;
};

/* --pid, --save-core and --pause-mode, of every command that reads a running process. */
static int check_process_options(struct analyze_args *a, const struct option_values *v)
{
	const char *cmd = mode_names[a->mode];
	unsigned long n;

	if (v->pid && (!parse_number(v->pid, INT32_MAX, &n) || n == 0))
		return cli_usage_error(cmd, "--pid takes a process id, not %s", v->pid);
	a->pid = v->pid ? (int)n : 0;
	if (a->save_core && (!a->pid || !a->save_core[0]))
		return usage_error(a, "--save-core FILE goes with --pid");
	if (v->pause_mode && strcmp(v->pause_mode, "auto") && strcmp(v->pause_mode, "stop"))
		return cli_usage_error(cmd, "--pause-mode takes auto or stop, not %s", v->pause_mode);
	if (v->pause_mode && !a->pid)
		return usage_error(a, "--pause-mode goes with --pid");
	a->pause_mode = v->pause_mode && !strcmp(v->pause_mode, "stop") ? HR_PAUSE_STOP
									 : HR_PAUSE_AUTO;
	return ST_OK;
}

/* suspects' own options: --format, --threshold; then --pid and --save-core as the others'. */
static int check_suspects_options(struct analyze_args *a, const struct option_values *v)
{
	if (v->format && strcmp(v->format, "text") && strcmp(v->format, "json") &&
	    strcmp(v->format, "html"))
		return cli_usage_error("suspects", "--format takes text, json or html, not %s",
				       v->format);
	a->suspects_format = !v->format || !strcmp(v->format, "text") ? HR_SUSPECTS_TEXT
			     : !strcmp(v->format, "json")		  ? HR_SUSPECTS_JSON
									  : HR_SUSPECTS_HTML;
	if (v->threshold && !parse_percent(v->threshold, &a->threshold))
		return cli_usage_error("suspects", "--threshold takes a percentage, 0 to 100, not %s",
				       v->threshold);
	return check_process_options(a, v);
}

/* The options' values, checked; then what goes with what. */
static int check_options(struct analyze_args *a, const struct option_values *v)
{
	const char *cmd = mode_names[a->mode];
	unsigned long n;

	if (a->output && !a->output[0])
		return usage_error(a, "-o takes a file name");
	if (v->max_depth && !parse_number(v->max_depth, UINT32_MAX, &n))
		return cli_usage_error(cmd, "--max-depth takes a number, not %s", v->max_depth);
	a->max_depth = v->max_depth ? (uint32_t)n : a->max_depth;
	if (v->threads && (!parse_number(v->threads, 64, &n) || !n))
		return cli_usage_error(cmd, "--threads takes a number, 1 to 64, not %s", v->threads);
	a->threads = v->threads ? (unsigned)n : 0;
	if (v->cutoff && !parse_percent(v->cutoff, &a->cutoff_percent))
		return cli_usage_error(cmd, "--cutoff takes a percentage, 0 to 100, not %s",
				       v->cutoff);
	if ((v->cutoff || a->by_index) && !a->text)
		return usage_error(a, "--cutoff and --by-index are for the text report (--text)");
	if (v->n && !parse_number(v->n, 1000000000, &n))
		return cli_usage_error(cmd, "-n takes a number, not %s", v->n);
	if (v->n) {
		a->retained.top = n;
		a->paths = n > 1000 ? 1000 : (unsigned)n;
	}
	if (a->mode == MODE_SUSPECTS)
		return check_suspects_options(a, v);
	if (v->format && strcmp(v->format, "text") && strcmp(v->format, "tsv"))
		return cli_usage_error(cmd, "--format takes text or tsv, not %s", v->format);
	a->retained.tsv = v->format && !strcmp(v->format, "tsv");
	if (v->examples && !parse_number(v->examples, HR_CHAINS_EXAMPLES_MAX, &n))
		return cli_usage_error(cmd, "--examples takes a number, 0 to 16, not %s",
				       v->examples);
	a->examples = v->examples ? (unsigned)n : 0;
	if (v->attribution && strcmp(v->attribution, "first") && strcmp(v->attribution, "dominator"))
		return cli_usage_error(cmd, "--attribution takes first or dominator, not %s",
				       v->attribution);
	a->by_dominator = v->attribution && !strcmp(v->attribution, "dominator");
	if ((a->by_alloc || a->by_type || a->types_first) && (a->by_dominator || a->examples))
		return usage_error(a, "--by-alloc, --by-type and --types-first go with neither "
				      "--attribution dominator nor --examples");
	if (a->goroutine_labels && (a->text || a->by_dominator || a->by_alloc || a->by_type ||
				    a->types_first))
		return usage_error(a, "--goroutine-labels is for the profile of the chains as they "
				      "are: not with --text or another view");
	if (a->goroutine_labels && a->no_goroutine_labels)
		return usage_error(a, "--goroutine-labels or --no-goroutine-labels, not both");
	/* on by default for the profile of the chains as they are */
	a->goroutine_labels = a->mode == MODE_ANALYZE && !a->no_goroutine_labels && !a->text &&
			      !a->by_dominator && !a->by_alloc && !a->by_type && !a->types_first;
	if ((a->by_type || a->types_first) + a->by_alloc > 1 || (a->by_type && a->types_first))
		return usage_error(a, "one view at a time: --by-alloc, --by-type or --types-first");
	return check_process_options(a, v);
}

/*
 * With --pid there is no DUMP, and the binary is optional (/proc/PID/exe): the first
 * operand is the binary if a file of that name exists (why's addresses and types are
 * never file names).
 */
static int check_process_operands(struct analyze_args *a, int n, char **argv)
{
	int first = n > 0 && access(argv[0], F_OK) == 0 && (a->mode != MODE_WHY || n > 1);
	uint64_t addr;

	if (a->mode == MODE_WHY ? n - first < 1 : n - first > 0)
		return a->mode == MODE_WHY
			       ? usage_error(a, "why --pid PID takes addresses or types (after the "
					     "binary, if given)")
			       : cli_usage_error(mode_names[a->mode], "with --pid, %s takes at "
						 "most the binary", mode_names[a->mode]);
	for (int i = first; i < n; i++)
		if (isdigit((unsigned char)argv[i][0]) && !cli_parse_address(argv[i], &addr))
			return cli_usage_error("why", "not an address: %s (addresses are numbers, "
					       "like 0xc000012340)", argv[i]);
	a->binary = first ? argv[0] : NULL;
	a->addresses = argv + first;
	a->naddresses = n - first;
	return ST_OK;
}

/*
 * The operands: BINARY DUMP, then why's addresses or type names. analyze, retained and
 * goroutines also take a DUMP alone, which must be one whose records name types.
 */
static int check_operands(struct analyze_args *a, int n, char **argv)
{
	uint64_t addr;

	if (n == 1 && a->mode != MODE_WHY && hr_input_kind_of(argv[0]) != HR_INPUT_ELF) {
		a->dump = argv[0]; /* a program alone is a binary missing its dump */
		return ST_OK;
	}
	if (n < 2 || (a->mode == MODE_WHY && n == 2) || (a->mode != MODE_WHY && n > 2))
		return a->mode == MODE_WHY
			       ? usage_error(a, "why takes a binary, a heap dump and addresses or types")
			       : cli_usage_error(mode_names[a->mode], "%s takes a binary and a heap dump",
						 mode_names[a->mode]);
	/* an address, or a type name (which never starts with a digit) */
	for (int i = 2; i < n; i++)
		if (isdigit((unsigned char)argv[i][0]) && !cli_parse_address(argv[i], &addr))
			return cli_usage_error("why", "not an address: %s (addresses are numbers, "
					       "like 0xc000012340)", argv[i]);
	a->binary = argv[0];
	a->dump = argv[1];
	a->addresses = argv + 2;
	a->naddresses = n - 2;
	return ST_OK;
}

/*
 * The arguments of analyze, why (then the operands after BINARY DUMP are addresses or
 * types) or retained. Options may come anywhere; each command takes its own.
 */
/*
 * suspects --baseline OLD_BINARY OLD_DUMP: the one option with two values, taken out of
 * argv (argc updated) before the others are parsed.
 */
static int take_baseline(int *argc, char **argv, struct analyze_args *a)
{
	for (int i = 0; i < *argc && strcmp(argv[i], "--"); i++) {
		if (strcmp(argv[i], "--baseline"))
			continue;
		if (a->baseline_binary)
			return usage_error(a, "--baseline is given once");
		if (i + 2 >= *argc || !argv[i + 1][0] || !argv[i + 2][0] ||
		    argv[i + 1][0] == '-' || argv[i + 2][0] == '-')
			return usage_error(a, "--baseline takes OLD_BINARY OLD_DUMP");
		a->baseline_binary = argv[i + 1];
		a->baseline_dump = argv[i + 2];
		memmove(argv + i, argv + i + 3, (size_t)(*argc - i - 3) * sizeof(*argv));
		*argc -= 3;
		i--;
	}
	return ST_OK;
}

static int parse_args(int argc, char **argv, enum mode mode, struct analyze_args *a)
{
	struct option_values v = { 0 };
	const struct cli_opt common[] = {
		{ "--full-chains", NULL, &a->full_chains, NULL },
		{ "--max-depth", NULL, NULL, &v.max_depth },
		{ "--threads", NULL, NULL, &v.threads },
		{ "--stats", NULL, &a->stats, NULL },
		{ "--force", NULL, &a->force, NULL },
		{ "--pid", NULL, NULL, &v.pid },
		{ "--save-core", NULL, NULL, &a->save_core },
		{ "--pause-mode", NULL, NULL, &v.pause_mode },
	};
	const struct cli_opt analyze_only[] = {
		{ "--output", "-o", NULL, &a->output },
		{ "--text", NULL, &a->text, NULL },
		{ "--cutoff", NULL, NULL, &v.cutoff },
		{ "--by-index", NULL, &a->by_index, NULL },
		{ "--examples", NULL, NULL, &v.examples },
		{ "--attribution", NULL, NULL, &v.attribution },
		{ "--by-alloc", NULL, &a->by_alloc, NULL },
		{ "--by-type", NULL, &a->by_type, NULL },
		{ "--types-first", NULL, &a->types_first, NULL },
		{ "--goroutine-labels", NULL, &a->goroutine_labels, NULL },
		{ "--no-goroutine-labels", NULL, &a->no_goroutine_labels, NULL },
	};
	const struct cli_opt why_only[] = { { "-n", NULL, NULL, &v.n } };
	const struct cli_opt retained_only[] = { { "-n", NULL, NULL, &v.n },
						 { "--format", NULL, NULL, &v.format } };
	const struct cli_opt goroutines_only[] = { { "--format", NULL, NULL, &v.format } };
	const struct cli_opt suspects_only[] = { { "--format", NULL, NULL, &v.format },
						 { "--output", "-o", NULL, &a->output },
						 { "--threshold", NULL, NULL, &v.threshold } };
	struct cli_opt opts[24];
	int nopts = (int)(sizeof(common) / sizeof(common[0])), n, rc;

	*a = (struct analyze_args){ .mode = mode, .why = mode == MODE_WHY, .max_depth = 256,
				    .cutoff_percent = 1.0, .retained = { .top = 20 }, .paths = 1,
				    .threshold = 10.0 };
	memcpy(opts, common, sizeof(common));
	if (mode == MODE_ANALYZE) {
		memcpy(opts + nopts, analyze_only, sizeof(analyze_only));
		nopts += (int)(sizeof(analyze_only) / sizeof(analyze_only[0]));
	} else if (mode == MODE_WHY) {
		opts[nopts++] = why_only[0];
	} else if (mode == MODE_RETAINED) {
		memcpy(opts + nopts, retained_only, sizeof(retained_only));
		nopts += 2;
	} else if (mode == MODE_SUSPECTS) {
		memcpy(opts + nopts, suspects_only, sizeof(suspects_only));
		nopts += (int)(sizeof(suspects_only) / sizeof(suspects_only[0]));
	} else {
		opts[nopts++] = goroutines_only[0];
	}
	if (mode == MODE_SUSPECTS && (rc = take_baseline(&argc, argv, a)))
		return rc;
	rc = cli_parse(mode_names[mode], argc, argv, opts, nopts, &n);
	if (rc || (rc = check_options(a, &v)))
		return rc;
	if ((rc = a->pid ? check_process_operands(a, n, argv) : check_operands(a, n, argv)))
		return rc;
	if (!a->output)
		a->output = a->text || mode == MODE_SUSPECTS ? "-" : "heapref.pb.gz";
	return ST_OK;
}

/* --- progress on a terminal ----------------------------------------------------------- */

struct progress {
	struct timespec start;
	bool shown;
};

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void show_progress(void *arg, const char *phase, uint64_t done, uint64_t total)
{
	struct progress *p = arg;

	if (since(&p->start) < 1.0)
		return;
	fprintf(stderr, "\rheapref: %s: %" PRIu64 " of %" PRIu64 " objects reached (%.0f%%)  ",
		phase, done, total, total ? 100.0 * (double)done / (double)total : 100.0);
	p->shown = true;
}

static void end_progress(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

/* --- output ----------------------------------------------------------------------------- */

/* Puts the name of the output before a writer's message, which cannot know it. */
static int name_output(struct hr_error *err, const char *name)
{
	char msg[HR_ERROR_MAX];
	int code = err->code;

	snprintf(msg, sizeof(msg), "%s", err->msg);
	err->code = HR_OK;
	return hr_error_set(err, code, "%s: %s", name, msg);
}

static int write_report(FILE *out, const struct analyze_args *a, const struct hr_chains *tree,
			struct hr_error *err)
{
	struct hr_chains *folded;
	int rc;

	if (a->by_index)
		return hr_write_chain_report(out, tree, a->cutoff_percent, err);
	if (!(folded = hr_chains_fold_elements(tree)))
		return hr_error_set(err, HR_ENOMEM, "out of memory for the report");
	rc = hr_write_chain_report(out, folded, a->cutoff_percent, err);
	hr_chains_free(folded);
	return rc;
}

struct profile_output {
	const struct analyze_args *a;
	const struct hr_chains *tree;
	const struct hr_pprof_options *pprof;
};

static int write_output(FILE *out, void *ctx, struct hr_error *err)
{
	const struct profile_output *o = ctx;

	return o->a->text ? write_report(out, o->a, o->tree, err)
			  : hr_write_pprof(out, o->tree, o->pprof, err);
}

/*
 * Writes the profile or report to its output (prepared before the analysis): through a
 * temporary file renamed into place for a regular file, so a failure leaves no partial
 * file and an existing file untouched. Any failure here is an output failure (exit
 * status 3).
 */
static int write_profile(const struct analyze_args *a, struct output *out,
			 const struct hr_chains *tree, const struct hr_pprof_options *pprof,
			 struct hr_error *err)
{
	struct profile_output o = { a, tree, pprof };

	return output_write(out, write_output, &o, err);
}

/* --- summary ---------------------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/*
 * How many goroutines are leaked (leaks.h) and what they hold: the heap their stacks
 * reached first and their stacks; nothing without the verdicts (--no-goroutine-labels).
 */
static void print_leaks(const struct hr_analysis *an)
{
	const struct hr_goroutine_leaks *l = an->leaks;
	size_t n;
	const struct hr_goroutine_share *sh = hr_result_shares(an->result, &n);
	uint64_t heap = 0, stacks = 0;

	if (!l)
		return;
	for (size_t i = 0; i < n; i++)
		if (sh[i].goroutine && sh[i].goroutine <= l->count &&
		    l->verdict[sh[i].goroutine - 1] == HR_LEAK_YES)
			heap += sh[i].bytes;
	for (size_t i = 0; i < l->count; i++)
		stacks += l->verdict[i] == HR_LEAK_YES ? l->stack_bytes[i] : 0;
	fprintf(stderr, "heapref: goroutines: %zu, %zu leaked", l->count, l->leaked);
	if (l->leaked)
		fprintf(stderr, " holding %" PRIu64 " heap bytes their stacks reached first and %"
			PRIu64 " bytes of stacks (-tagfocus=leaked=yes; heapref goroutines)", heap,
			stacks);
	if (l->unknown)
		fprintf(stderr, ", %zu that the snapshot cannot judge", l->unknown);
	fputc('\n', stderr);
}

static void print_summary(const struct hr_dump *dump, const struct hr_scan_summary *s,
			  const struct hr_chains *tree, const char *output, double seconds)
{
	uint64_t objs = s->typed_objects + s->fallback_objects;
	uint64_t bytes = s->typed_bytes + s->fallback_bytes;
	bool first = true;
	char what[128];

	hr_dump_describe(dump, what, sizeof(what));
	fprintf(stderr, "heapref: %s: %" PRIu64 " objects, %" PRIu64 " bytes\n", what,
		s->total_objects, s->total_bytes);
	fputs("heapref: roots:", stderr);
	for (unsigned k = 0; k < HR_ROOT_KIND_COUNT; k++) {
		if (!s->roots[k])
			continue;
		fprintf(stderr, "%s %" PRIu64 " %s", first ? "" : ",", s->roots[k],
			hr_root_kind_name(k));
		first = false;
	}
	fputs(first ? " none\n" : "\n", stderr);
	fprintf(stderr,
		"heapref: reachable: %" PRIu64 " objects, %" PRIu64 " bytes; by type %.1f%% of "
		"bytes (%" PRIu64 " objects), by fallback %.1f%% (%" PRIu64 " objects)\n",
		objs, bytes, pct(s->typed_bytes, bytes), s->typed_objects,
		pct(s->fallback_bytes, bytes), s->fallback_objects);
	fprintf(stderr,
		"heapref: unreachable: %" PRIu64 " objects, %" PRIu64 " bytes (no root reaches "
		"them: garbage since the last GC, or runtime bookkeeping)\n",
		s->unreachable_objects, s->unreachable_bytes);
	if (s->static_objects)
		fprintf(stderr, "heapref: %" PRIu64 " objects the compiler allocated in data or bss "
			"walked by the type of the pointer to them\n", s->static_objects);
	if (s->skipped_vars)
		fprintf(stderr, "heapref: %" PRIu64 " frame variables live in registers or in "
			"locations heapref does not evaluate; their words are named after the function\n",
			s->skipped_vars);
	fprintf(stderr, "heapref: wrote %s: %zu chain nodes, in %.2f s\n",
		strcmp(output, "-") ? output : "standard output", hr_chains_count(tree) - 1, seconds);
}

/* --- do the inputs go together? --------------------------------------------------------- */

/*
 * The easiest mistake with two file arguments: a usage error, said in one line before
 * either file is read (the dump reader would only say the dump is not a dump).
 */
bool inputs_swapped(const char *command, const char *binary, const char *dump)
{
	enum hr_input_kind b = hr_input_kind_of(binary);

	if (hr_input_kind_of(dump) != HR_INPUT_ELF || (b != HR_INPUT_DUMP && b != HR_INPUT_CORE))
		return false;
	fprintf(stderr, "heapref: the arguments are the wrong way round: %s is an ELF executable "
		"and %s a %s (%s takes BINARY, then DUMP)\n", dump, binary,
		b == HR_INPUT_CORE ? "core file" : "heap dump", command);
	return true;
}

/* --- the command ------------------------------------------------------------------------- */

/*
 * heapref why: each address's object, its chain and the paths leading to it, or each
 * type's biggest objects. ST_OK, ST_INPUT (err set) when some address or type had no
 * answer (in no object, reached by no root, no object of the type), or ST_RESOURCES.
 */
static int write_paths(const struct analyze_args *a, const struct analysis *an,
		       struct hr_error *err)
{
	struct hr_path_options opt = { .paths = a->paths, .img = &an->an.img };
	int rc = HR_OK, unanswered = 0;

	if (a->paths > 1 &&
	    !(opt.graph = hr_heap_graph_new(an->dump, an->an.tree, an->an.result, err)))
		return cli_report(err);
	for (int i = 0; i < a->naddresses && !rc; i++) {
		const char *arg = a->addresses[i];
		uint64_t addr;
		bool found;

		if (isdigit((unsigned char)arg[0]) && cli_parse_address(arg, &addr))
			rc = hr_write_path(stdout, an->dump, an->an.tree, an->an.result, &opt, addr,
					   &found, err);
		else
			rc = hr_write_paths_of_type(stdout, an->dump, an->an.tree, an->an.result, &opt,
						    arg, &found, err);
		unanswered += !rc && !found;
	}
	hr_heap_graph_free(opt.graph);
	if (!rc && fflush(stdout))
		rc = hr_error_set(err, HR_EIO, "%s", strerror(errno));
	if (rc == HR_EIO)
		name_output(err, "standard output");
	if (rc)
		return ST_RESOURCES;
	if (unanswered)
		hr_error_set(err, HR_EINPUT, "%d of %d addresses or types: in no heap object, "
			     "reached by no root, or no reachable object of the type",
			     unanswered, a->naddresses);
	return unanswered ? ST_INPUT : ST_OK;
}

/* Opens the pair: the dump (or core) and the binary, or the binary's stand-in for a DUMP alone. */
static int analysis_open(const char *binary, const char *dump,
			 const struct analysis_options *o, struct analysis *an, struct hr_error *err)
{
	const struct heap_input in = { .binary = binary, .binary_name = o->binary_name,
				       .input = dump, .input_name = o->input_name,
				       .force = o->rq.force, .live = o->live };

	if (open_heap_input(&in, &an->bin, &an->dump, err))
		return err->code;
	if (!binary) { /* DUMP alone */
		if (!hr_dump_has_object_types(an->dump))
			return hr_error_set(err, HR_EUSAGE, "%s is a go1.%u heap dump: give the binary "
					    "that wrote it too (BINARY DUMP); only go1.3 and go1.4 dumps, "
					    "whose records name types, are read alone", dump,
					    hr_dump_format_minor(an->dump));
		if (!(an->bin = hr_binary_none(err)))
			return err->code;
	}
	stats_mark(o->stats, "read+index", stderr); /* open_heap_input() checked it is Go */
	stats_reading(o->stats, an->dump, stderr);
	stats_mark(o->stats, "binary", stderr);
	return HR_OK;
}

/* What the analysis's phases are told: the progress line to end, the times to mark. */
struct phases {
	struct progress *prog;
	struct stats *stats;
};

static void on_phase(void *ctx, const char *phase, const struct hr_analysis *an,
		     const struct hr_scan_summary *sum)
{
	const struct phases *p = ctx;

	if (!strcmp(phase, "checks")) { /* the pair goes together, or is forced */
		for (size_t i = 0; i < an->nwarnings; i++)
			fprintf(stderr, "heapref: warning: %s\n", an->warnings[i]);
		return;
	}
	end_progress(p->prog);
	stats_mark(p->stats, phase, stderr);
	if (p->stats && !strcmp(phase, "pass 1"))
		fprintf(stderr, "heapref: threads of pass 1: %u; heap objects walked by workers: "
			"%" PRIu64 " of %" PRIu64 " queued, %" PRIu64 " of them ahead of a "
			"narrow walk (%" PRIu64 " times, %" PRIu64 " stopped by a claim); %" PRIu64
			" long runs queued in %" PRIu64 " pieces\n",
			sum->pass1_threads, sum->worker_objects, sum->queued_objects,
			sum->stream_objects, sum->streams, sum->stream_stops, sum->split_runs,
			sum->pieces);
	if (p->stats && !strcmp(phase, "dominators"))
		fprintf(stderr, "heapref: the dominator tree: %s\n",
			an->dominators_made == HR_DOM_MADE_BESIDE ? "made beside pass 1's heap walk"
			: an->dominators_made == HR_DOM_MADE_AGAIN
				? "made beside pass 1's heap walk, then again: the walk of the heap "
				  "found more root edges"
				: "made after the scan");
}

/* The analysis's options from the environment: tests and benchmarks only (docs/design.md). */
static void test_knobs(struct hr_analysis_request *rq)
{
	struct hr_scan_options *opts = &rq->scan;

	rq->dominators_after = getenv("HEAPREF_TEST_DOMINATORS_AFTER") != NULL;
	if (getenv("HEAPREF_TEST_PASS1_CHUNK"))
		opts->chunk_objects = (unsigned)atoi(getenv("HEAPREF_TEST_PASS1_CHUNK"));
	if (getenv("HEAPREF_TEST_PASS1_STREAM")) /* "after,chunk" */
		(void)sscanf(getenv("HEAPREF_TEST_PASS1_STREAM"), "%u,%u", &opts->stream_after,
			     &opts->stream_chunk);
}

int analysis_run(const char *binary, const char *dump, const struct analysis_options *o,
		 struct analysis *an)
{
	struct hr_error err = { 0 };
	struct progress prog = { 0 }; /* the scan reports progress only during its passes */
	struct phases phases = { &prog, o->stats };
	struct hr_analysis_request rq = o->rq;

	*an = (struct analysis){ 0 };
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	if (isatty(STDERR_FILENO)) {
		rq.scan.progress = show_progress;
		rq.scan.progress_arg = &prog;
	}
	test_knobs(&rq);
	rq.phase = on_phase;
	rq.phase_ctx = &phases;
	if (analysis_open(binary, dump, o, an, &err) ||
	    hr_analysis_run(an->dump, an->bin, &rq, &an->an, &err)) {
		end_progress(&prog);
		analysis_release(an);
		return cli_report(&err);
	}
	return ST_OK;
}

void analysis_release(struct analysis *an)
{
	hr_analysis_release(&an->an);
	hr_binary_free(an->bin);
	hr_dump_free(an->dump);
	*an = (struct analysis){ 0 };
}

/* heapref retained: the root variables and objects by retained size. */
static int write_retained(const struct analyze_args *a, const struct analysis *an,
			  struct hr_error *err)
{
	struct hr_retained_options opt = a->retained;
	int rc;

	opt.img = &an->an.img;
	rc = hr_write_retained(stdout, an->dump, an->an.tree, an->an.result, an->an.dominators,
			       &opt, err);

	if (!rc && fflush(stdout))
		rc = hr_error_set(err, HR_EIO, "%s", strerror(errno));
	if (rc == HR_EIO)
		name_output(err, "standard output");
	return rc;
}

/* heapref goroutines: the goroutines by kind with the memory their stacks reached first. */
static int write_goroutines(const struct analyze_args *a, const struct analysis *an,
			    struct hr_error *err)
{
	int rc = hr_write_goroutines(stdout, an->dump, &an->an.img, an->an.result,
				     an->an.leaks, a->retained.tsv, err);

	if (!rc && fflush(stdout))
		rc = hr_error_set(err, HR_EIO, "%s", strerror(errno));
	if (rc == HR_EIO)
		name_output(err, "standard output");
	return rc;
}

/* heapref suspects: the report, to -o (standard output by default) as analyze's. */
struct suspects_output {
	const struct hr_suspects *suspects;
	const struct hr_suspects_options *opt;
};

static int write_suspects_to(FILE *out, void *ctx, struct hr_error *err)
{
	const struct suspects_output *o = ctx;

	return hr_write_suspects(out, o->suspects, o->opt, err);
}

/* The goroutine groups as goroutines --format tsv writes them, for the HTML page. */
static char *goroutines_tsv(const struct analysis *an, struct hr_error *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int rc;

	if (!mem) {
		hr_error_set(err, HR_ENOMEM, "out of memory for the goroutine groups");
		return NULL;
	}
	rc = hr_write_goroutines(mem, an->dump, &an->an.img, an->an.result, an->an.leaks, true,
				 err);
	if (fclose(mem) || rc) {
		free(text);
		if (!rc)
			hr_error_set(err, HR_ENOMEM, "out of memory for the goroutine groups");
		return NULL;
	}
	return text;
}

static int write_suspects(const struct analyze_args *a, const struct analysis *an,
			  struct hr_error *err)
{
	struct hr_suspects_options opt = {
		.format = a->suspects_format,
		.binary = a->binary_name ? a->binary_name : a->binary,
		.dump = a->pid ? "CORE" : a->dump, .chains = an->an.view };
	struct suspects_output o = { an->an.suspects, &opt };
	char *tsv = NULL;
	int rc;

	if (a->suspects_format == HR_SUSPECTS_HTML &&
	    !(opt.goroutines_tsv = tsv = goroutines_tsv(an, err)))
		return err->code;
	rc = output_write(a->out, write_suspects_to, &o, err);
	free(tsv);
	return rc;
}

/* The function holding pc, for the profile's created_by labels (ctx: the binary). */
static const char *function_at(void *ctx, uint64_t pc)
{
	const struct hr_image *img = ctx;
	int64_t fn = hr_image_func_at(img, pc);

	return fn < 0 ? "?" : hr_binary_func(img->bin, (size_t)fn)->name;
}

/*
 * analyze's profile (or text report) of the tree or the view asked for, naming the
 * binary; the tree's nodes split by the goroutines whose stacks reached them, as
 * labelled samples (--goroutine-labels).
 */
static int write_labelled_profile(const struct analyze_args *a, const struct analysis *an,
				  struct hr_error *err)
{
	struct hr_pprof_options opt = { .binary = a->binary_name ? a->binary_name : a->binary,
					.build_id = hr_binary_build_id(an->bin),
					.dump = an->dump, .creator = function_at,
					.creator_ctx = (void *)&an->an.img };

	if (a->goroutine_labels) {
		opt.shares = hr_result_shares(an->an.result, &opt.nshares);
		opt.leaked = an->an.leaks ? an->an.leaks->verdict : NULL;
	}
	/* the output, not the input: status 3 */
	return write_profile(a, a->out, hr_analysis_chains(&an->an), &opt, err) ? ST_RESOURCES
										 : ST_OK;
}

/* What the command writes once the analysis has run: 0 or a failed status. */
static int write_answer(const struct analyze_args *a, const struct analysis *an,
			struct hr_error *err)
{
	if (a->mode == MODE_WHY)
		return write_paths(a, an, err);
	if (a->mode == MODE_RETAINED)
		return write_retained(a, an, err) ? ST_RESOURCES : ST_OK;
	if (a->mode == MODE_GOROUTINES)
		return write_goroutines(a, an, err) ? ST_RESOURCES : ST_OK;
	if (a->mode == MODE_SUSPECTS)
		return write_suspects(a, an, err) ? ST_RESOURCES : ST_OK;
	return write_labelled_profile(a, an, err);
}

/* What the command asks of the analysis. */
static struct hr_analysis_request request_of(const struct analyze_args *a)
{
	/* the page draws the chains by retained size and the goroutine groups too */
	bool html = a->mode == MODE_SUSPECTS && a->suspects_format == HR_SUSPECTS_HTML;
	struct hr_analysis_request rq = {
		.max_depth = a->max_depth, .full_chains = a->full_chains, .force = a->force,
		.scan = { .threads = a->threads },
		.paths = a->mode == MODE_WHY || a->mode == MODE_RETAINED,
		.types = a->mode == MODE_WHY || a->mode == MODE_RETAINED, /* fields, types */
		.graph = a->mode == MODE_WHY && a->paths > 1,
		.dominators = a->mode == MODE_RETAINED,
		.suspects = a->mode == MODE_SUSPECTS, .threshold_percent = a->threshold,
		.goroutines = a->mode == MODE_GOROUTINES || a->goroutine_labels || html,
		.leaks = a->mode == MODE_GOROUTINES || a->mode == MODE_SUSPECTS || a->goroutine_labels,
		.leaks_retained = a->mode == MODE_GOROUTINES,
		.examples = a->examples,
		.view_wanted = a->by_dominator || a->by_alloc || a->by_type || a->types_first || html,
	};

	rq.view = a->by_dominator || html ? HR_VIEW_BY_DOMINATOR
		  : a->by_alloc   ? HR_VIEW_BY_ALLOC
		  : a->by_type    ? HR_VIEW_BY_TYPE
				  : HR_VIEW_TYPES_FIRST;
	return rq;
}

/*
 * The files the command writes (-o, --save-core), prepared and checked before anything
 * is read or stopped: each may be written, neither is an input or the other.
 */
static int prepare_outputs(const struct analyze_args *a, struct output *out, struct output *core,
			   struct hr_error *err)
{
	char exe[64];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", a->pid);
	if ((a->mode == MODE_ANALYZE || a->mode == MODE_SUSPECTS) &&
	    (output_prepare(out, a->output, OUTPUT_REPORT, err) ||
	     output_refuse_input(out, a->binary, "the binary", err) ||
	     output_refuse_input(out, a->dump, "the heap input", err) ||
	     (a->pid && output_refuse_input(out, exe, "the process's executable", err)) ||
	     (a->baseline_binary &&
	      (output_refuse_input(out, a->baseline_binary, "the baseline's binary", err) ||
	       output_refuse_input(out, a->baseline_dump, "the baseline's heap input", err)))))
		return err->code;
	if (!a->save_core)
		return HR_OK;
	if (output_prepare(core, a->save_core, OUTPUT_MEMORY, err) ||
	    output_refuse_input(core, a->binary, "the binary", err) ||
	    output_refuse_input(core, exe, "the process's executable", err))
		return err->code;
	if (core->how != OUTPUT_REPLACE)
		return hr_error_set(err, HR_EOUTPUT, "%s: not a regular file: --save-core writes the "
				    "core into a file of its own", a->save_core);
	if ((a->mode == MODE_ANALYZE || a->mode == MODE_SUSPECTS) &&
	    output_refuse_same(out, "-o", core, "--save-core", err))
		return err->code;
	return HR_OK;
}

/* --pid: the checks, then the core; a.dump and a.binary then name what to read. */
static int take_core(struct analyze_args *a, struct process_input *proc, struct hr_error *err)
{
	const char *hold = getenv("HEAPREF_TEST_HOLD_STOPPED"); /* docs/cores.md */
	const char *tracking = getenv("HEAPREF_TEST_HOLD_TRACKING");
	const char *borrowed = getenv("HEAPREF_TEST_HOLD_BORROWED");

	proc->hold_seconds = hold ? (unsigned)atoi(hold) : 0;
	proc->hold_tracking = tracking ? (unsigned)atoi(tracking) : 0;
	proc->hold_borrowed = borrowed ? (unsigned)atoi(borrowed) : 0;
	if (check_process(proc, err) || take_process_core(proc, err))
		return err->code;
	a->dump = proc->path;
	if (!a->binary) { /* read through the descriptor held open: the process may end */
		a->binary = proc->exe_path;
		a->binary_name = proc->exe_name;
	}
	return HR_OK;
}

/*
 * suspects --baseline: the chain tree of the baseline pair, analysed as the command's
 * own pair is (depth, folding, force), the rest of its analysis freed at once.
 */
static int baseline_tree(const struct analyze_args *a, struct stats *stats,
			 struct hr_chains **tree)
{
	struct analysis_options o = { .rq = { .max_depth = a->max_depth,
					      .full_chains = a->full_chains, .force = a->force,
					      .scan = { .threads = a->threads } },
				      .stats = stats };
	struct analysis old;
	int st;

	*tree = NULL;
	if (!a->baseline_binary)
		return ST_OK;
	if ((st = analysis_run(a->baseline_binary, a->baseline_dump, &o, &old)) != ST_OK)
		return st;
	*tree = old.an.tree;
	old.an.tree = NULL;
	analysis_release(&old);
	return ST_OK;
}

static int run(int argc, char **argv, enum mode mode)
{
	struct analyze_args a;
	struct hr_error err = { 0 };
	struct timespec start;
	struct analysis an;
	struct analysis_options o = { 0 };
	struct output out = OUTPUT_INIT, core = OUTPUT_INIT;
	struct process_input proc = { .exe_fd = -1, .memfd = -1 };
	struct hr_chains *baseline = NULL;
	int st = parse_args(argc, argv, mode, &a);

	if (st)
		return st == CLI_HELP ? ST_OK : st;
	if (!a.pid && a.binary && inputs_swapped(mode_names[mode], a.binary, a.dump))
		return ST_USAGE;
	if (a.baseline_binary &&
	    inputs_swapped(mode_names[mode], a.baseline_binary, a.baseline_dump))
		return ST_USAGE;
	a.out = &out;
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (prepare_outputs(&a, &out, &core, &err)) {
		st = cli_report(&err);
		goto done;
	}
	if (a.pid) {
		proc.pid = a.pid;
		proc.save_core = a.save_core ? &core : NULL;
		proc.binary = a.binary;
		proc.force = a.force;
		proc.pause_mode = a.pause_mode;
		proc.stats = a.stats;
		if (take_core(&a, &proc, &err)) {
			st = cli_report(&err);
			goto done;
		}
	}
	o = (struct analysis_options){ .rq = request_of(&a),
				       .stats = a.stats ? stats_start() : NULL,
				       .input_name = a.pid ? proc.name : NULL, .live = a.pid != 0,
				       .binary_name = a.binary_name };
	if ((st = baseline_tree(&a, o.stats, &baseline)) != ST_OK)
		goto done;
	o.rq.baseline = baseline;
	if ((st = analysis_run(a.binary, a.dump, &o, &an)) != ST_OK)
		goto done;
	if ((st = write_answer(&a, &an, &err)) != ST_OK) {
		fprintf(stderr, "heapref: %s\n", err.msg);
	} else if (mode == MODE_ANALYZE) {
		stats_mark(o.stats, "output", stderr);
		print_summary(an.dump, hr_result_summary(an.an.result), hr_analysis_chains(&an.an),
			      a.output, since(&start));
		print_leaks(&an.an);
	}
	analysis_release(&an);
done:
	hr_chains_free(baseline);
	stats_stop(o.stats);
	output_release(&out);
	output_release(&core);
	process_input_release(&proc);
	return st;
}

int cmd_analyze(int argc, char **argv)
{
	return run(argc, argv, MODE_ANALYZE);
}

int cmd_why(int argc, char **argv)
{
	return run(argc, argv, MODE_WHY);
}

int cmd_retained(int argc, char **argv)
{
	return run(argc, argv, MODE_RETAINED);
}

int cmd_goroutines(int argc, char **argv)
{
	return run(argc, argv, MODE_GOROUTINES);
}

int cmd_suspects(int argc, char **argv)
{
	return run(argc, argv, MODE_SUSPECTS);
}
