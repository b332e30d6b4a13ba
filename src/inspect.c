#include "inspect.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "boxid.h"
#include "strv.h"

enum box_state box_state_of_status(const char *status)
{
	if (strcmp(status, "running") == 0)
		return BOX_RUNNING;
	if (strcmp(status, "paused") == 0)
		return BOX_PAUSED;
	if (strcmp(status, "initialized") == 0)
		return BOX_STUCK;
	/* created, configured, exited, stopped, stopping, unknown: start it. */
	return BOX_STOPPED;
}

static char *string_at(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) && v->valuestring ? xstrdup(v->valuestring) : NULL;
}

static void read_labels(const cJSON *labels, struct box_info *info)
{
	if (!cJSON_IsObject(labels))
		return;
	info->label_dir = string_at(labels, BOX_LABEL_DIR);
	info->label_image = string_at(labels, BOX_LABEL_IMAGE);
	info->label_settings = string_at(labels, BOX_LABEL_SETTINGS);
	info->label_version = string_at(labels, BOX_LABEL_VERSION);
	info->label_init = string_at(labels, BOX_LABEL_INIT);
	info->label_state = string_at(labels, BOX_LABEL_STATE);
}

int inspect_parse(const char *json, struct box_info *info, struct gb_error *err)
{
	memset(info, 0, sizeof(*info));
	info->state = BOX_ABSENT;

	cJSON *root = cJSON_Parse(json);
	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return gb_fail(err, EXIT_BOX_PODMAN,
		               "podman container inspect printed no JSON array; is podman working? "
		               "try podman info");
	}
	const cJSON *box = cJSON_GetArrayItem(root, 0);
	if (!box) {
		cJSON_Delete(root);
		return 0;
	}
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(box, "State");
	info->id = string_at(box, "Id");
	info->status = cJSON_IsObject(state) ? string_at(state, "Status") : NULL;
	if (!info->id || !info->status) {
		cJSON_Delete(root);
		box_info_clear(info);
		return gb_fail(
		        err, EXIT_BOX_PODMAN,
		        "podman container inspect gave no Id or State.Status; is this podman "
		        "too old?");
	}
	info->state = box_state_of_status(info->status);
	info->name = string_at(box, "Name");
	info->created = string_at(box, "Created");
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(box, "Config");
	if (cJSON_IsObject(config))
		read_labels(cJSON_GetObjectItemCaseSensitive(config, "Labels"), info);
	/* What podman will resolve again at the next start. */
	const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(box, "Mounts");
	for (const cJSON *m = cJSON_IsArray(mounts) ? mounts->child : NULL; m; m = m->next) {
		char *source = string_at(m, "Source");
		if (!source)
			continue;
		info->mount_sources =
		        xrealloc(info->mount_sources, (info->n_mounts + 1) * sizeof(char *));
		info->mount_sources[info->n_mounts++] = source;
	}
	cJSON_Delete(root);
	return 0;
}

void box_info_clear(struct box_info *info)
{
	for (size_t i = 0; i < info->n_mounts; i++)
		free(info->mount_sources[i]);
	free(info->mount_sources);
	free(info->id);
	free(info->name);
	free(info->status);
	free(info->created);
	free(info->label_dir);
	free(info->label_image);
	free(info->label_settings);
	free(info->label_version);
	free(info->label_init);
	free(info->label_state);
	memset(info, 0, sizeof(*info));
	info->state = BOX_ABSENT;
}

int box_list_parse(const char *json, struct box_info **boxes, size_t *n, struct gb_error *err)
{
	*boxes = NULL;
	*n = 0;
	cJSON *root = cJSON_Parse(json);
	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return gb_fail(
		        err, EXIT_BOX_PODMAN,
		        "podman ps printed no JSON array; is podman working? try podman info");
	}
	size_t count = (size_t)cJSON_GetArraySize(root);
	struct box_info *list = xmalloc((count ? count : 1) * sizeof(*list));
	size_t k = 0;
	for (const cJSON *c = root->child; c; c = c->next) {
		struct box_info *b = &list[k];
		memset(b, 0, sizeof(*b));
		b->id = string_at(c, "Id");
		b->status = string_at(c, "State");
		const cJSON *names = cJSON_GetObjectItemCaseSensitive(c, "Names");
		const cJSON *first = cJSON_IsArray(names) ? cJSON_GetArrayItem(names, 0) : NULL;
		b->name = cJSON_IsString(first) ? xstrdup(first->valuestring) : NULL;
		const cJSON *created = cJSON_GetObjectItemCaseSensitive(c, "Created");
		if (cJSON_IsNumber(created))
			b->created = xasprintf("%.0f", created->valuedouble);
		read_labels(cJSON_GetObjectItemCaseSensitive(c, "Labels"), b);
		if (!b->id || !b->status || !b->name) {
			box_info_clear(b);
			continue; /* not a container podman describes fully: skip it */
		}
		b->state = box_state_of_status(b->status);
		k++;
	}
	cJSON_Delete(root);
	*boxes = list;
	*n = k;
	return 0;
}

void box_list_free(struct box_info *boxes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		box_info_clear(&boxes[i]);
	free(boxes);
}
