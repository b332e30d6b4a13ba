/* egress: the "allowlist" network mode's policy, pure.
 *
 * A box in that mode has no network but its own loopback. Its init listens
 * on 127.0.0.1:EGRESS_BOX_PORT and hands each connection over, as a
 * descriptor, to a Unix socket of the host's egress proxy (egress-proxy.c),
 * which the box sees in a read-only directory; each run points HTTPS_PROXY and HTTP_PROXY there.
 * The proxy lets through CONNECT (TLS untouched) and plain-HTTP requests to the hosts of the allow
 * file, resolves names itself, refuses the host's own and private addresses unless listed as
 * addresses, and logs every decision in the box's state directory, which the box cannot see. */
#ifndef GEMINI_BOX_EGRESS_H
#define GEMINI_BOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "settings.h"

/* Inside the box: the proxy's address, and where its socket appears. */
#define EGRESS_BOX_PORT 3128
#define EGRESS_BOX_DIR  "/run/gemini-box/egress"
#define EGRESS_SOCKET   "proxy.sock"
/* In the box's state directory (host only but for the socket's directory). */
#define EGRESS_DIR        "egress"
#define EGRESS_ALLOW_FILE "egress.allow"
#define EGRESS_LOG_FILE   "egress.log"
#define EGRESS_LOCK_FILE  "egress.lock"

/* What gemini needs, with where each host comes from (README, man page). */
struct egress_default {
	const char *rule;
	const char *why;
};
extern const struct egress_default egress_defaults[];
extern const size_t egress_n_defaults;

/* What is wrong with an "egress" entry, or NULL: "host", "*.domain",
 * "1.2.3.4", "[::1]", each with an optional ":port". */
const char *egress_rule_problem(const char *rule);

struct egress_rule {
	char *host;    /* lower case; for a wildcard, the domain after "*." */
	bool wildcard; /* "*.domain": any name below domain, not domain itself */
	bool address;  /* an IP address literal: may be a private or loopback one */
	unsigned port; /* 0: any */
};

struct egress_rules {
	struct egress_rule *v;
	size_t n;
};

/* The allow file's text (one rule a line) as rules; invalid lines are skipped. */
void egress_rules_parse(const char *text, struct egress_rules *rules);
void egress_rules_clear(struct egress_rules *rules);

/* The allow file's text: the defaults, then the settings' "egress". */
char *egress_allow_text(const struct item_list *extra);

/* The rule that lets host:port through, or NULL. host is as requested
 * (a name or an address literal, IPv6 without brackets). */
const struct egress_rule *egress_match(const struct egress_rules *rules, const char *host,
                                       unsigned port);

/* Whether an address is the host's own, a private network's or otherwise not
 * the internet: loopback, link-local, private, shared (CGNAT), multicast,
 * reserved and unspecified ranges, IPv4-mapped IPv6 included. */
bool egress_address_internal(const struct sockaddr *sa);

/* One request head as the proxy reads it. */
struct egress_request {
	char method[16];
	char host[256]; /* a name, or an address (IPv6 without brackets) */
	unsigned port;
	bool connect;     /* CONNECT host:port; else an absolute http:// URI */
	size_t target_at; /* plain HTTP: where the origin-form path starts in the head */
	size_t target_end;
	size_t line_end; /* where the request line's "\r\n" starts */
	size_t head_len; /* the head, through its blank line */
	long long body;  /* plain HTTP: the bytes of body after the head (Content-Length) */
};

/* Parses the head at the start of buf. Returns 1 with *req filled when the
 * head is complete and well-formed, 0 when more bytes are needed, -1 with
 * *why when it is refused: a line not ended by CRLF, a bare CR, LF or NUL,
 * and for plain HTTP a body without one Content-Length, among others. */
int egress_parse_request(const char *buf, size_t len, struct egress_request *req, const char **why);

/* A plain-HTTP head as the server gets it: origin-form request line, the
 * Proxy-* fields dropped. */
char *egress_origin_head(const char *buf, const struct egress_request *req);

/* The verdicts of the log: let through; refused by the list or the address
 * check; listed, but the server could not be reached. */
#define EGRESS_ALLOW "allow"
#define EGRESS_DENY  "deny"
#define EGRESS_ERROR "error"

/* One line of the log: time, verdict, method, host:port, address, bytes
 * up and down, reason; tab-separated, with a newline. */
char *egress_log_line(long long unix_time, const char *verdict, const char *method,
                      const char *host, unsigned port, const char *address, unsigned long long up,
                      unsigned long long down, const char *reason);

/* A connection that did not go through, read back from the log. */
struct egress_denial {
	char *time, *verdict, *method, *target, *reason;
};
/* Whether line is a well-formed "deny" or "error" line; fills *d (malloc'd). */
bool egress_log_denial(const char *line, struct egress_denial *d);
void egress_denial_clear(struct egress_denial *d);

#endif
