#include "doctor.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void check_print(FILE *out, enum check_level level, const char *what, const char *fix)
{
	static const char *const words[] = { "OK  ", "WARN", "FAIL" };
	fprintf(out, "%s  %s%s%s\n", words[level], what, fix ? "; " : "", fix ? fix : "");
}

int subid_has_range(const char *text, const char *name, unsigned long uid)
{
	char uid_text[32];
	snprintf(uid_text, sizeof(uid_text), "%lu", uid);
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *colon = memchr(line, ':', len);
		if (colon) {
			size_t who = (size_t)(colon - line);
			const char *count = memchr(colon + 1, ':', len - who - 1);
			bool match = (strlen(name) == who && strncmp(line, name, who) == 0) ||
			             (strlen(uid_text) == who && strncmp(line, uid_text, who) == 0);
			if (match && count && strtoul(count + 1, NULL, 10) > 0)
				return 1;
		}
		line = end ? end + 1 : NULL;
	}
	return 0;
}
