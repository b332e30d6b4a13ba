#define _GNU_SOURCE
#include "strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static void die_oom(void)
{
	/* Nothing can be reported more usefully than this, and nothing is half-done. */
	fputs("gemini-box: out of memory\n", stderr);
	exit(EXIT_BOX_INTERNAL);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die_oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die_oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		die_oom();
	return p;
}

__attribute__((format(printf, 1, 0))) static char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		die_oom();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

static void strv_take(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 16;
		sv->v = xrealloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void strv_push(struct strv *sv, const char *s)
{
	strv_take(sv, xstrdup(s));
}

void strv_pushf(struct strv *sv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strv_take(sv, xvasprintf(fmt, ap));
	va_end(ap);
}

void strv_pushv(struct strv *sv, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strv_push(sv, v[i]);
}

void strv_clear(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

char *strv_join(const struct strv *sv, const char *sep)
{
	size_t len = 1, seplen = strlen(sep);
	for (size_t i = 0; i < sv->n; i++)
		len += strlen(sv->v[i]) + seplen;
	char *out = xmalloc(len);
	char *o = out;
	for (size_t i = 0; i < sv->n; i++)
		o = stpcpy(i ? stpcpy(o, sep) : o, sv->v[i]);
	*o = '\0';
	return out;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort_unique(struct strv *sv, size_t from)
{
	if (sv->n <= from + 1)
		return;
	qsort(sv->v + from, sv->n - from, sizeof(char *), compare_strings);
	size_t out = from + 1;
	for (size_t i = from + 1; i < sv->n; i++) {
		if (strcmp(sv->v[i], sv->v[out - 1]) == 0)
			free(sv->v[i]);
		else
			sv->v[out++] = sv->v[i];
	}
	sv->n = out;
	sv->v[out] = NULL;
}
