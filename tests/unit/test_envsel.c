/* Unit tests: which environment variables each run carries into the box. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envsel.h"

static void test_forwarded_names(void **state)
{
	(void)state;
	const char *yes[] = {
		"TERM",
		"COLORTERM",
		"LANG",
		"LC_ALL",
		"LC_CTYPE",
		"LC_X",
		"TERM_PROGRAM",
		"GEMINI_CLI_IDE_SERVER_PORT",
		"GEMINI_CLI_IDE_WORKSPACE_PATH",
		"GEMINI_CLI_IDE_AUTH_TOKEN",
		"GEMINI_CLI_IDE_SERVER_STDIO_COMMAND",
		"GEMINI_CLI_IDE_SERVER_STDIO_ARGS",
		"GEMINI_CLI_IDE_PID",
		"GEMINI_SANDBOX",
		"GEMINI_API_KEY",
		"GOOGLE_API_KEY",
		"GOOGLE_GENAI_USE_VERTEXAI",
		"GOOGLE_GENAI_USE_GCA",
		"GOOGLE_CLOUD_PROJECT",
		"GOOGLE_CLOUD_LOCATION",
		"GOOGLE_GEMINI_BASE_URL",
		"GOOGLE_VERTEX_BASE_URL",
		"GEMINI_MODEL",
		"GEMINI_CLI_TRUST_WORKSPACE",
	};
	const char *no[] = {
		"PATH",
		"HOME",
		"USER",
		"SANDBOX",
		"SSH_AUTH_SOCK",
		"LC_",
		"GEMINI_CLI_IDE_",
		"term",
		"TERMX",
		"XTERM",
		"GEMINI_API_KEY2",
		"GOOGLE_APPLICATION_CREDENTIALS",
		"LD_PRELOAD",
		"",
		"LC_A-B",
		"LC_A B",
		"1LC_X",
		"GEMINI_CLI_IDE_X\n",
		"AWS_SECRET_ACCESS_KEY",
		"GEMINI_BOX_PODMAN",
		"GEMINI_IMAGE",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		if (!env_name_forwarded(yes[i]))
			fail_msg("%s should be forwarded", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (env_name_forwarded(no[i]))
			fail_msg("%s should not be forwarded", no[i]);
}

static void test_names_from_envp(void **state)
{
	(void)state;
	char *envp[] = {
		"PATH=/usr/bin", "TERM=xterm", "LC_ALL=C", "GEMINI_API_KEY=secret",
		"TERM=dup",      "NOEQUALS",   "=x",       "GEMINI_CLI_IDE_SERVER_PORT=1234",
		"LANG=",         "HOME=/root", NULL,
	};
	struct strv names = STRV_INIT;
	env_forward_names(envp, &names);
	const char *want[] = { "GEMINI_API_KEY", "GEMINI_CLI_IDE_SERVER_PORT", "LANG", "LC_ALL",
		               "TERM" };
	assert_int_equal(names.n, sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < names.n; i++) {
		assert_string_equal(names.v[i], want[i]);
		/* Names only: a value would show in ps. */
		assert_null(strchr(names.v[i], '='));
	}
	assert_null(names.v[names.n]);
	strv_clear(&names);
}

static void test_empty_envp(void **state)
{
	(void)state;
	char *envp[] = { NULL };
	struct strv names = STRV_INIT;
	env_forward_names(envp, &names);
	assert_int_equal(names.n, 0);
	env_forward_names(NULL, &names);
	assert_int_equal(names.n, 0);
	strv_clear(&names);
}

static void test_large_environment(void **state)
{
	(void)state;
	enum { N = 5000 };
	char **envp = calloc(N + 2, sizeof(char *));
	assert_non_null(envp);
	for (int i = 0; i < N; i++)
		envp[i] = xasprintf("LC_V%05d=%d", N - i, i);
	/* A 1 MB value is forwarded by name like any other. */
	char *big = xmalloc(1 << 20);
	memset(big, 'v', (1 << 20) - 1);
	memcpy(big, "GEMINI_MODEL=", 13);
	big[(1 << 20) - 1] = '\0';
	envp[N] = big;
	struct strv names = STRV_INIT;
	env_forward_names(envp, &names);
	assert_int_equal(names.n, N + 1);
	assert_string_equal(names.v[0], "GEMINI_MODEL");
	for (size_t i = 2; i < names.n; i++)
		assert_true(strcmp(names.v[i - 1], names.v[i]) < 0);
	strv_clear(&names);
	for (int i = 0; i <= N; i++)
		free(envp[i]);
	free(envp);
}

static void test_env_is_true(void **state)
{
	(void)state;
	char *envp[] = { "CI=true", "GITHUB_ACTIONS=false", "CIX=true", "EMPTY=", NULL };
	assert_true(env_is_true(envp, "CI"));
	assert_false(env_is_true(envp, "GITHUB_ACTIONS"));
	assert_false(env_is_true(envp, "EMPTY"));
	assert_false(env_is_true(envp, "MISSING"));
	char *other[] = { "CI=1", "CI=TRUE", NULL };
	assert_false(env_is_true(other, "CI"));
}

static void test_utf8(void **state)
{
	(void)state;
	const char *good[] = { "",
		               "ascii",
		               "caf\xc3\xa9",
		               "\xe6\x97\xa5\xe6\x9c\xac",
		               "\xf0\x9f\x98\x80",
		               "\xef\xbf\xbd",
		               "\xf4\x8f\xbf\xbf" };
	const char *bad[] = { "\xff\xfe",         "\x80",
		              "caf\xc3",          "\xc0\xaf",
		              "\xe0\x80\xaf",     "\xed\xa0\x80",
		              "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
		              "\xe6\x97",         "a\xc3(" };
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		if (!utf8_valid(good[i]))
			fail_msg("good case %zu refused", i);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (utf8_valid(bad[i]))
			fail_msg("bad case %zu accepted", i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forwarded_names), cmocka_unit_test(test_names_from_envp),
		cmocka_unit_test(test_empty_envp),      cmocka_unit_test(test_large_environment),
		cmocka_unit_test(test_env_is_true),     cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests_name("envsel", tests, NULL, NULL);
}
