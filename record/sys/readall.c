// SPDX-License-Identifier: BSD-2-Clause
/* Reading /proc files whole (see readall.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "readall.h"

int read_all(const char *path, size_t hint, char **buf_out, size_t *len_out)
{
	size_t len = 0, cap = hint > 4096 ? hint : 4096;
	char *buf = NULL, *nbuf;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n;

		/* Room for one more read of a typical size, and the NUL. */
		if (cap - len < cap / 8 + 1) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				err = -ENOMEM;
				goto out;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*buf_out = buf;
	*len_out = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return err;
}
