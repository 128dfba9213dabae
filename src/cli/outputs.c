/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.c - the files heapref writes (outputs.h): what may be written where, the
 * temporary file beside a regular file and its rename, the checks against the inputs,
 * and the removal of temporary files when a signal ends heapref.
 */
#define _GNU_SOURCE /* O_NOFOLLOW, getrandom, major/minor */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "outputs.h"

#define TMP_RANDOM 12  /* characters of the temporary file's random suffix */
#define TMP_TRIES 100  /* names tried before giving up (each taken by someone else) */
#define MAX_PENDING 4  /* temporary files existing at once: a core and a profile */

/*
 * The temporary files that exist now, for the signal handler: the CLI's one piece of
 * global state. A slot is set once its string is complete and cleared before the
 * string is freed, so the handler sees either a whole name or none.
 */
static char *volatile pending[MAX_PENDING];

static void remember_tmp(char *tmp)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (!pending[i]) {
			pending[i] = tmp;
			return;
		}
}

static void forget_tmp(const char *tmp)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i] == tmp)
			pending[i] = NULL;
}

/* Async-signal-safe: unlink(), signal() and raise() only. */
static void remove_pending(int sig)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i])
			unlink(pending[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

void outputs_catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = remove_pending;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* a signal the shell ignored (nohup, a background job) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

/* --- where the bytes go -------------------------------------------------------------- */

static int refuse(const struct output *o, struct hr_error *err, const char *why)
{
	return hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, why);
}

/* The names that mean heapref's own standard output. */
static bool names_stdout(const char *path)
{
	return !strcmp(path, "-") || !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/fd/1") ||
	       !strcmp(path, "/proc/self/fd/1");
}

/*
 * The character devices written as they are: /dev/null, /dev/zero, /dev/full (major 1)
 * and terminals (4: virtual consoles and serial lines, 5: /dev/tty and the console,
 * 136-143: pseudo-terminals). Others (/dev/mem, /dev/watchdog, ...) could do harm.
 */
static bool harmless_device(dev_t rdev)
{
	unsigned maj = major(rdev), min = minor(rdev);

	if (maj == 1)
		return min == 3 || min == 5 || min == 7;
	return maj == 4 || (maj == 5 && min <= 1) || (maj >= 136 && maj <= 143);
}

/* An existing file that is not a regular file: written as it is, or refused. */
static int prepare_special(struct output *o, const struct stat *st, struct hr_error *err)
{
	if (S_ISFIFO(st->st_mode) || (S_ISCHR(st->st_mode) && harmless_device(st->st_rdev))) {
		o->how = OUTPUT_DIRECT;
		return HR_OK;
	}
	if (S_ISDIR(st->st_mode))
		return refuse(o, err, "is a directory");
	if (S_ISSOCK(st->st_mode))
		return refuse(o, err, "is a socket: heapref writes files, FIFOs and terminals");
	return refuse(o, err, S_ISBLK(st->st_mode)
				      ? "is a block device: heapref writes no device but /dev/null, "
					"/dev/zero, /dev/full and terminals"
				      : "is a character device: heapref writes no device but "
					"/dev/null, /dev/zero, /dev/full and terminals");
}

/* The directory part of path ("." for a bare name), in a new string; NULL: out of memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* A regular file to write, new or replaced: its identity and its directory's. */
static int prepare_regular(struct output *o, const char *target, struct hr_error *err)
{
	struct stat st, dir;
	char *d;
	int rc;

	if (!(o->target = strdup(target)) || !(d = dir_of(target)))
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	rc = stat(d, &dir);
	free(d);
	if (rc != 0)
		return hr_error_set(err, HR_EOUTPUT, "%s: cannot create: %s", o->path,
				    strerror(errno));
	o->how = OUTPUT_REPLACE;
	o->dir_dev = dir.st_dev;
	o->dir_ino = dir.st_ino;
	if (lstat(target, &st) == 0) {
		o->exists = true;
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	return HR_OK;
}

/*
 * Whether a symbolic link may be followed: not one in a sticky directory anyone may
 * write to (/tmp) owned by another user than heapref's and the directory's, as the
 * kernel's fs.protected_symlinks rule has it: another user planted it there.
 */
static bool link_trusted(const char *path, const struct stat *link)
{
	struct stat dir;
	char *d = dir_of(path);
	bool sticky_shared;

	if (!d || stat(d, &dir) != 0) {
		free(d);
		return false;
	}
	free(d);
	sticky_shared = (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH);
	return !sticky_shared || link->st_uid == geteuid() || link->st_uid == dir.st_uid;
}

/* path is a symbolic link: what it names decides, written through its resolved path. */
static int prepare_link(struct output *o, const struct stat *link, struct hr_error *err)
{
	struct stat st;
	char *real;
	int rc;

	if (!link_trusted(o->path, link))
		return refuse(o, err, "is a symbolic link another user made in a shared sticky "
			      "directory: not followed");
	if (stat(o->path, &st) != 0)
		return hr_error_set(err, HR_EOUTPUT, "%s: a symbolic link to %s: not followed "
				    "(give the file's own path)", o->path,
				    errno == ENOENT ? "nothing" : strerror(errno));
	if (!S_ISREG(st.st_mode))
		return prepare_special(o, &st, err);
	if (!(real = realpath(o->path, NULL)))
		return hr_error_set(err, HR_EOUTPUT, "%s: cannot resolve the symbolic link: %s",
				    o->path, strerror(errno));
	rc = prepare_regular(o, real, err); /* the file it names is replaced; the link stays */
	free(real);
	return rc;
}

int output_prepare(struct output *o, const char *path, enum output_content content,
		   struct hr_error *err)
{
	struct stat st;

	*o = (struct output){ .path = path, .content = content, .fd = -1 };
	if (names_stdout(path)) {
		o->how = OUTPUT_STDOUT;
		return HR_OK;
	}
	if (!path[0])
		return refuse(o, err, "an empty file name");
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT)
			return hr_error_set(err, HR_EOUTPUT, "%s: cannot create: %s", path,
					    strerror(errno));
		return prepare_regular(o, path, err);
	}
	if (S_ISLNK(st.st_mode))
		return prepare_link(o, &st, err);
	if (S_ISREG(st.st_mode))
		return prepare_regular(o, path, err);
	return prepare_special(o, &st, err);
}

/* --- never an input -------------------------------------------------------------------- */

int output_refuse_input(const struct output *o, const char *input, const char *role,
			struct hr_error *err)
{
	struct stat st;

	if (o->how != OUTPUT_REPLACE || !o->exists || !input || stat(input, &st) != 0)
		return HR_OK;
	if (st.st_dev != o->dev || st.st_ino != o->ino)
		return HR_OK;
	if (!strcmp(o->path, input))
		return hr_error_set(err, HR_EUSAGE, "%s: is %s: heapref does not overwrite its "
				    "inputs; write elsewhere", o->path, role);
	return hr_error_set(err, HR_EUSAGE, "%s: is %s, %s: heapref does not overwrite its "
			    "inputs; write elsewhere", o->path, role, input);
}

/* The last component of path. */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int output_refuse_same(const struct output *a, const char *a_role, const struct output *b,
		       const char *b_role, struct hr_error *err)
{
	bool same;

	if (a->how != OUTPUT_REPLACE || b->how != OUTPUT_REPLACE)
		return HR_OK;
	if (a->exists && b->exists)
		same = a->dev == b->dev && a->ino == b->ino;
	else
		same = a->dir_dev == b->dir_dev && a->dir_ino == b->dir_ino &&
		       !strcmp(base_of(a->target), base_of(b->target));
	if (!same)
		return HR_OK;
	return hr_error_set(err, HR_EUSAGE, "%s %s and %s %s are one file: one would replace "
			    "the other; give two names", a_role, a->path, b_role, b->path);
}

/* --- writing --------------------------------------------------------------------------- */

/* n characters nobody can guess, for the temporary file's name. */
static void random_name(char *out, size_t n)
{
	static const char alphabet[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char bytes[TMP_RANDOM];
	struct timespec ts;

	if (getrandom(bytes, n, GRND_NONBLOCK) != (ssize_t)n) {
		/* no entropy yet (early boot): unique, if not secret; O_EXCL still holds */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < n; i++)
			bytes[i] = (unsigned char)((uint64_t)ts.tv_nsec >> (i % 8 * 4) ^
						   (unsigned)getpid() >> (i % 4 * 8) ^ i * 37);
	}
	for (size_t i = 0; i < n; i++)
		out[i] = alphabet[bytes[i] % (sizeof(alphabet) - 1)];
	out[n] = 0;
}

/*
 * Creates the temporary file beside o->target: TARGET.tmp.RANDOM, or DIR/.heapref.tmp.RANDOM
 * where that name would be too long; 0600, never through a link, never an existing file.
 * HEAPREF_TEST_TMP_SUFFIX makes the first name tried TARGET.tmp.SUFFIX (tests only).
 */
static int create_tmp(struct output *o, struct hr_error *err)
{
	const char *forced = getenv("HEAPREF_TEST_TMP_SUFFIX");
	size_t len = strlen(o->target) + sizeof(".heapref.tmp.") + TMP_RANDOM + 1;
	char suffix[TMP_RANDOM + 1];
	char *dir = dir_of(o->target);

	if (!dir || !(o->tmp = malloc(len + (forced ? strlen(forced) : 0)))) {
		free(dir);
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	}
	for (int i = 0; i < TMP_TRIES; i++) {
		random_name(suffix, TMP_RANDOM);
		sprintf(o->tmp, "%s.tmp.%s", o->target, i == 0 && forced ? forced : suffix);
		if (strlen(base_of(o->tmp)) > NAME_MAX)
			sprintf(o->tmp, "%s/.heapref.tmp.%s", dir, suffix);
		o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	free(dir);
	if (o->fd < 0) {
		int code = errno;

		free(o->tmp);
		o->tmp = NULL;
		return hr_error_set(err, HR_EOUTPUT, "%s: cannot create: %s", o->path,
				    strerror(code));
	}
	remember_tmp(o->tmp);
	return HR_OK;
}

int output_create(struct output *o, struct hr_error *err)
{
	if (o->how == OUTPUT_STDOUT) {
		o->fd = STDOUT_FILENO;
		return HR_OK;
	}
	if (o->how == OUTPUT_REPLACE)
		return create_tmp(o, err);
	/* a FIFO waits here for its reader, as a shell's redirection does */
	o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (o->fd < 0)
		return hr_error_set(err, HR_EOUTPUT, "%s: cannot open: %s", o->path, strerror(errno));
	return HR_OK;
}

/* The mode of a new file: 0600 for memory, else what open(2) with 0666 would give. */
static mode_t final_mode(const struct output *o)
{
	mode_t mask;

	if (o->content == OUTPUT_MEMORY)
		return 0600;
	mask = umask(0); /* the only way to read it; set back at once */
	umask(mask);
	return 0666 & ~mask;
}

/* Whether what is at the target now is what output_prepare() saw (nothing, or that file). */
static bool target_unchanged(const struct output *o)
{
	struct stat st;

	if (lstat(o->target, &st) != 0)
		return errno == ENOENT;
	return S_ISREG(st.st_mode) && (!o->exists || (st.st_dev == o->dev && st.st_ino == o->ino));
}

int output_commit(struct output *o, struct hr_error *err)
{
	int fd = o->fd;

	o->fd = -1;
	if (o->how == OUTPUT_STDOUT)
		return HR_OK;
	if (o->how == OUTPUT_REPLACE && fchmod(fd, final_mode(o)) != 0) {
		close(fd);
		return hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, strerror(errno));
	}
	if (close(fd) != 0)
		return hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, strerror(errno));
	if (o->how != OUTPUT_REPLACE)
		return HR_OK;
	if (!target_unchanged(o))
		return hr_error_set(err, HR_EOUTPUT, "%s: replaced by something else while heapref "
				    "wrote it: left alone", o->path);
	if (rename(o->tmp, o->target) != 0)
		return hr_error_set(err, HR_EOUTPUT, "%s: cannot rename into place: %s", o->path,
				    strerror(errno));
	forget_tmp(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return HR_OK;
}

void output_release(struct output *o)
{
	if (o->fd >= 0 && o->fd != STDOUT_FILENO)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		forget_tmp(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->target);
	o->target = NULL;
}

/* err's message, prefixed with the output's name, as an output failure. */
static int name_failure(const struct output *o, struct hr_error *err)
{
	char msg[HR_ERROR_MAX];
	int code = err->code == HR_ENOMEM ? HR_ENOMEM : HR_EOUTPUT;

	snprintf(msg, sizeof(msg), "%s", err->msg);
	err->code = HR_OK;
	return hr_error_set(err, code, "%s: %s",
			    o->how == OUTPUT_STDOUT ? "standard output" : o->path, msg);
}

int output_write(struct output *o, int (*write)(FILE *out, void *ctx, struct hr_error *err),
		 void *ctx, struct hr_error *err)
{
	FILE *out;
	int rc;

	if ((rc = output_create(o, err)))
		return rc;
	if (o->how == OUTPUT_STDOUT) {
		rc = write(stdout, ctx, err);
		if (!rc && fflush(stdout))
			rc = hr_error_set(err, HR_EOUTPUT, "%s", strerror(errno));
		return rc ? name_failure(o, err) : HR_OK;
	}
	if (!(out = fdopen(o->fd, "wb")))
		return hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, strerror(errno));
	o->fd = -1; /* the stream's now */
	rc = write(out, ctx, err);
	if (rc)
		name_failure(o, err);
	if (fflush(out) && !rc)
		rc = hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, strerror(errno));
	if (!rc && (o->fd = dup(fileno(out))) < 0)
		rc = hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, strerror(errno));
	if (fclose(out) && !rc)
		rc = hr_error_set(err, HR_EOUTPUT, "%s: %s", o->path, strerror(errno));
	return rc ? rc : output_commit(o, err);
}
