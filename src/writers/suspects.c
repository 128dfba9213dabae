/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suspects.c - the leak suspects (suspects.h) as a page of text or as JSON (schema:
 * docs/suspects.md, "heapref-suspects/1"); the HTML page is suspects_html.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/writers.h"
#include "writers_internal.h"

#define SUSPECTS_SCHEMA "heapref-suspects/1"

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "main.a", "main.a and main.b", "main.a, main.b and main.c" (", and others"). */
static void write_roots(FILE *out, const struct hr_suspect *s)
{
	for (size_t i = 0; i < s->nroots; i++) {
		if (i)
			fputs(i + 1 == s->nroots && !s->more_roots ? " and " : ", ", out);
		fputs(s->roots[i], out);
	}
	if (s->more_roots)
		fputs(" and others", out);
}

static void write_text_holder(FILE *out, const struct hr_suspect *s)
{
	fputs("  held by    ", out);
	if (s->kind == HR_SUSPECT_GOROUTINES) {
		fprintf(out, "the stacks of %" PRIu64 " goroutine%s the runtime's definition finds "
			     "leaked (created by %s; the first is goroutine %" PRIu64 ")\n",
			s->goroutines, s->goroutines == 1 ? "" : "s", s->creator, s->goid);
		return;
	}
	if (s->kind == HR_SUSPECT_SHARED) {
		fputs("shared by ", out);
		write_roots(out, s);
		fputs(" (none of them retains it alone)\n", out);
		return;
	}
	write_roots(out, s);
	if (s->creator)
		fprintf(out, ", a frame variable of goroutine %" PRIu64 " (created by %s; %" PRIu64
			     " goroutine%s run%s this function)",
			s->goid, s->creator, s->goroutines, s->goroutines == 1 ? "" : "s",
			s->goroutines == 1 ? "s" : "");
	if (s->creator && s->leaked)
		fprintf(out, "; %" PRIu64 " of them leaked", s->leaked);
	fputc('\n', out);
}

static void write_text_path(FILE *out, const struct hr_suspect *s)
{
	if (!s->npath)
		return;
	fputs("  path       ", out);
	for (size_t i = 0; i < s->npath; i++) {
		const struct hr_suspect_hop *h = &s->path[i];

		if (!i) {
			fprintf(out, "%s\n", h->type);
			continue;
		}
		fprintf(out, "             -> %s%s0x%" PRIx64 " %s (%" PRIu64 " bytes)\n", h->field,
			h->field[0] ? " -> " : "", h->addr, h->type, h->size);
	}
}

static void write_text_suspect(FILE *out, const struct hr_suspects *all, size_t k,
			       const char *binary, const char *dump)
{
	const struct hr_suspect *s = &all->v[k];

	fprintf(out, "suspect %zu: ", k + 1);
	if (s->kind == HR_SUSPECT_GOROUTINES) {
		fprintf(out, "leaked goroutines created by %s", s->creator);
	} else if (s->kind == HR_SUSPECT_SHARED) {
		fputs("memory shared by ", out);
		write_roots(out, s);
	} else {
		write_roots(out, s);
	}
	fprintf(out, " retains %" PRIu64 " bytes (%.1f%% of the reachable heap) in %" PRIu64
		     " object%s\n",
		s->bytes, percent(s->bytes, all->reachable_bytes), s->objects,
		s->objects == 1 ? "" : "s");
	write_text_holder(out, s);
	if (s->kind == HR_SUSPECT_GOROUTINES) {
		fprintf(out, "  what        %s\n\n", s->point.what);
		return;
	}
	fprintf(out, "  piles up in %s", s->point.what);
	if (s->point.addr)
		fprintf(out, " at 0x%" PRIx64, s->point.addr);
	fprintf(out, "\n             which retains %" PRIu64 " bytes (%.1f%% of the suspect) in %"
		     PRIu64 " object%s; chain %s\n",
		s->point.bytes, percent(s->point.bytes, s->bytes), s->point.objects,
		s->point.objects == 1 ? "" : "s", s->point.chain);
	write_text_path(out, s);
	fprintf(out, "  what piled up, by type\n%18s %10s  %s\n", "bytes", "objects", "type");
	for (size_t i = 0; i < s->ntypes; i++)
		fprintf(out, "%18" PRIu64 " %10" PRIu64 "  %s\n", s->types[i].bytes,
			s->types[i].objects, s->types[i].type);
	if (s->other_type_objects)
		fprintf(out, "%18" PRIu64 " %10" PRIu64 "  (other types)\n", s->other_type_bytes,
			s->other_type_objects);
	if (s->nexamples) {
		fprintf(out, "  examples   heapref why %s %s", binary, dump);
		for (size_t i = 0; i < s->nexamples; i++)
			fprintf(out, " 0x%" PRIx64, s->examples[i]);
		fputc('\n', out);
	}
	fputc('\n', out);
}

/* The roots that grew most since the baseline, with where their growth piles up. */
static void write_text_growth(FILE *out, const struct hr_suspects *s)
{
	if (!s->has_baseline)
		return;
	if (!s->ngrowth) {
		fputs("\nno root grew since the baseline\n", out);
		return;
	}
	fprintf(out, "\ngrew most since the baseline (each root's growth, and the chain down to "
		     "where it piles up)\n%14s %10s %14s  %s\n",
		"bytes", "objects", "now bytes", "root: chain");
	for (size_t i = 0; i < s->ngrowth; i++) {
		const struct hr_chain_growth *g = &s->growth[i];

		fprintf(out, "%+14" PRId64 " %+10" PRId64 " %14" PRIu64 "  %s: %s (%+" PRId64
			     " bytes)\n",
			g->bytes, g->objects, g->new_bytes, g->root, g->chain, g->chain_bytes);
	}
}

static void write_text(FILE *out, const struct hr_suspects *s, const char *binary,
		       const char *dump)
{
	fprintf(out, "reachable: %" PRIu64 " bytes in %" PRIu64 " objects; threshold %.4g%% "
		     "(%" PRIu64 " bytes)\n",
		s->reachable_bytes, s->reachable_objects, s->threshold_percent, s->threshold_bytes);
	if (!s->n) {
		fprintf(out, "no suspect: no root variable, and no group of roots sharing memory, "
			     "retains %.4g%% of the reachable heap or more\n", s->threshold_percent);
		write_text_growth(out, s);
		return;
	}
	fprintf(out, "%zu suspect%s, biggest first; each piles up where, down the dominator tree, "
		     "no one child keeps %.0f%% of its parent\n\n",
		s->n, s->n == 1 ? "" : "s", 100.0 * HR_SUSPECT_KEEP_RATIO);
	for (size_t k = 0; k < s->n; k++)
		write_text_suspect(out, s, k, binary, dump);
	if (s->below_threshold)
		fprintf(out, "(%" PRIu64 " more over the threshold not listed)\n", s->below_threshold);
	write_text_growth(out, s);
}

/* --- JSON -------------------------------------------------------------------------------- */

static void json_point(FILE *out, const struct hr_suspect *s)
{
	fprintf(out, "\"accumulation_point\":{\"kind\":\"%s\",\"what\":",
		hr_pile_kind_name(s->point.kind));
	json_string(out, s->point.what);
	fputs(",\"type\":", out);
	json_string(out, s->point.type);
	fprintf(out, ",\"count\":%" PRIu64 ",\"address\":", s->point.count);
	json_addr(out, s->point.addr);
	fprintf(out, ",\"size\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"objects\":%" PRIu64 ",\"chain\":",
		s->point.size, s->point.bytes, s->point.objects);
	json_string(out, s->point.chain);
	fputc('}', out);
}

static void json_path(FILE *out, const struct hr_suspect *s)
{
	fputs("\"path\":[", out);
	for (size_t i = 0; i < s->npath; i++) {
		fputs(i ? ",{\"field\":" : "{\"field\":", out);
		json_string(out, s->path[i].field);
		fputs(",\"type\":", out);
		json_string(out, s->path[i].type);
		fputs(",\"address\":", out);
		json_addr(out, s->path[i].addr);
		fprintf(out, ",\"size\":%" PRIu64 "}", s->path[i].size);
	}
	fputc(']', out);
}

static void json_types(FILE *out, const struct hr_suspect *s)
{
	fputs("\"types\":[", out);
	for (size_t i = 0; i < s->ntypes; i++) {
		fputs(i ? ",{\"type\":" : "{\"type\":", out);
		json_string(out, s->types[i].type);
		fprintf(out, ",\"objects\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", s->types[i].objects,
			s->types[i].bytes);
	}
	fprintf(out, "],\"other_types\":{\"objects\":%" PRIu64 ",\"bytes\":%" PRIu64 "},"
		     "\"examples\":[",
		s->other_type_objects, s->other_type_bytes);
	for (size_t i = 0; i < s->nexamples; i++) {
		if (i)
			fputc(',', out);
		json_addr(out, s->examples[i]);
	}
	fputc(']', out);
}

static const char *kind_name(enum hr_suspect_kind k)
{
	return k == HR_SUSPECT_SHARED ? "shared" : k == HR_SUSPECT_GOROUTINES ? "goroutines" : "root";
}

static void json_suspect(FILE *out, const struct hr_suspects *all, size_t k)
{
	const struct hr_suspect *s = &all->v[k];

	fprintf(out, "{\"rank\":%zu,\"kind\":\"%s\",\"bytes\":%" PRIu64 ",\"objects\":%" PRIu64
		     ",\"percent\":%.2f,\"roots\":[",
		k + 1, kind_name(s->kind), s->bytes, s->objects,
		percent(s->bytes, all->reachable_bytes));
	for (size_t i = 0; i < s->nroots; i++) {
		if (i)
			fputc(',', out);
		json_string(out, s->roots[i]);
	}
	fprintf(out, "],\"more_roots\":%s,\"goroutine\":", s->more_roots ? "true" : "false");
	if (s->creator) {
		fprintf(out, "{\"id\":%" PRIu64 ",\"creator\":", s->goid);
		json_string(out, s->creator);
		fprintf(out, ",\"goroutines\":%" PRIu64 ",\"leaked\":%" PRIu64 "}", s->goroutines,
			s->leaked);
	} else {
		fputs("null", out);
	}
	fputc(',', out);
	json_point(out, s);
	fputc(',', out);
	json_path(out, s);
	fputc(',', out);
	json_types(out, s);
	fputc('}', out);
}

/* null without a baseline, else the roots that grew, biggest first. */
static void json_growth(FILE *out, const struct hr_suspects *s)
{
	if (!s->has_baseline) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (size_t i = 0; i < s->ngrowth; i++) {
		const struct hr_chain_growth *g = &s->growth[i];

		fputs(i ? ",\n{\"root\":" : "\n{\"root\":", out);
		json_string(out, g->root);
		fprintf(out, ",\"bytes\":%" PRId64 ",\"objects\":%" PRId64 ",\"old_bytes\":%" PRIu64
			     ",\"new_bytes\":%" PRIu64 ",\"chain\":",
			g->bytes, g->objects, g->old_bytes, g->new_bytes);
		json_string(out, g->chain);
		fprintf(out, ",\"chain_bytes\":%" PRId64 ",\"chain_objects\":%" PRId64 "}",
			g->chain_bytes, g->chain_objects);
	}
	fputc(']', out);
}

void write_suspects_json(FILE *out, const struct hr_suspects *s, const char *binary,
			 const char *dump)
{
	fputs("{\"schema\":\"" SUSPECTS_SCHEMA "\",\"binary\":", out);
	json_string(out, binary);
	fputs(",\"heap\":", out);
	json_string(out, dump);
	fprintf(out, ",\"reachable\":{\"bytes\":%" PRIu64 ",\"objects\":%" PRIu64 "},"
		     "\"threshold\":{\"percent\":%.6g,\"bytes\":%" PRIu64 "},"
		     "\"keep_ratio\":%.2f,\"suspects\":[",
		s->reachable_bytes, s->reachable_objects, s->threshold_percent, s->threshold_bytes,
		HR_SUSPECT_KEEP_RATIO);
	for (size_t k = 0; k < s->n; k++) {
		if (k)
			fputc(',', out);
		fputs("\n", out);
		json_suspect(out, s, k);
	}
	fprintf(out, "],\"not_listed\":%" PRIu64 ",\"growth\":", s->below_threshold);
	json_growth(out, s);
	fputs("}\n", out);
}

int hr_write_suspects(FILE *out, const struct hr_suspects *s, const struct hr_suspects_options *opt,
		      struct hr_error *err)
{
	if (opt->format == HR_SUSPECTS_JSON)
		write_suspects_json(out, s, opt->binary, opt->dump);
	else if (opt->format == HR_SUSPECTS_HTML)
		write_suspects_html(out, s, opt);
	else
		write_text(out, s, opt->binary, opt->dump);
	if (ferror(out))
		return hr_error_set(err, HR_EIO, "cannot write the suspects");
	return HR_OK;
}
