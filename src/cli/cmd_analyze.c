/*
 * cmd_analyze.c - `heapref analyze`: the whole pipeline. Reads the dump and the binary,
 * scans (pass 1 typed, pass 2 fallback), writes the chain tree as a pprof profile (or,
 * with --text, a condensed text report)
 * through a temporary file renamed into place, and a summary on stderr. `why` shares it;
 * analysis_run(), one BINARY DUMP pair read, checked and scanned, serves `diff` too.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dump.h"
#include "heapref/scan.h"
#include "heapref/writers.h"
#include "stats.h"

enum { ST_OK = 0, ST_INPUT = 1, ST_USAGE = 2, ST_RESOURCES = 3, ST_MISMATCH = 4,
       ST_HELP = -1 /* parse_args(): the usage was asked for and shown */ };

static const char analyze_usage[] =
	"usage: heapref analyze [-o FILE] [--text [--cutoff PCT] [--by-index]] [--full-chains]\n"
	"                       [--max-depth N] [--stats] [--force] BINARY DUMP\n"
	"  -o FILE         where to write (default heapref.pb.gz, or standard output with\n"
	"                  --text; - for standard output)\n"
	"  --text          a condensed text report of the chains instead of a pprof profile\n"
	"  --cutoff PCT    --text: merge chains under PCT%% of the reachable bytes into\n"
	"                  <other> (default 1; 0 shows every chain)\n"
	"  --by-index      --text: keep elements [0] to [9] and [10+] apart (default: one\n"
	"                  [*] chain for the elements of each array, slice or channel)\n"
	"  --full-chains   do not fold recursion: each link of a list or tree of T is a\n"
	"                  chain of its own (by default a T reached through a T is charged\n"
	"                  to the first T on the chain)\n"
	"  --max-depth N   cut chains after N named nodes, charging the rest to the last\n"
	"                  (default 256; 0 for no limit)\n"
	"  --stats         time, CPU and peak memory of each phase, on stderr\n"
	"  --force         analyse even when the dump does not look written by the binary\n"
	"                  (different Go version, data or bss layout): the chains may be wrong\n"
	"  --examples N    the N biggest objects charged to each chain, their addresses for\n"
	"                  heapref object / why: below each chain of --text, and as the\n"
	"                  label \"examples\" of each sample of the profile (up to 16)\n"
	"  --attribution first|dominator\n"
	"                  charge each object to the first chain that reaches it (default),\n"
	"                  or under its immediate dominator's chain, so that a node's\n"
	"                  cumulative value is what would be freed with it; what several\n"
	"                  roots share goes under \"$shared by several roots\"\n";

static const char why_usage[] =
	"usage: heapref why [-n K] [--full-chains] [--max-depth N] [--stats] [--force]\n"
	"                   BINARY DUMP ADDRESS|TYPE...\n"
	"  for each address, the heap object holding it and why it is alive: the chain it\n"
	"  is charged to and the objects through which a root reaches it (8 more bytes of\n"
	"  memory per heap object than analyze); for a type (main.Item), the biggest\n"
	"  reachable objects charged to a chain of that type, one path each\n"
	"  -n K            up to K paths, each through none of the objects of the paths\n"
	"                  before (default 1); with a type, the K biggest objects\n"
	"  other options as for analyze; exit status 1 when an address is in no heap\n"
	"  object or no root reaches it, or no object has the type\n";

static const char retained_usage[] =
	"usage: heapref retained [--format text|tsv] [-n N] [--full-chains] [--max-depth N]\n"
	"                        [--stats] [--force] BINARY DUMP\n"
	"  the root variables and the heap objects by retained size: what would be freed\n"
	"  if each let go (the dominator tree of the object graph)\n"
	"  --format tsv    a header row and tab-separated rows, for scripts (default text)\n"
	"  -n N            rows of each list (default 20; 0 for all)\n"
	"  other options as for analyze\n";

/* The commands that run the analysis: what they add to it. */
enum mode { MODE_ANALYZE, MODE_WHY, MODE_RETAINED };

static const char *const mode_names[] = { "analyze", "why", "retained" };

struct analyze_args {
	enum mode mode;
	bool why;             /* heapref why: addresses after BINARY DUMP */
	const char *binary;
	const char *dump;
	char **addresses;
	int naddresses;
	const char *output;
	uint32_t max_depth;
	double cutoff_percent;
	bool text;
	bool cutoff_given;
	bool by_index;
	bool full_chains;
	bool stats;
	bool force;
	bool by_dominator;    /* --attribution dominator */
	unsigned paths;       /* why -n */
	unsigned examples;    /* --examples */
	struct hr_retained_options retained;
};

static const char *usage_of(enum mode mode)
{
	return mode == MODE_WHY ? why_usage : mode == MODE_RETAINED ? retained_usage
								      : analyze_usage;
}

static int usage_error(const struct analyze_args *a, const char *what)
{
	fprintf(stderr, "heapref: %s\n%s", what, usage_of(a->mode));
	return ST_USAGE;
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

/* The arguments of analyze, or of why (then positionals after BINARY DUMP are addresses). */
static int parse_args(int argc, char **argv, enum mode mode, struct analyze_args *a)
{
	bool why = mode == MODE_WHY;
	const char *pos[2];
	int npos = 0;
	uint64_t addr;

	*a = (struct analyze_args){ .mode = mode, .why = why, .max_depth = 256,
				    .cutoff_percent = 1.0, .addresses = argv + argc,
				    .retained = { .top = 20 }, .paths = 1 };
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_of(mode), stdout);
			return ST_HELP;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			if (++i >= argc || !argv[i][0])
				return usage_error(a, "-o takes a file name");
			a->output = argv[i];
		} else if (!strcmp(argv[i], "--max-depth")) {
			char *end;
			unsigned long v;

			if (++i >= argc)
				return usage_error(a, "--max-depth takes a number");
			errno = 0;
			v = strtoul(argv[i], &end, 10);
			if (errno || end == argv[i] || *end || v > UINT32_MAX || argv[i][0] == '-')
				return usage_error(a, "--max-depth takes a number");
			a->max_depth = (uint32_t)v;
		} else if (mode == MODE_RETAINED && !strcmp(argv[i], "--format")) {
			if (++i >= argc || (strcmp(argv[i], "text") && strcmp(argv[i], "tsv")))
				return usage_error(a, "--format takes text or tsv");
			a->retained.tsv = !strcmp(argv[i], "tsv");
		} else if (mode != MODE_ANALYZE && !strcmp(argv[i], "-n")) {
			char *end;
			unsigned long v;

			errno = 0;
			if (++i >= argc || (v = strtoul(argv[i], &end, 10), errno) || end == argv[i] ||
			    *end || argv[i][0] == '-')
				return usage_error(a, "-n takes a number");
			a->retained.top = v;
			a->paths = v > 1000 ? 1000 : (unsigned)v;
		} else if (mode == MODE_ANALYZE && !strcmp(argv[i], "--examples")) {
			char *end;
			unsigned long v;

			errno = 0;
			if (++i >= argc || (v = strtoul(argv[i], &end, 10), errno) || end == argv[i] ||
			    *end || argv[i][0] == '-' || v > HR_CHAINS_EXAMPLES_MAX)
				return usage_error(a, "--examples takes a number, 0 to 16");
			a->examples = (unsigned)v;
		} else if (mode == MODE_ANALYZE && !strcmp(argv[i], "--attribution")) {
			if (++i >= argc || (strcmp(argv[i], "first") && strcmp(argv[i], "dominator")))
				return usage_error(a, "--attribution takes first or dominator");
			a->by_dominator = !strcmp(argv[i], "dominator");
		} else if (!strcmp(argv[i], "--text")) {
			a->text = true;
		} else if (!strcmp(argv[i], "--cutoff")) {
			if (++i >= argc || !parse_percent(argv[i], &a->cutoff_percent))
				return usage_error(a, "--cutoff takes a percentage, 0 to 100");
			a->cutoff_given = true;
		} else if (!strcmp(argv[i], "--full-chains")) {
			a->full_chains = true;
		} else if (!strcmp(argv[i], "--by-index")) {
			a->by_index = true;
		} else if (!strcmp(argv[i], "--stats")) {
			a->stats = true;
		} else if (!strcmp(argv[i], "--force")) {
			a->force = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error(a, "unknown option");
		} else if (npos < 2) {
			pos[npos++] = argv[i];
		} else if (why) {
			/* an address, or a type name (which never starts with a digit) */
			if (isdigit((unsigned char)argv[i][0]) && !parse_address(argv[i], &addr))
				return usage_error(a, "addresses are numbers, like 0xc000012340");
			if (!a->naddresses++)
				a->addresses = argv + i;
			else if (a->addresses + a->naddresses - 1 != argv + i)
				return usage_error(a, "options go before BINARY DUMP ADDRESS...");
		} else {
			return usage_error(a, "analyze takes a binary and a heap dump");
		}
	}
	if (npos != 2 || (why && !a->naddresses))
		return usage_error(a, why ? "why takes a binary, a heap dump and addresses"
					  : "analyze takes a binary and a heap dump");
	if ((a->cutoff_given || a->by_index) && !a->text)
		return usage_error(a, "--cutoff and --by-index are for the text report (--text)");
	if (mode != MODE_ANALYZE && (a->text || a->output))
		return usage_error(a, "the answer goes to standard output: no -o or --text");
	if (!a->output)
		a->output = a->text ? "-" : "heapref.pb.gz";
	a->binary = pos[0];
	a->dump = pos[1];
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
};

static int write_output(FILE *out, void *ctx, struct hr_error *err)
{
	const struct profile_output *o = ctx;

	return o->a->text ? write_report(out, o->a, o->tree, err)
			  : hr_write_pprof(out, o->tree, err);
}

/*
 * Writes the profile or report to a temporary file next to path and renames it into place, so
 * a failure leaves no partial file and an existing file untouched. Any failure here is
 * an output failure (exit status 3), whatever err->code says.
 */
static int write_profile(const struct analyze_args *a, const struct hr_chains *tree,
			 struct hr_error *err)
{
	struct profile_output o = { a, tree };

	return write_output_file(a->output, write_output, &o, err);
}

int write_output_file(const char *path, int (*write)(FILE *out, void *ctx, struct hr_error *err),
		      void *ctx, struct hr_error *err)
{
	size_t len = strlen(path);
	char *tmp;
	FILE *out;
	int fd, rc;

	if (!strcmp(path, "-")) {
		rc = write(stdout, ctx, err);
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
	if (fd < 0 || !(out = fdopen(fd, "wb"))) {
		rc = hr_error_set(err, HR_EIO, "%s: cannot create: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return rc;
	}
	rc = write(out, ctx, err);
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
bool inputs_swapped(const char *command, const char *binary, const char *dump)
{
	if (!file_starts_with(dump, "\177ELF", 4) || !file_starts_with(binary, "go1.", 4))
		return false;
	fprintf(stderr, "heapref: the arguments are the wrong way round: %s is an ELF file and %s "
		"a heap dump (%s takes BINARY, then DUMP)\n", dump, binary, command);
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
static int check_inputs(const char *binary_path, const char *dump_path, bool force,
			const struct hr_dump *dump, const struct hr_binary *bin)
{
	const struct hr_bytes *dv = &hr_dump_params(dump)->go_version;
	const char *bv = hr_binary_go_version(bin);
	char why[HR_ERROR_MAX];

	if (!hr_scan_pair_matches(dump, bin, why, sizeof(why))) {
		if (!force) { /* the one line of a failure: no warnings before it */
			fprintf(stderr, "heapref: %s was not written by %s: %s (--force analyses "
				"anyway)\n", dump_path, binary_path, why);
			return ST_MISMATCH;
		}
		fprintf(stderr, "heapref: warning: %s does not look written by %s: %s; analysing "
			"anyway (--force), chains may be wrong\n", dump_path, binary_path, why);
	}
	warn_unknown_version(dump_path, (const char *)dv->ptr, dv->len);
	if (strlen(bv) != dv->len || memcmp(bv, dv->ptr, dv->len))
		warn_unknown_version(binary_path, bv, strlen(bv));
	if (hr_binary_limits(bin)[0])
		fprintf(stderr, "heapref: warning: %s: %s\n", binary_path, hr_binary_limits(bin));
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
/*
 * heapref why: each address's object, its chain and the paths leading to it, or each
 * type's biggest objects. ST_OK, ST_INPUT (err set) when some address or type had no
 * answer (in no object, reached by no root, no object of the type), or ST_RESOURCES.
 */
static int write_paths(const struct analyze_args *a, const struct analysis *an,
		       struct hr_error *err)
{
	struct hr_path_options opt = { .paths = a->paths };
	int rc = HR_OK, unanswered = 0;

	if (a->paths > 1 && !(opt.graph = hr_heap_graph_new(an->dump, an->tree, an->scan, err)))
		return status_of(err);
	for (int i = 0; i < a->naddresses && !rc; i++) {
		const char *arg = a->addresses[i];
		uint64_t addr;
		bool found;

		if (isdigit((unsigned char)arg[0]) && parse_address(arg, &addr))
			rc = hr_write_path(stdout, an->dump, an->tree, an->scan, &opt, addr, &found,
					   err);
		else
			rc = hr_write_paths_of_type(stdout, an->dump, an->tree, an->scan, &opt, arg,
						    &found, err);
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

/* Opens the pair and makes the tree the scan charges; the checks come in analysis_run(). */
static int analysis_open(const char *binary, const char *dump,
			 const struct analysis_options *o, struct analysis *an,
			 struct hr_scan_options *opts, struct hr_error *err)
{
	if (!(an->dump = hr_dump_open(dump, err)))
		return err->code;
	stats_mark(o->stats, "read+index", stderr);
	if (!(an->bin = hr_binary_open(binary, err)))
		return err->code;
	if (!hr_binary_is_go(an->bin))
		return hr_error_set(err, HR_EINPUT, "%s: not a Go binary (no .gopclntab or "
				    ".go.buildinfo section)", binary);
	stats_mark(o->stats, "binary", stderr);
	if (!(an->tree = hr_chains_new(o->max_depth)))
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	if (!o->full_chains)
		hr_chains_fold_recursion(an->tree);
	if (!(an->scan = hr_scan_new(an->dump, an->bin, an->tree, opts, err)))
		return err->code;
	return HR_OK;
}

int analysis_run(const char *binary, const char *dump, const struct analysis_options *o,
		 struct analysis *an)
{
	struct hr_error err = { 0 };
	struct progress prog = { 0 }; /* the scan reports progress only during its passes */
	struct hr_scan_options opts = { 0 };
	int st;

	*an = (struct analysis){ 0 };
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	if (isatty(STDERR_FILENO))
		opts = (struct hr_scan_options){ show_progress, &prog };
	if (analysis_open(binary, dump, o, an, &opts, &err))
		goto fail;
	/* after hr_scan_new, which refuses pointer sizes and byte orders it cannot read */
	if ((st = check_inputs(binary, dump, o->force, an->dump, an->bin)) != ST_OK) {
		analysis_release(an);
		return st;
	}
	if ((o->keep_paths && hr_scan_keep_paths(an->scan, &err)) ||
	    (o->keep_root_edges && hr_scan_keep_root_edges(an->scan, &err)))
		goto fail;
	if (run_scan(an->scan, o->stats, &prog, &err))
		goto fail;
	return ST_OK;
fail:
	end_progress(&prog);
	analysis_release(an);
	return status_of(&err);
}

void analysis_release(struct analysis *an)
{
	hr_scan_free(an->scan);
	hr_chains_free(an->by_dominator);
	hr_chains_free(an->tree);
	hr_binary_free(an->bin);
	hr_dump_free(an->dump);
	*an = (struct analysis){ 0 };
}

/* heapref retained: the dominator tree, then the root variables and objects by retained size. */
static int write_retained(const struct analyze_args *a, const struct analysis *an,
			  struct stats *stats, struct hr_error *err)
{
	struct hr_heap_dominators *hd = hr_heap_dominators_new(an->dump, an->tree, an->scan, err);
	int rc;

	if (!hd)
		return err->code;
	stats_mark(stats, "dominators", stderr);
	rc = hr_write_retained(stdout, an->dump, an->tree, an->scan, hd, &a->retained, err);
	if (!rc && fflush(stdout))
		rc = hr_error_set(err, HR_EIO, "%s", strerror(errno));
	if (rc == HR_EIO)
		name_output(err, "standard output");
	hr_heap_dominators_free(hd);
	return rc;
}

/* analyze --attribution dominator: the analysis's tree rebuilt along the dominator tree. */
static int attribute_by_dominator(const struct analyze_args *a, struct analysis *an,
				  struct stats *stats, struct hr_error *err)
{
	struct hr_heap_dominators *hd = hr_heap_dominators_new(an->dump, an->tree, an->scan, err);
	struct hr_chains *by_dom;

	if (!hd)
		return err->code;
	by_dom = hr_heap_dom_chains(hd, an->tree, an->scan, a->max_depth, !a->full_chains, err);
	hr_heap_dominators_free(hd);
	if (!by_dom)
		return err->code;
	stats_mark(stats, "dominators", stderr);
	/* the scan charged the old tree and is done with it: only names are kept from it */
	an->by_dominator = by_dom;
	return HR_OK;
}

/* What the command writes once the analysis has run: 0 or a failed status. */
static int write_answer(const struct analyze_args *a, struct analysis *an, struct stats *stats,
			struct hr_error *err)
{
	if (a->mode == MODE_WHY)
		return write_paths(a, an, err);
	if (a->mode == MODE_RETAINED)
		return write_retained(a, an, stats, err) ? ST_RESOURCES : ST_OK;
	if (a->examples) {
		hr_chains_keep_examples(an->tree, a->examples);
		if (hr_scan_offer_examples(an->scan, an->tree, err))
			return status_of(err);
	}
	if (a->by_dominator && attribute_by_dominator(a, an, stats, err))
		return status_of(err);
	/* the output, not the input: status 3 */
	return write_profile(a, an->by_dominator ? an->by_dominator : an->tree, err)
		       ? ST_RESOURCES : ST_OK;
}

static int run(int argc, char **argv, enum mode mode)
{
	struct analyze_args a;
	struct hr_error err = { 0 };
	struct timespec start;
	struct analysis an;
	struct analysis_options o;
	int st = parse_args(argc, argv, mode, &a);

	if (st)
		return st == ST_HELP ? ST_OK : st;
	if (inputs_swapped(mode_names[mode], a.binary, a.dump))
		return ST_USAGE;
	clock_gettime(CLOCK_MONOTONIC, &start);
	o = (struct analysis_options){ .max_depth = a.max_depth, .full_chains = a.full_chains,
				       .force = a.force,
				       .keep_paths = mode != MODE_ANALYZE || a.by_dominator ||
						     a.examples,
				       .keep_root_edges = mode == MODE_RETAINED || a.by_dominator ||
							  (mode == MODE_WHY && a.paths > 1),
				       .stats = a.stats ? stats_start() : NULL };
	if ((st = analysis_run(a.binary, a.dump, &o, &an)) != ST_OK)
		goto done;
	if ((st = write_answer(&a, &an, o.stats, &err)) != ST_OK) {
		fprintf(stderr, "heapref: %s\n", err.msg);
	} else if (mode == MODE_ANALYZE) {
		stats_mark(o.stats, "output", stderr);
		print_summary(an.dump, hr_scan_summary(an.scan),
			      an.by_dominator ? an.by_dominator : an.tree, a.output, since(&start));
	}
	analysis_release(&an);
done:
	stats_stop(o.stats);
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
