#define _GNU_SOURCE
#include "commands.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boxid.h"
#include "boxinit.h"
#include "build.h"
#include "doctor.h"
#include "envsel.h"
#include "inspect.h"
#include "plan.h"
#include "podman.h"
#include "protect.h"
#include "quote.h"
#include "report.h"
#include "runenv.h"
#include "session.h"
#include "settings.h"
#include "spawn.h"
#include "strv.h"
#include "trust.h"

/* Runs racing to create one box: each lost race costs one more inspect. */
#define CREATE_ATTEMPTS       3
#define PROJECT_SETTINGS      ".gemini/gemini-box.json"
#define PROJECT_CONTAINERFILE ".gemini/sandbox.Dockerfile"
/* A settings file is small; a huge one is a mistake, not a configuration. */
#define SETTINGS_MAX_BYTES (1 << 20)

extern char **environ;

/* What one invocation observed about the caller, before any podman call. */
struct app {
	const struct box_options *o;
	char *const *envp; /* the caller's environment: read, never changed */
	char *podman;
	char *cwd;
	char *home;
	char *data_home;
	char *dir; /* the box directory; NULL for commands about every box */
	char *gemini_home;
	char name[BOX_NAME_SIZE];
	char *user_file;
	char *project_file;
	char *project_text;    /* the project file's text, NULL when it has none */
	char *approval;        /* the approval record that applies now, or NULL */
	char *approval_file;   /* where --box-trust keeps it */
	char *approval_change; /* what changed since an approval that no longer applies */
	struct settings settings;
	char *image; /* what the box is created from: the built tag or the setting */
	bool build_needed;
	char *digest;
	struct run_env env;
	struct protection protect;
	char *init_copy; /* this gemini-box's init, as boxes mount it */
	char *state;     /* this box's state directory (liveness lock, record) */
	char *record;    /* what the state directory records of a box made now */
	char *ide_dir;   /* the IDE port-file directory a host-network box shares */
	char *box_init;  /* the inspected box's own init and state directory */
	char *box_state;
	char session[SESSION_TOKEN_SIZE]; /* empty until a session is planned */
	char *env_file;                   /* the session's env file */
	int exit_status;                  /* the session's, once it ran */
};

static void app_clear(struct app *a)
{
	free(a->podman);
	free(a->cwd);
	free(a->home);
	free(a->data_home);
	free(a->dir);
	free(a->gemini_home);
	free(a->user_file);
	free(a->project_file);
	free(a->project_text);
	free(a->approval);
	free(a->approval_file);
	free(a->approval_change);
	settings_clear(&a->settings);
	free(a->image);
	free(a->digest);
	free(a->init_copy);
	free(a->ide_dir);
	free(a->state);
	free(a->record);
	free(a->box_init);
	free(a->box_state);
	free(a->env_file);
	run_env_clear(&a->env);
	protection_clear(&a->protect);
}

/* A variable of the caller's environment, or NULL when unset. */
static const char *env_value(const struct app *a, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = a->envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static const char *nonempty_env(const struct app *a, const char *name)
{
	const char *v = env_value(a, name);
	return v && *v ? v : NULL;
}

static int find_podman(struct app *a, struct gb_error *err)
{
	const char *name = nonempty_env(a, "GEMINI_BOX_PODMAN");
	if (!name)
		name = "podman";
	a->podman = find_executable(name, env_value(a, "PATH"));
	if (a->podman)
		return 0;
	char *q = shell_quote(name);
	gb_fail(err, EXIT_BOX_NOPODMAN,
	        "podman not found (%s); install it (apt-get install podman) or set "
	        "GEMINI_BOX_PODMAN to its path",
	        q);
	free(q);
	return -1;
}

static int resolve_home(struct app *a, struct gb_error *err)
{
	const char *home = nonempty_env(a, "HOME");
	if (!home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return gb_fail(err, EXIT_BOX_NODIR, "cannot tell your home directory; set HOME");
	a->home = realpath(home, NULL);
	if (!a->home)
		return gb_fail_path(err, EXIT_BOX_NODIR, "home directory", home, strerror(errno));
	const char *xdg = nonempty_env(a, "XDG_DATA_HOME");
	a->data_home = xdg ? xstrdup(xdg) : xasprintf("%s/.local/share", a->home);
	return 0;
}

static int resolve_dirs(struct app *a, struct gb_error *err)
{
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return gb_fail(
		        err, EXIT_BOX_NODIR,
		        "cannot read the current directory (%s); cd into an existing directory",
		        strerror(errno));
	a->cwd = realpath(cwd, NULL);
	free(cwd);
	if (!a->cwd)
		return gb_fail(err, EXIT_BOX_NODIR, "cannot resolve the current directory: %s",
		               strerror(errno));

	if (a->o->dir) {
		a->dir = realpath(a->o->dir, NULL);
		if (!a->dir)
			return gb_fail_path(err, EXIT_BOX_NODIR, "--box-dir", a->o->dir,
			                    "no such directory; give an existing directory");
	} else {
		a->dir = box_dir_find(a->cwd, a->home, geteuid());
	}
	struct stat st;
	if (stat(a->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return gb_fail_path(err, EXIT_BOX_NODIR, "box directory", a->dir,
		                    "not a directory; give a directory with --box-dir");
	if (access(a->dir, R_OK | X_OK) < 0)
		return gb_fail_path(err, EXIT_BOX_NODIR, "box directory", a->dir,
		                    "not readable; check its permissions");
	/* The project is mounted read-write: home (with ~/.ssh) or anything
	 * holding it never is. */
	if (path_is_within(a->home, a->dir))
		return gb_fail_path(err, EXIT_BOX_NODIR, "will not mount", a->dir,
		                    strcmp(a->dir, a->home) == 0
		                            ? "it is your home directory (with ~/.ssh and your "
		                              "settings); cd into a project, or give one with "
		                              "--box-dir"
		                            : "it holds your home directory (with ~/.ssh and your "
		                              "settings); cd into a project, or give one with "
		                              "--box-dir");
	box_name(a->dir, a->name);
	return 0;
}

/* ~/.gemini holds gemini's settings and credentials; the box sees it through
 * an overlay, with tmp/ and history/ shared (plan.h). */
static int resolve_gemini_home(struct app *a, bool create, struct gb_error *err)
{
	char *path = xasprintf("%s/.gemini", a->home);
	if (create && mkdir(path, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		gb_fail_path(err, EXIT_BOX_NODIR, "cannot create", path, strerror(e));
		free(path);
		return -1;
	}
	a->gemini_home = realpath(path, NULL);
	if (!a->gemini_home) {
		if (!create) { /* a dry run shows where it would be */
			a->gemini_home = path;
			return 0;
		}
		int e = errno;
		gb_fail_path(err, EXIT_BOX_NODIR, "cannot use", path,
		             e == ENOENT ? "a dangling link; remove it or point it at a directory"
		                         : strerror(e));
		free(path);
		return -1;
	}
	free(path);
	/* podman's overlay volume is "SOURCE:TARGET:O": a colon would split it,
	 * and the kernel's overlay options are split at commas. */
	if (strpbrk(a->gemini_home, ":,"))
		return gb_fail_path(err, EXIT_BOX_NODIR, "cannot share", a->gemini_home,
		                    "podman cannot overlay a path holding ':' or ','; move "
		                    "~/.gemini (or your home) to a path without one");
	return 0;
}

/* A file or directory of the project that gemini-box reads as settings must
 * be the user's: not another user's, not writable by others, and not a link
 * out of the project. Returns 0 when absent or fine. */
static int check_project_path(const struct app *a, const char *path, struct gb_error *err)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0
		               : gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path,
		                              strerror(errno));
	char *real = realpath(path, NULL);
	if (!real || !path_is_within(real, a->dir)) {
		free(real);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "refusing", path,
		                    "it resolves outside the project; make it a plain file of "
		                    "the project");
	}
	free(real);
	if (stat(path, &st) < 0)
		return gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path, strerror(errno));
	if (st.st_uid != geteuid()) {
		char *why = xasprintf("it belongs to another user (uid %ld), who could choose what "
		                      "runs with your keys; remove it, or chown it if it is yours",
		                      (long)st.st_uid);
		gb_fail_path(err, EXIT_BOX_CONFIG, "refusing", path, why);
		free(why);
		return -1;
	}
	if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != getegid()))
		return gb_fail_path(err, EXIT_BOX_CONFIG, "refusing", path,
		                    "other users can write it; chmod go-w it");
	return 0;
}

/* Reads a settings file; a missing one is no error, *text stays NULL. */
static int read_settings_file(const char *path, char **text, struct gb_error *err)
{
	*text = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SETTINGS_MAX_BYTES) {
		close(fd);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "settings file", path,
		                    "not a regular file of at most 1 MiB");
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t r = 0;
	while (n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	if (r < 0) {
		free(buf);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path, strerror(e));
	}
	buf[n] = '\0';
	if (strlen(buf) != n) {
		free(buf);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "settings file", path,
		                    "holds a NUL byte; it must be JSON text");
	}
	*text = buf;
	return 0;
}

static int merge_text(struct app *a, const char *path, const char *text, enum origin_kind kind,
                      bool trusted, struct gb_error *err)
{
	if (!text)
		return 0;
	struct settings_source src = {
		.file = path,
		.kind = kind,
		.home = a->home,
		.box_dir = a->dir,
		.trusted = trusted,
		.approval_change = a->approval_change,
	};
	return settings_merge_json(&a->settings, text, &src, err);
}

/* The project's own containerfile, by gemini-cli's convention, unless the
 * settings name one. */
static int find_conventional_containerfile(struct app *a, struct gb_error *err)
{
	if (a->settings.containerfile.value || !a->dir)
		return 0;
	char *conv = xasprintf("%s/%s", a->dir, PROJECT_CONTAINERFILE);
	struct stat st;
	int rc = 0;
	if (lstat(conv, &st) == 0) {
		rc = check_project_path(a, conv, err);
		if (rc == 0 && stat(conv, &st) == 0 && S_ISREG(st.st_mode)) {
			struct origin o = { ORIGIN_PROJECT, PROJECT_CONTAINERFILE };
			a->settings.containerfile.value = realpath(conv, NULL);
			a->settings.containerfile.origin = o;
		}
	}
	free(conv);
	return rc;
}

/* What an approval of the project as it is now would record: the digests
 * of its settings file and of its containerfile with the build context. */
static int current_approval(const struct app *a, char **settings, char **containerfile,
                            struct gb_error *err)
{
	*settings = a->project_text ? text_digest(a->project_text) : NULL;
	*containerfile = NULL;
	const struct str_setting *cf = &a->settings.containerfile;
	if (cf->value && cf->origin.kind == ORIGIN_PROJECT &&
	    build_context_digest(cf->value, containerfile, err) < 0) {
		free(*settings);
		*settings = NULL;
		return -1;
	}
	return 0;
}

/* One pass over the files: the user's, then the project's (trusted or not),
 * the environment and the options. */
static int merge_all(struct app *a, bool trusted, struct gb_error *err)
{
	settings_clear(&a->settings);
	settings_init(&a->settings);
	char *user_text;
	if (read_settings_file(a->user_file, &user_text, err) < 0)
		return -1;
	int rc = merge_text(a, a->user_file, user_text, ORIGIN_USER, true, err);
	free(user_text);
	if (rc == 0)
		rc = merge_text(a, a->project_file, a->project_text, ORIGIN_PROJECT,
		                trusted || settings_trusts(&a->settings, a->dir), err);
	if (rc == 0)
		rc = settings_merge_env(&a->settings, (char *const *)a->envp, err);
	if (rc == 0 && a->o->image) {
		const char *why = image_name_problem(a->o->image);
		if (why)
			return gb_fail(err, EXIT_BOX_USAGE, "--box-image %s", why);
		settings_set_option(&a->settings.image, a->o->image, "--box-image");
	}
	if (rc == 0)
		rc = find_conventional_containerfile(a, err);
	return rc;
}

/* Finds the settings files and reads the project's, which must be the
 * user's own (check_project_path). */
static int load_project(struct app *a, struct gb_error *err)
{
	settings_init(&a->settings);
	const char *xdg = nonempty_env(a, "XDG_CONFIG_HOME");
	a->user_file = xdg ? xasprintf("%s/gemini-box/config.json", xdg)
	                   : xasprintf("%s/.config/gemini-box/config.json", a->home);
	char *gemini_dir = xasprintf("%s/.gemini", a->dir);
	a->project_file = xasprintf("%s/%s", a->dir, PROJECT_SETTINGS);
	a->approval_file = approval_path(a->data_home, a->name);
	int rc = check_project_path(a, gemini_dir, err);
	free(gemini_dir);
	if (rc == 0)
		rc = check_project_path(a, a->project_file, err);
	if (rc == 0)
		rc = read_settings_file(a->project_file, &a->project_text, err);
	return rc;
}

static int load_settings(struct app *a, struct gb_error *err)
{

	if (load_project(a, err) < 0)
		return -1;
	int rc = 0;
	/* An approval applies while it matches what the project holds now. */
	char *approved = approval_read(a->approval_file);
	bool trusted = approved != NULL;
	if (merge_all(a, trusted, err) < 0) {
		free(approved);
		return -1;
	}
	if (approved) {
		char *settings, *containerfile;
		if (current_approval(a, &settings, &containerfile, err) < 0) {
			free(approved);
			return -1;
		}
		struct approval now = { a->dir, settings, containerfile };
		a->approval_change = approval_difference(approved, &now);
		if (a->approval_change)
			rc = merge_all(a, false, err); /* read again, as any project's */
		else
			a->approval = approval_record(&now);
		free(containerfile);
		free(settings);
		free(approved);
		if (rc < 0)
			return -1;
	}
	/* The conventional containerfile builds the program that gets the keys. */
	const struct str_setting *cf = &a->settings.containerfile;
	bool path_trusted = settings_trusts(&a->settings, a->dir);
	if (cf->value && cf->origin.kind == ORIGIN_PROJECT && !a->approval && !path_trusted) {
		char *q = shell_quote(cf->value);
		if (a->approval_change)
			gb_fail(err, EXIT_BOX_CONFIG,
			        "%s builds the image that gets your keys, and %s changed since you "
			        "approved it; review the change with gemini-box --box-trust",
			        q, a->approval_change);
		else
			gb_fail(err, EXIT_BOX_CONFIG,
			        "%s builds the image that gets your keys and ~/.gemini, so it "
			        "needs "
			        "your approval: review it with gemini-box --box-trust",
			        q);
		free(q);
		return -1;
	}
	return 0;
}

/* Whether gemini in the box can reach an IDE companion on the host's loopback. */
static bool host_ide(const struct app *a)
{
	return a->settings.ide.value && strcmp(a->settings.network.value, "host") == 0;
}

/* A directory of the IDE companion's that the box may see: ours alone, and
 * not a link (another user may have made /tmp/gemini first). */
static bool ide_dir_is_ours(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & 022) == 0;
}

/* The IDE port-file directory to share, when it is there and ours. gemini-box
 * never makes it: the companion does, at its first start. */
static void resolve_ide_dir(struct app *a, bool say)
{
	if (!host_ide(a))
		return;
	/* Where the companion writes its port files: os.tmpdir()/gemini/ide. */
	const char *tmp = nonempty_env(a, "TMPDIR");
	char *parent = xasprintf("%s/gemini", tmp ? tmp : "/tmp");
	char *dir = xasprintf("%s/ide", parent);
	struct stat st;
	if (ide_dir_is_ours(parent) && ide_dir_is_ours(dir)) {
		free(a->ide_dir);
		a->ide_dir = dir;
		dir = NULL;
	} else if (say) {
		char *q = shell_quote(dir);
		bool absent = lstat(dir, &st) < 0 && errno == ENOENT;
		fprintf(stderr,
		        "gemini-box: %s %s, so a new box does not share the IDE companion's port "
		        "files; %s\n",
		        q,
		        absent ? "does not exist yet"
		               : "is not a private directory of yours (another user's, or a link)",
		        absent ? "start the IDE, then gemini-box --box-recreate"
		               : "set TMPDIR to a directory of your own for the IDE and "
		                 "gemini-box");
		free(q);
	}
	free(dir);
	free(parent);
}

/* The image a box is created from: a build of the containerfile, else the setting. */
static int resolve_image(struct app *a, struct gb_error *err)
{
	if (a->settings.containerfile.value) {
		if (build_tag(a->settings.containerfile.value, a->settings.image.value, &a->image,
		              err) < 0)
			return -1;
		a->build_needed = true; /* until podman says the tag exists */
	} else {
		a->image = xstrdup(a->settings.image.value);
	}
	resolve_ide_dir(a, false);
	/* The digest covers the image actually used, so a rebuilt image is drift. */
	struct settings copy = a->settings;
	struct str_setting image = { a->image, a->settings.image.origin };
	copy.image = image;
	a->digest = settings_creation_digest(&copy, init_id(), a->ide_dir != NULL);
	return 0;
}

/* Where this box's init and state directory are, and what of the project
 * it protects; nothing is made here. */
static int resolve_runtime_paths(struct app *a, struct gb_error *err)
{
	a->init_copy = init_copy_path(a->data_home);
	a->record = state_record(a->dir, a->digest, a->init_copy);
	struct strv extra = STRV_INIT;
	for (size_t i = 0; i < a->settings.protected_paths.n; i++)
		strv_push(&extra, a->settings.protected_paths.v[i].value);
	protection_of(a->dir, &extra, &a->protect);
	strv_clear(&extra);
	return state_dir(a->name, false, &a->state, err);
}

/* What this run carries into the box (runenv.h). */
static int prepare_env(struct app *a, struct gb_error *err)
{
	struct run_env_input in = {
		.settings = &a->settings,
		.envp = a->envp,
		.ide_reachable = host_ide(a),
		.session = a->session[0] ? a->session : NULL,
	};
	return run_env_build(&in, &a->env, err);
}

static struct box_spec app_spec(const struct app *a, bool tty)
{
	const struct box_options *o = a->o;
	struct box_spec spec = {
		.podman = a->podman,
		.name = a->name,
		.dir = a->dir,
		/* gemini runs where it was typed, unless that is outside the box. */
		.workdir = path_is_within(a->cwd, a->dir) ? a->cwd : a->dir,
		.image = a->image,
		.version = GEMINI_BOX_VERSION,
		.gemini_home = a->gemini_home,
		.settings = &a->settings,
		.settings_digest = a->digest,
		.init = a->init_copy,
		.state_dir = a->state,
		.ide_dir = a->ide_dir,
		.protect = &a->protect,
		.rootless = geteuid() != 0,
		.tty = tty,
		.env_names = a->env.names.v,
		.n_env = a->env.names.n,
		.env_file = a->env.fixed.n ? a->env_file : NULL,
		.gemini_args = o->gemini_args.v,
		.n_args = o->gemini_args.n,
	};
	return spec;
}

/* ---- podman queries ---- */

/* Every program gemini-box starts gets the caller's environment as it came. */
static int run_in(const struct app *a, char *const argv[], enum child_io io, struct run_result *r,
                  struct gb_error *err)
{
	struct child c = { argv, a->envp, io };
	return child_run(&c, r, err);
}

static int query(const struct app *a, const char *const *words, struct run_result *r,
                 struct gb_error *err)
{
	struct strv argv = STRV_INIT;
	strv_push(&argv, a->podman);
	for (const char *const *w = words; *w; w++)
		strv_push(&argv, *w);
	int rc = run_in(a, argv.v, CHILD_CAPTURE, r, err);
	strv_clear(&argv);
	return rc;
}

/* A dry run of a command that only asks podman: the question, shell-quoted. */
static void print_query(const struct app *a, const char *const *words)
{
	char *q = shell_quote(a->podman);
	fputs(q, stdout);
	free(q);
	for (const char *const *w = words; *w; w++) {
		q = shell_quote(*w);
		printf(" %s", q);
		free(q);
	}
	putchar('\n');
}

static int inspect_box(const struct app *a, struct box_info *info, struct gb_error *err)
{
	const char *words[] = { "container", "inspect", a->name, NULL };
	struct run_result r;
	if (query(a, words, &r, err) < 0)
		return -1;
	/* A missing box is exit 125 with "[]" on stdout; parse before judging the status. */
	int rc = inspect_parse(r.out, info, err);
	if ((rc == 0 && info->state == BOX_ABSENT && r.status != 0 &&
	     !strstr(r.err, "no such container")) ||
	    (rc < 0 && r.status != 0)) {
		box_info_clear(info);
		char *msg = podman_message(r.err);
		rc = gb_fail(err, EXIT_BOX_PODMAN,
		             "podman container inspect failed: %s; try podman info", msg);
		free(msg);
	}
	run_result_clear(&r);
	return rc;
}

static bool image_present(const struct app *a, const char *image)
{
	const char *words[] = { "image", "exists", image, NULL };
	struct run_result r;
	struct gb_error ignored = GB_ERROR_INIT;
	if (query(a, words, &r, &ignored) < 0) {
		gb_error_clear(&ignored);
		return false;
	}
	bool present = r.status == 0;
	run_result_clear(&r);
	return present;
}

/* Every box of the user's, found by label. */
static const char *const list_words[] = { "ps",       "--all", "--filter", "label=" BOX_LABEL_DIR,
	                                  "--format", "json",  NULL };

static int list_boxes(const struct app *a, struct box_info **boxes, size_t *n, struct gb_error *err)
{
	const char *const *words = list_words;
	struct run_result r;
	if (query(a, words, &r, err) < 0)
		return -1;
	int rc;
	if (r.status != 0) {
		char *msg = podman_message(r.err);
		rc = gb_fail(err, EXIT_BOX_PODMAN, "podman ps failed: %s; try podman info", msg);
		free(msg);
	} else {
		rc = box_list_parse(r.out, boxes, n, err);
	}
	run_result_clear(&r);
	return rc;
}

/* A box of this name that another directory (or someone else) owns is never touched. */
static int check_owner(const struct app *a, const struct box_info *info, struct gb_error *err)
{
	if (info->state == BOX_ABSENT || (info->label_dir && strcmp(info->label_dir, a->dir) == 0))
		return 0;
	char *q = shell_quote(info->label_dir ? info->label_dir : "(no gemini-box label)");
	gb_fail(err, EXIT_BOX_PODMAN,
	        "container %s exists but is not this directory's box (it belongs to %s); "
	        "rename or remove it with podman rm %s",
	        a->name, q, a->name);
	free(q);
	return -1;
}

/* This directory's box, or a failure when its name is taken by another's. */
static int inspect_own_box(const struct app *a, struct box_info *info, struct gb_error *err)
{
	if (inspect_box(a, info, err) < 0)
		return -1;
	if (check_owner(a, info, err) < 0) {
		box_info_clear(info);
		return -1;
	}
	return 0;
}

/* One line naming what differs between the box and the current settings. */
static void report_drift(const struct app *a, const struct box_info *info)
{
	if (info->state == BOX_ABSENT)
		return;
	struct strv changed = STRV_INIT;
	settings_digest_diff(info->label_settings, a->digest, &changed);
	if (changed.n == 0) {
		strv_clear(&changed);
		return;
	}
	char *keys = strv_join(&changed, ", ");
	fprintf(stderr,
	        "gemini-box: box %s was made with other settings (%s changed); "
	        "gemini-box --box-recreate applies them\n",
	        a->name, info->label_settings ? keys : "made by an older gemini-box, so all");
	free(keys);
	strv_clear(&changed);
}

/* ---- running plans ---- */

enum step_outcome { STEP_OK, STEP_FAILED, STEP_LOST_RACE };

/* The podman verb of a step's argv, past the runtime's global flags. */
static const char *podman_verb(const struct step *st)
{
	for (size_t i = 1; i < st->argv.n; i++)
		if (st->argv.v[i][0] != '-')
			return st->argv.v[i];
	return "?";
}

/* Runs one podman step; *out, when not NULL, gets what it printed (a new box's id). */
static enum step_outcome run_podman_step(const struct app *a, const struct step *st, char **out,
                                         struct gb_error *err)
{
	const char *image = a->image;
	/* pull and build show their progress; the others' messages become ours. */
	bool show = st->kind == STEP_PULL || st->kind == STEP_BUILD;
	struct run_result r;
	if (run_in(a, st->argv.v, show ? CHILD_SHOW : CHILD_CAPTURE, &r, err) < 0)
		return STEP_FAILED;
	enum step_outcome outcome = STEP_OK;
	if (r.status != 0) {
		char *msg = podman_message(r.err);
		outcome = STEP_FAILED;
		switch (st->kind) {
		case STEP_PULL:
			gb_fail(err, EXIT_BOX_IMAGE,
			        "image %s is not here and pulling it failed; check its name, your "
			        "network and podman login, or choose one with --box-image",
			        image);
			break;
		case STEP_BUILD:
			gb_fail(err, EXIT_BOX_IMAGE,
			        "building the image from the containerfile failed (see podman "
			        "build's output above); fix the file and run again");
			break;
		case STEP_CREATE:
			if (strstr(r.err, "already in use")) {
				outcome = STEP_LOST_RACE; /* another run created it first */
				break;
			}
			gb_fail(err, EXIT_BOX_PODMAN, "podman create failed: %s", msg);
			break;
		default:
			gb_fail(err, EXIT_BOX_PODMAN, "podman %s %s failed: %s", podman_verb(st),
			        st->argv.v[st->argv.n - 1], msg);
			break;
		}
		free(msg);
		/* gVisor fails for reasons of its own (cgroups, kernel features). */
		if (outcome == STEP_FAILED && runtime_is_runsc(&a->settings) &&
		    (st->kind == STEP_CREATE || st->kind == STEP_START)) {
			char *plain = xstrdup(err->msg);
			gb_fail(err, EXIT_BOX_PODMAN,
			        "%s; gVisor (runsc) could not run the box: check runsc --version "
			        "and gemini-box --box-doctor, or drop \"runtime\" from your "
			        "config.json",
			        plain);
			free(plain);
		}
	}
	if (out && outcome == STEP_OK) {
		*out = r.out;
		r.out = NULL;
		(*out)[strcspn(*out, "\n")] = '\0';
	}
	run_result_clear(&r);
	return outcome;
}

/* Writes a new private file: never through a link, never over another's. */
static int write_private_file(const char *path, const char *text, struct gb_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	size_t len = strlen(text);
	int rc = fd >= 0 && write(fd, text, len) == (ssize_t)len ? 0 : -1;
	int e = errno;
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc < 0) {
		if (fd >= 0)
			unlink(path);
		return gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot write", path, strerror(e));
	}
	return 0;
}

/* Runs one host step (plan.h). */
static int run_host_step(const struct step *st, struct gb_error *err)
{
	switch (st->kind) {
	case STEP_MKDIR:
		if (mkdir(st->path, 0700) < 0 && errno != EEXIST)
			return gb_fail_path(err, EXIT_BOX_NODIR, "cannot create", st->path,
			                    strerror(errno));
		return 0;
	case STEP_STATE: {
		/* the base first: a box's state directory lives in a private one */
		char *name = strrchr(st->path, '/');
		char *dir = NULL;
		int rc = state_dir(name ? name + 1 : st->path, true, &dir, err);
		if (rc == 0 && strcmp(dir, st->path) != 0)
			rc = state_dir_ensure(st->path, err);
		free(dir);
		return rc;
	}
	case STEP_INSTALL: return init_install(st->path, err);
	case STEP_WRITE_ENV: return write_private_file(st->path, st->text, err);
	case STEP_REMOVE_FILE: unlink(st->path); return 0;
	default: return gb_fail(err, EXIT_BOX_INTERNAL, "not a host step");
	}
}

/* The state directory now records what the box was made with, and the box
 * mounts this init from now on. */
static int created(struct app *a, const char *id, struct gb_error *err)
{
	free(a->box_init);
	free(a->box_state);
	a->box_init = xstrdup(a->init_copy);
	a->box_state = xstrdup(a->state);
	return state_record_write(a->state, a->record, id, err);
}

/* Whether the agent could have changed path: it lies in something a box
 * mounts writable (the project, its git directory, ~/.gemini's shared parts,
 * a writable settings mount). */
static bool in_agents_reach(const struct app *a, const char *path)
{
	if (path_is_within(path, a->dir) || path_is_within(path, a->gemini_home) ||
	    (a->protect.git_dir && path_is_within(path, a->protect.git_dir)))
		return true;
	for (size_t i = 0; i < a->settings.n_mounts; i++)
		if (!a->settings.mounts[i].readonly &&
		    path_is_within(path, a->settings.mounts[i].source))
			return true;
	return false;
}

/* Podman resolves every bind source again at each start: a source the agent
 * replaced with a symlink (to $HOME, say) while the box ran would be mounted
 * in its place. Every source in its reach must still be the very path it was
 * (podman's own, such as an overlay's work directory, are not). */
static int check_mount_sources(const struct app *a, const struct box_info *info,
                               struct gb_error *err)
{
	for (size_t i = 0; info && i < info->n_mounts; i++) {
		const char *src = info->mount_sources[i];
		if (!in_agents_reach(a, src))
			continue;
		char *real = realpath(src, NULL);
		bool moved = !real || strcmp(real, src) != 0;
		free(real);
		if (moved) {
			char *q = shell_quote(src);
			gb_fail(err, EXIT_BOX_PODMAN,
			        "box %s mounts %s, which is no longer what it was when the box was "
			        "made (a link was put in its place, or it is gone); not starting "
			        "it: "
			        "gemini-box --box-recreate makes the box anew",
			        a->name, q);
			free(q);
			return -1;
		}
	}
	return 0;
}

/* A stopped box mounts what it was made with: an init that an upgrade
 * replaced must still be there. */
static int check_start(struct app *a, struct gb_error *err)
{
	if (!a->box_init || access(a->box_init, X_OK) == 0 ||
	    strcmp(a->box_init, a->init_copy) == 0)
		return 0;
	char *q = shell_quote(a->box_init);
	gb_fail(err, EXIT_BOX_PODMAN,
	        "box %s's init %s is gone (gemini-box was upgraded, or its data removed); "
	        "gemini-box --box-recreate makes the box anew",
	        a->name, q);
	free(q);
	return -1;
}

/* The IDE's stdio fallback names a program on the host; gemini in the box
 * can only start it if the box has it too. One podman call, on such runs only. */
static void warn_missing_stdio_command(const struct app *a)
{
	const char *command = nonempty_env(a, "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND");
	if (!command || command[0] != '/' || !host_ide(a))
		return;
	struct strv argv = STRV_INIT;
	const char *args[] = { command, NULL };
	podman_box_sh_argv(a->podman, a->name, "test -e \"$1\"", "stdio-check", args, &argv);
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	if (run_in(a, argv.v, CHILD_CAPTURE, &r, &e) == 0) {
		if (r.status == 1) {
			char *q = shell_quote(command);
			fprintf(stderr,
			        "gemini-box: the IDE's stdio command %s is not in the box, so "
			        "gemini cannot start it; mount it there (\"mounts\" in your "
			        "config.json)\n",
			        q);
			free(q);
		}
		run_result_clear(&r);
	}
	gb_error_clear(&e);
	strv_clear(&argv);
}

/* The one executor: runs the steps in order; a STEP_EXEC is the session,
 * whose status is kept. A STEP_REMOVE_FILE after a failure still runs, so
 * that an env file never outlives its run. */
static enum step_outcome run_plan(struct app *a, const struct plan *p, struct gb_error *err)
{
	enum step_outcome outcome = STEP_OK;
	for (size_t i = 0; i < p->n; i++) {
		const struct step *st = &p->steps[i];
		if (outcome != STEP_OK && st->kind != STEP_REMOVE_FILE)
			continue;
		if (st->kind <= STEP_REMOVE_FILE) {
			struct gb_error ignored = GB_ERROR_INIT;
			if (run_host_step(st, outcome == STEP_OK ? err : &ignored) < 0)
				outcome = STEP_FAILED;
			gb_error_clear(&ignored);
			continue;
		}
		if (st->kind == STEP_EXEC) {
			if (a->o->command == CMD_RUN)
				warn_missing_stdio_command(a);
			int status = session_run(st->argv.v, a->envp, a->podman, a->name,
			                         a->session, err);
			if (status < 0)
				outcome = STEP_FAILED;
			else
				a->exit_status = status;
			continue;
		}
		if (st->kind == STEP_START && check_start(a, err) < 0) {
			outcome = STEP_FAILED;
			continue;
		}
		if (st->kind == STEP_CREATE) {
			if (geteuid() == 0)
				fputs("gemini-box: running as root, so the box is created without "
				      "--userns=keep-id; run gemini-box as your own user\n",
				      stderr);
			if (strcmp(a->settings.network.value, "none") == 0)
				fputs("gemini-box: network \"none\": gemini in this box cannot "
				      "reach its API\n",
				      stderr);
			resolve_ide_dir(a, true);
		}
		char *id = NULL;
		outcome = run_podman_step(a, st, st->kind == STEP_CREATE ? &id : NULL, err);
		if (outcome == STEP_OK && st->kind == STEP_CREATE && created(a, id, err) < 0)
			outcome = STEP_FAILED;
		free(id);
		if (outcome == STEP_LOST_RACE)
			return outcome;
	}
	return outcome;
}

/* The host steps a new box needs before podman creates it: its state
 * directory and lock, the init, and what it mounts that may be missing. */
static void plan_create_preparation(const struct app *a, struct plan *p)
{
	plan_add_host(p, STEP_STATE, a->state, NULL);
	if (access(a->init_copy, X_OK) != 0) {
		char *source = init_source();
		plan_add_host(p, STEP_INSTALL, a->init_copy, source);
		free(source);
	}
	for (size_t i = 0; i < GEMINI_SHARED_N; i++) {
		char *dir = xasprintf("%s/%s", a->gemini_home, gemini_shared[i]);
		if (access(dir, F_OK) != 0)
			plan_add_host(p, STEP_MKDIR, dir, NULL);
		free(dir);
	}
	if (a->protect.make_hooks)
		plan_add_host(p, STEP_MKDIR, a->protect.make_hooks, NULL);
}

/* A stopped box's state directory may have been emptied (/tmp after a
 * reboot), and its init's copy removed: both are made again. */
static void plan_start_preparation(const struct app *a, struct plan *p)
{
	if (a->box_state)
		plan_add_host(p, STEP_STATE, a->box_state, NULL);
	if (a->box_init && strcmp(a->box_init, a->init_copy) == 0 &&
	    access(a->init_copy, X_OK) != 0) {
		char *source = init_source();
		plan_add_host(p, STEP_INSTALL, a->init_copy, source);
		free(source);
	}
}

/* The podman steps that bring the box up, each with its host preparation. */
static void plan_box_up(const struct app *a, const struct box_spec *spec, enum box_state state,
                        bool image_present, struct plan *p)
{
	if (!image_present && a->build_needed)
		podman_build_argv(a->podman, a->settings.containerfile.value, a->image,
		                  a->settings.image.value, plan_add(p, STEP_BUILD));
	if (state == BOX_ABSENT)
		plan_create_preparation(a, p);
	else if (state == BOX_STOPPED)
		plan_start_preparation(a, p);
	plan_bring_up(p, spec, state, image_present || a->build_needed);
}

/* The session: its env file written, podman exec, the file removed. */
static void plan_session(const struct app *a, const struct box_spec *spec, bool shell,
                         struct plan *p)
{
	char *text = a->env.fixed.n ? run_env_file_text(&a->env) : NULL;
	if (text)
		plan_add_host(p, STEP_WRITE_ENV, a->env_file, text);
	if (shell)
		podman_shell_argv(spec, a->o->root, plan_add(p, STEP_EXEC));
	else
		podman_exec_argv(spec, plan_add(p, STEP_EXEC));
	if (text)
		plan_add_host(p, STEP_REMOVE_FILE, a->env_file, NULL);
	free(text);
}

enum session_kind { NO_SESSION, GEMINI_SESSION, SHELL_SESSION };

/* Observes the box and plans bringing it up (and a session), retrying when
 * a concurrent run creates the box first. */
static int bring_up_and(struct app *a, bool tty, enum session_kind session, struct gb_error *err)
{
	for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
		struct box_info info;
		if (inspect_own_box(a, &info, err) < 0)
			return -1;
		if (attempt == 0)
			report_drift(a, &info);
		free(a->box_init);
		free(a->box_state);
		a->box_init = info.label_init ? xstrdup(info.label_init) : NULL;
		/* A label names the state directory; gemini-box only uses its own. */
		a->box_state = info.label_state && state_dir_is_ours(info.label_state, a->name)
		                       ? xstrdup(info.label_state)
		                       : NULL;
		if (info.state == BOX_STOPPED && !a->o->dry_run &&
		    check_mount_sources(a, &info, err) < 0) {
			box_info_clear(&info);
			return -1;
		}
		struct box_spec spec = app_spec(a, tty);
		struct plan plan = PLAN_INIT;
		bool have_image = info.state != BOX_ABSENT || image_present(a, a->image);
		plan_box_up(a, &spec, info.state, have_image, &plan);
		box_info_clear(&info);
		if (session != NO_SESSION)
			plan_session(a, &spec, session == SHELL_SESSION, &plan);

		if (a->o->dry_run) {
			plan_print(&plan, stdout);
			plan_clear(&plan);
			return 0;
		}
		enum step_outcome outcome = run_plan(a, &plan, err);
		plan_clear(&plan);
		if (outcome == STEP_LOST_RACE)
			continue;
		return outcome == STEP_OK ? 0 : -1;
	}
	return gb_fail(err, EXIT_BOX_PODMAN,
	               "box %s keeps appearing and vanishing while it is created; "
	               "check what else manages it (podman ps -a)",
	               a->name);
}

/* Asks before removing; --box-yes answers, and without a terminal it is required. */
static int confirm(const struct app *a, const char *question, struct gb_error *err)
{
	if (a->o->yes || a->o->dry_run)
		return 0;
	if (!isatty(STDIN_FILENO))
		return gb_fail(
		        err, EXIT_BOX_USAGE,
		        "%s needs your yes and there is no terminal to ask on; add --box-yes",
		        a->o->command_option);
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	char line[64];
	if (!fgets(line, sizeof(line), stdin) || (strcmp(line, "y\n") && strcmp(line, "yes\n") &&
	                                          strcmp(line, "Y\n") && strcmp(line, "YES\n")))
		return gb_fail(err, EXIT_BOX_DECLINED, "not confirmed; nothing was removed");
	return 0;
}

/* ---- commands ---- */

/* The launch podman need not be asked about. The state directory records
 * that the box was made for this directory with these very settings and
 * init: when its init holds the lock, the box runs, and gemini-box goes
 * straight to podman exec; when not, the box is started by its recorded id,
 * which fails for any other container. Returns 1 when the run happened
 * (or failed: -1), 0 when podman must be asked after all. */
static int run_known_box(struct app *a, bool tty, bool shell, struct gb_error *err)
{
	char *id = NULL;
	enum state_answer answer = state_lookup(a->state, a->record, &id);
	if (answer == STATE_UNKNOWN ||
	    (answer == STATE_STOPPED && access(a->init_copy, X_OK) != 0)) {
		free(id);
		return 0;
	}
	/* A settings mount source that is a link now would be followed at start:
	 * the long way inspects the box and refuses. */
	for (size_t i = 0; answer == STATE_STOPPED && i < a->settings.n_mounts; i++) {
		char *real = realpath(a->settings.mounts[i].source, NULL);
		bool same = real && strcmp(real, a->settings.mounts[i].source) == 0;
		free(real);
		if (!same) {
			free(id);
			return 0;
		}
	}
	struct box_spec spec = app_spec(a, tty);
	struct plan plan = PLAN_INIT;
	if (answer == STATE_STOPPED) {
		plan_add_host(&plan, STEP_STATE, a->state, NULL);
		podman_verb_argv(a->podman, &a->settings, STEP_START, id,
		                 plan_add(&plan, STEP_START));
	}
	free(id);
	plan_session(a, &spec, shell, &plan);
	/* A start that fails (the box was removed, paused, or is not startable)
	 * takes the long way, which says why. */
	if (answer == STATE_STOPPED) {
		struct gb_error ignored = GB_ERROR_INIT;
		bool started = run_host_step(&plan.steps[0], &ignored) == 0 &&
		               run_podman_step(a, &plan.steps[1], NULL, &ignored) == STEP_OK;
		gb_error_clear(&ignored);
		if (!started) {
			plan_clear(&plan);
			return 0;
		}
		/* what is left: the session */
		struct plan rest = { plan.steps + 2, plan.n - 2 };
		enum step_outcome outcome = run_plan(a, &rest, err);
		plan_clear(&plan);
		return outcome == STEP_OK ? 1 : -1;
	}
	enum step_outcome outcome = run_plan(a, &plan, err);
	plan_clear(&plan);
	return outcome == STEP_OK ? 1 : -1;
}

/* The session's tag, and the env file that carries it with the run's values. */
static int start_session(struct app *a, struct gb_error *err)
{
	if (session_token(a->session, err) < 0)
		return -1;
	if (a->state)
		a->env_file = xasprintf("%s/env-%s", a->state, a->session);
	return prepare_env(a, err);
}

static int cmd_run(struct app *a, struct gb_error *err)
{
	if (start_session(a, err) < 0)
		return -1;
	const struct box_options *o = a->o;
	struct gemini_intent intent = gemini_intent_of(o->gemini_args.v, o->gemini_args.n);
	bool ci = env_is_true(a->envp, "CI") || env_is_true(a->envp, "GITHUB_ACTIONS");
	bool tty = terminal_wanted(intent, isatty(STDIN_FILENO), isatty(STDOUT_FILENO), ci);
	if (a->settings.ide.value && !host_ide(a) && nonempty_env(a, "GEMINI_CLI_IDE_SERVER_PORT"))
		fprintf(stderr,
		        "gemini-box: the IDE companion listens on the host's loopback, which a "
		        "box with network \"%s\" cannot reach, so its variables stay out; set "
		        "\"network\": \"host\" in your config.json and run gemini-box "
		        "--box-recreate (or \"ide\": false to silence this)\n",
		        a->settings.network.value);
	int fast = a->o->dry_run ? 0 : run_known_box(a, tty, false, err);
	if (fast != 0)
		return fast < 0 ? -1 : 0;
	return bring_up_and(a, tty, GEMINI_SESSION, err);
}

static int cmd_shell(struct app *a, struct gb_error *err)
{
	if (start_session(a, err) < 0)
		return -1;
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	return bring_up_and(a, tty, SHELL_SESSION, err);
}

static int cmd_status(struct app *a, struct gb_error *err)
{
	if (a->o->dry_run) {
		const char *words[] = { "container", "inspect", a->name, NULL };
		print_query(a, words);
		return 0;
	}
	struct box_info info;
	if (inspect_box(a, &info, err) < 0)
		return -1;
	struct strv drift = STRV_INIT;
	if (info.state != BOX_ABSENT)
		settings_digest_diff(info.label_settings, a->digest, &drift);
	struct status_report r = { a->name, a->dir, &info, a->image, &drift };
	report_status(&r, a->o->json, stdout);
	strv_clear(&drift);
	box_info_clear(&info);
	return 0;
}

static bool dir_exists(const char *dir)
{
	struct stat st;
	/* Only a directory that is really gone counts: an unreadable one is not. */
	return !dir || stat(dir, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

static int cmd_list(struct app *a, struct gb_error *err)
{
	struct box_info *boxes;
	size_t n;
	if (a->o->dry_run) {
		print_query(a, list_words);
		return 0;
	}
	if (list_boxes(a, &boxes, &n, err) < 0)
		return -1;
	bool *exists = xmalloc((n ? n : 1) * sizeof(bool));
	for (size_t i = 0; i < n; i++)
		exists[i] = dir_exists(boxes[i].label_dir);
	report_list(boxes, exists, n, a->o->json, stdout);
	free(exists);
	box_list_free(boxes, n);
	return 0;
}

/* Stop or remove this directory's box; absent is not an error. */
static int act_on_box(struct app *a, enum step_kind kind, bool ask, struct gb_error *err)
{
	struct box_info info;
	if (inspect_own_box(a, &info, err) < 0)
		return -1;
	bool absent = info.state == BOX_ABSENT;
	bool stopped = info.state == BOX_STOPPED;
	char *state = info.label_state && state_dir_is_ours(info.label_state, a->name)
	                      ? xstrdup(info.label_state)
	                      : NULL;
	box_info_clear(&info);
	if (absent || (kind == STEP_STOP && stopped)) {
		char *q = shell_quote(a->dir);
		fprintf(stderr, "gemini-box: %s has no %sbox; nothing to do\n", q,
		        absent ? "" : "running ");
		free(q);
		free(state);
		return 0;
	}
	if (ask) {
		char *dir = shell_quote(a->dir);
		char *question = xasprintf("Remove box %s of %s? What was installed in it is lost; "
		                           "the project's files are kept.",
		                           a->name, dir);
		int rc = confirm(a, question, err);
		free(question);
		free(dir);
		if (rc < 0) {
			free(state);
			return -1;
		}
	}
	struct plan p = PLAN_INIT;
	podman_verb_argv(a->podman, &a->settings, kind, a->name, plan_add(&p, kind));
	int rc = 0;
	if (a->o->dry_run)
		plan_print(&p, stdout);
	else
		rc = run_plan(a, &p, err) == STEP_OK ? 0 : -1;
	if (rc == 0 && kind == STEP_REMOVE && state && !a->o->dry_run)
		state_forget(state);
	free(state);
	plan_clear(&p);
	return rc;
}

static int cmd_recreate(struct app *a, struct gb_error *err)
{
	if (act_on_box(a, STEP_REMOVE, true, err) < 0)
		return -1;
	/* A dry run cannot know the box is gone: plan as if it were. */
	if (a->o->dry_run) {
		struct box_spec spec = app_spec(a, false);
		struct plan p = PLAN_INIT;
		plan_box_up(a, &spec, BOX_ABSENT, image_present(a, a->image), &p);
		plan_print(&p, stdout);
		plan_clear(&p);
		return 0;
	}
	return bring_up_and(a, false, NO_SESSION, err);
}

static int cmd_prune(struct app *a, struct gb_error *err)
{
	struct box_info *boxes;
	size_t n;
	if (list_boxes(a, &boxes, &n, err) < 0)
		return -1;
	struct plan p = PLAN_INIT;
	struct strv states = STRV_INIT;
	for (size_t i = 0; i < n; i++)
		if (!dir_exists(boxes[i].label_dir)) {
			if (boxes[i].label_state &&
			    state_dir_is_ours(boxes[i].label_state, boxes[i].name))
				strv_push(&states, boxes[i].label_state);
			char *q = shell_quote(boxes[i].label_dir);
			fprintf(stderr, "gemini-box: %s: directory %s is gone\n", boxes[i].name, q);
			free(q);
			podman_verb_argv(a->podman, NULL, STEP_REMOVE, boxes[i].name,
			                 plan_add(&p, STEP_REMOVE));
		}
	box_list_free(boxes, n);
	int rc = 0;
	if (p.n == 0) {
		fputs("gemini-box: every box's directory still exists; nothing to prune\n", stderr);
	} else if (a->o->dry_run) {
		plan_print(&p, stdout);
	} else {
		char *question = xasprintf("Remove these %zu boxes?", p.n);
		rc = confirm(a, question, err);
		free(question);
		if (rc == 0)
			rc = run_plan(a, &p, err) == STEP_OK ? 0 : -1;
		for (size_t i = 0; rc == 0 && i < states.n; i++)
			state_forget(states.v[i]);
	}
	strv_clear(&states);
	plan_clear(&p);
	return rc;
}

static int cmd_build(struct app *a, struct gb_error *err)
{
	if (!a->settings.containerfile.value)
		return gb_fail(err, EXIT_BOX_CONFIG,
		               "there is no containerfile to build: add %s to the project or set "
		               "\"containerfile\" in the settings",
		               PROJECT_CONTAINERFILE);
	struct plan p = PLAN_INIT;
	podman_build_argv(a->podman, a->settings.containerfile.value, a->image,
	                  a->settings.image.value, plan_add(&p, STEP_BUILD));
	int rc = 0;
	if (a->o->dry_run)
		plan_print(&p, stdout);
	else if (run_plan(a, &p, err) != STEP_OK)
		rc = -1;
	else
		fprintf(stderr, "gemini-box: built %s\n", a->image);
	plan_clear(&p);
	return rc;
}

static int cmd_config(struct app *a)
{
	if (a->o->json) {
		char *text = settings_to_json(&a->settings);
		printf("%s\n", text);
		free(text);
		return 0;
	}
	char *dir = shell_quote(a->dir);
	char *user = shell_quote(a->user_file);
	char *project = shell_quote(a->project_file);
	printf("%-16s = %s\n%-16s = %s\n%-16s = %s\n%-16s = %s\n", "box", a->name, "directory", dir,
	       "user file", user, "project file", project);
	free(project);
	free(user);
	free(dir);
	settings_print(&a->settings, stdout);
	return 0;
}

/* ---- --box-trust ---- */

/* Writes text that came with a repository so that it cannot drive the
 * terminal: control characters (escape sequences above all), C1 controls
 * and bytes that are not UTF-8 are shown as \xNN; newlines and tabs stay. */
static void print_untrusted(FILE *out, const char *text)
{
	const unsigned char *c = (const unsigned char *)text;
	while (*c) {
		size_t len = *c < 0x80                 ? 1
		             : *c >= 0xc2 && *c < 0xe0 ? 2
		             : *c >= 0xe0 && *c < 0xf0 ? 3
		             : *c >= 0xf0 && *c < 0xf5 ? 4
		                                       : 0;
		bool ok = len > 0;
		for (size_t k = 1; ok && k < len; k++)
			ok = (c[k] & 0xc0) == 0x80;
		if (ok && len == 1 && ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f))
			ok = false;
		if (ok && len == 2 && *c == 0xc2 && c[1] < 0xa0)
			ok = false; /* C1 controls, U+0080 to U+009F */
		if (ok && len > 1) {
			char one[5] = { 0 };
			memcpy(one, c, len);
			ok = utf8_valid(one);
		}
		if (!ok) {
			fprintf(out, "\\x%02x", *c);
			c++;
			continue;
		}
		fwrite(c, 1, len, out);
		c += len;
	}
}

static void show_file(FILE *out, const char *title, const char *path, const char *text)
{
	char *q = shell_quote(path);
	fprintf(out, "--- %s: %s\n", title, q);
	free(q);
	print_untrusted(out, text);
	if (*text && text[strlen(text) - 1] != '\n')
		fputc('\n', out);
}

/* Shows what the project's settings file and containerfile ask for, and
 * records the user's approval of exactly that content. */
static int cmd_trust(struct app *a, struct gb_error *err)
{
	if (!a->project_text && !a->settings.containerfile.value) {
		char *q = shell_quote(a->dir);
		fprintf(stderr, "gemini-box: %s has no %s and no %s; nothing to approve\n", q,
		        PROJECT_SETTINGS, PROJECT_CONTAINERFILE);
		free(q);
		return 0;
	}
	char *settings, *containerfile;
	if (current_approval(a, &settings, &containerfile, err) < 0)
		return -1;
	struct approval now = { a->dir, settings, containerfile };
	char *record = approval_record(&now);
	char *recorded = approval_read(a->approval_file);
	char *change = recorded ? approval_difference(recorded, &now) : NULL;
	bool already = recorded && !change;
	free(recorded);
	free(containerfile);
	free(settings);

	char *dir = shell_quote(a->dir);
	printf("Project %s (box %s) asks for the following.\n", dir, a->name);
	if (a->project_text)
		show_file(stdout, "settings file", a->project_file, a->project_text);
	const struct str_setting *cf = &a->settings.containerfile;
	if (cf->value && cf->origin.kind == ORIGIN_PROJECT) {
		char *cf_text = NULL;
		if (read_settings_file(cf->value, &cf_text, err) < 0) {
			free(dir);
			free(change);
			free(record);
			return -1;
		}
		show_file(stdout, "containerfile (builds the image; its directory is the context)",
		          cf->value, cf_text ? cf_text : "");
		free(cf_text);
	}
	printf("---\n");
	fflush(stdout);
	int rc = 0;
	if (already) {
		fprintf(stderr, "gemini-box: %s is approved as it is; nothing changed\n", dir);
	} else {
		char *question = xasprintf(
		        "%sApprove? The project may then choose the image that gets your keys, "
		        "mount "
		        "paths outside itself, add podman arguments and more, until these files "
		        "change.",
		        change ? "Changed since your approval: " : "");
		if (change) {
			free(question);
			question = xasprintf(
			        "%s changed since your approval. Approve it as it is now? "
			        "The project may then choose the image that gets your "
			        "keys, mount paths outside itself, add podman arguments "
			        "and more, until these files change.",
			        change);
		}
		rc = confirm(a, question, err);
		free(question);
		if (rc == 0 && a->o->dry_run) {
			char *q = shell_quote(a->approval_file);
			printf("# --box-dry-run: would record the approval in %s\n", q);
			free(q);
		} else if (rc == 0 && approval_write(a->approval_file, record, err) == 0) {
			fprintf(stderr,
			        "gemini-box: approved %s; a change to either file needs your "
			        "approval "
			        "again\n",
			        dir);
		} else {
			rc = -1;
		}
	}
	free(dir);
	free(change);
	free(record);
	return rc;
}

/* ---- --box-doctor ---- */

struct doctor {
	int fails;
};

static void report(struct doctor *d, enum check_level level, const char *what, const char *fix)
{
	check_print(stdout, level, what, fix);
	if (level == CHECK_FAIL)
		d->fails++;
}

static char *read_small_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	struct strv lines = STRV_INIT;
	char buf[512];
	while (fgets(buf, sizeof(buf), f))
		strv_push(&lines, buf);
	fclose(f);
	char *text = strv_join(&lines, "");
	strv_clear(&lines);
	return text;
}

static void doctor_subids(struct doctor *d)
{
	struct passwd *pw = getpwuid(getuid());
	const char *user = pw ? pw->pw_name : "?";
	const char *files[] = { "/etc/subuid", "/etc/subgid" };
	for (size_t i = 0; i < 2; i++) {
		char *text = read_small_file(files[i]);
		bool ok = text && subid_has_range(text, user, (unsigned long)getuid());
		char *what = xasprintf("%s: %s range for %s", files[i], ok ? "a" : "no", user);
		char *fix = ok ? NULL
		               : xasprintf("as root: usermod --add-subuids 100000-165535 "
		                           "--add-subgids 100000-165535 %s",
		                           user);
		report(d, ok ? CHECK_OK : CHECK_FAIL, what, fix);
		free(fix);
		free(what);
		free(text);
	}
}

static void doctor_tun(struct doctor *d, bool needed)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		report(d, CHECK_OK, "/dev/net/tun is usable (isolated networking)", NULL);
		return;
	}
	char *what = xasprintf("/dev/net/tun: %s", strerror(errno));
	report(d, needed ? CHECK_FAIL : CHECK_WARN, what,
	       errno == ENOENT ? "load the tun module (modprobe tun)"
	                       : "as root: chmod 666 /dev/net/tun (slirp4netns needs it for an "
	                         "isolated box's network)");
	free(what);
}

/* podman info: cgroups, OCI runtime, storage driver. */
static void doctor_podman_info(struct doctor *d, const struct app *a)
{
	const char *words[] = { "info", "--format", "json", NULL };
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	if (query(a, words, &r, &e) < 0) {
		report(d, CHECK_FAIL, e.msg, NULL);
		gb_error_clear(&e);
		return;
	}
	cJSON *root = r.status == 0 ? cJSON_Parse(r.out) : NULL;
	if (!root) {
		char *msg = podman_message(r.err);
		char *what = xasprintf("podman info fails: %s", msg);
		report(d, CHECK_FAIL, what, "see podman info's own output");
		free(what);
		free(msg);
		run_result_clear(&r);
		return;
	}
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
	const cJSON *store = cJSON_GetObjectItemCaseSensitive(root, "store");
	const cJSON *cg = cJSON_GetObjectItemCaseSensitive(host, "cgroupVersion");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(host, "ociRuntime"), "name");
	const cJSON *drv = cJSON_GetObjectItemCaseSensitive(store, "graphDriverName");
	const char *cgroups = cJSON_IsString(cg) ? cg->valuestring : "?";
	const char *runtime = cJSON_IsString(rt) ? rt->valuestring : "?";
	const char *driver = cJSON_IsString(drv) ? drv->valuestring : "?";
	struct stat st;
	bool hybrid = strcmp(cgroups, "v1") == 0 && stat("/sys/fs/cgroup/unified", &st) == 0;
	char *what = xasprintf("cgroups %s%s, OCI runtime %s", cgroups, hybrid ? " (hybrid)" : "",
	                       runtime);
	if (hybrid && strcmp(runtime, "crun") == 0)
		report(d, CHECK_FAIL, what,
		       "crun refuses hybrid cgroups: put [engine] runtime = \"runc\" in "
		       "~/.config/containers/containers.conf");
	else
		report(d, CHECK_OK, what, NULL);
	free(what);
	what = xasprintf("storage driver %s", driver);
	if (strcmp(driver, "vfs") == 0)
		report(d, CHECK_WARN, what,
		       "vfs copies the whole image into every new box (slow creation): install "
		       "fuse-overlayfs");
	else
		report(d, CHECK_OK, what, NULL);
	free(what);
	cJSON_Delete(root);
	run_result_clear(&r);
}

/* A real connection from inside the box to the companion's port. */
static void doctor_ide(struct doctor *d, const struct app *a, enum box_state state)
{
	const char *port = nonempty_env(a, "GEMINI_CLI_IDE_SERVER_PORT");
	if (!port) {
		report(d, CHECK_OK,
		       "no IDE companion in this environment (GEMINI_CLI_IDE_SERVER_PORT)", NULL);
		return;
	}
	if (!a->settings.ide.value) {
		report(d, CHECK_OK, "IDE variables withheld (\"ide\": false)", NULL);
		return;
	}
	if (!host_ide(a)) {
		char *what = xasprintf("the IDE companion (port %s) is unreachable from a box with "
		                       "network \"%s\"",
		                       port, a->settings.network.value);
		report(d, CHECK_WARN, what,
		       "set \"network\": \"host\" in your config.json, then gemini-box "
		       "--box-recreate");
		free(what);
		return;
	}
	if (state != BOX_RUNNING) {
		report(d, CHECK_WARN,
		       "cannot probe the IDE companion from a box that is not running",
		       "run gemini-box once, then --box-doctor again");
		return;
	}
	/* nc in busybox images, node in gemini's own. */
	static const char probe[] =
	        "if command -v nc >/dev/null 2>&1; then nc -w 2 127.0.0.1 \"$1\" </dev/null; "
	        "elif command -v node >/dev/null 2>&1; then node -e "
	        "'require(\"net\").connect(+process.argv[1],\"127.0.0.1\")"
	        ".on(\"connect\",()=>process.exit(0)).on(\"error\",()=>process.exit(1))' "
	        "\"$1\"; else exit 3; fi";
	struct strv argv = STRV_INIT;
	const char *args[] = { port, NULL };
	podman_box_sh_argv(a->podman, a->name, probe, "probe", args, &argv);
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	int rc = run_in(a, argv.v, CHILD_CAPTURE, &r, &e) == 0 ? r.status : -1;
	if (rc >= 0)
		run_result_clear(&r);
	gb_error_clear(&e);
	strv_clear(&argv);
	char *what = xasprintf("IDE companion at 127.0.0.1:%s, probed from inside the box", port);
	if (rc == 0)
		report(d, CHECK_OK, what, NULL);
	else if (rc == 3)
		report(d, CHECK_WARN, what, "cannot probe: the box has neither nc nor node");
	else
		report(d, CHECK_FAIL, what,
		       "not reachable: is the IDE window open, and GEMINI_CLI_IDE_SERVER_PORT "
		       "current?");
	free(what);
}

static int cmd_doctor(struct app *a)
{
	struct doctor d = { 0 };
	struct gb_error e = GB_ERROR_INIT;
	bool have_podman = find_podman(a, &e) == 0;
	if (have_podman) {
		const char *words[] = { "--version", NULL };
		struct run_result r;
		if (query(a, words, &r, &e) == 0 && r.status == 0) {
			r.out[strcspn(r.out, "\n")] = '\0';
			char *what = xasprintf("%s (%s)", r.out, a->podman);
			report(&d, CHECK_OK, what, NULL);
			free(what);
			run_result_clear(&r);
		} else {
			report(&d, CHECK_FAIL, "podman --version fails", "reinstall podman");
			have_podman = false;
		}
	} else {
		report(&d, CHECK_FAIL, e.msg, NULL);
	}
	gb_error_clear(&e);
	if (geteuid() == 0)
		report(&d, CHECK_WARN, "running as root: boxes are rootful, without keep-id",
		       "run gemini-box as your own user");
	else
		report(&d, CHECK_OK, "rootless", NULL);
	doctor_subids(&d);

	bool settled = resolve_home(a, &e) == 0 && resolve_dirs(a, &e) == 0 &&
	               resolve_gemini_home(a, false, &e) == 0 && load_settings(a, &e) == 0 &&
	               resolve_image(a, &e) == 0 && resolve_runtime_paths(a, &e) == 0;
	if (!settled) {
		report(&d, CHECK_FAIL, e.msg, NULL);
		gb_error_clear(&e);
	}
	doctor_tun(&d, !settled || strcmp(a->settings.network.value, "isolated") == 0);
	if (have_podman)
		doctor_podman_info(&d, a);

	enum box_state state = BOX_ABSENT;
	if (have_podman && settled) {
		char *what = xasprintf("image %s", a->image);
		if (image_present(a, a->image))
			report(&d, CHECK_OK, what, NULL);
		else
			report(&d, CHECK_WARN, what,
			       a->build_needed ? "not built yet: the first run builds it"
			                       : "not here: the first run pulls it");
		free(what);
		struct box_info info;
		if (inspect_box(a, &info, &e) == 0) {
			state = info.state;
			struct strv drift = STRV_INIT;
			if (info.state != BOX_ABSENT)
				settings_digest_diff(info.label_settings, a->digest, &drift);
			char *keys = strv_join(&drift, ", ");
			what = xasprintf("box %s: %s%s%s", a->name,
			                 info.state == BOX_ABSENT
			                         ? "absent (the next run creates it)"
			                         : info.status,
			                 drift.n ? ", settings drifted: " : "", keys);
			report(&d, drift.n ? CHECK_WARN : CHECK_OK, what,
			       drift.n ? "gemini-box --box-recreate applies them" : NULL);
			free(what);
			free(keys);
			strv_clear(&drift);
			box_info_clear(&info);
		} else {
			report(&d, CHECK_FAIL, e.msg, NULL);
			gb_error_clear(&e);
		}
		doctor_ide(&d, a, state);
	}
	char *runsc = find_executable("runsc", env_value(a, "PATH"));
	bool wants_runsc = settled && runtime_is_runsc(&a->settings);
	if (runsc)
		report(&d, CHECK_OK, "runsc (gVisor) is installed", NULL);
	else
		report(&d, wants_runsc ? CHECK_FAIL : CHECK_WARN, "runsc (gVisor) is not installed",
		       wants_runsc
		               ? "the settings ask for it: apt-get install runsc"
		               : "only \"runtime\": \"runsc\" needs it (apt-get install runsc)");
	free(runsc);
	a->exit_status = d.fails ? 1 : 0;
	return 0;
}

int command_run(const struct box_options *o, struct gb_error *err)
{
	struct app a = { .o = o, .envp = environ, .env = RUN_ENV_INIT };
	bool every_box = o->command == CMD_LIST || o->command == CMD_PRUNE;
	int rc = -1;

	if (o->command == CMD_DOCTOR) {
		rc = cmd_doctor(&a);
		goto out;
	}
	if (o->command != CMD_CONFIG && find_podman(&a, err) < 0)
		goto out;
	if (every_box) {
		rc = o->command == CMD_LIST ? cmd_list(&a, err) : cmd_prune(&a, err);
		goto out;
	}
	bool runs = o->command == CMD_RUN || o->command == CMD_SHELL || o->command == CMD_RECREATE;
	if (o->command == CMD_TRUST) {
		/* The files are read as if approved, to show and check them. */
		if (resolve_home(&a, err) == 0 && resolve_dirs(&a, err) == 0 &&
		    load_project(&a, err) == 0 && merge_all(&a, true, err) == 0)
			rc = cmd_trust(&a, err);
		goto out;
	}
	if (resolve_home(&a, err) < 0 || resolve_dirs(&a, err) < 0 ||
	    resolve_gemini_home(&a, runs && !o->dry_run, err) < 0 || load_settings(&a, err) < 0 ||
	    resolve_image(&a, err) < 0 || resolve_runtime_paths(&a, err) < 0)
		goto out;

	switch (o->command) {
	case CMD_RUN: rc = cmd_run(&a, err); break;
	case CMD_SHELL: rc = cmd_shell(&a, err); break;
	case CMD_STATUS: rc = cmd_status(&a, err); break;
	case CMD_STOP: rc = act_on_box(&a, STEP_STOP, false, err); break;
	case CMD_RM: rc = act_on_box(&a, STEP_REMOVE, true, err); break;
	case CMD_RECREATE: rc = cmd_recreate(&a, err); break;
	case CMD_BUILD: rc = cmd_build(&a, err); break;
	case CMD_CONFIG: rc = cmd_config(&a); break;
	default: rc = gb_fail(err, EXIT_BOX_INTERNAL, "unhandled command"); break;
	}
out:
	app_clear(&a);
	if (rc == 0 && fflush(stdout) != 0)
		rc = gb_fail(err, EXIT_BOX_INTERNAL, "cannot write to standard output");
	return rc < 0 ? -1 : a.exit_status;
}
