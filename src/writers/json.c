/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c - JSON values for the writers that write JSON (see writers_internal.h).
 */
#include <inttypes.h>

#include "writers_internal.h"

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&')
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void json_addr(FILE *out, uint64_t addr)
{
	fprintf(out, "\"0x%" PRIx64 "\"", addr);
}
