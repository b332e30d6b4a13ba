#define _GNU_SOURCE
#include "settings.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "boxid.h"
#include "envsel.h"
#include "hash.h"
#include "quote.h"

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

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	struct origin def = { ORIGIN_DEFAULT, NULL };
	set_str(&s->image, DEFAULT_IMAGE, def);
	set_str(&s->user, DEFAULT_BOX_USER, def);
	set_str(&s->home, DEFAULT_BOX_HOME, def);
	set_str(&s->network, DEFAULT_NETWORK, def);
	s->runtime.origin = def;
	s->containerfile.origin = def;
	s->idle_stop_minutes.value = DEFAULT_IDLE_STOP_MINUTES;
	s->idle_stop_minutes.origin = def;
	s->ide.value = 1;
	s->ide.origin = def;
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

void settings_clear(struct settings *s)
{
	struct str_setting *strs[] = { &s->image,   &s->user,    &s->home,
		                       &s->network, &s->runtime, &s->containerfile };
	for (size_t i = 0; i < sizeof(strs) / sizeof(*strs); i++)
		free(strs[i]->value);
	for (size_t i = 0; i < s->n_mounts; i++) {
		free(s->mounts[i].source);
		free(s->mounts[i].target);
	}
	free(s->mounts);
	for (size_t i = 0; i < s->n_env; i++) {
		free(s->env[i].name);
		free(s->env[i].value);
	}
	free(s->env);
	list_clear(&s->forward_env);
	list_clear(&s->ports);
	list_clear(&s->podman_args);
	list_clear(&s->protected_paths);
	strv_clear(&s->trusted);
	memset(s, 0, sizeof(*s));
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
	if (strcmp(v, "isolated") && strcmp(v, "host") && strcmp(v, "none"))
		return "must be \"isolated\", \"host\" or \"none\"";
	return NULL;
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

static int untrusted(struct parse *p, const char *path, const char *what)
{
	char *file = shell_quote(p->src->file);
	char *key = printable_path(path);
	if (p->src->approval_change)
		gb_fail(p->err, EXIT_BOX_CONFIG,
		        "%s: %s: a project file may not %s without your approval, and %s "
		        "changed since you approved it; review the change with gemini-box "
		        "--box-trust",
		        file, key, what, p->src->approval_change);
	else
		gb_fail(p->err, EXIT_BOX_CONFIG,
		        "%s: %s: a project file may not %s without your approval (any cloned "
		        "repository could); review and approve it with gemini-box --box-trust, "
		        "or put it in your own config.json",
		        file, key, what);
	free(key);
	free(file);
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

static int parse_string_key(struct parse *p, const char *key, const cJSON *v,
                            struct str_setting *st, const char *(*check)(const char *))
{
	if (want_type(p, key, v, cJSON_IsString(v), "a string") < 0)
		return -1;
	const char *why = check ? check(v->valuestring) : NULL;
	if (why)
		return bad(p, key, why);
	set_str(st, v->valuestring, p->origin);
	return 0;
}

static int parse_mount(struct parse *p, size_t index, const cJSON *m)
{
	char path[64];
	snprintf(path, sizeof(path), "mounts[%zu]", index);
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
	if (host_path(p, fpath, source->valuestring, "mount a path outside the project", &real) < 0)
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

static int parse_mounts(struct parse *p, const cJSON *v)
{
	if (want_type(p, "mounts", v, cJSON_IsArray(v), "an array") < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *m = v->child; m; m = m->next, i++)
		if (parse_mount(p, i, m) < 0)
			return -1;
	return 0;
}

static int parse_env(struct parse *p, const cJSON *v)
{
	if (want_type(p, "env", v, cJSON_IsObject(v), "an object of NAME: \"value\"") < 0)
		return -1;
	struct settings *s = p->s;
	for (const cJSON *e = v->child; e; e = e->next) {
		char *path = xasprintf("env.%s", e->string);
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
			/* A repository must not point your credentials at its own server. */
			rc = untrusted(
			        p, path,
			        "set a variable that gemini-box carries from your environment");
		free(path);
		if (rc < 0)
			return -1;
		size_t k = 0;
		while (k < s->n_env && strcmp(s->env[k].name, e->string) != 0)
			k++;
		if (k == s->n_env) {
			s->env = xrealloc(s->env, (s->n_env + 1) * sizeof(*s->env));
			s->env[k].name = xstrdup(e->string);
			s->env[k].value = NULL;
			s->n_env++;
		}
		free(s->env[k].value);
		s->env[k].value = xstrdup(e->valuestring);
		s->env[k].origin = p->origin;
	}
	return 0;
}

static int parse_string_list(struct parse *p, const char *key, const cJSON *v,
                             struct item_list *list, const char *(*check)(const char *))
{
	if (want_type(p, key, v, cJSON_IsArray(v), "an array of strings") < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s[%zu]", key, i);
		if (want_type(p, path, e, cJSON_IsString(e), "a string") < 0)
			return -1;
		const char *why = check ? check(e->valuestring) : NULL;
		if (why)
			return bad(p, path, why);
	}
	for (const cJSON *e = v->child; e; e = e->next)
		list_push(list, e->valuestring, p->origin);
	return 0;
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

static const char *check_podman_arg(const char *v)
{
	return *v ? NULL : "must not be empty";
}

static int parse_trusted(struct parse *p, const cJSON *v)
{
	if (p->src->kind != ORIGIN_USER)
		return bad(p, "trusted_projects", "only your own config.json can trust a project");
	if (want_type(p, "trusted_projects", v, cJSON_IsArray(v), "an array of directories") < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char path[64];
		snprintf(path, sizeof(path), "trusted_projects[%zu]", i);
		if (want_type(p, path, e, cJSON_IsString(e), "a string") < 0)
			return -1;
		char *expanded = expand_path(p, e->valuestring);
		if (!expanded)
			return bad(p, path, "must be an absolute path or start with ~/");
		/* A project that does not exist (yet) is trusted by the path as written. */
		char *real = realpath(expanded, NULL);
		strv_push(&p->s->trusted, real ? real : expanded);
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

static int merge_object(struct parse *p, const cJSON *root)
{
	struct settings *s = p->s;
	for (const cJSON *v = root->child; v; v = v->next) {
		const char *k = v->string;
		int rc;
		if (strcmp(k, "image") == 0) {
			/* The image is the program that receives your keys. */
			rc = p->full_trust
			             ? parse_string_key(p, k, v, &s->image, image_name_problem)
			             : untrusted(p, k,
			                         "choose the image (the program that gets "
			                         "your keys)");
		} else if (strcmp(k, "user") == 0) {
			rc = parse_string_key(p, k, v, &s->user, check_user);
		} else if (strcmp(k, "home") == 0) {
			rc = parse_string_key(p, k, v, &s->home, check_abs_path);
		} else if (strcmp(k, "network") == 0) {
			rc = parse_string_key(p, k, v, &s->network, check_network);
			if (rc == 0 && !p->full_trust && strcmp(s->network.value, "host") == 0)
				rc = untrusted(p, k, "share the host's network");
		} else if (strcmp(k, "runtime") == 0) {
			rc = p->full_trust ? parse_string_key(p, k, v, &s->runtime, check_runtime)
			                   : untrusted(p, k, "choose the container runtime");
		} else if (strcmp(k, "containerfile") == 0) {
			char *real = NULL;
			rc = p->full_trust ? want_type(p, k, v, cJSON_IsString(v), "a string")
			                   : untrusted(p, k,
			                               "build the image (the program that gets "
			                               "your keys)");
			if (rc == 0)
				rc = host_path(p, k, v->valuestring,
				               "build from a file outside the project", &real);
			if (rc == 0)
				set_str(&s->containerfile, real, p->origin);
			free(real);
		} else if (strcmp(k, "idle_stop_minutes") == 0) {
			rc = want_type(p, k, v, cJSON_IsNumber(v), "a number of minutes");
			if (rc == 0 && !(v->valuedouble >= 0 && v->valuedouble <= 525600))
				rc = bad(p, k, "must be from 0 (never) to 525600 (a year) minutes");
			if (rc == 0) {
				s->idle_stop_minutes.value = v->valuedouble;
				s->idle_stop_minutes.origin = p->origin;
			}
		} else if (strcmp(k, "ide") == 0) {
			rc = want_type(p, k, v, cJSON_IsBool(v), "true or false");
			if (rc == 0) {
				s->ide.value = cJSON_IsTrue(v) ? 1 : 0;
				s->ide.origin = p->origin;
			}
		} else if (strcmp(k, "mounts") == 0) {
			rc = parse_mounts(p, v);
		} else if (strcmp(k, "env") == 0) {
			rc = parse_env(p, v);
		} else if (strcmp(k, "forward_env") == 0) {
			rc = p->full_trust
			             ? parse_string_list(p, k, v, &s->forward_env, check_env_name)
			             : untrusted(p, k, "carry variables of yours into the box");
		} else if (strcmp(k, "ports") == 0) {
			rc = parse_string_list(p, k, v, &s->ports, check_port);
		} else if (strcmp(k, "podman_args") == 0) {
			rc = p->full_trust
			             ? parse_string_list(p, k, v, &s->podman_args, check_podman_arg)
			             : untrusted(p, k, "add podman arguments");
		} else if (strcmp(k, "protected_paths") == 0) {
			/* Only ever more protection: a project file may add to it too. */
			rc = parse_string_list(p, k, v, &s->protected_paths, check_protected_path);
		} else if (strcmp(k, "trusted_projects") == 0) {
			rc = parse_trusted(p, v);
		} else {
			rc = bad(p, k,
			         "unknown key; known: image, user, home, mounts, env, forward_env, "
			         "ports, network, runtime, podman_args, containerfile, "
			         "idle_stop_minutes, ide, protected_paths, trusted_projects");
		}
		if (rc < 0)
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
	static const struct {
		const char *name;
		size_t offset;
		const char *(*check)(const char *);
	} vars[] = {
		{ "GEMINI_IMAGE", offsetof(struct settings, image), image_name_problem },
		{ "GEMINI_BOX_IMAGE", offsetof(struct settings, image), image_name_problem },
		{ "GEMINI_BOX_USER", offsetof(struct settings, user), check_user },
		{ "GEMINI_BOX_HOME", offsetof(struct settings, home), check_abs_path },
		{ "GEMINI_BOX_NETWORK", offsetof(struct settings, network), check_network },
		{ "GEMINI_BOX_RUNTIME", offsetof(struct settings, runtime), check_runtime },
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++) {
		size_t n = strlen(vars[i].name);
		const char *value = NULL;
		for (char *const *e = envp; e && *e; e++)
			if (strncmp(*e, vars[i].name, n) == 0 && (*e)[n] == '=')
				value = *e + n + 1;
		if (!value || !*value)
			continue;
		const char *why = vars[i].check(value);
		if (why)
			return gb_fail(err, EXIT_BOX_CONFIG, "%s %s", vars[i].name, why);
		struct origin o = { ORIGIN_ENV, vars[i].name };
		set_str((struct str_setting *)((char *)s + vars[i].offset), value, o);
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

/* ---- output ---- */

static void print_origin(FILE *out, struct origin o)
{
	if (o.detail) {
		char *q = shell_quote(o.detail);
		fprintf(out, "  (%s %s)\n", origin_name(o.kind), q);
		free(q);
	} else {
		fprintf(out, "  (%s)\n", origin_name(o.kind));
	}
}

static void print_value(FILE *out, const char *key, const char *value, struct origin o)
{
	char *q = value ? shell_quote(value) : xstrdup("(unset)");
	fprintf(out, "%-16s = %s", key, q);
	free(q);
	print_origin(out, o);
}

static void print_list(FILE *out, const char *key, const struct item_list *l)
{
	if (l->n == 0)
		fprintf(out, "%-16s = (none)\n", key);
	for (size_t i = 0; i < l->n; i++) {
		char k[64];
		snprintf(k, sizeof(k), "%s[%zu]", key, i);
		print_value(out, k, l->v[i].value, l->v[i].origin);
	}
}

void settings_print(const struct settings *s, FILE *out)
{
	print_value(out, "image", s->image.value, s->image.origin);
	print_value(out, "containerfile", s->containerfile.value, s->containerfile.origin);
	print_value(out, "user", s->user.value, s->user.origin);
	print_value(out, "home", s->home.value, s->home.origin);
	print_value(out, "network", s->network.value, s->network.origin);
	print_value(out, "runtime", s->runtime.value, s->runtime.origin);
	char idle[32];
	snprintf(idle, sizeof(idle), "%g", s->idle_stop_minutes.value);
	print_value(out, "idle_stop_minutes", idle, s->idle_stop_minutes.origin);
	print_value(out, "ide", s->ide.value ? "true" : "false", s->ide.origin);
	if (s->n_mounts == 0)
		fprintf(out, "%-16s = (none)\n", "mounts");
	for (size_t i = 0; i < s->n_mounts; i++) {
		char k[64];
		snprintf(k, sizeof(k), "mounts[%zu]", i);
		char *src = shell_quote(s->mounts[i].source);
		char *dst = shell_quote(s->mounts[i].target);
		char *v = xasprintf("%s -> %s%s", src, dst,
		                    s->mounts[i].readonly ? " (read-only)" : "");
		fprintf(out, "%-16s = %s", k, v);
		print_origin(out, s->mounts[i].origin);
		free(v);
		free(dst);
		free(src);
	}
	if (s->n_env == 0)
		fprintf(out, "%-16s = (none)\n", "env");
	for (size_t i = 0; i < s->n_env; i++) {
		char *k = xasprintf("env.%s", s->env[i].name);
		print_value(out, k, s->env[i].value, s->env[i].origin);
		free(k);
	}
	print_list(out, "forward_env", &s->forward_env);
	print_list(out, "ports", &s->ports);
	print_list(out, "podman_args", &s->podman_args);
	print_list(out, "protected_paths", &s->protected_paths);
	for (size_t i = 0; i < s->trusted.n; i++) {
		char k[64];
		snprintf(k, sizeof(k), "trusted_projects[%zu]", i);
		char *q = shell_quote(s->trusted.v[i]);
		fprintf(out, "%-16s = %s  (user file)\n", k, q);
		free(q);
	}
}

static cJSON *json_origin(struct origin o)
{
	cJSON *from = cJSON_CreateObject();
	cJSON_AddStringToObject(from, "kind", origin_name(o.kind));
	if (o.detail)
		cJSON_AddStringToObject(from, "detail", o.detail);
	return from;
}

static void json_str(cJSON *obj, const char *key, const struct str_setting *st)
{
	cJSON *e = cJSON_CreateObject();
	if (st->value)
		cJSON_AddStringToObject(e, "value", st->value);
	else
		cJSON_AddNullToObject(e, "value");
	cJSON_AddItemToObject(e, "from", json_origin(st->origin));
	cJSON_AddItemToObject(obj, key, e);
}

static void json_list(cJSON *obj, const char *key, const struct item_list *l)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < l->n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "value", l->v[i].value);
		cJSON_AddItemToObject(e, "from", json_origin(l->v[i].origin));
		cJSON_AddItemToArray(arr, e);
	}
	cJSON_AddItemToObject(obj, key, arr);
}

char *settings_to_json(const struct settings *s)
{
	cJSON *o = cJSON_CreateObject();
	json_str(o, "image", &s->image);
	json_str(o, "containerfile", &s->containerfile);
	json_str(o, "user", &s->user);
	json_str(o, "home", &s->home);
	json_str(o, "network", &s->network);
	json_str(o, "runtime", &s->runtime);
	cJSON *idle = cJSON_CreateObject();
	cJSON_AddNumberToObject(idle, "value", s->idle_stop_minutes.value);
	cJSON_AddItemToObject(idle, "from", json_origin(s->idle_stop_minutes.origin));
	cJSON_AddItemToObject(o, "idle_stop_minutes", idle);
	cJSON *ide = cJSON_CreateObject();
	cJSON_AddBoolToObject(ide, "value", s->ide.value != 0);
	cJSON_AddItemToObject(ide, "from", json_origin(s->ide.origin));
	cJSON_AddItemToObject(o, "ide", ide);
	cJSON *mounts = cJSON_CreateArray();
	for (size_t i = 0; i < s->n_mounts; i++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "source", s->mounts[i].source);
		cJSON_AddStringToObject(m, "target", s->mounts[i].target);
		cJSON_AddBoolToObject(m, "readonly", s->mounts[i].readonly);
		cJSON_AddItemToObject(m, "from", json_origin(s->mounts[i].origin));
		cJSON_AddItemToArray(mounts, m);
	}
	cJSON_AddItemToObject(o, "mounts", mounts);
	cJSON *env = cJSON_CreateObject();
	for (size_t i = 0; i < s->n_env; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "value", s->env[i].value);
		cJSON_AddItemToObject(e, "from", json_origin(s->env[i].origin));
		cJSON_AddItemToObject(env, s->env[i].name, e);
	}
	cJSON_AddItemToObject(o, "env", env);
	json_list(o, "forward_env", &s->forward_env);
	json_list(o, "ports", &s->ports);
	json_list(o, "podman_args", &s->podman_args);
	json_list(o, "protected_paths", &s->protected_paths);
	cJSON *trusted = cJSON_CreateArray();
	for (size_t i = 0; i < s->trusted.n; i++)
		cJSON_AddItemToArray(trusted, cJSON_CreateString(s->trusted.v[i]));
	cJSON_AddItemToObject(o, "trusted_projects", trusted);
	char *text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text) {
		fputs("gemini-box: out of memory\n", stderr);
		exit(EXIT_BOX_INTERNAL);
	}
	char *copy = xstrdup(text);
	cJSON_free(text);
	return copy;
}

/* ---- drift ---- */

static void digest_end(struct hash *h, struct strv *pairs, const char *key)
{
	char hex[HASH_ID_HEX + 1];
	hash_end_id(h, hex);
	strv_pushf(pairs, "%s=%s", key, hex);
}

static void digest_list(struct strv *pairs, const char *key, const struct item_list *l)
{
	struct hash h;
	hash_begin(&h);
	for (size_t i = 0; i < l->n; i++)
		hash_add_str(&h, l->v[i].value);
	digest_end(&h, pairs, key);
}

long settings_idle_seconds(const struct settings *s)
{
	return (long)(s->idle_stop_minutes.value * 60 + 0.5);
}

char *settings_creation_digest(const struct settings *s, const char *init, bool ide_shared)
{
	struct strv pairs = STRV_INIT;
	const struct {
		const char *key;
		const struct str_setting *st;
	} scalars[] = {
		{ "image", &s->image },     { "user", &s->user },       { "home", &s->home },
		{ "network", &s->network }, { "runtime", &s->runtime },
	};
	for (size_t i = 0; i < sizeof(scalars) / sizeof(*scalars); i++) {
		struct hash h;
		hash_begin(&h);
		/* unset hashes like "" (a lone NUL), as it always has */
		hash_add_str(&h, scalars[i].st->value ? scalars[i].st->value : "");
		digest_end(&h, &pairs, scalars[i].key);
	}
	struct hash h;
	hash_begin(&h);
	for (size_t i = 0; i < s->n_mounts; i++) {
		hash_add_str(&h, s->mounts[i].source);
		hash_add_str(&h, s->mounts[i].target);
		hash_add_str(&h, s->mounts[i].readonly ? "ro" : "rw");
	}
	digest_end(&h, &pairs, "mounts");
	digest_list(&pairs, "ports", &s->ports);
	digest_list(&pairs, "podman_args", &s->podman_args);
	digest_list(&pairs, "protected_paths", &s->protected_paths);
	char idle[32];
	snprintf(idle, sizeof(idle), "%ld", settings_idle_seconds(s));
	hash_begin(&h);
	hash_add_str(&h, idle);
	digest_end(&h, &pairs, "idle_stop_minutes");
	hash_begin(&h);
	hash_add_str(&h, init);
	digest_end(&h, &pairs, "init");
	hash_begin(&h);
	/* Only a host-network box mounts the IDE's port files, and only when
	 * they are there to share: elsewhere "ide" decides what each run
	 * carries, not what the box is. */
	hash_add_str(&h, ide_shared ? "ide" : "no-ide");
	digest_end(&h, &pairs, "ide");

	char *out = strv_join(&pairs, ",");
	strv_clear(&pairs);
	return out;
}

/* The value of key in a "k=v,k=v" label, or NULL; *len gets its length. */
static const char *pair_value(const char *label, const char *key, size_t keylen, size_t *len)
{
	const char *p = label;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > keylen && strncmp(p, key, keylen) == 0 && p[keylen] == '=') {
			*len = n - keylen - 1;
			return p + keylen + 1;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

void settings_digest_diff(const char *old_label, const char *new_label, struct strv *changed)
{
	const char *p = new_label;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (eq) {
			size_t keylen = (size_t)(eq - p), old_len = 0;
			const char *old =
			        pair_value(old_label ? old_label : "", p, keylen, &old_len);
			size_t new_len = n - keylen - 1;
			if (!old || old_len != new_len || strncmp(old, eq + 1, new_len) != 0)
				strv_pushf(changed, "%.*s", (int)keylen, p);
		}
		p = end ? end + 1 : NULL;
	}
}
