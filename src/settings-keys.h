/* settings-keys: the table that describes each settings key once, shared by
 * settings.c (parsing, merging) and settings-output.c (printing, JSON, the
 * digest). Private to those two files. */
#ifndef GEMINI_BOX_SETTINGS_KEYS_H
#define GEMINI_BOX_SETTINGS_KEYS_H

#include <stddef.h>

#include "settings.h"

enum key_type {
	KEY_STRING,    /* a struct str_setting */
	KEY_HOST_PATH, /* a struct str_setting: an existing host file, made canonical */
	KEY_MINUTES,   /* a struct num_setting, from 0 (never) to a year */
	KEY_BOOL,      /* a struct num_setting, 1 or 0 */
	KEY_LIST,      /* a struct item_list of strings, which each file adds to */
	KEY_MOUNTS,    /* s->mounts: the one key of its type, so its code names it */
	KEY_ENV,       /* s->env, likewise */
	KEY_TRUSTED,   /* a struct strv of directories, from the user's file only */
};

/* What a project file the user has not approved (--box-trust) may not do. */
enum approval {
	APPROVE_NONE,  /* nothing: it may set the key */
	APPROVE_KEY,   /* set the key at all */
	APPROVE_WIDER, /* set it to a value that reaches more than the one before it
	                * (the network: none < allowlist < isolated < host) */
	APPROVE_ITEMS, /* set some of its items: its type's code knows which */
};

struct key {
	const char *name;
	enum key_type type;
	size_t offset;                      /* of its value in struct settings */
	const char *(*check)(const char *); /* what is wrong with a string or an item, or NULL */
	const char *text_default;
	double number_default;
	const char *env[2]; /* variables that set a string key, the later winning */
	enum approval approval;
	const char *may_not; /* ends the refusal "a project file may not ..." */
	/* The unknown-key message lists the keys as README does, and the digest
	 * keeps the order existing boxes' labels have (0: no part of it). */
	unsigned char readme_place, digest_place;
};

extern const struct key settings_keys[];
extern const size_t settings_n_keys;

/* Where key k's value is in s. */
void *key_value(struct settings *s, const struct key *k);
const void *key_value_in(const struct settings *s, const struct key *k);

#endif
