/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c - JSON values for the writers that write JSON (see writers_internal.h).
 */
#include <inttypes.h>

#include "writers_internal.h"

/*
 * The length of the valid UTF-8 sequence at p (1 to 4 bytes), or 0 when it is not one:
 * a stray continuation byte, a cut sequence, an overlong form, a surrogate, past U+10FFFF.
 */
static int utf8_length(const unsigned char *p)
{
	unsigned char b = p[0];
	int n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;

	if (b >= 0xf5 || !n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80) /* a NUL ends the string here too */
			return 0;
	if ((b == 0xe0 && p[1] < 0xa0) || (b == 0xed && p[1] >= 0xa0) ||
	    (b == 0xf0 && p[1] < 0x90) || (b == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		int n;

		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&')
			fprintf(out, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, out);
		else if ((n = utf8_length(p))) {
			fwrite(p, 1, (size_t)n, out);
			p += n - 1;
		} else {
			fputs("\\ufffd", out); /* not UTF-8: names cut in a character, or bytes */
		}
	}
	fputc('"', out);
}

void json_addr(FILE *out, uint64_t addr)
{
	fprintf(out, "\"0x%" PRIx64 "\"", addr);
}
