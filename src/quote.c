#include "quote.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "envsel.h"
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

/* Writes text that came with a repository so that it cannot drive the
 * terminal: control characters (escape sequences above all), C1 controls
 * and bytes that are not UTF-8 are shown as \xNN; newlines and tabs stay. */
void print_untrusted(FILE *out, const char *text)
{
	const unsigned char *c = (const unsigned char *)text;
	while (*c) {
		size_t len = *c < 0x80                 ? 1
		             : *c >= 0xc2 && *c < 0xe0 ? 2
		             : *c >= 0xe0 && *c < 0xf0 ? 3
		             : *c >= 0xf0 && *c < 0xf5 ? 4
		                                       : 0;
		bool ok = len > 0;
		for (size_t k = 1; ok && k < len; k++)
			ok = (c[k] & 0xc0) == 0x80;
		if (ok && len == 1 && ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f))
			ok = false;
		if (ok && len == 2 && *c == 0xc2 && c[1] < 0xa0)
			ok = false; /* C1 controls, U+0080 to U+009F */
		if (ok && len > 1) {
			char one[5] = { 0 };
			memcpy(one, c, len);
			ok = utf8_valid(one);
		}
		if (!ok) {
			fprintf(out, "\\x%02x", *c);
			c++;
			continue;
		}
		fwrite(c, 1, len, out);
		c += len;
	}
}
