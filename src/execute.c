#define _GNU_SOURCE
/* execute: the one executor of plans, and the plans of bringing a box up
 * and of a session. Every side effect of a run is a step of a plan. */
#include "execute.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "boxid.h"
#include "boxinit.h"
#include "egress-proxy.h"
#include "egress.h"
#include "fsutil.h"
#include "localimage.h"
#include "podman.h"
#include "query.h"
#include "quote.h"
#include "session.h"
#include "spawn.h"
#include "strv.h"

/* Runs racing to create one box: each lost race costs one more inspect. */
#define CREATE_ATTEMPTS 3

/* The podman verb of a step's argv, past the runtime's global flags. */
static const char *podman_verb(const struct step *st)
{
	for (size_t i = 1; i < st->argv.n; i++)
		if (st->argv.v[i][0] != '-')
			return st->argv.v[i];
	return "?";
}

/* Runs one podman step; *out, when not NULL, gets what it printed (a new box's id). */
enum step_outcome run_podman_step(const struct context *ctx, const struct step *st, char **out,
                                  struct gb_error *err)
{
	const char *image = ctx->image;
	if (st->kind == STEP_ROOTFS && !strchr(st->argv.v[0], '/')) {
		gb_fail(err, EXIT_BOX_NOPODMAN,
		        "mmdebstrap not found, and it makes the local image; install it (apt-get "
		        "install mmdebstrap), or choose another image");
		return STEP_FAILED;
	}
	/* What makes images shows its progress; the others' messages become ours. */
	bool show = st->kind == STEP_PULL || st->kind == STEP_BUILD || st->kind == STEP_ROOTFS ||
	            st->kind == STEP_IMPORT;
	struct run_result r;
	if (run_in(ctx, st->argv.v, show ? CHILD_SHOW : CHILD_CAPTURE, &r, err) < 0)
		return STEP_FAILED;
	enum step_outcome outcome = STEP_OK;
	if (r.status != 0) {
		char *msg = podman_message(r.err);
		outcome = STEP_FAILED;
		switch (st->kind) {
		case STEP_PULL:
			gb_fail(err, EXIT_BOX_IMAGE,
			        "image %s is not here and pulling it failed; check its name, your "
			        "network and podman login, or choose one with --box-image; without "
			        "a "
			        "container registry, \"image\": \"local\" makes one from Debian's "
			        "and "
			        "npm's packages (gemini-box --box-build)",
			        image);
			break;
		case STEP_ROOTFS:
			gb_fail(err, EXIT_BOX_IMAGE,
			        "making the local image's root file system with mmdebstrap failed "
			        "(see its output above); it needs Debian's and npm's registries "
			        "and "
			        "your subordinate ids (gemini-box --box-doctor)");
			break;
		case STEP_IMPORT:
			gb_fail(err, EXIT_BOX_IMAGE, "podman import of the local image failed: %s",
			        msg);
			break;
		case STEP_BUILD:
			gb_fail(err, EXIT_BOX_IMAGE,
			        "building the image from the containerfile failed (see podman "
			        "build's output above); fix the file and run again");
			break;
		case STEP_CREATE:
			if (strstr(r.err, "already in use")) {
				outcome = STEP_LOST_RACE; /* another run created it first */
				break;
			}
			gb_fail(err, EXIT_BOX_PODMAN, "podman run failed: %s", msg);
			break;
		default:
			gb_fail(err, EXIT_BOX_PODMAN, "podman %s %s failed: %s", podman_verb(st),
			        st->argv.v[st->argv.n - 1], msg);
			break;
		}
		free(msg);
		/* gVisor fails for reasons of its own (cgroups, kernel features). */
		if (outcome == STEP_FAILED && runtime_is_runsc(&ctx->settings) &&
		    (st->kind == STEP_CREATE || st->kind == STEP_START)) {
			char *plain = xstrdup(err->msg);
			gb_fail(err, EXIT_BOX_PODMAN,
			        "%s; gVisor (runsc) could not run the box: check runsc --version "
			        "and gemini-box --box-doctor, or drop \"runtime\" from your "
			        "config.json",
			        plain);
			free(plain);
		}
	}
	if (out && outcome == STEP_OK) {
		*out = r.out;
		r.out = NULL;
		(*out)[strcspn(*out, "\n")] = '\0';
	}
	run_result_clear(&r);
	return outcome;
}

/* Writes a new private file: never through a link, never over another's. */
static int write_private_file(const char *path, const char *text, struct gb_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	size_t len = strlen(text);
	int rc = fd >= 0 && write(fd, text, len) == (ssize_t)len ? 0 : -1;
	int e = errno;
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc < 0) {
		if (fd >= 0)
			unlink(path);
		return gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot write", path, strerror(e));
	}
	return 0;
}

/* Replaces a private file: a new one beside it, renamed over it. */
static int replace_private_file(const char *path, const char *text, struct gb_error *err)
{
	char *tmp = xasprintf("%s.new", path);
	unlink(tmp);
	int rc = write_private_file(tmp, text, err);
	if (rc == 0 && rename(tmp, path) < 0) {
		rc = gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot write", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* How long a proxy just started may take to listen. */
#define PROXY_READY_TRIES 400
#define PROXY_READY_NS    5000000L

/* The box's egress proxy, started unless one serves the box already; ready
 * (listening) when this returns. */
static int ensure_proxy(const char *state, const char *self, struct gb_error *err)
{
	if (egress_proxy_running(state))
		return 0;
	char *sock = xasprintf("%s/" EGRESS_DIR "/" EGRESS_SOCKET, state);
	unlink(sock); /* a dead proxy's; the new one's shows it is listening */
	struct strv argv = STRV_INIT;
	strv_push(&argv, "/proc/self/exe");
	strv_push(&argv, EGRESS_PROXY_OPTION);
	strv_push(&argv, state);
	char *empty[] = { NULL };
	struct child c = { argv.v, empty, CHILD_DETACHED };
	int rc = child_detach(&c, err);
	strv_clear(&argv);
	struct stat st;
	for (int i = 0; rc == 0 && i < PROXY_READY_TRIES && lstat(sock, &st) < 0; i++) {
		struct timespec pause = { 0, PROXY_READY_NS };
		nanosleep(&pause, NULL);
	}
	if (rc == 0 && lstat(sock, &st) < 0)
		rc = gb_fail(err, EXIT_BOX_INTERNAL,
		             "the box's egress proxy (%s %s %s) did not start; see "
		             "gemini-box --box-doctor",
		             self, EGRESS_PROXY_OPTION, state);
	free(sock);
	return rc;
}

/* Runs one host step (plan.h). */
int run_host_step(const struct step *st, struct gb_error *err)
{
	switch (st->kind) {
	case STEP_MKDIR:
		if (mkdir_p(st->path, 0700) < 0)
			return gb_fail_path(err, EXIT_BOX_NODIR, "cannot create", st->path,
			                    strerror(errno));
		return 0;
	case STEP_STATE: {
		/* the base first: a box's state directory lives in a private one */
		char *name = strrchr(st->path, '/');
		char *dir = NULL;
		int rc = state_dir(name ? name + 1 : st->path, true, &dir, err);
		if (rc == 0 && strcmp(dir, st->path) != 0)
			rc = state_dir_ensure(st->path, err);
		free(dir);
		return rc;
	}
	case STEP_INSTALL: return init_install(st->path, err);
	case STEP_WRITE_ENV: return write_private_file(st->path, st->text, err);
	case STEP_WRITE_ALLOW: return replace_private_file(st->path, st->text, err);
	case STEP_PROXY: return ensure_proxy(st->path, st->text, err);
	case STEP_REMOVE_FILE: unlink(st->path); return 0;
	default: return gb_fail(err, EXIT_BOX_INTERNAL, "not a host step");
	}
}

/* The state directory now records what the box was made with, and the box
 * mounts this init from now on. */
static int record_created(struct context *ctx, const char *id, struct gb_error *err)
{
	if (!id)
		return gb_fail(err, EXIT_BOX_INTERNAL, "no box was created to record");
	free(ctx->box_init);
	free(ctx->box_state);
	ctx->box_init = xstrdup(ctx->init_copy);
	ctx->box_state = xstrdup(ctx->state);
	return state_record_write(ctx->state, ctx->record, id, err);
}

/* Whether the agent could have changed path: it lies in something a box
 * mounts writable (the project, its git directory, ~/.gemini's shared parts,
 * a writable settings mount). */
static bool in_agents_reach(const struct context *ctx, const char *path)
{
	if (path_is_within(path, ctx->dir) || path_is_within(path, ctx->gemini_home) ||
	    (ctx->protect.git_dir && path_is_within(path, ctx->protect.git_dir)))
		return true;
	for (size_t i = 0; i < ctx->settings.n_mounts; i++)
		if (!ctx->settings.mounts[i].readonly &&
		    path_is_within(path, ctx->settings.mounts[i].source))
			return true;
	return false;
}

/* Podman resolves every bind source again at each start: a source the agent
 * replaced with a symlink (to $HOME, say) while the box ran would be mounted
 * in its place. Every source in its reach must still be the very path it was
 * (podman's own, such as an overlay's work directory, are not). */
static int check_mount_sources(const struct context *ctx, const struct box_info *info,
                               struct gb_error *err)
{
	for (size_t i = 0; info && i < info->n_mounts; i++) {
		const char *src = info->mount_sources[i];
		if (!in_agents_reach(ctx, src))
			continue;
		char *real = realpath(src, NULL);
		bool moved = !real || strcmp(real, src) != 0;
		free(real);
		if (moved) {
			char *q = shell_quote(src);
			gb_fail(err, EXIT_BOX_PODMAN,
			        "box %s mounts %s, which is no longer what it was when the box was "
			        "made (a link was put in its place, or it is gone); not starting "
			        "it: "
			        "gemini-box --box-recreate makes the box anew",
			        ctx->name, q);
			free(q);
			return -1;
		}
	}
	return 0;
}

/* A stopped box mounts what it was made with: an init that an upgrade
 * replaced must still be there. */
static int check_start(struct context *ctx, struct gb_error *err)
{
	if (!ctx->box_init || access(ctx->box_init, X_OK) == 0 ||
	    strcmp(ctx->box_init, ctx->init_copy) == 0)
		return 0;
	char *q = shell_quote(ctx->box_init);
	gb_fail(err, EXIT_BOX_PODMAN,
	        "box %s's init %s is gone (gemini-box was upgraded, or its data removed); "
	        "gemini-box --box-recreate makes the box anew",
	        ctx->name, q);
	free(q);
	return -1;
}

/* The IDE's stdio fallback names a program on the host; gemini in the box
 * can only start it if the box has it too: a probe step, on such runs only. */
static void plan_stdio_probe(const struct context *ctx, struct plan *p)
{
	const char *command = context_env_nonempty(ctx, "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND");
	if (ctx->o->command != CMD_RUN || !command || command[0] != '/' || !host_ide(ctx))
		return;
	const char *args[] = { command, NULL };
	podman_box_sh_argv(ctx->podman, ctx->name, "test -e \"$1\"", "stdio-check", args,
	                   plan_add(p, STEP_PROBE));
}

/* A probe that finds the IDE's stdio command missing (test -e: status 1) says so. */
static void run_probe(const struct context *ctx, const struct step *st)
{
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	if (run_in(ctx, st->argv.v, CHILD_CAPTURE, &r, &e) == 0) {
		if (r.status == 1) {
			char *q = shell_quote(st->argv.v[st->argv.n - 1]);
			gb_warn("the IDE's stdio command %s is not in the box, so gemini cannot "
			        "start "
			        "it; mount it there (\"mounts\" in your config.json)",
			        q);
			free(q);
		}
		run_result_clear(&r);
	}
	gb_error_clear(&e);
}

/* The one executor: runs the steps in order; a STEP_EXEC is the session,
 * whose status is kept. A STEP_REMOVE_FILE after a failure still runs, so
 * that an env file never outlives its run. */
enum step_outcome run_plan(struct context *ctx, const struct plan *p, struct gb_error *err)
{
	enum step_outcome outcome = STEP_OK;
	char *created_id = NULL; /* what the last create printed, for its record */
	for (size_t i = 0; i < p->n; i++) {
		const struct step *st = &p->steps[i];
		if (outcome != STEP_OK && st->kind != STEP_REMOVE_FILE)
			continue;
		switch (st->kind) {
		case STEP_RECORD:
			if (record_created(ctx, created_id, err) < 0)
				outcome = STEP_FAILED;
			continue;
		case STEP_PROBE: run_probe(ctx, st); continue;
		case STEP_EXEC: {
			int status = session_run(st->argv.v, ctx->envp, ctx->podman, ctx->name,
			                         ctx->session, err);
			if (status < 0)
				outcome = STEP_FAILED;
			else
				ctx->exit_status = status;
			continue;
		}
		case STEP_START:
			if (check_start(ctx, err) < 0) {
				outcome = STEP_FAILED;
				continue;
			}
			break;
		case STEP_CREATE:
			if (geteuid() == 0)
				gb_warn("running as root, so the box is created without "
				        "--userns=keep-id; run gemini-box as your own user");
			if (strcmp(ctx->settings.network.value, "none") == 0)
				gb_warn("network \"none\": gemini in this box cannot reach its "
				        "API");
			resolve_ide_dir(ctx, true);
			break;
		default: break;
		}
		if (st->kind <= STEP_REMOVE_FILE) {
			struct gb_error ignored = GB_ERROR_INIT;
			if (run_host_step(st, outcome == STEP_OK ? err : &ignored) < 0)
				outcome = STEP_FAILED;
			gb_error_clear(&ignored);
			continue;
		}
		free(created_id);
		created_id = NULL;
		outcome =
		        run_podman_step(ctx, st, st->kind == STEP_CREATE ? &created_id : NULL, err);
		if (outcome == STEP_OK && st->kind == STEP_CREATE)
			image_remember(ctx->image); /* the next new box need not ask */
		if (outcome == STEP_LOST_RACE)
			break;
	}
	free(created_id);
	return outcome;
}

/* The host steps a new box needs before podman creates it: its state
 * directory and lock, the init, and what it mounts that may be missing. */
static void plan_create_preparation(const struct context *ctx, struct plan *p)
{
	plan_add_host(p, STEP_STATE, ctx->state, NULL);
	if (access(ctx->init_copy, X_OK) != 0)
		plan_add_host(p, STEP_INSTALL, ctx->init_copy, NULL);
	for (size_t i = 0; i < GEMINI_SHARED_N; i++) {
		char *dir = xasprintf("%s/%s", ctx->gemini_home, gemini_shared[i]);
		if (access(dir, F_OK) != 0)
			plan_add_host(p, STEP_MKDIR, dir, NULL);
		free(dir);
	}
	if (ctx->protect.make_hooks)
		plan_add_host(p, STEP_MKDIR, ctx->protect.make_hooks, NULL);
}

/* A stopped box's state directory may have been emptied (/tmp after a
 * reboot), and its init's copy removed: both are made again. */
static void plan_start_preparation(const struct context *ctx, struct plan *p)
{
	if (ctx->box_state)
		plan_add_host(p, STEP_STATE, ctx->box_state, NULL);
	if (ctx->box_init && strcmp(ctx->box_init, ctx->init_copy) == 0 &&
	    access(ctx->init_copy, X_OK) != 0)
		plan_add_host(p, STEP_INSTALL, ctx->init_copy, NULL);
}

/* gemini-box's own image (localimage.h): its root file system, made with
 * mmdebstrap into the data directory, imported, and the tarball removed. */
void plan_local_image(const struct context *ctx, const char *image, struct plan *p)
{
	const char *tag = image + strlen(LOCAL_IMAGE_REPO ":");
	char *dir = xasprintf("%s/gemini-box/images", ctx->data_home);
	char *tarball = xasprintf("%s/%s.tar", dir, tag);
	char *mmdebstrap = find_executable("mmdebstrap", context_env(ctx, "PATH"));
	/* the release: the tag's part before the recipe's id */
	char *version = xstrndup(tag, (size_t)(strrchr(tag, '-') - tag));
	plan_add_host(p, STEP_MKDIR, dir, NULL);
	local_image_rootfs_argv(mmdebstrap ? mmdebstrap : "mmdebstrap", version, tarball,
	                        plan_add(p, STEP_ROOTFS));
	local_image_import_argv(ctx->podman, tarball, image, plan_add(p, STEP_IMPORT));
	plan_add_host(p, STEP_REMOVE_FILE, tarball, NULL);
	free(version);
	free(mmdebstrap);
	free(tarball);
	free(dir);
}

/* The podman steps that bring the box up, each with its host preparation.
 * have_base: whether the base a containerfile builds on is there (it may be
 * the local image, which is made, not pulled). */
void plan_box_up(const struct context *ctx, const struct box_spec *spec, enum box_state state,
                 bool have_image, bool have_base, struct plan *p)
{
	if (!have_image && ctx->local_needed && (!ctx->build_needed || !have_base))
		plan_local_image(ctx, ctx->settings.image.value, p);
	if (!have_image && ctx->build_needed)
		podman_build_argv(ctx->podman, ctx->settings.containerfile.value, ctx->image,
		                  ctx->settings.image.value, plan_add(p, STEP_BUILD));
	if (state == BOX_ABSENT)
		plan_create_preparation(ctx, p);
	else if (state == BOX_STOPPED || state == BOX_STUCK)
		plan_start_preparation(ctx, p);
	plan_bring_up(p, spec, state, have_image || ctx->build_needed || ctx->local_needed);
}

/* The session: its env file written, podman exec, the file removed. */
void plan_session(const struct context *ctx, const struct box_spec *spec, bool shell,
                  struct plan *p)
{
	char *text = ctx->env.fixed.n ? run_env_file_text(&ctx->env) : NULL;
	if (network_is_allowlist(&ctx->settings) && ctx->state) {
		/* The list as the settings say now, read by the proxy at each
		 * connection; the proxy itself if the box has none running. */
		char *allow = egress_allow_text(&ctx->settings.egress);
		char *file = xasprintf("%s/" EGRESS_ALLOW_FILE, ctx->state);
		plan_add_host(p, STEP_WRITE_ALLOW, file, allow);
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		plan_add_host(p, STEP_PROXY, ctx->state, n > 0 ? self : NULL);
		free(file);
		free(allow);
	}
	if (text)
		plan_add_host(p, STEP_WRITE_ENV, ctx->env_file, text);
	plan_stdio_probe(ctx, p);
	if (shell)
		podman_shell_argv(spec, ctx->o->root, plan_add(p, STEP_EXEC));
	else
		podman_exec_argv(spec, plan_add(p, STEP_EXEC));
	if (text)
		plan_add_host(p, STEP_REMOVE_FILE, ctx->env_file, NULL);
	free(text);
}

/* Observes the box and plans bringing it up (and a session), retrying when
 * a concurrent run creates the box first. */
int bring_up_and(struct context *ctx, bool tty, enum session_kind session, struct gb_error *err)
{
	for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
		struct box_info info;
		if (inspect_own_box(ctx, &info, err) < 0)
			return -1;
		if (attempt == 0)
			report_drift(ctx, &info);
		free(ctx->box_init);
		free(ctx->box_state);
		ctx->box_init = info.label_init ? xstrdup(info.label_init) : NULL;
		/* A label names the state directory; gemini-box only uses its own. */
		ctx->box_state = info.label_state && state_dir_is_ours(info.label_state, ctx->name)
		                         ? xstrdup(info.label_state)
		                         : NULL;
		if ((info.state == BOX_STOPPED || info.state == BOX_STUCK) && !ctx->o->dry_run &&
		    check_mount_sources(ctx, &info, err) < 0) {
			box_info_clear(&info);
			return -1;
		}
		struct box_spec spec = context_spec(ctx, tty);
		struct plan plan = PLAN_INIT;
		bool have_image = info.state != BOX_ABSENT || image_present(ctx, ctx->image);
		bool have_base = have_image || !ctx->build_needed || !ctx->local_needed ||
		                 image_present(ctx, ctx->settings.image.value);
		plan_box_up(ctx, &spec, info.state, have_image, have_base, &plan);
		box_info_clear(&info);
		if (session != NO_SESSION)
			plan_session(ctx, &spec, session == SHELL_SESSION, &plan);

		if (ctx->o->dry_run) {
			plan_print(&plan, stdout);
			plan_clear(&plan);
			return 0;
		}
		enum step_outcome outcome = run_plan(ctx, &plan, err);
		plan_clear(&plan);
		if (outcome == STEP_LOST_RACE)
			continue;
		return outcome == STEP_OK ? 0 : -1;
	}
	return gb_fail(err, EXIT_BOX_PODMAN,
	               "box %s keeps appearing and vanishing while it is created; "
	               "check what else manages it (podman ps -a)",
	               ctx->name);
}

/* Asks before removing; --box-yes answers, and without a terminal it is required. */
int confirm(const struct context *ctx, const char *question, struct gb_error *err)
{
	if (ctx->o->yes || ctx->o->dry_run)
		return 0;
	if (!isatty(STDIN_FILENO))
		return gb_fail(
		        err, EXIT_BOX_USAGE,
		        "%s needs your yes and there is no terminal to ask on; add --box-yes",
		        ctx->o->command_option);
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	char line[64];
	if (!fgets(line, sizeof(line), stdin) || (strcmp(line, "y\n") && strcmp(line, "yes\n") &&
	                                          strcmp(line, "Y\n") && strcmp(line, "YES\n")))
		return gb_fail(err, EXIT_BOX_DECLINED, "not confirmed; nothing was removed");
	return 0;
}
