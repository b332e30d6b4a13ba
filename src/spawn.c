#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strv.h"

/* The mask gemini-box was started with: children get it back, whatever
 * gemini-box blocked for itself in between. */
static sigset_t startup_mask;

__attribute__((constructor)) static void save_startup_mask(void)
{
	sigprocmask(SIG_SETMASK, NULL, &startup_mask);
}

static void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	fds[0] = fds[1] = -1;
}

/* In the child: only async-signal-safe calls from here to exec. */
static void child_exec(const struct child *c, int out_fd, int err_fd, int exec_fd)
{
	sigprocmask(SIG_SETMASK, &startup_mask, NULL);
	if (c->io == CHILD_DETACHED) {
		/* A session of its own, and the grandchild of gemini-box, whose
		 * child exits at once: init adopts it, no terminal signals reach it. */
		if (setsid() < 0)
			_exit(127);
		pid_t pid = fork();
		if (pid != 0)
			_exit(pid < 0 ? 127 : 0);
		/* Nothing of the caller's stays open in it but the pipe that
		 * reports a failed exec (close-on-exec): a test runner's output
		 * file held by a daemon would never see its end. */
		if (exec_fd > 3)
			close_range(3, (unsigned)exec_fd - 1, 0);
		close_range((unsigned)exec_fd + 1, ~0U, 0);
		out_fd = err_fd = open("/dev/null", O_WRONLY);
	}
	if (c->io != CHILD_INHERIT) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0 && devnull != STDIN_FILENO) {
			dup2(devnull, STDIN_FILENO);
			close(devnull);
		}
		dup2(c->io == CHILD_SHOW ? STDERR_FILENO : out_fd, STDOUT_FILENO);
		if (c->io == CHILD_CAPTURE || c->io == CHILD_DETACHED)
			dup2(err_fd, STDERR_FILENO);
		if (c->io == CHILD_DETACHED && out_fd > STDERR_FILENO)
			close(out_fd);
	}
	execve(c->argv[0], c->argv, c->env);
	int e = errno;
	if (write(exec_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Starts the child with the pipes given (-1 when unused) and reports a
 * failed exec through a close-on-exec pipe, so that "cannot run" and "ran
 * and exited 127" differ. */
static int start(const struct child *c, int out_fd, int err_fd, pid_t *pid, struct gb_error *err)
{
	int exec_pipe[2] = { -1, -1 };
	if (pipe2(exec_pipe, O_CLOEXEC) < 0)
		return gb_fail_errno(err, EXIT_BOX_INTERNAL, errno, "cannot make a pipe");
	fflush(NULL);
	*pid = fork();
	if (*pid < 0) {
		int e = errno;
		close_pair(exec_pipe);
		return gb_fail(err, EXIT_BOX_INTERNAL, "cannot start %s: %s", c->argv[0],
		               strerror(e));
	}
	if (*pid == 0)
		child_exec(c, out_fd, err_fd, exec_pipe[1]);
	close(exec_pipe[1]);
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(exec_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(exec_pipe[0]);
	if (got == (ssize_t)sizeof(exec_errno)) {
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		return gb_fail(err, EXIT_BOX_NOPODMAN, "cannot run %s: %s", c->argv[0],
		               strerror(exec_errno));
	}
	return 0;
}

int child_start(const struct child *c, pid_t *pid, struct gb_error *err)
{
	return start(c, -1, -1, pid, err);
}

int child_detach(const struct child *c, struct gb_error *err)
{
	pid_t pid;
	if (start(c, -1, -1, &pid, err) < 0)
		return -1;
	/* the intermediate child, which exited as soon as it forked */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int child_status(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : EXIT_BOX_INTERNAL;
}

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
	return b->data ? b->data : xstrdup("");
}

/* Reads both pipes to their end without letting either fill up and block
 * the child. Closes both; fails on a read or poll error. */
static int drain(int fds_in[2], struct buf *out, struct buf *errb, struct gb_error *err)
{
	struct pollfd fds[2] = { { fds_in[0], POLLIN, 0 }, { fds_in[1], POLLIN, 0 } };
	int open_fds = (fds[0].fd >= 0) + (fds[1].fd >= 0);
	char chunk[8192];
	int rc = 0;
	while (open_fds > 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = gb_fail_errno(err, EXIT_BOX_INTERNAL, errno,
			                   "cannot wait for podman's output");
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n > 0) {
				buf_append(i == 0 ? out : errb, chunk, (size_t)n);
				continue;
			}
			if (n < 0) {
				rc = gb_fail_errno(err, EXIT_BOX_INTERNAL, errno,
				                   "cannot read podman's output");
				open_fds = 0;
			}
			close(fds[i].fd);
			fds[i].fd = -1;
			open_fds--;
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	return rc;
}

int child_run(const struct child *c, struct run_result *r, struct gb_error *err)
{
	memset(r, 0, sizeof(*r));
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	if (c->io == CHILD_CAPTURE &&
	    (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0)) {
		int e = errno;
		close_pair(out_pipe);
		close_pair(err_pipe);
		return gb_fail_errno(err, EXIT_BOX_INTERNAL, e, "cannot make a pipe");
	}
	pid_t pid;
	int rc = start(c, out_pipe[1], err_pipe[1], &pid, err);
	if (out_pipe[1] >= 0)
		close(out_pipe[1]);
	if (err_pipe[1] >= 0)
		close(err_pipe[1]);
	if (rc < 0) {
		close_pair(out_pipe);
		close_pair(err_pipe);
		return -1;
	}
	struct buf out = { 0 }, errb = { 0 };
	int reading[2] = { out_pipe[0], err_pipe[0] };
	rc = drain(reading, &out, &errb, err);
	int wstatus = 0;
	while (waitpid(pid, &wstatus, 0) < 0) {
		if (errno != EINTR) {
			rc = gb_fail(err, EXIT_BOX_INTERNAL, "cannot wait for %s: %s", c->argv[0],
			             strerror(errno));
			break;
		}
	}
	if (rc < 0) {
		free(out.data);
		free(errb.data);
		return -1;
	}
	r->status = child_status(wstatus);
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
