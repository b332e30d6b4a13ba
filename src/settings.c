#define _GNU_SOURCE
#include "settings.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boxid.h"
#include "egress.h"
#include "envsel.h"
#include "hash.h"
#include "quote.h"
#include "settings-keys.h"

const char *origin_name(enum origin_kind kind)
{
	switch (kind) {
	case ORIGIN_DEFAULT: return "default";
	case ORIGIN_USER: return "user file";
	case ORIGIN_PROJECT: return "project file";
	case ORIGIN_ENV: return "environment";
	case ORIGIN_OPTION: return "option";
	}
	return "?";
}

static void set_str(struct str_setting *st, const char *value, struct origin origin)
{
	free(st->value);
	st->value = value ? xstrdup(value) : NULL;
	st->origin = origin;
}

static void set_num(struct num_setting *num, double value, struct origin origin)
{
	num->value = value;
	num->origin = origin;
}

static void list_clear(struct item_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].value);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void list_push(struct item_list *l, const char *value, struct origin origin)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].value = xstrdup(value);
	l->v[l->n].origin = origin;
	l->n++;
}

/* podman reads its env file a line at a time, 64 KiB at most ("NAME=value\n"). */
#define ENV_LINE_MAX (64 * 1024)

/* ---- validation helpers; each returns NULL when fine, else what is wrong ---- */

static bool has_control(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return true;
	return false;
}

const char *image_name_problem(const char *v)
{
	if (!*v)
		return "must not be empty";
	if (*v == '-')
		return "must not start with '-' (podman would read it as an option)";
	for (const unsigned char *c = (const unsigned char *)v; *c; c++)
		if (*c <= 0x20 || *c == 0x7f)
			return "must be an image name without spaces or control characters";
	return NULL;
}

static bool parse_id(const char *s, size_t len)
{
	if (len == 0 || len > 10)
		return false;
	unsigned long long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v < 4294967295ULL; /* (uid_t)-1 means "no id" */
}

static const char *check_user(const char *v)
{
	const char *colon = strchr(v, ':');
	if (!colon || !parse_id(v, (size_t)(colon - v)) || !parse_id(colon + 1, strlen(colon + 1)))
		return "must be \"uid:gid\" in numbers, such as \"1000:1000\"";
	return NULL;
}

static const char *check_abs_path(const char *v)
{
	if (v[0] != '/')
		return "must be an absolute path";
	if (has_control(v))
		return "must not hold control characters";
	return NULL;
}

static const char *check_network(const char *v)
{
	if (strcmp(v, "isolated") && strcmp(v, "host") && strcmp(v, "none") &&
	    strcmp(v, "allowlist"))
		return "must be \"isolated\", \"host\", \"allowlist\" or \"none\"";
	return NULL;
}

/* How much of the world a network setting reaches: a project file may
 * only narrow what the user chose. */
static int network_reach(const char *v)
{
	static const char *const order[] = { "none", "allowlist", "isolated", "host" };
	for (int i = 0; v && i < 4; i++)
		if (strcmp(v, order[i]) == 0)
			return i;
	return 4;
}

static const char *check_runtime(const char *v)
{
	if (!*v || has_control(v) || strchr(v, ' '))
		return "must name an OCI runtime, such as \"runc\" or \"runsc\"";
	return NULL;
}

static bool parse_port(const char *s, size_t len)
{
	if (len == 0 || len > 5)
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v >= 1 && v <= 65535;
}

static const char *check_port(const char *v)
{
	const char *colon = strchr(v, ':');
	if (!colon || !parse_port(v, (size_t)(colon - v)) ||
	    !parse_port(colon + 1, strlen(colon + 1)))
		return "must be \"HOST:BOX\" port numbers from 1 to 65535, such as \"8080:8080\"";
	return NULL;
}

static const char *check_env_name(const char *v)
{
	return env_name_valid(v) ? NULL : "not a variable name (letters, digits and _)";
}

static const char *check_protected_path(const char *v)
{
	if (!*v || v[0] == '/' || has_control(v))
		return "must be a path inside the project, such as \".envrc\" or \".vscode\"";
	for (const char *c = v; c && *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL)
		if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
			return "must stay inside the project (no \"..\")";
	return NULL;
}

static const char *check_version(const char *v)
{
	size_t n = strlen(v);
	if (n == 0 || n > 64 || v[0] == '-' ||
	    strspn(v, "0123456789abcdefghijklmnopqrstuvwxyz"
	              "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-+_") != n)
		return "must be a gemini-cli release such as \"" DEFAULT_GEMINI_VERSION "\"";
	return NULL;
}

static const char *check_podman_arg(const char *v)
{
	return *v ? NULL : "must not be empty";
}

/* ---- the keys, each described once, in the order settings_print shows them ---- */

#define AT(member) offsetof(struct settings, member)

const struct key settings_keys[] = {
	{ "image", KEY_STRING, AT(image), .check = image_name_problem,
	  .text_default = DEFAULT_IMAGE, .env = { "GEMINI_IMAGE", "GEMINI_BOX_IMAGE" },
	  .approval = APPROVE_KEY, .may_not = "choose the image (the program that gets your keys)",
	  .readme_place = 1, .digest_place = 1 },
	/* The digest has the image built from it, by its tag. */
	/* Picks the image too, when no one set "image". */
	{ "gemini_version", KEY_STRING, AT(gemini_version), .check = check_version,
	  .env = { "GEMINI_BOX_GEMINI_VERSION" }, .approval = APPROVE_KEY,
	  .may_not = "choose the gemini release (the program that gets your keys)",
	  .readme_place = 16 },
	{ "containerfile", KEY_HOST_PATH, AT(containerfile), .approval = APPROVE_KEY,
	  .may_not = "build the image (the program that gets your keys)", .readme_place = 11 },
	{ "user", KEY_STRING, AT(user), .check = check_user, .text_default = DEFAULT_BOX_USER,
	  .env = { "GEMINI_BOX_USER" }, .readme_place = 2, .digest_place = 2 },
	{ "home", KEY_STRING, AT(home), .check = check_abs_path, .text_default = DEFAULT_BOX_HOME,
	  .env = { "GEMINI_BOX_HOME" }, .readme_place = 3, .digest_place = 3 },
	{ "network", KEY_STRING, AT(network), .check = check_network,
	  .text_default = DEFAULT_NETWORK, .env = { "GEMINI_BOX_NETWORK" },
	  .approval = APPROVE_WIDER, .may_not = "share the host's network", .readme_place = 8,
	  .digest_place = 4 },
	{ "runtime", KEY_STRING, AT(runtime), .check = check_runtime,
	  .env = { "GEMINI_BOX_RUNTIME" }, .approval = APPROVE_KEY,
	  .may_not = "choose the container runtime", .readme_place = 9, .digest_place = 5 },
	{ "idle_stop_minutes", KEY_MINUTES, AT(idle_stop_minutes),
	  .number_default = DEFAULT_IDLE_STOP_MINUTES, .readme_place = 12, .digest_place = 10 },
	/* The digest's own "ide" says whether the box shares the IDE's port files. */
	{ "ide", KEY_BOOL, AT(ide), .number_default = 1, .readme_place = 13 },
	{ "mounts", KEY_MOUNTS, AT(mounts), .approval = APPROVE_ITEMS,
	  .may_not = "mount a path outside the project", .readme_place = 4, .digest_place = 6 },
	/* A repository must not point your credentials at its own server. env
	 * and forward_env apply at every run: they are no part of the digest. */
	{ "env", KEY_ENV, AT(env), .approval = APPROVE_ITEMS,
	  .may_not = "set a variable that gemini-box carries from your environment",
	  .readme_place = 5 },
	{ "forward_env", KEY_LIST, AT(forward_env), .check = check_env_name,
	  .approval = APPROVE_KEY, .may_not = "carry variables of yours into the box",
	  .readme_place = 6 },
	{ "ports", KEY_LIST, AT(ports), .check = check_port, .readme_place = 7, .digest_place = 7 },
	{ "podman_args", KEY_LIST, AT(podman_args), .check = check_podman_arg,
	  .approval = APPROVE_KEY, .may_not = "add podman arguments", .readme_place = 10,
	  .digest_place = 8 },
	/* Only ever more protection: a project file may add to it too. */
	{ "protected_paths", KEY_LIST, AT(protected_paths), .check = check_protected_path,
	  .readme_place = 14, .digest_place = 9 },
	{ "trusted_projects", KEY_TRUSTED, AT(trusted), .readme_place = 15 },
	/* Hosts added to what an "allowlist" box reaches. Read by the box's
	 * proxy at every connection from the file each run writes: no part of
	 * the digest. Widening it is what a hostile repository would want. */
	{ "egress", KEY_LIST, AT(egress), .check = egress_rule_problem, .approval = APPROVE_KEY,
	  .may_not = "add hosts a box may reach", .readme_place = 17 },
};

const size_t settings_n_keys = sizeof(settings_keys) / sizeof(*settings_keys);

void *key_value(struct settings *s, const struct key *k)
{
	return (char *)s + k->offset;
}

const void *key_value_in(const struct settings *s, const struct key *k)
{
	return (const char *)s + k->offset;
}

static const char *problem(const struct key *k, const char *value)
{
	return k->check ? k->check(value) : NULL;
}

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	const struct origin def = { ORIGIN_DEFAULT, NULL };
	for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++) {
		if (k->type == KEY_STRING || k->type == KEY_HOST_PATH)
			set_str(key_value(s, k), k->text_default, def);
		else if (k->type == KEY_MINUTES || k->type == KEY_BOOL)
			set_num(key_value(s, k), k->number_default, def);
	}
}

void settings_clear(struct settings *s)
{
	for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++) {
		void *value = key_value(s, k);
		switch (k->type) {
		case KEY_STRING:
		case KEY_HOST_PATH: free(((struct str_setting *)value)->value); break;
		case KEY_MINUTES:
		case KEY_BOOL: break;
		case KEY_LIST: list_clear(value); break;
		case KEY_MOUNTS:
			for (size_t i = 0; i < s->n_mounts; i++) {
				free(s->mounts[i].source);
				free(s->mounts[i].target);
			}
			free(s->mounts);
			break;
		case KEY_ENV:
			for (size_t i = 0; i < s->n_env; i++) {
				free(s->env[i].name);
				free(s->env[i].value);
			}
			free(s->env);
			break;
		case KEY_TRUSTED: strv_clear(value); break;
		}
	}
	memset(s, 0, sizeof(*s));
}

/* ---- parsing ---- */

struct parse {
	struct settings *s;
	const struct settings_source *src;
	struct origin origin;
	bool full_trust; /* the user's own file, or a project the user trusts */
	struct gb_error *err;
};

/* A key path as it may be printed: keys come from the file, and an escape
 * sequence in one must not reach the terminal. */
static char *printable_path(const char *path)
{
	return has_control(path) ? shell_quote(path) : xstrdup(path);
}

static int bad(struct parse *p, const char *path, const char *what)
{
	char *file = shell_quote(p->src->file);
	char *key = printable_path(path);
	gb_fail(p->err, EXIT_BOX_CONFIG, "%s: %s: %s", file, key, what);
	free(key);
	free(file);
	return -1;
}

static int untrusted(struct parse *p, const char *path, const char *may_not)
{
	char *what =
	        p->src->approval_change
	                ? xasprintf("a project file may not %s without your approval, and %s "
	                            "changed since you approved it; review the change with "
	                            "gemini-box --box-trust",
	                            may_not, p->src->approval_change)
	                : xasprintf("a project file may not %s without your approval (any "
	                            "cloned repository could); review and approve it with "
	                            "gemini-box --box-trust, or put it in your own config.json",
	                            may_not);
	bad(p, path, what);
	free(what);
	return -1;
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "invalid";
}

static int want_type(struct parse *p, const char *path, const cJSON *v, int ok, const char *want)
{
	if (ok)
		return 0;
	char *what = xasprintf("must be %s, not %s", want, type_name(v));
	bad(p, path, what);
	free(what);
	return -1;
}

/* "~" and "~/x" are the caller's home; a relative path is the project's
 * (project file) or an error (user file). */
static char *expand_path(struct parse *p, const char *v)
{
	if (strcmp(v, "~") == 0)
		return xstrdup(p->src->home);
	if (strncmp(v, "~/", 2) == 0)
		return xasprintf("%s/%s", p->src->home, v + 2);
	if (v[0] == '/')
		return xstrdup(v);
	if (p->src->kind == ORIGIN_PROJECT && p->src->box_dir)
		return xasprintf("%s/%s", p->src->box_dir, v);
	return NULL;
}

/* An existing host path, canonical; a project's must lie inside the project. */
static int host_path(struct parse *p, const char *path, const char *v, const char *verb, char **out)
{
	if (has_control(v))
		return bad(p, path, "must not hold control characters");
	char *expanded = expand_path(p, v);
	if (!expanded)
		return bad(p, path, "must be an absolute path or start with ~/");
	char *real = realpath(expanded, NULL);
	if (!real) {
		char *q = shell_quote(expanded);
		char *what = xasprintf("%s: %s", q, strerror(errno));
		free(q);
		free(expanded);
		bad(p, path, what);
		free(what);
		return -1;
	}
	free(expanded);
	if (!p->full_trust && !path_is_within(real, p->src->box_dir)) {
		free(real);
		return untrusted(p, path, verb);
	}
	*out = real;
	return 0;
}

static int parse_mount(struct parse *p, const struct key *k, size_t index, const cJSON *m)
{
	char path[64];
	snprintf(path, sizeof(path), "%s[%zu]", k->name, index);
	if (want_type(p, path, m, cJSON_IsObject(m), "an object with source and target") < 0)
		return -1;
	const cJSON *source = NULL, *target = NULL, *readonly = NULL;
	for (const cJSON *f = m->child; f; f = f->next) {
		char fpath[96];
		snprintf(fpath, sizeof(fpath), "%s.%s", path, f->string);
		if (strcmp(f->string, "source") == 0)
			source = f;
		else if (strcmp(f->string, "target") == 0)
			target = f;
		else if (strcmp(f->string, "readonly") == 0)
			readonly = f;
		else
			return bad(p, fpath,
			           "unknown key; a mount has source, target and readonly");
	}
	char fpath[96];
	snprintf(fpath, sizeof(fpath), "%s.source", path);
	if (!source)
		return bad(p, fpath, "missing");
	if (want_type(p, fpath, source, cJSON_IsString(source), "a string") < 0)
		return -1;
	snprintf(fpath, sizeof(fpath), "%s.target", path);
	if (!target)
		return bad(p, fpath, "missing");
	if (want_type(p, fpath, target, cJSON_IsString(target), "a string") < 0)
		return -1;
	const char *why = check_abs_path(target->valuestring);
	if (why)
		return bad(p, fpath, why);
	snprintf(fpath, sizeof(fpath), "%s.readonly", path);
	if (readonly && want_type(p, fpath, readonly, cJSON_IsBool(readonly), "true or false") < 0)
		return -1;

	snprintf(fpath, sizeof(fpath), "%s.source", path);
	char *real;
	if (host_path(p, fpath, source->valuestring, k->may_not, &real) < 0)
		return -1;
	struct settings *s = p->s;
	s->mounts = xrealloc(s->mounts, (s->n_mounts + 1) * sizeof(*s->mounts));
	struct mount_setting *ms = &s->mounts[s->n_mounts++];
	ms->source = real;
	ms->target = xstrdup(target->valuestring);
	ms->readonly = readonly && cJSON_IsTrue(readonly);
	ms->origin = p->origin;
	return 0;
}

static int parse_mounts(struct parse *p, const struct key *k, const cJSON *v)
{
	if (want_type(p, k->name, v, cJSON_IsArray(v), "an array") < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *m = v->child; m; m = m->next, i++)
		if (parse_mount(p, k, i, m) < 0)
			return -1;
	return 0;
}

static int parse_env(struct parse *p, const struct key *k, const cJSON *v)
{
	if (want_type(p, k->name, v, cJSON_IsObject(v), "an object of NAME: \"value\"") < 0)
		return -1;
	struct settings *s = p->s;
	for (const cJSON *e = v->child; e; e = e->next) {
		char *path = xasprintf("%s.%s", k->name, e->string);
		int rc = 0;
		if (!env_name_valid(e->string))
			rc = bad(p, path, "not a variable name (letters, digits and _)");
		else if (strcmp(e->string, "SANDBOX") == 0)
			rc = bad(p, path, "is set by gemini-box to the box's name");
		else if (want_type(p, path, e, cJSON_IsString(e), "a string") < 0)
			rc = -1;
		else if (!utf8_valid(e->valuestring))
			rc = bad(p, path, "is not valid UTF-8, which podman would pass on changed");
		else if (strpbrk(e->valuestring, "\n\r"))
			/* Values travel in podman's env file, one line each. */
			rc = bad(p, path,
			         "holds a line break, which podman's env file cannot carry");
		else if (strlen(e->valuestring) + strlen(e->string) + 2 > ENV_LINE_MAX)
			rc = bad(p, path,
			         "longer than 64 KiB, which podman's env file cannot carry");
		else if (!p->full_trust && env_name_forwarded(e->string))
			rc = untrusted(p, path, k->may_not);
		free(path);
		if (rc < 0)
			return -1;
		size_t i = 0;
		while (i < s->n_env && strcmp(s->env[i].name, e->string) != 0)
			i++;
		if (i == s->n_env) {
			s->env = xrealloc(s->env, (s->n_env + 1) * sizeof(*s->env));
			s->env[i].name = xstrdup(e->string);
			s->env[i].value = NULL;
			s->n_env++;
		}
		free(s->env[i].value);
		s->env[i].value = xstrdup(e->valuestring);
		s->env[i].origin = p->origin;
	}
	return 0;
}

static int parse_list(struct parse *p, const struct key *k, const cJSON *v, struct item_list *list)
{
	if (want_type(p, k->name, v, cJSON_IsArray(v), "an array of strings") < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s[%zu]", k->name, i);
		if (want_type(p, path, e, cJSON_IsString(e), "a string") < 0)
			return -1;
		const char *why = problem(k, e->valuestring);
		if (why)
			return bad(p, path, why);
	}
	for (const cJSON *e = v->child; e; e = e->next)
		list_push(list, e->valuestring, p->origin);
	return 0;
}

static int parse_trusted(struct parse *p, const struct key *k, const cJSON *v, struct strv *dirs)
{
	if (p->src->kind != ORIGIN_USER)
		return bad(p, k->name, "only your own config.json can trust a project");
	if (want_type(p, k->name, v, cJSON_IsArray(v), "an array of directories") < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s[%zu]", k->name, i);
		if (want_type(p, path, e, cJSON_IsString(e), "a string") < 0)
			return -1;
		char *expanded = expand_path(p, e->valuestring);
		if (!expanded)
			return bad(p, path, "must be an absolute path or start with ~/");
		/* A project that does not exist (yet) is trusted by the path as written. */
		char *real = realpath(expanded, NULL);
		strv_push(dirs, real ? real : expanded);
		free(real);
		free(expanded);
	}
	return 0;
}

/* Converts an error offset in text to 1-based line and column. */
static void line_col(const char *text, const char *at, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (const char *c = text; c < at && *c; c++) {
		if (*c == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int parse_key(struct parse *p, const struct key *k, const cJSON *v)
{
	if (k->approval == APPROVE_KEY && !p->full_trust)
		return untrusted(p, k->name, k->may_not);
	void *value = key_value(p->s, k);
	const char *why;
	char *real;
	switch (k->type) {
	case KEY_STRING:
		if (want_type(p, k->name, v, cJSON_IsString(v), "a string") < 0)
			return -1;
		why = problem(k, v->valuestring);
		if (why)
			return bad(p, k->name, why);
		if (k->approval == APPROVE_WIDER && !p->full_trust &&
		    network_reach(v->valuestring) >
		            network_reach(((struct str_setting *)value)->value)) {
			if (strcmp(v->valuestring, "host") == 0)
				return untrusted(p, k->name, k->may_not);
			char *wider =
			        xasprintf("widen the box's network from \"%s\" to \"%s\"",
			                  ((struct str_setting *)value)->value, v->valuestring);
			untrusted(p, k->name, wider);
			free(wider);
			return -1;
		}
		set_str(value, v->valuestring, p->origin);
		return 0;
	case KEY_HOST_PATH:
		if (want_type(p, k->name, v, cJSON_IsString(v), "a string") < 0 ||
		    host_path(p, k->name, v->valuestring, k->may_not, &real) < 0)
			return -1;
		set_str(value, real, p->origin);
		free(real);
		return 0;
	case KEY_MINUTES:
		if (want_type(p, k->name, v, cJSON_IsNumber(v), "a number of minutes") < 0)
			return -1;
		if (!(v->valuedouble >= 0 && v->valuedouble <= 525600))
			return bad(p, k->name, "must be from 0 (never) to 525600 (a year) minutes");
		set_num(value, v->valuedouble, p->origin);
		return 0;
	case KEY_BOOL:
		if (want_type(p, k->name, v, cJSON_IsBool(v), "true or false") < 0)
			return -1;
		set_num(value, cJSON_IsTrue(v), p->origin);
		return 0;
	case KEY_LIST: return parse_list(p, k, v, value);
	case KEY_MOUNTS: return parse_mounts(p, k, v);
	case KEY_ENV: return parse_env(p, k, v);
	case KEY_TRUSTED: return parse_trusted(p, k, v, value);
	}
	return -1;
}

static int unknown_key(struct parse *p, const char *name)
{
	struct strv known = STRV_INIT;
	for (unsigned place = 1; place <= settings_n_keys; place++)
		for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++)
			if (k->readme_place == place)
				strv_push(&known, k->name);
	char *names = strv_join(&known, ", ");
	char *what = xasprintf("unknown key; known: %s", names);
	bad(p, name, what);
	free(what);
	free(names);
	strv_clear(&known);
	return -1;
}

static int merge_object(struct parse *p, const cJSON *root)
{
	for (const cJSON *v = root->child; v; v = v->next) {
		const struct key *k = settings_keys;
		while (k < settings_keys + settings_n_keys && strcmp(k->name, v->string) != 0)
			k++;
		if (k == settings_keys + settings_n_keys)
			return unknown_key(p, v->string);
		if (parse_key(p, k, v) < 0)
			return -1;
	}
	return 0;
}

int settings_merge_json(struct settings *s, const char *text, const struct settings_source *src,
                        struct gb_error *err)
{
	struct parse p = {
		.s = s,
		.src = src,
		.origin = { src->kind, src->file },
		.full_trust = src->kind == ORIGIN_USER || src->trusted,
		.err = err,
	};
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
	if (!root) {
		int line, col;
		const char *at = cJSON_GetErrorPtr();
		line_col(text, at && at >= text ? at : text, &line, &col);
		char *file = shell_quote(src->file);
		gb_fail(err, EXIT_BOX_CONFIG, "%s:%d:%d: not valid JSON; fix the file", file, line,
		        col);
		free(file);
		return -1;
	}
	int rc;
	if (!cJSON_IsObject(root))
		rc = bad(&p, "(top level)", "must be a JSON object { ... }");
	else
		rc = merge_object(&p, root);
	cJSON_Delete(root);
	return rc;
}

int settings_merge_env(struct settings *s, char *const *envp, struct gb_error *err)
{
	for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++)
		for (size_t i = 0; i < sizeof(k->env) / sizeof(*k->env) && k->env[i]; i++) {
			const char *name = k->env[i], *value = NULL;
			size_t n = strlen(name);
			for (char *const *e = envp; e && *e; e++)
				if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
					value = *e + n + 1;
			if (!value || !*value)
				continue;
			const char *why = problem(k, value);
			if (why)
				return gb_fail(err, EXIT_BOX_CONFIG, "%s %s", name, why);
			struct origin o = { ORIGIN_ENV, name };
			set_str(key_value(s, k), value, o);
		}
	return 0;
}

void settings_set_option(struct str_setting *setting, const char *value, const char *option)
{
	struct origin o = { ORIGIN_OPTION, option };
	set_str(setting, value, o);
}

bool settings_trusts(const struct settings *s, const char *dir)
{
	for (size_t i = 0; i < s->trusted.n; i++)
		if (strcmp(s->trusted.v[i], dir) == 0)
			return true;
	return false;
}
