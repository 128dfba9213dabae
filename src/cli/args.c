/* SPDX-License-Identifier: Apache-2.0 */
/*
 * args.c - options anywhere among the operands, and the one-line usage errors that
 * point at a command's --help (args.h).
 */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_status_of(const struct hr_error *err)
{
	switch (err->code) {
	case HR_EINPUT:
	case HR_EIO:
		return ST_INPUT;
	case HR_EUSAGE:
		return ST_USAGE;
	case HR_EMISMATCH:
		return ST_MISMATCH;
	default: /* HR_ENOMEM, HR_EOUTPUT */
		return ST_RESOURCES;
	}
}

int cli_report(const struct hr_error *err)
{
	fprintf(stderr, "heapref: %s\n", err->msg);
	return cli_status_of(err);
}

bool cli_parse_address(const char *text, uint64_t *addr)
{
	char *end;

	errno = 0;
	*addr = strtoull(text, &end, 0);
	return !errno && end != text && !*end && text[0] != '-';
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("heapref: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see heapref %s%s--help)\n", cmd ? cmd : "", cmd ? " " : "");
	return CLI_USAGE;
}

/* The option arg names ("--max-depth" or "--max-depth=5"), or NULL; *inline_value after '='. */
static const struct cli_opt *find_opt(const char *arg, const struct cli_opt *opts, int nopts,
				      const char **inline_value)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);

	*inline_value = len < strlen(arg) ? arg + len + 1 : NULL;
	for (int k = 0; k < nopts; k++) {
		const struct cli_opt *o = &opts[k];

		if ((strlen(o->name) == len && !strncmp(o->name, arg, len)) ||
		    (o->alias && !strcmp(o->alias, arg)))
			return o;
	}
	return NULL;
}

int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts, int nopts,
	      int *noperands)
{
	bool options_ended = false;
	int n = 0;

	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i], *inline_value;
		const struct cli_opt *o;

		if (options_ended || arg[0] != '-' || !arg[1]) { /* "-" is an operand */
			argv[n++] = argv[i]; /* n <= i: what it overwrites was read already */
			continue;
		}
		if (!strcmp(arg, "--")) {
			options_ended = true;
		} else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(cli_usage(cmd), stdout);
			return CLI_HELP;
		} else if (!(o = find_opt(arg, opts, nopts, &inline_value))) {
			return cli_usage_error(cmd, "unknown option %s", arg);
		} else if (o->flag) {
			if (inline_value)
				return cli_usage_error(cmd, "%s takes no value", o->name);
			*o->flag = true;
		} else if (inline_value) {
			*o->value = inline_value;
		} else if (i + 1 < argc) {
			*o->value = argv[++i];
		} else {
			return cli_usage_error(cmd, "%s needs a value", arg);
		}
	}
	*noperands = n;
	return CLI_OK;
}
