/* runenv: what each run carries into the box, built as data.
 *
 * Two channels, and never a third: variables of the caller's that are
 * forwarded go by name (`podman exec --env NAME`, podman reading the value
 * from its own environment, which is the caller's, unchanged); values that
 * gemini-box supplies (the settings' "env", the session tag, its own
 * switches) go in an env file that podman reads, private to the user and
 * removed after the run. So no settings value ever enters the environment of
 * a host process (a project's {"env": {"LD_PRELOAD": ...}} stays in the box),
 * and no value is on a command line or in the box's configuration. Pure. */
#ifndef GEMINI_BOX_RUNENV_H
#define GEMINI_BOX_RUNENV_H

#include <stdbool.h>

#include "error.h"
#include "settings.h"
#include "strv.h"

struct run_env {
	struct strv names; /* forwarded by name, sorted, unique */
	struct strv fixed; /* "NAME=value" lines of the env file, sorted by name */
};

#define RUN_ENV_INIT                                                                               \
	{                                                                                          \
		STRV_INIT, STRV_INIT                                                               \
	}

struct run_env_input {
	const struct settings *settings;
	char *const *envp;   /* the caller's environment */
	bool ide_reachable;  /* the box can reach the IDE companion (host network) */
	const char *session; /* the session tag, or NULL */
};

/* Builds the run's environment. The caller's own value of a forwarded
 * variable wins over a settings value. The IDE companion's variables (its
 * auth token above all) go only into a box that can reach the companion.
 * Fails with EXIT_BOX_CONFIG when a forwarded value is not UTF-8 (podman
 * would pass it on changed). */
int run_env_build(const struct run_env_input *in, struct run_env *out, struct gb_error *err);

/* The env file's text: one "NAME=value" line each. */
char *run_env_file_text(const struct run_env *e);

void run_env_clear(struct run_env *e);

#endif
