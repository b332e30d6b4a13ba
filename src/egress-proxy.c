#define _GNU_SOURCE
#include "egress-proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "boxinit.h"
#include "egress.h"
#include "fsutil.h"
#include "relay.h"
#include "strv.h"

/* How long a client may take to send its request head, and the server to
 * accept the connection. */
#define HEAD_SECONDS    30
#define CONNECT_SECONDS 15
/* The allow file is small; a larger one is not ours. */
#define ALLOW_MAX (1 << 20)
/* The log is started again (the old one kept as .1) past this size. */
#define LOG_MAX (8 << 20)
/* Once the box's lock is free this many checks in a row (a second apart),
 * the box has stopped; a proxy started just before its box waits this long
 * for the init to take the lock. */
#define FREE_CHECKS    3
#define STARTUP_CHECKS 30

static int open_private(const char *state, const char *name, int flags)
{
	char *path = xasprintf("%s/%s", state, name);
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(path);
	return fd;
}

bool egress_proxy_running(const char *state)
{
	int fd = open_private(state, EGRESS_LOCK_FILE, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return false;
	bool held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/* Whether the box's init holds its lock (the box runs). A shared lock
 * taken for an instant, as gemini-box's own probe does; the init retries. */
static bool box_running(const char *state)
{
	int fd = open_private(state, BOX_LOCK_FILE, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return false;
	bool held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

struct conn {
	int log_fd;
	const char *state;
	int client, server;
	struct egress_request req;
	char address[INET6_ADDRSTRLEN];
};

/* One line per decision, written with one write(2) to an O_APPEND file, so
 * lines of concurrent connections never mix. */
static void log_decision(const struct conn *c, const char *verdict, unsigned long long up,
                         unsigned long long down, const char *reason)
{
	char *line = egress_log_line((long long)time(NULL), verdict, c->req.method,
	                             *c->req.host ? c->req.host : "-", c->req.port, c->address, up,
	                             down, reason);
	write_all(c->log_fd, line, strlen(line));
	free(line);
}

static int deny(const struct conn *c, const char *verdict, int code, const char *status,
                const char *reason)
{
	char *body = xasprintf("gemini-box egress: %s\n", reason);
	char *reply = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	                        "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
	                        code, status, strlen(body), body);
	write_all(c->client, reply, strlen(reply));
	free(reply);
	free(body);
	log_decision(c, verdict, 0, 0, reason);
	return 1;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Connects to the first address of host that the rule allows; *why says
 * why none was (an internal address, or the last connect error). */
static int connect_upstream(struct conn *c, const struct egress_rule *rule, char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	if (rule->address)
		hints.ai_flags = AI_NUMERICHOST;
	char port[8];
	snprintf(port, sizeof(port), "%u", c->req.port);
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(c->req.host, port, &hints, &res);
	if (rc != 0) {
		*why = xasprintf("cannot resolve %s: %s", c->req.host, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		getnameinfo(ai->ai_addr, ai->ai_addrlen, c->address, sizeof(c->address), NULL, 0,
		            NI_NUMERICHOST);
		/* Only a rule naming the address itself reaches the host's own
		 * services or a private network: a name that resolves there (DNS
		 * rebinding, a "localhost" entry) does not. */
		if (!rule->address && egress_address_internal(ai->ai_addr)) {
			free(*why);
			*why = xasprintf("%s resolves to %s, an internal address; list the "
			                 "address itself to allow it",
			                 c->req.host, c->address);
			continue;
		}
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		alarm(CONNECT_SECONDS);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			free(*why);
			*why = xasprintf("cannot connect to %s: %s", c->address,
			                 errno == EINTR ? "timed out" : strerror(errno));
			close(fd);
			fd = -1;
		}
		alarm(0);
	}
	freeaddrinfo(res);
	return fd;
}

/* Reads the request head; returns its length read so far in *len. */
static int read_head(struct conn *c, char *buf, size_t cap, size_t *len, const char **why)
{
	*len = 0;
	alarm(HEAD_SECONDS);
	int rc = 0;
	while (rc == 0) {
		ssize_t n = read(c->client, buf + *len, cap - 1 - *len);
		if (n <= 0) {
			*why = n == 0           ? "the client closed before a whole request"
			       : errno == EINTR ? "no whole request in time"
			                        : "cannot read the request";
			rc = -1;
			break;
		}
		*len += (size_t)n;
		buf[*len] = '\0';
		rc = egress_parse_request(buf, *len, &c->req, why);
	}
	alarm(0);
	return rc;
}

static void handle(struct conn *c)
{
	static char buf[16384 + 1];
	size_t len;
	const char *why = NULL;
	int rc = read_head(c, buf, sizeof(buf), &len, &why);
	if (rc < 0) {
		if (len > 0)
			deny(c, EGRESS_DENY, 400, "Bad Request", why);
		return;
	}
	char *allow_path = xasprintf("%s/" EGRESS_ALLOW_FILE, c->state);
	char *allow = read_small_file(allow_path, ALLOW_MAX, true);
	free(allow_path);
	struct egress_rules rules;
	egress_rules_parse(allow, &rules);
	free(allow);
	const struct egress_rule *rule = egress_match(&rules, c->req.host, c->req.port);
	if (!rule) {
		deny(c, EGRESS_DENY, 403, "Forbidden", "not in this box's egress list");
		egress_rules_clear(&rules);
		return;
	}
	char *refused = NULL;
	c->server = connect_upstream(c, rule, &refused);
	egress_rules_clear(&rules);
	if (c->server < 0) {
		bool internal = refused && strstr(refused, "internal address");
		deny(c, internal ? EGRESS_DENY : EGRESS_ERROR, internal ? 403 : 502,
		     internal ? "Forbidden" : "Bad Gateway", refused ? refused : "no address");
		free(refused);
		return;
	}
	free(refused);
	unsigned long long up = 0;
	if (c->req.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		write_all(c->client, ok, sizeof(ok) - 1);
	} else {
		char *head = egress_origin_head(buf, &c->req);
		write_all(c->server, head, strlen(head));
		up += strlen(head);
		free(head);
	}
	/* What came after the head (a TLS hello sent eagerly, a body) */
	if (len > c->req.head_len) {
		write_all(c->server, buf + c->req.head_len, len - c->req.head_len);
		up += len - c->req.head_len;
	}
	struct relay_counts counts = { 0, 0 };
	relay_splice(c->client, c->server, &counts);
	log_decision(c, EGRESS_ALLOW, up + counts.a_to_b, counts.b_to_a, "listed");
}

static int listen_socket(const char *state)
{
	char *dir = xasprintf("%s/" EGRESS_DIR, state);
	char *path = xasprintf("%s/" EGRESS_SOCKET, dir);
	int fd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path) || !dir_is_ours(dir, 077)) {
		fprintf(stderr, "gemini-box egress proxy: %s is not a private directory of yours\n",
		        dir);
		goto out;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	mode_t old = umask(077);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	umask(old);
out:
	free(path);
	free(dir);
	return fd;
}

static void rotate_log(const char *state)
{
	char *path = xasprintf("%s/" EGRESS_LOG_FILE, state);
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > LOG_MAX) {
		char *old = xasprintf("%s.1", path);
		rename(path, old);
		free(old);
	}
	free(path);
}

int egress_proxy_main(const char *state)
{
	if (!dir_is_ours(state, 077)) {
		fprintf(stderr, "gemini-box egress proxy: %s is not a private directory of yours\n",
		        state);
		return 2;
	}
	/* started as /proc/self/exe, which ps would show as "exe" */
	prctl(PR_SET_NAME, "gb-egress-proxy");
	int lock = open_private(state, EGRESS_LOCK_FILE, O_RDWR | O_CREAT);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
		return 0; /* another proxy serves this box */
	rotate_log(state);
	int log_fd = open_private(state, EGRESS_LOG_FILE, O_WRONLY | O_APPEND | O_CREAT);
	int listener = listen_socket(state);
	if (log_fd < 0 || listener < 0)
		return 1;
	/* Children are not waited for; a peer gone mid-write is an error, not death. */
	signal(SIGCHLD, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	struct stat mine;
	char *sock = xasprintf("%s/" EGRESS_DIR "/" EGRESS_SOCKET, state);
	int free_checks = 0, checks = 0;
	/* Started after its box came up: it runs now (a box stopped within the
	 * first second must not keep its proxy for the STARTUP_CHECKS). */
	bool seen_running = box_running(state);
	if (stat(sock, &mine) < 0)
		return 1;
	for (;;) {
		struct pollfd p = { .fd = listener, .events = POLLIN };
		int n = poll(&p, 1, 1000);
		if (n > 0) {
			int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
			if (client >= 0) {
				pid_t pid = fork();
				if (pid == 0) {
					close(listener);
					close(lock);
					struct conn c = { .log_fd = log_fd,
						          .state = state,
						          .client = client,
						          .server = -1 };
					handle(&c);
					_exit(0);
				}
				close(client);
			}
			continue;
		}
		checks++;
		/* The box removed (its files with it) and made again: the proxy of
		 * the new one is a new process, and this one only in the way. */
		struct stat now;
		if (stat(sock, &now) < 0 || now.st_ino != mine.st_ino || now.st_dev != mine.st_dev)
			break;
		if (box_running(state)) {
			seen_running = true;
			free_checks = 0;
		} else if (++free_checks >= FREE_CHECKS &&
		           (seen_running || checks >= STARTUP_CHECKS)) {
			break;
		}
	}
	struct stat now;
	if (stat(sock, &now) == 0 && now.st_ino == mine.st_ino && now.st_dev == mine.st_dev)
		unlink(sock);
	free(sock);
	return 0;
}
