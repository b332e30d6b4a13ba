/* egress-proxy: the host side of the "allowlist" network mode (egress.h).
 *
 * One per running box, started by gemini-box itself as
 * `gemini-box --box-egress-proxy STATE_DIR` (never typed by a person): it
 * holds STATE_DIR/egress.lock (a second one exits at once), listens on
 * STATE_DIR/egress/proxy.sock, handles each connection in a child process,
 * rereads STATE_DIR/egress.allow for each, appends each decision to
 * STATE_DIR/egress.log, and exits once the box's init has let go of the
 * box's lock (the box stopped). */
#ifndef GEMINI_BOX_EGRESS_PROXY_H
#define GEMINI_BOX_EGRESS_PROXY_H

#include <stdbool.h>

/* The option that runs the proxy; main.c looks for it before anything else. */
#define EGRESS_PROXY_OPTION "--box-egress-proxy"

/* Runs the proxy for state (a private state directory of the caller's);
 * returns the process's exit status. */
int egress_proxy_main(const char *state);

/* Whether this kernel lets the proxy's socket refuse descriptors
 * (SO_PASSRIGHTS, Linux 6.16), from any sender but the box's init. */
bool egress_rights_refusable(void);

/* Whether a proxy holds state's egress lock now. */
bool egress_proxy_running(const char *state);

#endif
