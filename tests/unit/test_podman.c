/* Unit tests: the process runner and the helpers around podman's output. */
#define _GNU_SOURCE
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

#include "podman.h"
#include "spawn.h"
#include "strv.h"

static void test_message(void **state)
{
	(void)state;
	char *m = podman_message("time=\"x\" level=warning msg=\"/ is not a shared mount\"\n"
	                         "Error: creating container storage: the container name \"b\" is "
	                         "already in use\n");
	assert_string_equal(
	        m, "creating container storage: the container name \"b\" is already in use");
	free(m);
	m = podman_message("  last line \n\n");
	assert_string_equal(m, "last line ");
	free(m);
	m = podman_message("");
	assert_string_equal(m, "(podman printed no message)");
	free(m);
	char *long_text = xmalloc(5000);
	memset(long_text, 'x', 4999);
	long_text[4999] = '\0';
	m = podman_message(long_text);
	assert_int_equal(strlen(m), PODMAN_MESSAGE_MAX);
	assert_string_equal(m + PODMAN_MESSAGE_MAX - 3, "...");
	free(m);
	free(long_text);
	m = podman_message(NULL);
	assert_string_equal(m, "(podman printed no message)");
	free(m);
}

static void test_find_executable(void **state)
{
	(void)state;
	char *p = find_executable("sh", "/nonexistent:/bin:/usr/bin");
	assert_non_null(p);
	assert_string_equal(p, "/bin/sh");
	free(p);
	assert_null(find_executable("sh", "/nonexistent"));
	assert_null(find_executable("", "/bin"));
	assert_null(find_executable("/nonexistent/podman", "/bin"));
	assert_null(find_executable("/etc/passwd", "/bin")); /* not executable */
	assert_null(find_executable("/bin", "/bin"));        /* a directory */
	p = find_executable("/bin/sh", NULL);
	assert_string_equal(p, "/bin/sh");
	free(p);
}

extern char **environ;

static int run_command(char *const argv[], enum child_io io, struct run_result *r,
                       struct gb_error *err)
{
	struct child c = { argv, environ, io };
	return child_run(&c, r, err);
}

/* A child gets exactly the environment it is given, not gemini-box's own. */
static void test_run_gets_the_environment_given(void **state)
{
	(void)state;
	char *argv[] = { "/usr/bin/env", NULL };
	char *env[] = { "ONLY=this", NULL };
	struct child c = { argv, env, CHILD_CAPTURE };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(setenv("GB_PARENT_ONLY", "x", 1), 0);
	assert_int_equal(child_run(&c, &r, &err), 0);
	assert_string_equal(r.out, "ONLY=this\n");
	run_result_clear(&r);
	unsetenv("GB_PARENT_ONLY");
}

static void test_run_captures_and_hides_stdin(void **state)
{
	(void)state;
	/* stdin must be /dev/null: cat reads nothing and ends at once. */
	char *argv[] = { "/bin/sh", "-c", "cat; echo out; echo err >&2; exit 3", NULL };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_command(argv, CHILD_CAPTURE, &r, &err), 0);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "err\n");
	run_result_clear(&r);
}

static void test_run_large_output(void **state)
{
	(void)state;
	/* More than a pipe holds, on both streams at once. */
	char *argv[] = { "/bin/sh", "-c",
		         "i=0; while [ $i -lt 20000 ]; do echo 0123456789; echo abcdefghij >&2; "
		         "i=$((i+1)); done",
		         NULL };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_command(argv, CHILD_CAPTURE, &r, &err), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(strlen(r.out), 20000 * 11);
	assert_int_equal(strlen(r.err), 20000 * 11);
	run_result_clear(&r);
}

static void test_run_missing_program(void **state)
{
	(void)state;
	char *argv[] = { "/nonexistent/podman", NULL };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_command(argv, CHILD_CAPTURE, &r, &err), -1);
	assert_int_equal(err.status, EXIT_BOX_NOPODMAN);
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/podman: No such file"));
	assert_null(r.out);
	gb_error_clear(&err);
	/* A program that runs and exits 127 is a result, not a failure to run. */
	char *exits127[] = { "/bin/sh", "-c", "exit 127", NULL };
	assert_int_equal(run_command(exits127, CHILD_CAPTURE, &r, &err), 0);
	assert_int_equal(r.status, 127);
	run_result_clear(&r);
}

static void test_run_signal(void **state)
{
	(void)state;
	char *argv[] = { "/bin/sh", "-c", "kill -TERM $$", NULL };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_command(argv, CHILD_SHOW, &r, &err), 0);
	assert_int_equal(r.status, 128 + 15);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	run_result_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_find_executable),
		cmocka_unit_test(test_run_gets_the_environment_given),
		cmocka_unit_test(test_run_captures_and_hides_stdin),
		cmocka_unit_test(test_run_large_output),
		cmocka_unit_test(test_run_missing_program),
		cmocka_unit_test(test_run_signal),
	};
	return cmocka_run_group_tests_name("podman", tests, NULL, NULL);
}
