/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.h - the files heapref writes, written safely (docs/cli.md, "Files and
 * permissions"): a regular file is replaced atomically through a temporary file of an
 * unpredictable name, created 0600 beside it and renamed into place when complete;
 * /dev/null, /dev/full, a terminal or a FIFO is written as it is; anything else (a
 * directory, another device, a socket, a symbolic link to nothing) is refused, never
 * replaced. An output is checked before anything is read or stopped: that it can be
 * written, and that it is none of the inputs.
 *
 * Lifecycle: output_prepare() (no file touched), the checks, then output_create(),
 * writing to o->fd, output_commit(); output_release() on every path, which removes a
 * temporary file not committed. outputs_catch_signals() makes SIGINT, SIGTERM and
 * SIGHUP remove it too.
 */
#ifndef HEAPREF_CLI_OUTPUTS_H
#define HEAPREF_CLI_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "heapref/base.h"

/* What the file holds decides its mode. */
enum output_content {
	OUTPUT_REPORT, /* profiles and reports: 0666 less the umask, as other tools' outputs */
	OUTPUT_MEMORY, /* the memory of a process (cores, hprof): 0600 whatever the umask */
};

/* How the bytes get there. */
enum output_how {
	OUTPUT_STDOUT,  /* "-", /dev/stdout: heapref's standard output */
	OUTPUT_DIRECT,  /* /dev/null, /dev/zero, /dev/full, a terminal, a FIFO: written as is */
	OUTPUT_REPLACE, /* a regular file, new or replaced atomically */
};

struct output {
	const char *path;             /* as given on the command line */
	enum output_content content;
	enum output_how how;
	char *target;                 /* OUTPUT_REPLACE: the file replaced, path or what
				       * its symbolic link names (owned) */
	bool exists;                  /* the target exists: dev and ino are its */
	dev_t dev, dir_dev;           /* the target's identity; its directory's */
	ino_t ino, dir_ino;
	char *tmp;                    /* the temporary file, while it exists (owned) */
	int fd;                       /* open for writing after output_create(), else -1 */
};

/* An output not prepared yet: output_release() does nothing to it. */
#define OUTPUT_INIT { .fd = -1 }

/*
 * Works out where the bytes of path go and whether they may (see above); creates
 * nothing. Fails with HR_EOUTPUT and one line naming path. Release o whatever it returns.
 */
int output_prepare(struct output *o, const char *path, enum output_content content,
		   struct hr_error *err);

/* Fails (HR_EUSAGE) when o would replace input, the file role names ("the dump"). */
int output_refuse_input(const struct output *o, const char *input, const char *role,
			struct hr_error *err);

/* Fails (HR_EUSAGE) when outputs a and b are one file; a_role and b_role name them. */
int output_refuse_same(const struct output *a, const char *a_role, const struct output *b,
		       const char *b_role, struct hr_error *err);

/* Opens o->fd: the temporary file (0600, O_EXCL|O_NOFOLLOW), the direct target or stdout. */
int output_create(struct output *o, struct hr_error *err);

/* Closes o->fd, and renames the temporary file into place with its final mode. */
int output_commit(struct output *o, struct hr_error *err);

/* Closes what is open, removes a temporary file not committed, frees; o stays preparable. */
void output_release(struct output *o);

/*
 * output_create(), write(out, ctx, err) on a stream, output_commit(): the whole of
 * writing a file. A failure is HR_EOUTPUT (or HR_ENOMEM) naming the output.
 */
int output_write(struct output *o, int (*write)(FILE *out, void *ctx, struct hr_error *err),
		 void *ctx, struct hr_error *err);

/* Once, from main(): SIGINT, SIGTERM and SIGHUP remove the temporary files, then kill. */
void outputs_catch_signals(void);

#endif
