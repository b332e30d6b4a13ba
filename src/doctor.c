#define _GNU_SOURCE
#include "doctor.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "boxinit.h"
#include "commands.h"
#include "fsutil.h"
#include "load.h"
#include "podman.h"
#include "query.h"
#include "egress-proxy.h"
#include "egress.h"
#include "strv.h"

void check_print(FILE *out, enum check_level level, const char *what, const char *fix)
{
	static const char *const words[] = { "OK  ", "WARN", "FAIL" };
	fprintf(out, "%s  %s%s%s\n", words[level], what, fix ? "; " : "", fix ? fix : "");
}

int subid_has_range(const char *text, const char *name, unsigned long uid)
{
	char uid_text[32];
	snprintf(uid_text, sizeof(uid_text), "%lu", uid);
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *colon = memchr(line, ':', len);
		if (colon) {
			size_t who = (size_t)(colon - line);
			const char *count = memchr(colon + 1, ':', len - who - 1);
			bool match = (strlen(name) == who && strncmp(line, name, who) == 0) ||
			             (strlen(uid_text) == who && strncmp(line, uid_text, who) == 0);
			if (match && count && strtoul(count + 1, NULL, 10) > 0)
				return 1;
		}
		line = end ? end + 1 : NULL;
	}
	return 0;
}

bool mountinfo_line_is_cgroup(const char *line)
{
	/* Mount points are escaped (\040 for a space), so " - " only ever
	 * separates the optional fields from the filesystem type. */
	const char *sep = strstr(line, " - ");
	if (!sep)
		return false;
	const char *type = sep + 3;
	size_t len = strcspn(type, " \n");
	return (len == 6 && strncmp(type, "cgroup", 6) == 0) ||
	       (len == 7 && strncmp(type, "cgroup2", 7) == 0);
}

/* ---- --box-doctor ---- */

struct doctor {
	int fails;
};

static void report(struct doctor *d, enum check_level level, const char *what, const char *fix)
{
	check_print(stdout, level, what, fix);
	if (level == CHECK_FAIL)
		d->fails++;
}

/* /etc/subuid and /etc/subgid: a line per user; a megabyte is thousands. */
#define SUBID_FILE_MAX (1 << 20)

static void doctor_subids(struct doctor *d)
{
	struct passwd *pw = getpwuid(getuid());
	const char *user = pw ? pw->pw_name : "?";
	const char *files[] = { "/etc/subuid", "/etc/subgid" };
	for (size_t i = 0; i < 2; i++) {
		char *text = read_small_file(files[i], SUBID_FILE_MAX, false);
		bool ok = text && subid_has_range(text, user, (unsigned long)getuid());
		char *what = xasprintf("%s: %s range for %s", files[i], ok ? "a" : "no", user);
		char *fix = ok ? NULL
		               : xasprintf("as root: usermod --add-subuids 100000-165535 "
		                           "--add-subgids 100000-165535 %s",
		                           user);
		report(d, ok ? CHECK_OK : CHECK_FAIL, what, fix);
		free(fix);
		free(what);
		free(text);
	}
}

/* Without a cgroup filesystem mounted, runc and crun refuse every container
 * ("no cgroup mount found in mountinfo"); some VMs boot that way. */
static void doctor_cgroups(struct doctor *d)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		char *what = xasprintf("/proc/self/mountinfo: %s", strerror(errno));
		report(d, CHECK_WARN, what, "is /proc mounted?");
		free(what);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	bool mounted = false;
	while (!mounted && getline(&line, &cap, f) > 0)
		mounted = mountinfo_line_is_cgroup(line);
	free(line);
	fclose(f);
	if (mounted)
		report(d, CHECK_OK, "a cgroup filesystem is mounted", NULL);
	else
		report(d, CHECK_FAIL, "no cgroup filesystem is mounted: no runtime can start a box",
		       "as root: mount the cgroup hierarchies under /sys/fs/cgroup (a systemd boot "
		       "does)");
}

static void doctor_tun(struct doctor *d, bool needed)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		report(d, CHECK_OK, "/dev/net/tun is usable (isolated networking)", NULL);
		return;
	}
	char *what = xasprintf("/dev/net/tun: %s", strerror(errno));
	report(d, needed ? CHECK_FAIL : CHECK_WARN, what,
	       errno == ENOENT ? "load the tun module (modprobe tun)"
	                       : "as root: chmod 666 /dev/net/tun (slirp4netns needs it for an "
	                         "isolated box's network)");
	free(what);
}

/* The allowlist mode: what the box may reach, and whether its proxy runs
 * (it starts with the box's next run, and stops with the box). */
static void doctor_egress(struct doctor *d, const struct context *ctx)
{
	if (!network_is_allowlist(&ctx->settings))
		return;
	size_t yours = ctx->settings.egress.n;
	char *what = xasprintf("network allowlist: gemini's %zu hosts and %zu of yours, through "
	                       "the host's egress proxy",
	                       egress_n_defaults, yours);
	report(d, CHECK_OK, what, NULL);
	free(what);
	char *id = NULL;
	bool box_up = state_lookup(ctx->state, ctx->record, &id) == STATE_RUNNING;
	free(id);
	if (!egress_rights_refusable())
		report(d, CHECK_WARN,
		       "this kernel cannot refuse descriptors a box sends its egress proxy "
		       "(SO_PASSRIGHTS, Linux 6.16): a hostile box can leave proxy processes "
		       "behind",
		       "a newer kernel");
	bool proxy_up = ctx->state && egress_proxy_running(ctx->state);
	if (proxy_up)
		report(d, CHECK_OK,
		       "egress proxy running (gemini-box --box-egress: what it refused)", NULL);
	else if (box_up)
		report(d, CHECK_FAIL, "the box runs without its egress proxy: it reaches nothing",
		       "run gemini-box again, which starts it");
	else
		report(d, CHECK_OK, "egress proxy not running; it starts with the box", NULL);
}

/* podman info: cgroups, OCI runtime, storage driver. */
static void doctor_podman_info(struct doctor *d, const struct context *ctx)
{
	const char *words[] = { "info", "--format", "json", NULL };
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	if (ctx->o->dry_run) {
		print_query(ctx, words);
		return;
	}
	if (query(ctx, words, &r, &e) < 0) {
		report(d, CHECK_FAIL, e.msg, NULL);
		gb_error_clear(&e);
		return;
	}
	cJSON *root = r.status == 0 ? cJSON_Parse(r.out) : NULL;
	if (!root) {
		char *msg = podman_message(r.err);
		char *what = xasprintf("podman info fails: %s", msg);
		report(d, CHECK_FAIL, what, "see podman info's own output");
		free(what);
		free(msg);
		run_result_clear(&r);
		return;
	}
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
	const cJSON *store = cJSON_GetObjectItemCaseSensitive(root, "store");
	const cJSON *cg = cJSON_GetObjectItemCaseSensitive(host, "cgroupVersion");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(host, "ociRuntime"), "name");
	const cJSON *drv = cJSON_GetObjectItemCaseSensitive(store, "graphDriverName");
	const char *cgroups = cJSON_IsString(cg) ? cg->valuestring : "?";
	const char *runtime = cJSON_IsString(rt) ? rt->valuestring : "?";
	const char *driver = cJSON_IsString(drv) ? drv->valuestring : "?";
	struct stat st;
	bool hybrid = strcmp(cgroups, "v1") == 0 && stat("/sys/fs/cgroup/unified", &st) == 0;
	char *what = xasprintf("cgroups %s%s, OCI runtime %s", cgroups, hybrid ? " (hybrid)" : "",
	                       runtime);
	if (hybrid && strcmp(runtime, "crun") == 0)
		report(d, CHECK_FAIL, what,
		       "crun refuses hybrid cgroups: put [engine] runtime = \"runc\" in "
		       "~/.config/containers/containers.conf");
	else
		report(d, CHECK_OK, what, NULL);
	free(what);
	what = xasprintf("storage driver %s", driver);
	if (strcmp(driver, "vfs") == 0)
		report(d, CHECK_WARN, what,
		       "vfs copies the whole image into every new box (slow creation): install "
		       "fuse-overlayfs");
	else
		report(d, CHECK_OK, what, NULL);
	free(what);
	cJSON_Delete(root);
	run_result_clear(&r);
}

/* A real connection from inside the box to the companion's port. */
/* The first line of what argv prints, as a version ("0.61.0"), or NULL; in a
 * dry run the command is printed instead. */
static char *version_of(const struct context *ctx, const struct strv *argv)
{
	if (ctx->o->dry_run) {
		struct plan p = { &(struct step){ STEP_PROBE, *argv, NULL, NULL }, 1 };
		plan_print(&p, stdout);
		return NULL;
	}
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	if (run_in(ctx, argv->v, CHILD_CAPTURE, &r, &e) < 0) {
		gb_error_clear(&e);
		return NULL;
	}
	char *v = NULL;
	if (r.status == 0) {
		r.out[strcspn(r.out, "\n")] = '\0';
		const char *start = r.out + strspn(r.out, " \t");
		if (*start >= '0' && *start <= '9')
			v = xstrdup(start);
	}
	run_result_clear(&r);
	return v;
}

/* Whether the box's gemini is the release the host has: a box on another
 * release behaves differently from the gemini the user types outside it. */
static void doctor_gemini_version(struct doctor *d, const struct context *ctx, enum box_state state)
{
	char *host_gemini = find_executable("gemini", context_env(ctx, "PATH"));
	if (!host_gemini) {
		report(d, CHECK_OK, "no gemini on this host's PATH to compare the box's with",
		       NULL);
		return;
	}
	struct strv argv = STRV_INIT;
	strv_push(&argv, host_gemini);
	strv_push(&argv, "--version");
	char *host = version_of(ctx, &argv);
	strv_clear(&argv);
	char *box = NULL;
	size_t repo = strlen(SANDBOX_IMAGE_REPO);
	if (state == BOX_RUNNING) {
		const char *words[] = { ctx->podman, "exec", ctx->name, "gemini", "--version" };
		for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
			strv_push(&argv, words[i]);
		box = version_of(ctx, &argv);
		strv_clear(&argv);
	} else if (strncmp(ctx->image, SANDBOX_IMAGE_REPO ":", repo + 1) == 0) {
		box = xstrdup(ctx->image + repo + 1); /* the official image, by its tag */
	}
	if (host && box && strcmp(host, box) == 0) {
		char *what = xasprintf("gemini %s in the box and on the host", box);
		report(d, CHECK_OK, what, NULL);
		free(what);
	} else if (host && box) {
		char *what = xasprintf("gemini %s in the box, %s on the host", box, host);
		char *fix = xasprintf("set \"gemini_version\": \"%s\" in your config.json (or "
		                      "GEMINI_BOX_GEMINI_VERSION), then gemini-box --box-recreate",
		                      host);
		report(d, CHECK_WARN, what, fix);
		free(fix);
		free(what);
	} else if (!ctx->o->dry_run) {
		char *what =
		        xasprintf("gemini %s on the host; the box's release is not known until it "
		                  "runs",
		                  host ? host : "(version unknown)");
		report(d, CHECK_OK, what, NULL);
		free(what);
	}
	free(box);
	free(host);
	free(host_gemini);
}

static void doctor_ide(struct doctor *d, const struct context *ctx, enum box_state state)
{
	const char *port = context_env_nonempty(ctx, "GEMINI_CLI_IDE_SERVER_PORT");
	if (!port) {
		report(d, CHECK_OK,
		       "no IDE companion in this environment (GEMINI_CLI_IDE_SERVER_PORT)", NULL);
		return;
	}
	if (!ctx->settings.ide.value) {
		report(d, CHECK_OK, "IDE variables withheld (\"ide\": false)", NULL);
		return;
	}
	if (!host_ide(ctx)) {
		char *what = xasprintf("the IDE companion (port %s) is unreachable from a box with "
		                       "network \"%s\"",
		                       port, ctx->settings.network.value);
		report(d, CHECK_WARN, what,
		       "set \"network\": \"host\" in your config.json, then gemini-box "
		       "--box-recreate");
		free(what);
		return;
	}
	if (state != BOX_RUNNING) {
		report(d, CHECK_WARN,
		       "cannot probe the IDE companion from a box that is not running",
		       "run gemini-box once, then --box-doctor again");
		return;
	}
	/* nc in busybox images, node in gemini's own. */
	static const char probe[] =
	        "if command -v nc >/dev/null 2>&1; then nc -w 2 127.0.0.1 \"$1\" </dev/null; "
	        "elif command -v node >/dev/null 2>&1; then node -e "
	        "'require(\"net\").connect(+process.argv[1],\"127.0.0.1\")"
	        ".on(\"connect\",()=>process.exit(0)).on(\"error\",()=>process.exit(1))' "
	        "\"$1\"; else exit 3; fi";
	struct strv argv = STRV_INIT;
	const char *args[] = { port, NULL };
	podman_box_sh_argv(ctx->podman, ctx->name, probe, "probe", args, &argv);
	if (ctx->o->dry_run) { /* runs a process in the box: not a mere query */
		struct plan p = { &(struct step){ STEP_EXEC, argv, NULL, NULL }, 1 };
		plan_print(&p, stdout);
		strv_clear(&argv);
		return;
	}
	struct run_result r;
	struct gb_error e = GB_ERROR_INIT;
	int rc = run_in(ctx, argv.v, CHILD_CAPTURE, &r, &e) == 0 ? r.status : -1;
	if (rc >= 0)
		run_result_clear(&r);
	gb_error_clear(&e);
	strv_clear(&argv);
	char *what = xasprintf("IDE companion at 127.0.0.1:%s, probed from inside the box", port);
	if (rc == 0)
		report(d, CHECK_OK, what, NULL);
	else if (rc == 3)
		report(d, CHECK_WARN, what, "cannot probe: the box has neither nc nor node");
	else
		report(d, CHECK_FAIL, what,
		       "not reachable: is the IDE window open, and GEMINI_CLI_IDE_SERVER_PORT "
		       "current?");
	free(what);
}

int cmd_doctor(struct context *ctx, struct gb_error *err)
{
	(void)err;
	struct doctor d = { 0 };
	struct gb_error e = GB_ERROR_INIT;
	bool have_podman = find_podman(ctx, &e) == 0;
	if (have_podman && ctx->o->dry_run) {
		const char *words[] = { "--version", NULL };
		print_query(ctx, words);
	} else if (have_podman) {
		const char *words[] = { "--version", NULL };
		struct run_result r;
		int rc = query(ctx, words, &r, &e);
		if (rc == 0 && r.status == 0) {
			r.out[strcspn(r.out, "\n")] = '\0';
			char *what = xasprintf("%s (%s)", r.out, ctx->podman);
			report(&d, CHECK_OK, what, NULL);
			free(what);
		} else {
			report(&d, CHECK_FAIL, "podman --version fails", "reinstall podman");
			have_podman = false;
		}
		if (rc == 0)
			run_result_clear(&r);
	} else {
		report(&d, CHECK_FAIL, e.msg, NULL);
	}
	gb_error_clear(&e);
	if (geteuid() == 0)
		report(&d, CHECK_WARN, "running as root: boxes are rootful, without keep-id",
		       "run gemini-box as your own user");
	else
		report(&d, CHECK_OK, "rootless", NULL);
	doctor_subids(&d);
	doctor_cgroups(&d);

	bool settled = resolve_home(ctx, &e) == 0 && resolve_dirs(ctx, &e) == 0 &&
	               resolve_gemini_home(ctx, false, &e) == 0 && load_settings(ctx, &e) == 0 &&
	               resolve_image(ctx, &e) == 0 && resolve_runtime_paths(ctx, &e) == 0;
	if (!settled) {
		report(&d, CHECK_FAIL, e.msg, NULL);
		gb_error_clear(&e);
	}
	doctor_tun(&d, !settled || strcmp(ctx->settings.network.value, "isolated") == 0);
	if (have_podman)
		doctor_podman_info(&d, ctx);
	if (settled)
		doctor_egress(&d, ctx);

	enum box_state state = BOX_ABSENT;
	if (have_podman && settled) {
		char *what = xasprintf("image %s", ctx->image);
		if (image_present(ctx, ctx->image))
			report(&d, CHECK_OK, what, NULL);
		else
			report(&d, CHECK_WARN, what,
			       ctx->build_needed ? "not built yet: the first run builds it"
			                         : "not here: the first run pulls it");
		free(what);
		struct box_info info;
		if (inspect_box(ctx, &info, &e) == 0) {
			state = info.state;
			struct strv drift = STRV_INIT;
			if (info.state != BOX_ABSENT)
				settings_digest_diff(info.label_settings, ctx->digest, &drift);
			char *keys = strv_join(&drift, ", ");
			what = xasprintf("box %s: %s%s%s", ctx->name,
			                 info.state == BOX_ABSENT
			                         ? "absent (the next run creates it)"
			                         : info.status,
			                 drift.n ? ", settings drifted: " : "", keys);
			report(&d, drift.n ? CHECK_WARN : CHECK_OK, what,
			       drift.n ? "gemini-box --box-recreate applies them" : NULL);
			free(what);
			free(keys);
			strv_clear(&drift);
			box_info_clear(&info);
		} else {
			report(&d, CHECK_FAIL, e.msg, NULL);
			gb_error_clear(&e);
		}
		doctor_ide(&d, ctx, state);
		doctor_gemini_version(&d, ctx, state);
	}
	char *runsc = find_executable("runsc", context_env(ctx, "PATH"));
	bool wants_runsc = settled && runtime_is_runsc(&ctx->settings);
	if (runsc)
		report(&d, CHECK_OK, "runsc (gVisor) is installed", NULL);
	else
		report(&d, wants_runsc ? CHECK_FAIL : CHECK_WARN, "runsc (gVisor) is not installed",
		       wants_runsc
		               ? "the settings ask for it: apt-get install runsc"
		               : "only \"runtime\": \"runsc\" needs it (apt-get install runsc)");
	free(runsc);
	ctx->exit_status = d.fails ? 1 : 0;
	return 0;
}
