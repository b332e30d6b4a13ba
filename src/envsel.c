#include "envsel.h"

#include <stdlib.h>
#include <string.h>

static const char *const exact_names[] = {
	"TERM",
	"COLORTERM",
	"LANG",
	"TERM_PROGRAM",
	"GEMINI_SANDBOX",
	/* auth and model */
	"GEMINI_API_KEY",
	"GOOGLE_API_KEY",
	"GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_GENAI_USE_GCA",
	"GOOGLE_CLOUD_PROJECT",
	"GOOGLE_CLOUD_LOCATION",
	"GOOGLE_GEMINI_BASE_URL",
	"GOOGLE_VERTEX_BASE_URL",
	"GEMINI_MODEL",
	"GEMINI_CLI_TRUST_WORKSPACE",
};

static const char *const prefixes[] = { "LC_", "GEMINI_CLI_IDE_" };

bool env_name_valid(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

bool env_name_forwarded(const char *name)
{
	if (!env_name_valid(name))
		return false;
	for (size_t i = 0; i < sizeof(exact_names) / sizeof(*exact_names); i++)
		if (strcmp(name, exact_names[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n) == 0 && name[n] != '\0')
			return true;
	}
	return false;
}

void env_forward_names(char *const *envp, struct strv *names)
{
	size_t first = names->n;
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		char *name = xmalloc((size_t)(eq - *e) + 1);
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		if (env_name_forwarded(name))
			strv_push(names, name);
		free(name);
	}
	/* environ may hold a name twice; podman needs it once. */
	strv_sort_unique(names, first);
}

const char *env_lookup(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

bool env_is_true(char *const *envp, const char *name)
{
	const char *value = env_lookup(envp, name);
	return value && strcmp(value, "true") == 0;
}

bool utf8_valid(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		unsigned char c = *s;
		size_t len;
		unsigned cp;
		if (c < 0x80) {
			s++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false; /* a continuation byte, or 0xc0, 0xc1, 0xf5-0xff */
		}
		for (size_t i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += len;
	}
	return true;
}
