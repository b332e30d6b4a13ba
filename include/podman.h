/* podman: the one place that starts processes. Every podman call before the
 * final exec goes through podman_run; the final one replaces gemini-box. */
#ifndef GEMINI_BOX_PODMAN_H
#define GEMINI_BOX_PODMAN_H

#include <stdbool.h>

#include "error.h"

struct run_result {
	int status; /* exit status, or 128 + signal */
	char *out;  /* captured stdout, NUL-terminated */
	char *err;  /* captured stderr, or NULL when it went to ours */
};

/* Runs argv (argv[0] a path) with stdin from /dev/null, so the caller's stdin
 * stays for gemini, and stdout captured, so nothing but gemini writes to the
 * caller's stdout. stderr is captured when capture_stderr, else shown. Fails
 * only when the program cannot be run at all (EXIT_BOX_NOPODMAN when exec
 * fails): an exit status of its own, 127 included, is a result. */
int run_command(char *const argv[], bool capture_stderr, struct run_result *r,
                struct gb_error *err);
void run_result_clear(struct run_result *r);

#define PODMAN_MESSAGE_MAX 400

/* podman's "Error: " line from its stderr (else the last non-empty line),
 * without the prefix and cut to PODMAN_MESSAGE_MAX bytes, for one-line
 * messages. Returns a malloc'd string. */
char *podman_message(const char *stderr_text);

/* Finds an executable: name itself if it holds a '/', else along path.
 * Returns a malloc'd path or NULL. */
char *find_executable(const char *name, const char *path);

#endif
