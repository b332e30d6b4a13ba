/* spawn: the one way gemini-box starts a process, after git's run-command.
 *
 * A child gets exactly the argv and the environment given here, never a copy
 * of a parent environment that was changed with setenv, and the signal mask
 * gemini-box itself started with (exec resets caught signals; signals the
 * caller ignored stay ignored, as nohup means). No shell is involved. */
#ifndef GEMINI_BOX_SPAWN_H
#define GEMINI_BOX_SPAWN_H

#include <sys/types.h>

#include "error.h"

enum child_io {
	CHILD_CAPTURE,  /* stdin /dev/null; stdout and stderr captured */
	CHILD_SHOW,     /* stdin /dev/null; both shown on the caller's stderr (progress) */
	CHILD_INHERIT,  /* the caller's stdin, stdout and stderr (the gemini session) */
	CHILD_DETACHED, /* all three /dev/null, in a session of its own, not our child:
	                 * a daemon that outlives gemini-box (child_detach) */
};

struct child {
	char *const *argv; /* argv[0] is a path */
	char *const *env;  /* the child's whole environment, NULL-terminated */
	enum child_io io;
};

struct run_result {
	int status; /* exit status, or 128 + signal */
	char *out;  /* captured stdout, NUL-terminated ("" unless CHILD_CAPTURE) */
	char *err;  /* captured stderr ("" unless CHILD_CAPTURE) */
};

/* Starts c. Fails with EXIT_BOX_NOPODMAN when argv[0] cannot be executed (a
 * program that runs and exits 127 is a result, not a failure). */
int child_start(const struct child *c, pid_t *pid, struct gb_error *err);

/* Starts c (its io CHILD_DETACHED) as a daemon: gemini-box neither waits
 * for it nor is its parent. Fails when it cannot be executed. */
int child_detach(const struct child *c, struct gb_error *err);

/* Starts c, collects what it prints and waits for it. Fails only when it
 * cannot be started or waited for. */
int child_run(const struct child *c, struct run_result *r, struct gb_error *err);
void run_result_clear(struct run_result *r);

/* The status to report for a waitpid status: the exit status, or 128 + signal. */
int child_status(int wstatus);

#endif
