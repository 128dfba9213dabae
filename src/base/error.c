/* SPDX-License-Identifier: Apache-2.0 */
/* error.c - the one-line error report every stage fills in (see base.h). */
#include <stdarg.h>
#include <stdio.h>

#include "heapref/base.h"

int hr_error_set(struct hr_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != HR_OK)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* one line whatever the input put in a name: a section's, a symbol's, a type's */
	for (char *p = err->msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return code;
}
