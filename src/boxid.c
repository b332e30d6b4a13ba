#include "boxid.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "strv.h"

static bool has_git_entry(const char *dir)
{
	struct stat st;
	char *p = xasprintf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
	/* A file counts too: worktrees and submodules have a .git file. */
	bool found = lstat(p, &st) == 0;
	free(p);
	return found;
}

static bool owned_by(const char *dir, uid_t uid)
{
	struct stat st;
	return lstat(dir, &st) == 0 && st.st_uid == uid;
}

char *box_dir_find(const char *cwd, const char *home, uid_t uid)
{
	char *dir = xstrdup(cwd);
	for (;;) {
		/* Another user's directory (say /tmp holding a planted .git) is
		 * never adopted, nor anything above it: git's CVE-2022-24765. */
		if (!owned_by(dir, uid))
			break;
		if (has_git_entry(dir)) {
			/* A dotfiles repository at home or a repository at / would put
			 * every project into one box with everything mounted. */
			bool too_wide = strcmp(dir, "/") == 0 || (home && strcmp(dir, home) == 0);
			if (too_wide)
				break;
			return dir;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || strcmp(dir, "/") == 0)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	return xstrdup(cwd);
}

static bool slug_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

static void trim_slug_end(char *out, size_t *n)
{
	while (*n > 0 && (out[*n - 1] == '-' || out[*n - 1] == '.'))
		(*n)--;
	out[*n] = '\0';
}

void box_slug(const char *dir, char *out, size_t max)
{
	const char *base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	size_t n = 0;
	bool pending_dash = false;
	for (const unsigned char *c = (const unsigned char *)base; *c && n < max; c++) {
		if (!slug_char(*c)) {
			pending_dash = n > 0;
			continue;
		}
		if (n == 0 && (*c == '-' || *c == '.'))
			continue;
		if (pending_dash) {
			out[n++] = '-';
			pending_dash = false;
			if (n == max)
				break;
		}
		out[n++] = (char)*c;
	}
	trim_slug_end(out, &n);
}

void box_name(const char *dir, char out[BOX_NAME_SIZE])
{
	/* The path's bytes alone, as sha256sum(1) would hash them. */
	struct hash h;
	char hex[HASH_ID_HEX + 1];
	hash_begin(&h);
	hash_add(&h, dir, strlen(dir));
	hash_end_id(&h, hex);

	char slug[BOX_SLUG_MAX + 1];
	box_slug(dir, slug, BOX_SLUG_MAX);
	snprintf(out, BOX_NAME_SIZE, "%s%s%s%s", BOX_NAME_PREFIX, slug, *slug ? "-" : "", hex);
}

int path_is_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
