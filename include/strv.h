/* strv: a growable, NULL-terminated array of owned strings, for building argv. */
#ifndef GEMINI_BOX_STRV_H
#define GEMINI_BOX_STRV_H

#include <stddef.h>

struct strv {
	char **v; /* always NULL-terminated once anything was pushed */
	size_t n;
	size_t cap;
};

#define STRV_INIT                                                                                  \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Appends a copy of s. Out of memory is fatal (exit 70), as in every helper here. */
void strv_push(struct strv *sv, const char *s);
void strv_pushf(struct strv *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strv_pushv(struct strv *sv, char *const *v, size_t n);
void strv_clear(struct strv *sv);
/* The strings joined by sep, malloc'd ("" for none). */
char *strv_join(const struct strv *sv, const char *sep);
/* Sorts the strings from index from on and drops repeats among them. */
void strv_sort_unique(struct strv *sv, size_t from);

/* Allocation helpers that never return NULL. */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
