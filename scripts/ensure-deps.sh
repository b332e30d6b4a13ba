#!/bin/sh
# Installs (as root) or names (otherwise) the Debian packages a task needs.
# Usage: scripts/ensure-deps.sh build|run|test
# Exit 0 when everything is present, 1 when something is missing and could not
# be installed (the exact apt-get line is printed).
set -eu

build_pkgs="gcc make pkg-config libcjson-dev libssl-dev musl-tools"
run_pkgs="podman uidmap slirp4netns fuse-overlayfs catatonit mmdebstrap"
test_pkgs="libcmocka-dev groff-base runc busybox-static tmux bats valgrind clang libclang-rt-14-dev python3 runsc git debootstrap"

case "${1:-}" in
build) want="$build_pkgs" ;;
run) want="$build_pkgs $run_pkgs" ;;
test) want="$build_pkgs $run_pkgs $test_pkgs" ;;
*)
	echo "usage: $0 build|run|test" >&2
	exit 2
	;;
esac

missing=""
for p in $want; do
	# dpkg-query prints "install ok installed" only for a fully installed package.
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "gemini-box: missing packages:$missing; install them with your package manager" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "gemini-box: missing packages; run: sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -qq --no-install-recommends $missing >/dev/null
