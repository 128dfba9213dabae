/* SPDX-License-Identifier: Apache-2.0 */
/*
 * usage.c - the --help text of heapref and of each command, in one place. docs/cli.md
 * quotes each verbatim; tests/e2e/test_cli.py checks that they agree.
 */
#include <string.h>

#include "args.h"

/* The options of why, retained and goroutines that read a running process. */
#define PROCESS_OPTIONS                                                                        \
	"  --pid PID       a running process instead of BINARY DUMP (see analyze --help)\n"      \
	"  --save-core FILE\n"                                                                    \
	"                  --pid: keep the core in FILE\n"                                        \
	"  --pause-mode MODE\n"                                                              \
	"                  --pid: how long the process is stopped (see analyze --help)\n"

#define THREADS_OPTION                                                                         \
	"  --threads N     threads of the typed walk, 1 to 64 (default: one per processor);\n"  \
	"                  the result is the same with any number\n"

/* The options of the commands that run the analysis as analyze does (why, retained, ...). */
#define ANALYSIS_OPTIONS                                                                       \
	"  --full-chains   do not fold recursion (as analyze)\n"                                 \
	"  --max-depth N   cut chains after N named nodes (default 256; 0 for no limit)\n"       \
	THREADS_OPTION                                                                         \
	"  --stats         time, CPU and peak memory of each phase, on stderr\n"                 \
	"  --force         analyse even when the dump does not look written by the binary\n"    \
	PROCESS_OPTIONS

static const char heapref_usage[] =
	"usage: heapref <command> [options] [arguments]\n"
	"\n"
	"Find out which variables keep a Go program's memory alive, from a heap dump\n"
	"(runtime/debug.WriteHeapDump) or a core file and the binary that wrote it, or from\n"
	"a running process (--pid). DUMP below may be a core file too. Options may come\n"
	"before or after the arguments; heapref help COMMAND (or heapref COMMAND --help)\n"
	"explains a command's options.\n"
	"\n"
	"commands:\n"
	"  analyze [-o FILE] [--text [--cutoff PCT] [--by-index]] [--full-chains]\n"
	"          [--max-depth N] [--threads N] [--stats] [--force] [--examples N]\n"
	"          [--attribution first|dominator] [--by-alloc | --by-type | --types-first]\n"
	"          [--goroutine-labels | --no-goroutine-labels]\n"
	"          BINARY DUMP | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"                write a pprof profile (default heapref.pb.gz) whose stacks are\n"
	"                reference chains from root variables to the memory they keep\n"
	"                alive; view it with go tool pprof -top / -traces / -http=:8080;\n"
	"                --text: the chains as a condensed text report instead\n"
	"  why [-n K] [--full-chains] [--max-depth N] [--threads N] [--stats] [--force]\n"
	"          BINARY DUMP ADDRESS|TYPE...\n"
	"          (or --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"          ADDRESS|TYPE...)\n"
	"                why the heap object at each address (or the biggest of a type)\n"
	"                is alive: its chain and up to K independent paths from roots\n"
	"  retained [--format text|tsv] [-n N] [--full-chains] [--max-depth N]\n"
	"          [--threads N] [--stats] [--force]\n"
	"          BINARY DUMP | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"                the root variables and objects by retained size: what would be\n"
	"                freed if each let go (the dominator tree of the object graph)\n"
	"  diff [-o FILE | --text [--by-index]] [--full-chains] [--max-depth N] [--stats]\n"
	"          [--force] OLD_BINARY OLD_DUMP NEW_BINARY NEW_DUMP\n"
	"                how each chain grew between two dumps: a pprof profile (as\n"
	"                pprof -diff_base makes) or a table, biggest growth first\n"
	"  goroutines [--format text|tsv] [--full-chains] [--max-depth N] [--threads N]\n"
	"          [--stats] [--force]\n"
	"          BINARY DUMP | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"                the goroutines by kind (creator, stack, state) with the memory\n"
	"                their stacks keep alive; leaked ones (the runtime's definition)\n"
	"                first\n"
	"  suspects [--format text|json|html] [-o FILE] [--threshold PCT]\n"
	"          [--baseline OLD_BINARY OLD_DUMP] [--full-chains] [--max-depth N]\n"
	"          [--threads N] [--stats] [--force]\n"
	"          BINARY DUMP | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"                the leak suspects: the roots, and groups of roots sharing memory,\n"
	"                that keep a large share of the heap, where in each the memory\n"
	"                piles up, the path to it and what piled up; with a baseline,\n"
	"                what grew most since\n"
	"  allocs [-o FILE] BINARY DUMP\n"
	"                the classic in-use heap profile (allocation sites), rebuilt from\n"
	"                the dump's memory-profile records\n"
	"  hprof [-o FILE] [--force] BINARY DUMP\n"
	"                the reachable heap as a Java hprof file (default heapref.hprof)\n"
	"                for Eclipse MAT or VisualVM: Go types as classes, globals and\n"
	"                goroutine frames as GC roots\n"
	"  info [--stats] DUMP | BINARY CORE\n"
	"                summarise a heap dump: Go version, records, objects by size,\n"
	"                goroutines by state, segments, finalizers, memstats\n"
	"  object [BINARY] DUMP ADDRESS...\n"
	"                the heap object containing each address (interior pointers\n"
	"                too) and where its pointer words point\n"
	"  types [--summary | --rtype TYPE] BINARY [PATTERN]\n"
	"                the DWARF types of a Go binary\n"
	"  vars [--pc PC | --dump DUMP] BINARY [PATTERN]\n"
	"                its globals and functions' variables with their locations\n"
	"  help [COMMAND]\n"
	"                this text, or a command's options\n"
	"  version       heapref's version, commit and build\n"
	"\n"
	"exit status: 0 success, 1 bad input, 2 usage error, 3 out of memory or output error,\n"
	"  4 the dump was not written by the binary (--force goes on)\n";

static const char analyze_usage[] =
	"usage: heapref analyze [-o FILE] [--text [--cutoff PCT] [--by-index]] [--full-chains]\n"
	"                       [--max-depth N] [--threads N] [--stats] [--force]\n"
	"                       [--examples N]\n"
	"                       [--attribution first|dominator]\n"
	"                       [--by-alloc | --by-type | --types-first]\n"
	"                       [--goroutine-labels | --no-goroutine-labels]\n"
	"                       BINARY DUMP\n"
	"                       | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"  DUMP            a heap dump or a core file (gcore, the kernel, --save-core); a\n"
	"                  go1.3 or go1.4 dump may come alone, its objects named by its own\n"
	"                  type records (also for retained and goroutines)\n"
	"  --pid PID       the running process PID instead: its memory copied into a core\n"
	"                  (in memory) as it was at one moment, when heapref stopped it; the\n"
	"                  pause is reported on stderr; BINARY defaults to /proc/PID/exe.\n"
	"                  Also for why, retained, goroutines and suspects\n"
	"  --save-core FILE\n"
	"                  --pid: keep the core in FILE (heapref analyze BINARY FILE reads it)\n"
	"  --pause-mode MODE\n"
	"                  --pid: auto (the default) copies while the process runs, its\n"
	"                  writes tracked, and stops it only for what it wrote meanwhile\n"
	"                  (milliseconds; Linux 6.7+, x86-64; else, or under a seccomp\n"
	"                  filter, a line says why and it is stopped for the whole copy);\n"
	"                  stop stops it for the whole copy\n"
	"  -o FILE         where to write (default heapref.pb.gz, or standard output with\n"
	"                  --text; - for standard output)\n"
	"  --text          a condensed text report of the chains instead of a pprof profile\n"
	"  --cutoff PCT    --text: merge chains under PCT% of the reachable bytes into\n"
	"                  <other> (default 1; 0 shows every chain)\n"
	"  --by-index      --text: keep elements [0] to [9] and [10+] apart (default: one\n"
	"                  [*] chain for the elements of each array, slice or channel)\n"
	"  --full-chains   do not fold recursion: each link of a list or tree of T is a\n"
	"                  chain of its own (by default a T reached through a T is charged\n"
	"                  to the first T on the chain)\n"
	"  --max-depth N   cut chains after N named nodes, charging the rest to the last\n"
	"                  (default 256; 0 for no limit)\n"
	"  --threads N     threads of the typed walk, 1 to 64 (default: one per processor);\n"
	"                  the result is the same with any number. Also for why, retained\n"
	"                  and goroutines\n"
	"  --stats         time, CPU and peak memory of each phase, on stderr\n"
	"  --force         analyse even when the dump does not look written by the binary\n"
	"                  (different Go version, data or bss layout): the chains may be wrong\n"
	"  --examples N    the N biggest objects charged to each chain (at most 16), their\n"
	"                  addresses for heapref object / why: below each chain of --text,\n"
	"                  and as the label \"examples\" of each sample of the profile\n"
	"  --attribution first|dominator\n"
	"                  charge each object to the first chain that reaches it (default),\n"
	"                  or under its immediate dominator's chain, so that a chain's\n"
	"                  cumulative value is what would be freed with it; what several\n"
	"                  roots share goes under \"$shared by several roots\"\n"
	"  --by-alloc      under each chain, the objects the memory profile sampled below the\n"
	"                  frames that allocated them (\"@ main.newBuf\", callers below it)\n"
	"  --by-type       under each chain, its objects by type (\"type main.Item\", \"type\n"
	"                  []uint8\" for an array of it, \"type ?\" if reached by bitmap only)\n"
	"  --types-first   the types as roots, the chains holding each below it\n"
	"  --no-goroutine-labels\n"
	"                  do not split what goroutines' stacks reached by goroutine; by\n"
	"                  default (the profile of the chains, no other view) each such\n"
	"                  sample is labelled goroutine, created_by, status, wait_reason,\n"
	"                  leaked (yes, no, unknown: see goroutines --help) and, for a\n"
	"                  process or core heapref took, wait_time\n"
	"  --goroutine-labels\n"
	"                  the default of the profile; an error with --text or another view\n";

static const char why_usage[] =
	"usage: heapref why [-n K] [--full-chains] [--max-depth N] [--threads N] [--stats]\n"
	"                   [--force] BINARY DUMP ADDRESS|TYPE...\n"
	"       heapref why [options] --pid PID [--save-core FILE] [--pause-mode MODE]\n"
	"                   [BINARY] ADDRESS|TYPE...\n"
	"  for each address, the heap object holding it and why it is alive: the chain it\n"
	"  is charged to and the objects through which a root reaches it (12 more bytes of\n"
	"  memory per heap object than analyze); for a type (main.Item), the biggest\n"
	"  reachable objects of that type (as the typed walk read them, or charged to a\n"
	"  chain of that type), one path each; exit status 1 when an address is in no\n"
	"  heap object or no root reaches it, or no object has the type\n"
	"  -n K            up to K paths, each through none of the root variables and objects\n"
	"                  of the paths before (default 1); with a type, the K biggest objects\n"
	ANALYSIS_OPTIONS;

static const char retained_usage[] =
	"usage: heapref retained [--format text|tsv] [-n N] [--full-chains] [--max-depth N]\n"
	"                        [--threads N] [--stats] [--force] BINARY DUMP\n"
	"                        | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"  the root variables and the heap objects by retained size: what would be freed\n"
	"  if each let go (the dominator tree of the object graph)\n"
	"  --format tsv    a header row and tab-separated rows, for scripts (default text)\n"
	"  -n N            rows of each list (default 20; 0 for all)\n"
	ANALYSIS_OPTIONS;

static const char diff_usage[] =
	"usage: heapref diff [-o FILE | --text [--by-index]] [--full-chains] [--max-depth N]\n"
	"                    [--stats] [--force] OLD_BINARY OLD_DUMP NEW_BINARY NEW_DUMP\n"
	"  how each chain grew from the old dump to the new one (the binaries may be one\n"
	"  file)\n"
	"  -o FILE         the pprof profile to write (default heapref-diff.pb.gz; - for\n"
	"                  standard output): the new dump's chains and the old one's negated,\n"
	"                  as go tool pprof -diff_base OLD.pb.gz NEW.pb.gz makes them\n"
	"  --text          a table on standard output instead: biggest growth first, in\n"
	"                  bytes and objects, cumulative, new and gone chains marked\n"
	"  --by-index      --text: keep elements [0] to [9] and [10+] apart\n"
	"  --full-chains   do not fold recursion (as analyze)\n"
	"  --max-depth N   cut chains after N named nodes (default 256; 0 for no limit)\n"
	"  --stats         time, CPU and peak memory of each phase, on stderr\n"
	"  --force         analyse even when a dump does not look written by its binary\n";

static const char goroutines_usage[] =
	"usage: heapref goroutines [--format text|tsv] [--full-chains] [--max-depth N]\n"
	"                          [--threads N] [--stats] [--force] BINARY DUMP\n"
	"                          | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"  the goroutines grouped by kind (the function whose go statement created them,\n"
	"  the functions on their stack, their status, wait reason and leak verdict), with\n"
	"  how many there are, the objects and bytes their stacks reached first and their\n"
	"  stacks' size; leaked groups first, with the heap only they keep alive. Leaked is\n"
	"  the runtime's definition (its goroutine leak profile): blocked on a channel,\n"
	"  select, sync.Mutex, RWMutex, WaitGroup or Cond that no goroutine that may still\n"
	"  run can reach; \"unknown\" where the snapshot cannot tell\n"
	"  --format tsv    a header row and tab-separated rows, for scripts (default text)\n"
	ANALYSIS_OPTIONS;

static const char suspects_usage[] =
	"usage: heapref suspects [--format text|json|html] [-o FILE] [--threshold PCT]\n"
	"                        [--baseline OLD_BINARY OLD_DUMP] [--full-chains]\n"
	"                        [--max-depth N] [--threads N] [--stats] [--force]\n"
	"                        BINARY DUMP\n"
	"                        | --pid PID [--save-core FILE] [--pause-mode MODE] [BINARY]\n"
	"  the leak suspects, biggest first: each root variable, and each group of roots\n"
	"  sharing memory none of them retains alone, that retains PCT of the reachable heap\n"
	"  or more; for each, who holds it (a frame variable's goroutine too), where the\n"
	"  memory piles up (down the dominator tree while one child keeps 70% of its\n"
	"  parent: a map and its entries, a slice and its length, a list and its nodes, a\n"
	"  channel and its buffer), the shortest path from the root to it, what piled up by\n"
	"  type, and example addresses for heapref why\n"
	"  --format json   one JSON object (schema heapref-suspects/1, docs/suspects.md)\n"
	"                  instead of the text page\n"
	"  --format html   one self-contained HTML page (no network): the suspects, each\n"
	"                  path drawn as a graph, the chains by retained size as an icicle,\n"
	"                  the goroutine groups\n"
	"  -o FILE         the file to write (default: standard output)\n"
	"  --threshold PCT a suspect retains at least PCT of the reachable heap (default 10)\n"
	"  --baseline OLD_BINARY OLD_DUMP\n"
	"                  an earlier dump of the program: also the roots whose chains grew\n"
	"                  most since, each down to the chain where the growth piles up\n"
	ANALYSIS_OPTIONS;

static const char allocs_usage[] =
	"usage: heapref allocs [-o FILE] BINARY DUMP\n"
	"  the heap profile of allocation sites the runtime kept (runtime.MemProfileRate),\n"
	"  rebuilt from the dump's memory-profile records: alloc_objects, alloc_space,\n"
	"  inuse_objects and inuse_space (the default) per allocation stack, as\n"
	"  runtime/pprof.WriteHeapProfile writes them at the dump's moment\n"
	"  -o FILE         the profile to write (default heapref-allocs.pb.gz; - for\n"
	"                  standard output)\n";

static const char info_usage[] =
	"usage: heapref info [--stats] DUMP | BINARY CORE\n"
	"  a summary of a heap dump: Go version, records, objects by size, goroutines by\n"
	"  state, segments, finalizers, memstats; of a core (with its binary), the same\n"
	"  read from the runtime's structures\n"
	"  --stats         time, CPU and peak memory of reading the dump, on stderr\n";

static const char object_usage[] =
	"usage: heapref object [BINARY] DUMP ADDRESS...\n"
	"  DUMP            a heap dump, or a core file after its binary\n"
	"  for each address (decimal or 0x hex), the heap object containing it (interior\n"
	"  pointers too) and where its pointer words point\n";

static const char types_usage[] =
	"usage: heapref types [--summary | --rtype TYPE] BINARY [PATTERN]\n"
	"  the DWARF types whose name contains PATTERN or matches it as a glob: kind, size,\n"
	"  runtime type offset, members, key and element\n"
	"  --summary       only the sizes of the binary reader's tables\n"
	"  --rtype TYPE    the type whose runtime type is TYPE: a type word of the dump (a\n"
	"                  run-time address) or the runtime_type offset types prints\n";

static const char vars_usage[] =
	"usage: heapref vars [--pc PC | --dump DUMP] BINARY [PATTERN]\n"
	"  the globals and functions whose name contains PATTERN or matches it as a glob,\n"
	"  each function with its parameters and locals and their locations\n"
	"  --pc PC         only the function at PC, its variables (those PATTERN names)\n"
	"                  evaluated there\n"
	"  --dump DUMP     the frames of the dump's goroutines (those of functions PATTERN\n"
	"                  names), each variable at its address in the frame\n";

static const char hprof_usage[] =
	"usage: heapref hprof [-o FILE] [--force] BINARY DUMP\n"
	"  the objects the analysis reaches as a Java heap dump (hprof 1.0.2), to open in\n"
	"  Eclipse MAT or VisualVM: each Go struct type a class with its DWARF fields,\n"
	"  pointer-free memory arrays of primitives, other memory arrays of its words;\n"
	"  each global a class whose static fields are its pointers (a GC root), each\n"
	"  goroutine a thread whose frames' pointers are GC roots (docs/hprof.md)\n"
	"  -o FILE         the file to write (default heapref.hprof; - for standard output)\n"
	"  --force         export even when the dump does not look written by the binary\n";

static const char help_usage[] =
	"usage: heapref help [COMMAND]\n"
	"  heapref's commands, or the options of one (as heapref COMMAND --help)\n";

static const char version_usage[] =
	"usage: heapref version\n"
	"  the version, the commit it was built from, how it was built (static or\n"
	"  dynamic, for which system and processor, by which compiler, whether from a\n"
	"  profile of its own runs) and the releases of the libraries in it: what a bug\n"
	"  report needs\n";

static const struct {
	const char *cmd;
	const char *text;
} usages[] = {
	{ "analyze", analyze_usage }, { "why", why_usage },	{ "retained", retained_usage },
	{ "diff", diff_usage },	      { "allocs", allocs_usage },	{ "goroutines", goroutines_usage },
	{ "suspects", suspects_usage },
	{ "info", info_usage },
	{ "hprof", hprof_usage },
	{ "object", object_usage },   { "types", types_usage }, { "vars", vars_usage },
	{ "help", help_usage },	      { "version", version_usage },
};

const char *cli_command_name(size_t i)
{
	return i < sizeof(usages) / sizeof(usages[0]) ? usages[i].cmd : NULL;
}

const char *cli_usage(const char *cmd)
{
	if (!cmd)
		return heapref_usage;
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
		if (!strcmp(usages[i].cmd, cmd))
			return usages[i].text;
	return NULL;
}
