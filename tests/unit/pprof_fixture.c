/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof_fixture.c - writes a known chain tree as a pprof profile to the file named on
 * the command line, for the end-to-end test that reads it with `go tool pprof`:
 *   main.cache (1 object, 4864 bytes)
 *     $mapval. (*main.Entry) (100 objects, 3200 bytes)
 *       buf. ([]uint8) (100 objects, 102400 bytes)
 *   main.worker.buf (1 object, 1048576 bytes)
 */
#include <stdio.h>
#include <string.h>

#include "heapref/writers.h"

static uint32_t child(struct hr_chains *t, uint32_t parent, const char *name)
{
	return hr_chains_child(t, parent, name, strlen(name));
}

int main(int argc, char **argv)
{
	struct hr_error err = { 0 };
	struct hr_chains *t = hr_chains_new(0);
	uint32_t cache, val;
	FILE *f;
	int rc;

	if (argc != 2 || !t || !(f = fopen(argv[1], "wb")))
		return 2;
	cache = child(t, HR_CHAINS_TOP, "main.cache");
	val = child(t, cache, "$mapval. (*main.Entry)");
	hr_chains_charge(t, cache, 1, 4864);
	hr_chains_charge(t, val, 100, 3200);
	hr_chains_charge(t, child(t, val, "buf. ([]uint8)"), 100, 102400);
	hr_chains_charge(t, child(t, HR_CHAINS_TOP, "main.worker.buf"), 1, 1048576);
	rc = hr_write_pprof(f, t, NULL, &err);
	if (fclose(f) != 0 || rc) {
		fprintf(stderr, "pprof_fixture: %s\n", err.msg);
		return 1;
	}
	hr_chains_free(t);
	return 0;
}
