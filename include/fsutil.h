/* fsutil: small file system helpers the modules share. */
#ifndef GEMINI_BOX_FSUTIL_H
#define GEMINI_BOX_FSUTIL_H

#include <sys/types.h>

/* mkdir -p: path and its missing parents, each made with mode. On failure
 * errno is mkdir's. */
int mkdir_p(const char *path, mode_t mode);

#endif
