#define _GNU_SOURCE
#include "build.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "hash.h"
#include "quote.h"
#include "strv.h"

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The build's ignore file (podman's --ignorefile default), as patterns. */
struct ignore {
	struct strv patterns; /* "!" kept in front of exclusions' exceptions */
};

static void ignore_load(const char *root, struct ignore *ig)
{
	static const char *const names[] = { ".containerignore", ".dockerignore" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *path = xasprintf("%s/%s", root, names[i]);
		FILE *f = fopen(path, "re");
		free(path);
		if (!f)
			continue;
		char line[4096];
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\r\n")] = '\0';
			char *l = line;
			while (*l == ' ' || *l == '\t')
				l++;
			if (!*l || *l == '#')
				continue;
			bool negated = *l == '!';
			char *pat = l + negated;
			while (*pat == '/')
				pat++; /* rooted at the context either way */
			size_t n = strlen(pat);
			while (n > 1 && pat[n - 1] == '/')
				pat[--n] = '\0';
			strv_pushf(&ig->patterns, "%s%s", negated ? "!" : "", pat);
		}
		fclose(f);
		return; /* the first one found is the one podman reads */
	}
}

/* Whether pattern matches rel or one of its parent directories ("**" also
 * spans directories). */
static bool pattern_matches(const char *pattern, const char *rel)
{
	int flags = strstr(pattern, "**") ? 0 : FNM_PATHNAME;
	char *path = xstrdup(rel);
	bool match = false;
	for (char *end = NULL; !match;) {
		match = fnmatch(pattern, path, flags) == 0;
		end = strrchr(path, '/');
		if (!end)
			break;
		*end = '\0';
	}
	free(path);
	return match;
}

static bool ignored(const struct ignore *ig, const char *rel)
{
	bool out = false;
	for (size_t i = 0; i < ig->patterns.n; i++) {
		const char *p = ig->patterns.v[i];
		bool negated = *p == '!';
		if (pattern_matches(p + negated, rel))
			out = !negated;
	}
	return out;
}

/* Collects the paths of the context that go into the build, relative to
 * root, sorted so the hash is stable; the containerfile and the ignore file
 * are never left out. */
static int collect(const char *root, const char *rel, const struct ignore *ig,
                   const char *containerfile, struct strv *paths, struct gb_error *err)
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
		bool keep = !*rel && (strcmp(child, containerfile) == 0 ||
		                      strcmp(child, ".containerignore") == 0 ||
		                      strcmp(child, ".dockerignore") == 0);
		if (!keep && ignored(ig, child)) {
			free(child);
			continue;
		}
		char *full = xasprintf("%s/%s", root, child);
		struct stat st;
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = collect(root, child, ig, containerfile, paths, err);
		} else {
			strv_push(paths, child);
			if (paths->n > BUILD_CONTEXT_MAX_FILES) {
				char *q = shell_quote(root);
				rc = gb_fail(
				        err, EXIT_BOX_CONFIG,
				        "the build context %s holds more than %d files that its "
				        ".containerignore does not leave out; list what the "
				        "image does not need there, or give the containerfile a "
				        "directory of its own",
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

/* What changes whenever a file's content may have: its inode, size, mode,
 * modification and status-change times. The ctime is set by the kernel on
 * every write and no one can set it back, so equal stat data means an
 * unchanged file. */
static void hash_stat(struct hash *h, const char *root, const char *rel)
{
	char *full = xasprintf("%s/%s", root, rel);
	struct stat st;
	char line[256];
	if (lstat(full, &st) == 0)
		snprintf(line, sizeof(line), "%llu:%llu:%o:%lld:%lld.%ld:%lld.%ld",
		         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		         (unsigned)st.st_mode, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		         st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	else
		snprintf(line, sizeof(line), "missing");
	hash_add_str(h, rel);
	hash_add_str(h, line);
	free(full);
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

/* The cached digest for a stat signature, from a private file of ours. */
static char *cache_lookup(const char *cache, const char *signature)
{
	char *text = cache ? read_small_file(cache, 256, true) : NULL;
	size_t len = strlen(signature);
	char *digest = NULL;
	if (text && strncmp(text, signature, len) == 0 && text[len] == ' ') {
		char *d = text + len + 1;
		d[strcspn(d, "\n")] = '\0';
		if (strlen(d) == HASH_FULL_HEX)
			digest = xstrdup(d);
	}
	free(text);
	return digest;
}

/* Remembers the digest; a cache that cannot be written is only slower. */
static void cache_store(const char *cache, const char *signature, const char *digest)
{
	if (!cache)
		return;
	char *tmp = xasprintf("%s.%ld.tmp", cache, (long)getpid());
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		dprintf(fd, "%s %s\n", signature, digest);
		if (close(fd) == 0 && rename(tmp, cache) == 0) {
			free(tmp);
			return;
		}
	}
	unlink(tmp);
	free(tmp);
}

int build_context_digest(const char *containerfile, const char *cache, char **digest,
                         struct gb_error *err)
{
	char *root = dir_of(containerfile);
	const char *name = containerfile + strlen(root) + (strcmp(root, "/") != 0);
	struct ignore ig = { STRV_INIT };
	ignore_load(root, &ig);
	struct strv paths = STRV_INIT;
	int rc = collect(root, "", &ig, name, &paths, err);
	strv_clear(&ig.patterns);

	char signature[HASH_FULL_HEX + 1];
	struct hash h;
	hash_begin(&h);
	hash_add_str(&h, root);
	hash_add_str(&h, name);
	for (size_t i = 0; rc == 0 && i < paths.n; i++)
		hash_stat(&h, root, paths.v[i]);
	hash_end_full(&h, signature);

	*digest = rc == 0 ? cache_lookup(cache, signature) : NULL;
	if (rc == 0 && !*digest) {
		char hex[HASH_FULL_HEX + 1];
		hash_begin(&h);
		hash_add_str(&h, name);
		for (size_t i = 0; i < paths.n && rc == 0; i++)
			rc = hash_file(&h, root, paths.v[i], err);
		hash_end_full(&h, hex);
		if (rc == 0) {
			*digest = xstrdup(hex);
			cache_store(cache, signature, hex);
		}
	}
	strv_clear(&paths);
	free(root);
	return rc;
}

char *build_tag_for(const char *digest, const char *base_image)
{
	struct hash h;
	char hex[HASH_ID_HEX + 1];
	hash_begin(&h);
	hash_add_str(&h, base_image);
	hash_add_str(&h, digest);
	hash_end_id(&h, hex);
	return xasprintf("%s:%s", BUILD_IMAGE_REPO, hex);
}

int build_tag(const char *containerfile, const char *base_image, char **tag, struct gb_error *err)
{
	char *digest;
	if (build_context_digest(containerfile, NULL, &digest, err) < 0)
		return -1;
	*tag = build_tag_for(digest, base_image);
	free(digest);
	return 0;
}
