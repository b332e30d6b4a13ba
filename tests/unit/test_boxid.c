/* Unit tests: box directory discovery and box naming, hostile paths included. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "boxid.h"
#include "strv.h"

static void assert_valid_name(const char *name)
{
	/* podman's rule for names: [a-zA-Z0-9][a-zA-Z0-9_.-]* */
	assert_true(strlen(name) <= BOX_NAME_MAX);
	assert_true(strncmp(name, BOX_NAME_PREFIX, strlen(BOX_NAME_PREFIX)) == 0);
	for (const char *c = name; *c; c++)
		assert_non_null(strchr(
		        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *c));
	/* It ends with '-' and 12 lower-case hex digits. */
	size_t n = strlen(name);
	assert_true(n > BOX_HASH_HEX);
	assert_int_equal(name[n - BOX_HASH_HEX - 1], '-');
	for (size_t i = n - BOX_HASH_HEX; i < n; i++)
		assert_non_null(strchr("0123456789abcdef", name[i]));
}

static void name_of(const char *dir, char out[BOX_NAME_SIZE])
{
	box_name(dir, out);
	assert_valid_name(out);
}

static void test_name_known_hashes(void **state)
{
	(void)state;
	char name[BOX_NAME_SIZE];
	/* Reference digests from sha256sum(1) of the path bytes. */
	name_of("/home/alice/my project", name);
	assert_string_equal(name, "gemini-box-my-project-cf24a22e25c2");
	name_of("/srv/code/gemini-cli", name);
	assert_string_equal(name, "gemini-box-gemini-cli-3cebcba7a86c");
	name_of("/", name);
	assert_string_equal(name, "gemini-box-8a5edab28263");
}

static void test_name_differs_by_path(void **state)
{
	(void)state;
	char a[BOX_NAME_SIZE], b[BOX_NAME_SIZE], c[BOX_NAME_SIZE];
	name_of("/a/project", a);
	name_of("/b/project", b);
	name_of("/a/project/", c); /* not canonical, but still a different box */
	assert_string_not_equal(a, b);
	assert_string_not_equal(a, c);
	assert_memory_equal(a, "gemini-box-project-", 19);
	assert_memory_equal(b, "gemini-box-project-", 19);
}

static void test_slug(void **state)
{
	(void)state;
	struct {
		const char *dir, *slug;
	} cases[] = {
		{ "/p/simple", "simple" },
		{ "/p/with space", "with-space" },
		{ "/p/a,b:c\"d'e", "a-b-c-d-e" },
		{ "/p/new\nline", "new-line" },
		{ "/p/caf\xc3\xa9", "caf" },
		{ "/p/\xc3\xa9t\xc3\xa9", "t" },
		{ "/p/\xff\xfe", "" },
		{ "/p/...hidden", "hidden" },
		{ "/p/-dash-", "dash" },
		{ "/p/trailing.", "trailing" },
		{ "/p/My_Project.v2", "My_Project.v2" },
		{ "/p/a  b", "a-b" },
		{ "/", "" },
		{ "/p/$(rm -rf ~)", "rm--rf" },
	};
	char out[BOX_SLUG_MAX + 1];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		box_slug(cases[i].dir, out, BOX_SLUG_MAX);
		if (strcmp(out, cases[i].slug) != 0)
			fail_msg("slug of case %zu: want \"%s\", got \"%s\"", i, cases[i].slug,
			         out);
	}
}

static void test_slug_is_cut(void **state)
{
	(void)state;
	char dir[300] = "/p/";
	memset(dir + 3, 'x', 250);
	dir[253] = '\0';
	char out[BOX_SLUG_MAX + 1];
	box_slug(dir, out, BOX_SLUG_MAX);
	assert_int_equal(strlen(out), BOX_SLUG_MAX);
	/* A cut that ends on a separator drops it. */
	strcpy(dir, "/p/");
	memset(dir + 3, 'y', BOX_SLUG_MAX - 1);
	strcpy(dir + 3 + BOX_SLUG_MAX - 1, " tail");
	box_slug(dir, out, BOX_SLUG_MAX);
	assert_int_equal(strlen(out), BOX_SLUG_MAX - 1);
	assert_int_equal(out[strlen(out) - 1], 'y');
}

static void test_name_hostile_paths(void **state)
{
	(void)state;
	char name[BOX_NAME_SIZE];
	const char *hostile[] = {
		"/p/a,b",  "/p/a:b",  "/p/a\"b",
		"/p/a'b",  "/p/a\nb", "/p/\xe6\x97\xa5\xe6\x9c\xac",
		"/p/\xff", "/p/ ",    "/p/--privileged",
		"/p/a=b",  "/p/\t",
	};
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		name_of(hostile[i], name);

	/* The longest path Linux has: 4095 bytes. */
	char *longest = xmalloc(4096);
	longest[0] = '/';
	for (size_t i = 1; i < 4095; i++)
		longest[i] = (i % 200 == 0) ? '/' : 'd';
	longest[4095] = '\0';
	name_of(longest, name);
	assert_int_equal(strlen(name), BOX_NAME_MAX);
	free(longest);
}

/* box_dir_find on a real tree in a temporary directory. */
struct tree {
	char root[64];
};

static void mk(const char *root, const char *rel, bool file)
{
	char *p = xasprintf("%s/%s", root, rel);
	if (file) {
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	} else {
		assert_int_equal(mkdir(p, 0755), 0);
	}
	free(p);
}

static int tree_setup(void **state)
{
	struct tree *t = xmalloc(sizeof(*t));
	strcpy(t->root, "/tmp/gb-boxid-XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	char *real = realpath(t->root, NULL);
	snprintf(t->root, sizeof(t->root), "%s", real);
	free(real);
	mk(t->root, "home", false);
	mk(t->root, "home/.git", false);
	mk(t->root, "home/proj", false);
	mk(t->root, "home/proj/.git", false);
	mk(t->root, "home/proj/a", false);
	mk(t->root, "home/proj/a/b", false);
	mk(t->root, "home/wt", false);
	mk(t->root, "home/wt/.git", true); /* a worktree's .git file */
	mk(t->root, "home/wt/sub", false);
	mk(t->root, "home/plain", false);
	mk(t->root, "other", false);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	const char *dirs[] = { "home/plain",    "home/wt/sub", "home/wt/.git",   "home/wt",
		               "home/proj/a/b", "home/proj/a", "home/proj/.git", "home/proj",
		               "home/.git",     "home",        "other",          "" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *p = xasprintf("%s/%s", t->root, dirs[i]);
		if (remove(p) != 0)
			rmdir(p);
		free(p);
	}
	free(t);
	return 0;
}

static void expect_dir(const struct tree *t, const char *cwd_rel, const char *want_rel)
{
	char *cwd = xasprintf("%s/%s", t->root, cwd_rel);
	char *home = xasprintf("%s/home", t->root);
	char *want = xasprintf("%s/%s", t->root, want_rel);
	char *got = box_dir_find(cwd, home, geteuid());
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(home);
	free(cwd);
}

static void test_dir_find(void **state)
{
	const struct tree *t = *state;
	expect_dir(t, "home/proj", "home/proj");
	expect_dir(t, "home/proj/a", "home/proj");
	expect_dir(t, "home/proj/a/b", "home/proj");
	expect_dir(t, "home/wt/sub", "home/wt");
	/* The nearest .git is home's: not a project, so the directory itself. */
	expect_dir(t, "home/plain", "home/plain");
	expect_dir(t, "home", "home");
	expect_dir(t, "other", "other");
}

static void test_within(void **state)
{
	(void)state;
	assert_true(path_is_within("/a/b", "/a/b"));
	assert_true(path_is_within("/a/b/c", "/a/b"));
	assert_false(path_is_within("/a/bc", "/a/b"));
	assert_false(path_is_within("/a", "/a/b"));
	assert_true(path_is_within("/x", "/"));
}

/* The search never adopts, or looks past, a directory someone else owns. */
static void test_dir_find_stops_at_another_users_dir(void **state)
{
	const struct tree *t = *state;
	char *cwd = xasprintf("%s/home/proj/a/b", t->root);
	char *got = box_dir_find(cwd, NULL, geteuid() + 1);
	assert_string_equal(got, cwd); /* not even cwd's own parents */
	free(got);
	if (geteuid() == 0) {
		char *proj = xasprintf("%s/home/proj", t->root);
		assert_int_equal(chown(proj, 4242, 4242), 0);
		got = box_dir_find(cwd, NULL, 0);
		assert_string_equal(got, cwd); /* proj and its .git: another user's */
		free(got);
		assert_int_equal(chown(proj, 0, 0), 0);
		free(proj);
	}
	free(cwd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_known_hashes),
		cmocka_unit_test(test_name_differs_by_path),
		cmocka_unit_test(test_slug),
		cmocka_unit_test(test_slug_is_cut),
		cmocka_unit_test(test_name_hostile_paths),
		cmocka_unit_test_setup_teardown(test_dir_find_stops_at_another_users_dir,
		                                tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_dir_find, tree_setup, tree_teardown),
		cmocka_unit_test(test_within),
	};
	return cmocka_run_group_tests_name("boxid", tests, NULL, NULL);
}
