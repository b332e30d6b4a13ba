/* protect: what of a project is read-only in the box, on a real tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "protect.h"
#include "strv.h"

static char root[64];

static void mk(const char *rel, int kind) /* 0 dir, 1 file */
{
	char *p = xasprintf("%s/%s", root, rel);
	if (kind == 0) {
		assert_int_equal(mkdir(p, 0755), 0);
	} else {
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs("gitdir: x\n", f);
		fclose(f);
	}
	free(p);
}

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/gb-protect-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	char *real = realpath(root, NULL);
	snprintf(root, sizeof(root), "%s", real);
	free(real);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf '%s'", root);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

/* ro (1) or pinned (0), or -1 when not mounted. */
static int mode_of(const struct protection *p, const char *rel)
{
	char *path = xasprintf("%s/%s", root, rel);
	int mode = -1;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			mode = p->v[i].readonly;
	free(path);
	return mode;
}

static void test_git_and_gemini_defaults(void **state)
{
	(void)state;
	mk("p", 0);
	mk("p/.git", 0);
	mk("p/.git/hooks", 0);
	mk("p/.git/config", 1);
	mk("p/.gemini", 0);
	mk("p/.vscode", 0);
	mk("p/outside", 0);
	char *dir = xasprintf("%s/p", root);
	/* a user's protected path that is a link out of the project stays out */
	char *envrc = xasprintf("%s/.envrc", dir);
	char *target = xasprintf("%s/outside-secret", root);
	assert_int_equal(symlink(target, envrc), 0);
	FILE *f = fopen(target, "w");
	fclose(f);
	struct strv extra = STRV_INIT;
	strv_push(&extra, ".vscode");
	strv_push(&extra, ".envrc");
	strv_push(&extra, "missing");
	struct protection p;
	protection_of(dir, &extra, &p);
	assert_int_equal(mode_of(&p, "p/.git"), 0);
	assert_int_equal(mode_of(&p, "p/.git/hooks"), 1);
	assert_int_equal(mode_of(&p, "p/.git/config"), 1);
	assert_int_equal(mode_of(&p, "p/.git/modules"), -1); /* absent */
	assert_int_equal(mode_of(&p, "p/.gemini"), 1);
	assert_int_equal(mode_of(&p, "p/.vscode"), 1);
	assert_int_equal(mode_of(&p, "outside-secret"), -1);
	assert_int_equal(mode_of(&p, "p/.envrc"), -1);
	assert_null(p.make_hooks);
	/* parents before children */
	for (size_t i = 1; i < p.n; i++)
		assert_true(strcmp(p.v[i - 1].path, p.v[i].path) < 0);
	protection_clear(&p);
	/* a missing hooks directory is made, and protected */
	char *hooks = xasprintf("%s/.git/hooks", dir);
	assert_int_equal(rmdir(hooks), 0);
	protection_of(dir, NULL, &p);
	assert_string_equal(p.make_hooks, hooks);
	assert_int_equal(mode_of(&p, "p/.git/hooks"), 1);
	protection_clear(&p);
	free(hooks);
	strv_clear(&extra);
	free(target);
	free(envrc);
	free(dir);
}

/* A cloned .git file cannot point the box at another directory of the
 * user's: only a worktree that names this one back is accepted. */
static void test_worktree_common_dir(void **state)
{
	(void)state;
	mk("main", 0);
	mk("main/.git", 0);
	mk("main/.git/worktrees", 0);
	mk("main/.git/worktrees/wt", 0);
	mk("wt", 0);
	mk("secret", 0);
	char *gitfile = xasprintf("%s/wt/.git", root);
	char *back = xasprintf("%s/main/.git/worktrees/wt/gitdir", root);
	FILE *f = fopen(gitfile, "w");
	fprintf(f, "gitdir: %s/main/.git/worktrees/wt\n", root);
	fclose(f);
	f = fopen(back, "w");
	fprintf(f, "%s\n", gitfile);
	fclose(f);
	char *common = worktree_common_dir(gitfile);
	char *want = xasprintf("%s/main/.git", root);
	assert_non_null(common);
	assert_string_equal(common, want);
	free(common);
	/* mounted at its own path, its config and hooks protected */
	char *wt = xasprintf("%s/wt", root);
	struct protection p;
	protection_of(wt, NULL, &p);
	assert_string_equal(p.git_dir, want);
	assert_int_equal(mode_of(&p, "main/.git"), 0);
	protection_clear(&p);
	/* the worktree does not name this .git file back */
	f = fopen(back, "w");
	fprintf(f, "%s/elsewhere/.git\n", root);
	fclose(f);
	assert_null(worktree_common_dir(gitfile));
	/* a .git file pointing at some directory */
	f = fopen(gitfile, "w");
	fprintf(f, "gitdir: %s/secret\n", root);
	fclose(f);
	assert_null(worktree_common_dir(gitfile));
	protection_of(wt, NULL, &p);
	assert_null(p.git_dir);
	assert_int_equal(mode_of(&p, "secret"), -1);
	protection_clear(&p);
	free(wt);
	free(want);
	free(back);
	free(gitfile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_git_and_gemini_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worktree_common_dir, setup, teardown),
	};
	return cmocka_run_group_tests_name("protect", tests, NULL, NULL);
}
