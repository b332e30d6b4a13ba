/* protect: what in a project the agent must not be able to change, because
 * the host later runs or trusts it: git's config and hooks (run by the
 * user's next git command), gemini's and gemini-box's own project files, and
 * the paths a user's "protected_paths" names (.envrc, .vscode, ...).
 *
 * Each existing protected path is bind-mounted read-only onto itself in the
 * box, and every directory between the project and it is bind-mounted
 * (read-write) onto itself, so that the agent cannot rename it away and put
 * a writable copy in its place (a mount point cannot be renamed). A path is
 * followed only where it resolves inside the project or its git directory:
 * a symlink pointing elsewhere is not made visible by protecting it. A linked
 * git worktree's common git directory is mounted at its own path, so git works
 * in the box, and protected the same way. */
#ifndef GEMINI_BOX_PROTECT_H
#define GEMINI_BOX_PROTECT_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

/* Protected in every project, relative to its git directory or the project. */
#define PROTECT_GIT_DEFAULTS                                                                       \
	{                                                                                          \
		"config", "hooks", "modules"                                                       \
	}
#define PROTECT_PROJECT_DEFAULTS                                                                   \
	{                                                                                          \
		".gemini"                                                                          \
	}

struct self_mount {
	char *path; /* canonical; mounted at the same path */
	bool readonly;
};

struct protection {
	struct self_mount *v; /* parents before children */
	size_t n;
	char *git_dir;    /* the project's git directory when it is a linked worktree's
	                     common directory outside the project, else NULL */
	char *make_hooks; /* a git directory's missing hooks directory, to create */
};

/* What to mount for the canonical project dir, with extra (project-relative
 * paths from the user's "protected_paths") on top of the defaults. */
void protection_of(const char *dir, const struct strv *extra, struct protection *out);
void protection_clear(struct protection *p);

/* The common git directory of the linked worktree whose ".git" file is
 * gitfile, or NULL when it is not one that git itself made for this work
 * tree: "gitdir: C/worktrees/NAME", with C/worktrees/NAME/gitdir naming
 * gitfile back and C owned by the caller. A cloned repository's .git file
 * cannot point the box at another directory of the user's. */
char *worktree_common_dir(const char *gitfile);

#endif
