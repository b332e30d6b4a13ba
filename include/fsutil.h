/* fsutil: small file system helpers the modules share. */
#ifndef GEMINI_BOX_FSUTIL_H
#define GEMINI_BOX_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: path and its missing parents, each made with mode. On failure
 * errno is mkdir's. */
int mkdir_p(const char *path, mode_t mode);

/* The text of a small regular file (at most max bytes; NULL past that),
 * opened without following a link or blocking on a FIFO; with ours, only a
 * file of the caller's that no one else can write. NULL when unreadable or
 * refused. */
char *read_small_file(const char *path, size_t max, bool ours);

#endif
