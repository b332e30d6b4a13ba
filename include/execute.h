/* execute: the one executor of plans (plan.h), and the plans of bringing a
 * box up and of a session. Every side effect of a run is a step: the host
 * steps (state directory and lock, init copy, missing directories, the env
 * file) and the podman ones, so that --box-dry-run prints the plan itself. */
#ifndef GEMINI_BOX_EXECUTE_H
#define GEMINI_BOX_EXECUTE_H

#include <stdbool.h>

#include "context.h"
#include "inspect.h"
#include "plan.h"

enum step_outcome { STEP_OK, STEP_FAILED, STEP_LOST_RACE };
enum session_kind { NO_SESSION, GEMINI_SESSION, SHELL_SESSION };

/* Runs the steps in order; a STEP_EXEC is the session, whose status goes to
 * ctx->exit_status. An env file is removed even after a failure. */
enum step_outcome run_plan(struct context *ctx, const struct plan *p, struct gb_error *err);
int run_host_step(const struct step *st, struct gb_error *err);
/* *out, when not NULL, gets what the step printed (a new box's id). */
enum step_outcome run_podman_step(const struct context *ctx, const struct step *st, char **out,
                                  struct gb_error *err);

/* The steps that bring the box from state to running, with their host steps. */
void plan_box_up(const struct context *ctx, const struct box_spec *spec, enum box_state state,
                 bool have_image, bool have_base, struct plan *p);
/* Making the local image (localimage.h) tagged image: mmdebstrap, podman
 * import, the tarball removed. */
void plan_local_image(const struct context *ctx, const char *image, struct plan *p);
/* The session: its env file written, podman exec, the file removed. */
void plan_session(const struct context *ctx, const struct box_spec *spec, bool shell,
                  struct plan *p);
/* Observes the box, plans bringing it up and the session, and runs (or with
 * --box-dry-run prints) it; retries when another run creates the box first. */
int bring_up_and(struct context *ctx, bool tty, enum session_kind session, struct gb_error *err);

/* Asks on the terminal; --box-yes answers, and without a terminal it is required. */
int confirm(const struct context *ctx, const char *question, struct gb_error *err);

#endif
