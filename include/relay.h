/* relay: moves bytes both ways between two connected sockets until both
 * directions end, through pipes with splice(2), so the bytes never pass
 * through user space. Used by the box's init (the box's loopback proxy port
 * to the host's proxy socket) and by the host's egress proxy (the box's
 * connection to the allowed server). Built into both, so it needs libc only. */
#ifndef GEMINI_BOX_RELAY_H
#define GEMINI_BOX_RELAY_H

struct relay_counts {
	unsigned long long a_to_b, b_to_a;
};

/* Relays between a and b until each side has ended its direction (EOF read,
 * then shutdown(SHUT_WR) passed on) or one fails. Returns 0 when both ended
 * cleanly, -1 with errno on a failure; the counts hold what moved either way. */
int relay_splice(int a, int b, struct relay_counts *counts);

#endif
