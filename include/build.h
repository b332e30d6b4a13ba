/* build: the local image built from a project's containerfile, tagged by a
 * hash of what goes into it, so it is rebuilt only when that changes. */
#ifndef GEMINI_BOX_BUILD_H
#define GEMINI_BOX_BUILD_H

#include "error.h"

#define BUILD_IMAGE_REPO "localhost/gemini-box-build"
/* Files of a build context hashed at most; a larger context is an error. */
#define BUILD_CONTEXT_MAX_FILES 10000

/* The whole SHA-256 of the containerfile's name and of every file that goes
 * into the build (its directory is the context; what its .containerignore or
 * .dockerignore leaves out does not count): paths, modes, contents. A user's
 * approval pins it, and the image's tag follows it. With cache (a private
 * file of the user's, or NULL), a context whose files' stat data (inode,
 * size, times, and the ctime no one can set back) is unchanged is not read
 * again: the warm path walks the context but hashes nothing. */
int build_context_digest(const char *containerfile, const char *cache, char **digest,
                         struct gb_error *err);

/* BUILD_IMAGE_REPO:<12 hex of SHA-256 over the base image's name and digest>. */
char *build_tag_for(const char *digest, const char *base_image);

/* build_tag_for the containerfile's digest, without a cache. */
int build_tag(const char *containerfile, const char *base_image, char **tag, struct gb_error *err);

#endif
