#define _GNU_SOURCE
#include "podman.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strv.h"

struct buf {
	char *data;
	size_t len, cap;
};

static void buf_append(struct buf *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->data = xrealloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static char *buf_take(struct buf *b)
{
	if (!b->data)
		return xstrdup("");
	return b->data;
}

/* Reads both pipes to their end without letting either fill up and block podman. */
static void drain(int out_fd, int err_fd, struct buf *out, struct buf *errb)
{
	struct pollfd fds[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
	int open_fds = err_fd >= 0 ? 2 : 1;
	char chunk[8192];
	while (open_fds > 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, chunk, sizeof(chunk));
			if (n > 0) {
				buf_append(i == 0 ? out : errb, chunk, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
}

static void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int run_command(char *const argv[], enum run_mode mode, struct run_result *r, struct gb_error *err)
{
	memset(r, 0, sizeof(*r));
	bool capture_stderr = mode == RUN_CAPTURE;
	/* exec_pipe carries the child's errno if execv fails; a successful exec
	 * closes it (O_CLOEXEC), so "cannot run" and "ran and exited 127" differ. */
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 }, exec_pipe[2] = { -1, -1 };
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(exec_pipe, O_CLOEXEC) < 0 ||
	    (capture_stderr && pipe2(err_pipe, O_CLOEXEC) < 0)) {
		int e = errno;
		close_pair(out_pipe);
		close_pair(exec_pipe);
		close_pair(err_pipe);
		return gb_fail(err, EXIT_BOX_INTERNAL, "cannot make a pipe: %s", strerror(e));
	}

	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close_pair(out_pipe);
		close_pair(exec_pipe);
		close_pair(err_pipe);
		return gb_fail(err, EXIT_BOX_INTERNAL, "cannot start %s: %s", argv[0], strerror(e));
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(mode == RUN_SHOW ? STDERR_FILENO : out_pipe[1], STDOUT_FILENO);
		if (capture_stderr)
			dup2(err_pipe[1], STDERR_FILENO);
		execv(argv[0], argv);
		int e = errno;
		if (write(exec_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(out_pipe[1]);
	close(exec_pipe[1]);
	if (capture_stderr)
		close(err_pipe[1]);

	struct buf out = { 0 }, errb = { 0 };
	drain(out_pipe[0], capture_stderr ? err_pipe[0] : -1, &out, &errb);
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(exec_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(exec_pipe[0]);

	int wstatus;
	while (waitpid(pid, &wstatus, 0) < 0) {
		if (errno != EINTR) {
			wstatus = 0;
			break;
		}
	}
	if (got == (ssize_t)sizeof(exec_errno)) {
		free(out.data);
		free(errb.data);
		return gb_fail(err, EXIT_BOX_NOPODMAN, "cannot run %s: %s", argv[0],
		               strerror(exec_errno));
	}
	r->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	r->out = buf_take(&out);
	r->err = buf_take(&errb);
	return 0;
}

void run_result_clear(struct run_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

char *podman_message(const char *text)
{
	char *copy = xstrdup(text ? text : "");
	char *line = NULL;
	/* Prefer podman's "Error: ..." line: warnings may follow or precede it. */
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		while (*l == ' ' || *l == '\t' || *l == '\r')
			l++;
		if (!*l)
			continue;
		if (strncmp(l, "Error: ", 7) == 0) {
			line = l + 7;
			break;
		}
		line = l;
	}
	char *msg = xstrdup(line ? line : "(podman printed no message)");
	free(copy);
	/* Runtimes quote whole paths and configs; one line should stay readable. */
	if (strlen(msg) > PODMAN_MESSAGE_MAX)
		strcpy(msg + PODMAN_MESSAGE_MAX - 3, "...");
	return msg;
}

static bool is_executable_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

char *find_executable(const char *name, const char *path)
{
	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return is_executable_file(name) ? xstrdup(name) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	const char *p = path;
	for (;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		/* An empty PATH entry means the current directory. */
		char *candidate =
		        len ? xasprintf("%.*s/%s", (int)len, p, name) : xasprintf("./%s", name);
		if (is_executable_file(candidate))
			return candidate;
		free(candidate);
		if (!end)
			return NULL;
		p = end + 1;
	}
}
