/* plan: the podman commands one gemini-box invocation needs, computed from
 * what was asked, the settings and what was observed, without running
 * anything. --box-dry-run prints a plan; the imperative shell runs it. */
#ifndef GEMINI_BOX_PLAN_H
#define GEMINI_BOX_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "protect.h"
#include "settings.h"
#include "strv.h"

enum box_state {
	BOX_ABSENT,
	BOX_STOPPED, /* created, exited, stopped: needs podman start */
	/* "initialized": a podman run or start cut short left the runtime's
	 * container made but never started, and podman start fails on it until
	 * podman stop resets it */
	BOX_STUCK,
	BOX_PAUSED,
	BOX_RUNNING,
};

/* Everything a box and a run into it are made of. Pointers are borrowed. */
struct box_spec {
	const char *podman;      /* podman executable */
	const char *name;        /* box name */
	const char *dir;         /* canonical box directory, mounted at the same path */
	const char *workdir;     /* where gemini runs, inside dir */
	const char *image;       /* the image to create from (built or configured) */
	const char *version;     /* gemini-box's, recorded in a label */
	const char *gemini_home; /* host ~/.gemini (canonical), mounted at home/.gemini */
	const struct settings *settings;
	const char *settings_digest; /* recorded in a label, to see drift */
	const char *init;            /* host path of the box's init (gemini-box-init) */
	const char *state_dir;       /* host path of the box's state directory (labelled) */
	const char *ide_dir;         /* the IDE companion's port-file directory to share, or NULL */
	const struct protection *protect; /* read-only and pinned paths of the project */
	bool rootless;                    /* keep-id only works rootless */
	bool tty;
	char *const *env_names; /* forwarded by name only */
	size_t n_env;
	const char *env_file; /* the run's env file (values), or NULL */
	char *const *gemini_args;
	size_t n_args;
};

enum step_kind {
	/* on the host, before podman (run by gemini-box itself; printed as the
	 * shell command that does the same) */
	STEP_MKDIR,       /* path: a private directory (mode 0700) */
	STEP_STATE,       /* path: the box's state directory and its lock */
	STEP_INSTALL,     /* path: the init copy, written from gemini-box's own bytes */
	STEP_WRITE_ENV,   /* path: the run's env file, text its content (mode 0600) */
	STEP_WRITE_ALLOW, /* path: the egress allow file, text its rules (replaced, mode 0600) */
	STEP_PROXY,       /* path: the state directory whose egress proxy must run; text:
	                   * gemini-box's own path */
	STEP_RECORD,      /* path: the state directory, told the id of the box just created */
	STEP_REMOVE_FILE, /* path: removed after the session */
	/* podman, and the programs that make images with it */
	STEP_ROOTFS, /* mmdebstrap: the local image's root file system */
	STEP_IMPORT, /* podman import of it */
	STEP_BUILD,
	STEP_PULL,
	STEP_CREATE, /* podman run --detach: the box made and started */
	STEP_START,
	STEP_UNPAUSE,
	STEP_STOP,
	STEP_REMOVE,
	STEP_PROBE, /* podman exec of a check whose failure is a warning (IDE stdio command) */
	STEP_EXEC,  /* the session: gemini-box waits for it, relaying signals */
};

struct step {
	enum step_kind kind;
	struct strv argv; /* podman's argv; for a host step, the shell command printed */
	char *path;       /* a host step's path */
	char *text;       /* STEP_WRITE_ENV: the content; STEP_INSTALL: the source */
};

struct plan {
	struct step *steps;
	size_t n;
};

#define PLAN_INIT                                                                                  \
	{                                                                                          \
		NULL, 0                                                                            \
	}

/* Appends a step and returns its (empty) argv to fill. */
struct strv *plan_add(struct plan *plan, enum step_kind kind);
/* Appends a host step on path (text may be NULL) with its printed form. */
void plan_add_host(struct plan *plan, enum step_kind kind, const char *path, const char *text);
void plan_clear(struct plan *plan);
/* Writes each step as one shell-quoted line. */
void plan_print(const struct plan *plan, FILE *out);

/* The steps that bring a box from state to running (pull, and podman run
 * --detach, when absent), without the final exec. */
void plan_bring_up(struct plan *plan, const struct box_spec *spec, enum box_state state,
                   bool image_present);
/* The argv of each kind of step (podman first). */
void podman_pull_argv(const struct box_spec *spec, struct strv *argv);
/* podman run --detach of a new box: made and started in one call. */
void podman_create_argv(const struct box_spec *spec, struct strv *argv);
void podman_exec_argv(const struct box_spec *spec, struct strv *argv);
/* podman exec of an interactive shell in the box, as its user or as root. */
void podman_shell_argv(const struct box_spec *spec, bool root, struct strv *argv);
/* podman build of a containerfile into tag, with its directory as context. */
void podman_build_argv(const char *podman, const char *containerfile, const char *tag,
                       const char *base_image, struct strv *argv);
/* podman NAME-only verbs: start, stop, unpause, rm -f. */
/* st (may be NULL) adds the runtime's global flags: rootless gVisor needs them
 * wherever podman runs the runtime for a box. */
void podman_verb_argv(const char *podman, const struct settings *st, enum step_kind kind,
                      const char *name, struct strv *argv);

/* What of ~/.gemini a box writes through to the host (chats, checkpoints,
 * shell history); everything else there it sees through an overlay. */
#define GEMINI_SHARED_N 2
extern const char *const gemini_shared[GEMINI_SHARED_N];

/* Whether the settings' network is "allowlist" (egress.h). */
bool network_is_allowlist(const struct settings *st);

/* Whether the settings' runtime is gVisor's runsc. */
bool runtime_is_runsc(const struct settings *st);

/* podman exec BOX /bin/sh -c SCRIPT NAME ARGS...: a small script of the
 * box's own shell (never the host's), its values passed as arguments. */
void podman_box_sh_argv(const char *podman, const char *box, const char *script, const char *name,
                        const char *const *args, struct strv *argv);

/* A --mount value binding source to target, quoted as podman's CSV parser
 * needs so that commas, quotes and newlines in paths survive. */
char *bind_mount_arg(const char *source, const char *target, bool readonly);

#endif
