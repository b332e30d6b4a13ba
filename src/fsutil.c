#include "fsutil.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "strv.h"

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
