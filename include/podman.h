/* podman: finding podman and reading its messages. Processes are started by
 * spawn.h. */
#ifndef GEMINI_BOX_PODMAN_H
#define GEMINI_BOX_PODMAN_H

#include <stdbool.h>

#include "error.h"

#define PODMAN_MESSAGE_MAX 400

/* podman's "Error: " line from its stderr (else the last non-empty line),
 * without the prefix and cut to PODMAN_MESSAGE_MAX bytes, for one-line
 * messages. Returns a malloc'd string. */
char *podman_message(const char *stderr_text);

/* Finds an executable: name itself if it holds a '/', else along path.
 * Returns a malloc'd path or NULL. */
char *find_executable(const char *name, const char *path);

#endif
