/* envsel: which of the caller's environment variables each run carries into
 * the box. Only names are chosen: podman takes the values from its own
 * environment (`--env NAME`), so no value ever appears on a command line. */
#ifndef GEMINI_BOX_ENVSEL_H
#define GEMINI_BOX_ENVSEL_H

#include <stdbool.h>

#include "strv.h"

/* Whether s is a portable variable name ([A-Za-z_][A-Za-z0-9_]*): anything
 * else could not be passed as --env NAME. */
bool env_name_valid(const char *s);

/* Whether a variable of this name is forwarded: the terminal's (TERM,
 * COLORTERM, LANG, LC_*, TERM_PROGRAM), the IDE companion's (GEMINI_CLI_IDE_*),
 * GEMINI_SANDBOX, and gemini's auth and model variables. */
bool env_name_forwarded(const char *name);

/* Appends to names, sorted and without duplicates, the name of every variable
 * in envp ("NAME=value" entries, NULL-terminated) that is forwarded. */
void env_forward_names(char *const *envp, struct strv *names);

/* Whether s is valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF). podman 4.3 replaces invalid bytes in a variable's value with
 * U+FFFD, so such a value cannot be carried unchanged. */
bool utf8_valid(const char *s);

/* The value of NAME in envp ("NAME=value" entries, NULL-terminated), the
 * first as getenv finds it, or NULL when unset. */
const char *env_lookup(char *const *envp, const char *name);

/* Whether the value of NAME in envp is exactly "true" (for CI=true). */
bool env_is_true(char *const *envp, const char *name);

#endif
