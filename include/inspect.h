/* inspect: reads podman's JSON about boxes (container inspect, ps). */
#ifndef GEMINI_BOX_INSPECT_H
#define GEMINI_BOX_INSPECT_H

#include <stdio.h>

#include "error.h"
#include "plan.h"

struct box_info {
	enum box_state state;
	char *id; /* NULL when absent */
	char *name;
	char *status;         /* podman's state word, e.g. "running" */
	char *created;        /* as podman prints it */
	char *label_dir;      /* gemini-box.dir, NULL if the box has none */
	char *label_image;    /* gemini-box.image */
	char *label_settings; /* gemini-box.settings */
	char *label_version;  /* gemini-box.version */
	char *label_init;     /* gemini-box.init: the host path of the box's init */
	char *label_state;    /* gemini-box.state: the host path of its state directory */
	char **mount_sources; /* every mount's host source, as podman recorded it */
	size_t n_mounts;
};

/* Parses `podman container inspect` output. An empty array means the box is
 * absent. Fails with EXIT_BOX_PODMAN on anything else that is not a container. */
int inspect_parse(const char *json, struct box_info *info, struct gb_error *err);
void box_info_clear(struct box_info *info);

/* Parses `podman ps --all --format json` output into boxes. */
int box_list_parse(const char *json, struct box_info **boxes, size_t *n, struct gb_error *err);
void box_list_free(struct box_info *boxes, size_t n);

/* Maps podman's state word to what a run must do about it. */
enum box_state box_state_of_status(const char *status);

#endif
