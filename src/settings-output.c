#define _GNU_SOURCE
/* settings-output: the settings as --box-config shows them (text, JSON), and
 * the digest a box records of the keys it was made with, each walking the
 * key table (settings-keys.h). */
#include "settings.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "quote.h"
#include "settings-keys.h"
#include "strv.h"

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

static void print_key(FILE *out, const struct settings *s, const struct key *k)
{
	const void *value = key_value_in(s, k);
	const struct str_setting *st = value;
	const struct num_setting *num = value;
	const struct item_list *list = value;
	const struct strv *dirs = value;
	const struct origin user_file = { ORIGIN_USER, NULL };
	char key[64], minutes[32];
	switch (k->type) {
	case KEY_STRING:
	case KEY_HOST_PATH: print_value(out, k->name, st->value, st->origin); return;
	case KEY_MINUTES:
		snprintf(minutes, sizeof(minutes), "%g", num->value);
		print_value(out, k->name, minutes, num->origin);
		return;
	case KEY_BOOL:
		print_value(out, k->name, num->value ? "true" : "false", num->origin);
		return;
	case KEY_LIST:
		if (list->n == 0)
			fprintf(out, "%-16s = (none)\n", k->name);
		for (size_t i = 0; i < list->n; i++) {
			snprintf(key, sizeof(key), "%s[%zu]", k->name, i);
			print_value(out, key, list->v[i].value, list->v[i].origin);
		}
		return;
	case KEY_MOUNTS:
		if (s->n_mounts == 0)
			fprintf(out, "%-16s = (none)\n", k->name);
		for (size_t i = 0; i < s->n_mounts; i++) {
			snprintf(key, sizeof(key), "%s[%zu]", k->name, i);
			char *src = shell_quote(s->mounts[i].source);
			char *dst = shell_quote(s->mounts[i].target);
			fprintf(out, "%-16s = %s -> %s%s", key, src, dst,
			        s->mounts[i].readonly ? " (read-only)" : "");
			print_origin(out, s->mounts[i].origin);
			free(dst);
			free(src);
		}
		return;
	case KEY_ENV:
		if (s->n_env == 0)
			fprintf(out, "%-16s = (none)\n", k->name);
		for (size_t i = 0; i < s->n_env; i++) {
			char *name = xasprintf("%s.%s", k->name, s->env[i].name);
			print_value(out, name, s->env[i].value, s->env[i].origin);
			free(name);
		}
		return;
	case KEY_TRUSTED:
		for (size_t i = 0; i < dirs->n; i++) {
			snprintf(key, sizeof(key), "%s[%zu]", k->name, i);
			print_value(out, key, dirs->v[i], user_file);
		}
		return;
	}
}

void settings_print(const struct settings *s, FILE *out)
{
	for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++)
		print_key(out, s, k);
}

static cJSON *json_origin(struct origin o)
{
	cJSON *from = cJSON_CreateObject();
	cJSON_AddStringToObject(from, "kind", origin_name(o.kind));
	if (o.detail)
		cJSON_AddStringToObject(from, "detail", o.detail);
	return from;
}

/* {"value": value, "from": {"kind": ..., "detail": ...}} */
static cJSON *json_value(cJSON *value, struct origin o)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddItemToObject(e, "value", value);
	cJSON_AddItemToObject(e, "from", json_origin(o));
	return e;
}

static cJSON *json_key(const struct settings *s, const struct key *k)
{
	const void *value = key_value_in(s, k);
	const struct str_setting *st = value;
	const struct num_setting *num = value;
	const struct item_list *list = value;
	const struct strv *dirs = value;
	cJSON *all;
	switch (k->type) {
	case KEY_STRING:
	case KEY_HOST_PATH:
		return json_value(st->value ? cJSON_CreateString(st->value) : cJSON_CreateNull(),
		                  st->origin);
	case KEY_MINUTES: return json_value(cJSON_CreateNumber(num->value), num->origin);
	case KEY_BOOL: return json_value(cJSON_CreateBool(num->value != 0), num->origin);
	case KEY_LIST:
		all = cJSON_CreateArray();
		for (size_t i = 0; i < list->n; i++)
			cJSON_AddItemToArray(all, json_value(cJSON_CreateString(list->v[i].value),
			                                     list->v[i].origin));
		return all;
	case KEY_MOUNTS:
		all = cJSON_CreateArray();
		for (size_t i = 0; i < s->n_mounts; i++) {
			cJSON *m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "source", s->mounts[i].source);
			cJSON_AddStringToObject(m, "target", s->mounts[i].target);
			cJSON_AddBoolToObject(m, "readonly", s->mounts[i].readonly);
			cJSON_AddItemToObject(m, "from", json_origin(s->mounts[i].origin));
			cJSON_AddItemToArray(all, m);
		}
		return all;
	case KEY_ENV:
		all = cJSON_CreateObject();
		for (size_t i = 0; i < s->n_env; i++)
			cJSON_AddItemToObject(
			        all, s->env[i].name,
			        json_value(cJSON_CreateString(s->env[i].value), s->env[i].origin));
		return all;
	case KEY_TRUSTED:
		all = cJSON_CreateArray();
		for (size_t i = 0; i < dirs->n; i++)
			cJSON_AddItemToArray(all, cJSON_CreateString(dirs->v[i]));
		return all;
	}
	return cJSON_CreateNull();
}

char *settings_to_json(const struct settings *s)
{
	cJSON *o = cJSON_CreateObject();
	for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++)
		cJSON_AddItemToObject(o, k->name, json_key(s, k));
	/* cJSON_Print returns NULL when malloc does: printing into a buffer of
	 * ours makes running out of memory fatal in the x* helpers, as it is
	 * everywhere. Past 1 GiB (cJSON stops at INT_MAX) it asks for a size no
	 * allocator grants, which is fatal the same way. */
	char *text = NULL;
	for (size_t size = 4096;; size *= 2) {
		text = xrealloc(text, size <= INT_MAX ? size : SIZE_MAX);
		if (cJSON_PrintPreallocated(o, text, (int)size, 1))
			break;
	}
	cJSON_Delete(o);
	return text;
}

/* ---- drift ---- */

static void digest_end(struct hash *h, struct strv *pairs, const char *key)
{
	char hex[HASH_ID_HEX + 1];
	hash_end_id(h, hex);
	strv_pushf(pairs, "%s=%s", key, hex);
}

static void digest_text(struct strv *pairs, const char *key, const char *text)
{
	struct hash h;
	hash_begin(&h);
	hash_add_str(&h, text);
	digest_end(&h, pairs, key);
}

static long whole_seconds(double minutes)
{
	return (long)(minutes * 60 + 0.5);
}

long settings_idle_seconds(const struct settings *s)
{
	return whole_seconds(s->idle_stop_minutes.value);
}

static void digest_key(struct strv *pairs, const struct settings *s, const struct key *k)
{
	const void *value = key_value_in(s, k);
	const struct str_setting *st = value;
	const struct num_setting *num = value;
	const struct item_list *list = value;
	char seconds[32];
	struct hash h;
	hash_begin(&h);
	switch (k->type) {
	case KEY_STRING:
	case KEY_HOST_PATH:
		/* unset hashes like "" (a lone NUL), as it always has */
		hash_add_str(&h, st->value ? st->value : "");
		break;
	case KEY_MINUTES:
		snprintf(seconds, sizeof(seconds), "%ld", whole_seconds(num->value));
		hash_add_str(&h, seconds);
		break;
	case KEY_LIST:
		for (size_t i = 0; i < list->n; i++)
			hash_add_str(&h, list->v[i].value);
		break;
	case KEY_MOUNTS:
		for (size_t i = 0; i < s->n_mounts; i++) {
			hash_add_str(&h, s->mounts[i].source);
			hash_add_str(&h, s->mounts[i].target);
			hash_add_str(&h, s->mounts[i].readonly ? "ro" : "rw");
		}
		break;
	case KEY_BOOL:
	case KEY_ENV:
	case KEY_TRUSTED: break; /* no digest has one: give it its inputs before a row asks */
	}
	digest_end(&h, pairs, k->name);
}

char *settings_creation_digest(const struct settings *s, const char *init, bool ide_shared)
{
	struct strv pairs = STRV_INIT;
	for (unsigned place = 1; place <= settings_n_keys; place++)
		for (const struct key *k = settings_keys; k < settings_keys + settings_n_keys; k++)
			if (k->digest_place == place)
				digest_key(&pairs, s, k);
	digest_text(&pairs, "init", init);
	/* Only a host-network box mounts the IDE's port files, and only when
	 * they are there to share: elsewhere "ide" decides what each run
	 * carries, not what the box is. */
	digest_text(&pairs, "ide", ide_shared ? "ide" : "no-ide");
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
