/* Unit tests: the containerfile image's tag follows its inputs. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "build.h"
#include "strv.h"

static char dir[64];

static void write_file(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static char *tag_of(const char *base)
{
	char *cf = xasprintf("%s/sandbox.Dockerfile", dir);
	char *tag = NULL;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(build_tag(cf, base, &tag, &err), 0);
	free(cf);
	assert_non_null(tag);
	return tag;
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gb-build-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return 0;
}

static void test_tag_follows_inputs(void **state)
{
	(void)state;
	write_file("sandbox.Dockerfile", "FROM base\nRUN true\n");
	char *t1 = tag_of("base:1");
	assert_int_equal(strncmp(t1, BUILD_IMAGE_REPO ":", strlen(BUILD_IMAGE_REPO) + 1), 0);
	assert_int_equal(strlen(t1), strlen(BUILD_IMAGE_REPO) + 1 + 12);
	char *same = tag_of("base:1");
	assert_string_equal(t1, same); /* nothing changed: no rebuild */

	char *other_base = tag_of("base:2");
	assert_string_not_equal(t1, other_base);

	write_file("sandbox.Dockerfile", "FROM base\nRUN false\n");
	char *t2 = tag_of("base:1");
	assert_string_not_equal(t1, t2);

	/* a file in the context counts, and so does one in a subdirectory */
	write_file("extra.sh", "echo hi\n");
	char *t3 = tag_of("base:1");
	assert_string_not_equal(t2, t3);
	char *sub = xasprintf("%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file("sub/x", "1");
	char *t4 = tag_of("base:1");
	assert_string_not_equal(t3, t4);
	/* and its mode */
	char *x = xasprintf("%s/sub/x", dir);
	assert_int_equal(chmod(x, 0755), 0);
	char *t5 = tag_of("base:1");
	assert_string_not_equal(t4, t5);
	free(x);
	free(sub);
	free(t1);
	free(same);
	free(other_base);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}

static void test_missing_context(void **state)
{
	(void)state;
	char *tag = NULL;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(build_tag("/nonexistent/dir/Containerfile", "b", &tag, &err), -1);
	assert_int_equal(err.status, EXIT_BOX_CONFIG);
	assert_non_null(strstr(err.msg, "cannot read the build context"));
	assert_null(tag);
	gb_error_clear(&err);
}

static char *digest_with(const char *cache)
{
	char *cf = xasprintf("%s/sandbox.Dockerfile", dir);
	char *digest = NULL;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(build_context_digest(cf, cache, &digest, &err), 0);
	free(cf);
	assert_int_equal(strlen(digest), 64);
	return digest;
}

/* What the ignore file leaves out does not count, however many files it is;
 * the ignore file itself and the containerfile always do. */
static void test_ignore_file(void **state)
{
	(void)state;
	write_file("sandbox.Dockerfile", "FROM base\n");
	write_file(".containerignore", "# deps\nnode_modules\n*.log\n!keep.log\n/build/\n");
	char *t1 = tag_of("b");
	char *nm = xasprintf("%s/node_modules", dir);
	assert_int_equal(mkdir(nm, 0755), 0);
	for (int i = 0; i <= BUILD_CONTEXT_MAX_FILES; i++) {
		char *name = xasprintf("node_modules/f%d", i);
		write_file(name, "x");
		free(name);
	}
	write_file("debug.log", "noise");
	char *build = xasprintf("%s/build", dir);
	assert_int_equal(mkdir(build, 0755), 0);
	write_file("build/out", "x");
	char *t2 = tag_of("b");
	assert_string_equal(t1, t2);
	write_file("keep.log", "counts");
	char *t3 = tag_of("b");
	assert_string_not_equal(t2, t3);
	write_file(".containerignore", "node_modules\n");
	char *t4 = tag_of("b");
	assert_string_not_equal(t3, t4);
	free(build);
	free(nm);
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}

/* An unchanged context is not read again: the cached digest is used (here
 * one planted in the cache proves it); a changed file is read again. */
static void test_cache_skips_unchanged_context(void **state)
{
	(void)state;
	write_file("sandbox.Dockerfile", "FROM base\n");
	char *cache = xasprintf("%s.cache", dir);
	char *real = digest_with(cache);
	char *again = digest_with(cache);
	assert_string_equal(real, again);
	FILE *f = fopen(cache, "r");
	assert_non_null(f);
	char line[256];
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	char *space = strchr(line, ' ');
	assert_non_null(space);
	memset(space + 1, 'a', 64);
	f = fopen(cache, "w");
	fputs(line, f);
	fclose(f);
	char *planted = digest_with(cache);
	assert_string_equal(planted,
	                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	/* A cache others could write is not believed. */
	assert_int_equal(chmod(cache, 0666), 0);
	char *distrusted = digest_with(cache);
	assert_string_equal(distrusted, real);
	assert_int_equal(chmod(cache, 0600), 0);
	/* Changed content changes the ctime: read again. */
	write_file("sandbox.Dockerfile", "FROM base\nRUN true\n");
	char *changed = digest_with(cache);
	assert_string_not_equal(changed, real);
	assert_string_not_equal(changed, planted);
	unlink(cache);
	free(cache);
	free(real);
	free(again);
	free(planted);
	free(distrusted);
	free(changed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tag_follows_inputs),
		cmocka_unit_test(test_missing_context),
		cmocka_unit_test(test_ignore_file),
		cmocka_unit_test(test_cache_skips_unchanged_context),
	};
	return cmocka_run_group_tests_name("build", tests, setup, teardown);
}
