/* Linked only into the gemini-box that `make sanitize-integration` builds
 * (build-asan/gemini-box): the sanitizers' default options, compiled in
 * because the integration tests run gemini-box as another user with a clean
 * environment (env -i), where ASAN_OPTIONS would not reach it. Every finding
 * (memory error, leak, undefined behaviour) ends the process with status 99
 * and is written to SAN_LOG_DIR/report.PID, which the make target checks is
 * empty after the run: a finding in a process whose status no test looks at
 * still fails the run. ASAN_OPTIONS / UBSAN_OPTIONS still override these. */
#ifndef SAN_LOG_DIR
#error "define SAN_LOG_DIR (the Makefile does)"
#endif

#define SAN_COMMON                                                                                 \
	"halt_on_error=1:exitcode=99:log_path=" SAN_LOG_DIR "/report:print_stacktrace=1"

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__lsan_default_options(void);

const char *__asan_default_options(void)
{
	return SAN_COMMON ":detect_leaks=1:abort_on_error=0:strict_string_checks=1"
	                  ":detect_stack_use_after_return=1:check_initialization_order=1";
}

const char *__ubsan_default_options(void)
{
	return SAN_COMMON;
}

const char *__lsan_default_options(void)
{
	return SAN_COMMON;
}
