/* podman: the one place that starts processes. Every podman call before the
 * final exec goes through podman_run; the final one replaces gemini-box. */
#ifndef GEMINI_BOX_PODMAN_H
#define GEMINI_BOX_PODMAN_H

#include <stdbool.h>

#include "error.h"

struct run_result {
	int status; /* exit status, or 128 + signal */
	char *out;  /* captured stdout, NUL-terminated ("" with RUN_SHOW) */
	char *err;  /* captured stderr ("" with RUN_SHOW) */
};

enum run_mode {
	RUN_CAPTURE, /* stdout and stderr captured */
	RUN_SHOW,    /* both shown on the caller's stderr (pull and build progress) */
};

/* Runs argv (argv[0] a path) with stdin from /dev/null, so the caller's stdin
 * stays for gemini, and never on the caller's stdout, which is gemini's.
 * Fails only when the program cannot be run at all (EXIT_BOX_NOPODMAN when
 * exec fails): an exit status of its own, 127 included, is a result. */
int run_command(char *const argv[], enum run_mode mode, struct run_result *r, struct gb_error *err);
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
