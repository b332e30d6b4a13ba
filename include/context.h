/* context: what one invocation observed about the caller before any podman
 * call (directories, podman, the settings that apply, the box's name and
 * paths), and what each run carries into the box. Commands get it prepared
 * as their table row asks (main.c). The caller's environment is read from
 * envp, never changed: children get it as it came (spawn.h). */
#ifndef GEMINI_BOX_CONTEXT_H
#define GEMINI_BOX_CONTEXT_H

#include <stdbool.h>

#include "args.h"
#include "boxid.h"
#include "error.h"
#include "plan.h"
#include "protect.h"
#include "runenv.h"
#include "session.h"
#include "settings.h"

#ifndef GEMINI_BOX_VERSION
#define GEMINI_BOX_VERSION "0.0.0-dev"
#endif

#define PROJECT_SETTINGS      ".gemini/gemini-box.json"
#define PROJECT_CONTAINERFILE ".gemini/sandbox.Dockerfile"

struct context {
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
	bool local_needed; /* the image is the local one (localimage.h), until podman has it */
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
	char *context_digest;             /* build_context_digest of context_digest_of */
	char *context_digest_of;          /* the containerfile it was computed for */
	int exit_status;                  /* the session's, once it ran */
};

/* What a command needs prepared before it runs. */
enum context_needs {
	NEEDS_PODMAN = 1,      /* podman found */
	NEEDS_DIR = 2,         /* home and the box directory */
	NEEDS_SETTINGS = 4,    /* and the settings, the image, the box's paths */
	NEEDS_GEMINI_HOME = 8, /* and ~/.gemini made (unless a dry run) */
};

/* Fills ctx as needs asks, in order: podman, directories, settings. */
int context_prepare(struct context *ctx, unsigned needs, struct gb_error *err);
void context_clear(struct context *ctx);

/* A variable of the caller's environment, or NULL; _nonempty: NULL when empty. */
const char *context_env(const struct context *ctx, const char *name);
const char *context_env_nonempty(const struct context *ctx, const char *name);

int find_podman(struct context *ctx, struct gb_error *err);
int resolve_home(struct context *ctx, struct gb_error *err);
/* The box directory (never home, "/" or what holds home) and its name. */
int resolve_dirs(struct context *ctx, struct gb_error *err);
int resolve_gemini_home(struct context *ctx, bool create, struct gb_error *err);
int resolve_image(struct context *ctx, struct gb_error *err);
/* The settings' containerfile's context digest (build.h), computed once per
 * run and cached across runs in the user's data directory. */
const char *containerfile_digest(struct context *ctx, struct gb_error *err);
int resolve_runtime_paths(struct context *ctx, struct gb_error *err);
/* The IDE port-file directory to share, when it is there and ours; with say,
 * one line when it is not. */
void resolve_ide_dir(struct context *ctx, bool say);
/* Whether gemini in the box can reach an IDE companion on the host's loopback. */
bool host_ide(const struct context *ctx);
/* What this run carries into the box (runenv.h). */
int prepare_env(struct context *ctx, struct gb_error *err);
struct box_spec context_spec(const struct context *ctx, bool tty);

#endif
