/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump_cursor.c - the reading primitives of dump_cursor.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "dump_cursor.h"

/* Reports bad input at byte `at`: "FILE: byte N: what (in the KIND record at byte M)". */
int cur_fail(struct cursor *c, const uint8_t *at, const char *fmt, ...)
{
	char what[HR_ERROR_MAX];
	char where[96] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c->rec && c->rec != at)
		snprintf(where, sizeof(where), " (in the %s record at byte %" PRIu64 ")",
			 hr_record_kind_name(c->kind), cur_offset(c, c->rec));
	return hr_error_set(c->err, HR_EINPUT, "%s: byte %" PRIu64 ": %s%s", c->d->path,
			    cur_offset(c, at), what, where);
}

int cur_nomem(struct cursor *c)
{
	return hr_error_set(c->err, HR_ENOMEM, "%s: out of memory at byte %" PRIu64, c->d->path,
			    cur_offset(c, c->pos));
}

int cur_uvarint_slow(struct cursor *c, uint64_t *v, const char *what)
{
	const uint8_t *p = c->pos;
	uint64_t x = 0;
	unsigned i;

	for (i = 0; i < 10; i++) {
		uint8_t b;

		if (p >= c->end)
			return cur_fail(c, c->pos, "truncated %s record: the file ends inside its %s",
				        hr_record_kind_name(c->kind), what);
		b = *p++;
		if (i == 9 && b > 1)
			break;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b < 0x80) {
			c->pos = p;
			*v = x;
			return HR_OK;
		}
	}
	if (p[-1] < 0x80)
		return cur_fail(c, c->pos, "varint %s overflows 64 bits", what);
	return cur_fail(c, c->pos, "varint %s is longer than 10 bytes", what);
}

int cur_bool(struct cursor *c, bool *v, const char *what)
{
	const uint8_t *at = c->pos;
	uint64_t x;
	int rc = cur_uvarint(c, &x, what);

	if (rc)
		return rc;
	if (x > 1)
		return cur_fail(c, at, "%s is %" PRIu64 ", not a bool (0 or 1)", what, x);
	*v = x == 1;
	return HR_OK;
}

/*
 * A length field at `at` claims more bytes than the file has left: a dump cut short,
 * said so ("truncated: the object record at byte M needs 32768 bytes of contents, 8625
 * are left"), as the record's start is where a reader looks first.
 */
int cur_short(struct cursor *c, const uint8_t *at, uint64_t len, const char *what)
{
	return hr_error_set(c->err, HR_EINPUT, "%s: byte %" PRIu64 ": truncated: the %s record at "
			    "byte %" PRIu64 " needs %" PRIu64 " bytes of %s, %" PRIu64 " are left",
			    c->d->path, cur_offset(c, at), hr_record_kind_name(c->kind),
			    cur_offset(c, c->rec), len, what, (uint64_t)(c->end - c->pos));
}

int cur_bytes(struct cursor *c, struct hr_bytes *out, const char *what)
{
	const uint8_t *at = c->pos;
	uint64_t len;
	int rc = cur_uvarint(c, &len, what);

	if (rc)
		return rc;
	if (len > (uint64_t)(c->end - c->pos))
		return cur_short(c, at, len, what);
	out->ptr = c->pos;
	out->len = len;
	c->pos += len;
	return HR_OK;
}

/* Reads count uvarints into vals, naming them `what` in errors. */
int cur_uvarints(struct cursor *c, uint64_t *vals, size_t count, const char *what)
{
	size_t i;
	int rc;

	for (i = 0; i < count; i++) {
		rc = cur_uvarint(c, &vals[i], what);
		if (rc)
			return rc;
	}
	return HR_OK;
}

int cur_need_params(struct cursor *c)
{
	if (c->d->have_params)
		return HR_OK;
	return cur_fail(c, c->rec, "%s record before the params record (its pointer size is needed)",
		        hr_record_kind_name(c->kind));
}

