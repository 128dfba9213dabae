/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump_inline.c - the memory profile's frames named as the binary's inline tree names
 * them.
 *
 * runtime.WriteHeapDump writes each PC of an allocation's stack as the function whose
 * machine code holds it, with the file and line of the source there. The runtime has
 * already expanded inlined calls into PCs of their own (one per inlined frame), so a
 * constructor inlined into main.main shows as two frames both called main.main, the
 * first at a line of the constructor. The binary's function table says which function
 * was inlined at which PC: a frame whose line and file are those of code inlined into
 * its function is named after the innermost function inlined there, marked inlined,
 * as runtime/pprof's own heap profile names it.
 */
#include <stdlib.h>

#include "heapref/binary.h"
#include "heapref/dump.h"

int hr_dump_name_inlined(struct hr_dump *d, const struct hr_binary *bin, struct hr_error *err)
{
	size_t n;
	const struct hr_memprof_frame *f = hr_dump_memprof_frames(d, &n);
	struct hr_image im = { .bin = bin, .bias = 0 };
	struct hr_pclntab_site *sites;
	struct hr_pclntab *pcln;
	int rc = HR_OK;

	if (!n)
		return HR_OK;
	if (!(pcln = hr_pclntab_open(&im, err))) {
		if (err->code != HR_EINPUT)
			return err->code;
		*err = (struct hr_error){ 0 }; /* a table before Go 1.18: the dump's names stay */
		return HR_OK;
	}
	sites = malloc(n * sizeof(*sites));
	if (!sites) {
		hr_pclntab_free(pcln);
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++)
		sites[k] = (struct hr_pclntab_site){ .func = (const char *)f[k].func.ptr,
						     .func_len = f[k].func.len,
						     .file = (const char *)f[k].file.ptr,
						     .file_len = f[k].file.len,
						     .line = f[k].line, .tag = k };
	rc = hr_pclntab_name_sites(pcln, sites, n, err);
	for (size_t k = 0; k < n && !rc; k++)
		if (sites[k].inlined)
			rc = hr_dump_build_frame_name(d, sites[k].tag, sites[k].name,
						      sites[k].name_len, true, err);
	free(sites);
	hr_pclntab_free(pcln);
	return rc;
}
