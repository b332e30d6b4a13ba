/* gemini-box: runs the gemini CLI in a persistent rootless podman box per
 * project. main only parses the options, prepares what the command needs
 * (its row in the table) and calls its handler. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "context.h"
#include "egress-proxy.h"
#include "error.h"
#include "settings.h"

extern char **environ;

static const char usage_text[] =
        "usage: gemini-box [--box-OPTION...] [--] [GEMINI-ARGUMENT...]\n"
        "\n"
        "Runs gemini in this project's persistent rootless podman box, creating or\n"
        "starting the box when needed. Every argument that is not a --box- option is\n"
        "passed to gemini unchanged; the first -- ends gemini-box's options.\n"
        "\n"
        "Running gemini:\n"
        "  --box-dir DIR      use DIR's box (default: top of the git work tree, else .)\n"
        "  --box-image IMAGE  image for a new box (default: settings, $GEMINI_IMAGE, else\n"
        "                     " DEFAULT_IMAGE ";\n"
        "                     \"local\": gemini-box's own, made without a registry)\n"
        "  --box-dry-run      print the podman commands a command would make; run none\n"
        "\n"
        "Managing boxes (each one instead of running gemini):\n"
        "  --box-status       this directory's box: state, image, settings drift\n"
        "  --box-list         every box of yours (--box-json: as JSON)\n"
        "  --box-stop         stop this directory's box\n"
        "  --box-rm           remove this directory's box (never project files)\n"
        "  --box-recreate     remove the box and create it with the current settings\n"
        "  --box-prune        remove every box whose directory is gone\n"
        "  --box-yes          answer yes to --box-rm, --box-recreate, --box-prune,\n"
        "                     --box-trust\n"
        "  --box-shell        an interactive shell in the box (--box-root: as root)\n"
        "  --box-build        build the project's containerfile image now; without one,\n"
        "                     gemini-box's own image from Debian's and npm's packages\n"
        "                     (\"image\": \"local\" uses it)\n"
        "  --box-config       the effective settings and where each came from\n"
        "  --box-doctor       check podman, this machine and this box; say how to fix\n"
        "  --box-trust        show the project's settings file and containerfile and\n"
        "                     approve exactly that content (--box-yes: without asking)\n"
        "  --box-egress       what an \"allowlist\" box was refused lately, from its log\n"
        "  --box-help         print this help\n"
        "  --box-version      print gemini-box's version\n"
        "\n"
        "Network (\"network\" setting): \"isolated\" (the default), \"host\", \"none\", or\n"
        "\"allowlist\": only gemini's own hosts and those in \"egress\", through a proxy on\n"
        "the host that logs every connection (it limits where data goes, not what).\n"
        "\n"
        "Settings: ~/.config/gemini-box/config.json and <project>/.gemini/gemini-box.json.\n"
        "Environment: GEMINI_IMAGE, GEMINI_BOX_PODMAN and more; see gemini-box(1) for the\n"
        "variables carried into each run, the settings keys and the exit statuses.\n";

static int cmd_help(struct context *ctx, struct gb_error *err)
{
	(void)ctx;
	(void)err;
	fputs(usage_text, stdout);
	return 0;
}

static int cmd_version(struct context *ctx, struct gb_error *err)
{
	(void)ctx;
	(void)err;
	printf("gemini-box %s\n", GEMINI_BOX_VERSION);
	return 0;
}

/* Each command, its handler, and what must be prepared before it runs. */
static const struct command {
	enum box_command command;
	int (*run)(struct context *ctx, struct gb_error *err);
	unsigned needs;
} commands[] = {
	{ CMD_RUN, cmd_run, NEEDS_PODMAN | NEEDS_SETTINGS | NEEDS_GEMINI_HOME },
	{ CMD_SHELL, cmd_shell, NEEDS_PODMAN | NEEDS_SETTINGS | NEEDS_GEMINI_HOME },
	{ CMD_RECREATE, cmd_recreate, NEEDS_PODMAN | NEEDS_SETTINGS | NEEDS_GEMINI_HOME },
	{ CMD_STATUS, cmd_status, NEEDS_PODMAN | NEEDS_SETTINGS },
	{ CMD_STOP, cmd_stop, NEEDS_PODMAN | NEEDS_SETTINGS },
	{ CMD_RM, cmd_rm, NEEDS_PODMAN | NEEDS_SETTINGS },
	{ CMD_BUILD, cmd_build, NEEDS_PODMAN | NEEDS_SETTINGS },
	{ CMD_CONFIG, cmd_config, NEEDS_SETTINGS },
	{ CMD_LIST, cmd_list, NEEDS_PODMAN },
	{ CMD_PRUNE, cmd_prune, NEEDS_PODMAN },
	{ CMD_TRUST, cmd_trust, NEEDS_DIR },
	{ CMD_EGRESS, cmd_egress, NEEDS_SETTINGS },
	{ CMD_DOCTOR, cmd_doctor, 0 }, /* finds out for itself, reporting each failure */
	{ CMD_HELP, cmd_help, 0 },
	{ CMD_VERSION, cmd_version, 0 },
};

static int dispatch(const struct box_options *o, struct gb_error *err)
{
	const struct command *c = commands;
	while (c->command != o->command)
		c++; /* every command has a row */
	struct context ctx = { .o = o, .envp = environ, .env = RUN_ENV_INIT };
	int rc = context_prepare(&ctx, c->needs, err);
	if (rc == 0)
		rc = c->run(&ctx, err);
	context_clear(&ctx);
	if (rc == 0 && fflush(stdout) != 0)
		rc = gb_fail(err, EXIT_BOX_INTERNAL, "cannot write to standard output");
	return rc < 0 ? -1 : ctx.exit_status;
}

int main(int argc, char *argv[])
{
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;

	/* Inherited as ignored, SIGCHLD would hide every child's end. */
	signal(SIGCHLD, SIG_DFL);
	/* gemini-box started as a box's egress proxy by gemini-box itself
	 * (egress-proxy.h): not a command, so not among the options. */
	if (argc == 3 && strcmp(argv[1], EGRESS_PROXY_OPTION) == 0)
		return egress_proxy_main(argv[2]);
	if (box_options_parse(argc, argv, &o, &err) < 0) {
		gb_error_print(&err);
		gb_error_clear(&err);
		return EXIT_BOX_USAGE;
	}
	int status = dispatch(&o, &err);
	if (status < 0) {
		gb_error_print(&err);
		status = err.status;
		gb_error_clear(&err);
	}
	box_options_clear(&o);
	if (fflush(stdout) != 0 && status == EXIT_BOX_OK)
		status = EXIT_BOX_INTERNAL;
	return status;
}
