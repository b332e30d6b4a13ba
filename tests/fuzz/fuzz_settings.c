/* libFuzzer target for settings: the input is the text of a settings file.
 * It is merged twice into one settings value, as the user's file and as an
 * untrusted project's file, with home and box directory an existing temporary
 * directory; then the result is printed (to /dev/null), turned into JSON and
 * into the creation digest, and freed. Built and run by `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[] = "/tmp/gemini-box-fuzz.XXXXXX";
static char sub[sizeof(dir) + 8], file[sizeof(dir) + 8];
static FILE *devnull;

static void remove_dir(void)
{
	unlink(file);
	rmdir(sub);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(dir)) {
		perror("fuzz_settings: mkdtemp");
		abort();
	}
	/* Something for mounts to name: ~/sub, ./sub, ~/file, ./file. */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	FILE *f = fopen(file, "w");
	if (mkdir(sub, 0700) != 0 || !f) {
		perror("fuzz_settings: setting up the temporary directory");
		abort();
	}
	fclose(f);
	atexit(remove_dir);
	devnull = fopen("/dev/null", "w");
	if (!devnull) {
		perror("fuzz_settings: /dev/null");
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';

	struct settings s;
	settings_init(&s);
	const struct settings_source user = {
		.file = "/fuzz/config.json",
		.kind = ORIGIN_USER,
		.home = dir,
		.box_dir = dir,
		.trusted = false,
	};
	const struct settings_source project = {
		.file = "/fuzz/project/.gemini/gemini-box.json",
		.kind = ORIGIN_PROJECT,
		.home = dir,
		.box_dir = dir,
		.trusted = false,
	};
	const struct settings_source *sources[] = { &user, &project };
	for (size_t i = 0; i < 2; i++) {
		struct gb_error err = GB_ERROR_INIT;
		int rc = settings_merge_json(&s, text, sources[i], &err);
		/* The header promises EXIT_BOX_CONFIG and a message on failure. */
		if (rc < 0 && (err.status != EXIT_BOX_CONFIG || !err.msg))
			abort();
		if (rc == 0 && err.status != 0)
			abort();
		gb_error_clear(&err);
	}
	(void)settings_trusts(&s, dir);
	settings_print(&s, devnull);
	char *json = settings_to_json(&s);
	char *digest = settings_creation_digest(&s, "0123456789ab", true);
	(void)settings_idle_seconds(&s);
	if (!json || !digest)
		abort();
	struct strv changed = STRV_INIT;
	settings_digest_diff(digest, "image=000000000000,bogus", &changed);
	strv_clear(&changed);
	free(digest);
	free(json);
	settings_clear(&s);
	free(text);
	return 0;
}
