#define _GNU_SOURCE
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

/* A pipe of 1 MiB lets one splice move what a fast loopback sender has
 * queued; the kernel's default of 64 KiB costs throughput (make bench). */
#define RELAY_PIPE_SIZE (1 << 20)
#define RELAY_CHUNK     (1 << 20)

struct direction {
	int from, to;
	int pipe[2];
	size_t queued; /* in the pipe, not yet written to "to" */
	bool done;     /* "from" ended and everything reached "to" */
	bool eof;
	unsigned long long moved;
};

static int drain(struct direction *d)
{
	while (d->queued > 0) {
		ssize_t n = splice(d->pipe[0], NULL, d->to, NULL, d->queued, SPLICE_F_MOVE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		d->queued -= (size_t)n;
		d->moved += (unsigned long long)n;
	}
	return 0;
}

/* Moves what "from" has now; at its end, passes the end on. */
static int step(struct direction *d)
{
	ssize_t n;
	do
		n = splice(d->from, NULL, d->pipe[1], NULL, RELAY_CHUNK,
		           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	if (n == 0) {
		d->eof = true;
		d->done = true;
		shutdown(d->to, SHUT_WR);
		return 0;
	}
	d->queued = (size_t)n;
	return drain(d);
}

int relay_splice(int a, int b, struct relay_counts *counts)
{
	struct direction dir[2] = { { .from = a, .to = b, .pipe = { -1, -1 } },
		                    { .from = b, .to = a, .pipe = { -1, -1 } } };
	int rc = 0;
	for (int i = 0; i < 2 && rc == 0; i++) {
		rc = pipe2(dir[i].pipe, O_CLOEXEC);
		if (rc == 0)
			(void)fcntl(dir[i].pipe[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
	}
	while (rc == 0 && !(dir[0].done && dir[1].done)) {
		struct pollfd p[2];
		int n = 0;
		int which[2];
		for (int i = 0; i < 2; i++)
			if (!dir[i].done) {
				p[n] = (struct pollfd){ .fd = dir[i].from, .events = POLLIN };
				which[n++] = i;
			}
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		for (int k = 0; k < n && rc == 0; k++)
			if (p[k].revents)
				rc = step(&dir[which[k]]);
	}
	int saved = errno;
	for (int i = 0; i < 2; i++) {
		if (dir[i].pipe[0] >= 0)
			close(dir[i].pipe[0]);
		if (dir[i].pipe[1] >= 0)
			close(dir[i].pipe[1]);
	}
	if (counts) {
		counts->a_to_b = dir[0].moved;
		counts->b_to_a = dir[1].moved;
	}
	errno = saved;
	return rc;
}
