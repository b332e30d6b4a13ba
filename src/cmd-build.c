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
#include "quote.h"
#include "strv.h"

int cmd_build(struct context *ctx, struct gb_error *err)
{
	if (!ctx->settings.containerfile.value)
		return gb_fail(err, EXIT_BOX_CONFIG,
		               "there is no containerfile to build: add %s to the project or set "
		               "\"containerfile\" in the settings",
		               PROJECT_CONTAINERFILE);
	struct plan p = PLAN_INIT;
	podman_build_argv(ctx->podman, ctx->settings.containerfile.value, ctx->image,
	                  ctx->settings.image.value, plan_add(&p, STEP_BUILD));
	int rc = 0;
	if (ctx->o->dry_run)
		plan_print(&p, stdout);
	else if (run_plan(ctx, &p, err) != STEP_OK)
		rc = -1;
	else
		gb_warn("built %s", ctx->image);
	plan_clear(&p);
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
