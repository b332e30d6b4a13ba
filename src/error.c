#define _GNU_SOURCE
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "quote.h"
#include "strv.h"

int gb_fail(struct gb_error *err, int status, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	int r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		msg = xstrdup("out of memory while reporting an error");
	free(err->msg);
	err->msg = msg;
	err->status = status;
	return -1;
}

int gb_fail_path(struct gb_error *err, int status, const char *what, const char *path,
                 const char *why)
{
	char *q = shell_quote(path);
	gb_fail(err, status, "%s %s: %s", what, q, why);
	free(q);
	return -1;
}

void gb_error_clear(struct gb_error *err)
{
	free(err->msg);
	err->msg = NULL;
	err->status = 0;
}

void gb_error_print(const struct gb_error *err)
{
	fprintf(stderr, "gemini-box: %s\n", err->msg ? err->msg : "unknown error");
}
