/* Unit tests: settings files, their validation, merging, trust and drift. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "settings.h"

/* A home with ~/data and ~/.ssh, and a project with sub/ inside it. */
static char root[64];
static char *home, *project;

static void mkdir_at(const char *path)
{
	assert_int_equal(mkdir(path, 0755), 0);
}

static int fixture_setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/gb-settings-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	char *real = realpath(root, NULL);
	snprintf(root, sizeof(root), "%s", real);
	free(real);
	home = xasprintf("%s/home", root);
	project = xasprintf("%s/home/proj", root);
	char *paths[] = { home,
		          project,
		          xasprintf("%s/sub", project),
		          xasprintf("%s/data", home),
		          xasprintf("%s/.ssh", home),
		          xasprintf("%s/Containerfile", project) };
	for (size_t i = 0; i < 5; i++)
		mkdir_at(paths[i]);
	FILE *f = fopen(paths[5], "w");
	fputs("FROM x\n", f);
	fclose(f);
	for (size_t i = 2; i < 6; i++)
		free(paths[i]);
	return 0;
}

static int fixture_teardown(void **state)
{
	(void)state;
	char *cmd[] = { "rm", "-rf", root, NULL };
	pid_t pid = fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	free(home);
	free(project);
	return 0;
}

static int merge(struct settings *s, const char *json, enum origin_kind kind, bool trusted,
                 struct gb_error *err)
{
	struct settings_source src = {
		.file = kind == ORIGIN_USER ? "/u/config.json" : "/p/.gemini/gemini-box.json",
		.kind = kind,
		.home = home,
		.box_dir = project,
		.trusted = trusted,
	};
	return settings_merge_json(s, json, &src, err);
}

static void test_defaults(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	assert_string_equal(s.image.value, DEFAULT_IMAGE);
	assert_string_equal(s.user.value, "1000:1000");
	assert_string_equal(s.home.value, "/home/node");
	assert_string_equal(s.network.value, "isolated");
	assert_null(s.runtime.value);
	assert_null(s.containerfile.value);
	assert_int_equal(s.image.origin.kind, ORIGIN_DEFAULT);
	assert_int_equal(settings_idle_seconds(&s), 30 * 60);
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(merge(&s, "{\"idle_stop_minutes\": 0.05}", ORIGIN_PROJECT, false, &err),
	                 0);
	assert_int_equal(settings_idle_seconds(&s), 3);
	assert_int_equal(merge(&s, "{\"idle_stop_minutes\": 0}", ORIGIN_USER, false, &err), 0);
	assert_int_equal(settings_idle_seconds(&s), 0);
	settings_clear(&s);
}

static void test_full_user_file(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	const char *json =
	        "{\n"
	        "  \"image\": \"localhost/mine:2\",\n"
	        "  \"user\": \"501:20\",\n"
	        "  \"home\": \"/home/me\",\n"
	        "  \"mounts\": [{\"source\": \"~/data\", \"target\": \"/data\", \"readonly\": "
	        "true},\n"
	        "             {\"source\": \"~/.ssh\", \"target\": \"/home/me/.ssh\"}],\n"
	        "  \"env\": {\"EDITOR\": \"vi\", \"GEMINI_MODEL\": \"m\"},\n"
	        "  \"forward_env\": [\"SSH_AUTH_SOCK\"],\n"
	        "  \"ports\": [\"8080:8080\", \"3000:80\"],\n"
	        "  \"network\": \"host\",\n"
	        "  \"runtime\": \"runsc\",\n"
	        "  \"podman_args\": [\"--cap-add=NET_RAW\"],\n"
	        "  \"trusted_projects\": [\"~/proj\", \"/not/yet\"]\n"
	        "}\n";
	assert_int_equal(merge(&s, json, ORIGIN_USER, false, &err), 0);
	assert_string_equal(s.image.value, "localhost/mine:2");
	assert_int_equal(s.image.origin.kind, ORIGIN_USER);
	assert_string_equal(s.image.origin.detail, "/u/config.json");
	assert_string_equal(s.user.value, "501:20");
	assert_string_equal(s.home.value, "/home/me");
	assert_int_equal(s.n_mounts, 2);
	char *data = xasprintf("%s/data", home);
	assert_string_equal(s.mounts[0].source, data);
	free(data);
	assert_string_equal(s.mounts[0].target, "/data");
	assert_true(s.mounts[0].readonly);
	assert_false(s.mounts[1].readonly);
	assert_int_equal(s.n_env, 2);
	assert_string_equal(s.env[0].name, "EDITOR");
	assert_string_equal(s.env[0].value, "vi");
	assert_int_equal(s.forward_env.n, 1);
	assert_int_equal(s.ports.n, 2);
	assert_string_equal(s.ports.v[1].value, "3000:80");
	assert_string_equal(s.network.value, "host");
	assert_string_equal(s.runtime.value, "runsc");
	assert_int_equal(s.podman_args.n, 1);
	assert_true(settings_trusts(&s, project));
	assert_true(settings_trusts(&s, "/not/yet"));
	assert_false(settings_trusts(&s, home));
	settings_clear(&s);
}

static void test_precedence(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(merge(&s,
	                       "{\"image\": \"user:1\", \"env\": {\"A\": \"u\", \"B\": \"u\"},"
	                       "\"ports\": [\"1:1\"], \"network\": \"none\"}",
	                       ORIGIN_USER, false, &err),
	                 0);
	/* an approved project (its image is privileged) */
	assert_int_equal(merge(&s,
	                       "{\"image\": \"project:1\", \"env\": {\"B\": \"p\"},"
	                       "\"ports\": [\"2:2\"]}",
	                       ORIGIN_PROJECT, true, &err),
	                 0);
	assert_string_equal(s.image.value, "project:1");
	assert_int_equal(s.image.origin.kind, ORIGIN_PROJECT);
	assert_string_equal(s.network.value, "none"); /* the project did not say */
	assert_int_equal(s.n_env, 2);
	assert_string_equal(s.env[0].value, "u");
	assert_string_equal(s.env[1].value, "p");
	assert_int_equal(s.env[1].origin.kind, ORIGIN_PROJECT);
	assert_int_equal(s.ports.n, 2); /* lists add up */

	char *envp[] = { "GEMINI_IMAGE=env:1", "GEMINI_BOX_NETWORK=isolated",
		         "GEMINI_BOX_RUNTIME=", NULL };
	assert_int_equal(settings_merge_env(&s, envp, &err), 0);
	assert_string_equal(s.image.value, "env:1");
	assert_int_equal(s.image.origin.kind, ORIGIN_ENV);
	assert_string_equal(s.image.origin.detail, "GEMINI_IMAGE");
	assert_string_equal(s.network.value, "isolated");
	assert_null(s.runtime.value); /* empty means unset */

	char *envp2[] = { "GEMINI_IMAGE=env:1", "GEMINI_BOX_IMAGE=box:1", NULL };
	assert_int_equal(settings_merge_env(&s, envp2, &err), 0);
	assert_string_equal(s.image.value, "box:1");

	settings_set_option(&s.image, "opt:1", "--box-image");
	assert_string_equal(s.image.value, "opt:1");
	assert_int_equal(s.image.origin.kind, ORIGIN_OPTION);
	settings_clear(&s);
}

struct bad_case {
	const char *json;
	enum origin_kind kind;
	const char *message; /* a fragment the error must hold */
};

static void test_errors(void **state)
{
	(void)state;
	const struct bad_case cases[] = {
		{ "{\"image\": 1}", ORIGIN_USER, ": image: must be a string, not a number" },
		{ "{\"image\": \"\"}", ORIGIN_USER, "image: must not be empty" },
		{ "{\"image\": \"a b\"}", ORIGIN_USER, "image: must be an image name" },
		{ "{\"image\": \"a\\nb\"}", ORIGIN_USER, "image: must be an image name" },
		{ "{\"user\": \"1000\"}", ORIGIN_USER, "user: must be \"uid:gid\"" },
		{ "{\"user\": \"a:b\"}", ORIGIN_USER, "user: must be" },
		{ "{\"user\": \"1:2:3\"}", ORIGIN_USER, "user: must be" },
		{ "{\"user\": \"4294967295:0\"}", ORIGIN_USER, "user: must be" },
		{ "{\"user\": \":1\"}", ORIGIN_USER, "user: must be" },
		{ "{\"home\": \"relative\"}", ORIGIN_USER, "home: must be an absolute path" },
		{ "{\"home\": null}", ORIGIN_USER, "home: must be a string, not null" },
		{ "{\"network\": \"bridge\"}", ORIGIN_USER, "network: must be \"isolated\"" },
		{ "{\"runtime\": \"\"}", ORIGIN_USER, "runtime: must name an OCI runtime" },
		{ "{\"mounts\": {}}", ORIGIN_USER, "mounts: must be an array, not an object" },
		{ "{\"mounts\": [1]}", ORIGIN_USER, "mounts[0]: must be an object" },
		{ "{\"mounts\": [{\"target\": \"/x\"}]}", ORIGIN_USER,
		  "mounts[0].source: missing" },
		{ "{\"mounts\": [{\"source\": \"~/data\"}]}", ORIGIN_USER,
		  "mounts[0].target: missing" },
		{ "{\"mounts\": [{\"source\": \"~/data\", \"target\": \"x\"}]}", ORIGIN_USER,
		  "mounts[0].target: must be an absolute path" },
		{ "{\"mounts\": [{\"source\": \"~/data\", \"target\": \"/x\", \"readonly\": "
		  "\"yes\"}]}",
		  ORIGIN_USER, "mounts[0].readonly: must be true or false, not a string" },
		{ "{\"mounts\": [{\"source\": \"~/data\", \"target\": \"/x\", \"mode\": 1}]}",
		  ORIGIN_USER, "mounts[0].mode: unknown key" },
		{ "{\"mounts\": [{\"source\": \"~/data\", \"target\": \"/x\"},"
		  " {\"source\": \"~/nothing\", \"target\": \"/y\"}]}",
		  ORIGIN_USER, "mounts[1].source: " },
		{ "{\"mounts\": [{\"source\": \"rel\", \"target\": \"/y\"}]}", ORIGIN_USER,
		  "mounts[0].source: must be an absolute path or start with ~/" },
		{ "{\"env\": []}", ORIGIN_USER, "env: must be an object" },
		{ "{\"env\": {\"A-B\": \"x\"}}", ORIGIN_USER, "env.A-B: not a variable name" },
		{ "{\"env\": {\"A\": 1}}", ORIGIN_USER, "env.A: must be a string, not a number" },
		{ "{\"env\": {\"SANDBOX\": \"x\"}}", ORIGIN_USER,
		  "env.SANDBOX: is set by gemini-box" },
		{ "{\"forward_env\": [\"A=B\"]}", ORIGIN_USER,
		  "forward_env[0]: not a variable name" },
		{ "{\"forward_env\": \"A\"}", ORIGIN_USER,
		  "forward_env: must be an array of strings" },
		{ "{\"ports\": [\"80\"]}", ORIGIN_USER, "ports[0]: must be \"HOST:BOX\"" },
		{ "{\"ports\": [\"0:80\"]}", ORIGIN_USER, "ports[0]: must be" },
		{ "{\"ports\": [\"80:65536\"]}", ORIGIN_USER, "ports[0]: must be" },
		{ "{\"ports\": [\"80:80\", 81]}", ORIGIN_USER,
		  "ports[1]: must be a string, not a number" },
		{ "{\"podman_args\": [\"\"]}", ORIGIN_USER, "podman_args[0]: must not be empty" },
		{ "{\"containerfile\": \"~/missing\"}", ORIGIN_USER, "containerfile: " },
		{ "{\"trusted_projects\": [\"rel\"]}", ORIGIN_USER,
		  "trusted_projects[0]: must be an absolute" },
		{ "{\"colour\": \"blue\"}", ORIGIN_USER, "colour: unknown key" },
		{ "{\"idle_stop_minutes\": \"30\"}", ORIGIN_USER,
		  "idle_stop_minutes: must be a number of minutes, not a string" },
		{ "{\"idle_stop_minutes\": -1}", ORIGIN_USER, "idle_stop_minutes: must be from 0" },
		{ "{\"ide\": 1}", ORIGIN_USER, "ide: must be true or false, not a number" },
		{ "{\"idle_stop_minutes\": 1e9}", ORIGIN_USER,
		  "idle_stop_minutes: must be from 0" },
		{ "[]", ORIGIN_USER, "(top level): must be a JSON object" },
		{ "\"x\"", ORIGIN_USER, "(top level): must be a JSON object" },
		/* syntax errors: line and column */
		/* cJSON points just past the token it gave up on */
		{ "{\n  \"image\": \"x\",\n}", ORIGIN_USER, "/u/config.json:3:2: not valid JSON" },
		{ "{\"image\": \"x\"} trailing", ORIGIN_USER, ":1:16: not valid JSON" },
		{ "", ORIGIN_USER, ":1:1: not valid JSON" },
		{ "{\n\n   x", ORIGIN_USER, ":3:5: not valid JSON" },
		{ "{\"a\" 1}", ORIGIN_USER, ":1:6: not valid JSON" },
		{ "{\"network\": \"allow\"}", ORIGIN_USER,
		  "network: must be \"isolated\", \"host\", \"allowlist\" or \"none\"" },
		{ "{\"egress\": [\"http://x.example\"]}", ORIGIN_USER,
		  "egress[0]: must be a host name, \"*.domain\" or an IP address" },
		{ "{\"egress\": [\"ok.example\", \"*\"]}", ORIGIN_USER,
		  "egress[1]: must be a host" },
		{ "{\"egress\": \"x.example\"}", ORIGIN_USER, "egress: must be an array" },
		{ "{\"egress\": [\"x.example:0\"]}", ORIGIN_USER, "egress[0]: must be a host" },
		/* what a cloned repository may not do */
		{ "{\"egress\": [\"evil.example\"]}", ORIGIN_PROJECT,
		  "egress: a project file may not add hosts a box may reach without your "
		  "approval" },
		{ "{\"podman_args\": [\"--privileged\"]}", ORIGIN_PROJECT,
		  "podman_args: a project file may not add podman arguments" },
		{ "{\"runtime\": \"/tmp/evil\"}", ORIGIN_PROJECT,
		  "runtime: a project file may not" },
		{ "{\"network\": \"host\"}", ORIGIN_PROJECT,
		  "network: a project file may not share" },
		{ "{\"forward_env\": [\"AWS_SECRET_ACCESS_KEY\"]}", ORIGIN_PROJECT,
		  "forward_env: a project file may not" },
		{ "{\"mounts\": [{\"source\": \"~/.ssh\", \"target\": \"/s\"}]}", ORIGIN_PROJECT,
		  "mounts[0].source: a project file may not mount a path outside the project" },
		{ "{\"mounts\": [{\"source\": \"..\", \"target\": \"/s\"}]}", ORIGIN_PROJECT,
		  "mounts[0].source: a project file may not mount" },
		{ "{\"mounts\": [{\"source\": \"/\", \"target\": \"/s\"}]}", ORIGIN_PROJECT,
		  "a project file may not mount" },
		{ "{\"env\": {\"GOOGLE_GEMINI_BASE_URL\": \"https://evil\"}}", ORIGIN_PROJECT,
		  "env.GOOGLE_GEMINI_BASE_URL: a project file may not set a variable" },
		{ "{\"containerfile\": \"~/data\"}", ORIGIN_PROJECT,
		  "containerfile: a project file may not build the image (the program that gets "
		  "your keys) without your approval" },
		{ "{\"containerfile\": \"Containerfile\"}", ORIGIN_PROJECT,
		  "gemini-box --box-trust" },
		{ "{\"image\": \"evil/gemini:1\"}", ORIGIN_PROJECT,
		  "image: a project file may not choose the image (the program that gets your "
		  "keys) without your approval" },
		{ "{\"image\": \"--privileged\"}", ORIGIN_USER, "image: must not start with '-'" },
		{ "{\"env\": {\"A\": \"two\\nlines\"}}", ORIGIN_USER,
		  "env.A: holds a line break, which podman's env file cannot carry" },
		{ "{\"env\": {\"A\": \"cr\\r\"}}", ORIGIN_USER, "env.A: holds a line break" },
		{ "{\"protected_paths\": [\"/etc\"]}", ORIGIN_USER,
		  "protected_paths[0]: must be a path inside the project" },
		{ "{\"protected_paths\": [\"a/../../x\"]}", ORIGIN_USER,
		  "protected_paths[0]: must stay inside the project" },
		{ "{\"protected_paths\": [\"..\"]}", ORIGIN_USER, "must stay inside the project" },
		/* a key holding an escape sequence is quoted, never sent to the terminal */
		{ "{\"\\u001b]0;pwned\\u0007\": 1}", ORIGIN_USER,
		  "$'\\x1b]0;pwned\\x07': unknown key" },
		{ "{\"trusted_projects\": [\"/\"]}", ORIGIN_PROJECT,
		  "trusted_projects: only your own config.json can trust a project" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct settings s;
		settings_init(&s);
		struct gb_error err = GB_ERROR_INIT;
		int rc = merge(&s, cases[i].json, cases[i].kind, false, &err);
		if (rc != -1)
			fail_msg("case %zu (%s) was accepted", i, cases[i].json);
		assert_int_equal(err.status, EXIT_BOX_CONFIG);
		if (!strstr(err.msg, cases[i].message))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].message);
		assert_null(strchr(err.msg, '\n'));
		gb_error_clear(&err);
		settings_clear(&s);
	}
}

static void test_project_may(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	const char *json = "{\"env\": {\"NODE_ENV\": \"dev\"},"
	                   "\"ports\": [\"5173:5173\"], \"network\": \"none\", \"user\": \"0:0\","
	                   "\"mounts\": [{\"source\": \"sub\", \"target\": \"/work/sub\"}],"
	                   "\"protected_paths\": [\".envrc\"]}";
	assert_int_equal(merge(&s, json, ORIGIN_PROJECT, false, &err), 0);
	char *sub = xasprintf("%s/sub", project);
	assert_string_equal(s.mounts[0].source, sub);
	free(sub);
	assert_string_equal(s.protected_paths.v[0].value, ".envrc");
	/* image and containerfile once the user approved the project */
	json = "{\"image\": \"repo/img:1\", \"containerfile\": \"Containerfile\"}";
	assert_int_equal(merge(&s, json, ORIGIN_PROJECT, true, &err), 0);
	assert_string_equal(s.image.value, "repo/img:1");
	char *cf = xasprintf("%s/Containerfile", project);
	assert_string_equal(s.containerfile.value, cf);
	free(cf);
	settings_clear(&s);
	/* narrowing the network needs no approval; its hosts, once approved,
	 * add to the user's */
	settings_init(&s);
	assert_int_equal(merge(&s, "{\"egress\": [\"mine.example\"]}", ORIGIN_USER, false, &err),
	                 0);
	assert_int_equal(merge(&s, "{\"network\": \"allowlist\"}", ORIGIN_PROJECT, false, &err), 0);
	assert_string_equal(s.network.value, "allowlist");
	/* and back: the user's allowlist is not the project's to lift */
	assert_int_equal(merge(&s, "{\"network\": \"none\"}", ORIGIN_PROJECT, false, &err), 0);
	assert_int_equal(merge(&s, "{\"network\": \"allowlist\"}", ORIGIN_PROJECT, false, &err),
	                 -1);
	assert_non_null(strstr(err.msg, "network: a project file may not widen the box's network "
	                                "from \"none\" to \"allowlist\" without your approval"));
	gb_error_clear(&err);
	settings_clear(&s);
	settings_init(&s);
	assert_int_equal(merge(&s, "{\"network\": \"allowlist\", \"egress\": [\"mine.example\"]}",
	                       ORIGIN_USER, false, &err),
	                 0);
	assert_int_equal(merge(&s, "{\"network\": \"isolated\"}", ORIGIN_PROJECT, false, &err), -1);
	assert_non_null(strstr(err.msg, "from \"allowlist\" to \"isolated\""));
	gb_error_clear(&err);
	assert_int_equal(merge(&s, "{\"network\": \"isolated\"}", ORIGIN_PROJECT, true, &err), 0);
	assert_int_equal(
	        merge(&s, "{\"egress\": [\"*.theirs.example:443\"]}", ORIGIN_PROJECT, true, &err),
	        0);
	assert_int_equal(s.egress.n, 2);
	assert_string_equal(s.egress.v[0].value, "mine.example");
	assert_string_equal(s.egress.v[1].value, "*.theirs.example:443");
	settings_clear(&s);
}

static void test_trusted_project_may_more(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	const char *json = "{\"podman_args\": [\"--cap-add=SYS_PTRACE\"], \"network\": \"host\","
	                   "\"mounts\": [{\"source\": \"~/data\", \"target\": \"/data\"}],"
	                   "\"env\": {\"GEMINI_MODEL\": \"x\"}, \"forward_env\": [\"X\"]}";
	assert_int_equal(merge(&s, json, ORIGIN_PROJECT, true, &err), 0);
	assert_int_equal(s.podman_args.n, 1);
	assert_string_equal(s.network.value, "host");
	/* but trusting projects stays the user's own */
	assert_int_equal(merge(&s, "{\"trusted_projects\": []}", ORIGIN_PROJECT, true, &err), -1);
	gb_error_clear(&err);
	settings_clear(&s);
}

static void test_env_errors(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	const char *bad[][2] = {
		{ "GEMINI_IMAGE=a b", "GEMINI_IMAGE must be an image name" },
		{ "GEMINI_BOX_USER=root", "GEMINI_BOX_USER must be \"uid:gid\"" },
		{ "GEMINI_BOX_HOME=home", "GEMINI_BOX_HOME must be an absolute path" },
		{ "GEMINI_BOX_NETWORK=bridge", "GEMINI_BOX_NETWORK must be" },
		{ "GEMINI_BOX_RUNTIME=a b", "GEMINI_BOX_RUNTIME must name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *envp[] = { (char *)(uintptr_t)bad[i][0], NULL };
		assert_int_equal(settings_merge_env(&s, envp, &err), -1);
		assert_int_equal(err.status, EXIT_BOX_CONFIG);
		if (!strstr(err.msg, bad[i][1]))
			fail_msg("\"%s\" lacks \"%s\"", err.msg, bad[i][1]);
		gb_error_clear(&err);
	}
	settings_clear(&s);
}

static void test_digest_and_drift(void **state)
{
	(void)state;
	struct settings a, b;
	settings_init(&a);
	settings_init(&b);
	char *da = settings_creation_digest(&a, "init-a", false);
	char *db = settings_creation_digest(&b, "init-a", false);
	assert_string_equal(da, db);
	assert_non_null(strstr(da, "image="));
	assert_non_null(strstr(da, "mounts="));
	assert_true(strlen(da) < 300); /* fits a label comfortably */
	struct strv changed = STRV_INIT;
	settings_digest_diff(da, db, &changed);
	assert_int_equal(changed.n, 0);

	struct gb_error err = GB_ERROR_INIT;
	/* env is applied at every run: it never drifts the box */
	assert_int_equal(merge(&b, "{\"env\": {\"A\": \"1\"}, \"forward_env\": [\"B\"]}",
	                       ORIGIN_USER, false, &err),
	                 0);
	free(db);
	db = settings_creation_digest(&b, "init-a", false);
	assert_string_equal(da, db);

	assert_int_equal(merge(&b,
	                       "{\"image\": \"other:1\", \"ports\": [\"1:2\"],"
	                       "\"mounts\": [{\"source\": \"~/data\", \"target\": \"/d\"}]}",
	                       ORIGIN_USER, false, &err),
	                 0);
	free(db);
	db = settings_creation_digest(&b, "init-a", false);
	settings_digest_diff(da, db, &changed);
	assert_int_equal(changed.n, 3);
	assert_string_equal(changed.v[0], "image");
	assert_string_equal(changed.v[1], "mounts");
	assert_string_equal(changed.v[2], "ports");
	strv_clear(&changed);

	/* A box without the label (older gemini-box) differs in every key. */
	settings_digest_diff(NULL, db, &changed);
	assert_int_equal(changed.n, 12);
	strv_clear(&changed);
	/* Another init is drift too, and so is another idle time. */
	char *other_init = settings_creation_digest(&b, "init-b", false);
	settings_digest_diff(db, other_init, &changed);
	assert_int_equal(changed.n, 1);
	assert_string_equal(changed.v[0], "init");
	strv_clear(&changed);
	free(other_init);
	b.idle_stop_minutes.value = 0;
	other_init = settings_creation_digest(&b, "init-a", false);
	settings_digest_diff(db, other_init, &changed);
	assert_int_equal(changed.n, 1);
	assert_string_equal(changed.v[0], "idle_stop_minutes");
	strv_clear(&changed);
	free(other_init);
	b.idle_stop_minutes.value = DEFAULT_IDLE_STOP_MINUTES;
	/* "ide" shapes only a box that shares the port files (host network). */
	b.ide.value = 0;
	other_init = settings_creation_digest(&b, "init-a", false);
	settings_digest_diff(db, other_init, &changed);
	assert_int_equal(changed.n, 0);
	free(other_init);
	free(b.network.value);
	b.network.value = xstrdup("host");
	char *host_no_ide = settings_creation_digest(&b, "init-a", false);
	b.ide.value = 1;
	char *host_ide = settings_creation_digest(&b, "init-a", true);
	settings_digest_diff(host_no_ide, host_ide, &changed);
	assert_int_equal(changed.n, 1);
	assert_string_equal(changed.v[0], "ide");
	strv_clear(&changed);
	free(host_no_ide);
	free(host_ide);
	free(b.network.value);
	b.network.value = xstrdup("isolated");
	/* A read-only flag alone is drift. */
	struct settings c;
	settings_init(&c);
	assert_int_equal(merge(&c,
	                       "{\"image\": \"other:1\", \"ports\": [\"1:2\"],"
	                       "\"mounts\": [{\"source\": \"~/data\", \"target\": \"/d\", "
	                       "\"readonly\": true}]}",
	                       ORIGIN_USER, false, &err),
	                 0);
	char *dc = settings_creation_digest(&c, "init-a", false);
	settings_digest_diff(db, dc, &changed);
	assert_int_equal(changed.n, 1);
	assert_string_equal(changed.v[0], "mounts");
	strv_clear(&changed);
	free(dc);
	settings_clear(&c);
	free(da);
	free(db);
	settings_clear(&a);
	settings_clear(&b);
}

/* The words of every refusal a project file gets without the user's approval. */
static void test_refusals(void **state)
{
	(void)state;
	const char *cases[][3] = {
		{ "{\"image\": 1}", "image", "choose the image (the program that gets your keys)" },
		{ "{\"containerfile\": \"Containerfile\"}", "containerfile",
		  "build the image (the program that gets your keys)" },
		{ "{\"network\": \"host\"}", "network", "share the host's network" },
		{ "{\"runtime\": \"runc\"}", "runtime", "choose the container runtime" },
		{ "{\"mounts\": [{\"source\": \"~/data\", \"target\": \"/d\"}]}",
		  "mounts[0].source", "mount a path outside the project" },
		{ "{\"env\": {\"GEMINI_API_KEY\": \"k\"}}", "env.GEMINI_API_KEY",
		  "set a variable that gemini-box carries from your environment" },
		{ "{\"forward_env\": []}", "forward_env", "carry variables of yours into the box" },
		{ "{\"podman_args\": []}", "podman_args", "add podman arguments" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		for (int changed = 0; changed < 2; changed++) {
			struct settings s;
			settings_init(&s);
			struct settings_source src = {
				.file = "/p/.gemini/gemini-box.json",
				.kind = ORIGIN_PROJECT,
				.home = home,
				.box_dir = project,
				.approval_change = changed ? "the settings file" : NULL,
			};
			struct gb_error err = GB_ERROR_INIT;
			assert_int_equal(settings_merge_json(&s, cases[i][0], &src, &err), -1);
			char *want =
			        changed ? xasprintf("/p/.gemini/gemini-box.json: %s: a project "
			                            "file may "
			                            "not %s without your approval, and the "
			                            "settings file "
			                            "changed since you approved it; review the "
			                            "change "
			                            "with gemini-box --box-trust",
			                            cases[i][1], cases[i][2])
			                : xasprintf(
			                          "/p/.gemini/gemini-box.json: %s: a project file "
			                          "may "
			                          "not %s without your approval (any cloned "
			                          "repository "
			                          "could); review and approve it with gemini-box "
			                          "--box-trust, or put it in your own config.json",
			                          cases[i][1], cases[i][2]);
			assert_string_equal(err.msg, want);
			free(want);
			gb_error_clear(&err);
			settings_clear(&s);
		}
	}
	/* "host" alone needs approval; trusting a project is the user's own file's alone */
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(merge(&s, "{\"network\": \"none\"}", ORIGIN_PROJECT, false, &err), 0);
	assert_int_equal(merge(&s, "{\"trusted_projects\": []}", ORIGIN_PROJECT, true, &err), -1);
	assert_string_equal(err.msg, "/p/.gemini/gemini-box.json: trusted_projects: only your own "
	                             "config.json can trust a project");
	gb_error_clear(&err);
	settings_clear(&s);
}

static void test_print_and_json(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(merge(&s, "{\"image\": \"x:1\", \"env\": {\"A\": \"tab\\tstop\"}}",
	                       ORIGIN_USER, false, &err),
	                 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	settings_print(&s, f);
	fclose(f);
	assert_non_null(strstr(text, "image            = x:1  (user file /u/config.json)\n"));
	assert_non_null(strstr(text, "user             = 1000:1000  (default)\n"));
	assert_non_null(strstr(text, "env.A            = $'tab\\tstop'  (user file"));
	free(text);
	char *json = settings_to_json(&s);
	assert_non_null(strstr(json, "\"image\":"));
	assert_non_null(strstr(json, "\"kind\":\t\"user file\""));
	assert_non_null(strstr(json, "tab\\tstop"));
	free(json);
	settings_clear(&s);
}

static void test_hostile_values(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	/* Deep nesting and huge strings are refused or taken, never a crash. */
	char *deep = xmalloc(20002);
	memset(deep, '[', 10000);
	memset(deep + 10000, ']', 10000);
	deep[20000] = '\0';
	assert_int_equal(merge(&s, deep, ORIGIN_USER, false, &err), -1);
	gb_error_clear(&err);
	free(deep);
	char *big = xmalloc(1 << 20);
	strcpy(big, "{\"env\": {\"BIG\": \"");
	size_t n = strlen(big);
	memset(big + n, 'v', (1 << 20) - n - 10);
	strcpy(big + (1 << 20) - 10, "\"}}");
	/* podman reads an env file line of 64 KiB at most: refused when read, not when run. */
	assert_int_equal(merge(&s, big, ORIGIN_USER, false, &err), -1);
	assert_non_null(strstr(err.msg, "env.BIG: longer than 64 KiB"));
	gb_error_clear(&err);
	/* 60 KiB fits. */
	strcpy(big + n + 60 * 1024, "\"}}");
	assert_int_equal(merge(&s, big, ORIGIN_USER, false, &err), 0);
	assert_int_equal(strlen(s.env[0].value), 60 * 1024);
	free(big);
	assert_int_equal(merge(&s, "{\"image\": \"\\u00e9\"}", ORIGIN_USER, false, &err), 0);
	assert_string_equal(s.image.value, "\xc3\xa9");
	assert_int_equal(merge(&s, "{\"image\": \"\\ud800\"}", ORIGIN_USER, false, &err), -1);
	gb_error_clear(&err);
	assert_int_equal(merge(&s, "{\"\\u0000\": 1}", ORIGIN_USER, false, &err), -1);
	gb_error_clear(&err);
	settings_clear(&s);
}

/* A path under the fixture's temporary root, as "/ROOT/...", so that output
 * naming it is the same in every run. */
static void unroot(char **path)
{
	size_t n = strlen(root);
	if (strncmp(*path, root, n) != 0)
		return;
	char *fixed = xasprintf("/ROOT%s", *path + n);
	free(*path);
	*path = fixed;
}

/* Settings with every key set, from every kind of origin. */
static void every_key(struct settings *s)
{
	settings_init(s);
	struct gb_error err = GB_ERROR_INIT;
	const char *json =
	        "{\"image\": \"localhost/mine:2\", \"containerfile\": \"~/proj/Containerfile\","
	        " \"user\": \"501:20\", \"home\": \"/home/me\", \"network\": \"host\","
	        " \"runtime\": \"runsc\", \"idle_stop_minutes\": 2.5, \"ide\": false,"
	        " \"mounts\": [{\"source\": \"~/data\", \"target\": \"/data\", \"readonly\": true},"
	        "              {\"source\": \"~/.ssh\", \"target\": \"/s t\"}],"
	        " \"env\": {\"EDITOR\": \"vi\", \"B\": \"x y\"}, \"forward_env\": "
	        "[\"SSH_AUTH_SOCK\"],"
	        " \"ports\": [\"8080:8080\", \"3000:80\"], \"podman_args\": "
	        "[\"--cap-add=NET_RAW\"],"
	        " \"protected_paths\": [\".envrc\", \"a b\"],"
	        " \"trusted_projects\": [\"/not/yet\", \"/also/not\"]}";
	assert_int_equal(merge(s, json, ORIGIN_USER, false, &err), 0);
	assert_int_equal(merge(s, "{\"ports\": [\"1:2\"], \"env\": {\"EDITOR\": \"ed\"}}",
	                       ORIGIN_PROJECT, false, &err),
	                 0);
	char *envp[] = { "GEMINI_BOX_USER=7:7", NULL };
	assert_int_equal(settings_merge_env(s, envp, &err), 0);
	settings_set_option(&s->image, "opt:1", "--box-image");
	unroot(&s->containerfile.value);
	for (size_t i = 0; i < s->n_mounts; i++)
		unroot(&s->mounts[i].source);
}

static char *printed(const struct settings *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	settings_print(s, f);
	fclose(f);
	return text;
}

/* What settings_print, settings_to_json, settings_creation_digest and the
 * unknown-key message gave before the keys were described in one table: a
 * box's digest label must not change with a new gemini-box, and the lines
 * and keys keep their order. */
static void test_outputs_unchanged(void **state)
{
	(void)state;
	static const char *const expected_print[2] = {
		"image            = us-docker.pkg.dev/gemini-code-dev/gemini-cli/sandbox:0.61.0  "
		"(default)\n"
		"gemini_version   = (unset)  (default)\n"
		"containerfile    = (unset)  (default)\n"
		"user             = 1000:1000  (default)\n"
		"home             = /home/node  (default)\n"
		"network          = isolated  (default)\n"
		"runtime          = (unset)  (default)\n"
		"idle_stop_minutes = 30  (default)\n"
		"ide              = true  (default)\n"
		"mounts           = (none)\n"
		"env              = (none)\n"
		"forward_env      = (none)\n"
		"ports            = (none)\n"
		"podman_args      = (none)\n"
		"protected_paths  = (none)\n"
		"egress           = (none)\n",
		"image            = opt:1  (option --box-image)\n"
		"gemini_version   = (unset)  (default)\n"
		"containerfile    = /ROOT/home/proj/Containerfile  (user file /u/config.json)\n"
		"user             = 7:7  (environment GEMINI_BOX_USER)\n"
		"home             = /home/me  (user file /u/config.json)\n"
		"network          = host  (user file /u/config.json)\n"
		"runtime          = runsc  (user file /u/config.json)\n"
		"idle_stop_minutes = 2.5  (user file /u/config.json)\n"
		"ide              = false  (user file /u/config.json)\n"
		"mounts[0]        = /ROOT/home/data -> /data (read-only)  (user file "
		"/u/config.json)\n"
		"mounts[1]        = /ROOT/home/.ssh -> '/s t'  (user file /u/config.json)\n"
		"env.EDITOR       = ed  (project file /p/.gemini/gemini-box.json)\n"
		"env.B            = 'x y'  (user file /u/config.json)\n"
		"forward_env[0]   = SSH_AUTH_SOCK  (user file /u/config.json)\n"
		"ports[0]         = 8080:8080  (user file /u/config.json)\n"
		"ports[1]         = 3000:80  (user file /u/config.json)\n"
		"ports[2]         = 1:2  (project file /p/.gemini/gemini-box.json)\n"
		"podman_args[0]   = --cap-add=NET_RAW  (user file /u/config.json)\n"
		"protected_paths[0] = .envrc  (user file /u/config.json)\n"
		"protected_paths[1] = 'a b'  (user file /u/config.json)\n"
		"trusted_projects[0] = /not/yet  (user file)\n"
		"trusted_projects[1] = /also/not  (user file)\n"
		"egress           = (none)\n",
	};
	static const char *const expected_json[2] = {
		"{\"image\":{\"value\":\"us-docker.pkg.dev/gemini-code-dev/gemini-cli/"
		"sandbox:0.61.0\","
		"\"from\":{\"kind\":\"default\"}},\"gemini_version\":{\"value\":null,"
		"\"from\":{\"kind\":\"default\"}},\"containerfile\":{\"value\":null,"
		"\"from\":{\"kind\":\"default\"}},\"user\":{\"value\":\"1000:1000\","
		"\"from\":{\"kind\":\"default\"}},\"home\":{\"value\":\"/home/node\","
		"\"from\":{\"kind\":\"default\"}},\"network\":{\"value\":\"isolated\","
		"\"from\":{\"kind\":\"default\"}},\"runtime\":{\"value\":null,"
		"\"from\":{\"kind\":\"default\"}},\"idle_stop_minutes\":{\"value\":30,"
		"\"from\":{\"kind\":\"default\"}},\"ide\":{\"value\":true,"
		"\"from\":{\"kind\":\"default\"}},\"mounts\":[],\"env\":{},"
		"\"forward_env\":[],\"ports\":[],\"podman_args\":[],\"protected_paths\":[],"
		"\"trusted_projects\":[],\"egress\":[]}",
		"{\"image\":{\"value\":\"opt:1\",\"from\":{\"kind\":\"option\","
		"\"detail\":\"--box-image\"}},"
		"\"gemini_version\":{\"value\":null,\"from\":{\"kind\":\"default\"}},"
		"\"containerfile\":{\"value\":\"/ROOT/home/proj/Containerfile\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}},"
		"\"user\":{\"value\":\"7:7\",\"from\":{\"kind\":\"environment\","
		"\"detail\":\"GEMINI_BOX_USER\"}},\"home\":{\"value\":\"/home/me\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}},"
		"\"network\":{\"value\":\"host\",\"from\":{\"kind\":\"user file\","
		"\"detail\":\"/u/config.json\"}},\"runtime\":{\"value\":\"runsc\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}},"
		"\"idle_stop_minutes\":{\"value\":2.5,\"from\":{\"kind\":\"user file\","
		"\"detail\":\"/u/config.json\"}},\"ide\":{\"value\":false,"
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}},"
		"\"mounts\":[{\"source\":\"/ROOT/home/data\",\"target\":\"/data\","
		"\"readonly\":true,\"from\":{\"kind\":\"user file\","
		"\"detail\":\"/u/config.json\"}},{\"source\":\"/ROOT/home/.ssh\","
		"\"target\":\"/s t\",\"readonly\":false,\"from\":{\"kind\":\"user file\","
		"\"detail\":\"/u/config.json\"}}],\"env\":{\"EDITOR\":{\"value\":\"ed\","
		"\"from\":{\"kind\":\"project file\","
		"\"detail\":\"/p/.gemini/gemini-box.json\"}},\"B\":{\"value\":\"x y\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}}},"
		"\"forward_env\":[{\"value\":\"SSH_AUTH_SOCK\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}}],"
		"\"ports\":[{\"value\":\"8080:8080\",\"from\":{\"kind\":\"user file\","
		"\"detail\":\"/u/config.json\"}},{\"value\":\"3000:80\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}},"
		"{\"value\":\"1:2\",\"from\":{\"kind\":\"project file\","
		"\"detail\":\"/p/.gemini/gemini-box.json\"}}],"
		"\"podman_args\":[{\"value\":\"--cap-add=NET_RAW\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}}],"
		"\"protected_paths\":[{\"value\":\".envrc\","
		"\"from\":{\"kind\":\"user file\",\"detail\":\"/u/config.json\"}},"
		"{\"value\":\"a b\",\"from\":{\"kind\":\"user file\","
		"\"detail\":\"/u/config.json\"}}],\"trusted_projects\":[\"/not/yet\","
		"\"/also/not\"],\"egress\":[]}",
	};
	static const char *const expected_digest[2] = {
		"image=a5c98c975111,user=21d6b71f3406,home=3d98dc84e8f6,"
		"network=fb24828bebcd,runtime=6e340b9cffb3,mounts=e3b0c44298fc,"
		"ports=e3b0c44298fc,podman_args=e3b0c44298fc,protected_paths=e3b0c44298fc,"
		"idle_stop_minutes=1ee23c43b443,init=557b93652fa2,ide=0a53f63b02a0",
		"image=333fc9519b9e,user=c47487d1629c,home=b5c3c14c2439,"
		"network=4bb4306903dc,runtime=695e29d01be4,mounts=e4c95e6ecc9a,"
		"ports=d2cf46691ac7,podman_args=d571bf6f3a78,protected_paths=f66abea473bd,"
		"idle_stop_minutes=d12dbcf30565,init=557b93652fa2,ide=8590b49ba8c3",
	};
	for (int full = 0; full < 2; full++) {
		struct settings s;
		if (full)
			every_key(&s);
		else
			settings_init(&s);
		char *text = printed(&s);
		assert_string_equal(text, expected_print[full]);
		free(text);
		char *json = settings_to_json(&s);
		cJSON *tree = cJSON_Parse(json);
		assert_non_null(tree);
		char *compact = cJSON_PrintUnformatted(tree);
		assert_string_equal(compact, expected_json[full]);
		cJSON_free(compact);
		cJSON_Delete(tree);
		free(json);
		char *digest = settings_creation_digest(&s, "init-a", full);
		assert_string_equal(digest, expected_digest[full]);
		free(digest);
		settings_clear(&s);
	}
	struct settings s;
	settings_init(&s);
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(merge(&s, "{\"colour\": 1}", ORIGIN_USER, false, &err), -1);
	assert_string_equal(
	        err.msg, "/u/config.json: colour: unknown key; known: image, user, home, mounts,"
	                 " env, forward_env, ports, network, runtime, podman_args, containerfile,"
	                 " idle_stop_minutes, ide, protected_paths, trusted_projects, "
	                 "gemini_version, egress");
	gb_error_clear(&err);
	settings_clear(&s);
}

/* Every key the unknown-key message names is printed, is in the JSON and is
 * read from a file. */
static void test_every_key_everywhere(void **state)
{
	(void)state;
	struct settings s;
	every_key(&s);
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(merge(&s, "{\"colour\": 1}", ORIGIN_USER, false, &err), -1);
	char *names = xstrdup(strstr(err.msg, "known: ") + strlen("known: "));
	gb_error_clear(&err);
	char *text = printed(&s);
	char *lines = xasprintf("\n%s", text);
	char *json = settings_to_json(&s);
	cJSON *tree = cJSON_Parse(json);
	int n = 0;
	for (char *key = strtok(names, ", "); key; key = strtok(NULL, ", "), n++) {
		char *line = xasprintf("\n%s", key);
		const char *at = strstr(lines, line);
		if (!at || !strchr(" [.", at[strlen(line)]))
			fail_msg("settings_print has no line for %s", key);
		if (!cJSON_HasObjectItem(tree, key))
			fail_msg("settings_to_json has no %s", key);
		/* null is no key's type: the error is about the value */
		char *file = xasprintf("{\"%s\": null}", key);
		assert_int_equal(merge(&s, file, ORIGIN_USER, false, &err), -1);
		if (strstr(err.msg, "unknown key"))
			fail_msg("%s is not read from a file: %s", key, err.msg);
		gb_error_clear(&err);
		free(file);
		free(line);
	}
	assert_int_equal(n, cJSON_GetArraySize(tree));
	cJSON_Delete(tree);
	free(json);
	free(lines);
	free(text);
	free(names);
	settings_clear(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_user_file),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_project_may),
		cmocka_unit_test(test_trusted_project_may_more),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_digest_and_drift),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_print_and_json),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_outputs_unchanged),
		cmocka_unit_test(test_every_key_everywhere),
	};
	return cmocka_run_group_tests_name("settings", tests, fixture_setup, fixture_teardown);
}
