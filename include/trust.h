/* trust: a user's approval of a project's privileged settings, pinned to
 * their content, in the manner of `direnv allow`.
 *
 * A project's .gemini/gemini-box.json and its containerfile come with
 * whatever was cloned. What they may ask for without approval is limited
 * (settings.h); `gemini-box --box-trust` shows them and records the SHA-256
 * of the file and of the containerfile with its build context. While both
 * still match, the project file reads like the user's own; once either
 * changes (a `git pull`, or the agent), the approval no longer applies and
 * the privileged keys are refused again, saying what changed.
 *
 * Approvals live in $XDG_DATA_HOME/gemini-box/trust/, which no box mounts. */
#ifndef GEMINI_BOX_TRUST_H
#define GEMINI_BOX_TRUST_H

#include "error.h"

/* What an approval covers: NULL digests stand for absent files. */
struct approval {
	const char *dir;           /* canonical project directory */
	const char *settings;      /* SHA-256 of the project file's text */
	const char *containerfile; /* build_context_digest of the containerfile */
};

/* The record of an approval: "dir=...\nsettings=...\ncontainerfile=...\n". */
char *approval_record(const struct approval *a);

/* What differs between a recorded approval and the current one, as words for
 * a message ("the settings file", "the containerfile or its build context",
 * both joined by " and "), or NULL when the record approves it exactly. */
char *approval_difference(const char *recorded, const struct approval *now);

/* The SHA-256 of text, as 64 hex digits (malloc'd). */
char *text_digest(const char *text);

/* Where the approval for box name is kept under data_home. */
char *approval_path(const char *data_home, const char *box_name);

/* Reads a recorded approval (a small private file of ours); NULL if none. */
char *approval_read(const char *path);

/* Writes record to path (mode 0600, its directories 0700), atomically. */
int approval_write(const char *path, const char *record, struct gb_error *err);

#endif
