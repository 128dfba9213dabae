/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_binary.c - the subcommands that show what the binary reader finds in a Go
 * executable:
 *
 *   heapref types [--summary | --rtype TYPE] BINARY [PATTERN]
 *       the DWARF types whose name matches PATTERN (contains it, or matches it as a
 *       glob: Go names hold * and [ themselves, so both are tried), with kind, size, runtime type offset, members, targets;
 *       --summary prints only the table sizes (a load-only mode for benchmarks);
 *       --rtype TYPE the type whose runtime type is TYPE: a run-time address (an
 *       interface's type word) or the offset from runtime.types that types prints.
 *   heapref vars [--pc PC | --dump DUMP] BINARY [PATTERN]
 *       the globals and functions matching PATTERN, each function with its parameters
 *       and locals and their locations (location lists in full); with --pc only the
 *       function at PC, its variables (those matching PATTERN) evaluated there; with --dump the frames of the
 *       dump's goroutines, each variable's location evaluated at the frame's PC and
 *       turned into an address with CFA = sp + frame size, and the first words of
 *       frame memory it holds.
 *
 * Output is one record per line, fields separated by tabs, "key=value" after the name.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "heapref/binary.h"
#include "heapref/core.h"
#include "heapref/dump.h"
#include "heapref/scan.h"

static int output_status(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return ST_OK;
	fprintf(stderr, "heapref: standard output: %s\n", strerror(errno));
	return ST_RESOURCES;
}

static bool matches(const char *pattern, const char *name)
{
	if (!pattern || strstr(name, pattern))
		return true;
	return strpbrk(pattern, "*?[") && fnmatch(pattern, name, 0) == 0;
}

/* Opens the binary; without DWARF it fails with the reader's explanation. */
static struct hr_binary *open_with_dwarf(const char *path, int *status)
{
	struct hr_error err = { 0 };
	struct hr_binary *bin = hr_binary_open(path, &err);

	if (!bin) {
		*status = cli_report(&err);
		return NULL;
	}
	if (!hr_binary_has_dwarf(bin)) {
		fprintf(stderr, "heapref: %s: %s\n", path, hr_binary_limits(bin));
		hr_binary_free(bin);
		*status = ST_INPUT;
		return NULL;
	}
	return bin;
}

static const char *type_name(const struct hr_binary *bin, uint32_t id)
{
	const char *name = hr_binary_type(bin, id)->name;

	return id == 0 ? "void" : name[0] ? name : "?";
}

/* ---- types ----------------------------------------------------------------------------------- */

static void print_type(const struct hr_binary *bin, uint32_t id)
{
	const struct hr_type *t = hr_binary_type(bin, id);

	printf("%s\tid=%" PRIu32 "\tkind=%s\tsize=%" PRIu64, type_name(bin, id), id,
	       hr_kind_name(t->kind), t->size);
	if (t->flags & HR_TYPE_HAS_RUNTIME_TYPE)
		printf("\truntime_type=0x%" PRIx64, t->runtime_type);
	if (t->target)
		printf("\ttarget=%s", type_name(bin, t->target));
	if (t->key)
		printf("\tkey=%s", type_name(bin, t->key));
	if (t->elem)
		printf("\telem=%s", type_name(bin, t->elem));
	if (t->flags & HR_TYPE_HAS_COUNT)
		printf("\tlen=%" PRIu64, t->count);
	putchar('\n');
	for (uint32_t i = 0; i < t->member_count; i++) {
		const struct hr_member *m = hr_binary_member(bin, t->first_member + i);

		if (m)
			printf("\t%s\toffset=%" PRIu64 "\ttype=%s%s\n", m->name, m->offset,
			       type_name(bin, m->type), m->embedded ? "\tembedded" : "");
	}
}

static void print_summary(const struct hr_binary *bin)
{
	printf("dwarf_version\t%u\n", hr_binary_dwarf_version(bin));
	printf("types\t%" PRIu32 "\n", hr_binary_type_count(bin));
	printf("globals\t%zu\n", hr_binary_global_count(bin));
	printf("functions\t%zu\n", hr_binary_func_count(bin));
	printf("symbols\t%zu\n", hr_binary_symbol_count(bin));
	printf("debug_info_bytes\t%" PRIu64 "\n", hr_binary_debug_info_size(bin));
	printf("table_bytes\t%" PRIu64 "\n", hr_binary_table_bytes(bin));
}

static bool parse_addr(const char *text, uint64_t *out)
{
	char *end = NULL;

	errno = 0;
	*out = strtoull(text, &end, 0);
	return !errno && end && end != text && !*end;
}

/* The type whose runtime_type offset (from runtime.types, as print_type shows it) is off. */
static uint32_t type_by_runtime_offset(const struct hr_binary *bin, uint64_t off)
{
	for (uint32_t id = 1; id < hr_binary_type_count(bin); id++) {
		const struct hr_type *t = hr_binary_type(bin, id);

		if ((t->flags & HR_TYPE_HAS_RUNTIME_TYPE) && t->runtime_type == off)
			return id;
	}
	return 0;
}

/*
 * The type whose runtime type is at run-time address rtype (an interface's type word),
 * or else at offset rtype from runtime.types. An address is tried first; the two do not
 * meet in practice, as runtime.types follows the text segment, which is larger than any
 * offset into the types.
 */
static int print_runtime_type(const struct hr_binary *bin, uint64_t rtype)
{
	uint32_t id = hr_binary_type_by_runtime_addr(bin, rtype);

	if (!id)
		id = type_by_runtime_offset(bin, rtype);
	if (!id) {
		fprintf(stderr, "heapref: %s: no type has its runtime type at 0x%" PRIx64
			" (a run-time address or an offset from runtime.types)\n",
			hr_binary_path(bin), rtype);
		return ST_INPUT;
	}
	print_type(bin, id);
	return ST_OK;
}

int cmd_types(int argc, char **argv)
{
	bool summary = false;
	const char *rtype = NULL;
	const struct cli_opt opts[] = { { "--summary", NULL, &summary, NULL },
					{ "--rtype", NULL, NULL, &rtype } };
	uint64_t addr = 0;
	struct hr_binary *bin;
	int status = cli_parse("types", argc, argv, opts, 2, &argc);

	if (status)
		return status == CLI_HELP ? ST_OK : status;
	if (argc < 1 || argc > 2)
		return cli_usage_error("types", "types takes a binary and an optional pattern");
	if (rtype && !parse_addr(rtype, &addr))
		return cli_usage_error("types", "--rtype takes a number, like 0x4c4240, not %s",
				       rtype);
	if (summary && rtype)
		return cli_usage_error("types", "--summary or --rtype, not both");
	bin = open_with_dwarf(argv[0], &status);
	if (!bin)
		return status;
	if (summary)
		print_summary(bin);
	else if (rtype)
		status = print_runtime_type(bin, addr);
	for (uint32_t id = 1; !summary && !rtype && id < hr_binary_type_count(bin); id++)
		if (matches(argc > 1 ? argv[1] : NULL, hr_binary_type(bin, id)->name))
			print_type(bin, id);
	hr_binary_free(bin);
	return status ? status : output_status();
}

/* ---- vars ------------------------------------------------------------------------------------- */

/* The globals, at the addresses of image im. */
static void print_globals(const struct hr_image *im, const char *pattern)
{
	for (size_t i = 0; i < hr_binary_global_count(im->bin); i++) {
		const struct hr_global *g = hr_binary_global(im->bin, i);

		if (matches(pattern, g->name))
			printf("global\t%s\taddr=0x%" PRIx64 "\ttype=%s\n", g->name,
			       hr_image_runtime(im, g->addr), type_name(im->bin, g->type));
	}
}

static void print_func_header(const struct hr_image *im, size_t index)
{
	const struct hr_func *f = hr_binary_func(im->bin, index);

	printf("func\t%s\tlow_pc=0x%" PRIx64 "\thigh_pc=0x%" PRIx64 "\n", f->name,
	       hr_image_runtime(im, f->low_pc), hr_image_runtime(im, f->high_pc));
}

/* Every variable of function index with its whole location list. */
static int print_func_vars(const struct hr_image *im, size_t index, struct hr_frame_vars *fv)
{
	const struct hr_binary *bin = im->bin;
	struct hr_error err = { 0 };
	char loc[1024];
	int rc = hr_image_func_vars(im, index,
				    hr_image_runtime(im, hr_binary_func(bin, index)->low_pc), fv,
				    &err);

	if (rc)
		return cli_report(&err);
	print_func_header(im, index);
	for (size_t i = 0; i < fv->count; i++) {
		const struct hr_var *v = &fv->vars[i];

		rc = hr_image_describe_var(im, index, i, loc, sizeof(loc), &err);
		if (rc)
			return cli_report(&err);
		printf("\t%s\t%s\ttype=%s\tloc=%s", v->is_param ? "param" : "local", v->name,
		       type_name(bin, v->type), loc);
		if (v->has_closure_offset)
			printf("\tclosure_offset=%" PRIu64, v->closure_offset);
		putchar('\n');
	}
	return ST_OK;
}

/* Addresses of the CFA-relative pieces of a location, space separated ("" if none). */
static void piece_addrs(const struct hr_loc_piece *p, uint32_t n, uint64_t cfa, char *buf,
			size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t k = 0; k < n && used + 1 < len; k++) {
		int w;

		if (p[k].kind != HR_LOC_CFA)
			continue;
		w = snprintf(buf + used, len - used, "%s0x%" PRIx64, used ? " " : "",
			     cfa + (uint64_t)p[k].offset);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

/* Up to 4 words of a dump frame's memory at addr, as "0x1,0x2"; "" when outside it. */
static void frame_words(const struct hr_dump *dump, const struct hr_frame *f, uint64_t addr,
			uint64_t size, char *buf, size_t len)
{
	unsigned ps = hr_dump_params(dump)->ptr_size;
	size_t used = 0;

	buf[0] = '\0';
	for (uint64_t i = 0; i < 4 && (i + 1) * ps <= size; i++) {
		uint64_t at = addr - f->sp + i * ps;
		int w;

		if (addr < f->sp || at > f->contents.len || f->contents.len - at < ps)
			return;
		w = snprintf(buf + used, len - used, "%s0x%" PRIx64, i ? "," : "",
			     hr_dump_word(dump, f->contents.ptr + at));
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}

/*
 * The in-scope variables (those pattern names, NULL for all) as evaluated; with a frame,
 * their addresses and first words.
 */
static void print_vars_at(const struct hr_binary *bin, const struct hr_frame_vars *fv,
			  const char *pattern, uint64_t cfa, const struct hr_dump *dump,
			  const struct hr_frame *f)
{
	for (size_t i = 0; i < fv->count; i++) {
		const struct hr_var *v = &fv->vars[i];
		const struct hr_loc_piece *p = &fv->pieces[v->first_piece];
		char loc[1024], addrs[1024];

		if (!v->in_scope || !matches(pattern, v->name))
			continue;
		hr_loc_format(p, v->piece_count, loc, sizeof(loc));
		printf("\t%s\t%s\ttype=%s\tloc=%s", v->is_param ? "param" : "local", v->name,
		       type_name(bin, v->type), loc);
		if (cfa) {
			piece_addrs(p, v->piece_count, cfa, addrs, sizeof(addrs));
			if (addrs[0])
				printf("\taddr=%s", addrs);
		}
		if (dump && v->piece_count == 1 && p->kind == HR_LOC_CFA) {
			uint64_t size = hr_binary_type(bin, v->type)->size;

			frame_words(dump, f, cfa + (uint64_t)p->offset, size, addrs, sizeof(addrs));
			if (addrs[0])
				printf("\twords=%s", addrs);
		}
		putchar('\n');
	}
}

static int vars_at_pc(const struct hr_binary *bin, const char *text, const char *pattern)
{
	const struct hr_image im = { bin, 0 }; /* no process: the ELF's addresses */
	struct hr_frame_vars fv = { 0 };
	struct hr_error err = { 0 };
	uint64_t pc;
	int64_t index;
	int rc;

	if (!parse_addr(text, &pc))
		return cli_usage_error("vars", "--pc takes an address such as 0x4c4240, not %s",
				       text);
	index = hr_image_func_at(&im, pc);
	if (index < 0) {
		fprintf(stderr, "heapref: %s: no function contains pc 0x%" PRIx64 "\n",
			hr_binary_path(bin), pc);
		return ST_INPUT;
	}
	rc = hr_image_func_vars(&im, (size_t)index, pc, &fv, &err);
	if (rc) {
		hr_frame_vars_release(&fv);
		return cli_report(&err);
	}
	print_func_header(&im, (size_t)index);
	print_vars_at(bin, &fv, pattern, 0, NULL, NULL);
	hr_frame_vars_release(&fv);
	return ST_OK;
}

/* One frame of a dump: its function's variables at its PC, with addresses. */
static int print_frame(const struct hr_image *im, const struct hr_dump *dump,
		       const struct hr_frame *f, const struct hr_goroutine *g,
		       struct hr_frame_vars *fv)
{
	struct hr_error err = { 0 };
	uint64_t pc = f->depth == 0 ? f->pc : f->pc - 1; /* a caller frame: the call insn */
	uint64_t cfa = f->sp + f->contents.len;
	int64_t index = hr_image_func_at(im, pc);
	int rc;

	printf("frame\tgoroutine=%" PRIu64 "\tdepth=%" PRIu64 "\tfunc=%.*s\tpc=0x%" PRIx64
	       "\tsp=0x%" PRIx64 "\tcfa=0x%" PRIx64 "\n", g->goid, f->depth,
	       (int)f->func_name.len, (const char *)f->func_name.ptr, f->pc, f->sp, cfa);
	if (index < 0)
		return ST_OK;
	rc = hr_image_func_vars(im, (size_t)index, pc, fv, &err);
	if (rc)
		return cli_report(&err);
	print_vars_at(im->bin, fv, NULL, cfa, dump, f);
	return ST_OK;
}

static bool frame_matches(const char *pattern, const struct hr_frame *f)
{
	char name[512];

	snprintf(name, sizeof(name), "%.*s", (int)(f->func_name.len < 511 ? f->func_name.len : 511),
		 (const char *)f->func_name.ptr);
	return matches(pattern, name);
}

static int vars_in_dump(const struct hr_binary *bin, const char *dump_path, const char *pattern)
{
	struct hr_image im;
	struct hr_error err = { 0 };
	struct hr_frame_vars fv = { 0 };
	struct hr_dump *dump = hr_input_kind_of(dump_path) == HR_INPUT_CORE
				       ? hr_core_open(dump_path, bin, &err)
				       : hr_dump_open(dump_path, &err);
	const struct hr_goroutine *gs;
	const struct hr_frame *frames;
	size_t ng, nf;
	int status = ST_OK;

	if (!dump)
		return cli_report(&err);
	if (hr_scan_image(dump, bin, &im, &err)) {
		hr_dump_free(dump);
		return cli_report(&err);
	}
	print_globals(&im, pattern); /* at their run-time addresses, load bias applied */
	gs = hr_dump_goroutines(dump, &ng);
	frames = hr_dump_frames(dump, &nf);
	for (size_t i = 0; i < nf && status == ST_OK; i++)
		if (frames[i].goroutine < ng && frame_matches(pattern, &frames[i]))
			status = print_frame(&im, dump, &frames[i], &gs[frames[i].goroutine], &fv);
	hr_frame_vars_release(&fv);
	hr_dump_free(dump);
	return status;
}

static int list_vars(const struct hr_binary *bin, const char *pattern)
{
	const struct hr_image im = { bin, 0 }; /* no process: the ELF's addresses */
	struct hr_frame_vars fv = { 0 };
	int status = ST_OK;

	print_globals(&im, pattern);
	for (size_t i = 0; i < hr_binary_func_count(bin) && status == ST_OK; i++)
		if (matches(pattern, hr_binary_func(bin, i)->name))
			status = print_func_vars(&im, i, &fv);
	hr_frame_vars_release(&fv);
	return status;
}

int cmd_vars(int argc, char **argv)
{
	const char *pc = NULL, *dump = NULL;
	const struct cli_opt opts[] = { { "--pc", NULL, NULL, &pc },
					{ "--dump", NULL, NULL, &dump } };
	struct hr_binary *bin;
	int status = cli_parse("vars", argc, argv, opts, 2, &argc);

	if (status)
		return status == CLI_HELP ? ST_OK : status;
	if (argc < 1 || argc > 2)
		return cli_usage_error("vars", "vars takes a binary and an optional pattern");
	if (pc && dump)
		return cli_usage_error("vars", "--pc or --dump, not both");
	bin = open_with_dwarf(argv[0], &status);
	if (!bin)
		return status;
	if (pc)
		status = vars_at_pc(bin, pc, argc > 1 ? argv[1] : NULL);
	else if (dump)
		status = vars_in_dump(bin, dump, argc > 1 ? argv[1] : NULL);
	else
		status = list_vars(bin, argc > 1 ? argv[1] : NULL);
	hr_binary_free(bin);
	return status ? status : output_status();
}
