/* plan: the podman commands one run needs, computed from what was asked and
 * what was observed, without running anything. */
#ifndef GEMINI_BOX_PLAN_H
#define GEMINI_BOX_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "strv.h"

enum box_state {
	BOX_ABSENT,
	BOX_STOPPED, /* created, exited, stopped: needs podman start */
	BOX_PAUSED,
	BOX_RUNNING,
};

/* Everything a box and a run into it are made of. Pointers are borrowed. */
struct box_spec {
	const char *podman;  /* podman executable */
	const char *name;    /* box name */
	const char *dir;     /* canonical box directory, mounted at the same path */
	const char *workdir; /* where gemini runs, inside dir */
	const char *image;
	const char *version;     /* gemini-box's, recorded in a label */
	const char *gemini_home; /* host ~/.gemini (canonical), mounted at box_home/.gemini */
	const char *box_home;    /* the image user's home, /home/node */
	const char *box_user;    /* the image user as uid:gid, 1000:1000 */
	bool rootless;           /* keep-id only works rootless */
	bool tty;
	char *const *env_names; /* forwarded by name only */
	size_t n_env;
	char *const *gemini_args;
	size_t n_args;
};

enum step_kind { STEP_PULL, STEP_CREATE, STEP_START, STEP_UNPAUSE, STEP_EXEC };

struct step {
	enum step_kind kind;
	struct strv argv;
};

#define PLAN_MAX_STEPS 4

/* The steps in order; the last is always STEP_EXEC, which replaces gemini-box. */
struct plan {
	struct step steps[PLAN_MAX_STEPS];
	size_t n;
};

void plan_build(const struct box_spec *spec, enum box_state state, bool image_present,
                struct plan *plan);
void plan_clear(struct plan *plan);
/* Writes each step as one shell-quoted line. */
void plan_print(const struct plan *plan, FILE *out);

/* The argv of each kind of step (podman first). */
void podman_pull_argv(const struct box_spec *spec, struct strv *argv);
void podman_create_argv(const struct box_spec *spec, struct strv *argv);
void podman_start_argv(const struct box_spec *spec, struct strv *argv);
void podman_unpause_argv(const struct box_spec *spec, struct strv *argv);
void podman_exec_argv(const struct box_spec *spec, struct strv *argv);

/* A --mount value binding source to target, quoted as podman's CSV parser
 * needs so that commas, quotes and newlines in paths survive. */
char *bind_mount_arg(const char *source, const char *target, bool readonly);

#endif
