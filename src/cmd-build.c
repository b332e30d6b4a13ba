#define _GNU_SOURCE
/* --box-build and --box-config. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "execute.h"
#include "localimage.h"
#include "quote.h"
#include "strv.h"

/* Builds the project's containerfile now, or, without one, gemini-box's own
 * image of the release from Debian's and npm's packages (localimage.h). */
int cmd_build(struct context *ctx, struct gb_error *err)
{
	struct plan p = PLAN_INIT;
	const char *built = ctx->image;
	char *local = NULL;
	if (ctx->settings.containerfile.value) {
		podman_build_argv(ctx->podman, ctx->settings.containerfile.value, ctx->image,
		                  ctx->settings.image.value, plan_add(&p, STEP_BUILD));
	} else {
		const char *version = ctx->settings.gemini_version.value;
		local = local_image_tag(version ? version : DEFAULT_GEMINI_VERSION);
		plan_local_image(ctx, local, &p);
		built = local;
	}
	int rc = 0;
	if (ctx->o->dry_run)
		plan_print(&p, stdout);
	else if (run_plan(ctx, &p, err) != STEP_OK)
		rc = -1;
	else if (local && !ctx->local_needed)
		gb_warn("built %s; \"image\": \"local\" in your config.json (or "
		        "GEMINI_IMAGE=local) "
		        "makes boxes from it",
		        built);
	else
		gb_warn("built %s", built);
	plan_clear(&p);
	free(local);
	return rc;
}

int cmd_config(struct context *ctx, struct gb_error *err)
{
	(void)err;
	if (ctx->o->json) {
		char *text = settings_to_json(&ctx->settings);
		printf("%s\n", text);
		free(text);
		return 0;
	}
	char *dir = shell_quote(ctx->dir);
	char *user = shell_quote(ctx->user_file);
	char *project = shell_quote(ctx->project_file);
	printf("%-16s = %s\n%-16s = %s\n%-16s = %s\n%-16s = %s\n", "box", ctx->name, "directory",
	       dir, "user file", user, "project file", project);
	free(project);
	free(user);
	free(dir);
	settings_print(&ctx->settings, stdout);
	return 0;
}
