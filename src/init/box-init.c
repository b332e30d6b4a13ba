/* gemini-box-init: the main process of every box (PID 1 in it).
 *
 * It is what keeps a box up between runs, and nothing else: it reaps the
 * zombies that every exec session leaves to PID 1, exits at once on SIGTERM,
 * SIGINT or SIGHUP (podman stop then takes milliseconds), holds an exclusive
 * flock on the box's liveness lock so that gemini-box can tell the box runs
 * without asking podman, and, with --idle-seconds N, exits when nothing but
 * itself has run in the box for N seconds, so idle boxes cost nothing.
 *
 * In a box of the "allowlist" network mode it is also the box's way out:
 * with --relay PORT SOCKET it listens on 127.0.0.1:PORT, the box's only
 * network, and hands each connection over to SOCKET, the host's egress
 * proxy, which decides where it may go and moves its bytes.
 *
 * Built static, so it runs in any image, bind-mounted read-only like podman's
 * own catatonit. Usage:
 *   gemini-box-init [--lock FILE] [--idle-seconds N] [--relay PORT SOCKET]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* How often idleness is looked at; stopping a little late is harmless. */
#define IDLE_POLL_SECONDS 2
/* How long to wait for room in the proxy's backlog: 20 tries 5 ms apart. */
#define CONNECT_TRIES    20
#define CONNECT_RETRY_NS 5000000L
/* How long the proxy may take to say "go" (a proxy at its limit of
 * connections says nothing: the client then gets a 503). */
#define GO_WAIT_MS 250
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

/* The box's proxy port: on the box's loopback, its only network. */
static int relay_listen(long port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port),
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
		say("cannot listen on the box's proxy port; the box has no way out");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One connection: handed over, as a file descriptor (SCM_RIGHTS), to the
 * host's proxy, which then moves its bytes itself; the init keeps nothing
 * of it and starts no process for it. */
static void hand_over(int client, const char *socket_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int proxy = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	bool sent = false, busy = false;
	if (proxy >= 0 && strlen(socket_path) < sizeof(sa.sun_path)) {
		strcpy(sa.sun_path, socket_path);
		char marker = 'F';
		struct iovec iov = { &marker, 1 };
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} control;
		memset(&control, 0, sizeof(control));
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			              .msg_controllen = sizeof(control.buf) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &client, sizeof(int));
		/* A full backlog (a burst of connections) is waited out a little,
		 * never for long: this is the box's PID 1. */
		int rc;
		for (int i = 0; (rc = connect(proxy, (struct sockaddr *)&sa, sizeof(sa))) < 0 &&
		                errno == EAGAIN && i < CONNECT_TRIES;
		     i++) {
			struct timespec pause = { 0, CONNECT_RETRY_NS };
			nanosleep(&pause, NULL);
		}
		busy = rc < 0 && errno == EAGAIN;
		/* The proxy takes descriptors from this process alone, once it
		 * has seen who connected: its "go" comes first. */
		struct pollfd p = { .fd = proxy, .events = POLLIN };
		char go = 0;
		bool ready = rc == 0 && poll(&p, 1, GO_WAIT_MS) == 1 && read(proxy, &go, 1) == 1 &&
		             go == 'G';
		busy = busy || (rc == 0 && !ready);
		sent = ready && sendmsg(proxy, &msg, MSG_NOSIGNAL) == 1;
	}
	if (!sent) {
		static const char gone[] =
		        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
		        "Connection: close\r\n\r\n"
		        "gemini-box egress: the host's egress proxy for this box is not running; "
		        "run gemini-box again to start it\n";
		static const char full[] =
		        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
		        "Connection: close\r\n\r\n"
		        "gemini-box egress: too many connections at once\n";
		const char *reply = busy ? full : gone;
		ssize_t ignored = send(client, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)ignored;
	}
	if (proxy >= 0)
		close(proxy);
}

int main(int argc, char *argv[])
{
	const char *lock_path = NULL;
	long idle_seconds = 0;
	long relay_port = 0;
	const char *relay_socket = NULL;
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
		} else if (strcmp(argv[i], "--relay") == 0 && i + 2 < argc) {
			char *end;
			relay_port = strtol(argv[++i], &end, 10);
			relay_socket = argv[++i];
			if (*end || relay_port < 1 || relay_port > 65535) {
				say("--relay takes a port from 1 to 65535 and a socket path");
				return 2;
			}
		} else {
			say("usage: gemini-box-init [--lock FILE] [--idle-seconds N] "
			    "[--relay PORT SOCKET]");
			return 2;
		}
	}

	/* Nothing in the box, though it runs as the same user, may trace this
	 * process or take its descriptors (the connections it hands over). */
	prctl(PR_SET_DUMPABLE, 0);

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

	int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	int listener = relay_socket ? relay_listen(relay_port) : -1;
	if (sfd < 0) {
		say("cannot wait for signals");
		return 1;
	}
	double idle_since = now_seconds();
	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
			               { .fd = listener, .events = POLLIN } };
		int n = poll(p, listener >= 0 ? 2 : 1,
		             idle_seconds > 0 ? IDLE_POLL_SECONDS * 1000 : -1);
		if (n < 0 && errno != EINTR)
			return 1;
		struct signalfd_siginfo si;
		while (n > 0 && (p[0].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			int sig = (int)si.ssi_signo;
			if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
				return 0;
			if (sig == SIGCHLD)
				reap();
		}
		if (n > 0 && listener >= 0 && (p[1].revents & POLLIN)) {
			int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
			if (client >= 0) {
				hand_over(client, relay_socket);
				close(client);
			}
		}
		if (idle_seconds > 0) {
			if (others_running())
				idle_since = now_seconds();
			else if (now_seconds() - idle_since >= (double)idle_seconds)
				return 0;
		}
	}
}
