/* gemini-box-init: the main process of every box (PID 1 in it).
 *
 * It is what keeps a box up between runs, and nothing else: it reaps the
 * zombies that every exec session leaves to PID 1, exits at once on SIGTERM,
 * SIGINT or SIGHUP (podman stop then takes milliseconds), holds an exclusive
 * flock on the box's liveness lock so that gemini-box can tell the box runs
 * without asking podman, and, with --idle-seconds N, exits when nothing but
 * itself has run in the box for N seconds, so idle boxes cost nothing.
 *
 * Built static, so it runs in any image, bind-mounted read-only like podman's
 * own catatonit. Usage: gemini-box-init [--lock FILE] [--idle-seconds N]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often idleness is looked at; stopping a little late is harmless. */
#define IDLE_POLL_SECONDS 2
/* How long to try for the lock: 200 tries 10 ms apart. */
#define LOCK_TRIES    200
#define LOCK_RETRY_NS 10000000L

static void say(const char *what)
{
	fprintf(stderr, "gemini-box-init: %s\n", what);
}

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Whether any process but this one is in the box. Zombies count for
 * nothing: they are reaped at the next SIGCHLD. */
static bool others_running(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return true; /* cannot tell: never stop on a guess */
	bool found = false;
	pid_t self = getpid();
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		char path[64], state = '?';
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		/* "PID (COMM) S ...": COMM may hold spaces and parentheses. */
		char buf[512];
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *close_paren = strrchr(buf, ')');
		if (close_paren && close_paren[1] == ' ')
			state = close_paren[2];
		if (state != 'Z')
			found = true;
	}
	closedir(d);
	return found;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char *argv[])
{
	const char *lock_path = NULL;
	long idle_seconds = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--lock") == 0 && i + 1 < argc) {
			lock_path = argv[++i];
		} else if (strcmp(argv[i], "--idle-seconds") == 0 && i + 1 < argc) {
			char *end;
			idle_seconds = strtol(argv[++i], &end, 10);
			if (*end || idle_seconds < 0) {
				say("--idle-seconds takes a whole number of seconds");
				return 2;
			}
		} else {
			say("usage: gemini-box-init [--lock FILE] [--idle-seconds N]");
			return 2;
		}
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if (lock_path) {
		/* Held until exit: the kernel drops it however this process ends.
		 * The file is the host's, read-only here (flock needs no write
		 * access). A run's shared probe may hold it for an instant: retry
		 * for a while rather than run without it for good. */
		int fd = open(lock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		bool held = false;
		for (int i = 0; fd >= 0 && i < LOCK_TRIES && !held; i++) {
			held = flock(fd, LOCK_EX | LOCK_NB) == 0;
			if (!held) {
				struct timespec pause = { 0, LOCK_RETRY_NS };
				nanosleep(&pause, NULL);
			}
		}
		if (!held)
			say("cannot hold the liveness lock; gemini-box will ask podman instead");
	}

	double idle_since = now_seconds();
	for (;;) {
		struct timespec wait = { IDLE_POLL_SECONDS, 0 };
		int sig = sigtimedwait(&set, NULL, idle_seconds > 0 ? &wait : NULL);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			return 0;
		if (sig == SIGCHLD)
			reap();
		if (idle_seconds > 0) {
			if (others_running())
				idle_since = now_seconds();
			else if (now_seconds() - idle_since >= (double)idle_seconds)
				return 0;
		}
	}
}
