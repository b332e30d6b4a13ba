#define _GNU_SOURCE
/* --box-egress: what this directory's "allowlist" box was refused lately
 * (and what was listed but could not be reached),
 * read from the log its proxy keeps in the box's state directory (which the
 * box cannot see, so the agent cannot edit it). */
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress.h"
#include "quote.h"
#include "strv.h"

/* The denials shown: the latest, which a blocked install just made. */
#define DENIALS_SHOWN 20

int cmd_egress(struct context *ctx, struct gb_error *err)
{
	char *path = xasprintf("%s/" EGRESS_LOG_FILE, ctx->state);
	bool allowlist = strcmp(ctx->settings.network.value, "allowlist") == 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	FILE *f = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		f = fdopen(fd, "r");
	if (!f) {
		int e = fd < 0 ? errno : EPERM;
		if (fd >= 0)
			close(fd);
		if (e != ENOENT) {
			gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot read", path, strerror(e));
			free(path);
			return -1;
		}
		if (allowlist)
			printf("no connection logged yet for box %s (%s)\n", ctx->name, path);
		else
			printf("box %s has network \"%s\": it reaches %s, and nothing is logged; "
			       "\"network\": \"allowlist\" limits it to listed hosts\n",
			       ctx->name, ctx->settings.network.value,
			       strcmp(ctx->settings.network.value, "none") == 0 ? "nothing"
			                                                        : "every host");
		free(path);
		return 0;
	}
	struct egress_denial ring[DENIALS_SHOWN];
	size_t seen = 0;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		struct egress_denial d;
		if (!egress_log_denial(line, &d))
			continue;
		struct egress_denial *slot = &ring[seen % DENIALS_SHOWN];
		if (seen >= DENIALS_SHOWN)
			egress_denial_clear(slot);
		*slot = d;
		seen++;
	}
	free(line);
	fclose(f);
	size_t shown = seen < DENIALS_SHOWN ? seen : DENIALS_SHOWN;
	if (shown == 0)
		printf("no connection refused or failed for box %s (log: %s)\n", ctx->name, path);
	for (size_t i = seen - shown; i < seen; i++) {
		struct egress_denial *d = &ring[i % DENIALS_SHOWN];
		/* the log holds what a box asked for: nothing in it may drive the
		 * terminal, whatever the proxy let into it */
		const char *fields[] = { d->time, d->verdict, d->method, d->target, d->reason };
		const int widths[] = { 0, 5, 7, 0, 0 };
		for (size_t k = 0; k < 5; k++) {
			if (k)
				fputs("  ", stdout);
			print_untrusted(stdout, fields[k]);
			for (int pad = (int)strlen(fields[k]); pad < widths[k]; pad++)
				putchar(' ');
		}
		putchar('\n');
		egress_denial_clear(d);
	}
	if (shown > 0)
		printf("%zu refused or failed in all (log: %s); to allow a host, add it to "
		       "\"egress\" in "
		       "~/.config/gemini-box/config.json\n",
		       seen, path);
	free(path);
	return 0;
}
