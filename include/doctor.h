/* doctor: --box-doctor, one line per check of what boxes need, each OK, WARN
 * or FAIL with the fix. */
#ifndef GEMINI_BOX_DOCTOR_H
#define GEMINI_BOX_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

enum check_level { CHECK_OK, CHECK_WARN, CHECK_FAIL };

/* One finding; what and fix are printed as given. */
void check_print(FILE *out, enum check_level level, const char *what, const char *fix);

/* Whether NAME or UID has a range in a subuid/subgid file's text. */
int subid_has_range(const char *text, const char *name, unsigned long uid);

/* Whether a line of /proc/self/mountinfo mounts a cgroup or cgroup2
 * filesystem. */
bool mountinfo_line_is_cgroup(const char *line);

#endif
