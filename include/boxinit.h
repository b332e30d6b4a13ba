/* boxinit: the box's own init (gemini-box-init) and its liveness lock.
 *
 * Every box runs gemini-box-init as its main process, from a content-named
 * copy in the user's data directory that gemini-box writes from the bytes it
 * carries (so upgrading or moving gemini-box never pulls the file from under
 * an existing box). The init holds an exclusive
 * flock on <state dir>/lock, a file of a private per-user directory that the
 * box sees read-only; beside it, host-only, <state dir>/box records the directory and settings
 * digest the box was made with. A run that finds the lock held and the record equal to its own goes
 * straight to podman exec, without asking podman anything. */
#ifndef GEMINI_BOX_BOXINIT_H
#define GEMINI_BOX_BOXINIT_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Where the init and its lock appear inside the box. The box sees nothing
 * else of the state directory, and the lock only read-only: the record
 * beside it is the host's alone. */
#define BOX_INIT_PATH   "/run/gemini-box/init"
#define BOX_LOCK_PATH   "/run/gemini-box/lock"
#define BOX_LOCK_FILE   "lock"
#define BOX_RECORD_FILE "box"

/* The content id (12 hex of SHA-256) of the init this gemini-box was built
 * with; boxes record it, so a box made with another init shows as drifted. */
const char *init_id(void);

/* The path of the copy of this gemini-box's init under data_home
 * (gemini-box/init/ID/gemini-box-init). */
char *init_copy_path(const char *data_home);

/* The init itself, built static and embedded in gemini-box at build time
 * (generated init-blob.c), so gemini-box is one file to install. */
extern const unsigned char init_blob[];
extern const size_t init_blob_size;

/* Makes sure that copy exists, writing it from the embedded init (or from
 * GEMINI_BOX_INIT, a developer's file that must have the same content). */
int init_install(const char *copy, struct gb_error *err);

/* The per-user state directory of box name, made (mode 0700) when create:
 * $XDG_RUNTIME_DIR/gemini-box/NAME when XDG_RUNTIME_DIR is a private
 * directory of ours, else /tmp/gemini-box-UID/NAME. A base that another user
 * could have made or can write is refused. */
int state_dir(const char *name, bool create, char **dir, struct gb_error *err);

/* Makes dir (mode 0700) and its lock file if they are missing, and checks
 * that both are ours and private (never following a link). */
int state_dir_ensure(const char *dir, struct gb_error *err);

/* Whether dir, a state directory path read from a box's label, is where
 * gemini-box keeps box name's state: <a private base of ours>/<name>. */
bool state_dir_is_ours(const char *dir, const char *name);

/* What a box made now records in its state directory: its directory,
 * settings digest and init. */
char *state_record(const char *box_dir, const char *digest, const char *init);
/* Writes record and the box's container id. */
int state_record_write(const char *state, const char *record, const char *id, struct gb_error *err);

enum state_answer {
	STATE_UNKNOWN, /* no record, or another: ask podman */
	STATE_RUNNING, /* made with record, and its init holds the lock */
	STATE_STOPPED, /* made with record, and nothing holds the lock */
};

/* Whether a process holds an exclusive lock on the state file name (the
 * box's lock: its init runs; the egress lock: its proxy runs). Probed with a
 * shared lock taken for an instant; the init retries while it cannot take
 * its own. */
bool state_lock_held(const char *state, const char *name);

/* Removes a removed box's state directory (its record and lock only). */
void state_forget(const char *state);

/* What the state directory says of a box made with exactly record; *id gets
 * its container id (malloc'd) unless the answer is STATE_UNKNOWN. A stopped
 * answer is a guess podman must confirm (the box may have been removed):
 * start it by id, which fails for any other container. */
enum state_answer state_lookup(const char *state, const char *record, char **id);

/* Whether state holds no record of a box at all (the project has had none,
 * or not since a reboot emptied /tmp). */
bool state_record_absent(const char *state);

/* Images a box was made from lately, so that the first launch in a new
 * project need not ask podman whether its image is here (it is, unless
 * removed since: then the launch takes the long way). A private file beside
 * the state directories. */
bool image_known(const char *image);
void image_remember(const char *image);
/* Forgets them all: a launch on the strength of the list failed. */
void image_forget(void);

#endif
