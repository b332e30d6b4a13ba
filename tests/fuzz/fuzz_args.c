/* libFuzzer target for args: the input, split at NUL bytes, is an argv
 * (argv[0] is the program). Parses it as gemini-box would; on success asks
 * gemini_intent_of and terminal_wanted about gemini's arguments; asks
 * gemini_option_value_count about every pair of words; frees everything.
 * Built and run by `make fuzz` (see the end of the Makefile). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	/* A NUL-terminated copy: every word then ends at a NUL. */
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	buf[size] = '\0';

	size_t words = 1; /* argv[0] */
	for (size_t i = 0; i < size; i++)
		words += buf[i] == '\0';
	if (size > 0 && buf[size - 1] != '\0')
		words++; /* the last word has no NUL of its own */
	char **argv = calloc(words + 1, sizeof(*argv));
	if (!argv) {
		free(buf);
		return 0;
	}
	int argc = 0;
	argv[argc++] = (char *)"gemini-box";
	for (size_t i = 0; i < size;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;

	for (int i = 0; i < argc; i++)
		(void)gemini_option_value_count(argv[i], argv[i + 1]); /* argv[argc] is NULL */

	struct box_options o;
	struct gb_error err = GB_ERROR_INIT;
	if (box_options_parse(argc, argv, &o, &err) == 0) {
		struct gemini_intent in = gemini_intent_of(o.gemini_args.v, o.gemini_args.n);
		unsigned bits = (unsigned)size;
		volatile bool t = terminal_wanted(in, bits & 1, bits & 2, bits & 4);
		(void)t;
		/* The parts gemini-box reads must be strings that end. */
		if (o.dir)
			(void)strlen(o.dir);
		if (o.image)
			(void)strlen(o.image);
		if (o.command_option)
			(void)strlen(o.command_option);
		for (size_t i = 0; i < o.gemini_args.n; i++)
			(void)strlen(o.gemini_args.v[i]);
		if (o.gemini_args.n > 0 && o.gemini_args.v[o.gemini_args.n] != NULL)
			abort(); /* strv promises a NULL-terminated array */
		box_options_clear(&o);
	} else {
		if (err.status != EXIT_BOX_USAGE || !err.msg)
			abort(); /* the header promises EXIT_BOX_USAGE with a message */
	}
	gb_error_clear(&err);
	free(argv);
	free(buf);
	return 0;
}
