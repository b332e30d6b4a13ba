/* boxid: which directory a run belongs to, and the box's name for it. */
#ifndef GEMINI_BOX_BOXID_H
#define GEMINI_BOX_BOXID_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "hash.h"

/* Labels every box carries; boxes are found by these, never by name pattern. */
#define BOX_LABEL_DIR      "gemini-box.dir"
#define BOX_LABEL_VERSION  "gemini-box.version"
#define BOX_LABEL_IMAGE    "gemini-box.image"
#define BOX_LABEL_SETTINGS "gemini-box.settings"
#define BOX_LABEL_INIT     "gemini-box.init"
#define BOX_LABEL_STATE    "gemini-box.state"

#define BOX_NAME_PREFIX "gemini-box-"
/* podman accepts longer names; a DNS label's length keeps them usable as hostnames. */
#define BOX_NAME_MAX 63
/* 48 bits of SHA-256: a collision needs some 16 million projects. */
#define BOX_HASH_HEX  HASH_ID_HEX
#define BOX_NAME_SIZE (BOX_NAME_MAX + 1)
/* prefix + slug + '-' + hash fits in BOX_NAME_MAX. */
#define BOX_SLUG_MAX (BOX_NAME_MAX - (sizeof(BOX_NAME_PREFIX) - 1) - 1 - BOX_HASH_HEX)

/* The box directory for the canonical working directory cwd: the nearest
 * ancestor (cwd included) holding a .git entry, unless that is home or "/",
 * else cwd itself. The search stops at the first directory that uid does not
 * own. home may be NULL. Returns a malloc'd path. */
char *box_dir_find(const char *cwd, const char *home, uid_t uid);

/* The directory's basename reduced to [a-zA-Z0-9_.-] (each run of other bytes
 * becomes one '-', '-' and '.' trimmed at the ends) and cut to max bytes.
 * out must hold max + 1 bytes. */
void box_slug(const char *dir, char *out, size_t max);

/* gemini-box-<slug>-<12 hex of SHA-256(dir)>, at most BOX_NAME_MAX bytes;
 * dir must be canonical (realpath). */
void box_name(const char *dir, char out[BOX_NAME_SIZE]);

/* Whether path is dir itself or lies below it (both canonical). */
int path_is_within(const char *path, const char *dir);

#endif
