/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis.c - one analysis of a heap (analysis.h): the checks of the pair, the scan,
 * its result, the dominator tree and a view, in that order, keeping only what the
 * request needs. The command line, the tests and the fuzzers all run it this way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/analysis.h"

/* What the request needs the scan to keep. */
static bool wants_paths(const struct hr_analysis_request *rq)
{
	return rq->paths || rq->examples || rq->dominators || rq->suspects || rq->view_wanted;
}

static bool wants_types(const struct hr_analysis_request *rq)
{
	return rq->types || rq->suspects || (rq->view_wanted && (rq->view == HR_VIEW_BY_TYPE ||
						 rq->view == HR_VIEW_TYPES_FIRST));
}

static bool wants_dominators(const struct hr_analysis_request *rq)
{
	return rq->dominators || rq->suspects ||
	       (rq->view_wanted && rq->view == HR_VIEW_BY_DOMINATOR);
}

static int warn(struct hr_analysis *an, struct hr_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Adds one line to an->warnings; 0 or HR_ENOMEM. */
static int warn(struct hr_analysis *an, struct hr_error *err, const char *fmt, ...)
{
	char line[HR_ERROR_MAX * 2], **grown;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	grown = realloc(an->warnings, (an->nwarnings + 1) * sizeof(*grown));
	if (!grown || !(grown[an->nwarnings] = strdup(line))) {
		if (grown)
			an->warnings = grown;
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	}
	an->warnings = grown;
	an->nwarnings++;
	return HR_OK;
}

/* A warning if the Go build version (of the dump or binary at path) is not a tested one. */
static int warn_unknown_version(struct hr_analysis *an, const char *path, const char *version,
				struct hr_error *err)
{
	char why[HR_ERROR_MAX];

	if (hr_scan_go_version_known(version, strlen(version), why, sizeof(why)))
		return HR_OK;
	return warn(an, err, "%s: %s", path, why);
}

/*
 * The refusal of a pair that does not go together: the why shortened, if the paths are
 * long, so that the line still ends by saying how to analyse it anyway.
 */
static int refuse_pair(const char *heap, const char *binary, const char *why,
		       struct hr_error *err)
{
	static const char suffix[] = " (--force analyses anyway)";
	size_t room = HR_ERROR_MAX - sizeof(suffix) - strlen(heap) - strlen(binary) -
		      sizeof(" was not written by : ...");

	if (room > HR_ERROR_MAX) /* wrapped: the paths alone fill the line */
		room = 0;
	if (strlen(why) <= room)
		room = strlen(why);
	return hr_error_set(err, HR_EMISMATCH, "%s was not written by %s: %.*s%s%s", heap,
			    binary, (int)room, why, room < strlen(why) ? "..." : "", suffix);
}

/*
 * Refuses a heap the binary cannot have written (HR_EMISMATCH), unless forced. Then
 * warns about Go releases heapref is not tested with (the binary's named only when it
 * differs from the heap's, so one unknown release is warned about once), what the binary
 * lacks (no DWARF, no symbols) and what the front end could not read.
 */
static int check_pair(struct hr_analysis *an, bool force, struct hr_error *err)
{
	const struct hr_provenance *prov = hr_dump_provenance(an->model);
	const char *dv = prov->go_version, *bv = hr_binary_go_version(an->bin);
	const char *heap = hr_dump_path(an->model), *binary = hr_binary_path(an->bin);
	char why[HR_ERROR_MAX];
	int rc;

	if (!hr_binary_has_file(an->bin)) /* a go1.3 or go1.4 dump alone, or a test's binary */
		return hr_binary_limits(an->bin)[0] ? warn(an, err, "%s", hr_binary_limits(an->bin))
						    : HR_OK;
	if (!hr_scan_pair_matches(an->model, an->bin, why, sizeof(why))) {
		if (!force)
			return refuse_pair(heap, binary, why, err);
		if ((rc = warn(an, err, "%s does not look written by %s: %s; analysing anyway "
			       "(--force), chains may be wrong", heap, binary, why)))
			return rc;
	}
	if ((rc = warn_unknown_version(an, heap, dv, err)) ||
	    (strcmp(bv, dv) && (rc = warn_unknown_version(an, binary, bv, err))))
		return rc;
	if (hr_binary_limits(an->bin)[0] &&
	    (rc = warn(an, err, "%s: %s", binary, hr_binary_limits(an->bin))))
		return rc;
	if (prov->caveat[0])
		return warn(an, err, "%s: %s", heap, prov->caveat);
	return HR_OK;
}

static void told(const struct hr_analysis_request *rq, const char *phase,
		 const struct hr_analysis *an, const struct hr_scan_summary *sum)
{
	if (rq->phase)
		rq->phase(rq->phase_ctx, phase, an, sum);
}

/* Asks the scan to keep what the request needs of its result. */
static int keep(struct hr_scan *scan, const struct hr_analysis_request *rq, struct hr_error *err)
{
	/* holders for why's paths and the retained view's descriptions, not for the others */
	if (wants_paths(rq) && hr_scan_keep_paths(scan, rq->paths, err))
		return err->code;
	if ((rq->graph || wants_dominators(rq)) && hr_scan_keep_root_edges(scan, err))
		return err->code;
	if (wants_types(rq) && hr_scan_keep_types(scan, err))
		return err->code;
	if (rq->goroutines && hr_scan_keep_goroutines(scan, err))
		return err->code;
	return HR_OK;
}

/*
 * Once pass 1 has walked the roots: the dominator tree started beside the heap walk
 * (dominators_ahead.c). Not with one thread asked for, or one processor, where it would
 * only take time from the walk.
 */
static void start_dominators(void *ctx, const struct hr_scan *s)
{
	struct hr_analysis *an = ctx;
	struct hr_root_edge *edges;
	size_t n;

	if (hr_scan_root_edges_so_far(s, &edges, &n))
		return; /* made after the scan, as without a second processor */
	an->ahead = hr_heap_dominators_start(an->model, an->tree, edges, n);
	free(edges);
}

/* Whether work may go to a second thread: not with one thread asked for, or one processor. */
static bool second_thread(const struct hr_analysis_request *rq)
{
	return rq->scan.threads != 1 && hr_cpus_usable() > 1;
}

static bool dominators_ahead(const struct hr_analysis_request *rq)
{
	return wants_dominators(rq) && !rq->dominators_after && second_thread(rq);
}

/* The checks, both passes and the result; the scan freed whatever happens. */
static int scan(struct hr_analysis *an, const struct hr_analysis_request *rq, struct hr_error *err)
{
	struct hr_scan *s = hr_scan_new(an->model, an->bin, an->tree, &rq->scan, err);
	int rc;

	if (!s)
		return err->code;
	/* after hr_scan_new(), which refuses pointer sizes and byte orders it cannot read */
	if ((rc = hr_scan_image(an->model, an->bin, &an->img, err)) ||
	    (rc = check_pair(an, rq->force, err)))
		goto done;
	told(rq, "checks", an, NULL);
	if (dominators_ahead(rq))
		hr_scan_on_roots_walked(s, start_dominators, an);
	if ((rc = keep(s, rq, err)) || (rc = hr_scan_pass1(s, err)))
		goto done;
	told(rq, "pass 1", an, hr_scan_summary(s));
	if ((rc = hr_scan_pass2(s, err)))
		goto done;
	told(rq, "pass 2", an, hr_scan_summary(s));
	if (!(an->result = hr_scan_take_result(s, err)))
		rc = err->code;
done:
	hr_scan_free(s);
	return rc;
}

int hr_analysis_run(const struct hr_dump *model, const struct hr_binary *bin,
		    const struct hr_analysis_request *rq, struct hr_analysis *an,
		    struct hr_error *err)
{
	struct hr_view_sources src = { .model = model, .bin = bin };
	int rc;

	*an = (struct hr_analysis){ .model = model, .bin = bin };
	if (!(an->tree = hr_chains_new(rq->max_depth)))
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	if (!rq->full_chains)
		hr_chains_fold_recursion(an->tree);
	if ((rc = scan(an, rq, err)))
		return rc;
	src.result = an->result;
	if (rq->leaks) {
		if (!(an->leaks = hr_goroutine_leaks_find(model, &an->img,
							  rq->leaks_retained || rq->suspects, err)))
			return err->code;
		told(rq, "leaks", an, NULL);
	}
	if (rq->examples) {
		hr_chains_keep_examples(an->tree, rq->examples);
		if ((rc = hr_view_offer_examples(an->tree, &src, err)))
			return rc;
	}
	if (wants_dominators(rq)) {
		bool kept = false;

		an->dominators = an->ahead ? hr_heap_dominators_finish(an->ahead, an->tree,
								       an->result, &kept, err)
					   : hr_heap_dominators_new(model, an->tree, an->result, err);
		an->dominators_made = !an->ahead ? HR_DOM_MADE_AFTER
				      : kept     ? HR_DOM_MADE_BESIDE : HR_DOM_MADE_AGAIN;
		an->ahead = NULL;
		if (!an->dominators)
			return err->code;
		told(rq, "dominators", an, NULL);
	}
	if (rq->suspects) {
		struct hr_suspect_sources ss = { model, &an->img, an->tree, an->result,
						 an->dominators, rq->baseline, an->leaks,
						 second_thread(rq) ? 2 : 1 };

		if (!(an->suspects = hr_suspects_find(&ss, rq->threshold_percent, err)))
			return err->code;
		told(rq, "suspects", an, NULL);
	}
	if (!rq->view_wanted)
		return HR_OK;
	src.dominators = an->dominators;
	if (!(an->view = hr_view_chains(rq->view, an->tree, &src, rq->max_depth,
					!rq->full_chains, err)))
		return err->code;
	if (!rq->dominators) { /* made for the view alone: its memory back before the writers */
		hr_heap_dominators_free(an->dominators);
		an->dominators = NULL;
	}
	told(rq, "view", an, NULL);
	return HR_OK;
}

const struct hr_chains *hr_analysis_chains(const struct hr_analysis *an)
{
	return an->view ? an->view : an->tree;
}

void hr_analysis_release(struct hr_analysis *an)
{
	for (size_t i = 0; i < an->nwarnings; i++)
		free(an->warnings[i]);
	free(an->warnings);
	hr_chains_free(an->view);
	hr_goroutine_leaks_free(an->leaks);
	hr_suspects_free(an->suspects);
	hr_heap_dominators_abandon(an->ahead);
	hr_heap_dominators_free(an->dominators);
	hr_result_free(an->result);
	hr_chains_free(an->tree);
	*an = (struct hr_analysis){ 0 };
}
