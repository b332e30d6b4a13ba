/* Unit tests: --box-doctor's pure parts. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doctor.h"

static void test_subid_ranges(void **state)
{
	(void)state;
	const char *text = "alice:100000:65536\n1001:165536:65536\nbob:231072:0\nnocount\n";
	assert_true(subid_has_range(text, "alice", 1000));
	assert_true(subid_has_range(text, "carol", 1001)); /* by uid */
	assert_false(subid_has_range(text, "bob", 1002));  /* a range of no ids */
	assert_false(subid_has_range(text, "ali", 1003));  /* no prefix matches */
	assert_false(subid_has_range(text, "alice2", 1004));
	assert_false(subid_has_range("", "alice", 1000));
	assert_false(subid_has_range("alice:100000", "alice", 1000)); /* no count */
	assert_true(
	        subid_has_range("x:1:1\nalice:100000:65536", "alice", 7)); /* no final newline */
}

static void test_mountinfo_cgroup_lines(void **state)
{
	(void)state;
	/* Hybrid: v1 controllers and the v2 tree; a pure v2 machine. */
	assert_true(mountinfo_line_is_cgroup("56 54 0:31 / /sys/fs/cgroup/cpuset "
	                                     "rw,nosuid shared:8 - cgroup cgroup rw,cpuset\n"));
	assert_true(mountinfo_line_is_cgroup("75 54 0:38 / /sys/fs/cgroup rw shared:22 - cgroup2 "
	                                     "cgroup2 rw"));
	/* No optional fields at all. */
	assert_true(mountinfo_line_is_cgroup("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 none rw\n"));
	/* The tmpfs that holds them is not one; nor are look-alike types. */
	assert_false(mountinfo_line_is_cgroup("54 23 0:39 / /sys/fs/cgroup rw shared:7 - tmpfs "
	                                      "cgroup rw,mode=755\n"));
	assert_false(mountinfo_line_is_cgroup("1 0 0:1 / /x rw - cgroupfs x rw\n"));
	assert_false(mountinfo_line_is_cgroup("1 0 0:1 / /x rw - cgroup3 x rw\n"));
	assert_false(mountinfo_line_is_cgroup("1 0 0:1 / /x rw - cgrou x rw\n"));
	/* A mount point named like a type is escaped, and is not the type. */
	assert_false(
	        mountinfo_line_is_cgroup("1 0 0:1 / /a\\040-\\040cgroup rw - ext4 /dev/x rw\n"));
	/* Truncated and empty lines. */
	assert_false(mountinfo_line_is_cgroup("1 0 0:1 / /x rw -"));
	assert_false(mountinfo_line_is_cgroup("1 0 0:1 / /x rw - "));
	assert_false(mountinfo_line_is_cgroup(""));
	assert_true(mountinfo_line_is_cgroup(" - cgroup"));
}

static void test_check_print(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	check_print(f, CHECK_OK, "rootless", NULL);
	check_print(f, CHECK_WARN, "storage driver vfs", "install fuse-overlayfs");
	check_print(f, CHECK_FAIL, "/dev/net/tun", "chmod 666 /dev/net/tun");
	fclose(f);
	assert_string_equal(text, "OK    rootless\n"
	                          "WARN  storage driver vfs; install fuse-overlayfs\n"
	                          "FAIL  /dev/net/tun; chmod 666 /dev/net/tun\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subid_ranges),
		cmocka_unit_test(test_mountinfo_cgroup_lines),
		cmocka_unit_test(test_check_print),
	};
	return cmocka_run_group_tests_name("doctor", tests, NULL, NULL);
}
