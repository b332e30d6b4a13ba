#define _GNU_SOURCE
/* context: what one invocation observed about the caller before any podman
 * call: its directories, podman, the settings that apply, the box's name and
 * paths, and what each run carries into the box. The caller's environment is
 * read from ctx->envp and never changed. */
#include "context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pwd.h>

#include "boxid.h"
#include "boxinit.h"
#include "build.h"
#include "envsel.h"
#include "fsutil.h"
#include "load.h"
#include "localimage.h"
#include "podman.h"
#include "quote.h"
#include "strv.h"

void context_clear(struct context *ctx)
{
	free(ctx->podman);
	free(ctx->cwd);
	free(ctx->home);
	free(ctx->data_home);
	free(ctx->dir);
	free(ctx->gemini_home);
	free(ctx->user_file);
	free(ctx->project_file);
	free(ctx->project_text);
	free(ctx->approval);
	free(ctx->approval_file);
	free(ctx->approval_change);
	settings_clear(&ctx->settings);
	free(ctx->image);
	free(ctx->digest);
	free(ctx->init_copy);
	free(ctx->ide_dir);
	free(ctx->state);
	free(ctx->record);
	free(ctx->box_init);
	free(ctx->box_state);
	free(ctx->env_file);
	free(ctx->context_digest);
	free(ctx->context_digest_of);
	run_env_clear(&ctx->env);
	protection_clear(&ctx->protect);
}

/* A variable of the caller's environment, or NULL when unset. */
const char *context_env(const struct context *ctx, const char *name)
{
	return env_lookup(ctx->envp, name);
}

const char *context_env_nonempty(const struct context *ctx, const char *name)
{
	const char *v = context_env(ctx, name);
	return v && *v ? v : NULL;
}

int find_podman(struct context *ctx, struct gb_error *err)
{
	const char *name = context_env_nonempty(ctx, "GEMINI_BOX_PODMAN");
	if (!name)
		name = "podman";
	ctx->podman = find_executable(name, context_env(ctx, "PATH"));
	if (ctx->podman)
		return 0;
	char *q = shell_quote(name);
	gb_fail(err, EXIT_BOX_NOPODMAN,
	        "podman not found (%s); install it (apt-get install podman) or set "
	        "GEMINI_BOX_PODMAN to its path",
	        q);
	free(q);
	return -1;
}

int resolve_home(struct context *ctx, struct gb_error *err)
{
	const char *home = context_env_nonempty(ctx, "HOME");
	if (!home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return gb_fail(err, EXIT_BOX_NODIR, "cannot tell your home directory; set HOME");
	ctx->home = realpath(home, NULL);
	if (!ctx->home)
		return gb_fail_path(err, EXIT_BOX_NODIR, "home directory", home, strerror(errno));
	const char *xdg = context_env_nonempty(ctx, "XDG_DATA_HOME");
	ctx->data_home = xdg ? xstrdup(xdg) : xasprintf("%s/.local/share", ctx->home);
	return 0;
}

int resolve_dirs(struct context *ctx, struct gb_error *err)
{
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return gb_fail(
		        err, EXIT_BOX_NODIR,
		        "cannot read the current directory (%s); cd into an existing directory",
		        strerror(errno));
	ctx->cwd = realpath(cwd, NULL);
	free(cwd);
	if (!ctx->cwd)
		return gb_fail_errno(err, EXIT_BOX_NODIR, errno,
		                     "cannot resolve the current directory");

	if (ctx->o->dir) {
		ctx->dir = realpath(ctx->o->dir, NULL);
		if (!ctx->dir)
			return gb_fail_path(err, EXIT_BOX_NODIR, "--box-dir", ctx->o->dir,
			                    "no such directory; give an existing directory");
	} else {
		ctx->dir = box_dir_find(ctx->cwd, ctx->home, geteuid());
	}
	struct stat st;
	if (stat(ctx->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return gb_fail_path(err, EXIT_BOX_NODIR, "box directory", ctx->dir,
		                    "not a directory; give a directory with --box-dir");
	if (access(ctx->dir, R_OK | X_OK) < 0)
		return gb_fail_path(err, EXIT_BOX_NODIR, "box directory", ctx->dir,
		                    "not readable; check its permissions");
	/* The project is mounted read-write: home (with ~/.ssh) or anything
	 * holding it never is. */
	if (path_is_within(ctx->home, ctx->dir))
		return gb_fail_path(err, EXIT_BOX_NODIR, "will not mount", ctx->dir,
		                    strcmp(ctx->dir, ctx->home) == 0
		                            ? "it is your home directory (with ~/.ssh and your "
		                              "settings); cd into a project, or give one with "
		                              "--box-dir"
		                            : "it holds your home directory (with ~/.ssh and your "
		                              "settings); cd into a project, or give one with "
		                              "--box-dir");
	box_name(ctx->dir, ctx->name);
	return 0;
}

/* ~/.gemini holds gemini's settings and credentials; the box sees it through
 * an overlay, with tmp/ and history/ shared (plan.h). */
int resolve_gemini_home(struct context *ctx, bool create, struct gb_error *err)
{
	char *path = xasprintf("%s/.gemini", ctx->home);
	if (create && mkdir(path, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		gb_fail_path(err, EXIT_BOX_NODIR, "cannot create", path, strerror(e));
		free(path);
		return -1;
	}
	ctx->gemini_home = realpath(path, NULL);
	if (!ctx->gemini_home) {
		if (!create) { /* a dry run shows where it would be */
			ctx->gemini_home = path;
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
	if (strpbrk(ctx->gemini_home, ":,"))
		return gb_fail_path(err, EXIT_BOX_NODIR, "cannot share", ctx->gemini_home,
		                    "podman cannot overlay a path holding ':' or ','; move "
		                    "~/.gemini (or your home) to a path without one");
	return 0;
}

/* Whether gemini in the box can reach an IDE companion on the host's loopback. */
bool host_ide(const struct context *ctx)
{
	return ctx->settings.ide.value && strcmp(ctx->settings.network.value, "host") == 0;
}

/* The IDE port-file directory to share, when it is there and ours. gemini-box
 * never makes it: the companion does, at its first start. */
void resolve_ide_dir(struct context *ctx, bool say)
{
	if (!host_ide(ctx))
		return;
	/* Where the companion writes its port files: os.tmpdir()/gemini/ide. */
	const char *tmp = context_env_nonempty(ctx, "TMPDIR");
	char *parent = xasprintf("%s/gemini", tmp ? tmp : "/tmp");
	char *dir = xasprintf("%s/ide", parent);
	struct stat st;
	/* ours alone, and not a link: another user may have made /tmp/gemini first */
	if (dir_is_ours(parent, 022) && dir_is_ours(dir, 022)) {
		free(ctx->ide_dir);
		ctx->ide_dir = dir;
		dir = NULL;
	} else if (say) {
		char *q = shell_quote(dir);
		bool absent = lstat(dir, &st) < 0 && errno == ENOENT;
		gb_warn("%s %s, so a new box does not share the IDE companion's port "
		        "files; %s",
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
const char *containerfile_digest(struct context *ctx, struct gb_error *err)
{
	const char *cf = ctx->settings.containerfile.value;
	if (ctx->context_digest && strcmp(ctx->context_digest_of, cf) == 0)
		return ctx->context_digest;
	free(ctx->context_digest);
	free(ctx->context_digest_of);
	ctx->context_digest = NULL;
	ctx->context_digest_of = xstrdup(cf);
	/* Private to the user and in no box: the approval trusts what it says. */
	char *dir = xasprintf("%s/gemini-box/cache", ctx->data_home);
	char *parent = xasprintf("%s/gemini-box", ctx->data_home);
	mkdir(parent, 0700);
	mkdir(dir, 0700);
	char *cache = xasprintf("%s/%s.context", dir, ctx->name);
	int rc = build_context_digest(cf, cache, &ctx->context_digest, err);
	free(cache);
	free(parent);
	free(dir);
	return rc == 0 ? ctx->context_digest : NULL;
}

/* "gemini_version" names the official image of that release, unless
 * someone set "image" itself. */
static void apply_gemini_version(struct settings *s)
{
	if (!s->gemini_version.value || s->image.origin.kind != ORIGIN_DEFAULT)
		return;
	free(s->image.value);
	s->image.value = xasprintf("%s:%s", SANDBOX_IMAGE_REPO, s->gemini_version.value);
	s->image.origin = s->gemini_version.origin;
}

int resolve_image(struct context *ctx, struct gb_error *err)
{
	apply_gemini_version(&ctx->settings);
	struct settings *st = &ctx->settings;
	if (local_image_selected(st->image.value)) {
		/* "local": gemini-box's own image of the release, made when missing */
		free(st->image.value);
		st->image.value =
		        local_image_tag(st->gemini_version.value ? st->gemini_version.value
		                                                 : DEFAULT_GEMINI_VERSION);
		ctx->local_needed = true;
	}
	if (ctx->settings.containerfile.value) {
		const char *digest = containerfile_digest(ctx, err);
		if (!digest)
			return -1;
		ctx->image = build_tag_for(digest, ctx->settings.image.value);
		ctx->build_needed = true; /* until podman says the tag exists */
	} else {
		ctx->image = xstrdup(ctx->settings.image.value);
	}
	resolve_ide_dir(ctx, false);
	/* The digest covers the image actually used, so a rebuilt image is drift. */
	struct settings copy = ctx->settings;
	struct str_setting image = { ctx->image, ctx->settings.image.origin };
	copy.image = image;
	ctx->digest = settings_creation_digest(&copy, init_id(), ctx->ide_dir != NULL);
	return 0;
}

/* Where this box's init and state directory are, and what of the project
 * it protects; nothing is made here. */
int resolve_runtime_paths(struct context *ctx, struct gb_error *err)
{
	ctx->init_copy = init_copy_path(ctx->data_home);
	ctx->record = state_record(ctx->dir, ctx->digest, ctx->init_copy);
	struct strv extra = STRV_INIT;
	for (size_t i = 0; i < ctx->settings.protected_paths.n; i++)
		strv_push(&extra, ctx->settings.protected_paths.v[i].value);
	protection_of(ctx->dir, &extra, &ctx->protect);
	strv_clear(&extra);
	return state_dir(ctx->name, false, &ctx->state, err);
}

/* What this run carries into the box (runenv.h). */
int prepare_env(struct context *ctx, struct gb_error *err)
{
	struct run_env_input in = {
		.settings = &ctx->settings,
		.envp = ctx->envp,
		.ide_reachable = host_ide(ctx),
		.session = ctx->session[0] ? ctx->session : NULL,
	};
	return run_env_build(&in, &ctx->env, err);
}

struct box_spec context_spec(const struct context *ctx, bool tty)
{
	const struct box_options *o = ctx->o;
	struct box_spec spec = {
		.podman = ctx->podman,
		.name = ctx->name,
		.dir = ctx->dir,
		/* gemini runs where it was typed, unless that is outside the box. */
		.workdir = path_is_within(ctx->cwd, ctx->dir) ? ctx->cwd : ctx->dir,
		.image = ctx->image,
		.version = GEMINI_BOX_VERSION,
		.gemini_home = ctx->gemini_home,
		.settings = &ctx->settings,
		.settings_digest = ctx->digest,
		.init = ctx->init_copy,
		.state_dir = ctx->state,
		.ide_dir = ctx->ide_dir,
		.protect = &ctx->protect,
		.rootless = geteuid() != 0,
		.tty = tty,
		.env_names = ctx->env.names.v,
		.n_env = ctx->env.names.n,
		.env_file = ctx->env.fixed.n ? ctx->env_file : NULL,
		.gemini_args = o->gemini_args.v,
		.n_args = o->gemini_args.n,
	};
	return spec;
}

int context_prepare(struct context *ctx, unsigned needs, struct gb_error *err)
{
	if ((needs & NEEDS_PODMAN) && find_podman(ctx, err) < 0)
		return -1;
	if (!(needs & (NEEDS_DIR | NEEDS_SETTINGS)))
		return 0;
	if (resolve_home(ctx, err) < 0 || resolve_dirs(ctx, err) < 0)
		return -1;
	if (!(needs & NEEDS_SETTINGS))
		return 0;
	bool make_gemini_home = (needs & NEEDS_GEMINI_HOME) && !ctx->o->dry_run;
	if (resolve_gemini_home(ctx, make_gemini_home, err) < 0 || load_settings(ctx, err) < 0 ||
	    resolve_image(ctx, err) < 0 || resolve_runtime_paths(ctx, err) < 0)
		return -1;
	return 0;
}
