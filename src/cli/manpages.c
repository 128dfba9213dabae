/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manpages.c - heapref_manpages OUTDIR COMMAND..., run at build time: writes into OUTDIR
 * heapref.1, heapref-COMMAND.1 for every command and heapref.bash-completion, all read
 * off the --help texts of usage.c. docs/cli.md quotes those texts (tests/e2e/test_cli.py
 * checks it) and tests/e2e/test_man.py checks the pages against them, so the three
 * cannot drift apart.
 *
 * The COMMANDs are those the build expects pages of (CMakeLists.txt lists them to name
 * its outputs): a command usage.c has and the list lacks, or the reverse, fails the build.
 *
 * It reads the layout usage.c's texts keep: a "usage:" line and its continuation lines
 * (indented by more than two spaces), then lines indented by two spaces that are either
 * free text or an entry "  --opt ARG   description" whose description starts in column
 * 18, its continuation lines indented by 18 spaces. A line it cannot place stops it with
 * that line on stderr, rather than let a page silently drop text.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

#ifndef HEAPREF_MAN_VERSION
#define HEAPREF_MAN_VERSION "?"
#endif

/* heapref.1's NAME; the generator checks that heapref --help says it in its own words. */
#define HEAPREF_WHAT "which variables keep a Go program's memory alive"

enum {
	ENTRY_TEXT_COLUMN = 18,   /* where an option's description starts in a command's help */
	COMMAND_TEXT_COLUMN = 16, /* where a command's description starts in heapref --help */
	MAX_COMMANDS = 64,
	MAX_OPTIONS = 64,
	MAX_WORDS = 128, /* the characters of one option's completion values */
};

/* A piece of a usage text: not NUL-terminated. */
struct text {
	const char *s;
	size_t len;
};

static struct text text_of(const char *s)
{
	return (struct text){ s, strlen(s) };
}

static struct text skip(struct text t, size_t n)
{
	n = n < t.len ? n : t.len;
	return (struct text){ t.s + n, t.len - n };
}

static size_t indent_of(struct text t)
{
	size_t n = 0;
	while (n < t.len && t.s[n] == ' ')
		n++;
	return n;
}

static bool starts_with(struct text t, const char *prefix)
{
	size_t n = strlen(prefix);
	return t.len >= n && !memcmp(t.s, prefix, n);
}

static bool equals(struct text t, const char *s)
{
	return t.len == strlen(s) && !memcmp(t.s, s, t.len);
}

/* t as a C string in buf; false if it does not fit. */
static bool copy_text(struct text t, char *buf, size_t size)
{
	if (t.len >= size)
		return false;
	memcpy(buf, t.s, t.len);
	buf[t.len] = '\0';
	return true;
}

/* The next line of *rest, without its newline, into *line; false at the end. */
static bool next_line(struct text *rest, struct text *line)
{
	if (!rest->len)
		return false;
	const char *nl = memchr(rest->s, '\n', rest->len);
	size_t n = nl ? (size_t)(nl - rest->s) : rest->len;
	*line = (struct text){ rest->s, n };
	*rest = skip(*rest, nl ? n + 1 : n);
	return true;
}

/* The next paragraph of *rest (lines up to an empty one) into *block; false at the end. */
static bool next_block(struct text *rest, struct text *block)
{
	struct text line;
	if (!rest->len)
		return false;
	*block = (struct text){ rest->s, 0 };
	while (next_line(rest, &line) && line.len)
		block->len = (size_t)(line.s + line.len - block->s);
	return true;
}

/* The leading run of t that is a word of the given class, e.g. "analyze" of "analyze [-o". */
static struct text word_of(struct text t, int (*in_word)(int))
{
	size_t n = 0;
	while (n < t.len && in_word((unsigned char)t.s[n]))
		n++;
	return (struct text){ t.s, n };
}

static int is_metavar_char(int c)
{
	return isupper(c) || c == '_';
}

static int is_value_char(int c)
{
	return islower(c) || isdigit(c) || c == '-' || c == '|';
}

static int is_not_space(int c)
{
	return c != ' ';
}

static int is_word_char(int c)
{
	return isalnum(c) || c == '_';
}

static int fail(const char *what, struct text where)
{
	fprintf(stderr, "heapref_manpages: %s: \"%.*s\"\n", what, (int)where.len, where.s);
	return 1;
}

/* --- roff ------------------------------------------------------------------------------ */

/*
 * Writes t escaped for roff, within a line: a backslash as \e and every '-' as \- (the
 * minus sign, which man renders as the ASCII '-' one types; help2man does the same), a
 * word with a '-' after \% so that an option (--no-goroutine-labels) is never hyphenated,
 * nor with nobreak any word (BINARY) of a synopsis. With nobreak, the spaces inside [...]
 * become unbreakable ones, "\ ", so that "[--max-depth N]" stays on one line of a
 * synopsis; but "[--text [--cutoff PCT]]" may break before its inner '[' and
 * "[--by-alloc | --by-type]" after its '|'.
 */
static void put_escaped(FILE *f, struct text t, bool nobreak)
{
	int depth = 0;
	bool word_start = true; /* after a space roff may break at */
	for (size_t i = 0; i < t.len; i++) {
		char c = t.s[i];
		if (word_start && c != ' ' &&
		    (nobreak || memchr(t.s + i, '-', word_of(skip(t, i), is_not_space).len)))
			fputs("\\%", f);
		word_start = c == ' ';
		depth += c == '[' ? 1 : c == ']' && depth > 0 ? -1 : 0;
		if (c == '\\') {
			fputs("\\e", f);
		} else if (c == '-') {
			fputs("\\-", f);
		} else if (c == ' ' && nobreak && depth > 0 && t.s[i - 1] != '|' &&
			   (i + 1 == t.len || t.s[i + 1] != '[')) {
			fputs("\\ ", f);
			word_start = false;
		} else {
			putc(c, f);
		}
	}
}

/* Starts a line of text with t: a leading '.' or '\'' would make the line a request. */
static void put_line_start(FILE *f, struct text t, bool nobreak)
{
	if (t.len && (t.s[0] == '.' || t.s[0] == '\''))
		fputs("\\&", f);
	put_escaped(f, t, nobreak);
}

/*
 * Writes t as one line of text. A line of a synopsis that ends in "ADDRESS..." ends no
 * sentence: no sentence space after it.
 */
static void put_text_line(FILE *f, struct text t, bool nobreak)
{
	put_line_start(f, t, nobreak);
	fputs(nobreak && t.len && t.s[t.len - 1] == '.' ? "\\&\n" : "\n", f);
}

/* The .TH line of a page: its title is the page's name in capitals. */
static void put_title(FILE *f, const char *cmd)
{
	fputs(".TH HEAPREF", f);
	for (const char *c = cmd ? cmd : ""; *c; c++)
		fprintf(f, cmd == c ? "\\-%c" : "%c", toupper((unsigned char)*c));
	fputs(" 1 \"\" \"heapref " HEAPREF_MAN_VERSION "\" \"heapref manual\"\n", f);
}

/*
 * Writes a "usage:" block as .SY/.YS synopses: one per line that starts with
 * "heapref NAME" (why has two forms), the other lines as the text of the last one.
 */
static int put_synopsis(FILE *f, struct text block, const char *name)
{
	struct text line;
	size_t namelen = strlen(name);
	bool open = false;
	while (next_line(&block, &line)) {
		line = starts_with(line, "usage: ") ? skip(line, 7) : skip(line, indent_of(line));
		if (starts_with(line, name) && (line.len == namelen || line.s[namelen] == ' ')) {
			fprintf(f, ".SY \"%s\"\n", name);
			line = skip(line, namelen + 1);
			open = true;
		} else if (!open) {
			return fail("a synopsis that does not start with its command", line);
		}
		if (line.len)
			put_text_line(f, line, true);
	}
	if (open)
		fputs(".YS\n", f);
	return 0;
}

/* --- heapref --help's commands block -------------------------------------------------- */

/* One command's entry in heapref --help: its synopsis and description lines. */
struct entry {
	struct text name;
	struct text synopsis[8];
	size_t nsynopsis;
	struct text description[8];
	size_t ndescription;
};

/*
 * Reads the next entry of the commands block: "  NAME SYNOPSIS" (or "  NAME  DESCRIPTION"
 * when two spaces or more follow the name), synopsis lines indented by fewer than 16
 * spaces, description lines by 16. Returns 1 with *e, 0 at the end, -1 on a bad line.
 */
static int next_entry(struct text *rest, struct entry *e)
{
	struct text line;
	if (!rest->len)
		return 0;
	struct text peek = *rest;
	next_line(&peek, &line);
	if (indent_of(line) != 2 || !islower((unsigned char)line.s[2]))
		return fail("not a command entry of heapref --help", line), -1;
	*e = (struct entry){ .name = word_of(skip(line, 2), islower) };
	line = skip(line, 2 + e->name.len);
	if (line.len && indent_of(line) >= 2) /* "  version       heapref's version" */
		e->description[e->ndescription++] = skip(line, indent_of(line));
	else if (line.len)
		e->synopsis[e->nsynopsis++] = skip(line, 1);
	*rest = peek;
	while (peek.len && next_line(&peek, &line) && indent_of(line) > 2) {
		bool desc = indent_of(line) >= COMMAND_TEXT_COLUMN;
		if (!desc && e->ndescription)
			return fail("a synopsis line after the description", line), -1;
		size_t *n = desc ? &e->ndescription : &e->nsynopsis;
		if (*n == 8)
			return fail("an entry too long", line), -1;
		(desc ? e->description : e->synopsis)[(*n)++] = skip(line, indent_of(line));
		*rest = peek;
	}
	return 1;
}

/* The commands block of heapref --help, after its "commands:" line; false if none. */
static bool commands_block(struct text *out)
{
	struct text rest = text_of(cli_usage(NULL)), block, line;
	while (next_block(&rest, &block)) {
		if (starts_with(block, "commands:\n")) {
			next_line(&block, &line);
			*out = block;
			return true;
		}
	}
	return false;
}

/*
 * Writes cmd's one-line summary for its NAME section: its description in heapref --help,
 * its lines joined, up to the first ';' (analyze's goes on with how to view the profile).
 */
static int put_summary(FILE *f, const char *cmd)
{
	struct text rest;
	struct entry e;
	int found;
	if (!commands_block(&rest))
		return fail("heapref --help has no commands block", text_of(""));
	while ((found = next_entry(&rest, &e)) > 0 && !equals(e.name, cmd))
		;
	if (found <= 0 || !e.ndescription)
		return fail("heapref --help does not describe", text_of(cmd));
	for (size_t i = 0; i < e.ndescription; i++) {
		struct text t = e.description[i];
		const char *semicolon = memchr(t.s, ';', t.len);
		if (i)
			putc(' ', f);
		put_escaped(f, semicolon ? (struct text){ t.s, (size_t)(semicolon - t.s) } : t, false);
		if (semicolon)
			break;
	}
	putc('\n', f);
	return 0;
}

/* --- heapref.1 ---------------------------------------------------------------------------- */

/*
 * heapref.1's COMMANDS: each entry as a .TP item, its synopsis then its description, and
 * a pointer to its page. The names go to names[] for SEE ALSO.
 */
static int put_commands(FILE *f, struct text block, struct text *names, size_t *nnames)
{
	struct entry e;
	int more;
	fputs(".SH COMMANDS\n", f);
	while ((more = next_entry(&block, &e)) > 0) {
		if (*nnames == MAX_COMMANDS)
			return fail("too many commands", e.name);
		names[(*nnames)++] = e.name;
		fprintf(f, ".TP\n.B %.*s\n", (int)e.name.len, e.name.s);
		/* unadjusted, as .SY sets synopses: they have few places to stretch */
		fputs(e.nsynopsis ? ".na\n" : "", f);
		for (size_t i = 0; i < e.nsynopsis; i++)
			put_text_line(f, e.synopsis[i], true);
		fputs(e.nsynopsis ? ".br\n.ad\n" : "", f);
		for (size_t i = 0; i < e.ndescription; i++)
			put_text_line(f, e.description[i], false);
		fputs(".br\nSee\n.BR \\%heapref\\-", f);
		put_escaped(f, e.name, false);
		fputs(" (1).\n", f);
	}
	return more < 0;
}

/*
 * What enum cli_status (args.h) says of each exit status beyond heapref --help's few
 * words, in the order the help lists them: the page gives both, and the generator fails
 * if the help lists other statuses than these.
 */
static const struct {
	enum cli_status status;
	const char *more; /* or NULL */
} exit_statuses[] = {
	{ ST_OK, NULL },
	{ ST_INPUT, "an input that cannot be read, is not well formed or is not what it should be" },
	{ ST_USAGE, "also an output that would overwrite an input" },
	{ ST_RESOURCES, "an output that cannot be written" },
	{ ST_MISMATCH, "the heap input may be a dump, a core or a running process (--pid)" },
};

/* The "exit status:" block as one line, its indentation and "exit status: " dropped. */
static bool join_exit_status(struct text block, char *buf, size_t size)
{
	struct text line;
	size_t n = 0;
	while (next_line(&block, &line)) {
		line = skip(line, starts_with(line, "exit status: ") ? 13 : indent_of(line));
		if (n + line.len + 2 > size)
			return false;
		if (n)
			buf[n++] = ' ';
		memcpy(buf + n, line.s, line.len);
		n += line.len;
	}
	buf[n] = '\0';
	return true;
}

/* heapref.1's EXIT STATUS: "0 success, 1 bad input, ..." as one .TP item per status. */
static int put_exit_status(FILE *f, struct text block)
{
	char buf[1024];
	size_t k = 0, nstatuses = sizeof(exit_statuses) / sizeof(exit_statuses[0]);
	if (!join_exit_status(block, buf, sizeof(buf)))
		return fail("exit status too long", block);
	fputs(".SH EXIT STATUS\n", f);
	for (const char *p = buf; *p; k++) {
		int status = 0;
		for (; isdigit((unsigned char)*p); p++)
			status = status * 10 + (*p - '0');
		if (*p != ' ' || k == nstatuses || status != (int)exit_statuses[k].status)
			return fail("heapref --help lists other exit statuses than enum cli_status",
				    block);
		/* the status's words run up to ", N " */
		const char *end = ++p;
		while (*end && !(end[0] == ',' && end[1] == ' ' && isdigit((unsigned char)end[2])))
			end++;
		fprintf(f, ".TP\n.B %d\n", status);
		put_line_start(f, (struct text){ p, (size_t)(end - p) }, false);
		if (exit_statuses[k].more) {
			fputs("; ", f);
			put_escaped(f, text_of(exit_statuses[k].more), false);
		}
		putc('\n', f);
		p = *end ? end + 2 : end;
	}
	return k == nstatuses ? 0 : fail("heapref --help misses exit statuses", block);
}

/* Whether the commands heapref --help lists are those usage.c has a --help text of. */
static int check_commands(const struct text *names, size_t nnames)
{
	char name[64];
	size_t n = 0;
	for (size_t i = 0; i < nnames; i++)
		if (!copy_text(names[i], name, sizeof(name)) || !cli_usage(name))
			return fail("heapref --help lists a command without a --help text", names[i]);
	while (cli_command_name(n))
		n++;
	return n == nnames ? 0 : fail("heapref --help does not list every command", text_of(""));
}

static void put_see_also(FILE *f, const struct text *names, size_t nnames)
{
	fputs(".SH SEE ALSO\n", f);
	for (size_t i = 0; i < nnames; i++) {
		fputs(".BR \\%heapref\\-", f);
		put_escaped(f, names[i], false);
		fputs(" (1),\n", f);
	}
	fputs(".B go tool pprof\n", f);
}

/* heapref.1: heapref --help's blocks in their order, each under its section. */
static int put_heapref_page(FILE *f)
{
	struct text rest = text_of(cli_usage(NULL)), block, line;
	struct text names[MAX_COMMANDS];
	size_t nnames = 0;
	bool described = false;
	int rc = 0;
	if (!strstr(cli_usage(NULL), HEAPREF_WHAT))
		return fail("heapref --help does not say", text_of(HEAPREF_WHAT));
	put_title(f, NULL);
	fputs(".SH NAME\nheapref \\- " HEAPREF_WHAT "\n", f);
	while (!rc && next_block(&rest, &block)) {
		if (!block.len)
			continue;
		if (starts_with(block, "usage: ")) {
			fputs(".SH SYNOPSIS\n", f);
			rc = put_synopsis(f, block, "heapref");
		} else if (starts_with(block, "commands:\n")) {
			next_line(&block, &line);
			rc = put_commands(f, block, names, &nnames);
		} else if (starts_with(block, "exit status: ")) {
			rc = put_exit_status(f, block);
		} else {
			fputs(described ? ".PP\n" : ".SH DESCRIPTION\n", f);
			described = true;
			while (next_line(&block, &line))
				put_text_line(f, skip(line, indent_of(line)), false);
		}
	}
	if (!rc && !(rc = check_commands(names, nnames)))
		put_see_also(f, names, nnames);
	return rc;
}

/* --- heapref-COMMAND.1 --------------------------------------------------------------- */

/*
 * Whether a line of a command's help (indented by two) is an entry: an option, or an
 * operand in capitals (DUMP) followed by its description in column 18. *term is the
 * option or operand with its argument, *desc what starts in column 18 (maybe nothing).
 */
static bool split_entry(struct text line, struct text *term, struct text *desc)
{
	const size_t col = ENTRY_TEXT_COLUMN;
	struct text t = skip(line, 2);
	struct text operand = word_of(t, is_metavar_char);
	bool described = line.len > col && line.s[col - 1] == ' ' && line.s[col] != ' ';
	if (!t.len || (t.s[0] != '-' && !(operand.len && described &&
					   indent_of(skip(t, operand.len)) == col - 2 - operand.len)))
		return false;
	*term = described ? (struct text){ t.s, col - 2 } : t;
	while (term->len && term->s[term->len - 1] == ' ')
		term->len--;
	*desc = described ? skip(line, col) : (struct text){ line.s + line.len, 0 };
	return true;
}

/* An entry's term as a .TP tag: the option (or operand) in bold, its argument after it. */
static void put_term(FILE *f, struct text term)
{
	const char *space = memchr(term.s, ' ', term.len);
	size_t n = space ? (size_t)(space - term.s) : term.len;
	fputs(".TP\n\\fB", f);
	put_escaped(f, (struct text){ term.s, n }, false);
	fputs("\\fR", f);
	put_escaped(f, skip(term, n), false);
	putc('\n', f);
}

/*
 * A command's help after its synopsis: free text as paragraphs (under DESCRIPTION before
 * the first entry), each entry, its term and description lines, as an OPTIONS .TP item.
 */
static int put_body(FILE *f, struct text rest)
{
	struct text line, term, desc;
	bool options = false, paragraph = false, entry = false;
	while (next_line(&rest, &line)) {
		size_t indent = indent_of(line);
		if (entry && indent == ENTRY_TEXT_COLUMN) {
			put_text_line(f, skip(line, indent), false);
		} else if (indent != 2 || line.len == 2) {
			return fail("a line of a command's help out of place", line);
		} else if (split_entry(line, &term, &desc)) {
			if (!options)
				fputs(".SH OPTIONS\n", f);
			options = entry = true;
			paragraph = false;
			put_term(f, term);
			if (desc.len)
				put_text_line(f, desc, false);
		} else {
			if (!paragraph)
				fputs(options ? ".PP\n" : ".SH DESCRIPTION\n", f);
			paragraph = true;
			entry = false;
			put_text_line(f, skip(line, 2), false);
		}
	}
	return 0;
}

/* heapref-CMD.1: NAME from heapref --help, the rest from heapref CMD --help. */
static int put_command_page(FILE *f, const char *cmd)
{
	char name[64];
	struct text rest = text_of(cli_usage(cmd)), synopsis = { rest.s, 0 }, line;
	snprintf(name, sizeof(name), "heapref %s", cmd);
	put_title(f, cmd);
	fputs(".SH NAME\nheapref\\-", f);
	put_escaped(f, text_of(cmd), false);
	fputs(" \\- ", f);
	if (put_summary(f, cmd))
		return 1;
	/* the synopsis: the "usage:" line and the lines indented by more than two after it */
	for (struct text peek = rest; next_line(&peek, &line) &&
				      (line.s == synopsis.s || indent_of(line) > 2);
	     rest = peek)
		synopsis.len = (size_t)(line.s + line.len - synopsis.s);
	fputs(".SH SYNOPSIS\n", f);
	if (put_synopsis(f, synopsis, name) || put_body(f, rest))
		return 1;
	fputs(".SH SEE ALSO\n.BR heapref (1)\n", f);
	return 0;
}

/* --- heapref.bash-completion ----------------------------------------------------------- */

/* What to offer after an option that takes a value. */
enum arg_kind {
	ARG_NOTHING, /* a number, a type, an address: nothing to offer */
	ARG_FILE,
	ARG_PID,
	ARG_WORDS, /* the values the help names */
};

/* The metavariables the helps write after options, by what they stand for. */
static const struct {
	const char *metavar;
	enum arg_kind kind;
} metavars[] = {
	{ "FILE", ARG_FILE },	    { "DUMP", ARG_FILE },     { "BINARY", ARG_FILE },
	{ "CORE", ARG_FILE },	    { "OLD_BINARY", ARG_FILE }, { "OLD_DUMP", ARG_FILE },
	{ "PID", ARG_PID },
};

/*
 * The values of options whose help names them in its prose only ("--pause-mode MODE ...
 * auto (the default) ... stop ..."): the generator checks that an entry of the option
 * still names each, so that a renamed value fails the build instead of going stale here.
 */
static const struct {
	const char *option;
	const char *values[4];
} prose_values[] = {
	{ "--pause-mode", { "auto", "stop", NULL } },
};

struct option {
	struct text name;
	bool value;       /* it takes one: "--pid PID", not "--text" */
	enum arg_kind arg; /* what to offer for it */
	char words[MAX_WORDS]; /* ARG_WORDS: its values, each followed by a space */
};

struct options {
	struct option opt[MAX_OPTIONS];
	size_t n;
};

/*
 * The next option t names from *pos on, as test_cli.py's options_of() finds them: --word
 * or -x, not inside a word (x86-64, heapref-diff.pb.gz, -diff_base).
 */
static bool next_option(struct text t, size_t *pos, struct text *opt)
{
	for (size_t i = *pos; i + 1 < t.len; i++) {
		unsigned char before = i ? (unsigned char)t.s[i - 1] : ' ';
		if (t.s[i] != '-' || is_word_char(before) || before == '-')
			continue;
		size_t j = i + 1;
		if (t.s[j] == '-' && j + 1 < t.len && islower((unsigned char)t.s[j + 1])) {
			while (j < t.len && (islower((unsigned char)t.s[j]) || t.s[j] == '-'))
				j++;
			while (t.s[j - 1] == '-')
				j--;
		} else if (islower((unsigned char)t.s[j])) {
			j++;
		} else {
			continue;
		}
		if (j < t.len && is_word_char((unsigned char)t.s[j]))
			continue;
		*opt = (struct text){ t.s + i, j - i };
		*pos = j;
		return true;
	}
	return false;
}

static struct option *find_option(struct options *o, struct text name)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->opt[i].name.len == name.len && !memcmp(o->opt[i].name.s, name.s, name.len))
			return &o->opt[i];
	return NULL;
}

static struct option *add_option(struct options *o, struct text name)
{
	struct option *opt = find_option(o, name);
	if (opt || o->n == MAX_OPTIONS)
		return opt;
	o->opt[o->n] = (struct option){ .name = name };
	return &o->opt[o->n++];
}

/* Adds the value v to the values of opt, once; false if they would not fit. */
static bool add_word(struct option *opt, struct text v)
{
	char word[MAX_WORDS];
	size_t have = strlen(opt->words);
	if (!v.len || v.len + 2 > sizeof(word))
		return false;
	word[0] = ' ';
	memcpy(word + 1, v.s, v.len);
	strcpy(word + 1 + v.len, " ");
	/* opt->words is "a b ": look for " v " in " a b " */
	char padded[MAX_WORDS + 1] = " ";
	strcat(padded, opt->words);
	if (strstr(padded, word))
		return true;
	if (have + v.len + 2 > sizeof(opt->words))
		return false;
	memcpy(opt->words + have, v.s, v.len);
	strcpy(opt->words + have + v.len, " ");
	opt->arg = ARG_WORDS;
	return true;
}

/* What the argument arg of opt stands for: values (text|tsv), a file, a process. */
static int set_argument(struct option *opt, struct text arg)
{
	opt->value = true;
	if (is_metavar_char((unsigned char)arg.s[0])) {
		for (size_t i = 0; i < sizeof(prose_values) / sizeof(prose_values[0]); i++)
			if (equals(opt->name, prose_values[i].option))
				for (const char *const *v = prose_values[i].values; *v; v++)
					if (!add_word(opt, text_of(*v)))
						return fail("too many values", opt->name);
		for (size_t i = 0; i < sizeof(metavars) / sizeof(metavars[0]); i++)
			if (equals(arg, metavars[i].metavar) && opt->arg != ARG_WORDS)
				opt->arg = metavars[i].kind;
		return 0;
	}
	/* lower-case values: "text|json|html", or one of an entry "--format json" */
	for (struct text rest = arg; rest.len;) {
		const char *bar = memchr(rest.s, '|', rest.len);
		struct text v = { rest.s, bar ? (size_t)(bar - rest.s) : rest.len };
		if (!add_word(opt, v))
			return fail("a value too long", arg);
		rest = skip(rest, v.len + 1);
	}
	return 0;
}

/*
 * The options t (a synopsis line or an entry's term) names, added to o, with what follows
 * each one when it takes a value: "--pid PID", "--format text|tsv"; not "--text [...]",
 * "--by-alloc | ...".
 */
static int add_options(struct options *o, struct text t, bool arguments)
{
	struct text name;
	for (size_t pos = 0; next_option(t, &pos, &name);) {
		struct option *opt = add_option(o, name);
		if (!opt)
			return fail("too many options", name);
		if (!arguments || pos + 1 >= t.len || t.s[pos] != ' ')
			continue;
		struct text after = skip(t, pos + 1);
		struct text arg = word_of(after, is_metavar_char);
		if (!arg.len)
			arg = word_of(after, is_value_char);
		if (!arg.len || !isalpha((unsigned char)arg.s[0]))
			continue;
		if (arg.len < after.len && !strchr(" ])", after.s[arg.len]))
			continue;
		if (set_argument(opt, arg))
			return 1;
	}
	return 0;
}

/* The options of a command's help: every one it names; arguments from synopsis and terms. */
static int collect_options(const char *cmd, struct options *o)
{
	struct text rest = text_of(cli_usage(cmd)), line, term, desc;
	bool synopsis = true;
	o->n = 0;
	while (next_line(&rest, &line)) {
		synopsis = synopsis && (starts_with(line, "usage: ") || indent_of(line) > 2);
		bool entry = !synopsis && indent_of(line) == 2 && split_entry(line, &term, &desc);
		if (add_options(o, line, false) || (synopsis && add_options(o, line, true)) ||
		    (entry && add_options(o, term, true)))
			return 1;
	}
	return add_option(o, text_of("--help")) ? 0 : fail("too many options", text_of(cmd));
}

/* Whether word is a whole word of line. */
static bool has_word(struct text line, const char *word)
{
	size_t n = strlen(word);
	for (size_t i = 0; i + n <= line.len; i++) {
		bool starts = !i || !is_word_char((unsigned char)line.s[i - 1]);
		bool ends = i + n == line.len || !is_word_char((unsigned char)line.s[i + n]);
		if (starts && ends && !memcmp(line.s + i, word, n))
			return true;
	}
	return false;
}

/* Whether word is a whole word of the description of opt's entry in usage. */
static bool entry_mentions(const char *usage, const char *opt, const char *word)
{
	struct text rest = text_of(usage), line, term, desc;
	bool in_entry = false;
	while (next_line(&rest, &line)) {
		if (indent_of(line) == 2) {
			in_entry = split_entry(line, &term, &desc) && starts_with(term, opt) &&
				   (term.len == strlen(opt) || term.s[strlen(opt)] == ' ');
			line = desc;
		} else if (indent_of(line) != ENTRY_TEXT_COLUMN) {
			in_entry = false;
		}
		if (in_entry && has_word(line, word))
			return true;
	}
	return false;
}

static int check_prose_values(void)
{
	for (size_t i = 0; i < sizeof(prose_values) / sizeof(prose_values[0]); i++)
		for (const char *const *v = prose_values[i].values; *v; v++) {
			bool named = false;
			for (size_t k = 0; !named && cli_command_name(k); k++)
				named = entry_mentions(cli_usage(cli_command_name(k)),
						       prose_values[i].option, *v);
			if (!named)
				return fail("no help names this value of its option any more",
					    text_of(*v));
		}
	return 0;
}

/* The words the script may hold unquoted: command and option names, their values. */
static int check_word(struct text t)
{
	for (size_t i = 0; i < t.len; i++)
		if (!islower((unsigned char)t.s[i]) && !isdigit((unsigned char)t.s[i]) &&
		    !strchr("-_ ", t.s[i]))
			return fail("a word the completion script cannot hold", t);
	return 0;
}

static const char completion_head[] =
	"# bash completion for heapref                                 -*- shell-script -*-\n"
	"# Written at build time by heapref_manpages from heapref's --help texts (usage.c):\n"
	"# edit those, not this.\n"
	"\n"
	"# COMPREPLY: the words after $1 that start with $1.\n"
	"_heapref_words()\n"
	"{\n"
	"\tlocal cur=$1\n"
	"\tshift\n"
	"\tmapfile -t COMPREPLY < <(compgen -W \"$*\" -- \"$cur\")\n"
	"}\n"
	"\n"
	"_heapref_files()\n"
	"{\n"
	"\tmapfile -t COMPREPLY < <(compgen -f -- \"$1\")\n"
	"}\n"
	"\n"
	"# The processes --pid may read: the numbered directories of /proc.\n"
	"_heapref_pids()\n"
	"{\n"
	"\t_heapref_words \"$1\" $(cd /proc 2>/dev/null && compgen -G '[0-9]*')\n"
	"}\n"
	"\n"
	"_heapref()\n"
	"{\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	"\tlocal cmd=${COMP_WORDS[1]}\n"
	"\tCOMPREPLY=()\n"
	"\t# readline splits --opt=VALUE at '=' (COMP_WORDBREAKS): VALUE as after --opt\n"
	"\tif [[ $cur == = ]]; then\n"
	"\t\tcur=\n"
	"\telif [[ $prev == = ]] && ((COMP_CWORD > 2)); then\n"
	"\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n"
	"\tfi\n";

static const char completion_tail[] =
	"\tesac\n"
	"\t_heapref_files \"$cur\"\n"
	"}\n"
	"\n"
	"complete -o filenames -F _heapref heapref\n";

/* The line that sets $commands to heapref's command names. */
static int put_command_names(FILE *f)
{
	fputs("\tlocal commands=\"", f);
	for (size_t i = 0; cli_command_name(i); i++) {
		if (check_word(text_of(cli_command_name(i))))
			return 1;
		fprintf(f, i ? " %s" : "%s", cli_command_name(i));
	}
	fputs("\"\n", f);
	return 0;
}

/* The case items of cmd's options that take a value: what to offer after each. */
static int put_option_values(FILE *f, const char *cmd, const struct options *o)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct option *opt = &o->opt[i];
		if (check_word(opt->name) || check_word(text_of(opt->words)))
			return 1;
		if (!opt->value)
			continue;
		fprintf(f, "\t%s:%.*s) ", cmd, (int)opt->name.len, opt->name.s);
		switch (opt->arg) {
		case ARG_WORDS:
			/* the words without their last space */
			fprintf(f, "_heapref_words \"$cur\" %.*s; ", (int)strlen(opt->words) - 1,
				opt->words);
			break;
		case ARG_FILE: fputs("_heapref_files \"$cur\"; ", f); break;
		case ARG_PID: fputs("_heapref_pids \"$cur\"; ", f); break;
		case ARG_NOTHING: break; /* a number, a type: nothing to offer, nor files */
		}
		fputs("return ;;\n", f);
	}
	return 0;
}

/* The case item of cmd's options themselves, for a word that starts with '-'. */
static void put_option_names(FILE *f, const char *cmd, const struct options *o)
{
	fprintf(f, "\t%s:-*) _heapref_words \"$cur\"", cmd);
	for (size_t i = 0; i < o->n; i++)
		fprintf(f, " %.*s", (int)o->opt[i].name.len, o->opt[i].name.s);
	fputs("; return ;;\n", f);
}

/*
 * heapref.bash-completion: commands after heapref and after heapref help, then by
 * "COMMAND:PREVIOUS-WORD" the values of an option, by "COMMAND:-*" (the word completed)
 * the options, files otherwise.
 */
static int put_completion(FILE *f)
{
	struct options o;
	fputs(completion_head, f);
	if (put_command_names(f))
		return 1;
	fputs("\tif ((COMP_CWORD == 1)) || [[ $cmd == help && $COMP_CWORD == 2 ]]; then\n"
	      "\t\t_heapref_words \"$cur\" $commands\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase $cmd:$prev in\n",
	      f);
	for (size_t i = 0; cli_command_name(i); i++)
		if (collect_options(cli_command_name(i), &o) ||
		    put_option_values(f, cli_command_name(i), &o))
			return 1;
	fputs("\tesac\n\tcase $cmd:$cur in\n", f);
	for (size_t i = 0; cli_command_name(i); i++) {
		if (collect_options(cli_command_name(i), &o))
			return 1;
		put_option_names(f, cli_command_name(i), &o);
	}
	fputs(completion_tail, f);
	return 0;
}

/* --- main ----------------------------------------------------------------------------- */

/* Writes dir/name: the page of cmd (heapref's if NULL), or the completion script. */
static int write_file(const char *dir, const char *name, const char *cmd, bool completion)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return fail("a path too long", text_of(dir));
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	int rc = completion ? put_completion(f) : cmd ? put_command_page(f, cmd) : put_heapref_page(f);
	if (ferror(f) && !rc)
		perror(path);
	rc |= ferror(f);
	if (fclose(f) && !rc) {
		perror(path);
		rc = 1;
	}
	/* no half-written output for make to take as up to date at the next build */
	if (rc)
		remove(path);
	return rc;
}

/* Whether the commands the build expects pages of are exactly usage.c's. */
static int check_expected(char **names, int n)
{
	size_t have = 0;
	for (int i = 0; i < n; i++) {
		if (!cli_usage(names[i]))
			return fail("the build expects the page of a command usage.c does not have",
				    text_of(names[i]));
		for (int k = 0; k < i; k++)
			if (!strcmp(names[k], names[i]))
				return fail("the build names a command twice", text_of(names[i]));
	}
	while (cli_command_name(have))
		have++;
	if ((size_t)n == have)
		return 0;
	for (size_t i = 0;; i++) {
		int k = 0;
		while (k < n && strcmp(names[k], cli_command_name(i)))
			k++;
		if (k == n)
			return fail("usage.c has a command the build expects no page of "
				    "(add it to CMakeLists.txt)",
				    text_of(cli_command_name(i)));
	}
}

int main(int argc, char **argv)
{
	char name[64];
	if (argc < 2) {
		fputs("usage: heapref_manpages OUTDIR [COMMAND...]\n", stderr);
		return 2;
	}
	if ((argc > 2 && check_expected(argv + 2, argc - 2)) || check_prose_values() ||
	    write_file(argv[1], "heapref.1", NULL, false) ||
	    write_file(argv[1], "heapref.bash-completion", NULL, true))
		return 1;
	for (size_t i = 0; cli_command_name(i); i++) {
		snprintf(name, sizeof(name), "heapref-%s.1", cli_command_name(i));
		if (write_file(argv[1], name, cli_command_name(i), false))
			return 1;
	}
	return 0;
}
