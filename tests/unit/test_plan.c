/* Unit tests: the podman commands of each box state, without podman. */
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

#include "boxid.h"
#include "boxinit.h"
#include "plan.h"

static char *env_names[] = { "GEMINI_API_KEY", "GEMINI_CLI_IDE_SERVER_PORT", "TERM", NULL };
static char *gemini_args[] = { "-p", "hello world", "--", "", NULL };

static struct settings test_settings;

static int settings_setup(void **state)
{
	(void)state;
	settings_init(&test_settings);
	return 0;
}

static int settings_teardown(void **state)
{
	(void)state;
	settings_clear(&test_settings);
	return 0;
}

static struct box_spec spec(void)
{
	struct box_spec s = {
		.podman = "/usr/bin/podman",
		.name = "gemini-box-proj-0123456789ab",
		.dir = "/home/u/proj",
		.workdir = "/home/u/proj/sub",
		.image = "localhost/img:1",
		.version = "9.9.9",
		.gemini_home = "/home/u/.gemini",
		.settings = &test_settings,
		.settings_digest = "image=0123456789ab",
		.init = "/home/u/.local/share/gemini-box/init/abc/gemini-box-init",
		.state_dir = "/run/user/1000/gemini-box/gemini-box-proj-0123456789ab",
		.rootless = true,
		.tty = false,
		.env_names = env_names,
		.n_env = 3,
		.gemini_args = gemini_args,
		.n_args = 4,
	};
	return s;
}

static ssize_t index_of(const struct strv *a, const char *word)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], word) == 0)
			return (ssize_t)i;
	return -1;
}

static void assert_has(const struct strv *a, const char *word)
{
	if (index_of(a, word) < 0)
		fail_msg("argv lacks %s", word);
}

/* Decodes one record the way Go's encoding/csv (podman's --mount parser) does. */
static struct strv csv_record(const char *s)
{
	struct strv fields = STRV_INIT;
	char *buf = xmalloc(strlen(s) + 1);
	while (true) {
		size_t n = 0;
		if (*s == '"') {
			s++;
			while (*s) {
				if (*s == '"' && s[1] == '"') {
					buf[n++] = '"';
					s += 2;
				} else if (*s == '"') {
					s++;
					break;
				} else {
					buf[n++] = *s++;
				}
			}
		} else {
			while (*s && *s != ',')
				buf[n++] = *s++;
		}
		buf[n] = '\0';
		strv_push(&fields, buf);
		if (*s != ',')
			break;
		s++;
	}
	free(buf);
	return fields;
}

static void test_mount_arg_roundtrip(void **state)
{
	(void)state;
	const char *paths[] = {
		"/plain",     "/a,b",         "/a:b",   "/a\"b\"",           "/a'b",
		"/new\nline", "/caf\xc3\xa9", "/ lead", "/x,readonly=false", "/\","
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		char *arg = bind_mount_arg(paths[i], "/dst,x", i % 2 == 0);
		struct strv f = csv_record(arg);
		assert_int_equal(f.n, i % 2 == 0 ? 4 : 3);
		assert_string_equal(f.v[0], "type=bind");
		char *want_src = xasprintf("source=%s", paths[i]);
		assert_string_equal(f.v[1], want_src);
		assert_string_equal(f.v[2], "destination=/dst,x");
		if (i % 2 == 0)
			assert_string_equal(f.v[3], "readonly=true");
		free(want_src);
		strv_clear(&f);
		free(arg);
	}
}

static void test_create_argv(void **state)
{
	(void)state;
	struct box_spec s = spec();
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	assert_string_equal(a.v[0], "/usr/bin/podman");
	assert_string_equal(a.v[1], "run"); /* made and started in one call */
	assert_string_equal(a.v[2], "--detach");
	assert_has(&a, "--name=gemini-box-proj-0123456789ab");
	assert_has(&a, "--label=" BOX_LABEL_DIR "=/home/u/proj");
	assert_has(&a, "--label=" BOX_LABEL_VERSION "=9.9.9");
	assert_has(&a, "--label=" BOX_LABEL_IMAGE "=localhost/img:1");
	assert_has(&a, "--userns=keep-id:uid=1000,gid=1000");
	assert_has(&a, "--user=1000:1000");
	/* The main process is our init, never gemini (the image's ENTRYPOINT). */
	assert_has(&a, "--entrypoint=" BOX_INIT_PATH);
	assert_has(&a,
	           "type=bind,\"source=/home/u/.local/share/gemini-box/init/abc/gemini-box-init\","
	           "\"destination=" BOX_INIT_PATH "\",readonly=true");
	/* Of the state directory, only the lock, read-only: the record is the host's. */
	assert_has(
	        &a,
	        "type=bind,\"source=/run/user/1000/gemini-box/gemini-box-proj-0123456789ab/lock\","
	        "\"destination=" BOX_LOCK_PATH "\",readonly=true");
	for (size_t i = 0; i < a.n; i++)
		assert_null(strstr(a.v[i], "0123456789ab\",\"destination"));
	assert_has(&a, "--label=" BOX_LABEL_INIT
	               "=/home/u/.local/share/gemini-box/init/abc/gemini-box-init");
	assert_has(&a, "--label=" BOX_LABEL_STATE
	               "=/run/user/1000/gemini-box/gemini-box-proj-0123456789ab");
	assert_string_equal(a.v[a.n - 5], "localhost/img:1");
	assert_string_equal(a.v[a.n - 4], "--lock");
	assert_string_equal(a.v[a.n - 3], BOX_LOCK_PATH);
	assert_string_equal(a.v[a.n - 2], "--idle-seconds");
	assert_string_equal(a.v[a.n - 1], "1800");
	assert_has(&a, "type=bind,\"source=/home/u/proj\",\"destination=/home/u/proj\"");
	/* ~/.gemini through an overlay; only tmp/ and history/ written through. */
	assert_has(&a, "/home/u/.gemini:/home/node/.gemini:O");
	assert_has(
	        &a,
	        "type=bind,\"source=/home/u/.gemini/tmp\",\"destination=/home/node/.gemini/tmp\"");
	assert_has(&a, "type=bind,\"source=/home/u/.gemini/history\","
	               "\"destination=/home/node/.gemini/history\"");
	for (size_t i = 0; i < a.n; i++)
		assert_null(strstr(a.v[i], "\"source=/home/u/.gemini\""));
	/* Nothing of the run is frozen into the box. */
	for (size_t i = 0; i < a.n; i++) {
		assert_null(strstr(a.v[i], "--env"));
		assert_null(strstr(a.v[i], "hello"));
		assert_null(strstr(a.v[i], "GEMINI_API_KEY"));
	}
	strv_clear(&a);
}

static void test_create_argv_as_root(void **state)
{
	(void)state;
	struct box_spec s = spec();
	s.rootless = false;
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	for (size_t i = 0; i < a.n; i++) {
		assert_null(strstr(a.v[i], "--userns"));
		assert_null(strstr(a.v[i], "--user="));
	}
	strv_clear(&a);
}

static void test_create_argv_other_user(void **state)
{
	(void)state;
	struct box_spec s = spec();
	struct settings other;
	settings_init(&other);
	free(other.user.value);
	other.user.value = xstrdup("501:20");
	s.settings = &other;
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	assert_has(&a, "--userns=keep-id:uid=501,gid=20");
	assert_has(&a, "--user=501:20");
	strv_clear(&a);
	settings_clear(&other);
}

static void test_create_argv_from_settings(void **state)
{
	(void)state;
	struct settings st;
	settings_init(&st);
	free(st.network.value);
	st.network.value = xstrdup("host");
	st.runtime.value = xstrdup("runsc");
	free(st.home.value);
	st.home.value = xstrdup("/root");
	st.mounts = xmalloc(sizeof(*st.mounts));
	st.mounts[0].source = xstrdup("/data,x");
	st.mounts[0].target = xstrdup("/data");
	st.mounts[0].readonly = true;
	st.n_mounts = 1;
	struct origin o = { ORIGIN_USER, NULL };
	struct list_item port = { xstrdup("8080:80"), o },
	                 arg = { xstrdup("--cap-add=NET_RAW"), o };
	st.ports.v = xmalloc(sizeof(port));
	st.ports.v[0] = port;
	st.ports.n = 1;
	st.podman_args.v = xmalloc(sizeof(arg));
	st.podman_args.v[0] = arg;
	st.podman_args.n = 1;
	struct box_spec s = spec();
	s.settings = &st;
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	assert_has(&a, "--network=host");
	assert_has(&a, "--runtime=runsc");
	assert_has(&a, "--publish=127.0.0.1:8080:80");
	assert_has(&a, "--label=" BOX_LABEL_SETTINGS "=image=0123456789ab");
	assert_has(&a, "type=bind,\"source=/data,x\",\"destination=/data\",readonly=true");
	assert_has(&a, "/home/u/.gemini:/root/.gemini:O");
	/* podman_args come last before the image, so they can add anything. */
	assert_int_equal(index_of(&a, "--cap-add=NET_RAW"), (ssize_t)a.n - 6);
	strv_clear(&a);

	free(st.network.value);
	st.network.value = xstrdup("none");
	podman_create_argv(&s, &a);
	assert_has(&a, "--network=none");
	strv_clear(&a);
	free(st.network.value);
	st.network.value = xstrdup("isolated");
	podman_create_argv(&s, &a);
	for (size_t i = 0; i < a.n; i++)
		assert_null(strstr(a.v[i], "--network"));
	strv_clear(&a);
	settings_clear(&st);
}

/* An allowlist box: no network but loopback, the proxy's socket directory
 * read-only and nothing else of the state directory, the init relaying. */
static void test_create_argv_allowlist(void **state)
{
	(void)state;
	struct settings st;
	settings_init(&st);
	free(st.network.value);
	st.network.value = xstrdup("allowlist");
	struct box_spec s = spec();
	s.settings = &st;
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	assert_has(&a, "--network=none");
	assert_has(&a, "type=bind,\"source=/run/user/1000/gemini-box/gemini-box-proj-0123456789ab/"
	               "egress\",\"destination=/run/gemini-box/egress\",readonly=true");
	/* the init's own arguments, after the image */
	ssize_t image = index_of(&a, "localhost/img:1");
	assert_true(image > 0);
	ssize_t relay = index_of(&a, "--relay");
	assert_true(relay > image);
	assert_string_equal(a.v[relay + 1], "3128");
	assert_string_equal(a.v[relay + 2], "/run/gemini-box/egress/proxy.sock");
	for (size_t i = 0; i < a.n; i++)
		assert_null(strstr(a.v[i], "egress.log"));
	strv_clear(&a);
	/* other modes: neither the directory nor the relay */
	free(st.network.value);
	st.network.value = xstrdup("isolated");
	podman_create_argv(&s, &a);
	assert_int_equal(index_of(&a, "--relay"), -1);
	for (size_t i = 0; i < a.n; i++)
		assert_null(strstr(a.v[i], "/run/gemini-box/egress"));
	strv_clear(&a);
	settings_clear(&st);
}

static void test_runsc_box(void **state)
{
	(void)state;
	struct settings st;
	settings_init(&st);
	st.runtime.value = xstrdup("/usr/bin/runsc");
	struct box_spec s = spec();
	s.settings = &st;
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	/* Global flags come before the verb. */
	assert_string_equal(a.v[1], "--runtime-flag=ignore-cgroups");
	assert_string_equal(a.v[2], "--runtime-flag=network=host");
	assert_string_equal(a.v[3], "run");
	assert_has(&a, "--runtime=/usr/bin/runsc");
	assert_has(&a, "--user=0:0");
	assert_has(&a, "/home/u/.gemini:/root/.gemini:O");
	for (size_t i = 0; i < a.n; i++)
		assert_null(strstr(a.v[i], "keep-id"));
	strv_clear(&a);
	podman_verb_argv("podman", &st, STEP_START, "box", &a);
	assert_string_equal(a.v[1], "--runtime-flag=ignore-cgroups");
	assert_string_equal(a.v[3], "start");
	strv_clear(&a);
	assert_true(runtime_is_runsc(&st));
	free(st.runtime.value);
	st.runtime.value = xstrdup("runc");
	assert_false(runtime_is_runsc(&st));
	assert_false(runtime_is_runsc(NULL));
	settings_clear(&st);
}

static void test_ide_dir_mount(void **state)
{
	(void)state;
	struct box_spec s = spec();
	s.ide_dir = "/tmp/gemini/ide";
	struct strv a = STRV_INIT;
	podman_create_argv(&s, &a);
	assert_has(&a, "type=bind,\"source=/tmp/gemini/ide\",\"destination=/tmp/gemini/"
	               "ide\",readonly=true");
	strv_clear(&a);
}

static void test_shell_and_build_argv(void **state)
{
	(void)state;
	struct box_spec s = spec();
	struct strv a = STRV_INIT;
	podman_shell_argv(&s, true, &a);
	assert_has(&a, "--user=root");
	assert_has(&a, "--env=SANDBOX=gemini-box-proj-0123456789ab");
	assert_int_equal(index_of(&a, "gemini"), -1);
	assert_string_equal(a.v[a.n - 3], "/bin/sh");
	strv_clear(&a);
	podman_shell_argv(&s, false, &a);
	assert_int_equal(index_of(&a, "--user=root"), -1);
	strv_clear(&a);

	podman_build_argv("/usr/bin/podman", "/p/.gemini/sandbox.Dockerfile", "localhost/x:1",
	                  "base:2", &a);
	const char *want[] = { "/usr/bin/podman",
		               "build",
		               "--file=/p/.gemini/sandbox.Dockerfile",
		               "--tag=localhost/x:1",
		               "--build-arg=BASE_IMAGE=base:2",
		               "/p/.gemini" };
	assert_int_equal(a.n, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(a.v[i], want[i]);
	strv_clear(&a);
}

static void test_verb_argv(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	podman_verb_argv("podman", NULL, STEP_REMOVE, "box", &a);
	assert_int_equal(a.n, 4);
	assert_string_equal(a.v[1], "rm");
	assert_string_equal(a.v[2], "--force");
	assert_string_equal(a.v[3], "box");
	strv_clear(&a);
	podman_verb_argv("podman", NULL, STEP_STOP, "box", &a);
	assert_string_equal(a.v[1], "stop");
	strv_clear(&a);
	podman_verb_argv("podman", NULL, STEP_UNPAUSE, "box", &a);
	assert_string_equal(a.v[1], "unpause");
	strv_clear(&a);
}

static void test_exec_argv(void **state)
{
	(void)state;
	struct box_spec s = spec();
	struct strv a = STRV_INIT;
	podman_exec_argv(&s, &a);
	const char *want[] = {
		"/usr/bin/podman",
		"exec",
		"-i",
		"--detach-keys=",
		"--workdir=/home/u/proj/sub",
		"--env=SANDBOX=gemini-box-proj-0123456789ab",
		"--env=GEMINI_API_KEY",
		"--env=GEMINI_CLI_IDE_SERVER_PORT",
		"--env=TERM",
		"gemini-box-proj-0123456789ab",
		"gemini",
		"-p",
		"hello world",
		"--",
		"",
	};
	assert_int_equal(a.n, sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < a.n; i++)
		assert_string_equal(a.v[i], want[i]);
	assert_null(a.v[a.n]);
	strv_clear(&a);

	s.tty = true;
	podman_exec_argv(&s, &a);
	assert_string_equal(a.v[2], "-i");
	assert_string_equal(a.v[3], "-t");
	assert_int_equal(index_of(&a, "-t"), 3);
	strv_clear(&a);
}

static void test_exec_argv_hostile_args_stay_words(void **state)
{
	(void)state;
	char *args[] = { "$(id)", "a;b", "--box-help", "-t", "x\ny", NULL };
	struct box_spec s = spec();
	s.gemini_args = args;
	s.n_args = 5;
	s.n_env = 0;
	struct strv a = STRV_INIT;
	podman_exec_argv(&s, &a);
	ssize_t g = index_of(&a, "gemini");
	assert_true(g > 0);
	assert_int_equal(a.n, (size_t)g + 1 + 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(a.v[(size_t)g + 1 + i], args[i]);
	strv_clear(&a);
}

static void expect_kinds(enum box_state st, bool image, const enum step_kind *kinds, size_t n)
{
	struct box_spec s = spec();
	struct plan p = PLAN_INIT;
	plan_bring_up(&p, &s, st, image);
	podman_exec_argv(&s, plan_add(&p, STEP_EXEC));
	assert_int_equal(p.n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(p.steps[i].kind, kinds[i]);
	plan_clear(&p);
}

static void test_plan_per_state(void **state)
{
	(void)state;
	/* a new box is made and started by one podman run --detach */
	const enum step_kind absent_no_image[] = { STEP_PULL, STEP_CREATE, STEP_RECORD, STEP_EXEC };
	const enum step_kind absent[] = { STEP_CREATE, STEP_RECORD, STEP_EXEC };
	const enum step_kind stopped[] = { STEP_START, STEP_EXEC };
	const enum step_kind paused[] = { STEP_UNPAUSE, STEP_EXEC };
	/* made but never started (a run cut short): podman stop resets it */
	const enum step_kind stuck[] = { STEP_STOP, STEP_START, STEP_EXEC };
	const enum step_kind running[] = { STEP_EXEC };
	expect_kinds(BOX_ABSENT, false, absent_no_image, 4);
	expect_kinds(BOX_ABSENT, true, absent, 3);
	expect_kinds(BOX_STOPPED, true, stopped, 2);
	expect_kinds(BOX_STOPPED, false, stopped, 2);
	expect_kinds(BOX_PAUSED, true, paused, 2);
	expect_kinds(BOX_STUCK, true, stuck, 3);
	expect_kinds(BOX_RUNNING, true, running, 1);
}

static void test_plan_print(void **state)
{
	(void)state;
	struct box_spec s = spec();
	struct plan p = PLAN_INIT;
	plan_bring_up(&p, &s, BOX_STOPPED, true);
	podman_exec_argv(&s, plan_add(&p, STEP_EXEC));
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	plan_print(&p, f);
	fclose(f);
	assert_string_equal(
	        text, "/usr/bin/podman start gemini-box-proj-0123456789ab\n"
	              "/usr/bin/podman exec -i --detach-keys= --workdir=/home/u/proj/sub "
	              "--env=SANDBOX=gemini-box-proj-0123456789ab --env=GEMINI_API_KEY "
	              "--env=GEMINI_CLI_IDE_SERVER_PORT --env=TERM gemini-box-proj-0123456789ab "
	              "gemini -p 'hello world' -- ''\n");
	free(text);
	plan_clear(&p);
}

/* Values travel in the env file: the command line names the file, never a value. */
static void test_exec_argv_env_file(void **state)
{
	(void)state;
	struct box_spec s = spec();
	s.env_file = "/run/user/1000/gemini-box/box/env-feedface";
	struct strv a = STRV_INIT;
	podman_exec_argv(&s, &a);
	assert_has(&a, "--env-file=/run/user/1000/gemini-box/box/env-feedface");
	strv_clear(&a);
}

/* Host steps print as commands a shell runs to the same effect. */
static void test_host_steps_print(void **state)
{
	(void)state;
	struct plan p = PLAN_INIT;
	plan_add_host(&p, STEP_WRITE_ENV, "/s/env-1", "A=1\nB=two words\n");
	plan_add_host(&p, STEP_REMOVE_FILE, "/s/env-1", NULL);
	plan_add_host(&p, STEP_MKDIR, "/h/.gemini/tmp", NULL);
	plan_add_host(&p, STEP_WRITE_ALLOW, "/s/egress.allow", "a.example:443\n*.b.example\n");
	plan_add_host(&p, STEP_PROXY, "/s", "/usr/bin/gemini-box");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	plan_print(&p, f);
	fclose(f);
	assert_string_equal(
	        buf, "sh -c 'f=$1; shift; umask 077 && printf '\\''%s\\n'\\'' \"$@\" >\"$f\"' "
	             "env-file /s/env-1 A=1 'B=two words'\n"
	             "rm -f /s/env-1\n"
	             "mkdir -p -m 0700 /h/.gemini/tmp\n"
	             "sh -c 'f=$1; shift; umask 077 && printf '\\''%s\\n'\\'' \"$@\" >\"$f.new\" "
	             "&& mv -f "
	             "\"$f.new\" \"$f\"' egress-allow /s/egress.allow a.example:443 '*.b.example'\n"
	             "/usr/bin/gemini-box --box-egress-proxy /s\n");
	free(buf);
	plan_clear(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_arg_roundtrip),
		cmocka_unit_test(test_create_argv),
		cmocka_unit_test(test_create_argv_as_root),
		cmocka_unit_test(test_create_argv_other_user),
		cmocka_unit_test(test_create_argv_from_settings),
		cmocka_unit_test(test_create_argv_allowlist),
		cmocka_unit_test(test_runsc_box),
		cmocka_unit_test(test_ide_dir_mount),
		cmocka_unit_test(test_shell_and_build_argv),
		cmocka_unit_test(test_verb_argv),
		cmocka_unit_test(test_exec_argv),
		cmocka_unit_test(test_exec_argv_env_file),
		cmocka_unit_test(test_host_steps_print),
		cmocka_unit_test(test_exec_argv_hostile_args_stay_words),
		cmocka_unit_test(test_plan_per_state),
		cmocka_unit_test(test_plan_print),
	};
	return cmocka_run_group_tests_name("plan", tests, settings_setup, settings_teardown);
}
