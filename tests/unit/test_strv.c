/* Unit tests: the string vector every argv is built with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strv.h"

static void test_push_keeps_null_termination(void **state)
{
	(void)state;
	struct strv sv = STRV_INIT;
	for (int i = 0; i < 1000; i++) {
		strv_pushf(&sv, "w%d", i);
		assert_int_equal(sv.n, (size_t)i + 1);
		assert_null(sv.v[sv.n]);
	}
	assert_string_equal(sv.v[999], "w999");
	char *words[] = { "a", "", "c" };
	strv_pushv(&sv, words, 3);
	assert_string_equal(sv.v[1001], "");
	assert_true(sv.v[1000] != words[0]); /* copies, not borrowed */
	strv_clear(&sv);
	assert_null(sv.v);
	assert_int_equal(sv.n, 0);
}

static void test_join(void **state)
{
	(void)state;
	struct strv sv = STRV_INIT;
	char *s = strv_join(&sv, ", ");
	assert_string_equal(s, "");
	free(s);
	strv_push(&sv, "image");
	s = strv_join(&sv, ", ");
	assert_string_equal(s, "image");
	free(s);
	strv_push(&sv, "");
	strv_push(&sv, "ports");
	s = strv_join(&sv, ", ");
	assert_string_equal(s, "image, , ports");
	free(s);
	s = strv_join(&sv, "");
	assert_string_equal(s, "imageports");
	free(s);
	strv_clear(&sv);
}

static void test_sort_unique(void **state)
{
	(void)state;
	struct strv sv = STRV_INIT;
	const char *words[] = { "keep", "TERM", "LANG", "TERM", "A", "LANG", "TERM" };
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		strv_push(&sv, words[i]);
	strv_sort_unique(&sv, 1); /* "keep" stays where it is */
	assert_int_equal(sv.n, 4);
	assert_string_equal(sv.v[0], "keep");
	assert_string_equal(sv.v[1], "A");
	assert_string_equal(sv.v[2], "LANG");
	assert_string_equal(sv.v[3], "TERM");
	assert_null(sv.v[4]);
	strv_sort_unique(&sv, 4); /* nothing to sort */
	strv_sort_unique(&sv, 9);
	assert_int_equal(sv.n, 4);
	strv_clear(&sv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_keeps_null_termination),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_sort_unique),
	};
	return cmocka_run_group_tests_name("strv", tests, NULL, NULL);
}
