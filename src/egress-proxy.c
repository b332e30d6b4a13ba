#define _GNU_SOURCE
#include "egress-proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
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
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxinit.h"
#include "egress.h"
#include "fsutil.h"
#include "relay.h"
#include "strv.h"

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83 /* Linux 6.16 */
#endif

/* How long a client may take to send its request head and get its answer,
 * and the server to accept the connection. */
#define HEAD_SECONDS    30
#define CONNECT_SECONDS 15
/* The allow file is small; a larger one is not ours. */
#define ALLOW_MAX (1 << 20)
/* The log is started again (the old one kept as .1) past this size, so a
 * box that floods its proxy fills no disk. */
#define LOG_MAX (8 << 20)
/* Connections one box may have open at once: each is a process on the
 * host, and the box's own limits do not count them. */
#define MAX_CONNECTIONS 96
/* Connections the kernel holds for the proxy while it is at its limit. */
#define BACKLOG 16
/* A connection that moves nothing either way for this long is closed. */
#define IDLE_SECONDS 600
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
	return state_lock_held(state, EGRESS_LOCK_FILE);
}

bool egress_rights_refusable(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), off = 0;
	bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Whether the box's init holds its lock: the box runs. */
static bool box_running(const char *state)
{
	return state_lock_held(state, BOX_LOCK_FILE);
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

/* Appends one line (one write(2), O_APPEND: lines of concurrent connections
 * never mix), first starting the log again when it is full. */
static void append_log(const char *state, const char *line)
{
	int fd = open_private(state, EGRESS_LOG_FILE, O_WRONLY | O_APPEND | O_CREAT);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > LOG_MAX) {
		char *path = xasprintf("%s/" EGRESS_LOG_FILE, state);
		char *old = xasprintf("%s.1", path);
		rename(path, old);
		free(old);
		free(path);
		close(fd);
		fd = open_private(state, EGRESS_LOG_FILE, O_WRONLY | O_APPEND | O_CREAT);
	}
	if (fd >= 0) {
		write_all(fd, line, strlen(line));
		close(fd);
	}
}

struct conn {
	time_t decided;
	const char *state;
	int client, server;
	struct egress_request req;
	char address[INET6_ADDRSTRLEN];
};

/* One line per decision. */
static void log_decision(const struct conn *c, const char *verdict, unsigned long long up,
                         unsigned long long down, const char *reason)
{
	/* when it was decided: an allowed connection is logged when it ends,
	 * with the bytes it moved */
	char *line = egress_log_line((long long)c->decided, verdict, c->req.method,
	                             *c->req.host ? c->req.host : "-", c->req.port, c->address, up,
	                             down, reason);
	append_log(c->state, line);
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

/* Whether an address is one of this host's own or on a network the host is
 * on (its public address, its LAN where that is public): the host's
 * services listen there, and its neighbours are not the internet. */
static bool host_address(const struct sockaddr *sa)
{
	struct ifaddrs *list;
	if (getifaddrs(&list) < 0)
		return true; /* cannot tell: refuse */
	bool found = false;
	for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || !i->ifa_netmask || i->ifa_addr->sa_family != sa->sa_family)
			continue;
		const unsigned char *want, *mine, *mask;
		size_t n;
		if (sa->sa_family == AF_INET) {
			want = (const unsigned char *)&(
			               (const struct sockaddr_in *)(const void *)sa)
			               ->sin_addr;
			mine = (const unsigned char *)&((struct sockaddr_in *)(void *)i->ifa_addr)
			               ->sin_addr;
			mask = (const unsigned char *)&(
			               (struct sockaddr_in *)(void *)i->ifa_netmask)
			               ->sin_addr;
			n = sizeof(struct in_addr);
		} else if (sa->sa_family == AF_INET6) {
			want = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
			mine = ((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr.s6_addr;
			mask = ((struct sockaddr_in6 *)(void *)i->ifa_netmask)->sin6_addr.s6_addr;
			n = sizeof(struct in6_addr);
		} else {
			continue;
		}
		bool same = true;
		for (size_t k = 0; k < n && same; k++)
			same = ((want[k] ^ mine[k]) & mask[k]) == 0;
		found = same;
	}
	freeifaddrs(list);
	return found;
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
		if (!rule->address &&
		    (egress_address_internal(ai->ai_addr) || host_address(ai->ai_addr))) {
			free(*why);
			*why = xasprintf("%s resolves to %s, an internal address; list the "
			                 "address itself to allow it",
			                 c->req.host, c->address);
			continue;
		}
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		            ai->ai_protocol);
		if (fd < 0)
			continue;
		int e = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
		if (e == EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			socklen_t len = sizeof(e);
			if (poll(&p, 1, CONNECT_SECONDS * 1000) != 1)
				e = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
				e = errno;
		}
		if (e) {
			free(*why);
			*why = xasprintf("cannot connect to %s: %s", c->address, strerror(e));
			close(fd);
			fd = -1;
		} else {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* recvmsg of up to cap bytes and, in *handed, the first descriptor that
 * came with them (-1 if none); any more are closed: one connection a message
 * is all the init sends. */
static ssize_t receive(int conn, char *buf, size_t cap, int flags, int *handed)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { buf, cap };
	struct msghdr msg = { .msg_iov = &iov,
		              .msg_iovlen = 1,
		              .msg_control = control.buf,
		              .msg_controllen = sizeof(control.buf) };
	ssize_t n = recvmsg(conn, &msg, flags | MSG_CMSG_CLOEXEC);
	*handed = -1;
	for (struct cmsghdr *h = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; h; h = CMSG_NXTHDR(&msg, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (*handed < 0)
				*handed = fd;
			else
				close(fd);
		}
	}
	return n;
}

/* The pid (as this process sees it) of whoever holds the box's lock: the
 * box's init; 0 when none does. From /proc/locks, by the lock's inode. */
static pid_t init_pid(const char *state)
{
	char *path = xasprintf("%s/" BOX_LOCK_FILE, state);
	struct stat st;
	int ok = stat(path, &st);
	free(path);
	FILE *f = ok == 0 ? fopen("/proc/locks", "re") : NULL;
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	pid_t found = 0;
	while (!found && getline(&line, &cap, f) > 0) {
		long pid;
		unsigned major, minor;
		unsigned long long ino;
		char kind[16];
		/* "1: FLOCK  ADVISORY  WRITE 1234 00:1b:5678 0 EOF" */
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &major, &minor,
		           &ino) == 5 &&
		    strcmp(kind, "FLOCK") == 0 && ino == (unsigned long long)st.st_ino &&
		    major == major(st.st_dev) && minor == minor(st.st_dev))
			found = (pid_t)pid;
	}
	free(line);
	fclose(f);
	return found;
}

/* The box's init hands each connection over as a file descriptor, with a
 * one-byte marker: from then on the proxy moves its bytes itself, one splice
 * hop from the box's socket to the server's. Descriptors are taken from the
 * init alone, after a "go": the socket refuses them from anyone else
 * (SO_PASSRIGHTS), since a descriptor an agent made could be one it shares
 * (its options, its blocking flag) or one whose close blocks (SO_LINGER).
 * Anything else in the box that connects to the socket itself is served as
 * a client whose bytes are its request. Returns the bytes read so far. */
static ssize_t take_over(struct conn *c, char *buf, size_t cap)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);
	bool from_init = getsockopt(c->client, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 &&
	                 peer.pid > 0 && peer.pid == init_pid(c->state);
	int on = 1;
	if (from_init && (setsockopt(c->client, SOL_SOCKET, SO_PASSRIGHTS, &on, sizeof(on)) < 0 &&
	                  errno != ENOPROTOOPT))
		return -1;
	if (from_init)
		write_all(c->client, "G", 1);
	int handed;
	ssize_t n = receive(c->client, buf, cap - 1, 0, &handed);
	if (handed < 0)
		return n;
	struct stat st;
	if (!from_init || n != 1 || fstat(handed, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(handed);
		return -1;
	}
	close(c->client);
	c->client = handed;
	return 0;
}

/* Reads the request head after the first `*len` bytes of buf. */
static int read_head(struct conn *c, char *buf, size_t cap, size_t *len, const char **why)
{
	int rc = *len > 0 ? egress_parse_request(buf, *len, &c->req, why) : 0;
	while (rc == 0) {
		ssize_t n = read(c->client, buf + *len, cap - 1 - *len);
		if (n <= 0) {
			*why = n == 0 ? "the client closed before a whole request"
			              : "cannot read the request";
			rc = -1;
			break;
		}
		*len += (size_t)n;
		buf[*len] = '\0';
		rc = egress_parse_request(buf, *len, &c->req, why);
	}
	return rc;
}

static void handle(struct conn *c)
{
	/* Everything before the relay (the head, the decision, the reply) has
	 * this long, whatever a box does: then the process dies. */
	signal(SIGALRM, SIG_DFL);
	alarm(HEAD_SECONDS);
	static char buf[16384 + 1];
	ssize_t first = take_over(c, buf, sizeof(buf));
	if (first < 0)
		return;
	size_t len = (size_t)first;
	buf[len] = '\0';
	const char *why = NULL;
	int rc = read_head(c, buf, sizeof(buf), &len, &why);
	c->decided = time(NULL);
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
	c->decided = time(NULL);
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
	/* What came after the head: a TLS hello sent eagerly; for plain HTTP,
	 * the body, its Content-Length and not a byte more */
	size_t extra = len - c->req.head_len;
	if (!c->req.connect && (long long)extra > c->req.body)
		extra = (size_t)c->req.body;
	write_all(c->server, buf + c->req.head_len, extra);
	up += extra;
	alarm(0);
	struct relay_counts counts = { 0, 0 };
	if (c->req.connect) {
		relay_splice(c->client, c->server, IDLE_SECONDS, RELAY_BOTH, 0, &counts);
	} else {
		/* the rest of the body, then only the answer: a second request
		 * on the connection would go unchecked */
		long long left = c->req.body - (long long)extra;
		if (left > 0)
			relay_splice(c->client, c->server, IDLE_SECONDS, RELAY_UP_BYTES, left,
			             &counts);
		up += counts.a_to_b;
		if (counts.a_to_b == (unsigned long long)(left > 0 ? left : 0))
			relay_splice(c->client, c->server, IDLE_SECONDS, RELAY_DOWN, 0, &counts);
		counts.a_to_b = 0;
	}
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
	/* No descriptor from a box, but from its init (take_over): on kernels
	 * before 6.16, which lack the option, the child that reads one may be
	 * held by it (the doctor says so). */
	int off = 0;
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off));
	mode_t old = umask(077);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, BACKLOG) < 0) {
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
	/* Nothing of the directory gemini-box was started in (the project,
	 * which the box writes) is kept: no core file lands there. */
	if (chdir("/") < 0)
		return 1;
	umask(077);
	int listener = listen_socket(state);
	if (listener < 0)
		return 1;
	/* a peer gone mid-write is an error, not the proxy's death */
	signal(SIGPIPE, SIG_IGN);
	struct stat mine;
	char *sock = xasprintf("%s/" EGRESS_DIR "/" EGRESS_SOCKET, state);
	int free_checks = 0, checks = 0, children = 0;
	/* Started after its box came up: it runs now (a box stopped within the
	 * first second must not keep its proxy for the STARTUP_CHECKS). */
	bool seen_running = box_running(state);
	if (stat(sock, &mine) < 0) {
		free(sock);
		return 1;
	}
	time_t last_check = time(NULL);
	for (;;) {
		while (children > 0 && waitpid(-1, NULL, WNOHANG) > 0)
			children--;
		/* At its limit the proxy takes no connection: they wait in the
		 * short backlog, and past it the init answers 503 itself. The
		 * proxy never reads, nor closes the last copy of, what a box sent
		 * (a descriptor whose close blocks would stop it). */
		struct pollfd p = { .fd = children < MAX_CONNECTIONS ? listener : -1,
			            .events = POLLIN };
		int n = poll(&p, 1, children < MAX_CONNECTIONS ? 1000 : 100);
		int client = n > 0 ? accept4(listener, NULL, NULL, SOCK_CLOEXEC) : -1;
		if (client >= 0) {
			pid_t pid = fork();
			if (pid == 0) {
				close(listener);
				close(lock);
				struct conn c = { .state = state, .client = client, .server = -1 };
				handle(&c);
				_exit(0);
			}
			if (pid > 0)
				children++;
			close(client);
		}
		if (time(NULL) - last_check < 1)
			continue;
		last_check = time(NULL);
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
