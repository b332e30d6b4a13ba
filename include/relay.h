/* relay: moves bytes both ways between two connected sockets until both
 * directions end, through pipes with splice(2), so the bytes never pass
 * through user space: the host's egress proxy relays a box's connection
 * (handed over by the box's init) and the allowed server's this way. */
#ifndef GEMINI_BOX_RELAY_H
#define GEMINI_BOX_RELAY_H

enum relay_mode {
	RELAY_BOTH,     /* both ways, each to its end */
	RELAY_UP_BYTES, /* a to b only, up_bytes of it, leaving b open for more */
	RELAY_DOWN,     /* b to a only, to b's end (a plain-HTTP answer) */
};

struct relay_counts {
	unsigned long long a_to_b, b_to_a;
};

/* Relays between a and b (blocking sockets), one thread a direction (in
 * RELAY_BOTH), until
 * each side has ended its direction (EOF read, then shutdown(SHUT_WR) passed
 * on), one fails, or, when idle_seconds > 0, nothing moved either way for
 * that long (ETIMEDOUT): a connection no one uses does not hold a process
 * for ever. Returns 0 when both ended cleanly, -1 with errno otherwise; the
 * counts hold what moved either way. The caller ignores SIGPIPE (a peer
 * gone mid-write is an error, not a death). */
int relay_splice(int a, int b, long idle_seconds, enum relay_mode mode, long long up_bytes,
                 struct relay_counts *counts);

#endif
