/* cleanup: variables that free or close themselves when they go out of
 * scope (GCC and clang's cleanup attribute), in the manner of bubblewrap's
 * utils.h, so that an early return cannot leak and free ladders go away.
 * steal_pointer hands a value on and leaves NULL behind. */
#ifndef GEMINI_BOX_CLEANUP_H
#define GEMINI_BOX_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(const int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_fd   __attribute__((cleanup(cleanup_closep)))

static inline void *steal_pointer_impl(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}

/* The pointer *pp, with *pp set to NULL; type-checked by the macro. */
#define steal_pointer(pp) ((__typeof__(*(pp)))steal_pointer_impl(pp))

#endif
