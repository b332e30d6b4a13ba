#define _GNU_SOURCE
#include "podman.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strv.h"

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
