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
	return code;
}
