/* report: what --box-status and --box-list print, as text or JSON. Pure. */
#ifndef GEMINI_BOX_REPORT_H
#define GEMINI_BOX_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "inspect.h"
#include "strv.h"

struct status_report {
	const char *name;
	const char *dir;
	const struct box_info *info; /* state BOX_ABSENT when there is no box */
	const char *image;           /* the image a new box would get */
	const struct strv *drift;    /* changed setting keys */
};

void report_status(const struct status_report *r, bool json, FILE *out);

/* dir_exists[i] tells whether boxes[i]'s directory is still there. */
void report_list(const struct box_info *boxes, const bool *dir_exists, size_t n, bool json,
                 FILE *out);

#endif
