#define _GNU_SOURCE
#include "build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "quote.h"
#include "strv.h"

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the context's paths, relative to root, sorted so the hash is stable. */
static int collect(const char *root, const char *rel, struct strv *paths, struct gb_error *err)
{
	char *dir_path = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	DIR *d = opendir(dir_path);
	if (!d) {
		gb_fail_path(err, EXIT_BOX_CONFIG, "cannot read the build context", dir_path,
		             strerror(errno));
		free(dir_path);
		return -1;
	}
	struct strv names = STRV_INIT;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			strv_push(&names, e->d_name);
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), compare_names);
	int rc = 0;
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		char *child = *rel ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
		char *full = xasprintf("%s/%s", root, child);
		struct stat st;
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = collect(root, child, paths, err);
		} else {
			strv_push(paths, child);
			if (paths->n > BUILD_CONTEXT_MAX_FILES) {
				char *q = shell_quote(root);
				rc = gb_fail(
				        err, EXIT_BOX_CONFIG,
				        "the build context %s holds more than %d files; give the "
				        "containerfile a directory of its own",
				        q, BUILD_CONTEXT_MAX_FILES);
				free(q);
			}
		}
		free(full);
		free(child);
	}
	strv_clear(&names);
	free(dir_path);
	return rc;
}

static int hash_file(struct hash *h, const char *root, const char *rel, struct gb_error *err)
{
	char *full = xasprintf("%s/%s", root, rel);
	struct stat st;
	int rc = 0;
	hash_add_str(h, rel);
	if (lstat(full, &st) < 0) {
		rc = -1;
	} else if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(full, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		hash_add_str(h, "link");
		hash_add_str(h, target);
	} else if (S_ISREG(st.st_mode)) {
		char mode[16];
		snprintf(mode, sizeof(mode), "%o", (unsigned)(st.st_mode & 07777));
		hash_add_str(h, mode);
		int fd = open(full, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			rc = -1;
		} else {
			char buf[65536];
			ssize_t n;
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				hash_add(h, buf, (size_t)n);
			if (n < 0)
				rc = -1;
			close(fd);
		}
	}
	if (rc < 0) {
		char *q = shell_quote(full);
		gb_fail(err, EXIT_BOX_CONFIG, "cannot read %s for the image build: %s", q,
		        strerror(errno));
		free(q);
	}
	free(full);
	return rc;
}

/* Hashes the containerfile's name and its context into h. */
static int hash_context(struct hash *h, const char *containerfile, struct gb_error *err)
{
	char *root = xstrdup(containerfile);
	char *slash = strrchr(root, '/');
	if (slash)
		*(slash == root ? slash + 1 : slash) = '\0';
	struct strv paths = STRV_INIT;
	int rc = collect(root, "", &paths, err);
	if (rc == 0)
		hash_add_str(h, containerfile + strlen(root));
	for (size_t i = 0; i < paths.n && rc == 0; i++)
		rc = hash_file(h, root, paths.v[i], err);
	strv_clear(&paths);
	free(root);
	return rc;
}

int build_tag(const char *containerfile, const char *base_image, char **tag, struct gb_error *err)
{
	struct hash h;
	hash_begin(&h);
	hash_add_str(&h, base_image);
	int rc = hash_context(&h, containerfile, err);
	char hex[HASH_ID_HEX + 1];
	hash_end_id(&h, hex);
	if (rc == 0)
		*tag = xasprintf("%s:%s", BUILD_IMAGE_REPO, hex);
	return rc;
}

int build_context_digest(const char *containerfile, char **digest, struct gb_error *err)
{
	struct hash h;
	hash_begin(&h);
	int rc = hash_context(&h, containerfile, err);
	char hex[HASH_FULL_HEX + 1];
	hash_end_full(&h, hex);
	if (rc == 0)
		*digest = xstrdup(hex);
	return rc;
}
