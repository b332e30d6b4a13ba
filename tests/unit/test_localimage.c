/* localimage: the recipe of gemini-box's own image, as argv. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "localimage.h"
#include "strv.h"

static void test_tag(void **state)
{
	(void)state;
	char *a = local_image_tag("0.61.0");
	char *b = local_image_tag("0.61.0");
	char *c = local_image_tag("0.60.1");
	assert_string_equal(a, b);
	assert_int_equal(strncmp(a, LOCAL_IMAGE_REPO ":0.61.0-", strlen(LOCAL_IMAGE_REPO) + 8), 0);
	assert_int_equal(strlen(a), strlen(LOCAL_IMAGE_REPO ":0.61.0-") + 12);
	assert_string_not_equal(a, c);
	assert_true(local_image_selected("local"));
	assert_false(local_image_selected("localhost/x"));
	assert_false(local_image_selected(NULL));
	free(a);
	free(b);
	free(c);
}

static void test_argv(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	local_image_rootfs_argv("/usr/bin/mmdebstrap", "0.61.0", "/d/x.tar", &a);
	assert_string_equal(a.v[0], "/usr/bin/mmdebstrap");
	assert_string_equal(a.v[1], "--mode=unshare"); /* rootless: as the user */
	assert_string_equal(a.v[a.n - 2], LOCAL_IMAGE_SUITE);
	assert_string_equal(a.v[a.n - 1], "/d/x.tar");
	int npm = 0;
	for (size_t i = 0; i < a.n; i++)
		if (strstr(a.v[i], "@google/gemini-cli@$GEMINI_CLI_VERSION") &&
		    strstr(a.v[i], "GEMINI_CLI_VERSION='0.61.0'"))
			npm++;
	assert_int_equal(npm, 1);
	strv_clear(&a);
	local_image_import_argv("/usr/bin/podman", "/d/x.tar", "localhost/t:1", &a);
	assert_string_equal(a.v[1], "import");
	assert_string_equal(a.v[a.n - 2], "/d/x.tar");
	assert_string_equal(a.v[a.n - 1], "localhost/t:1");
	int user = 0;
	for (size_t i = 0; i < a.n; i++)
		user += strcmp(a.v[i], "USER node") == 0;
	assert_int_equal(user, 1);
	strv_clear(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tag),
		cmocka_unit_test(test_argv),
	};
	return cmocka_run_group_tests_name("localimage", tests, NULL, NULL);
}
