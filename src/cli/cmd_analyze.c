/*
 * cmd_analyze.c - `heapref analyze`: the whole pipeline. Reads the dump and the binary,
 * scans (pass 1 typed, pass 2 fallback), writes the chain tree as a pprof profile (or,
 * with --text, a condensed text report)
 * through a temporary file renamed into place, and a summary on stderr.
 */
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
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dump.h"
#include "heapref/scan.h"
#include "heapref/writers.h"
#include "stats.h"

enum { ST_OK = 0, ST_INPUT = 1, ST_USAGE = 2, ST_RESOURCES = 3, ST_MISMATCH = 4,
       ST_HELP = CLI_HELP /* parse_args(): the usage was asked for and shown */ };

struct analyze_args {
	bool why;             /* heapref why: addresses after BINARY DUMP */
	const char *binary;
	const char *dump;
	char **addresses;
	int naddresses;
	const char *output;
	uint32_t max_depth;
	double cutoff_percent;
	bool text;
	bool by_index;
	bool full_chains;
	bool stats;
	bool force;
};

static int usage_error(const struct analyze_args *a, const char *what)
{
	return cli_usage_error(a->why ? "why" : "analyze", "%s", what);
}

static int status_of(const struct hr_error *err)
{
	fprintf(stderr, "heapref: %s\n", err->msg);
	return err->code == HR_EINPUT || err->code == HR_EIO ? ST_INPUT
	       : err->code == HR_EUSAGE			    ? ST_USAGE
								    : ST_RESOURCES;
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

static bool parse_address(const char *text, uint64_t *addr)
{
	char *end;

	errno = 0;
	*addr = strtoull(text, &end, 0);
	return !errno && end != text && !*end && text[0] != '-';
}

static bool parse_max_depth(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v > UINT32_MAX || text[0] == '-')
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The options' values, checked; then what goes with what. */
static int check_options(struct analyze_args *a, const char *max_depth, const char *cutoff)
{
	if (a->output && !a->output[0])
		return usage_error(a, "-o takes a file name");
	if (max_depth && !parse_max_depth(max_depth, &a->max_depth))
		return cli_usage_error(a->why ? "why" : "analyze",
				       "--max-depth takes a number, not %s", max_depth);
	if (cutoff && !parse_percent(cutoff, &a->cutoff_percent))
		return cli_usage_error("analyze", "--cutoff takes a percentage, 0 to 100, not %s",
				       cutoff);
	if ((cutoff || a->by_index) && !a->text)
		return usage_error(a, "--cutoff and --by-index are for the text report (--text)");
	return ST_OK;
}

/*
 * The arguments of analyze, or of why (then the operands after BINARY DUMP are
 * addresses). Options may come anywhere; why takes only the first four.
 */
static int parse_args(int argc, char **argv, bool why, struct analyze_args *a)
{
	const char *max_depth = NULL, *cutoff = NULL;
	const struct cli_opt opts[] = {
		{ "--full-chains", NULL, &a->full_chains, NULL },
		{ "--max-depth", NULL, NULL, &max_depth },
		{ "--stats", NULL, &a->stats, NULL },
		{ "--force", NULL, &a->force, NULL },
		{ "--output", "-o", NULL, &a->output },
		{ "--text", NULL, &a->text, NULL },
		{ "--cutoff", NULL, NULL, &cutoff },
		{ "--by-index", NULL, &a->by_index, NULL },
	};
	int n, rc;
	uint64_t addr;

	*a = (struct analyze_args){ .why = why, .max_depth = 256, .cutoff_percent = 1.0 };
	rc = cli_parse(why ? "why" : "analyze", argc, argv, opts, why ? 4 : 8, &n);
	if (rc || (rc = check_options(a, max_depth, cutoff)))
		return rc;
	if (n < 2 || (why && n == 2) || (!why && n > 2))
		return usage_error(a, why ? "why takes a binary, a heap dump and addresses"
					  : "analyze takes a binary and a heap dump");
	for (int i = 2; i < n; i++)
		if (!parse_address(argv[i], &addr))
			return cli_usage_error("why", "not an address: %s (addresses are numbers, "
					       "like 0xc000012340)", argv[i]);
	if (!a->output)
		a->output = a->text ? "-" : "heapref.pb.gz";
	a->binary = argv[0];
	a->dump = argv[1];
	a->addresses = argv + 2;
	a->naddresses = n - 2;
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

static int write_output(FILE *out, const struct analyze_args *a, const struct hr_chains *tree,
			struct hr_error *err)
{
	return a->text ? write_report(out, a, tree, err) : hr_write_pprof(out, tree, err);
}

/*
 * The mode a new file gets from open(2) with 0666, as other tools create their output:
 * mkstemp() makes the temporary file 0600, which would stay so after the rename.
 */
static mode_t creation_mode(void)
{
	mode_t mask = umask(0); /* the only way to read it; set back at once */

	umask(mask);
	return 0666 & ~mask;
}

/*
 * Writes the profile or report to a temporary file next to path and renames it into place, so
 * a failure leaves no partial file and an existing file untouched. Any failure here is
 * an output failure (exit status 3), whatever err->code says.
 */
static int write_profile(const struct analyze_args *a, const struct hr_chains *tree,
			 struct hr_error *err)
{
	const char *path = a->output;
	size_t len = strlen(path);
	char *tmp;
	FILE *out;
	int fd, rc;

	if (!strcmp(path, "-")) {
		rc = write_output(stdout, a, tree, err);
		if (rc)
			return name_output(err, "standard output");
		if (fflush(stdout))
			rc = hr_error_set(err, HR_EIO, "standard output: %s", strerror(errno));
		return rc;
	}
	tmp = malloc(len + sizeof(".tmp.XXXXXX"));
	if (!tmp)
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, creation_mode()) || !(out = fdopen(fd, "wb"))) {
		rc = hr_error_set(err, HR_EIO, "%s: cannot create: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return rc;
	}
	rc = write_output(out, a, tree, err);
	if (rc)
		name_output(err, path);
	if (fclose(out) && !rc)
		rc = hr_error_set(err, HR_EIO, "%s: %s", path, strerror(errno));
	if (!rc && rename(tmp, path))
		rc = hr_error_set(err, HR_EIO, "%s: cannot rename into place: %s", path,
				  strerror(errno));
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* --- summary ---------------------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_summary(const struct hr_dump *dump, const struct hr_scan_summary *s,
			  const struct hr_chains *tree, const char *output, double seconds)
{
	const struct hr_dump_params *p = hr_dump_params(dump);
	uint64_t objs = s->typed_objects + s->fallback_objects;
	uint64_t bytes = s->typed_bytes + s->fallback_bytes;
	bool first = true;

	fprintf(stderr, "heapref: %.*s %.*s dump: %" PRIu64 " objects, %" PRIu64 " bytes\n",
		(int)p->go_version.len, (const char *)p->go_version.ptr, (int)p->goarch.len,
		(const char *)p->goarch.ptr, s->total_objects, s->total_bytes);
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
	if (s->skipped_vars)
		fprintf(stderr, "heapref: %" PRIu64 " frame variables live in registers or in "
			"locations heapref does not evaluate; their words are named after the function\n",
			s->skipped_vars);
	fprintf(stderr, "heapref: wrote %s: %zu chain nodes, in %.2f s\n",
		strcmp(output, "-") ? output : "standard output", hr_chains_count(tree) - 1, seconds);
}

/* --- do the inputs go together? --------------------------------------------------------- */

static bool file_starts_with(const char *path, const char *magic, size_t len)
{
	char head[8];
	FILE *f = fopen(path, "rb");
	bool yes = f && len <= sizeof(head) && fread(head, 1, len, f) == len &&
		   memcmp(head, magic, len) == 0;

	if (f)
		fclose(f);
	return yes;
}

/*
 * The easiest mistake with two file arguments: a usage error, said in one line before
 * either file is read (the dump reader would only say the dump is not a dump).
 */
static bool inputs_swapped(const struct analyze_args *a)
{
	if (!file_starts_with(a->dump, "\177ELF", 4) || !file_starts_with(a->binary, "go1.", 4))
		return false;
	fprintf(stderr, "heapref: the arguments are the wrong way round: %s is an ELF file and %s "
		"a heap dump (analyze takes BINARY, then DUMP)\n", a->dump, a->binary);
	return true;
}

static void warn_unknown_version(const char *path, const char *version, size_t len)
{
	char why[HR_ERROR_MAX];

	if (!hr_scan_go_version_known(version, len, why, sizeof(why)))
		fprintf(stderr, "heapref: warning: %s: %s\n", path, why);
}

/*
 * Refuses a dump that the binary cannot have written (ST_MISMATCH), unless forced.
 * Then warns about Go releases heapref is not tested with (the binary's version is named
 * only when it differs from the dump's, so one unknown release is warned about once)
 * and about what the binary lacks (no DWARF, no symbols).
 */
static int check_inputs(const struct analyze_args *a, const struct hr_dump *dump,
			const struct hr_binary *bin)
{
	const struct hr_bytes *dv = &hr_dump_params(dump)->go_version;
	const char *bv = hr_binary_go_version(bin);
	char why[HR_ERROR_MAX];

	if (!hr_scan_pair_matches(dump, bin, why, sizeof(why))) {
		if (!a->force) { /* the one line of a failure: no warnings before it */
			fprintf(stderr, "heapref: %s was not written by %s: %s (--force analyses "
				"anyway)\n", a->dump, a->binary, why);
			return ST_MISMATCH;
		}
		fprintf(stderr, "heapref: warning: %s does not look written by %s: %s; analysing "
			"anyway (--force), chains may be wrong\n", a->dump, a->binary, why);
	}
	warn_unknown_version(a->dump, (const char *)dv->ptr, dv->len);
	if (strlen(bv) != dv->len || memcmp(bv, dv->ptr, dv->len))
		warn_unknown_version(a->binary, bv, strlen(bv));
	if (hr_binary_limits(bin)[0])
		fprintf(stderr, "heapref: warning: %s: %s\n", a->binary, hr_binary_limits(bin));
	return ST_OK;
}

/* --- the command ------------------------------------------------------------------------- */

static int run_scan(struct hr_scan *scan, struct stats *stats, struct progress *prog,
		    struct hr_error *err)
{
	int rc = hr_scan_pass1(scan, err);

	end_progress(prog);
	stats_mark(stats, "pass 1", stderr);
	if (!rc) {
		rc = hr_scan_pass2(scan, err);
		end_progress(prog);
		stats_mark(stats, "pass 2", stderr);
	}
	return rc;
}

/* heapref why: each address's object, its chain and the objects leading to it. */
static int write_paths(const struct analyze_args *a, const struct hr_dump *dump,
		       const struct hr_chains *tree, const struct hr_scan *scan,
		       struct hr_error *err)
{
	uint64_t addr;
	int rc = HR_OK;

	for (int i = 0; i < a->naddresses && !rc; i++) {
		parse_address(a->addresses[i], &addr); /* checked by parse_args() */
		rc = hr_write_path(stdout, dump, tree, scan, addr, err);
	}
	if (!rc && fflush(stdout))
		rc = hr_error_set(err, HR_EIO, "%s", strerror(errno));
	if (rc)
		name_output(err, "standard output");
	return rc;
}

static int run(int argc, char **argv, bool why)
{
	struct analyze_args a;
	struct hr_error err = { 0 };
	struct progress prog = { 0 };
	struct hr_scan_options opts = { 0 };
	struct stats *stats = NULL;
	struct hr_dump *dump = NULL;
	struct hr_binary *bin = NULL;
	struct hr_chains *tree = NULL;
	struct hr_scan *scan = NULL;
	int st = parse_args(argc, argv, why, &a);

	if (st)
		return st == ST_HELP ? ST_OK : st;
	if (inputs_swapped(&a))
		return ST_USAGE;
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	if (isatty(STDERR_FILENO))
		opts = (struct hr_scan_options){ show_progress, &prog };
	if (a.stats)
		stats = stats_start();
	st = ST_INPUT;
	if (!(dump = hr_dump_open(a.dump, &err)))
		goto fail;
	stats_mark(stats, "read+index", stderr);
	if (!(bin = hr_binary_open(a.binary, &err)))
		goto fail;
	if (!hr_binary_is_go(bin)) {
		hr_error_set(&err, HR_EINPUT, "%s: not a Go binary (no .gopclntab or .go.buildinfo "
			     "section)", a.binary);
		goto fail;
	}
	stats_mark(stats, "binary", stderr);
	if (!(tree = hr_chains_new(a.max_depth))) {
		hr_error_set(&err, HR_ENOMEM, "out of memory");
		goto fail;
	}
	if (!a.full_chains)
		hr_chains_fold_recursion(tree);
	if (!(scan = hr_scan_new(dump, bin, tree, &opts, &err)))
		goto fail;
	/* after hr_scan_new, which refuses pointer sizes and byte orders it cannot read */
	if ((st = check_inputs(&a, dump, bin)) != ST_OK)
		goto done;
	if (why && hr_scan_keep_paths(scan, &err))
		goto fail;
	if (run_scan(scan, stats, &prog, &err))
		goto fail;
	if (why) {
		st = write_paths(&a, dump, tree, scan, &err) ? ST_RESOURCES : ST_OK;
		if (st)
			fprintf(stderr, "heapref: %s\n", err.msg);
		goto done;
	}
	if (write_profile(&a, tree, &err)) { /* the output, not the input: status 3 */
		fprintf(stderr, "heapref: %s\n", err.msg);
		st = ST_RESOURCES;
		goto done;
	}
	stats_mark(stats, "output", stderr);
	print_summary(dump, hr_scan_summary(scan), tree, a.output, since(&prog.start));
	st = ST_OK;
	goto done;
fail:
	end_progress(&prog);
	st = status_of(&err);
done:
	stats_stop(stats);
	hr_scan_free(scan);
	hr_chains_free(tree);
	hr_binary_free(bin);
	hr_dump_free(dump);
	return st;
}

int cmd_analyze(int argc, char **argv)
{
	return run(argc, argv, false);
}

int cmd_why(int argc, char **argv)
{
	return run(argc, argv, true);
}
