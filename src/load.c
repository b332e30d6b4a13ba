#define _GNU_SOURCE
/* load: reading the user's and the project's settings files, with the
 * approval (--box-trust) that applies to the project's. */
#include "load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "boxid.h"
#include "build.h"
#include "plan.h"
#include "quote.h"
#include "strv.h"
#include "trust.h"

/* A settings file is small; a huge one is a mistake, not a configuration. */
#define SETTINGS_MAX_BYTES (1 << 20)

/* A file or directory of the project that gemini-box reads as settings must
 * be the user's: not another user's, not writable by others, and not a link
 * out of the project. Returns 0 when absent or fine. */
static int check_project_path(const struct context *ctx, const char *path, struct gb_error *err)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0
		               : gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path,
		                              strerror(errno));
	char *real = realpath(path, NULL);
	if (!real || !path_is_within(real, ctx->dir)) {
		free(real);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "refusing", path,
		                    "it resolves outside the project; make it a plain file of "
		                    "the project");
	}
	free(real);
	if (stat(path, &st) < 0)
		return gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path, strerror(errno));
	if (st.st_uid != geteuid()) {
		char *why = xasprintf("it belongs to another user (uid %ld), who could choose what "
		                      "runs with your keys; remove it, or chown it if it is yours",
		                      (long)st.st_uid);
		gb_fail_path(err, EXIT_BOX_CONFIG, "refusing", path, why);
		free(why);
		return -1;
	}
	if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != getegid()))
		return gb_fail_path(err, EXIT_BOX_CONFIG, "refusing", path,
		                    "other users can write it; chmod go-w it");
	return 0;
}

/* Reads a settings file; a missing one is no error, *text stays NULL. */
int read_settings_file(const char *path, char **text, struct gb_error *err)
{
	*text = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SETTINGS_MAX_BYTES) {
		close(fd);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "settings file", path,
		                    "not a regular file of at most 1 MiB");
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t r = 0;
	while (n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	if (r < 0) {
		free(buf);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read", path, strerror(e));
	}
	buf[n] = '\0';
	if (strlen(buf) != n) {
		free(buf);
		return gb_fail_path(err, EXIT_BOX_CONFIG, "settings file", path,
		                    "holds a NUL byte; it must be JSON text");
	}
	*text = buf;
	return 0;
}

static int merge_text(struct context *ctx, const char *path, const char *text,
                      enum origin_kind kind, bool trusted, struct gb_error *err)
{
	if (!text)
		return 0;
	struct settings_source src = {
		.file = path,
		.kind = kind,
		.home = ctx->home,
		.box_dir = ctx->dir,
		.trusted = trusted,
		.approval_change = ctx->approval_change,
	};
	return settings_merge_json(&ctx->settings, text, &src, err);
}

/* The project's own containerfile, by gemini-cli's convention, unless the
 * settings name one. */
static int find_conventional_containerfile(struct context *ctx, struct gb_error *err)
{
	if (ctx->settings.containerfile.value || !ctx->dir)
		return 0;
	char *conv = xasprintf("%s/%s", ctx->dir, PROJECT_CONTAINERFILE);
	struct stat st;
	int rc = 0;
	if (lstat(conv, &st) == 0) {
		rc = check_project_path(ctx, conv, err);
		if (rc == 0 && stat(conv, &st) == 0 && S_ISREG(st.st_mode)) {
			struct origin o = { ORIGIN_PROJECT, PROJECT_CONTAINERFILE };
			ctx->settings.containerfile.value = realpath(conv, NULL);
			ctx->settings.containerfile.origin = o;
		}
	}
	free(conv);
	return rc;
}

/* What an approval of the project as it is now would record: the digests
 * of its settings file and of its containerfile with the build context. */
int current_approval(struct context *ctx, char **settings, char **containerfile,
                     struct gb_error *err)
{
	*settings = ctx->project_text ? text_digest(ctx->project_text) : NULL;
	*containerfile = NULL;
	const struct str_setting *cf = &ctx->settings.containerfile;
	if (cf->value && cf->origin.kind == ORIGIN_PROJECT) {
		const char *digest = containerfile_digest(ctx, err);
		if (!digest) {
			free(*settings);
			*settings = NULL;
			return -1;
		}
		*containerfile = xstrdup(digest);
	}
	return 0;
}

/* One pass over the files: the user's, then the project's (trusted or not),
 * the environment and the options. */
int merge_all(struct context *ctx, bool trusted, struct gb_error *err)
{
	settings_clear(&ctx->settings);
	settings_init(&ctx->settings);
	char *user_text;
	if (read_settings_file(ctx->user_file, &user_text, err) < 0)
		return -1;
	int rc = merge_text(ctx, ctx->user_file, user_text, ORIGIN_USER, true, err);
	free(user_text);
	if (rc == 0)
		rc = merge_text(ctx, ctx->project_file, ctx->project_text, ORIGIN_PROJECT,
		                trusted || settings_trusts(&ctx->settings, ctx->dir), err);
	if (rc == 0)
		rc = settings_merge_env(&ctx->settings, (char *const *)ctx->envp, err);
	if (rc == 0 && ctx->o->image) {
		const char *why = image_name_problem(ctx->o->image);
		if (why)
			return gb_fail(err, EXIT_BOX_USAGE, "--box-image %s", why);
		settings_set_option(&ctx->settings.image, ctx->o->image, "--box-image");
	}
	if (rc == 0)
		rc = find_conventional_containerfile(ctx, err);
	return rc;
}

/* Finds the settings files and reads the project's, which must be the
 * user's own (check_project_path). */
int load_project(struct context *ctx, struct gb_error *err)
{
	settings_init(&ctx->settings);
	const char *xdg = context_env_nonempty(ctx, "XDG_CONFIG_HOME");
	ctx->user_file = xdg ? xasprintf("%s/gemini-box/config.json", xdg)
	                     : xasprintf("%s/.config/gemini-box/config.json", ctx->home);
	char *gemini_dir = xasprintf("%s/.gemini", ctx->dir);
	ctx->project_file = xasprintf("%s/%s", ctx->dir, PROJECT_SETTINGS);
	ctx->approval_file = approval_path(ctx->data_home, ctx->name);
	int rc = check_project_path(ctx, gemini_dir, err);
	free(gemini_dir);
	if (rc == 0)
		rc = check_project_path(ctx, ctx->project_file, err);
	if (rc == 0)
		rc = read_settings_file(ctx->project_file, &ctx->project_text, err);
	return rc;
}

int load_settings(struct context *ctx, struct gb_error *err)
{

	if (load_project(ctx, err) < 0)
		return -1;
	int rc = 0;
	/* An approval applies while it matches what the project holds now. */
	char *approved = approval_read(ctx->approval_file);
	bool trusted = approved != NULL;
	if (merge_all(ctx, trusted, err) < 0) {
		free(approved);
		return -1;
	}
	if (approved) {
		char *settings, *containerfile;
		if (current_approval(ctx, &settings, &containerfile, err) < 0) {
			free(approved);
			return -1;
		}
		struct approval now = { ctx->dir, settings, containerfile };
		ctx->approval_change = approval_difference(approved, &now);
		if (ctx->approval_change)
			rc = merge_all(ctx, false, err); /* read again, as any project's */
		else
			ctx->approval = approval_record(&now);
		free(containerfile);
		free(settings);
		free(approved);
		if (rc < 0)
			return -1;
	}
	/* The conventional containerfile builds the program that gets the keys. */
	const struct str_setting *cf = &ctx->settings.containerfile;
	bool path_trusted = settings_trusts(&ctx->settings, ctx->dir);
	if (cf->value && cf->origin.kind == ORIGIN_PROJECT && !ctx->approval && !path_trusted) {
		char *q = shell_quote(cf->value);
		if (ctx->approval_change)
			gb_fail(err, EXIT_BOX_CONFIG,
			        "%s builds the image that gets your keys, and %s changed since you "
			        "approved it; review the change with gemini-box --box-trust",
			        q, ctx->approval_change);
		else
			gb_fail(err, EXIT_BOX_CONFIG,
			        "%s builds the image that gets your keys and ~/.gemini, so it "
			        "needs "
			        "your approval: review it with gemini-box --box-trust",
			        q);
		free(q);
		return -1;
	}
	/* gVisor rootless runs with the host's network stack flag and keeps a
	 * --network=none box's loopback down: the relay could not listen. */
	if (network_is_allowlist(&ctx->settings) && runtime_is_runsc(&ctx->settings))
		return gb_fail(
		        err, EXIT_BOX_CONFIG,
		        "network \"allowlist\" does not work with runtime runsc (gVisor keeps "
		        "the box's loopback down, so the box has no way to its proxy); choose "
		        "one of them");
	return 0;
}
