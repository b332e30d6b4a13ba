/* query: the podman commands that only ask: inspect, image exists, ps. */
#ifndef GEMINI_BOX_QUERY_H
#define GEMINI_BOX_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "inspect.h"
#include "spawn.h"

/* Runs argv with the caller's environment. */
int run_in(const struct context *ctx, char *const argv[], enum child_io io, struct run_result *r,
           struct gb_error *err);
/* podman WORDS..., captured. */
int query(const struct context *ctx, const char *const *words, struct run_result *r,
          struct gb_error *err);
/* A dry run of a command that only asks podman: the question, shell-quoted. */
void print_query(const struct context *ctx, const char *const *words);

int inspect_box(const struct context *ctx, struct box_info *info, struct gb_error *err);
/* This directory's box, or a failure when its name is taken by another's. */
int inspect_own_box(const struct context *ctx, struct box_info *info, struct gb_error *err);
bool image_present(const struct context *ctx, const char *image);

/* Every box of the user's, found by label. */
extern const char *const list_words[];
int list_boxes(const struct context *ctx, struct box_info **boxes, size_t *n, struct gb_error *err);

/* One line naming what differs between the box and the current settings. */
void report_drift(const struct context *ctx, const struct box_info *info);

#endif
