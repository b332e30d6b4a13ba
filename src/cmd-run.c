#define _GNU_SOURCE
/* Running gemini in the box (the default command), and --box-shell. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "boxinit.h"
#include "envsel.h"
#include "execute.h"
#include "query.h"
#include "session.h"
#include "strv.h"

/* ---- commands ---- */

/* The launch podman need not be asked about. The state directory records
 * that the box was made for this directory with these very settings and
 * init: when its init holds the lock, the box runs, and gemini-box goes
 * straight to podman exec; when not, the box is started by its recorded id,
 * which fails for any other container. Returns 1 when the run happened
 * (or failed: -1), 0 when podman must be asked after all. */
/* podman exec's own status when it could not run the command at all. */
#define PODMAN_EXEC_FAILED 125

/* After a fast-path exec failed with podman's own status: whether the box
 * still runs (then the status was gemini's or podman's to pass on), or it
 * stopped or was paused between the lock probe and the exec, and the long
 * way must bring it up. */
static bool box_still_running(const struct context *ctx)
{
	struct box_info info;
	struct gb_error ignored = GB_ERROR_INIT;
	if (inspect_own_box(ctx, &info, &ignored) < 0) {
		gb_error_clear(&ignored);
		return true; /* cannot tell: pass the status on */
	}
	bool running = info.state == BOX_RUNNING;
	box_info_clear(&info);
	return running;
}

static int run_known_box(struct context *ctx, bool tty, bool shell, struct gb_error *err)
{
	char *id = NULL;
	enum state_answer answer = state_lookup(ctx->state, ctx->record, &id);
	if (answer == STATE_UNKNOWN ||
	    (answer == STATE_STOPPED && access(ctx->init_copy, X_OK) != 0)) {
		free(id);
		return 0;
	}
	/* A settings mount source that is a link now would be followed at start:
	 * the long way inspects the box and refuses. */
	for (size_t i = 0; answer == STATE_STOPPED && i < ctx->settings.n_mounts; i++) {
		char *real = realpath(ctx->settings.mounts[i].source, NULL);
		bool same = real && strcmp(real, ctx->settings.mounts[i].source) == 0;
		free(real);
		if (!same) {
			free(id);
			return 0;
		}
	}
	struct box_spec spec = context_spec(ctx, tty);
	struct plan plan = PLAN_INIT;
	if (answer == STATE_STOPPED) {
		plan_add_host(&plan, STEP_STATE, ctx->state, NULL);
		podman_verb_argv(ctx->podman, &ctx->settings, STEP_START, id,
		                 plan_add(&plan, STEP_START));
	}
	free(id);
	plan_session(ctx, &spec, shell, &plan);
	/* A start that fails (the box was removed, paused, or is not startable)
	 * takes the long way, which says why. */
	if (answer == STATE_STOPPED) {
		struct gb_error ignored = GB_ERROR_INIT;
		bool started = run_host_step(&plan.steps[0], &ignored) == 0 &&
		               run_podman_step(ctx, &plan.steps[1], NULL, &ignored) == STEP_OK;
		gb_error_clear(&ignored);
		if (!started) {
			plan_clear(&plan);
			return 0;
		}
	}
	/* what is left: the session */
	size_t done = answer == STATE_STOPPED ? 2 : 0;
	struct plan rest = { plan.steps + done, plan.n - done };
	enum step_outcome outcome = run_plan(ctx, &rest, err);
	plan_clear(&plan);
	if (outcome != STEP_OK)
		return -1;
	return ctx->exit_status == PODMAN_EXEC_FAILED && !box_still_running(ctx) ? 0 : 1;
}

/* The first launch in a project, at podman's floor: when there is no record
 * of a box here and its image is known to be here, podman run --detach
 * straight away, without asking podman first. Any failure (the name taken
 * after all, the image removed since) takes the long way, which asks and
 * says why. Returns 1 when the run happened (or failed: -1), 0 otherwise. */
static int run_new_box(struct context *ctx, bool tty, bool shell, struct gb_error *err)
{
	if (ctx->build_needed || ctx->local_needed || !state_record_absent(ctx->state) ||
	    !image_known(ctx->image))
		return 0;
	struct box_spec spec = context_spec(ctx, tty);
	struct plan plan = PLAN_INIT;
	plan_box_up(ctx, &spec, BOX_ABSENT, true, true, &plan);
	plan_session(ctx, &spec, shell, &plan);
	/* up to the record of the box made (it needs the id run printed) */
	size_t made = 0;
	while (plan.steps[made].kind != STEP_RECORD)
		made++;
	struct plan up = { plan.steps, made + 1 };
	struct gb_error ignored = GB_ERROR_INIT;
	enum step_outcome outcome = run_plan(ctx, &up, &ignored);
	gb_error_clear(&ignored);
	if (outcome != STEP_OK) {
		if (outcome == STEP_FAILED)
			image_forget();
		plan_clear(&plan);
		return 0;
	}
	struct plan rest = { plan.steps + made + 1, plan.n - made - 1 };
	outcome = run_plan(ctx, &rest, err);
	plan_clear(&plan);
	return outcome == STEP_OK ? 1 : -1;
}

/* The session's tag, and the env file that carries it with the run's values. */
static int start_session(struct context *ctx, struct gb_error *err)
{
	if (session_token(ctx->session, err) < 0)
		return -1;
	if (ctx->state)
		ctx->env_file = xasprintf("%s/env-%s", ctx->state, ctx->session);
	return prepare_env(ctx, err);
}

int cmd_run(struct context *ctx, struct gb_error *err)
{
	if (start_session(ctx, err) < 0)
		return -1;
	const struct box_options *o = ctx->o;
	struct gemini_intent intent = gemini_intent_of(o->gemini_args.v, o->gemini_args.n);
	bool ci = env_is_true(ctx->envp, "CI") || env_is_true(ctx->envp, "GITHUB_ACTIONS");
	bool tty = terminal_wanted(intent, isatty(STDIN_FILENO), isatty(STDOUT_FILENO), ci);
	if (ctx->settings.ide.value && !host_ide(ctx) &&
	    context_env_nonempty(ctx, "GEMINI_CLI_IDE_SERVER_PORT"))
		gb_warn("the IDE companion listens on the host's loopback, which a "
		        "box with network \"%s\" cannot reach, so its variables stay out; set "
		        "\"network\": \"host\" in your config.json and run gemini-box "
		        "--box-recreate (or \"ide\": false to silence this)",
		        ctx->settings.network.value);
	int fast = ctx->o->dry_run ? 0 : run_known_box(ctx, tty, false, err);
	if (fast == 0 && !ctx->o->dry_run)
		fast = run_new_box(ctx, tty, false, err);
	if (fast != 0)
		return fast < 0 ? -1 : 0;
	return bring_up_and(ctx, tty, GEMINI_SESSION, err);
}

int cmd_shell(struct context *ctx, struct gb_error *err)
{
	if (start_session(ctx, err) < 0)
		return -1;
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	return bring_up_and(ctx, tty, SHELL_SESSION, err);
}
