#define _GNU_SOURCE
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"
#include "strv.h"

__attribute__((format(printf, 1, 0))) static char *vformat(const char *fmt, va_list ap)
{
	char *msg;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = xstrdup("out of memory while reporting an error");
	return msg;
}

int gb_fail(struct gb_error *err, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = vformat(fmt, ap);
	va_end(ap);
	free(err->msg);
	err->msg = msg;
	err->status = status;
	err->errnum = 0;
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

int gb_fail_errno(struct gb_error *err, int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *what = vformat(fmt, ap);
	va_end(ap);
	gb_fail(err, status, "%s: %s", what, strerror(errnum));
	err->errnum = errnum;
	free(what);
	return -1;
}

int gb_error_wrap(struct gb_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *context = vformat(fmt, ap);
	va_end(ap);
	char *msg = xasprintf("%s: %s", context, err->msg ? err->msg : "unknown error");
	free(context);
	free(err->msg);
	err->msg = msg;
	return -1;
}

void gb_error_clear(struct gb_error *err)
{
	free(err->msg);
	err->msg = NULL;
	err->status = 0;
	err->errnum = 0;
}

void gb_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = vformat(fmt, ap);
	va_end(ap);
	fprintf(stderr, "gemini-box: %s\n", msg);
	free(msg);
}

void gb_error_print(const struct gb_error *err)
{
	fprintf(stderr, "gemini-box: %s\n", err->msg ? err->msg : "unknown error");
}
