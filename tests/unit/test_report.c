/* Unit tests: what --box-status and --box-list print. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"

static char *capture_status(const struct status_report *r, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	report_status(r, json, f);
	fclose(f);
	return text;
}

static void test_status_absent(void **state)
{
	(void)state;
	struct box_info info = { .state = BOX_ABSENT };
	struct strv drift = STRV_INIT;
	struct status_report r = { "gemini-box-p-0123456789ab", "/p", &info, "img:1", &drift };
	char *text = capture_status(&r, false);
	assert_non_null(strstr(text, "state      absent\n"));
	assert_non_null(strstr(text, "image      img:1\n"));
	assert_non_null(strstr(text, "the next run creates it"));
	free(text);
	text = capture_status(&r, true);
	assert_non_null(strstr(text, "\"state\":\t\"absent\""));
	assert_non_null(strstr(text, "\"drift\":\tnull"));
	free(text);
}

static void test_status_drifted(void **state)
{
	(void)state;
	struct box_info info = { .state = BOX_RUNNING,
		                 .status = "running",
		                 .id = "abc",
		                 .created = "2026-01-01",
		                 .label_image = "old:1",
		                 .label_dir = "/p\nq" };
	struct strv drift = STRV_INIT;
	strv_push(&drift, "image");
	strv_push(&drift, "ports");
	struct status_report r = { "n", "/p\nq", &info, "new:1", &drift };
	char *text = capture_status(&r, false);
	assert_non_null(strstr(text, "directory  $'/p\\nq'\n"));
	assert_non_null(strstr(text, "image      old:1\n")); /* what the box has */
	assert_non_null(
	        strstr(text, "settings   drifted: image, ports (gemini-box --box-recreate"));
	free(text);
	text = capture_status(&r, true);
	assert_non_null(strstr(text, "\"directory\":\t\"/p\\nq\""));
	assert_non_null(strstr(text, "\"drift\":\t[\"image\", \"ports\"]"));
	free(text);
	strv_clear(&drift);
	strv_push(&drift, "x");
	strv_clear(&drift);
	r.drift = &drift;
	text = capture_status(&r, false);
	assert_non_null(strstr(text, "settings   current\n"));
	free(text);
}

static void test_list(void **state)
{
	(void)state;
	struct box_info boxes[2] = {
		{ .name = "gemini-box-a-1",
		  .status = "running",
		  .label_dir = "/a",
		  .label_image = "i:1",
		  .id = "1" },
		{ .name = "gemini-box-b-2",
		  .status = "exited",
		  .label_dir = "/gone dir",
		  .label_image = "i:2",
		  .id = "2" },
	};
	bool exists[2] = { true, false };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	report_list(boxes, exists, 2, false, f);
	fclose(f);
	assert_non_null(strstr(text, "NAME"));
	char *second = strstr(text, "gemini-box-b-2");
	assert_non_null(second);
	assert_non_null(strstr(second, "'/gone dir'  (gone)\n"));
	assert_null(strstr(strstr(text, "gemini-box-a-1"), "(gone)\ngemini-box-b"));
	free(text);
	f = open_memstream(&text, &len);
	report_list(boxes, exists, 2, true, f);
	fclose(f);
	assert_non_null(strstr(text, "\"directory_exists\":\tfalse"));
	assert_non_null(strstr(text, "\"directory_exists\":\ttrue"));
	free(text);
	f = open_memstream(&text, &len);
	report_list(boxes, exists, 0, true, f);
	fclose(f);
	assert_string_equal(text, "[]\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_absent),
		cmocka_unit_test(test_status_drifted),
		cmocka_unit_test(test_list),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
