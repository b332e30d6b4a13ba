/* Unit tests: reading podman container inspect output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inspect.h"

static void test_absent(void **state)
{
	(void)state;
	struct box_info info;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(inspect_parse("[]\n", &info, &err), 0);
	assert_int_equal(info.state, BOX_ABSENT);
	assert_null(info.id);
	box_info_clear(&info);
}

static void test_running_with_labels(void **state)
{
	(void)state;
	const char *json =
	        "[{\"Id\":\"abc123\",\"State\":{\"Status\":\"running\",\"Running\":true},"
	        "\"Config\":{\"Labels\":{\"gemini-box.dir\":\"/p/a,b\\nc\",\"other\":\"x\"}}}]";
	struct box_info info;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(inspect_parse(json, &info, &err), 0);
	assert_int_equal(info.state, BOX_RUNNING);
	assert_string_equal(info.id, "abc123");
	assert_string_equal(info.status, "running");
	assert_string_equal(info.label_dir, "/p/a,b\nc");
	box_info_clear(&info);
}

static void test_states(void **state)
{
	(void)state;
	assert_int_equal(box_state_of_status("running"), BOX_RUNNING);
	assert_int_equal(box_state_of_status("paused"), BOX_PAUSED);
	assert_int_equal(box_state_of_status("initialized"), BOX_STUCK);
	assert_int_equal(box_state_of_status("exited"), BOX_STOPPED);
	assert_int_equal(box_state_of_status("created"), BOX_STOPPED);
	assert_int_equal(box_state_of_status("configured"), BOX_STOPPED);
	assert_int_equal(box_state_of_status("stopped"), BOX_STOPPED);
	assert_int_equal(box_state_of_status(""), BOX_STOPPED);
}

static void test_no_labels(void **state)
{
	(void)state;
	const char *json =
	        "[{\"Id\":\"x\",\"State\":{\"Status\":\"exited\"},\"Config\":{\"Labels\":null}}]";
	struct box_info info;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(inspect_parse(json, &info, &err), 0);
	assert_int_equal(info.state, BOX_STOPPED);
	assert_null(info.label_dir);
	box_info_clear(&info);
}

static void test_garbage(void **state)
{
	(void)state;
	const char *bad[] = {
		"",
		"not json",
		"{}",
		"[1]",
		"[{}]",
		"[{\"Id\":1,\"State\":{\"Status\":\"running\"}}]",
		"[{\"Id\":\"x\"}]",
		"[{\"Id\":\"x\",\"State\":{\"Status\":5}}]",
		"[{\"Id\":\"x\",\"State\":[]}]",
		"[",
		"\xff\xfe",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct box_info info;
		struct gb_error err = GB_ERROR_INIT;
		if (inspect_parse(bad[i], &info, &err) != -1)
			fail_msg("case %zu parsed", i);
		assert_int_equal(err.status, EXIT_BOX_PODMAN);
		assert_null(info.id);
		gb_error_clear(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absent),  cmocka_unit_test(test_running_with_labels),
		cmocka_unit_test(test_states),  cmocka_unit_test(test_no_labels),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests_name("inspect", tests, NULL, NULL);
}
