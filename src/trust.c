#define _GNU_SOURCE
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "hash.h"
#include "strv.h"

#define ABSENT "absent"
/* An approval record is three short lines; anything larger is not one. */
#define APPROVAL_MAX_BYTES 8192

char *approval_record(const struct approval *a)
{
	return xasprintf("dir=%s\nsettings=%s\ncontainerfile=%s\n", a->dir,
	                 a->settings ? a->settings : ABSENT,
	                 a->containerfile ? a->containerfile : ABSENT);
}

/* The value of "key=" in a record, up to its newline; NULL when absent. */
static char *field(const char *record, const char *key)
{
	size_t n = strlen(key);
	for (const char *line = record; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len > n && strncmp(line, key, n) == 0 && line[n] == '=')
			return xstrndup(line + n + 1, len - n - 1);
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

static bool same(const char *recorded, const char *key, const char *now)
{
	char *v = field(recorded, key);
	bool eq = v && strcmp(v, now ? now : ABSENT) == 0;
	free(v);
	return eq;
}

char *approval_difference(const char *recorded, const struct approval *now)
{
	if (!same(recorded, "dir", now->dir))
		return xstrdup("the project directory");
	bool settings = same(recorded, "settings", now->settings);
	bool containerfile = same(recorded, "containerfile", now->containerfile);
	if (settings && containerfile)
		return NULL;
	return xasprintf("%s%s%s", settings ? "" : "the settings file",
	                 !settings && !containerfile ? " and " : "",
	                 containerfile ? "" : "the containerfile or its build context");
}

char *text_digest(const char *text)
{
	struct hash h;
	char hex[HASH_FULL_HEX + 1];
	hash_begin(&h);
	hash_add(&h, text, strlen(text));
	hash_end_full(&h, hex);
	return xstrdup(hex);
}

char *approval_path(const char *data_home, const char *box_name)
{
	return xasprintf("%s/gemini-box/trust/%s", data_home, box_name);
}

char *approval_read(const char *path)
{
	return read_small_file(path, APPROVAL_MAX_BYTES, true);
}

int approval_write(const char *path, const char *record, struct gb_error *err)
{
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	int rc = mkdir_p(dir, 0700);
	char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
	if (rc == 0) {
		unlink(tmp);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		size_t len = strlen(record);
		rc = fd >= 0 && write(fd, record, len) == (ssize_t)len ? 0 : -1;
		if (fd >= 0 && close(fd) < 0)
			rc = -1;
		if (rc == 0 && rename(tmp, path) < 0)
			rc = -1;
	}
	if (rc < 0) {
		gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot record the approval in", path,
		             strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	free(dir);
	return rc;
}
