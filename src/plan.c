#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "boxid.h"
#include "boxinit.h"
#include "egress.h"
#include "fsutil.h"
#include "quote.h"
#include "session.h"

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

static void push_mount(struct strv *argv, const char *source, const char *target, bool readonly)
{
	char *m = bind_mount_arg(source, target, readonly);
	strv_push(argv, "--mount");
	strv_push(argv, m);
	free(m);
}

const char *const gemini_shared[GEMINI_SHARED_N] = { "tmp", "history" };

bool runtime_is_runsc(const struct settings *st)
{
	const char *rt = st ? st->runtime.value : NULL;
	if (!rt)
		return false;
	const char *base = strrchr(rt, '/');
	return strcmp(base ? base + 1 : rt, "runsc") == 0;
}

/* Rootless runsc cannot set up cgroups here, and needs the host's network
 * (measured on podman 4.3 with runsc 2022-12). */
static void push_runtime_flags(const struct settings *st, struct strv *argv)
{
	if (!runtime_is_runsc(st))
		return;
	strv_push(argv, "--runtime-flag=ignore-cgroups");
	strv_push(argv, "--runtime-flag=network=host");
}

void podman_pull_argv(const struct box_spec *s, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "pull");
	strv_push(argv, s->image);
}

void podman_create_argv(const struct box_spec *s, struct strv *argv)
{
	const struct settings *st = s->settings;
	bool runsc = runtime_is_runsc(st);
	strv_push(argv, s->podman);
	push_runtime_flags(st, argv);
	/* Made and started in one call: the first launch costs what podman's does. */
	strv_push(argv, "run");
	strv_push(argv, "--detach");
	strv_pushf(argv, "--name=%s", s->name);
	strv_pushf(argv, "--hostname=%s", s->name);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_DIR, s->dir);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_VERSION, s->version);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_IMAGE, s->image);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_SETTINGS, s->settings_digest);
	if (runsc) {
		/* runsc fails to start with keep-id; without it, rootless root in
		 * the box is the caller on the host, so files still belong to them. */
		strv_push(argv, "--user=0:0");
	} else if (s->rootless) {
		/* The caller's uid becomes the image user's: the agent's files are the caller's. */
		const char *user = st->user.value;
		const char *colon = strchr(user, ':');
		strv_pushf(argv, "--userns=keep-id:uid=%.*s,gid=%s", (int)(colon - user), user,
		           colon + 1);
		strv_pushf(argv, "--user=%s", user);
	}
	if (strcmp(st->network.value, "host") == 0)
		strv_push(argv, "--network=host");
	else if (network_is_allowlist(st) || strcmp(st->network.value, "none") == 0)
		strv_push(argv, "--network=none"); /* allowlist: only through the init's relay */
	if (st->runtime.value)
		strv_pushf(argv, "--runtime=%s", st->runtime.value);
	/* Published ports listen on the host's loopback only, not on its network. */
	for (size_t i = 0; i < st->ports.n; i++)
		strv_pushf(argv, "--publish=127.0.0.1:%s", st->ports.v[i].value);
	/* The main process must outlive every run and never be gemini: our init
	 * reaps zombies, stops the box promptly and holds its liveness lock. */
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_INIT, s->init);
	strv_pushf(argv, "--label=%s=%s", BOX_LABEL_STATE, s->state_dir);
	strv_push(argv, "--entrypoint=" BOX_INIT_PATH);
	push_mount(argv, s->init, BOX_INIT_PATH, true);
	/* Of the state directory, the box sees its lock alone, read-only: the
	 * record beside it, which the host trusts, stays out of its reach. */
	char *lock = xasprintf("%s/" BOX_LOCK_FILE, s->state_dir);
	push_mount(argv, lock, BOX_LOCK_PATH, true);
	free(lock);
	/* and, in allowlist mode, the directory of its proxy's socket, read-only
	 * (connecting to a socket needs no write access to its file system) */
	if (network_is_allowlist(st)) {
		char *egress = xasprintf("%s/" EGRESS_DIR, s->state_dir);
		push_mount(argv, egress, EGRESS_BOX_DIR, true);
		free(egress);
	}
	push_mount(argv, s->dir, s->dir, false);
	for (size_t i = 0; s->protect && i < s->protect->n; i++)
		push_mount(argv, s->protect->v[i].path, s->protect->v[i].path,
		           s->protect->v[i].readonly);
	/* ~/.gemini as an overlay: gemini in the box reads everything and its
	 * writes succeed, but they stay in the box (settings, extensions and
	 * commands are what the host's gemini would run). Only chats,
	 * checkpoints and shell history go through to the host. */
	char *home_gemini = xasprintf("%s/.gemini", runsc ? "/root" : st->home.value);
	strv_push(argv, "--volume");
	strv_pushf(argv, "%s:%s:O", s->gemini_home, home_gemini);
	for (size_t i = 0; i < sizeof(gemini_shared) / sizeof(*gemini_shared); i++) {
		char *src = xasprintf("%s/%s", s->gemini_home, gemini_shared[i]);
		char *dst = xasprintf("%s/%s", home_gemini, gemini_shared[i]);
		push_mount(argv, src, dst, false);
		free(dst);
		free(src);
	}
	free(home_gemini);
	/* gemini in the box finds the IDE companion's port files at the same path. */
	if (s->ide_dir)
		push_mount(argv, s->ide_dir, s->ide_dir, true);
	for (size_t i = 0; i < st->n_mounts; i++)
		push_mount(argv, st->mounts[i].source, st->mounts[i].target,
		           st->mounts[i].readonly);
	for (size_t i = 0; i < st->podman_args.n; i++)
		strv_push(argv, st->podman_args.v[i].value);
	strv_push(argv, s->image);
	strv_push(argv, "--lock");
	strv_push(argv, BOX_LOCK_PATH);
	strv_push(argv, "--idle-seconds");
	strv_pushf(argv, "%ld", settings_idle_seconds(st));
	if (network_is_allowlist(st)) {
		strv_push(argv, "--relay");
		strv_pushf(argv, "%d", EGRESS_BOX_PORT);
		strv_push(argv, EGRESS_BOX_DIR "/" EGRESS_SOCKET);
	}
}

bool network_is_allowlist(const struct settings *st)
{
	return st && st->network.value && strcmp(st->network.value, "allowlist") == 0;
}

void podman_verb_argv(const char *podman, const struct settings *st, enum step_kind kind,
                      const char *name, struct strv *argv)
{
	strv_push(argv, podman);
	push_runtime_flags(st, argv);
	switch (kind) {
	case STEP_START: strv_push(argv, "start"); break;
	case STEP_UNPAUSE: strv_push(argv, "unpause"); break;
	case STEP_STOP: strv_push(argv, "stop"); break;
	case STEP_REMOVE:
		strv_push(argv, "rm");
		strv_push(argv, "--force");
		break;
	default: strv_push(argv, "?"); break;
	}
	strv_push(argv, name);
}

static void exec_prefix(const struct box_spec *s, bool tty, struct strv *argv)
{
	strv_push(argv, s->podman);
	strv_push(argv, "exec");
	strv_push(argv, "-i");
	if (tty)
		strv_push(argv, "-t");
	/* Ctrl-P Ctrl-Q belong to gemini, not to podman's detach. */
	strv_push(argv, "--detach-keys=");
	strv_pushf(argv, "--workdir=%s", s->workdir);
}

/* Set at every exec, never at creation: SANDBOX keeps gemini from nesting a
 * sandbox of its own. Only SANDBOX, the box's name, carries its value on the
 * command line; other values come from the env file (runenv.h), forwarded
 * variables by name from podman's environment, which is the caller's. */
static void exec_env(const struct box_spec *s, struct strv *argv)
{
	strv_pushf(argv, "--env=SANDBOX=%s", s->name);
	if (s->env_file)
		strv_pushf(argv, "--env-file=%s", s->env_file);
	for (size_t i = 0; i < s->n_env; i++)
		strv_pushf(argv, "--env=%s", s->env_names[i]);
}

void podman_box_sh_argv(const char *podman, const char *box, const char *script, const char *name,
                        const char *const *args, struct strv *argv)
{
	strv_push(argv, podman);
	strv_push(argv, "exec");
	strv_push(argv, box);
	strv_push(argv, "/bin/sh");
	strv_push(argv, "-c");
	strv_push(argv, script);
	strv_push(argv, name);
	for (const char *const *a = args; *a; a++)
		strv_push(argv, *a);
}

void podman_exec_argv(const struct box_spec *s, struct strv *argv)
{
	exec_prefix(s, s->tty, argv);
	exec_env(s, argv);
	strv_push(argv, s->name);
	strv_push(argv, "gemini");
	strv_pushv(argv, s->gemini_args, s->n_args);
}

void podman_shell_argv(const struct box_spec *s, bool root, struct strv *argv)
{
	exec_prefix(s, s->tty, argv);
	if (root)
		strv_push(argv, "--user=root");
	exec_env(s, argv);
	strv_push(argv, s->name);
	/* The box's shell, not the host's: bash where the image has it. */
	strv_push(argv, "/bin/sh");
	strv_push(argv, "-c");
	strv_push(argv, "if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l");
}

void podman_build_argv(const char *podman, const char *containerfile, const char *tag,
                       const char *base_image, struct strv *argv)
{
	strv_push(argv, podman);
	strv_push(argv, "build");
	strv_pushf(argv, "--file=%s", containerfile);
	strv_pushf(argv, "--tag=%s", tag);
	strv_pushf(argv, "--build-arg=BASE_IMAGE=%s", base_image);
	char *dir = dir_of(containerfile);
	strv_push(argv, dir);
	free(dir);
}

/* Each line of text, one argument each (a file's content, printed as the
 * arguments of the printf that writes it). */
static void push_lines(struct strv *argv, const char *text)
{
	char *lines = xstrdup(text ? text : "");
	for (char *save = NULL, *l = strtok_r(lines, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		strv_push(argv, l);
	free(lines);
}

struct strv *plan_add(struct plan *p, enum step_kind kind)
{
	p->steps = xrealloc(p->steps, (p->n + 1) * sizeof(*p->steps));
	struct step *st = &p->steps[p->n++];
	st->kind = kind;
	st->argv = (struct strv)STRV_INIT;
	st->path = NULL;
	st->text = NULL;
	return &st->argv;
}

void plan_add_host(struct plan *p, enum step_kind kind, const char *path, const char *text)
{
	struct strv *argv = plan_add(p, kind);
	struct step *st = &p->steps[p->n - 1];
	st->path = xstrdup(path);
	st->text = text ? xstrdup(text) : NULL;
	/* What a person would type to do the same; values stay arguments. */
	switch (kind) {
	case STEP_MKDIR:
		strv_push(argv, "mkdir");
		strv_push(argv, "-p");
		strv_push(argv, "-m");
		strv_push(argv, "0700");
		strv_push(argv, path);
		break;
	case STEP_STATE:
		strv_push(argv, "sh");
		strv_push(argv, "-c");
		strv_push(argv, "umask 077 && mkdir -p \"$1/egress\" && touch \"$1/lock\"");
		strv_push(argv, "state");
		strv_push(argv, path);
		break;
	case STEP_INSTALL:
		/* the init's bytes are inside gemini-box: no command has them */
		strv_push(argv, ":");
		strv_push(argv, "write gemini-box's own init to");
		strv_push(argv, path);
		break;
	case STEP_WRITE_ENV: {
		strv_push(argv, "sh");
		strv_push(argv, "-c");
		strv_push(argv, "f=$1; shift; umask 077 && printf '%s\\n' \"$@\" >\"$f\"");
		strv_push(argv, "env-file");
		strv_push(argv, path);
		push_lines(argv, text);
		break;
	}
	case STEP_WRITE_ALLOW: {
		strv_push(argv, "sh");
		strv_push(argv, "-c");
		strv_push(argv, "f=$1; shift; umask 077 && printf '%s\\n' \"$@\" >\"$f.new\" && "
		                "mv -f \"$f.new\" \"$f\"");
		strv_push(argv, "egress-allow");
		strv_push(argv, path);
		push_lines(argv, text);
		break;
	}
	case STEP_PROXY:
		/* text: gemini-box itself; started only when no proxy serves the box */
		strv_push(argv, text ? text : "gemini-box");
		strv_push(argv, "--box-egress-proxy");
		strv_push(argv, path);
		break;
	case STEP_RECORD:
		/* ":" does nothing: the id is the create's output, known only then */
		strv_push(argv, ":");
		strv_push(argv, "record the box created above in");
		strv_push(argv, path);
		break;
	case STEP_REMOVE_FILE:
		strv_push(argv, "rm");
		strv_push(argv, "-f");
		strv_push(argv, path);
		break;
	default: break;
	}
}

void plan_bring_up(struct plan *p, const struct box_spec *s, enum box_state state,
                   bool image_present)
{
	switch (state) {
	case BOX_ABSENT:
		if (!image_present)
			podman_pull_argv(s, plan_add(p, STEP_PULL));
		podman_create_argv(s, plan_add(p, STEP_CREATE));
		plan_add_host(p, STEP_RECORD, s->state_dir, NULL);
		break;
	case BOX_STUCK:
		podman_verb_argv(s->podman, s->settings, STEP_STOP, s->name,
		                 plan_add(p, STEP_STOP));
		podman_verb_argv(s->podman, s->settings, STEP_START, s->name,
		                 plan_add(p, STEP_START));
		break;
	case BOX_STOPPED:
		podman_verb_argv(s->podman, s->settings, STEP_START, s->name,
		                 plan_add(p, STEP_START));
		break;
	case BOX_PAUSED:
		podman_verb_argv(s->podman, s->settings, STEP_UNPAUSE, s->name,
		                 plan_add(p, STEP_UNPAUSE));
		break;
	case BOX_RUNNING: break;
	}
}

void plan_clear(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		strv_clear(&p->steps[i].argv);
		free(p->steps[i].path);
		free(p->steps[i].text);
	}
	free(p->steps);
	p->steps = NULL;
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
