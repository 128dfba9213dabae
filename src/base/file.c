/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.c - opening an input file safely: never blocking in open(), and only a regular
 * file (see base.h). Every reader of a file heapref is given opens it here.
 */
#define _GNU_SOURCE /* O_NOCTTY, O_CLOEXEC with strict C11 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapref/base.h"

/* What a file that is not a regular file is, for the message. */
static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO (named pipe)";
	if (S_ISCHR(mode))
		return "is a character device";
	if (S_ISBLK(mode))
		return "is a block device";
	if (S_ISSOCK(mode))
		return "is a socket";
	return "is not a regular file";
}

int hr_open_regular(const char *path, const char *name, const char *what, int code,
		    struct hr_error *err)
{
	/* O_NONBLOCK: opening a FIFO without a writer, or some devices, would wait for ever */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	int flags;

	name = name ? name : path;

	if (fd < 0) {
		hr_error_set(err, HR_EIO, "%s: cannot open: %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		hr_error_set(err, HR_EIO, "%s: cannot stat: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		hr_error_set(err, code, "%s: %s, not %s", name, kind_of(st.st_mode), what);
		close(fd);
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		hr_error_set(err, HR_EIO, "%s: cannot read: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
