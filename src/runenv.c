#include "runenv.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress.h"
#include "envsel.h"
#include "plan.h"
#include "session.h"

static bool listed(const struct item_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].value, name) == 0)
			return true;
	return false;
}

static bool is_ide_name(const char *name)
{
	return strncmp(name, "GEMINI_CLI_IDE_", 15) == 0;
}

static void drop_name(struct strv *names, const char *name)
{
	size_t out = 0;
	for (size_t i = 0; i < names->n; i++) {
		if (strcmp(names->v[i], name) == 0 || (!*name && is_ide_name(names->v[i])))
			free(names->v[i]);
		else
			names->v[out++] = names->v[i];
	}
	names->n = out;
	if (names->v)
		names->v[out] = NULL;
}

static void set_fixed(struct strv *fixed, const char *name, const char *value)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < fixed->n; i++)
		if (strncmp(fixed->v[i], name, n) == 0 && fixed->v[i][n] == '=') {
			free(fixed->v[i]);
			fixed->v[i] = xasprintf("%s=%s", name, value);
			return;
		}
	strv_pushf(fixed, "%s=%s", name, value);
}

int run_env_build(const struct run_env_input *in, struct run_env *out, struct gb_error *err)
{
	const struct settings *s = in->settings;
	for (size_t i = 0; i < s->forward_env.n; i++)
		if (env_lookup(in->envp, s->forward_env.v[i].value))
			strv_push(&out->names, s->forward_env.v[i].value);
	env_forward_names(in->envp, &out->names);
	strv_sort_unique(&out->names, 0);
	/* Without a way to the companion, its token only gives the agent a key. */
	if (!s->ide.value || !in->ide_reachable)
		drop_name(&out->names, "");

	for (size_t i = 0; i < s->n_env; i++) {
		const char *name = s->env[i].name;
		bool forwarded = env_name_forwarded(name) || listed(&s->forward_env, name);
		if (forwarded && env_lookup(in->envp, name))
			continue; /* the caller's own value wins */
		set_fixed(&out->fixed, name, s->env[i].value);
	}
	if (runtime_is_runsc(s)) {
		/* gemini's own gVisor diagnostics (no loopback, stdio fallback) apply. */
		drop_name(&out->names, "GEMINI_SANDBOX");
		set_fixed(&out->fixed, "GEMINI_SANDBOX", "runsc");
	}
	if (in->ide_reachable && s->ide.value) {
		/* gemini dials the companion at host.docker.internal in a container,
		 * which the companion refuses (Host header); in a dev container it
		 * dials 127.0.0.1, which a host-network box shares with the host. */
		drop_name(&out->names, "REMOTE_CONTAINERS");
		set_fixed(&out->fixed, "REMOTE_CONTAINERS", "true");
	}
	if (network_is_allowlist(s)) {
		/* The box's only way out: its init's relay to the host's proxy.
		 * Whatever proxy the caller or a setting names would not be reached. */
		static const char *const names[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
			                             "http_proxy",  "NO_PROXY",    "no_proxy",
			                             "ALL_PROXY",   "all_proxy" };
		char *url = xasprintf("http://127.0.0.1:%d", EGRESS_BOX_PORT);
		for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
			drop_name(&out->names, names[i]);
			bool no = strncasecmp(names[i], "NO_", 3) == 0;
			bool all = strncasecmp(names[i], "ALL_", 4) == 0;
			set_fixed(&out->fixed, names[i],
			          no    ? "localhost,127.0.0.1,::1"
			          : all ? ""
			                : url);
		}
		free(url);
	}
	if (in->session)
		set_fixed(&out->fixed, SESSION_ENV, in->session);
	strv_sort_unique(&out->fixed, 0);

	/* A value podman would change is refused rather than passed on changed. */
	for (size_t i = 0; i < out->names.n; i++) {
		const char *value = env_lookup(in->envp, out->names.v[i]);
		if (value && !utf8_valid(value))
			return gb_fail(
			        err, EXIT_BOX_CONFIG,
			        "%s is not valid UTF-8, and podman would pass it on changed; "
			        "fix its value or unset it",
			        out->names.v[i]);
	}
	return 0;
}

char *run_env_file_text(const struct run_env *e)
{
	struct strv lines = STRV_INIT;
	for (size_t i = 0; i < e->fixed.n; i++)
		strv_pushf(&lines, "%s\n", e->fixed.v[i]);
	char *text = strv_join(&lines, "");
	strv_clear(&lines);
	return text;
}

void run_env_clear(struct run_env *e)
{
	strv_clear(&e->names);
	strv_clear(&e->fixed);
}
