/* build: the local image built from a project's containerfile, tagged by a
 * hash of what goes into it, so it is rebuilt only when that changes. */
#ifndef GEMINI_BOX_BUILD_H
#define GEMINI_BOX_BUILD_H

#include "error.h"

#define BUILD_IMAGE_REPO "localhost/gemini-box-build"
/* Files of a build context hashed at most; a larger context is an error. */
#define BUILD_CONTEXT_MAX_FILES 10000

/* The tag for building containerfile (its directory is the build context)
 * on base_image: BUILD_IMAGE_REPO:<12 hex of SHA-256 over the base image's
 * name and every file's path, mode and content in the context>. */
int build_tag(const char *containerfile, const char *base_image, char **tag, struct gb_error *err);

/* The whole SHA-256 of the containerfile and its build context (paths, modes,
 * contents), as a user's approval pins it. */
int build_context_digest(const char *containerfile, char **digest, struct gb_error *err);

#endif
