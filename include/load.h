/* load: reading the user's and the project's settings files, with the
 * approval (--box-trust, trust.h) that applies to the project's. A project's
 * .gemini, settings file and containerfile must be the user's own, writable
 * by nobody else, and resolve inside the project. */
#ifndef GEMINI_BOX_LOAD_H
#define GEMINI_BOX_LOAD_H

#include <stdbool.h>

#include "context.h"

/* Finds the settings files and reads the project's (ctx->project_text). */
int load_project(struct context *ctx, struct gb_error *err);
/* The settings that apply: the project's file trusted while an approval of
 * its current content (or the user's trusted_projects) says so. */
int load_settings(struct context *ctx, struct gb_error *err);
/* One pass over the files, the environment and the options. */
int merge_all(struct context *ctx, bool trusted, struct gb_error *err);
/* The digests an approval of the project as it is now would record. */
int current_approval(struct context *ctx, char **settings, char **containerfile,
                     struct gb_error *err);
/* Reads a file of at most 1 MiB of text; a missing one leaves *text NULL. */
int read_settings_file(const char *path, char **text, struct gb_error *err);

#endif
