#define _GNU_SOURCE
/* --box-trust: show a project's settings file and containerfile, and record
 * the user's approval of exactly that content (trust.h). */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "envsel.h"
#include "execute.h"
#include "load.h"
#include "quote.h"
#include "strv.h"
#include "trust.h"

/* ---- --box-trust ---- */

static void show_file(FILE *out, const char *title, const char *path, const char *text)
{
	char *q = shell_quote(path);
	fprintf(out, "--- %s: %s\n", title, q);
	free(q);
	print_untrusted(out, text);
	if (*text && text[strlen(text) - 1] != '\n')
		fputc('\n', out);
}

/* Shows what the project's settings file and containerfile ask for, and
 * records the user's approval of exactly that content. */
int cmd_trust(struct context *ctx, struct gb_error *err)
{
	/* The files are read as if approved, to show and check them. */
	if (load_project(ctx, err) < 0 || merge_all(ctx, true, err) < 0)
		return -1;
	cleanup_free char *dir = shell_quote(ctx->dir);
	const struct str_setting *cf = &ctx->settings.containerfile;
	bool own_containerfile = cf->value && cf->origin.kind == ORIGIN_PROJECT;
	if (!ctx->project_text && !own_containerfile) {
		gb_warn("%s has no %s and no %s; nothing to approve", dir, PROJECT_SETTINGS,
		        PROJECT_CONTAINERFILE);
		return 0;
	}
	cleanup_free char *settings = NULL, *containerfile = NULL;
	if (current_approval(ctx, &settings, &containerfile, err) < 0)
		return -1;
	struct approval now = { ctx->dir, settings, containerfile };
	cleanup_free char *record = approval_record(&now);
	cleanup_free char *recorded = approval_read(ctx->approval_file);
	cleanup_free char *change = recorded ? approval_difference(recorded, &now) : NULL;

	printf("Project %s (box %s) asks for the following.\n", dir, ctx->name);
	if (ctx->project_text)
		show_file(stdout, "settings file", ctx->project_file, ctx->project_text);
	if (own_containerfile) {
		cleanup_free char *text = NULL;
		if (read_settings_file(cf->value, &text, err) < 0)
			return -1;
		show_file(stdout, "containerfile (builds the image; its directory is the context)",
		          cf->value, text ? text : "");
	}
	printf("---\n");
	fflush(stdout);
	if (recorded && !change) {
		gb_warn("%s is approved as it is; nothing changed", dir);
		return 0;
	}
	cleanup_free char *question = xasprintf(
	        "%s%sApprove it as it is now? The project may then choose the image that gets "
	        "your keys, mount paths outside itself, add podman arguments and more, until "
	        "these files change.",
	        change ? change : "", change ? " changed since your approval. " : "");
	if (confirm(ctx, question, err) < 0)
		return -1;
	if (ctx->o->dry_run) {
		cleanup_free char *q = shell_quote(ctx->approval_file);
		printf(": would record the approval in %s\n", q);
		return 0;
	}
	if (approval_write(ctx->approval_file, record, err) < 0)
		return -1;
	gb_warn("approved %s; a change to either file needs your approval again", dir);
	return 0;
}
