#define _GNU_SOURCE
#include "boxinit.h"
#include "egress.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init-id.h" /* generated: GEMINI_BOX_INIT_ID */
#include "cleanup.h"
#include "fsutil.h"
#include "hash.h"
#include "quote.h"
#include "strv.h"

#define INIT_NAME "gemini-box-init"

const char *init_id(void)
{
	return GEMINI_BOX_INIT_ID;
}

/* The id (12 hex digits of SHA-256) of a file's content, or -1. */
static int file_id(const char *path, char out[HASH_ID_HEX + 1])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct hash h;
	hash_begin(&h);
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		hash_add(&h, buf, (size_t)n);
	close(fd);
	hash_end_id(&h, out);
	return n < 0 ? -1 : 0;
}

/* Copies from to a new file to (never through a link); on failure errno
 * is the failing call's. */
static int copy_file(const char *from, const char *to, mode_t mode)
{
	cleanup_fd int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	cleanup_fd int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0)
		return -1;
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, buf, (size_t)n) != n)
			return -1; /* a short write sets no errno: ENOSPC is the likely one */
	}
	if (fchmod(out, mode) < 0)
		return -1;
	int fd = out;
	out = -1;
	return close(fd);
}

char *init_copy_path(const char *data_home)
{
	return xasprintf("%s/gemini-box/init/%s/" INIT_NAME, data_home, init_id());
}

/* Writes the init's bytes to a new file (never through a link); on failure
 * errno is the failing call's. */
static int write_new_file(const char *to, const unsigned char *data, size_t len, mode_t mode)
{
	cleanup_fd int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0)
		return -1;
	for (size_t done = 0; done < len;) {
		ssize_t n = write(out, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	if (fchmod(out, mode) < 0)
		return -1;
	int fd = out;
	out = -1;
	return close(fd);
}

int init_install(const char *installed, struct gb_error *err)
{
	if (access(installed, X_OK) == 0)
		return 0;
	/* A developer's init, when named, must be the one this gemini-box was
	 * built with: boxes record its id. */
	const char *override = getenv("GEMINI_BOX_INIT");
	char id[HASH_ID_HEX + 1];
	if (override && *override && (file_id(override, id) < 0 || strcmp(id, init_id()) != 0))
		return gb_fail_path(err, EXIT_BOX_INTERNAL, "GEMINI_BOX_INIT", override,
		                    "is not the init this gemini-box was built with; unset it");
	char *dir = xstrdup(installed);
	*strrchr(dir, '/') = '\0';
	int rc = -1;
	if (mkdir_p(dir, 0755) < 0) {
		gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot create", dir, strerror(errno));
	} else {
		/* Written under a temporary name and renamed: a concurrent run never
		 * sees half a file. */
		char *tmp = xasprintf("%s.%ld.tmp", installed, (long)getpid());
		unlink(tmp); /* a leftover of a run that died */
		int written = override && *override
		                      ? copy_file(override, tmp, 0755)
		                      : write_new_file(tmp, init_blob, init_blob_size, 0755);
		if (written == 0 && rename(tmp, installed) == 0) {
			rc = 0;
		} else {
			int e = errno;
			unlink(tmp);
			gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot install the box init as",
			             installed, strerror(e));
		}
		free(tmp);
	}
	free(dir);
	return rc;
}

/* A directory only we own and only we can read and write, and not a
 * symlink: nobody else can plant a lock, a record or a link to follow in it. */
static bool private_dir(const char *path)
{
	return dir_is_ours(path, 077);
}

/* The two places a state directory can be: under XDG_RUNTIME_DIR when that is
 * a private directory of ours, else under /tmp. */
static char *state_base(void)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	if (runtime && *runtime == '/' && dir_is_ours(runtime, 022))
		return xasprintf("%s/gemini-box", runtime);
	return xasprintf("/tmp/gemini-box-%ld", (long)geteuid());
}

int state_dir(const char *name, bool create, char **out, struct gb_error *err)
{
	*out = NULL;
	char *base = state_base();
	if (create && mkdir(base, 0700) < 0 && errno != EEXIST) {
		gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot create", base, strerror(errno));
		free(base);
		return -1;
	}
	if (!private_dir(base)) {
		struct stat st;
		if (!create && lstat(base, &st) < 0 && errno == ENOENT) {
			/* nothing there yet: no box can be running with it */
			*out = xasprintf("%s/%s", base, name);
			free(base);
			return 0;
		}
		char *q = shell_quote(base);
		gb_fail(err, EXIT_BOX_INTERNAL,
		        "%s is not a private directory of yours (another user may own or write "
		        "it, or it is a symlink); remove it or set XDG_RUNTIME_DIR",
		        q);
		free(q);
		free(base);
		return -1;
	}
	*out = xasprintf("%s/%s", base, name);
	free(base);
	if (create && state_dir_ensure(*out, err) < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

bool state_dir_is_ours(const char *dir, const char *name)
{
	const char *slash = strrchr(dir, '/');
	if (!slash || strcmp(slash + 1, name) != 0)
		return false;
	char *base = xstrndup(dir, (size_t)(slash - dir));
	char *expected = state_base();
	char *fallback = xasprintf("/tmp/gemini-box-%ld", (long)geteuid());
	bool ok = (strcmp(base, expected) == 0 || strcmp(base, fallback) == 0) && private_dir(base);
	free(fallback);
	free(expected);
	free(base);
	return ok;
}

/* Opens a file of the state directory without following a link or blocking
 * on a FIFO, and only when it is a regular file of ours. */
static int open_state_file(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int state_dir_ensure(const char *dir, struct gb_error *err)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return gb_fail_path(err, EXIT_BOX_INTERNAL,
		                    "cannot create the box's state directory", dir,
		                    strerror(errno));
	if (!private_dir(dir))
		return gb_fail_path(err, EXIT_BOX_INTERNAL, "the box's state directory", dir,
		                    "is not a private directory of yours; remove it");
	/* The lock exists before the box does: the box mounts it read-only. */
	char *lock = xasprintf("%s/" BOX_LOCK_FILE, dir);
	int fd = open_state_file(lock, O_RDONLY | O_CREAT);
	int rc = 0;
	if (fd < 0)
		rc = gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot create the box's lock", lock,
		                  strerror(errno));
	else
		close(fd);
	free(lock);
	/* The directory an "allowlist" box sees its proxy's socket in (egress.h):
	 * there before the box is made, as a mount source must be. */
	char *egress = xasprintf("%s/" EGRESS_DIR, dir);
	if (rc == 0 && mkdir(egress, 0700) < 0 && errno != EEXIST)
		rc = gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot create", egress, strerror(errno));
	else if (rc == 0 && !private_dir(egress))
		rc = gb_fail_path(err, EXIT_BOX_INTERNAL, "the box's proxy directory", egress,
		                  "is not a private directory of yours; remove it");
	free(egress);
	return rc;
}

char *state_record(const char *box_dir, const char *digest, const char *init)
{
	return xasprintf("dir=%s\ndigest=%s\ninit=%s\n", box_dir, digest, init);
}

int state_record_write(const char *state, const char *record, const char *id, struct gb_error *err)
{
	char *path = xasprintf("%s/" BOX_RECORD_FILE, state);
	char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
	char *text = xasprintf("%sid=%s\n", record, id);
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	size_t len = strlen(text);
	int rc = fd >= 0 && write(fd, text, len) == (ssize_t)len ? 0 : -1;
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	/* Renamed into place: a concurrent reader sees the old record or the new. */
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc < 0) {
		gb_fail_path(err, EXIT_BOX_INTERNAL, "cannot write", path, strerror(errno));
		unlink(tmp);
	}
	free(text);
	free(tmp);
	free(path);
	return rc;
}

/* The container id after record in the record file, or NULL. */
static char *recorded_id(const char *state, const char *record)
{
	char *path = xasprintf("%s/" BOX_RECORD_FILE, state);
	size_t want = strlen(record);
	char *buf = read_small_file(path, want + 256, true);
	free(path);
	if (!buf)
		return NULL;
	size_t n = strlen(buf);
	char *id = NULL;
	if (n > want && memcmp(buf, record, want) == 0 && strncmp(buf + want, "id=", 3) == 0) {
		char *start = buf + want + 3;
		size_t len = strspn(start, "0123456789abcdef");
		if (len > 0 && strcmp(start + len, "\n") == 0)
			id = xstrndup(start, len);
	}
	free(buf);
	return id;
}

enum state_answer state_lookup(const char *state, const char *record, char **id)
{
	*id = state && private_dir(state) ? recorded_id(state, record) : NULL;
	if (!*id)
		return STATE_UNKNOWN;
	return state_lock_held(state, BOX_LOCK_FILE) ? STATE_RUNNING : STATE_STOPPED;
}

bool state_lock_held(const char *state, const char *name)
{
	char *path = xasprintf("%s/%s", state, name);
	int fd = open_state_file(path, O_RDONLY);
	free(path);
	/* Taking a shared lock for an instant means nobody holds it exclusively. */
	bool held = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	if (fd >= 0)
		close(fd);
	return held;
}

void state_forget(const char *state)
{
	/* the allowlist mode's too: its proxy, which holds none of them open
	 * for long, sees the box gone and exits */
	const char *files[] = { BOX_RECORD_FILE,
		                BOX_LOCK_FILE,
		                EGRESS_DIR "/" EGRESS_SOCKET,
		                EGRESS_ALLOW_FILE,
		                EGRESS_ALLOW_FILE ".new",
		                EGRESS_LOG_FILE,
		                EGRESS_LOG_FILE ".1",
		                EGRESS_LOCK_FILE };
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char *path = xasprintf("%s/%s", state, files[i]);
		unlink(path);
		free(path);
	}
	char *egress = xasprintf("%s/" EGRESS_DIR, state);
	rmdir(egress);
	free(egress);
	rmdir(state); /* only when nothing else is in it */
}

/* The list stays short (an image a line); a longer one is not read. */
#define IMAGES_FILE_MAX (64 * 1024)

/* Where the images known to be here are listed: beside the state
 * directories, as private as they are. */
static char *images_file(void)
{
	char *base = state_base();
	char *path = private_dir(base) ? xasprintf("%s/images", base) : NULL;
	free(base);
	return path;
}

bool state_record_absent(const char *state)
{
	char *path = xasprintf("%s/" BOX_RECORD_FILE, state);
	struct stat st;
	bool absent = lstat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
	free(path);
	return absent;
}

bool image_known(const char *image)
{
	char *path = images_file();
	char *list = path ? read_small_file(path, IMAGES_FILE_MAX, true) : NULL;
	free(path);
	bool known = false;
	size_t len = strlen(image);
	for (const char *line = list; line && *line && !known;) {
		const char *end = strchr(line, '\n');
		if (!end)
			break;
		known = (size_t)(end - line) == len && memcmp(line, image, len) == 0;
		line = end + 1;
	}
	free(list);
	return known;
}

void image_remember(const char *image)
{
	if (image_known(image))
		return;
	char *path = images_file();
	int fd = path ? open_state_file(path, O_WRONLY | O_CREAT | O_APPEND) : -1;
	free(path);
	if (fd < 0)
		return; /* only a call saved the next time */
	dprintf(fd, "%s\n", image);
	close(fd);
}

void image_forget(void)
{
	char *path = images_file();
	if (path)
		unlink(path);
	free(path);
}
