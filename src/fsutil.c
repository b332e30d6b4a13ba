#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strv.h"

char *dir_of(const char *path)
{
	char *d = xstrdup(path);
	char *slash = strrchr(d, '/');
	if (slash && slash != d)
		*slash = '\0';
	else if (slash)
		slash[1] = '\0';
	return d;
}

bool dir_is_ours(const char *path, mode_t forbidden)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & forbidden) == 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1; *s && rc == 0; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		rc = mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
		*s = '/';
	}
	if (rc == 0 && mkdir(p, mode) < 0 && errno != EEXIST)
		rc = -1;
	int e = errno;
	free(p);
	errno = e;
	return rc;
}

char *read_small_file(const char *path, size_t max, bool ours)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *text = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= max &&
	    (!ours || (st.st_uid == geteuid() && (st.st_mode & 022) == 0))) {
		size_t want = (size_t)st.st_size;
		text = xmalloc(want + 1);
		size_t n = 0;
		ssize_t r;
		while (n < want && (r = read(fd, text + n, want - n)) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				free(text);
				text = NULL;
				break;
			}
			n += (size_t)r;
		}
		if (text)
			text[n] = '\0';
	}
	close(fd);
	return text;
}
