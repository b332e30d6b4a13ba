#!/bin/sh
# A podman shim for tests that must see or steer what gemini-box asks of podman:
# GEMINI_BOX_PODMAN=this-script.
# - GB_PODMAN_LOG=FILE: append the arguments of every call to FILE, each followed
#   by a NUL byte, then the record "--end--" and a NUL.
# - GB_PODMAN_FAIL=SUB[,SUB...]: a call whose subcommand is one of these
#   ("create", "start", "exec", "inspect", "container inspect", "image exists",
#   ...) prints an error and exits 125 instead of running.
# - GB_FAKE_PULL_FROM=IMAGE: "pull X" tags the local IMAGE as X instead of
#   reaching a registry (none is reachable on the test machines).
# Everything else is exec'd to the real podman ("$GB_REAL_PODMAN", default
# podman on PATH) with the same arguments.
if [ -n "${GB_PODMAN_LOG:-}" ]; then
	{
		for a in "$@"; do printf '%s\0' "$a"; done
		printf -- '--end--\0'
	} >>"$GB_PODMAN_LOG"
fi
real=${GB_REAL_PODMAN:-podman}

# The subcommand: the first word not an option, with the next one for groups
# ("container inspect"). Global options taking a value are not expected.
sub=
for a in "$@"; do
	case $a in -*) continue ;; esac
	if [ -z "$sub" ]; then
		sub=$a
		case $a in container | image | volume | network) continue ;; esac
	else
		sub="$sub $a"
	fi
	break
done

case ",${GB_PODMAN_FAIL:-}," in
*",$sub,"*)
	echo "Error: podman-logger.sh: $sub made to fail (GB_PODMAN_FAIL)" >&2
	exit 125
	;;
esac
if [ -n "${GB_FAKE_PULL_FROM:-}" ] && { [ "$sub" = pull ] || [ "$sub" = "image pull" ]; }; then
	for target; do :; done # the last argument
	echo "podman-logger.sh: pretending to pull $target" >&2
	exec "$real" tag "$GB_FAKE_PULL_FROM" "$target"
fi
exec "$real" "$@"
