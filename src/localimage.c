#include "localimage.h"

#include <string.h>

#include "hash.h"

/* The recipe, in one place: the tag covers all of it. */
static const char *const packages =
        "nodejs,npm,ca-certificates,git,ripgrep,python3,curl,less,procps";
/* mmdebstrap runs each hook on the host, with the root file system's path
 * as $1. The image trusts what the host trusts: where a network reaches the
 * registries through a TLS proxy, its certificate authority (Debian keeps a
 * local one in /usr/local/share/ca-certificates) is the image's too, and node,
 * which has its own list, is told to read the system's. */
static const char ca_hook[] =
        "if [ -d /usr/local/share/ca-certificates ]; then "
        "cp -R /usr/local/share/ca-certificates/. \"$1/usr/local/share/ca-certificates/\" && "
        "chroot \"$1\" update-ca-certificates >/dev/null; fi";
#define SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"
static const char npm_hook[] = "NODE_EXTRA_CA_CERTS=" SYSTEM_CA_FILE " chroot \"$1\" npm install "
                               "--global --no-fund --no-audit --prefix /usr/local "
                               "\"@google/gemini-cli@$GEMINI_CLI_VERSION\"";
static const char user_hook[] =
        "echo 'node:x:1000:1000::/home/node:/bin/sh' >>\"$1/etc/passwd\" && "
        "echo 'node:x:1000:' >>\"$1/etc/group\" && mkdir -p \"$1/home/node\" && "
        "chown 1000:1000 \"$1/home/node\"";
static const char clean_hook[] = "rm -rf \"$1\"/var/cache/apt/archives/*.deb "
                                 "\"$1\"/var/lib/apt/lists/* \"$1/root/.npm\"";
static const char *const import_changes[] = {
	"USER node",
	"WORKDIR /home/node",
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"ENV LANG=C.UTF-8",
	"ENV NODE_EXTRA_CA_CERTS=" SYSTEM_CA_FILE,
	"ENTRYPOINT [\"/usr/local/bin/gemini\"]",
};

bool local_image_selected(const char *image_setting)
{
	return image_setting && strcmp(image_setting, LOCAL_IMAGE_SETTING) == 0;
}

char *local_image_tag(const char *version)
{
	struct hash h;
	char id[HASH_ID_HEX + 1];
	hash_begin(&h);
	hash_add_str(&h, LOCAL_IMAGE_SUITE);
	hash_add_str(&h, packages);
	hash_add_str(&h, ca_hook);
	hash_add_str(&h, npm_hook);
	hash_add_str(&h, user_hook);
	hash_add_str(&h, clean_hook);
	for (size_t i = 0; i < sizeof(import_changes) / sizeof(*import_changes); i++)
		hash_add_str(&h, import_changes[i]);
	hash_end_id(&h, id);
	return xasprintf("%s:%s-%s", LOCAL_IMAGE_REPO, version, id);
}

void local_image_rootfs_argv(const char *mmdebstrap, const char *version, const char *tarball,
                             struct strv *argv)
{
	strv_push(argv, mmdebstrap);
	strv_push(argv, "--mode=unshare");
	strv_push(argv, "--variant=apt");
	strv_pushf(argv, "--include=%s", packages);
	/* Safe to quote into the hook: a version is letters, digits and ".+-_"
	 * (settings.c's check). */
	strv_pushf(argv, "--customize-hook=%s", ca_hook);
	strv_pushf(argv, "--customize-hook=GEMINI_CLI_VERSION='%s' %s", version, npm_hook);
	strv_pushf(argv, "--customize-hook=%s", user_hook);
	strv_pushf(argv, "--customize-hook=%s", clean_hook);
	strv_push(argv, LOCAL_IMAGE_SUITE);
	strv_push(argv, tarball);
}

void local_image_import_argv(const char *podman, const char *tarball, const char *tag,
                             struct strv *argv)
{
	strv_push(argv, podman);
	strv_push(argv, "import");
	for (size_t i = 0; i < sizeof(import_changes) / sizeof(*import_changes); i++) {
		strv_push(argv, "--change");
		strv_push(argv, import_changes[i]);
	}
	strv_push(argv, tarball);
	strv_push(argv, tag);
}
