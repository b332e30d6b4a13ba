/* error: errors as values, with errno kept and context added by each layer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"

static void test_fail_errno_and_wrap(void **state)
{
	(void)state;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(gb_fail_errno(&err, EXIT_BOX_INTERNAL, ENOENT, "open %s", "`x`"), -1);
	assert_string_equal(err.msg, "open `x`: No such file or directory");
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(gb_error_wrap(&err, "inspect %s", "box"), -1);
	assert_string_equal(err.msg, "inspect box: open `x`: No such file or directory");
	assert_int_equal(err.status, EXIT_BOX_INTERNAL);
	assert_int_equal(err.errnum, ENOENT);
	gb_error_clear(&err);
	assert_null(err.msg);
	assert_int_equal(err.errnum, 0);
	/* A plain failure has no errno. */
	gb_fail(&err, EXIT_BOX_CONFIG, "bad %d", 1);
	assert_int_equal(err.errnum, 0);
	gb_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fail_errno_and_wrap),
	};
	return cmocka_run_group_tests_name("error", tests, NULL, NULL);
}
