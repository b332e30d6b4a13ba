/* Unit tests: the init's installed copy, the state directory, the liveness lock. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "boxinit.h"
#include "hash.h"
#include "strv.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/gb-boxinit-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", root, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return 0;
}

static void test_init_copy_is_content_named(void **state)
{
	(void)state;
	char *p = init_copy_path("/data");
	char *want = xasprintf("/data/gemini-box/init/%s/gemini-box-init", init_id());
	assert_string_equal(p, want);
	assert_int_equal(strlen(init_id()), 12);
	free(want);
	free(p);
}

static void test_init_install(void **state)
{
	(void)state;
	char *data = xasprintf("%s/data", root);
	char *copy = init_copy_path(data);
	struct gb_error err = GB_ERROR_INIT;

	/* A developer's init that is not the one built in: refused. */
	setenv("GEMINI_BOX_INIT", "/bin/sh", 1);
	assert_int_equal(init_install(copy, &err), -1);
	assert_non_null(strstr(err.msg, "is not the init this gemini-box was built with"));
	gb_error_clear(&err);
	assert_int_not_equal(access(copy, F_OK), 0);
	unsetenv("GEMINI_BOX_INIT");

	/* The init gemini-box carries: written by content, executable, with the
	 * id the box records. */
	assert_int_equal(init_install(copy, &err), 0);
	assert_int_equal(access(copy, X_OK), 0);
	char id[HASH_ID_HEX + 1];
	struct hash h;
	hash_begin(&h);
	hash_add(&h, init_blob, init_blob_size);
	hash_end_id(&h, id);
	assert_string_equal(id, init_id());
	FILE *f = fopen(copy, "rb");
	assert_non_null(f);
	unsigned char *back = xmalloc(init_blob_size + 1);
	assert_int_equal(fread(back, 1, init_blob_size + 1, f), init_blob_size);
	fclose(f);
	assert_memory_equal(back, init_blob, init_blob_size);
	free(back);
	/* Present: nothing to do, even with a source that would be refused. */
	setenv("GEMINI_BOX_INIT", "/nonexistent", 1);
	assert_int_equal(init_install(copy, &err), 0);
	unsetenv("GEMINI_BOX_INIT");
	free(copy);
	free(data);
}

static void test_state_dir(void **state)
{
	(void)state;
	struct gb_error err = GB_ERROR_INIT;
	char *runtime = xasprintf("%s/run", root);
	assert_int_equal(mkdir(runtime, 0700), 0);
	setenv("XDG_RUNTIME_DIR", runtime, 1);
	char *dir = NULL;
	assert_int_equal(state_dir("box-a", false, &dir, &err), 0);
	char *want = xasprintf("%s/gemini-box/box-a", runtime);
	assert_string_equal(dir, want);
	assert_int_not_equal(access(dir, F_OK), 0); /* not made unless asked */
	free(dir);
	assert_int_equal(state_dir("box-a", true, &dir, &err), 0);
	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	free(dir);

	/* A base others can write is refused. */
	char *base = xasprintf("%s/gemini-box", runtime);
	assert_int_equal(chmod(base, 0777), 0);
	assert_int_equal(state_dir("box-b", true, &dir, &err), -1);
	assert_non_null(strstr(err.msg, "is not a private directory"));
	gb_error_clear(&err);
	/* checked at every use, not only when made */
	assert_int_equal(state_dir("box-b", false, &dir, &err), -1);
	gb_error_clear(&err);
	assert_int_equal(chmod(base, 0700), 0);
	/* A record planted as a FIFO or a link is no record: no hang, no follow. */
	char *box_a = xasprintf("%s/box-a", base);
	char *record = xasprintf("%s/box", box_a);
	assert_int_equal(mkfifo(record, 0600), 0);
	char *id = NULL;
	assert_int_equal(state_lookup(box_a, "dir=/p\n", &id), STATE_UNKNOWN);
	assert_null(id);
	unlink(record);
	assert_int_equal(symlink("/etc/passwd", record), 0);
	assert_int_equal(state_lookup(box_a, "dir=/p\n", &id), STATE_UNKNOWN);
	unlink(record);
	free(record);
	free(box_a);

	/* An XDG_RUNTIME_DIR that is not private is not used. */
	assert_int_equal(chmod(runtime, 0775), 0);
	assert_int_equal(state_dir("box-c", false, &dir, &err), 0);
	char *tmp_base = xasprintf("/tmp/gemini-box-%ld/box-c", (long)geteuid());
	assert_string_equal(dir, tmp_base);
	free(tmp_base);
	free(dir);
	unsetenv("XDG_RUNTIME_DIR");
	free(base);
	free(want);
	free(runtime);
}

static void test_lookup_needs_record_and_lock(void **state)
{
	(void)state;
	struct gb_error err = GB_ERROR_INIT;
	char *st = xasprintf("%s/state", root);
	assert_int_equal(mkdir(st, 0700), 0);
	char *record = state_record("/p", "image=1,init=2", "/d/init");
	char *id = NULL;
	assert_int_equal(state_lookup(st, record, &id), STATE_UNKNOWN); /* no record */
	assert_null(id);
	assert_int_equal(state_record_write(st, record, "0123abcd", &err), 0);
	assert_int_equal(state_lookup(st, record, &id), STATE_STOPPED); /* nobody holds the lock */
	assert_string_equal(id, "0123abcd");
	free(id);

	/* flock(1) plays the box's init: it holds the lock until told to stop.
	 * (An exec'd program, so that valgrind judges no forked copy of us.) */
	char *lock = xasprintf("%s/lock", st);
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ready[1], 1);
		dup2(go[0], 0);
		execlp("flock", "flock", "-x", lock, "sh", "-c", "printf r; read x", (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(go[0]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(state_lookup(st, record, &id), STATE_RUNNING);
	assert_string_equal(id, "0123abcd");
	free(id);
	const char *others[][3] = {
		{ "/p", "image=9,init=2", "/d/init" }, /* other settings */
		{ "/q", "image=1,init=2", "/d/init" }, /* another directory */
		{ "/p", "image=1,init=2", "/e/init" }, /* another init */
		{ "/p", "image=1,init", "/d/init" },   /* a prefix of the digest */
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		char *other = state_record(others[i][0], others[i][1], others[i][2]);
		assert_int_equal(state_lookup(st, other, &id), STATE_UNKNOWN);
		assert_null(id);
		free(other);
	}
	/* A record with anything but a hex id is no record. */
	char *bad = xasprintf("%s/box", st);
	FILE *f = fopen(bad, "w");
	fprintf(f, "%sid=../../x\n", record);
	fclose(f);
	assert_int_equal(state_lookup(st, record, &id), STATE_UNKNOWN);
	free(bad);
	assert_int_equal(state_record_write(st, record, "0123abcd", &err), 0);

	assert_int_equal(write(go[1], "x\n", 2), 2);
	close(go[1]);
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(state_lookup(st, record, &id), STATE_STOPPED); /* the init is gone */
	free(id);
	free(lock);
	free(record);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_copy_is_content_named),
		cmocka_unit_test(test_init_install),
		cmocka_unit_test(test_state_dir),
		cmocka_unit_test(test_lookup_needs_record_and_lock),
	};
	return cmocka_run_group_tests_name("boxinit", tests, setup, teardown);
}
