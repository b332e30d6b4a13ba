/* Unit tests: the splice relay, on real socket pairs and real threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "relay.h"

struct relay_run {
	int a, b;
	long idle;
	enum relay_mode mode;
	long long up_bytes;
	int rc, err;
	struct relay_counts counts;
};

static void *run(void *arg)
{
	struct relay_run *r = arg;
	r->rc = relay_splice(r->a, r->b, r->idle, r->mode, r->up_bytes, &r->counts);
	r->err = errno;
	return NULL;
}

/* client <-> [a relay b] <-> server, as the proxy sits between a box's
 * connection and the server's. */
static void pairs(int client_side[2], int server_side[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, client_side), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, server_side), 0);
}

static void read_exactly(int fd, char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
}

struct writer {
	int fd;
	const char *data;
	size_t n;
	int rc;
};

static void *write_all_of(void *arg)
{
	struct writer *w = arg;
	size_t done = 0;
	while (done < w->n) {
		ssize_t n = write(w->fd, w->data + done, w->n - done);
		if (n <= 0)
			return NULL;
		done += (size_t)n;
	}
	w->rc = 0;
	return NULL;
}

/* Bytes both ways, a large transfer intact, and each side's end passed on. */
static void test_both_ways_and_the_ends(void **state)
{
	(void)state;
	int c[2], s[2];
	pairs(c, s);
	struct relay_run r = { .a = c[1], .b = s[0], .idle = 0 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, run, &r), 0);
	assert_int_equal(write(c[0], "hello", 5), 5);
	char buf[16];
	read_exactly(s[1], buf, 5);
	assert_memory_equal(buf, "hello", 5);
	size_t big = 4u << 20;
	char *data = malloc(big), *back = malloc(big);
	for (size_t i = 0; i < big; i++)
		data[i] = (char)(i * 7 + i / 4096);
	struct writer w = { s[1], data, big, -1 };
	pthread_t wt;
	assert_int_equal(pthread_create(&wt, NULL, write_all_of, &w), 0);
	read_exactly(c[0], back, big);
	assert_memory_equal(back, data, big);
	pthread_join(wt, NULL);
	assert_int_equal(w.rc, 0);
	/* the client's end reaches the server; the server's, the client */
	shutdown(c[0], SHUT_WR);
	assert_int_equal(read(s[1], buf, sizeof(buf)), 0);
	shutdown(s[1], SHUT_WR);
	assert_int_equal(read(c[0], buf, sizeof(buf)), 0);
	pthread_join(t, NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.counts.a_to_b, 5);
	assert_int_equal(r.counts.b_to_a, big);
	free(data);
	free(back);
	for (int i = 0; i < 2; i++) {
		close(c[i]);
		close(s[i]);
	}
}

/* A pair that moves nothing is closed after its idle time, both ways. */
static void test_idle_pair_is_closed(void **state)
{
	(void)state;
	int c[2], s[2];
	pairs(c, s);
	struct relay_run r = { .a = c[1], .b = s[0], .idle = 1 };
	pthread_t t;
	time_t start = time(NULL);
	assert_int_equal(pthread_create(&t, NULL, run, &r), 0);
	pthread_join(t, NULL);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err, ETIMEDOUT);
	assert_true(time(NULL) - start <= 5);
	char buf[4];
	assert_int_equal(read(c[0], buf, sizeof(buf)), 0); /* the client sees the end */
	for (int i = 0; i < 2; i++) {
		close(c[i]);
		close(s[i]);
	}
}

/* One busy direction keeps the pair alive past the idle time. */
static void test_one_busy_direction_keeps_it(void **state)
{
	(void)state;
	int c[2], s[2];
	pairs(c, s);
	struct relay_run r = { .a = c[1], .b = s[0], .idle = 1 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, run, &r), 0);
	char buf[4];
	for (int i = 0; i < 6; i++) { /* 3 s of a byte every half second */
		assert_int_equal(write(s[1], "x", 1), 1);
		read_exactly(c[0], buf, 1);
		struct timespec half = { 0, 500000000L };
		nanosleep(&half, NULL);
	}
	shutdown(c[0], SHUT_WR);
	shutdown(s[1], SHUT_WR);
	pthread_join(t, NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.counts.b_to_a, 6);
	for (int i = 0; i < 2; i++) {
		close(c[i]);
		close(s[i]);
	}
}

/* Plain HTTP: exactly the body goes up, nothing after it; then only the
 * answer comes down, whatever else the client sends. */
static void test_one_way_modes(void **state)
{
	(void)state;
	int c[2], s[2];
	pairs(c, s);
	assert_int_equal(write(c[0], "BODY+NEXT REQUEST", 17), 17);
	struct relay_run r = { .a = c[1], .b = s[0], .mode = RELAY_UP_BYTES, .up_bytes = 4 };
	run(&r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.counts.a_to_b, 4);
	char buf[32];
	read_exactly(s[1], buf, 4);
	assert_memory_equal(buf, "BODY", 4);
	/* the answer, while the client's next request stays where it is */
	assert_int_equal(write(s[1], "ANSWER", 6), 6);
	shutdown(s[1], SHUT_WR);
	r = (struct relay_run){ .a = c[1], .b = s[0], .mode = RELAY_DOWN };
	run(&r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.counts.a_to_b, 0);
	assert_int_equal(r.counts.b_to_a, 6);
	read_exactly(c[0], buf, 6);
	assert_memory_equal(buf, "ANSWER", 6);
	assert_int_equal(read(c[0], buf, sizeof(buf)), 0); /* its end, passed on */
	/* nothing more reached the server */
	assert_int_equal(recv(s[1], buf, sizeof(buf), MSG_DONTWAIT), -1);
	for (int i = 0; i < 2; i++) {
		close(c[i]);
		close(s[i]);
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the proxy does (relay.h) */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_ways_and_the_ends),
		cmocka_unit_test(test_idle_pair_is_closed),
		cmocka_unit_test(test_one_busy_direction_keeps_it),
		cmocka_unit_test(test_one_way_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
