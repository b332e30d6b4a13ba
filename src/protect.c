#define _GNU_SOURCE
#include "protect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxid.h"
#include "cleanup.h"
#include "fsutil.h"

/* The first line of a small file, without its newline; NULL if unreadable. */
static char *first_line(const char *path)
{
	char *text = read_small_file(path, 4096, false);
	if (text)
		text[strcspn(text, "\r\n")] = '\0';
	return text;
}

char *worktree_common_dir(const char *gitfile)
{
	cleanup_free char *line = first_line(gitfile);
	if (!line || strncmp(line, "gitdir: ", 8) != 0)
		return NULL;
	cleanup_free char *base = dir_of(gitfile);
	cleanup_free char *named =
	        line[8] == '/' ? xstrdup(line + 8) : xasprintf("%s/%s", base, line + 8);
	cleanup_free char *gitdir = realpath(named, NULL);
	if (!gitdir)
		return NULL;
	/* C/worktrees/NAME, whose gitdir file names this .git file back */
	cleanup_free char *parent = dir_of(gitdir);
	const char *leaf = strrchr(parent, '/');
	if (!leaf || strcmp(leaf, "/worktrees") != 0)
		return NULL;
	cleanup_free char *common = dir_of(parent);
	cleanup_free char *back_path = xasprintf("%s/gitdir", gitdir);
	cleanup_free char *back = first_line(back_path);
	cleanup_free char *back_real = back ? realpath(back, NULL) : NULL;
	cleanup_free char *self = realpath(gitfile, NULL);
	struct stat st;
	if (!back_real || !self || strcmp(back_real, self) != 0 || lstat(common, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return NULL;
	return steal_pointer(&common);
}

static void add(struct protection *p, const char *path, bool readonly)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0) {
			p->v[i].readonly = p->v[i].readonly || readonly;
			return;
		}
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n].path = xstrdup(path);
	p->v[p->n].readonly = readonly;
	p->n++;
}

/* Protects path (a path below root, as named) where it resolves below root:
 * pins every directory between root and it, then mounts it read-only. */
static void protect_below(struct protection *p, const char *root, const char *path)
{
	char *real = realpath(path, NULL);
	if (!real || !path_is_within(real, root) || strcmp(real, root) == 0) {
		free(real);
		return;
	}
	for (char *s = real + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		add(p, real, false);
		*s = '/';
	}
	add(p, real, true);
	free(real);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct self_mount *)a)->path, ((const struct self_mount *)b)->path);
}

void protection_of(const char *dir, const struct strv *extra, struct protection *out)
{
	memset(out, 0, sizeof(*out));
	static const char *const git_defaults[] = PROTECT_GIT_DEFAULTS;
	static const char *const project_defaults[] = PROTECT_PROJECT_DEFAULTS;
	char *dotgit = xasprintf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
	struct stat st;
	const char *git_root = NULL; /* where git's own files are protected */
	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode)) {
		git_root = dir;
	} else if (lstat(dotgit, &st) == 0 && S_ISREG(st.st_mode)) {
		out->git_dir = worktree_common_dir(dotgit);
		if (out->git_dir && !path_is_within(out->git_dir, dir)) {
			add(out, out->git_dir, false);
			git_root = out->git_dir;
		} else if (out->git_dir) { /* inside the project: mounted with it */
			git_root = dir;
		}
	}
	if (git_root) {
		char *gd = strcmp(git_root, dir) == 0 && !out->git_dir ? xstrdup(dotgit)
		                                                       : xstrdup(out->git_dir);
		char *hooks = xasprintf("%s/hooks", gd);
		if (lstat(hooks, &st) < 0 && errno == ENOENT)
			out->make_hooks = xstrdup(hooks);
		free(hooks);
		for (size_t i = 0; i < sizeof(git_defaults) / sizeof(*git_defaults); i++) {
			char *path = xasprintf("%s/%s", gd, git_defaults[i]);
			protect_below(out, git_root, path);
			if (out->make_hooks && strcmp(git_defaults[i], "hooks") == 0) {
				/* made before the box is: protected like an existing one */
				add(out, gd, false);
				add(out, out->make_hooks, true);
			}
			free(path);
		}
		free(gd);
	}
	for (size_t i = 0; i < sizeof(project_defaults) / sizeof(*project_defaults); i++) {
		char *path = xasprintf("%s/%s", dir, project_defaults[i]);
		protect_below(out, dir, path);
		free(path);
	}
	for (size_t i = 0; extra && i < extra->n; i++) {
		char *path = xasprintf("%s/%s", dir, extra->v[i]);
		protect_below(out, dir, path);
		free(path);
	}
	/* A parent sorts before its children: "/a" < "/a/b". */
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_path);
	free(dotgit);
}

void protection_clear(struct protection *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	free(p->git_dir);
	free(p->make_hooks);
	memset(p, 0, sizeof(*p));
}
