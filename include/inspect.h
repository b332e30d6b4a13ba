/* inspect: reads `podman container inspect` output into what a run needs. */
#ifndef GEMINI_BOX_INSPECT_H
#define GEMINI_BOX_INSPECT_H

#include "error.h"
#include "plan.h"

struct box_info {
	enum box_state state;
	char *id;        /* NULL when absent */
	char *status;    /* podman's State.Status word, e.g. "running" */
	char *label_dir; /* the gemini-box.dir label, NULL if the box has none */
};

/* Parses inspect's JSON array. An empty array means the box is absent.
 * Fails with EXIT_BOX_PODMAN on anything else that is not a container. */
int inspect_parse(const char *json, struct box_info *info, struct gb_error *err);
void box_info_clear(struct box_info *info);

/* Maps podman's State.Status to what a run must do about it. */
enum box_state box_state_of_status(const char *status);

#endif
