/* error: exit statuses and errors as values.
 *
 * Functions that can fail take a `struct gb_error *` and return -1 after
 * filling it; only main prints it, once, as "gemini-box: MESSAGE". */
#ifndef GEMINI_BOX_ERROR_H
#define GEMINI_BOX_ERROR_H

/* gemini-box's own exit statuses (documented in gemini-box.1). Any other
 * status is gemini's own, or podman exec's 125-127, passed through. */
enum box_exit {
	EXIT_BOX_OK = 0,
	EXIT_BOX_DECLINED = 1,  /* a removal was not confirmed */
	EXIT_BOX_USAGE = 64,    /* bad gemini-box option */
	EXIT_BOX_NODIR = 66,    /* box directory missing or unreadable */
	EXIT_BOX_NOPODMAN = 69, /* podman not found */
	EXIT_BOX_INTERNAL = 70, /* out of memory, fork failed, ... */
	EXIT_BOX_PODMAN = 71,   /* a podman step before the final exec failed */
	EXIT_BOX_IMAGE = 72,    /* image absent and pulling it failed */
	EXIT_BOX_CONFIG = 78,   /* a settings file or variable is wrong */
};

struct gb_error {
	int status; /* an enum box_exit value; 0 while no error is set */
	char *msg;  /* heap-allocated, without the "gemini-box: " prefix */
	int errnum; /* the errno behind it, or 0 */
};

#define GB_ERROR_INIT                                                                              \
	{                                                                                          \
		0, NULL, 0                                                                         \
	}

/* Sets (or replaces) the error and returns -1, so callers can `return gb_fail(...)`. */
int gb_fail(struct gb_error *err, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* "WHAT PATH: WHY" with PATH shell-quoted, so that a path holding a newline
 * still makes one line. Returns -1. */
int gb_fail_path(struct gb_error *err, int status, const char *what, const char *path,
                 const char *why);
/* "MESSAGE: strerror(errnum)", keeping errnum in the error. Returns -1. */
int gb_fail_errno(struct gb_error *err, int status, int errnum, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Puts context before the message ("CONTEXT: MESSAGE"), keeping the status
 * and errno, as each layer adds what it knows. Returns -1. */
int gb_error_wrap(struct gb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb_error_clear(struct gb_error *err);

/* The printing layer: the only writers of gemini-box's own lines on stderr.
 * An error is printed once, by main; a warning is one line that a run goes
 * on after. */
void gb_error_print(const struct gb_error *err);
void gb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
