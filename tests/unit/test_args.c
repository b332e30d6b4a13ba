/* Unit tests: gemini-box's option parsing and the terminal rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct gemini_intent intent_of(const char *const *args)
{
	struct strv copy = STRV_INIT;
	for (size_t n = 0; args[n]; n++)
		strv_push(&copy, args[n]);
	struct gemini_intent in = gemini_intent_of(copy.v, copy.n);
	strv_clear(&copy);
	return in;
}

/* The terminal rule as a table: arguments, then whether gemini gets a TTY
 * when stdin and stdout are terminals. */
struct tty_case {
	const char *args[6];
	bool tty;
};

static const struct tty_case tty_cases[] = {
	{ { NULL }, true },
	{ { "-d", NULL }, true },
	{ { "-y", "--debug", NULL }, true },
	{ { "-m", "gemini-2.5-pro", NULL }, true },
	{ { "--model", "x", NULL }, true },
	{ { "--model=x", NULL }, true },
	{ { "-p", "q", NULL }, false },
	{ { "--prompt", "q", NULL }, false },
	{ { "--prompt=q", NULL }, false },
	{ { "-pq", NULL }, false },
	{ { "-p=q", NULL }, false },
	{ { "-dp", "q", NULL }, false },
	{ { "-p", NULL }, false },      /* -p without its value is still a prompt */
	{ { "-m", "-p", NULL }, true }, /* -p is the model's name */
	{ { "--model", "--prompt", NULL }, true },
	{ { "-m", "-p", "-p", "x", NULL }, false },
	{ { "hello", NULL }, false }, /* positional query */
	{ { "-m", "x", "hello", NULL }, false },
	{ { "-i", "hello", NULL }, true }, /* -i keeps a session */
	{ { "--prompt-interactive", "hello", NULL }, true },
	{ { "--prompt-interactive=hello", NULL }, true },
	{ { "--promptInteractive", "hello", NULL }, true },
	{ { "hello", "-i", "x", NULL }, true },
	{ { "mcp", NULL }, false },
	{ { "mcp", "list", NULL }, false },
	{ { "extensions", "list", NULL }, false },
	{ { "extension", NULL }, false },
	{ { "skills", NULL }, false },
	{ { "skill", NULL }, false },
	{ { "hooks", NULL }, false },
	{ { "hook", NULL }, false },
	{ { "gemma", NULL }, false },
	{ { "-d", "mcp", "list", NULL }, false },
	{ { "-m", "mcp", NULL }, true }, /* mcp is the model here */
	{ { "-i", "mcp", NULL }, true }, /* mcp is -i's query, not a command */
	{ { "--acp", NULL }, false },
	{ { "--experimental-acp", NULL }, false },
	{ { "--experimentalAcp", NULL }, false },
	{ { "-v", NULL }, false },
	{ { "--version", NULL }, false },
	{ { "-h", NULL }, false },
	{ { "--help", NULL }, false },
	{ { "-dh", NULL }, false },
	{ { "--", "-p", NULL }, false }, /* after --, -p is a query */
	{ { "--", NULL }, true },
	{ { "-r", NULL }, true },
	{ { "-r", "latest", NULL }, true }, /* resume's optional value */
	{ { "--resume", "3", NULL }, true },
	{ { "-r", "-p", "x", NULL }, false },
	{ { "-w", NULL }, true },
	{ { "-w", "feature", NULL }, true },
	{ { "-e", "ext", NULL }, true },
	{ { "--extensions", "a", "b", NULL }, false }, /* one value; b is a query */
	{ { "--include-directories", "d", NULL }, true },
	{ { "--add-dir", "d", NULL }, true },
	{ { "--allowed-tools", "t", NULL }, true },
	{ { "--allowed-mcp-server-names", "s", NULL }, true },
	{ { "--approval-mode", "yolo", NULL }, true },
	{ { "--policy", "p", NULL }, true },
	{ { "--admin-policy", "p", NULL }, true },
	{ { "-o", "json", NULL }, true },
	{ { "--output-format", "json", NULL }, true },
	{ { "--session-file", "f", NULL }, true },
	{ { "--session-id", "i", NULL }, true },
	{ { "--delete-session", "1", NULL }, true },
	{ { "--fake-responses", "f", NULL }, true },
	{ { "--record-responses", "f", NULL }, true },
	{ { "--unknown-flag", "word", NULL }, false }, /* unknown options take no value */
	{ { "-", NULL }, false },                      /* "-" is a positional word */
	{ { "", NULL }, false },                       /* so is an empty one */
	{ { "--prompt-interactiveX", "q", NULL }, false },
	{ { "--promptinteractive", "q", NULL }, false }, /* not yargs' camelCase */
};

static void test_terminal_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tty_cases) / sizeof(tty_cases[0]); i++) {
		struct gemini_intent in = intent_of(tty_cases[i].args);
		bool got = terminal_wanted(in, true, true, false);
		if (got != tty_cases[i].tty)
			fail_msg("case %zu (%s %s ...): want tty=%d, got %d", i,
			         tty_cases[i].args[0] ? tty_cases[i].args[0] : "(none)",
			         tty_cases[i].args[0] && tty_cases[i].args[1] ? tty_cases[i].args[1]
			                                                      : "",
			         tty_cases[i].tty, got);
	}
}

static void test_terminal_needs_both_ttys_and_no_ci(void **state)
{
	(void)state;
	struct gemini_intent session = { false, false };
	assert_true(terminal_wanted(session, true, true, false));
	assert_false(terminal_wanted(session, false, true, false));
	assert_false(terminal_wanted(session, true, false, false));
	assert_false(terminal_wanted(session, false, false, false));
	assert_false(terminal_wanted(session, true, true, true));
	struct gemini_intent headless = { true, false };
	assert_false(terminal_wanted(headless, true, true, false));
	struct gemini_intent interactive = { false, true };
	assert_true(terminal_wanted(interactive, true, true, false));
	assert_false(terminal_wanted(interactive, false, true, false));
}

static void test_value_count(void **state)
{
	(void)state;
	assert_int_equal(gemini_option_value_count("-p", "x"), 1);
	assert_int_equal(gemini_option_value_count("-p", NULL), 0);
	assert_int_equal(gemini_option_value_count("-px", "y"), 0);
	assert_int_equal(gemini_option_value_count("--prompt=x", "y"), 0);
	assert_int_equal(gemini_option_value_count("-dm", "x"), 1);
	assert_int_equal(gemini_option_value_count("-md", "x"), 0); /* d is m's value */
	assert_int_equal(gemini_option_value_count("-d", "x"), 0);
	assert_int_equal(gemini_option_value_count("-r", "-d"), 0);
	assert_int_equal(gemini_option_value_count("-r", "3"), 1);
	assert_int_equal(gemini_option_value_count("x", "y"), 0);
	assert_int_equal(gemini_option_value_count("--", "y"), 0);
	assert_int_equal(gemini_option_value_count("-", "y"), 0);
	assert_int_equal(gemini_option_value_count("--allowedTools", "t"), 1);
	assert_int_equal(gemini_option_value_count("---prompt", "t"), 0);
}

static void test_parse_passes_gemini_args_unchanged(void **state)
{
	(void)state;
	char *argv[] = { "gemini-box", "-m",     "m",  "",         "with space",
		         "a\nb",       "--yolo", "-p", "quote'\"", NULL };
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(ARGC(argv) - 1, argv, &o, &err), 0);
	assert_int_equal(o.gemini_args.n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(o.gemini_args.v[i], argv[i + 1]);
	assert_null(o.gemini_args.v[8]);
	assert_false(o.dry_run);
	assert_int_equal(o.command, CMD_RUN);
	assert_null(o.dir);
	assert_null(o.image);
	box_options_clear(&o);
}

static void test_parse_box_options_anywhere(void **state)
{
	(void)state;
	char *argv[] = { "gemini-box",    "-d", "--box-dir", "/tmp", "x", "--box-image=img:1",
		         "--box-dry-run", "y",  NULL };
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(ARGC(argv) - 1, argv, &o, &err), 0);
	assert_string_equal(o.dir, "/tmp");
	assert_string_equal(o.image, "img:1");
	assert_true(o.dry_run);
	assert_int_equal(o.gemini_args.n, 3);
	assert_string_equal(o.gemini_args.v[0], "-d");
	assert_string_equal(o.gemini_args.v[1], "x");
	assert_string_equal(o.gemini_args.v[2], "y");
	box_options_clear(&o);
}

static void test_parse_double_dash_ends_box_options(void **state)
{
	(void)state;
	char *argv[] = { "gemini-box", "--box-dry-run", "--", "--box-help", "--", "x", NULL };
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(ARGC(argv) - 1, argv, &o, &err), 0);
	assert_true(o.dry_run);
	assert_int_equal(o.command, CMD_RUN);
	assert_int_equal(o.gemini_args.n, 3);
	assert_string_equal(o.gemini_args.v[0], "--box-help");
	assert_string_equal(o.gemini_args.v[1], "--");
	assert_string_equal(o.gemini_args.v[2], "x");
	box_options_clear(&o);
}

static void test_parse_option_values_are_gemini_s(void **state)
{
	(void)state;
	char *argv[] = { "gemini-box", "-p", "--box-help", "--model", "--box-version", NULL };
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(ARGC(argv) - 1, argv, &o, &err), 0);
	assert_int_equal(o.command, CMD_RUN);
	assert_int_equal(o.gemini_args.n, 4);
	assert_string_equal(o.gemini_args.v[1], "--box-help");
	assert_string_equal(o.gemini_args.v[3], "--box-version");
	box_options_clear(&o);
}

static void test_parse_commands(void **state)
{
	(void)state;
	const struct {
		const char *option;
		enum box_command command;
	} commands[] = {
		{ "--box-help", CMD_HELP },     { "--box-version", CMD_VERSION },
		{ "--box-config", CMD_CONFIG }, { "--box-status", CMD_STATUS },
		{ "--box-list", CMD_LIST },     { "--box-stop", CMD_STOP },
		{ "--box-rm", CMD_RM },         { "--box-recreate", CMD_RECREATE },
		{ "--box-prune", CMD_PRUNE },   { "--box-shell", CMD_SHELL },
		{ "--box-build", CMD_BUILD },
	};
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++) {
		char *argv[] = { "gemini-box", (char *)(uintptr_t)commands[i].option, NULL };
		struct box_options o;
		struct gb_error err = GB_ERROR_INIT;
		assert_int_equal(box_options_parse(2, argv, &o, &err), 0);
		assert_int_equal(o.command, commands[i].command);
		assert_string_equal(o.command_option, commands[i].option);
		box_options_clear(&o);
	}
	/* The same command twice is fine; modifiers go with their commands. */
	char *argv[] = { "gemini-box", "--box-rm", "--box-yes", "--box-rm", "--box-dry-run", NULL };
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(ARGC(argv) - 1, argv, &o, &err), 0);
	assert_int_equal(o.command, CMD_RM);
	assert_true(o.yes);
	assert_true(o.dry_run);
	box_options_clear(&o);
	char *shell[] = { "gemini-box", "--box-root", "--box-shell", NULL };
	assert_int_equal(box_options_parse(ARGC(shell) - 1, shell, &o, &err), 0);
	assert_true(o.root);
	box_options_clear(&o);
	char *list[] = { "gemini-box", "--box-list", "--box-json", NULL };
	assert_int_equal(box_options_parse(ARGC(list) - 1, list, &o, &err), 0);
	assert_true(o.json);
	box_options_clear(&o);
	/* --box-help may come with gemini's words: they are ignored, not an error. */
	char *help[] = { "gemini-box", "-p", "x", "--box-help", NULL };
	assert_int_equal(box_options_parse(ARGC(help) - 1, help, &o, &err), 0);
	assert_int_equal(o.command, CMD_HELP);
	box_options_clear(&o);
}

static void expect_usage_error(char **argv, int argc, const char *fragment)
{
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(argc, argv, &o, &err), -1);
	assert_int_equal(err.status, EXIT_BOX_USAGE);
	assert_non_null(strstr(err.msg, fragment));
	assert_null(strchr(err.msg, '\n'));
	gb_error_clear(&err);
}

static void test_parse_errors(void **state)
{
	(void)state;
	char *unknown[] = { "gemini-box", "--box-frob", NULL };
	expect_usage_error(unknown, 2, "unknown option --box-frob");
	char *unknown_eq[] = { "gemini-box", "--box-frob=1", NULL };
	expect_usage_error(unknown_eq, 2, "unknown option --box-frob");
	char *prefix[] = { "gemini-box", "--box-", NULL };
	expect_usage_error(prefix, 2, "unknown option --box-");
	char *missing[] = { "gemini-box", "--box-dir", NULL };
	expect_usage_error(missing, 2, "--box-dir needs a value");
	char *empty[] = { "gemini-box", "--box-image=", NULL };
	expect_usage_error(empty, 2, "--box-image needs a value");
	char *empty_next[] = { "gemini-box", "--box-dir", "", NULL };
	expect_usage_error(empty_next, 3, "--box-dir needs a value");
	char *flag_value[] = { "gemini-box", "--box-dry-run=yes", NULL };
	expect_usage_error(flag_value, 2, "--box-dry-run takes no value");
	char *partial[] = { "gemini-box", "--box-dry", NULL };
	expect_usage_error(partial, 2, "unknown option");
	char *newline[] = { "gemini-box", "--box-a\nb", NULL };
	expect_usage_error(newline, 2, "unknown option $'--box-a\\nb'");
	char *two[] = { "gemini-box", "--box-rm", "--box-stop", NULL };
	expect_usage_error(two, 3, "--box-rm and --box-stop cannot be combined");
	char *help_version[] = { "gemini-box", "--box-help", "--box-version", NULL };
	expect_usage_error(help_version, 3, "cannot be combined");
	char *json[] = { "gemini-box", "--box-json", NULL };
	expect_usage_error(json, 2, "--box-json goes with");
	char *yes[] = { "gemini-box", "--box-stop", "--box-yes", NULL };
	expect_usage_error(yes, 3, "--box-yes goes with");
	char *root[] = { "gemini-box", "--box-root", NULL };
	expect_usage_error(root, 2, "--box-root goes with --box-shell");
	char *extra[] = { "gemini-box", "--box-status", "-p", "x", NULL };
	expect_usage_error(extra, 4, "--box-status runs no gemini");
}

static void test_parse_many_args(void **state)
{
	(void)state;
	enum { N = 100000 };
	char **argv = calloc(N + 2, sizeof(char *));
	assert_non_null(argv);
	argv[0] = "gemini-box";
	for (int i = 1; i <= N; i++)
		argv[i] = (i % 2) ? "-p" : "--box-help"; /* every --box-help is a prompt */
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	assert_int_equal(box_options_parse(N + 1, argv, &o, &err), 0);
	assert_int_equal(o.command, CMD_RUN);
	assert_int_equal(o.gemini_args.n, N);
	assert_true(gemini_intent_of(o.gemini_args.v, o.gemini_args.n).headless);
	box_options_clear(&o);
	free(argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_terminal_table),
		cmocka_unit_test(test_terminal_needs_both_ttys_and_no_ci),
		cmocka_unit_test(test_value_count),
		cmocka_unit_test(test_parse_passes_gemini_args_unchanged),
		cmocka_unit_test(test_parse_box_options_anywhere),
		cmocka_unit_test(test_parse_double_dash_ends_box_options),
		cmocka_unit_test(test_parse_option_values_are_gemini_s),
		cmocka_unit_test(test_parse_commands),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_many_args),
	};
	return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
