#include "quote.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strv.h"

static bool bare_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_@%+=:,./-", c) != NULL;
}

char *shell_quote(const char *s)
{
	const unsigned char *p;
	bool bare = *s != '\0', control = false;
	for (p = (const unsigned char *)s; *p; p++) {
		if (!bare_safe(*p))
			bare = false;
		if (*p < 0x20 || *p == 0x7f)
			control = true;
	}
	if (bare)
		return xstrdup(s);

	/* Worst case: 4 bytes per input byte ("\xHH" or "'\''"), plus quotes. */
	size_t len = strlen(s);
	char *out = xmalloc(4 * len + 4);
	char *o = out;
	if (control) {
		*o++ = '$';
		*o++ = '\'';
		for (p = (const unsigned char *)s; *p; p++) {
			if (*p == '\n') {
				memcpy(o, "\\n", 2);
				o += 2;
			} else if (*p == '\t') {
				memcpy(o, "\\t", 2);
				o += 2;
			} else if (*p < 0x20 || *p == 0x7f) {
				o += sprintf(o, "\\x%02x", *p);
			} else if (*p == '\\' || *p == '\'') {
				*o++ = '\\';
				*o++ = (char)*p;
			} else {
				*o++ = (char)*p;
			}
		}
		*o++ = '\'';
	} else {
		*o++ = '\'';
		for (p = (const unsigned char *)s; *p; p++) {
			if (*p == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = (char)*p;
			}
		}
		*o++ = '\'';
	}
	*o = '\0';
	return out;
}
