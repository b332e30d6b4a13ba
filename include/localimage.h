/* localimage: gemini-box's own default image, made from distribution
 * packages alone (Debian's and the npm registry), for machines that reach no
 * container registry. Shaped like gemini-cli's official image: user node
 * (uid and gid 1000, home /home/node), gemini on PATH, git, ripgrep, python3,
 * curl, less and ca-certificates. mmdebstrap makes the root file system as
 * the user (rootless, --mode=unshare); podman import turns it into the image
 * LOCAL_IMAGE_REPO:VERSION-RECIPE, so a new recipe or release is a new image
 * and an existing one is never made twice. The setting "image": "local"
 * selects it. Pure: argv only. */
#ifndef GEMINI_BOX_LOCALIMAGE_H
#define GEMINI_BOX_LOCALIMAGE_H

#include <stdbool.h>

#include "strv.h"

#define LOCAL_IMAGE_REPO    "localhost/gemini-box-default"
#define LOCAL_IMAGE_SETTING "local" /* the "image" value that selects it */
/* Debian's release with a Node.js that gemini-cli takes (>= 20). */
#define LOCAL_IMAGE_SUITE "trixie"

/* Whether an image setting asks for the local image. */
bool local_image_selected(const char *image_setting);

/* LOCAL_IMAGE_REPO:<version>-<12 hex of the recipe>. */
char *local_image_tag(const char *version);

/* mmdebstrap making the root file system of gemini-cli version into tarball. */
void local_image_rootfs_argv(const char *mmdebstrap, const char *version, const char *tarball,
                             struct strv *argv);

/* podman import of tarball as tag, with the official image's user, working
 * directory and entry point. */
void local_image_import_argv(const char *podman, const char *tarball, const char *tag,
                             struct strv *argv);

#endif
