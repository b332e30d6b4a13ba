#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan.h"
#include "podman.h"
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
		return gb_fail(err, EXIT_BOX_INTERNAL, "cannot get random bytes: %s",
		               strerror(errno));
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

static void relay(const char *podman, const char *box, const char *token, int sig)
{
	struct strv argv = STRV_INIT;
	session_kill_argv(podman, box, relayed_name(sig), token, &argv);
	struct run_result r;
	struct gb_error err = GB_ERROR_INIT;
	if (run_command(argv.v, RUN_CAPTURE, &r, &err) == 0)
		run_result_clear(&r);
	else
		gb_error_clear(&err); /* nothing better to do: the session goes on */
	strv_clear(&argv);
}

int session_run(char *const argv[], const char *podman, const char *box, const char *token,
                struct gb_error *err)
{
	/* Blocked before the fork, so none is lost between fork and wait. */
	sigset_t waited, old;
	sigemptyset(&waited);
	sigaddset(&waited, SIGCHLD);
	for (size_t i = 0; i < N_RELAYED; i++)
		sigaddset(&waited, relayed[i].sig);
	sigprocmask(SIG_BLOCK, &waited, &old);

	/* A failed execv reports its errno through a close-on-exec pipe. */
	int exec_pipe[2];
	if (pipe2(exec_pipe, O_CLOEXEC) < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		return gb_fail(err, EXIT_BOX_INTERNAL, "cannot make a pipe: %s", strerror(e));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(exec_pipe[0]);
		close(exec_pipe[1]);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return gb_fail(err, EXIT_BOX_INTERNAL, "cannot start %s: %s", argv[0], strerror(e));
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		execv(argv[0], argv);
		int e = errno;
		if (write(exec_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(exec_pipe[1]);
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(exec_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(exec_pipe[0]);
	if (got == (ssize_t)sizeof(exec_errno)) {
		waitpid(pid, NULL, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return gb_fail(err, EXIT_BOX_NOPODMAN, "cannot run %s: %s", argv[0],
		               strerror(exec_errno));
	}

	int wstatus = 0;
	for (;;) {
		siginfo_t info;
		int sig = sigwaitinfo(&waited, &info);
		if (sig < 0)
			continue; /* EINTR from a signal outside the set */
		if (sig != SIGCHLD) {
			relay(podman, box, token, sig);
			continue;
		}
		/* SIGCHLD also comes from relay's own children: only ours ends the wait. */
		pid_t done = waitpid(pid, &wstatus, WNOHANG);
		if (done == pid)
			break;
		if (done < 0 && errno != EINTR) {
			wstatus = 0;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : EXIT_BOX_INTERNAL;
}
