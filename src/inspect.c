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
	/* created, configured, exited, stopped, stopping, unknown: start it. */
	return BOX_STOPPED;
}

static char *string_at(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) && v->valuestring ? xstrdup(v->valuestring) : NULL;
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
	info->status = state ? string_at(state, "Status") : NULL;
	if (!info->id || !info->status) {
		cJSON_Delete(root);
		box_info_clear(info);
		return gb_fail(err, EXIT_BOX_PODMAN,
		               "podman container inspect gave no Id or State.Status; is this "
		               "podman too old?");
	}
	info->state = box_state_of_status(info->status);
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(box, "Config");
	const cJSON *labels = config ? cJSON_GetObjectItemCaseSensitive(config, "Labels") : NULL;
	if (cJSON_IsObject(labels))
		info->label_dir = string_at(labels, BOX_LABEL_DIR);
	cJSON_Delete(root);
	return 0;
}

void box_info_clear(struct box_info *info)
{
	free(info->id);
	free(info->status);
	free(info->label_dir);
	memset(info, 0, sizeof(*info));
	info->state = BOX_ABSENT;
}
