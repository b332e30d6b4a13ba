/* fsutil: small file system helpers the modules share. */
#ifndef GEMINI_BOX_FSUTIL_H
#define GEMINI_BOX_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The directory part of path, as dirname(1) gives it ("/" for "/x"). */
char *dir_of(const char *path);

/* Whether path is a directory of the caller's (never through a link) with
 * none of the forbidden mode bits: 022, no one else writes it; 077, no one
 * else reads or writes it. */
bool dir_is_ours(const char *path, mode_t forbidden);

/* mkdir -p: path and its missing parents, each made with mode. On failure
 * errno is mkdir's. */
int mkdir_p(const char *path, mode_t mode);

/* The text of a small regular file (at most max bytes; NULL past that),
 * opened without following a link or blocking on a FIFO; with ours, only a
 * file of the caller's that no one else can write. NULL when unreadable or
 * refused. */
char *read_small_file(const char *path, size_t max, bool ours);

#endif
