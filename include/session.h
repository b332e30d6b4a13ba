/* session: runs the final podman exec and relays signals into the box.
 *
 * podman 4.3's exec passes no signal on (podman issue 19486): killing it
 * leaves gemini running in the box and loses its exit status. So gemini-box
 * stays as the parent of podman exec, tags the exec session with a random
 * token in its environment, and on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1
 * or SIGUSR2 signals every process of that session inside the box. */
#ifndef GEMINI_BOX_SESSION_H
#define GEMINI_BOX_SESSION_H

#include "error.h"
#include "strv.h"

#define SESSION_ENV        "GEMINI_BOX_SESSION"
#define SESSION_TOKEN_SIZE 17 /* 16 hex digits and a NUL */

/* A fresh random token. */
int session_token(char out[SESSION_TOKEN_SIZE], struct gb_error *err);

/* The argv of `podman exec BOX sh -c SCRIPT` that sends signal (by name,
 * "TERM") to every process whose environment holds SESSION_ENV=token. */
void session_kill_argv(const char *podman, const char *box, const char *signal_name,
                       const char *token, struct strv *argv);

/* Runs argv (the podman exec of the session) with environment env to its
 * end, relaying the signals the caller does not ignore. Returns the status to
 * exit with: the session's own, or 128 + signal. Returns -1 (err set) when
 * the session could not be started or waited for. */
int session_run(char *const argv[], char *const env[], const char *podman, const char *box,
                const char *token, struct gb_error *err);

#endif
