#include "report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"

static void print_json(cJSON *root, FILE *out)
{
	char *text = cJSON_Print(root);
	if (text) {
		fprintf(out, "%s\n", text);
		cJSON_free(text);
	}
	cJSON_Delete(root);
}

static void add_str(cJSON *obj, const char *key, const char *value)
{
	if (value)
		cJSON_AddStringToObject(obj, key, value);
	else
		cJSON_AddNullToObject(obj, key);
}

static void print_field(FILE *out, const char *key, const char *value)
{
	char *q = shell_quote(value);
	fprintf(out, "%-10s %s\n", key, q);
	free(q);
}

static const char *state_word(const struct box_info *b)
{
	return b->state == BOX_ABSENT ? "absent" : b->status;
}

void report_status(const struct status_report *r, bool json, FILE *out)
{
	const struct box_info *b = r->info;
	bool absent = b->state == BOX_ABSENT;
	const char *image = !absent && b->label_image ? b->label_image : r->image;
	if (json) {
		cJSON *o = cJSON_CreateObject();
		add_str(o, "name", r->name);
		add_str(o, "directory", r->dir);
		add_str(o, "state", state_word(b));
		add_str(o, "image", image);
		add_str(o, "id", b->id);
		add_str(o, "created", b->created);
		if (absent) {
			cJSON_AddNullToObject(o, "drift");
		} else {
			cJSON *drift = cJSON_AddArrayToObject(o, "drift");
			for (size_t i = 0; i < r->drift->n; i++)
				cJSON_AddItemToArray(drift, cJSON_CreateString(r->drift->v[i]));
		}
		print_json(o, out);
		return;
	}
	print_field(out, "name", r->name);
	print_field(out, "directory", r->dir);
	print_field(out, "state", state_word(b));
	print_field(out, "image", image);
	if (b->created)
		print_field(out, "created", b->created);
	if (absent) {
		fprintf(out, "%-10s %s\n", "settings", "(no box yet: the next run creates it)");
	} else if (r->drift->n == 0) {
		fprintf(out, "%-10s %s\n", "settings", "current");
	} else {
		fprintf(out, "%-10s drifted:", "settings");
		for (size_t i = 0; i < r->drift->n; i++)
			fprintf(out, "%s %s", i ? "," : "", r->drift->v[i]);
		fprintf(out, " (gemini-box --box-recreate applies them)\n");
	}
}

void report_list(const struct box_info *boxes, const bool *dir_exists, size_t n, bool json,
                 FILE *out)
{
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		for (size_t i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			add_str(o, "name", boxes[i].name);
			add_str(o, "state", boxes[i].status);
			add_str(o, "image", boxes[i].label_image);
			add_str(o, "directory", boxes[i].label_dir);
			cJSON_AddBoolToObject(o, "directory_exists", dir_exists[i]);
			add_str(o, "id", boxes[i].id);
			cJSON_AddItemToArray(arr, o);
		}
		print_json(arr, out);
		return;
	}
	fprintf(out, "%-42s %-8s %-30s %s\n", "NAME", "STATE", "IMAGE", "DIRECTORY");
	for (size_t i = 0; i < n; i++) {
		char *dir = shell_quote(boxes[i].label_dir ? boxes[i].label_dir : "?");
		char *image = shell_quote(boxes[i].label_image ? boxes[i].label_image : "?");
		fprintf(out, "%-42s %-8s %-30s %s%s\n", boxes[i].name, boxes[i].status, image, dir,
		        dir_exists[i] ? "" : "  (gone)");
		free(image);
		free(dir);
	}
}
