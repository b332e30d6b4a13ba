#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "boxid.h"
#include "quote.h"

/* podman reads --mount as one CSV record: a field in double quotes may hold
 * commas, newlines and (doubled) quotes. -v would split paths on colons. */
static char *csv_field(const char *key, const char *value)
{
	size_t n = strlen(key) + 1 + 2 * strlen(value) + 3;
	char *out = xmalloc(n);
	char *o = out;
	*o++ = '"';
	o = stpcpy(o, key);
	*o++ = '=';
	for (const char *v = value; *v; v++) {
		if (*v == '"')
			*o++ = '"';
		*o++ = *v;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

char *bind_mount_arg(const char *source, const char *target, bool readonly)
{
	char *src = csv_field("source", source);
	char *dst = csv_field("destination", target);
	char *arg = xasprintf("type=bind,%s,%s%s", src, dst, readonly ? ",readonly=true" : "");
	free(src);
	free(dst);
	return arg;
}

void podman_pull_argv(const struct box_spec *s, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "pull");
	strv_push(argv, s->image);
}

void podman_create_argv(const struct box_spec *s, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "create");
	strv_pushf(argv, "--name=%s", s->name);
	strv_pushf(argv, "--hostname=%s", s->name);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_DIR, s->dir);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_VERSION, s->version);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_IMAGE, s->image);
	if (s->rootless) {
		/* The caller's uid becomes the image user's, so the agent's files are the caller's.
		 */
		const char *colon = strchr(s->box_user, ':');
		int uid_len = colon ? (int)(colon - s->box_user) : (int)strlen(s->box_user);
		const char *gid = colon ? colon + 1 : s->box_user;
		strv_pushf(argv, "--userns=keep-id:uid=%.*s,gid=%s", uid_len, s->box_user, gid);
		strv_pushf(argv, "--user=%s", s->box_user);
	}
	/* The main process must outlive every run and never be gemini: podman's
	 * init reaps zombies and stops the box promptly on SIGTERM. */
	strv_push(argv, "--init");
	strv_push(argv, "--entrypoint=sleep");
	strv_push(argv, "--mount");
	char *m = bind_mount_arg(s->dir, s->dir, false);
	strv_push(argv, m);
	free(m);
	strv_push(argv, "--mount");
	char *home_gemini = xasprintf("%s/.gemini", s->box_home);
	m = bind_mount_arg(s->gemini_home, home_gemini, false);
	strv_push(argv, m);
	free(m);
	free(home_gemini);
	strv_push(argv, s->image);
	strv_push(argv, "infinity");
}

void podman_start_argv(const struct box_spec *s, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "start");
	strv_push(argv, s->name);
}

void podman_unpause_argv(const struct box_spec *s, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "unpause");
	strv_push(argv, s->name);
}

void podman_exec_argv(const struct box_spec *s, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "exec");
	strv_push(argv, "-i");
	if (s->tty)
		strv_push(argv, "-t");
	/* Ctrl-P Ctrl-Q belong to gemini, not to podman's detach. */
	strv_push(argv, "--detach-keys=");
	strv_pushf(argv, "--workdir=%s", s->workdir);
	/* Set at every exec, never at creation: gemini then never nests a sandbox. */
	strv_pushf(argv, "--env=SANDBOX=%s", s->name);
	for (size_t i = 0; i < s->n_env; i++)
		strv_pushf(argv, "--env=%s", s->env_names[i]);
	strv_push(argv, s->name);
	strv_push(argv, "gemini");
	strv_pushv(argv, s->gemini_args, s->n_args);
}

static void add_step(struct plan *p, enum step_kind kind, const struct box_spec *s,
                     void (*build)(const struct box_spec *, struct strv *))
{
	struct step *st = &p->steps[p->n++];
	st->kind = kind;
	st->argv = (struct strv)STRV_INIT;
	build(s, &st->argv);
}

void plan_build(const struct box_spec *s, enum box_state state, bool image_present, struct plan *p)
{
	p->n = 0;
	switch (state) {
	case BOX_ABSENT:
		if (!image_present)
			add_step(p, STEP_PULL, s, podman_pull_argv);
		add_step(p, STEP_CREATE, s, podman_create_argv);
		add_step(p, STEP_START, s, podman_start_argv);
		break;
	case BOX_STOPPED: add_step(p, STEP_START, s, podman_start_argv); break;
	case BOX_PAUSED: add_step(p, STEP_UNPAUSE, s, podman_unpause_argv); break;
	case BOX_RUNNING: break;
	}
	add_step(p, STEP_EXEC, s, podman_exec_argv);
}

void plan_clear(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		strv_clear(&p->steps[i].argv);
	p->n = 0;
}

void plan_print(const struct plan *p, FILE *out)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct strv *a = &p->steps[i].argv;
		for (size_t k = 0; k < a->n; k++) {
			char *q = shell_quote(a->v[k]);
			fprintf(out, "%s%s", k ? " " : "", q);
			free(q);
		}
		fputc('\n', out);
	}
}
