#include "args.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"

enum opt_arg { OPT_FLAG, OPT_VALUE, OPT_OPTIONAL_VALUE };
enum opt_effect { EFFECT_NONE, EFFECT_HEADLESS, EFFECT_PROMPT_INTERACTIVE };

struct gemini_opt {
	const char *name; /* long name, kebab-case */
	char short_name;  /* or 0 */
	enum opt_arg arg;
	enum opt_effect effect;
};

/* gemini's options that take a value or change whether it is interactive.
 * Any other option is a flag as far as gemini-box is concerned. */
static const struct gemini_opt gemini_opts[] = {
	{ "model", 'm', OPT_VALUE, EFFECT_NONE },
	{ "prompt", 'p', OPT_VALUE, EFFECT_HEADLESS },
	{ "prompt-interactive", 'i', OPT_VALUE, EFFECT_PROMPT_INTERACTIVE },
	{ "approval-mode", 0, OPT_VALUE, EFFECT_NONE },
	{ "policy", 0, OPT_VALUE, EFFECT_NONE },
	{ "admin-policy", 0, OPT_VALUE, EFFECT_NONE },
	{ "allowed-mcp-server-names", 0, OPT_VALUE, EFFECT_NONE },
	{ "allowed-tools", 0, OPT_VALUE, EFFECT_NONE },
	{ "extensions", 'e', OPT_VALUE, EFFECT_NONE },
	{ "include-directories", 0, OPT_VALUE, EFFECT_NONE },
	{ "add-dir", 0, OPT_VALUE, EFFECT_NONE },
	{ "output-format", 'o', OPT_VALUE, EFFECT_NONE },
	{ "session-file", 0, OPT_VALUE, EFFECT_NONE },
	{ "session-id", 0, OPT_VALUE, EFFECT_NONE },
	{ "delete-session", 0, OPT_VALUE, EFFECT_NONE },
	{ "fake-responses", 0, OPT_VALUE, EFFECT_NONE },
	{ "record-responses", 0, OPT_VALUE, EFFECT_NONE },
	{ "resume", 'r', OPT_OPTIONAL_VALUE, EFFECT_NONE },
	{ "worktree", 'w', OPT_OPTIONAL_VALUE, EFFECT_NONE },
	{ "acp", 0, OPT_FLAG, EFFECT_HEADLESS },
	{ "experimental-acp", 0, OPT_FLAG, EFFECT_HEADLESS },
	{ "version", 'v', OPT_FLAG, EFFECT_HEADLESS },
	{ "help", 'h', OPT_FLAG, EFFECT_HEADLESS },
};

/* Subcommands: a first positional word naming one runs a command, not a session. */
static const char *const gemini_commands[] = {
	"mcp", "extensions", "extension", "skills", "skill", "hooks", "hook", "gemma",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Matches a long option name as yargs does: kebab-case or its camelCase twin
 * (--prompt-interactive, --promptInteractive). len excludes any "=value". */
static bool long_name_is(const char *name, size_t len, const char *kebab)
{
	size_t i = 0;
	for (const char *k = kebab; *k; k++) {
		if (*k == '-' && k[1]) {
			if (i < len && name[i] == '-') {
				i++;
				continue;
			}
			/* camelCase: the dash vanishes and the next letter is upper case. */
			k++;
			if (i >= len || name[i] != (char)toupper((unsigned char)*k))
				return false;
			i++;
			continue;
		}
		if (i >= len || name[i] != *k)
			return false;
		i++;
	}
	return i == len;
}

static const struct gemini_opt *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < COUNT(gemini_opts); i++)
		if (long_name_is(name, len, gemini_opts[i].name))
			return &gemini_opts[i];
	return NULL;
}

static const struct gemini_opt *find_short(char c)
{
	for (size_t i = 0; i < COUNT(gemini_opts); i++)
		if (gemini_opts[i].short_name == c)
			return &gemini_opts[i];
	return NULL;
}

/* Whether the word after a value-taking option is consumed as its value. */
static bool takes_next(const struct gemini_opt *o, const char *next)
{
	if (!o || !next)
		return false;
	if (o->arg == OPT_VALUE)
		return true; /* even "-m -p": the -p is a model name */
	if (o->arg == OPT_OPTIONAL_VALUE)
		return next[0] != '-';
	return false;
}

/* Reads one option word. Reports the options it names (through `seen`, which
 * may be NULL) and returns how many following words it consumes. */
static size_t read_option(const char *w, const char *next,
                          void (*seen)(const struct gemini_opt *, void *), void *ctx)
{
	if (w[1] == '-') {
		const char *name = w + 2;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct gemini_opt *o = find_long(name, len);
		if (o && seen)
			seen(o, ctx);
		return !eq && takes_next(o, next) ? 1 : 0;
	}
	/* A cluster of short options: "-dy", "-p", "-pquery", "-p=query". */
	for (const char *c = w + 1; *c; c++) {
		const struct gemini_opt *o = find_short(*c);
		if (o && seen)
			seen(o, ctx);
		if (o && o->arg != OPT_FLAG)
			return c[1] == '\0' && takes_next(o, next) ? 1 : 0;
	}
	return 0;
}

static bool is_option_word(const char *w)
{
	return w[0] == '-' && w[1] != '\0' && strcmp(w, "--") != 0;
}

size_t gemini_option_value_count(const char *word, const char *next)
{
	if (!is_option_word(word))
		return 0;
	return read_option(word, next, NULL, NULL);
}

struct intent_scan {
	bool headless_option;
	bool prompt_interactive;
};

static void note_option(const struct gemini_opt *o, void *ctx)
{
	struct intent_scan *s = ctx;
	if (o->effect == EFFECT_HEADLESS)
		s->headless_option = true;
	else if (o->effect == EFFECT_PROMPT_INTERACTIVE)
		s->prompt_interactive = true;
}

struct gemini_intent gemini_intent_of(char *const *args, size_t n)
{
	struct intent_scan s = { false, false };
	bool only_positionals = false, any_positional = false, command = false;

	for (size_t i = 0; i < n; i++) {
		const char *w = args[i];
		if (!only_positionals && strcmp(w, "--") == 0) {
			only_positionals = true;
			continue;
		}
		if (!only_positionals && is_option_word(w)) {
			i += read_option(w, i + 1 < n ? args[i + 1] : NULL, note_option, &s);
			continue;
		}
		if (!any_positional) {
			for (size_t c = 0; c < COUNT(gemini_commands); c++)
				if (strcmp(w, gemini_commands[c]) == 0)
					command = true;
		}
		any_positional = true;
	}

	struct gemini_intent in;
	in.prompt_interactive = s.prompt_interactive;
	/* A positional query makes gemini headless unless -i asks for a session. */
	in.headless = s.headless_option || command || (any_positional && !s.prompt_interactive);
	return in;
}

bool terminal_wanted(struct gemini_intent intent, bool stdin_tty, bool stdout_tty, bool ci)
{
	return stdin_tty && stdout_tty && !ci && !intent.headless;
}

/* gemini-box's own options. */
enum box_opt_kind { OPT_COMMAND, OPT_MODIFIER, OPT_WITH_VALUE };

static const struct {
	const char *name;
	enum box_opt_kind kind;
	enum box_command command; /* for OPT_COMMAND */
} box_opts[] = {
	{ "--box-help", OPT_COMMAND, CMD_HELP },
	{ "--box-version", OPT_COMMAND, CMD_VERSION },
	{ "--box-config", OPT_COMMAND, CMD_CONFIG },
	{ "--box-status", OPT_COMMAND, CMD_STATUS },
	{ "--box-list", OPT_COMMAND, CMD_LIST },
	{ "--box-stop", OPT_COMMAND, CMD_STOP },
	{ "--box-rm", OPT_COMMAND, CMD_RM },
	{ "--box-recreate", OPT_COMMAND, CMD_RECREATE },
	{ "--box-prune", OPT_COMMAND, CMD_PRUNE },
	{ "--box-shell", OPT_COMMAND, CMD_SHELL },
	{ "--box-build", OPT_COMMAND, CMD_BUILD },
	{ "--box-doctor", OPT_COMMAND, CMD_DOCTOR },
	{ "--box-trust", OPT_COMMAND, CMD_TRUST },
	{ "--box-egress", OPT_COMMAND, CMD_EGRESS },
	{ "--box-dry-run", OPT_MODIFIER, CMD_RUN },
	{ "--box-json", OPT_MODIFIER, CMD_RUN },
	{ "--box-yes", OPT_MODIFIER, CMD_RUN },
	{ "--box-root", OPT_MODIFIER, CMD_RUN },
	{ "--box-dir", OPT_WITH_VALUE, CMD_RUN },
	{ "--box-image", OPT_WITH_VALUE, CMD_RUN },
};

static bool is_box_word(const char *w)
{
	return strncmp(w, "--box-", 6) == 0;
}

static int parse_box_word(int argc, char *const argv[], int *i, struct box_options *o,
                          struct gb_error *err)
{
	const char *w = argv[*i];
	const char *eq = strchr(w, '=');
	size_t len = eq ? (size_t)(eq - w) : strlen(w);

	for (size_t k = 0; k < COUNT(box_opts); k++) {
		const char *name = box_opts[k].name;
		if (strlen(name) != len || strncmp(w, name, len) != 0)
			continue;
		const char *value = NULL;
		if (box_opts[k].kind == OPT_WITH_VALUE) {
			if (eq)
				value = eq + 1;
			else if (*i + 1 < argc)
				value = argv[++*i];
			if (!value || !*value)
				return gb_fail(err, EXIT_BOX_USAGE,
				               "%s needs a value; see gemini-box --box-help", name);
		} else if (eq) {
			return gb_fail(err, EXIT_BOX_USAGE,
			               "%s takes no value; see gemini-box --box-help", name);
		}
		if (box_opts[k].kind == OPT_COMMAND) {
			if (o->command != CMD_RUN && o->command != box_opts[k].command)
				return gb_fail(err, EXIT_BOX_USAGE,
				               "%s and %s cannot be combined; give one of them",
				               o->command_option, name);
			o->command = box_opts[k].command;
			o->command_option = name;
		} else if (strcmp(name, "--box-dry-run") == 0) {
			o->dry_run = true;
		} else if (strcmp(name, "--box-json") == 0) {
			o->json = true;
		} else if (strcmp(name, "--box-yes") == 0) {
			o->yes = true;
		} else if (strcmp(name, "--box-root") == 0) {
			o->root = true;
		} else if (strcmp(name, "--box-dir") == 0) {
			o->dir = value;
		} else {
			o->image = value;
		}
		return 0;
	}
	char *name = xstrdup(w);
	name[len > 200 ? 200 : len] = '\0';
	char *quoted = shell_quote(name);
	gb_fail(err, EXIT_BOX_USAGE,
	        "unknown option %s; gemini-box's options are listed by gemini-box --box-help, "
	        "and a word after -- goes to gemini",
	        quoted);
	free(quoted);
	free(name);
	return -1;
}

/* Modifiers make sense only with some commands; saying so beats ignoring them. */
static int check_combination(const struct box_options *o, struct gb_error *err)
{
	enum box_command c = o->command;
	if (o->json && c != CMD_LIST && c != CMD_CONFIG && c != CMD_STATUS)
		return gb_fail(err, EXIT_BOX_USAGE,
		               "--box-json goes with --box-list, --box-status or --box-config");
	if (o->yes && c != CMD_RM && c != CMD_RECREATE && c != CMD_PRUNE && c != CMD_TRUST)
		return gb_fail(err, EXIT_BOX_USAGE,
		               "--box-yes goes with --box-rm, --box-recreate, --box-prune or "
		               "--box-trust");
	if (o->root && c != CMD_SHELL)
		return gb_fail(err, EXIT_BOX_USAGE, "--box-root goes with --box-shell");
	if (c != CMD_RUN && c != CMD_HELP && c != CMD_VERSION && o->gemini_args.n > 0) {
		char *q = shell_quote(o->gemini_args.v[0]);
		gb_fail(err, EXIT_BOX_USAGE,
		        "%s runs no gemini, so it takes no other arguments (got %s); see "
		        "gemini-box --box-help",
		        o->command_option, q);
		free(q);
		return -1;
	}
	return 0;
}

int box_options_parse(int argc, char *const argv[], struct box_options *o, struct gb_error *err)
{
	memset(o, 0, sizeof(*o));
	int i = 1;
	for (; i < argc; i++) {
		const char *w = argv[i];
		if (strcmp(w, "--") == 0) {
			i++;
			break;
		}
		if (is_box_word(w)) {
			if (parse_box_word(argc, argv, &i, o, err) < 0) {
				box_options_clear(o);
				return -1;
			}
			continue;
		}
		strv_push(&o->gemini_args, w);
		/* An option's value is gemini's, whatever it looks like. */
		size_t values = gemini_option_value_count(w, i + 1 < argc ? argv[i + 1] : NULL);
		for (; values > 0; values--)
			strv_push(&o->gemini_args, argv[++i]);
	}
	for (; i < argc; i++)
		strv_push(&o->gemini_args, argv[i]);
	if (check_combination(o, err) < 0) {
		box_options_clear(o);
		return -1;
	}
	return 0;
}

void box_options_clear(struct box_options *o)
{
	strv_clear(&o->gemini_args);
}
