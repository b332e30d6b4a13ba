/* settings: what a box is made of, merged from the built-in defaults, the
 * user's file, the project's file, the environment and --box-* options, with
 * where each value came from. Parsing and merging are pure but for stat(2)
 * of mount sources and realpath(3) of paths the files name. */
#ifndef GEMINI_BOX_SETTINGS_H
#define GEMINI_BOX_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "strv.h"

/* gemini-cli publishes its sandbox image per release as SANDBOX_IMAGE_REPO:VERSION
 * (package.json's config.sandboxImageUri); the default follows a current one. */
#define SANDBOX_IMAGE_REPO        "us-docker.pkg.dev/gemini-code-dev/gemini-cli/sandbox"
#define DEFAULT_GEMINI_VERSION    "0.61.0"
#define DEFAULT_IMAGE             SANDBOX_IMAGE_REPO ":" DEFAULT_GEMINI_VERSION
#define DEFAULT_BOX_USER          "1000:1000"
#define DEFAULT_BOX_HOME          "/home/node"
#define DEFAULT_NETWORK           "isolated"
#define DEFAULT_IDLE_STOP_MINUTES 30

/* Where a value came from, lowest precedence first. */
enum origin_kind { ORIGIN_DEFAULT, ORIGIN_USER, ORIGIN_PROJECT, ORIGIN_ENV, ORIGIN_OPTION };

struct origin {
	enum origin_kind kind;
	const char *detail; /* the file, variable or option; borrowed */
};

struct str_setting {
	char *value; /* NULL when unset */
	struct origin origin;
};

struct num_setting {
	double value;
	struct origin origin;
};

struct mount_setting {
	char *source; /* canonical host path */
	char *target; /* absolute path in the box */
	bool readonly;
	struct origin origin;
};

struct env_setting {
	char *name;
	char *value;
	struct origin origin;
};

struct list_item {
	char *value;
	struct origin origin;
};

struct item_list {
	struct list_item *v;
	size_t n;
};

/* Each key is a member here and one row of the table in settings.c. */
struct settings {
	struct str_setting image, user, home, network, runtime, containerfile;
	struct str_setting gemini_version;    /* the release whose image a default box gets */
	struct num_setting idle_stop_minutes; /* 0: never */
	struct num_setting ide;               /* 1: carry the IDE companion's variables */
	struct mount_setting *mounts;
	size_t n_mounts;
	struct env_setting *env;
	size_t n_env;
	struct item_list forward_env, ports, podman_args;
	struct item_list protected_paths; /* project-relative, kept read-only in the box */
	struct item_list egress;          /* hosts an "allowlist" box reaches besides gemini's */
	struct strv trusted;              /* project directories the user file trusts */
};

/* How a file's values are read. */
struct settings_source {
	const char *file;      /* for messages and provenance; must outlive the settings */
	enum origin_kind kind; /* ORIGIN_USER or ORIGIN_PROJECT */
	const char *home;      /* for "~" in paths */
	const char *box_dir;   /* a project file's mounts must stay inside it */
	bool trusted;          /* a project file the user trusts reads like the user's own */
	/* when an approval (--box-trust) exists but no longer matches: what changed */
	const char *approval_change;
};

/* What is wrong with an image name, or NULL when it is fine. */
const char *image_name_problem(const char *name);

void settings_init(struct settings *s);
void settings_clear(struct settings *s);

/* Merges one JSON settings file's text into s. Every unknown key, wrong type
 * or bad value fails with EXIT_BOX_CONFIG, naming the file and the key path
 * (mounts[2].source), or the line and column of a syntax error. */
int settings_merge_json(struct settings *s, const char *text, const struct settings_source *src,
                        struct gb_error *err);

/* GEMINI_IMAGE, GEMINI_BOX_IMAGE, GEMINI_BOX_USER, GEMINI_BOX_HOME,
 * GEMINI_BOX_NETWORK, GEMINI_BOX_RUNTIME, when set and not empty. */
int settings_merge_env(struct settings *s, char *const *envp, struct gb_error *err);

/* A value given by an option (--box-image) wins over everything. */
void settings_set_option(struct str_setting *setting, const char *value, const char *option);

/* Whether dir is among the projects the user's file trusts. */
bool settings_trusts(const struct settings *s, const char *dir);

/* Writes the effective settings, one "key = value  (origin)" per line. */
void settings_print(const struct settings *s, FILE *out);
/* The same as a JSON object {"key": {"value": ..., "from": ...}}; never
 * NULL, as running out of memory is fatal (strv.h). */
char *settings_to_json(const struct settings *s);

/* The settings a box is created with, as "key=digest" pairs joined by ','
 * (12 hex digits of SHA-256 each), for the box's settings label, with the
 * id of the box's init as the key "init". Run-time values (env,
 * forward_env) are not part of it: they apply at every run. */
char *settings_creation_digest(const struct settings *s, const char *init, bool ide_shared);

/* idle_stop_minutes in whole seconds (0: never). */
long settings_idle_seconds(const struct settings *s);

/* The names of the keys whose digests differ between two digest labels. */
void settings_digest_diff(const char *old_label, const char *new_label, struct strv *changed);

const char *origin_name(enum origin_kind kind);

#endif
