/* Unit tests: the session runner relays signals and passes exit statuses. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
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

#include "session.h"
#include "strv.h"

extern char **environ;

static void test_token(void **state)
{
	(void)state;
	char a[SESSION_TOKEN_SIZE], b[SESSION_TOKEN_SIZE];
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(session_token(a, &err), 0);
	assert_int_equal(session_token(b, &err), 0);
	assert_int_equal(strlen(a), SESSION_TOKEN_SIZE - 1);
	assert_int_equal(strspn(a, "0123456789abcdef"), SESSION_TOKEN_SIZE - 1);
	assert_string_not_equal(a, b);
}

static void test_kill_argv_keeps_values_out_of_the_script(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	session_kill_argv("/usr/bin/podman", "box", "TERM", "0123456789abcdef", &a);
	assert_int_equal(a.n, 9);
	assert_string_equal(a.v[1], "exec");
	assert_string_equal(a.v[2], "box");
	assert_string_equal(a.v[3], "/bin/sh");
	assert_string_equal(a.v[4], "-c");
	assert_null(strstr(a.v[5], "0123456789abcdef"));
	assert_non_null(strstr(a.v[5], SESSION_ENV "=$token"));
	assert_string_equal(a.v[7], "TERM");
	assert_string_equal(a.v[8], "0123456789abcdef");
	strv_clear(&a);
}

static int run_sh(const char *script)
{
	char *argv[] = { "/bin/sh", "-c", (char *)(uintptr_t)script, NULL };
	struct gb_error err = GB_ERROR_INIT;
	return session_run(argv, environ, "/nonexistent/podman", "box", "tok", &err);
}

static void test_statuses_pass_through(void **state)
{
	(void)state;
	assert_int_equal(run_sh("exit 0"), 0);
	assert_int_equal(run_sh("exit 5"), 5);
	assert_int_equal(run_sh("exit 255"), 255);
	assert_int_equal(run_sh("kill -TERM $$"), 128 + SIGTERM);
	assert_int_equal(run_sh("kill -KILL $$"), 128 + SIGKILL);
}

static void test_missing_program(void **state)
{
	(void)state;
	char *argv[] = { "/nonexistent/podman", NULL };
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(session_run(argv, environ, "/nonexistent/podman", "box", "tok", &err), -1);
	assert_int_equal(err.status, EXIT_BOX_NOPODMAN);
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/podman: No such file"));
	gb_error_clear(&err);
}

/* A stand-in podman receives the relay and kills the session's process. */
static void test_signal_is_relayed(void **state)
{
	(void)state;
	char dir[] = "/tmp/gb-session-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *fake = xasprintf("%s/podman", dir);
	char *mark = xasprintf("%s/mark", dir);
	char *pidfile = xasprintf("%s/pid", dir);
	FILE *f = fopen(fake, "w");
	assert_non_null(f);
	/* argv: exec BOX /bin/sh -c SCRIPT NAME SIGNAL TOKEN */
	fprintf(f, "#!/bin/sh\necho \"$2 $7 $8\" >%s\nkill -s \"$7\" \"$(cat %s)\"\n", mark,
	        pidfile);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);

	pid_t self = getpid();
	pid_t poker = fork();
	assert_true(poker >= 0);
	if (poker == 0) {
		/* Once the session runs, signal gemini-box (the test process). */
		for (int i = 0; i < 200 && access(pidfile, R_OK) != 0; i++)
			usleep(20000);
		usleep(50000);
		kill(self, SIGTERM);
		_exit(0);
	}
	char *script = xasprintf("echo $$ >%s.tmp && mv %s.tmp %s && exec sleep 10", pidfile,
	                         pidfile, pidfile);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct gb_error err = GB_ERROR_INIT;
	int status = session_run(argv, environ, fake, "the-box", "feedface", &err);
	assert_int_equal(status, 128 + SIGTERM);
	int st;
	waitpid(poker, &st, 0);

	char got[128] = "";
	f = fopen(mark, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "the-box TERM feedface\n");

	unlink(fake);
	unlink(mark);
	unlink(pidfile);
	rmdir(dir);
	free(script);
	free(fake);
	free(mark);
	free(pidfile);
}

/* With SIGCHLD inherited as ignored, the end of the session is still seen. */
static void test_ignored_sigchld_does_not_hang(void **state)
{
	(void)state;
	signal(SIGCHLD, SIG_IGN);
	assert_int_equal(run_sh("exit 7"), 7);
	signal(SIGCHLD, SIG_DFL);
}

/* Under nohup, a HUP is the caller's to ignore: it never reaches the box. */
static void test_ignored_signal_is_not_relayed(void **state)
{
	(void)state;
	char dir[] = "/tmp/gb-session-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *fake = xasprintf("%s/podman", dir);
	char *mark = xasprintf("%s/mark", dir);
	FILE *f = fopen(fake, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho relayed >%s\n", mark);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);
	signal(SIGHUP, SIG_IGN);
	pid_t self = getpid();
	pid_t poker = fork();
	assert_true(poker >= 0);
	if (poker == 0) {
		usleep(200000);
		kill(self, SIGHUP);
		_exit(0);
	}
	char *argv[] = { "/bin/sh", "-c", "sleep 1; exit 3", NULL };
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(session_run(argv, environ, fake, "box", "tok", &err), 3);
	int st;
	waitpid(poker, &st, 0);
	signal(SIGHUP, SIG_DFL);
	assert_int_equal(access(mark, F_OK), -1);
	unlink(fake);
	rmdir(dir);
	free(fake);
	free(mark);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_kill_argv_keeps_values_out_of_the_script),
		cmocka_unit_test(test_statuses_pass_through),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_signal_is_relayed),
		cmocka_unit_test(test_ignored_sigchld_does_not_hang),
		cmocka_unit_test(test_ignored_signal_is_not_relayed),
	};
	return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
