#define _GNU_SOURCE
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* A bulk transfer's pipe grows to 1 MiB, so that one splice moves what a
 * fast sender has queued (the kernel's default of 64 KiB costs a fifth of
 * the throughput: make bench); a connection that has moved less keeps the
 * default, so a box's many small connections stay within the user's pipe
 * budget (pipe-user-pages-soft). */
#define RELAY_PIPE_SIZE (1 << 20)
#define RELAY_CHUNK     (1 << 20)
#define RELAY_BULK      (1 << 20)
/* How often a blocked direction wakes to see whether the pair went idle. */
#define RELAY_WAKE_SECONDS 15

struct pair {
	atomic_llong last; /* when either direction last moved a byte (monotonic s) */
	long idle_seconds;
};

struct direction {
	int from, to;
	struct pair *pair;
	long long limit; /* bytes to move at most, then stop (-1: to the end) */
	unsigned long long moved;
	int error; /* errno of a failure, or 0 */
};

static long long now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec;
}

/* After a wake-up with nothing moved: whether the whole pair is idle. */
static bool idle(const struct direction *d)
{
	return d->pair->idle_seconds > 0 &&
	       now_seconds() - atomic_load(&d->pair->last) >= d->pair->idle_seconds;
}

/* One direction, with blocking splices: no poll between them, so a bulk
 * transfer costs two system calls a pipeful. */
static void *pump(void *arg)
{
	struct direction *d = arg;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		d->error = errno;
		return NULL;
	}
	while (!d->error && d->limit != 0) {
		size_t want =
		        d->limit > 0 && d->limit < RELAY_CHUNK ? (size_t)d->limit : RELAY_CHUNK;
		ssize_t n = splice(d->from, NULL, p[1], NULL, want, SPLICE_F_MOVE);
		if (n < 0 &&
		    (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && !idle(d))))
			continue;
		if (n <= 0) {
			if (n < 0)
				d->error =
				        errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
			break;
		}
		atomic_store(&d->pair->last, now_seconds());
		if (d->limit > 0)
			d->limit -= n;
		if (d->moved < RELAY_BULK && d->moved + (unsigned long long)n >= RELAY_BULK)
			(void)fcntl(p[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
		size_t queued = (size_t)n;
		while (queued > 0 && !d->error) {
			ssize_t w = splice(p[0], NULL, d->to, NULL, queued, SPLICE_F_MOVE);
			if (w < 0 && (errno == EINTR ||
			              ((errno == EAGAIN || errno == EWOULDBLOCK) && !idle(d))))
				continue;
			if (w <= 0) {
				d->error = w == 0                                    ? EPIPE
				           : errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT
				                                                     : errno;
				break;
			}
			queued -= (size_t)w;
			d->moved += (unsigned long long)w;
			atomic_store(&d->pair->last, now_seconds());
		}
	}
	close(p[0]);
	close(p[1]);
	if (d->error) {
		/* the other direction must not wait on a broken or idle pair */
		shutdown(d->from, SHUT_RDWR);
		shutdown(d->to, SHUT_RDWR);
	} else if (d->limit < 0) {
		shutdown(d->to, SHUT_WR); /* its end, passed on */
	}
	return NULL;
}

int relay_splice(int a, int b, long idle_seconds, enum relay_mode mode, long long up_bytes,
                 struct relay_counts *counts)
{
	struct pair pair = { .idle_seconds = idle_seconds };
	atomic_store(&pair.last, now_seconds());
	if (idle_seconds > 0) {
		/* blocked splices wake now and then to look at the pair's idleness */
		struct timeval wake = { idle_seconds < RELAY_WAKE_SECONDS ? idle_seconds
			                                                  : RELAY_WAKE_SECONDS,
			                0 };
		int fds[2] = { a, b };
		for (int i = 0; i < 2; i++) {
			setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof(wake));
			setsockopt(fds[i], SOL_SOCKET, SO_SNDTIMEO, &wake, sizeof(wake));
		}
	}
	struct direction up = { .from = a, .to = b, .pair = &pair, .limit = -1 },
	                 down = { .from = b, .to = a, .pair = &pair, .limit = -1 };
	if (mode == RELAY_UP_BYTES) {
		up.limit = up_bytes;
		pump(&up);
	} else if (mode == RELAY_DOWN) {
		pump(&down);
	} else {
		pthread_t thread;
		bool threaded = pthread_create(&thread, NULL, pump, &down) == 0;
		pump(&up);
		if (threaded)
			pthread_join(thread, NULL);
		else
			pump(&down);
	}
	if (counts) {
		counts->a_to_b = up.moved;
		counts->b_to_a = down.moved;
	}
	int e = up.error ? up.error : down.error;
	errno = e;
	return e ? -1 : 0;
}
