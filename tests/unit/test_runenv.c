/* runenv: which values a run carries, and by which channel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runenv.h"
#include "session.h"

static int has(const struct strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return 1;
	return 0;
}

static void add_env(struct settings *s, const char *name, const char *value)
{
	s->env = xrealloc(s->env, (s->n_env + 1) * sizeof(*s->env));
	s->env[s->n_env].name = xstrdup(name);
	s->env[s->n_env].value = xstrdup(value);
	s->n_env++;
}

/* A settings value never enters a host process's environment: it goes to the
 * env file, and nothing the caller has is named for it. */
static void test_settings_values_go_to_the_env_file(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	add_env(&s, "LD_PRELOAD", "/p/.gemini/libx.so");
	add_env(&s, "NODE_ENV", "dev");
	add_env(&s, "TERM", "dumb"); /* forwarded: the caller's own wins */
	char *envp[] = { "TERM=xterm", "GEMINI_API_KEY=k", "HOME=/h", NULL };
	struct run_env_input in = { &s, envp, false, "feedface" };
	struct run_env e = RUN_ENV_INIT;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_true(has(&e.fixed, "LD_PRELOAD=/p/.gemini/libx.so"));
	assert_true(has(&e.fixed, "NODE_ENV=dev"));
	assert_true(has(&e.fixed, SESSION_ENV "=feedface"));
	assert_false(has(&e.fixed, "TERM=dumb"));
	assert_true(has(&e.names, "TERM"));
	assert_true(has(&e.names, "GEMINI_API_KEY"));
	assert_false(has(&e.names, "LD_PRELOAD"));
	assert_false(has(&e.names, "HOME"));
	char *text = run_env_file_text(&e);
	assert_string_equal(text, "GEMINI_BOX_SESSION=feedface\nLD_PRELOAD=/p/.gemini/libx.so\n"
	                          "NODE_ENV=dev\n");
	free(text);
	run_env_clear(&e);
	/* Without the caller's TERM, the settings value goes in. */
	char *bare[] = { NULL };
	in.envp = bare;
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_true(has(&e.fixed, "TERM=dumb"));
	run_env_clear(&e);
	settings_clear(&s);
}

/* An allowlist box's clients go to its relay, whatever proxy the caller
 * or a setting names (neither would be reached). */
static void test_allowlist_points_clients_at_the_relay(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	free(s.network.value);
	s.network.value = xstrdup("allowlist");
	add_env(&s, "HTTPS_PROXY", "http://evil.example:8080");
	struct list_item fwd[] = { { (char *)"HTTP_PROXY", { ORIGIN_USER, "f" } } };
	s.forward_env = (struct item_list){ fwd, 1 };
	char *envp[] = { "HTTP_PROXY=http://corp:3128", "no_proxy=*", NULL };
	struct run_env_input in = { &s, envp, false, NULL };
	struct run_env e = RUN_ENV_INIT;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_false(has(&e.names, "HTTP_PROXY"));
	assert_true(has(&e.fixed, "HTTPS_PROXY=http://127.0.0.1:3128"));
	assert_true(has(&e.fixed, "https_proxy=http://127.0.0.1:3128"));
	assert_true(has(&e.fixed, "HTTP_PROXY=http://127.0.0.1:3128"));
	assert_true(has(&e.fixed, "http_proxy=http://127.0.0.1:3128"));
	assert_true(has(&e.fixed, "NO_PROXY=localhost,127.0.0.1,::1"));
	assert_true(has(&e.fixed, "no_proxy=localhost,127.0.0.1,::1"));
	assert_false(has(&e.fixed, "HTTPS_PROXY=http://evil.example:8080"));
	run_env_clear(&e);
	/* in other modes no proxy variable is made up */
	free(s.network.value);
	s.network.value = xstrdup("isolated");
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_false(has(&e.fixed, "HTTP_PROXY=http://127.0.0.1:3128"));
	assert_true(has(&e.names, "HTTP_PROXY"));
	run_env_clear(&e);
	s.forward_env = (struct item_list){ NULL, 0 };
	settings_clear(&s);
}

/* The IDE token goes only where the companion can be reached. */
static void test_ide_variables_only_where_reachable(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	char *envp[] = { "GEMINI_CLI_IDE_AUTH_TOKEN=t", "GEMINI_CLI_IDE_SERVER_PORT=1", NULL };
	struct run_env_input in = { &s, envp, false, NULL };
	struct run_env e = RUN_ENV_INIT;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_int_equal(e.names.n, 0);
	assert_false(has(&e.fixed, "REMOTE_CONTAINERS=true"));
	run_env_clear(&e);
	in.ide_reachable = true;
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_true(has(&e.names, "GEMINI_CLI_IDE_AUTH_TOKEN"));
	assert_true(has(&e.fixed, "REMOTE_CONTAINERS=true"));
	run_env_clear(&e);
	s.ide.value = 0; /* "ide": false withholds them even then */
	assert_int_equal(run_env_build(&in, &e, &err), 0);
	assert_int_equal(e.names.n, 0);
	run_env_clear(&e);
	settings_clear(&s);
}

/* A forwarded value podman would change is refused, naming the variable only. */
static void test_invalid_utf8_is_refused(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	char *envp[] = { "GEMINI_API_KEY=\xff\xfe", NULL };
	struct run_env_input in = { &s, envp, false, NULL };
	struct run_env e = RUN_ENV_INIT;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(run_env_build(&in, &e, &err), -1);
	assert_int_equal(err.status, EXIT_BOX_CONFIG);
	assert_non_null(strstr(err.msg, "GEMINI_API_KEY is not valid UTF-8"));
	assert_null(strstr(err.msg, "\xff"));
	gb_error_clear(&err);
	run_env_clear(&e);
	settings_clear(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_values_go_to_the_env_file),
		cmocka_unit_test(test_allowlist_points_clients_at_the_relay),
		cmocka_unit_test(test_ide_variables_only_where_reachable),
		cmocka_unit_test(test_invalid_utf8_is_refused),
	};
	return cmocka_run_group_tests_name("runenv", tests, NULL, NULL);
}
