/* quote: shell quoting for --box-dry-run and for paths in messages. */
#ifndef GEMINI_BOX_QUOTE_H
#define GEMINI_BOX_QUOTE_H

#include <stdio.h>

/* Returns a malloc'd form of s that a POSIX shell (bash, zsh, ksh for $'...')
 * reads back as the single word s. Safe words stay bare; others are put in
 * single quotes; words with control bytes use $'...' so that one command
 * always stays on one line. */
char *shell_quote(const char *s);

/* Writes text that came from outside (a repository, a box) so that it cannot
 * drive the terminal: control characters, C1 controls and bytes that are not
 * UTF-8 are shown as \xNN; newlines and tabs stay. */
void print_untrusted(FILE *out, const char *text);

#endif
