#define _GNU_SOURCE
/* --box-status, --box-list, --box-stop, --box-rm, --box-recreate, --box-prune. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxid.h"
#include "boxinit.h"
#include "execute.h"
#include "query.h"
#include "quote.h"
#include "report.h"
#include "strv.h"

int cmd_status(struct context *ctx, struct gb_error *err)
{
	if (ctx->o->dry_run) {
		const char *words[] = { "container", "inspect", ctx->name, NULL };
		print_query(ctx, words);
		return 0;
	}
	struct box_info info;
	if (inspect_box(ctx, &info, err) < 0)
		return -1;
	struct strv drift = STRV_INIT;
	if (info.state != BOX_ABSENT)
		settings_digest_diff(info.label_settings, ctx->digest, &drift);
	struct status_report r = { ctx->name, ctx->dir, &info, ctx->image, &drift };
	report_status(&r, ctx->o->json, stdout);
	strv_clear(&drift);
	box_info_clear(&info);
	return 0;
}

static bool dir_exists(const char *dir)
{
	struct stat st;
	/* Only a directory that is really gone counts: an unreadable one is not. */
	return !dir || stat(dir, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

int cmd_list(struct context *ctx, struct gb_error *err)
{
	struct box_info *boxes;
	size_t n;
	if (ctx->o->dry_run) {
		print_query(ctx, list_words);
		return 0;
	}
	if (list_boxes(ctx, &boxes, &n, err) < 0)
		return -1;
	bool *exists = xmalloc((n ? n : 1) * sizeof(bool));
	for (size_t i = 0; i < n; i++)
		exists[i] = dir_exists(boxes[i].label_dir);
	report_list(boxes, exists, n, ctx->o->json, stdout);
	free(exists);
	box_list_free(boxes, n);
	return 0;
}

/* Stop or remove this directory's box; absent is not an error. */
static int act_on_box(struct context *ctx, enum step_kind kind, bool ask, struct gb_error *err)
{
	struct box_info info;
	if (inspect_own_box(ctx, &info, err) < 0)
		return -1;
	bool absent = info.state == BOX_ABSENT;
	bool stopped = info.state == BOX_STOPPED;
	char *state = info.label_state && state_dir_is_ours(info.label_state, ctx->name)
	                      ? xstrdup(info.label_state)
	                      : NULL;
	box_info_clear(&info);
	if (absent || (kind == STEP_STOP && stopped)) {
		char *q = shell_quote(ctx->dir);
		gb_warn("%s has no %sbox; nothing to do", q, absent ? "" : "running ");
		free(q);
		free(state);
		return 0;
	}
	if (ask) {
		char *dir = shell_quote(ctx->dir);
		char *question = xasprintf("Remove box %s of %s? What was installed in it is lost; "
		                           "the project's files are kept.",
		                           ctx->name, dir);
		int rc = confirm(ctx, question, err);
		free(question);
		free(dir);
		if (rc < 0) {
			free(state);
			return -1;
		}
	}
	struct plan p = PLAN_INIT;
	podman_verb_argv(ctx->podman, &ctx->settings, kind, ctx->name, plan_add(&p, kind));
	int rc = 0;
	if (ctx->o->dry_run)
		plan_print(&p, stdout);
	else
		rc = run_plan(ctx, &p, err) == STEP_OK ? 0 : -1;
	if (rc == 0 && kind == STEP_REMOVE && state && !ctx->o->dry_run)
		state_forget(state);
	free(state);
	plan_clear(&p);
	return rc;
}

int cmd_stop(struct context *ctx, struct gb_error *err)
{
	return act_on_box(ctx, STEP_STOP, false, err);
}

int cmd_rm(struct context *ctx, struct gb_error *err)
{
	return act_on_box(ctx, STEP_REMOVE, true, err);
}

int cmd_recreate(struct context *ctx, struct gb_error *err)
{
	if (act_on_box(ctx, STEP_REMOVE, true, err) < 0)
		return -1;
	/* A dry run cannot know the box is gone: plan as if it were. */
	if (ctx->o->dry_run) {
		struct box_spec spec = context_spec(ctx, false);
		struct plan p = PLAN_INIT;
		bool have_image = image_present(ctx, ctx->image);
		bool have_base = have_image || !ctx->build_needed || !ctx->local_needed ||
		                 image_present(ctx, ctx->settings.image.value);
		plan_box_up(ctx, &spec, BOX_ABSENT, have_image, have_base, &p);
		plan_print(&p, stdout);
		plan_clear(&p);
		return 0;
	}
	return bring_up_and(ctx, false, NO_SESSION, err);
}

int cmd_prune(struct context *ctx, struct gb_error *err)
{
	struct box_info *boxes;
	size_t n;
	if (list_boxes(ctx, &boxes, &n, err) < 0)
		return -1;
	struct plan p = PLAN_INIT;
	struct strv states = STRV_INIT; /* one per step: its state directory, or "" */
	for (size_t i = 0; i < n; i++)
		if (!dir_exists(boxes[i].label_dir)) {
			bool ours = boxes[i].label_state &&
			            state_dir_is_ours(boxes[i].label_state, boxes[i].name);
			strv_push(&states, ours ? boxes[i].label_state : "");
			char *q = shell_quote(boxes[i].label_dir);
			gb_warn("%s: directory %s is gone", boxes[i].name, q);
			free(q);
			podman_verb_argv(ctx->podman, NULL, STEP_REMOVE, boxes[i].name,
			                 plan_add(&p, STEP_REMOVE));
		}
	box_list_free(boxes, n);
	int rc = 0;
	if (p.n == 0) {
		gb_warn("every box's directory still exists; nothing to prune");
	} else if (ctx->o->dry_run) {
		plan_print(&p, stdout);
	} else {
		char *question = xasprintf("Remove these %zu boxes?", p.n);
		rc = confirm(ctx, question, err);
		free(question);
	}
	/* One failed removal does not keep the others (or their state) around. */
	size_t failed = 0;
	struct gb_error first = GB_ERROR_INIT;
	for (size_t i = 0; rc == 0 && !ctx->o->dry_run && i < p.n; i++) {
		struct gb_error e = GB_ERROR_INIT;
		if (run_podman_step(ctx, &p.steps[i], NULL, &e) == STEP_OK) {
			if (*states.v[i])
				state_forget(states.v[i]);
		} else if (failed++ == 0) {
			first = e;
			continue;
		}
		gb_error_clear(&e);
	}
	if (failed) {
		gb_fail(err, EXIT_BOX_PODMAN,
		        "%zu of %zu boxes could not be removed (%s); see podman ps -a", failed, p.n,
		        first.msg);
		gb_error_clear(&first);
		rc = -1;
	}
	strv_clear(&states);
	plan_clear(&p);
	return rc;
}
