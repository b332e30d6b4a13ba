/* trust: approvals pinned to content, and what changed since. */
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

#include "strv.h"
#include "trust.h"

static void test_difference(void **state)
{
	(void)state;
	char *a = text_digest("{\"image\": \"x\"}\n");
	char *b = text_digest("{\"image\": \"y\"}\n");
	assert_int_equal(strlen(a), 64); /* the whole SHA-256 */
	char *empty = text_digest("");
	assert_string_equal(empty,
	                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	free(empty);
	struct approval then = { "/p", a, NULL };
	char *rec = approval_record(&then);
	assert_null(approval_difference(rec, &then));
	struct approval now = { "/p", b, NULL };
	char *d = approval_difference(rec, &now);
	assert_string_equal(d, "the settings file");
	free(d);
	now.settings = a;
	now.containerfile = "c0ffee";
	d = approval_difference(rec, &now);
	assert_string_equal(d, "the containerfile or its build context");
	free(d);
	now.settings = NULL; /* the file was removed */
	d = approval_difference(rec, &now);
	assert_string_equal(d, "the settings file and the containerfile or its build context");
	free(d);
	now.dir = "/elsewhere";
	d = approval_difference(rec, &now);
	assert_string_equal(d, "the project directory");
	free(d);
	/* A record that is not one approves nothing. */
	now = then;
	d = approval_difference("garbage", &now);
	assert_non_null(d);
	free(d);
	free(rec);
	free(a);
	free(b);
}

static void test_write_and_read(void **state)
{
	(void)state;
	char dir[] = "/tmp/gb-trust-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = approval_path(dir, "gemini-box-p-0123");
	struct gb_error err = GB_ERROR_INIT;
	assert_null(approval_read(path));
	assert_int_equal(approval_write(path, "dir=/p\n", &err), 0);
	char *got = approval_read(path);
	assert_string_equal(got, "dir=/p\n");
	free(got);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A record others could have written is no approval. */
	assert_int_equal(chmod(path, 0666), 0);
	assert_null(approval_read(path));
	/* Nor is a link to one. */
	assert_int_equal(chmod(path, 0600), 0);
	char *link = xasprintf("%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_null(approval_read(link));
	unlink(link);
	unlink(path);
	char *trust_dir = xasprintf("%s/gemini-box/trust", dir);
	char *gb_dir = xasprintf("%s/gemini-box", dir);
	rmdir(trust_dir);
	rmdir(gb_dir);
	rmdir(dir);
	free(gb_dir);
	free(trust_dir);
	free(link);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_difference),
		cmocka_unit_test(test_write_and_read),
	};
	return cmocka_run_group_tests_name("trust", tests, NULL, NULL);
}
