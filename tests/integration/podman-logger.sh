#!/bin/sh
# A podman that logs its own argv, for tests that must see exactly what
# gemini-box passed to podman: GEMINI_BOX_PODMAN=this-script.
# Each invocation appends its arguments to "$GB_PODMAN_LOG", each one followed by
# a NUL byte, then the record "--end--" and a NUL; then it execs the real podman
# ("$GB_REAL_PODMAN", default podman on PATH) with the same arguments.
if [ -n "${GB_PODMAN_LOG:-}" ]; then
	{
		for a in "$@"; do printf '%s\0' "$a"; done
		printf -- '--end--\0'
	} >>"$GB_PODMAN_LOG"
fi
exec "${GB_REAL_PODMAN:-podman}" "$@"
