/* spawn: reading a child's output when the system calls fail. read and poll
 * are wrapped (the Makefile links this test with --wrap=read,--wrap=poll)
 * so that a test can make one of them fail for real. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn.h"

extern char **environ;

/* How many more calls succeed before one fails (-1: never). */
static int reads_left = -1, polls_left = -1;

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	if (reads_left == 0) {
		reads_left = -1;
		errno = EIO;
		return -1;
	}
	if (reads_left > 0)
		reads_left--;
	return __real_read(fd, buf, n);
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (polls_left == 0) {
		polls_left = -1;
		errno = ENOMEM;
		return -1;
	}
	if (polls_left > 0)
		polls_left--;
	return __real_poll(fds, n, timeout);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* A read that fails is an error, never a quiet end of the output. */
static void test_read_error_is_not_end_of_file(void **state)
{
	(void)state;
	char *argv[] = { "/bin/sh", "-c", "echo out; echo err >&2", NULL };
	struct child c = { argv, environ, CHILD_CAPTURE };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	int before = open_fds();
	reads_left = 1; /* the exec pipe's read succeeds; the first output read fails */
	assert_int_equal(child_run(&c, &r, &err), -1);
	assert_int_equal(err.status, EXIT_BOX_INTERNAL);
	assert_non_null(strstr(err.msg, "Input/output error"));
	assert_int_equal(err.errnum, EIO);
	gb_error_clear(&err);
	assert_int_equal(open_fds(), before);
}

/* A poll that fails is an error, and leaves no pipe open. */
static void test_poll_failure_leaks_no_pipe(void **state)
{
	(void)state;
	char *argv[] = { "/bin/sh", "-c", "echo out", NULL };
	struct child c = { argv, environ, CHILD_CAPTURE };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	int before = open_fds();
	polls_left = 0;
	assert_int_equal(child_run(&c, &r, &err), -1);
	assert_non_null(strstr(err.msg, "cannot wait for podman's output"));
	assert_int_equal(err.errnum, ENOMEM);
	gb_error_clear(&err);
	assert_int_equal(open_fds(), before);
	/* and the next run is whole */
	assert_int_equal(child_run(&c, &r, &err), 0);
	assert_string_equal(r.out, "out\n");
	run_result_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_error_is_not_end_of_file),
		cmocka_unit_test(test_poll_failure_leaks_no_pipe),
	};
	return cmocka_run_group_tests_name("spawn", tests, NULL, NULL);
}
