/* args: splits gemini-box's own --box-* options from gemini's arguments, and
 * decides from gemini's arguments whether gemini will run interactively. */
#ifndef GEMINI_BOX_ARGS_H
#define GEMINI_BOX_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "strv.h"

/* What one invocation does: run gemini (the default) or manage the box. */
enum box_command {
	CMD_RUN,
	CMD_HELP,
	CMD_VERSION,
	CMD_CONFIG,
	CMD_STATUS,
	CMD_LIST,
	CMD_STOP,
	CMD_RM,
	CMD_RECREATE,
	CMD_PRUNE,
	CMD_SHELL,
	CMD_BUILD,
	CMD_DOCTOR,
	CMD_TRUST,
	CMD_EGRESS,
};

struct box_options {
	enum box_command command;
	const char *command_option; /* the option that chose it, for messages */
	bool dry_run;
	bool json;               /* --box-json */
	bool yes;                /* --box-yes */
	bool root;               /* --box-root */
	const char *dir;         /* --box-dir, or NULL; points into argv */
	const char *image;       /* --box-image, or NULL; points into argv */
	struct strv gemini_args; /* everything else, unchanged and in order */
};

/* Parses argv (argv[0] is the program). gemini-box's options all start with
 * --box- and may stand anywhere before the first "--", which ends them and is
 * not passed on. Words that are values of gemini's options (the prompt in
 * `-p --box-help`) are gemini's. At most one command option may be given,
 * modifiers only with the commands they modify, and gemini arguments only
 * with a run. Fails with EXIT_BOX_USAGE. */
int box_options_parse(int argc, char *const argv[], struct box_options *o, struct gb_error *err);
void box_options_clear(struct box_options *o);

/* What gemini's arguments ask for, read the way gemini's own parser reads them. */
struct gemini_intent {
	bool headless;           /* a prompt, a query, a subcommand, --acp, -v, -h */
	bool prompt_interactive; /* -i/--prompt-interactive: interactive despite a query */
};

struct gemini_intent gemini_intent_of(char *const *args, size_t n);

/* Number of words after args[0] that are its value (0 or 1), or 0 when args[0]
 * is not an option of gemini's that takes one. next may be NULL. */
size_t gemini_option_value_count(const char *word, const char *next);

/* Whether to give gemini a terminal (podman exec -t): gemini runs
 * interactively only when stdin and stdout are terminals, CI is not set, and
 * the arguments do not make it headless. */
bool terminal_wanted(struct gemini_intent intent, bool stdin_tty, bool stdout_tty, bool ci);

#endif
