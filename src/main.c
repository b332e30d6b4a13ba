/* gemini-box: runs the gemini CLI in a persistent rootless podman box per
 * project. main is the imperative shell: it observes (cwd, environment, the
 * box's state), asks the pure modules for a plan, and runs it. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "boxid.h"
#include "envsel.h"
#include "error.h"
#include "inspect.h"
#include "plan.h"
#include "podman.h"
#include "quote.h"
#include "strv.h"

#ifndef GEMINI_BOX_VERSION
#define GEMINI_BOX_VERSION "0.0.0-dev"
#endif

#define DEFAULT_IMAGE "us-docker.pkg.dev/gemini-code-dev/gemini-cli/sandbox:0.35.2"
#define BOX_HOME      "/home/node"
#define BOX_USER      "1000:1000"
/* Runs racing to create one box: each lost race costs one more inspect. */
#define CREATE_ATTEMPTS 3

extern char **environ;

static const char usage_text[] =
        "usage: gemini-box [--box-OPTION...] [--] [GEMINI-ARGUMENT...]\n"
        "\n"
        "Runs gemini in this project's persistent rootless podman box, creating or\n"
        "starting the box when needed. Every argument that is not a --box- option is\n"
        "passed to gemini unchanged; the first -- ends gemini-box's options.\n"
        "\n"
        "  --box-dir DIR      use DIR's box (default: top of the git work tree, else .)\n"
        "  --box-image IMAGE  image for a new box (default: $GEMINI_IMAGE, else\n"
        "                     " DEFAULT_IMAGE ")\n"
        "  --box-dry-run      print the podman commands a run would make; run none\n"
        "  --box-help         print this help\n"
        "  --box-version      print gemini-box's version\n"
        "\n"
        "Environment: GEMINI_IMAGE, GEMINI_BOX_PODMAN; see gemini-box(1) for the\n"
        "variables carried into each run and the exit statuses.\n";

static const char *nonempty_env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* What one run observed about the caller, before any podman call. */
struct run_context {
	char *cwd;
	char *dir;
	char *home;
	char *gemini_home;
	char *podman;
	char name[BOX_NAME_SIZE];
	struct strv env_names;
};

static void run_context_clear(struct run_context *c)
{
	free(c->cwd);
	free(c->dir);
	free(c->home);
	free(c->gemini_home);
	free(c->podman);
	strv_clear(&c->env_names);
}

/* Shell-quoted, so a path with a newline still reads as one line. */
static int fail_path(struct gb_error *err, int status, const char *what, const char *path,
                     const char *why)
{
	char *q = shell_quote(path);
	gb_fail(err, status, "%s %s: %s", what, q, why);
	free(q);
	return -1;
}

static int resolve_dirs(const struct box_options *o, struct run_context *c, struct gb_error *err)
{
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return gb_fail(
		        err, EXIT_BOX_NODIR,
		        "cannot read the current directory (%s); cd into an existing directory",
		        strerror(errno));
	c->cwd = realpath(cwd, NULL);
	free(cwd);
	if (!c->cwd)
		return gb_fail(err, EXIT_BOX_NODIR, "cannot resolve the current directory: %s",
		               strerror(errno));

	const char *home = nonempty_env("HOME");
	if (!home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return gb_fail(err, EXIT_BOX_NODIR, "cannot tell your home directory; set HOME");
	c->home = realpath(home, NULL);
	if (!c->home)
		return fail_path(err, EXIT_BOX_NODIR, "home directory", home, strerror(errno));

	if (o->dir) {
		c->dir = realpath(o->dir, NULL);
		if (!c->dir)
			return fail_path(err, EXIT_BOX_NODIR, "--box-dir", o->dir,
			                 "no such directory; give an existing directory");
	} else {
		c->dir = box_dir_find(c->cwd, c->home);
	}
	struct stat st;
	if (stat(c->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return fail_path(err, EXIT_BOX_NODIR, "box directory", c->dir,
		                 "not a directory; give a directory with --box-dir");
	if (access(c->dir, R_OK | X_OK) < 0)
		return fail_path(err, EXIT_BOX_NODIR, "box directory", c->dir,
		                 "not readable; check its permissions");
	return 0;
}

/* ~/.gemini holds gemini's settings and credentials; the box shares them. */
static int resolve_gemini_home(struct run_context *c, bool create, struct gb_error *err)
{
	char *path = xasprintf("%s/.gemini", c->home);
	if (create && mkdir(path, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		fail_path(err, EXIT_BOX_NODIR, "cannot create", path, strerror(e));
		free(path);
		return -1;
	}
	c->gemini_home = realpath(path, NULL);
	if (!c->gemini_home) {
		if (!create) { /* dry run: show where it would be */
			c->gemini_home = path;
			return 0;
		}
		int e = errno;
		fail_path(err, EXIT_BOX_NODIR, "cannot use", path, strerror(e));
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

static int inspect_box(const struct run_context *c, struct box_info *info, struct gb_error *err)
{
	struct strv argv = STRV_INIT;
	strv_push(&argv, c->podman);
	strv_push(&argv, "container");
	strv_push(&argv, "inspect");
	strv_push(&argv, c->name);
	struct run_result r;
	int ran = run_command(argv.v, true, &r, err);
	strv_clear(&argv);
	if (ran < 0)
		return -1;
	/* A missing box is exit 125 with "[]" on stdout; parse before judging the status. */
	int rc = inspect_parse(r.out, info, err);
	if (rc == 0 && info->state == BOX_ABSENT && r.status != 0 &&
	    !strstr(r.err, "no such container")) {
		char *msg = podman_message(r.err);
		rc = gb_fail(err, EXIT_BOX_PODMAN, "podman container inspect failed: %s", msg);
		free(msg);
	} else if (rc < 0 && r.status != 0) {
		char *msg = podman_message(r.err);
		rc = gb_fail(err, EXIT_BOX_PODMAN,
		             "podman container inspect failed: %s; try podman info", msg);
		free(msg);
	}
	run_result_clear(&r);
	return rc;
}

static bool image_present(const struct run_context *c, const char *image)
{
	struct strv argv = STRV_INIT;
	strv_push(&argv, c->podman);
	strv_push(&argv, "image");
	strv_push(&argv, "exists");
	strv_push(&argv, image);
	struct run_result r;
	struct gb_error ignored = GB_ERROR_INIT;
	bool present = run_command(argv.v, true, &r, &ignored) == 0 && r.status == 0;
	strv_clear(&argv);
	if (ignored.msg)
		gb_error_clear(&ignored);
	else
		run_result_clear(&r);
	return present;
}

/* A box of this name that another directory (or someone else) owns is never entered. */
static int check_owner(const struct run_context *c, const struct box_info *info,
                       struct gb_error *err)
{
	if (info->state == BOX_ABSENT || (info->label_dir && strcmp(info->label_dir, c->dir) == 0))
		return 0;
	char *q = shell_quote(info->label_dir ? info->label_dir : "(no gemini-box label)");
	gb_fail(err, EXIT_BOX_PODMAN,
	        "container %s exists but is not this directory's box (it belongs to %s); "
	        "rename or remove it with podman rm %s",
	        c->name, q, c->name);
	free(q);
	return -1;
}

enum step_outcome { STEP_OK, STEP_FAILED, STEP_LOST_RACE };

static enum step_outcome run_step(const struct step *st, const char *image, struct gb_error *err)
{
	/* pull shows its progress on stderr; the others' messages are kept for ours. */
	bool show_stderr = st->kind == STEP_PULL;
	struct run_result r;
	if (run_command(st->argv.v, !show_stderr, &r, err) < 0)
		return STEP_FAILED;
	enum step_outcome outcome = STEP_OK;
	if (r.status != 0) {
		char *msg = show_stderr ? NULL : podman_message(r.err);
		outcome = STEP_FAILED;
		switch (st->kind) {
		case STEP_PULL:
			gb_fail(err, EXIT_BOX_IMAGE,
			        "image %s is not here and pulling it failed; check its name, your "
			        "network and podman login, or choose one with --box-image",
			        image);
			break;
		case STEP_CREATE:
			if (strstr(r.err, "already in use")) {
				outcome = STEP_LOST_RACE; /* another run created it first */
				break;
			}
			gb_fail(err, EXIT_BOX_PODMAN, "podman create failed: %s", msg);
			break;
		default:
			gb_fail(err, EXIT_BOX_PODMAN, "podman %s failed: %s; see podman logs %s",
			        st->argv.v[1], msg, st->argv.v[st->argv.n - 1]);
			break;
		}
		free(msg);
	}
	run_result_clear(&r);
	return outcome;
}

/* Brings the box to running, then replaces this process with podman exec. */
static int launch(const struct box_options *o, struct run_context *c, struct box_spec *spec,
                  struct gb_error *err)
{
	for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
		struct box_info info;
		if (inspect_box(c, &info, err) < 0)
			return -1;
		if (check_owner(c, &info, err) < 0) {
			box_info_clear(&info);
			return -1;
		}
		bool have_image = info.state != BOX_ABSENT || image_present(c, spec->image);
		struct plan plan;
		plan_build(spec, info.state, have_image, &plan);
		box_info_clear(&info);

		if (o->dry_run) {
			plan_print(&plan, stdout);
			plan_clear(&plan);
			return fflush(stdout) == 0
			               ? 0
			               : gb_fail(err, EXIT_BOX_INTERNAL, "cannot write the plan");
		}

		enum step_outcome outcome = STEP_OK;
		for (size_t i = 0; i + 1 < plan.n && outcome == STEP_OK; i++) {
			if (plan.steps[i].kind == STEP_CREATE && !spec->rootless)
				fputs("gemini-box: running as root, so the box is created without "
				      "--userns=keep-id; run gemini-box as your own user\n",
				      stderr);
			outcome = run_step(&plan.steps[i], spec->image, err);
		}
		if (outcome == STEP_LOST_RACE) {
			plan_clear(&plan);
			continue;
		}
		if (outcome == STEP_FAILED) {
			plan_clear(&plan);
			return -1;
		}
		struct step *exec_step = &plan.steps[plan.n - 1];
		fflush(NULL);
		execv(exec_step->argv.v[0], exec_step->argv.v);
		int e = errno;
		plan_clear(&plan);
		return gb_fail(err, EXIT_BOX_NOPODMAN, "cannot run %s: %s", c->podman, strerror(e));
	}
	return gb_fail(err, EXIT_BOX_PODMAN,
	               "box %s keeps appearing and vanishing while it is created; "
	               "check what else manages it (podman ps -a)",
	               c->name);
}

static int run(const struct box_options *o, struct gb_error *err)
{
	struct run_context c = { .env_names = STRV_INIT };
	int rc = -1;

	const char *podman_name = nonempty_env("GEMINI_BOX_PODMAN");
	if (!podman_name)
		podman_name = "podman";
	c.podman = find_executable(podman_name, getenv("PATH"));
	if (!c.podman) {
		char *q = shell_quote(podman_name);
		gb_fail(err, EXIT_BOX_NOPODMAN,
		        "podman not found (%s); install it (apt-get install podman) or set "
		        "GEMINI_BOX_PODMAN to its path",
		        q);
		free(q);
		goto out;
	}
	if (resolve_dirs(o, &c, err) < 0 || resolve_gemini_home(&c, !o->dry_run, err) < 0 ||
	    box_name(c.dir, c.name, err) < 0)
		goto out;

	env_forward_names(environ, &c.env_names);
	struct gemini_intent intent = gemini_intent_of(o->gemini_args.v, o->gemini_args.n);
	bool ci = env_is_true(environ, "CI") || env_is_true(environ, "GITHUB_ACTIONS");

	const char *image = o->image ? o->image : nonempty_env("GEMINI_IMAGE");
	struct box_spec spec = {
		.podman = c.podman,
		.name = c.name,
		.dir = c.dir,
		/* gemini runs where it was typed, unless that is outside the box. */
		.workdir = path_is_within(c.cwd, c.dir) ? c.cwd : c.dir,
		.image = image ? image : DEFAULT_IMAGE,
		.version = GEMINI_BOX_VERSION,
		.gemini_home = c.gemini_home,
		.box_home = BOX_HOME,
		.box_user = BOX_USER,
		.rootless = geteuid() != 0,
		.tty = terminal_wanted(intent, isatty(STDIN_FILENO), isatty(STDOUT_FILENO), ci),
		.env_names = c.env_names.v,
		.n_env = c.env_names.n,
		.gemini_args = o->gemini_args.v,
		.n_args = o->gemini_args.n,
	};
	rc = launch(o, &c, &spec, err);
out:
	run_context_clear(&c);
	return rc;
}

int main(int argc, char *argv[])
{
	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;

	if (box_options_parse(argc, argv, &o, &err) < 0) {
		gb_error_print(&err);
		gb_error_clear(&err);
		return EXIT_BOX_USAGE;
	}
	int status = EXIT_BOX_OK;
	if (o.help) {
		fputs(usage_text, stdout);
	} else if (o.version) {
		printf("gemini-box %s\n", GEMINI_BOX_VERSION);
	} else if (run(&o, &err) < 0) {
		gb_error_print(&err);
		status = err.status;
		gb_error_clear(&err);
	}
	box_options_clear(&o);
	if (fflush(stdout) != 0 && status == EXIT_BOX_OK)
		status = EXIT_BOX_INTERNAL;
	return status;
}
