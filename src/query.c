#define _GNU_SOURCE
/* query: the podman commands that only ask (inspect, image exists, ps). */
#include "query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxid.h"
#include "podman.h"
#include "quote.h"
#include "strv.h"

/* ---- podman queries ---- */

/* Every program gemini-box starts gets the caller's environment as it came. */
int run_in(const struct context *ctx, char *const argv[], enum child_io io, struct run_result *r,
           struct gb_error *err)
{
	struct child c = { argv, ctx->envp, io };
	return child_run(&c, r, err);
}

int query(const struct context *ctx, const char *const *words, struct run_result *r,
          struct gb_error *err)
{
	struct strv argv = STRV_INIT;
	strv_push(&argv, ctx->podman);
	for (const char *const *w = words; *w; w++)
		strv_push(&argv, *w);
	int rc = run_in(ctx, argv.v, CHILD_CAPTURE, r, err);
	strv_clear(&argv);
	return rc;
}

/* A dry run of a command that only asks podman: the question, shell-quoted. */
void print_query(const struct context *ctx, const char *const *words)
{
	char *q = shell_quote(ctx->podman);
	fputs(q, stdout);
	free(q);
	for (const char *const *w = words; *w; w++) {
		q = shell_quote(*w);
		printf(" %s", q);
		free(q);
	}
	putchar('\n');
}

int inspect_box(const struct context *ctx, struct box_info *info, struct gb_error *err)
{
	const char *words[] = { "container", "inspect", ctx->name, NULL };
	struct run_result r;
	if (query(ctx, words, &r, err) < 0)
		return -1;
	/* A missing box is exit 125 with "[]" on stdout; parse before judging the status. */
	int rc = inspect_parse(r.out, info, err);
	if ((rc == 0 && info->state == BOX_ABSENT && r.status != 0 &&
	     !strstr(r.err, "no such container")) ||
	    (rc < 0 && r.status != 0)) {
		box_info_clear(info);
		char *msg = podman_message(r.err);
		rc = gb_fail(err, EXIT_BOX_PODMAN,
		             "podman container inspect failed: %s; try podman info", msg);
		free(msg);
	}
	run_result_clear(&r);
	return rc;
}

bool image_present(const struct context *ctx, const char *image)
{
	const char *words[] = { "image", "exists", image, NULL };
	struct run_result r;
	struct gb_error ignored = GB_ERROR_INIT;
	if (query(ctx, words, &r, &ignored) < 0) {
		gb_error_clear(&ignored);
		return false;
	}
	bool present = r.status == 0;
	run_result_clear(&r);
	return present;
}

/* Every box of the user's, found by label. */
const char *const list_words[] = { "ps",       "--all", "--filter", "label=" BOX_LABEL_DIR,
	                           "--format", "json",  NULL };

int list_boxes(const struct context *ctx, struct box_info **boxes, size_t *n, struct gb_error *err)
{
	const char *const *words = list_words;
	struct run_result r;
	if (query(ctx, words, &r, err) < 0)
		return -1;
	int rc;
	if (r.status != 0) {
		char *msg = podman_message(r.err);
		rc = gb_fail(err, EXIT_BOX_PODMAN, "podman ps failed: %s; try podman info", msg);
		free(msg);
	} else {
		rc = box_list_parse(r.out, boxes, n, err);
	}
	run_result_clear(&r);
	return rc;
}

/* A box of this name that another directory (or someone else) owns is never touched. */
static int check_owner(const struct context *ctx, const struct box_info *info, struct gb_error *err)
{
	if (info->state == BOX_ABSENT ||
	    (info->label_dir && strcmp(info->label_dir, ctx->dir) == 0))
		return 0;
	char *q = shell_quote(info->label_dir ? info->label_dir : "(no gemini-box label)");
	gb_fail(err, EXIT_BOX_PODMAN,
	        "container %s exists but is not this directory's box (it belongs to %s); "
	        "rename or remove it with podman rm %s",
	        ctx->name, q, ctx->name);
	free(q);
	return -1;
}

/* This directory's box, or a failure when its name is taken by another's. */
int inspect_own_box(const struct context *ctx, struct box_info *info, struct gb_error *err)
{
	if (inspect_box(ctx, info, err) < 0)
		return -1;
	if (check_owner(ctx, info, err) < 0) {
		box_info_clear(info);
		return -1;
	}
	return 0;
}

/* One line naming what differs between the box and the current settings. */
void report_drift(const struct context *ctx, const struct box_info *info)
{
	if (info->state == BOX_ABSENT)
		return;
	struct strv changed = STRV_INIT;
	settings_digest_diff(info->label_settings, ctx->digest, &changed);
	if (changed.n == 0) {
		strv_clear(&changed);
		return;
	}
	char *keys = strv_join(&changed, ", ");
	gb_warn("box %s was made with other settings (%s changed); "
	        "gemini-box --box-recreate applies them\n",
	        ctx->name, info->label_settings ? keys : "made by an older gemini-box, so all");
	free(keys);
	strv_clear(&changed);
}
