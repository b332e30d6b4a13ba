/* commands: the imperative shell. Observes the caller (directories,
 * environment, settings files) and the box, asks the pure modules for a
 * plan, and runs it; a run ends by replacing gemini-box with podman exec. */
#ifndef GEMINI_BOX_COMMANDS_H
#define GEMINI_BOX_COMMANDS_H

#include "args.h"
#include "error.h"

#ifndef GEMINI_BOX_VERSION
#define GEMINI_BOX_VERSION "0.0.0-dev"
#endif

/* Carries out o->command (anything but help and version). Returns the exit
 * status (gemini's, after a run), or -1 with err set. */
int command_run(const struct box_options *o, struct gb_error *err);

#endif
