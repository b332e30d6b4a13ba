/* Unit tests: shell quoting, checked by letting a real shell read it back. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "quote.h"
#include "strv.h"

static const char *const samples[] = {
	"plain",     "",      "with space", "it's",        "\"dq\"",    "a\nb",
	"tab\there", "$(id)", "`id`",       "back\\slash", "glob*?[x]", "semi;colon",
	"&&",        "|",     "~",          "#comment",    "\x01\x7f",  "caf\xc3\xa9",
	"'\n'",      "\\'",   "--env=X",    "a=b,c:d",
};

static void test_safe_words_stay_bare(void **state)
{
	(void)state;
	const char *bare[] = { "podman", "--env=TERM", "/usr/bin/podman", "a,b:c", "x@y%z+1" };
	for (size_t i = 0; i < sizeof(bare) / sizeof(*bare); i++) {
		char *q = shell_quote(bare[i]);
		assert_string_equal(q, bare[i]);
		free(q);
	}
}

static void test_one_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++) {
		char *q = shell_quote(samples[i]);
		assert_null(strchr(q, '\n'));
		free(q);
	}
}

/* bash reads each quoted word back; printf %s\0 shows exactly what it got. */
static void test_bash_reads_it_back(void **state)
{
	(void)state;
	if (access("/bin/bash", X_OK) != 0)
		skip();
	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++) {
		char *q = shell_quote(samples[i]);
		char *script = xasprintf("printf '%%s' %s", q);
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			dup2(fds[1], 1);
			execl("/bin/bash", "bash", "-c", script, (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		char got[256];
		size_t n = 0;
		ssize_t r;
		while ((r = read(fds[0], got + n, sizeof(got) - 1 - n)) > 0)
			n += (size_t)r;
		close(fds[0]);
		got[n] = '\0';
		int st;
		waitpid(pid, &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		if (n != strlen(samples[i]) || memcmp(got, samples[i], n) != 0)
			fail_msg("sample %zu quoted as %s came back as \"%s\"", i, q, got);
		free(script);
		free(q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_words_stay_bare),
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_bash_reads_it_back),
	};
	return cmocka_run_group_tests_name("quote", tests, NULL, NULL);
}
