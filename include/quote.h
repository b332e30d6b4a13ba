/* quote: shell quoting for --box-dry-run and for paths in messages. */
#ifndef GEMINI_BOX_QUOTE_H
#define GEMINI_BOX_QUOTE_H

/* Returns a malloc'd form of s that a POSIX shell (bash, zsh, ksh for $'...')
 * reads back as the single word s. Safe words stay bare; others are put in
 * single quotes; words with control bytes use $'...' so that one command
 * always stays on one line. */
char *shell_quote(const char *s);

#endif
