#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan.h"
#include "spawn.h"
#include "strv.h"

/* The signals a person or a program sends to stop or poke gemini. */
static const struct {
	int sig;
	const char *name;
} relayed[] = {
	{ SIGINT, "INT" },   { SIGTERM, "TERM" }, { SIGHUP, "HUP" },
	{ SIGQUIT, "QUIT" }, { SIGUSR1, "USR1" }, { SIGUSR2, "USR2" },
};

#define N_RELAYED (sizeof(relayed) / sizeof(*relayed))

int session_token(char out[SESSION_TOKEN_SIZE], struct gb_error *err)
{
	unsigned char bytes[8];
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		return gb_fail_errno(err, EXIT_BOX_INTERNAL, errno, "cannot get random bytes");
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
	return 0;
}

/* Runs in the box's own shell, never the host's: the signal and the token
 * arrive as arguments, never spliced into the script. */
static const char kill_script[] =
        "sig=$1; token=$2\n"
        "for dir in /proc/[0-9]*; do\n"
        "  if tr '\\0' '\\n' <\"$dir/environ\" 2>/dev/null | grep -qx \"" SESSION_ENV
        "=$token\"; then\n"
        "    kill -s \"$sig\" \"${dir#/proc/}\" 2>/dev/null\n"
        "  fi\n"
        "done\n";

void session_kill_argv(const char *podman, const char *box, const char *signal_name,
                       const char *token, struct strv *argv)
{
	const char *args[] = { signal_name, token, NULL };
	podman_box_sh_argv(podman, box, kill_script, "gemini-box-signal", args, argv);
}

static const char *relayed_name(int sig)
{
	for (size_t i = 0; i < N_RELAYED; i++)
		if (relayed[i].sig == sig)
			return relayed[i].name;
	return NULL;
}

static void relay(char *const env[], const char *podman, const char *box, const char *token,
                  int sig)
{
	struct strv argv = STRV_INIT;
	session_kill_argv(podman, box, relayed_name(sig), token, &argv);
	struct child c = { argv.v, env, CHILD_CAPTURE };
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	if (child_run(&c, &r, &err) == 0)
		run_result_clear(&r);
	else
		gb_error_clear(&err); /* nothing better to do: the session goes on */
	strv_clear(&argv);
}

int session_run(char *const argv[], char *const env[], const char *podman, const char *box,
                const char *token, struct gb_error *err)
{
	/* A signal the caller ignores (nohup's HUP) is not ours to pass on. */
	sigset_t waited, old;
	sigemptyset(&waited);
	sigaddset(&waited, SIGCHLD);
	for (size_t i = 0; i < N_RELAYED; i++) {
		struct sigaction sa;
		if (sigaction(relayed[i].sig, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&waited, relayed[i].sig);
	}
	/* An ignored SIGCHLD is never delivered, so sigwaitinfo would wait forever. */
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
	sigaction(SIGCHLD, &dfl, &old_chld);
	/* Blocked before the fork, so none is lost between fork and wait. */
	sigprocmask(SIG_BLOCK, &waited, &old);

	struct child c = { argv, env, CHILD_INHERIT };
	pid_t pid;
	int rc = child_start(&c, &pid, err);
	bool waiting = rc == 0;
	while (waiting) {
		siginfo_t info;
		int sig = sigwaitinfo(&waited, &info);
		if (sig < 0)
			continue; /* EINTR from a signal outside the set */
		if (sig != SIGCHLD) {
			relay(env, podman, box, token, sig);
			continue;
		}
		/* SIGCHLD also comes from relay's own children: only ours ends the wait. */
		int wstatus;
		pid_t done = waitpid(pid, &wstatus, WNOHANG);
		if (done == pid) {
			rc = child_status(wstatus);
			waiting = false;
		} else if (done < 0 && errno != EINTR) {
			rc = gb_fail_errno(err, EXIT_BOX_INTERNAL, errno,
			                   "cannot wait for podman exec");
			waiting = false;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	return rc;
}
