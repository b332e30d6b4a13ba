# shellcheck shell=bash
# Once per bats run (bats loads this file itself): what every test needs from
# the user running them, checked (not installed: that is setup-machine.sh's
# job, as root), and the run's own directory $TESTROOT under $HOME.

# shellcheck disable=SC2034 # TESTROOT and GB_BIN are the tests'
# shellcheck disable=SC2015 # "test && test || fail" is meant: fail if either fails

setup_suite() {
	load helpers
	local tool err
	[ -x "$BIN" ] || die_suite "$BIN: no such executable (run make first, or set GB_BIN)"
	GB_BIN=$(realpath -e -- "$BIN") || die_suite "realpath $BIN failed"
	export GB_BIN
	type -P podman >/dev/null || die_suite "podman not found on PATH (scripts/ensure-deps.sh test)"
	if ! err=$(podman info 2>&1 >/dev/null); then
		die_suite "'podman info' fails for $(id -un); rootless podman must work to run these tests (as root, tests/system/setup-machine.sh prepares a user): $err"
	fi
	for tool in tmux timeout realpath sha256sum awk stat python3; do
		type -P "$tool" >/dev/null || die_suite "$tool not found (scripts/ensure-deps.sh test)"
	done
	podman image exists "$IMAGE" ||
		die_suite "no image $IMAGE: build it with tests/integration/build-image.sh (tests/system/run.sh does)"
	podman tag "$IMAGE" "$IMAGE_ALT" || die_suite "podman tag $IMAGE $IMAGE_ALT failed"
	# Not inside any git work tree, so "no .git above" tests mean what they say.
	TESTROOT=$(mktemp -d "$HOME/gb-bats.XXXXXX") && TESTROOT=$(realpath -e "$TESTROOT") ||
		die_suite "cannot make a test directory in $HOME"
	chmod 755 "$TESTROOT"
	export TESTROOT
	# The tests' own (empty) settings; podman's are the user's.
	mkdir -p "$TESTROOT/config"
	real_config=${XDG_CONFIG_HOME:-$HOME/.config}
	[ ! -e "$real_config/containers" ] || ln -s "$real_config/containers" "$TESTROOT/config/containers"
}

teardown_suite() {
	load helpers
	[ -n "${TESTROOT:-}" ] || return 0
	undo_home_changes
	if [ -n "${GB_IT_KEEP:-}" ]; then
		echo "# kept $TESTROOT and its boxes (GB_IT_KEEP)" >&3
		return 0
	fi
	remove_boxes_under "$TESTROOT"
	podman untag "$IMAGE_ALT" "$IMAGE_ALT" >/dev/null 2>&1 || true # only that name
	chmod -R u+rwX "$TESTROOT" 2>/dev/null || true
	rm -rf "$TESTROOT"
}

# die_suite MESSAGE: setup_suite fails (bats reports "not ok 1 setup_suite"
# with MESSAGE, and runs no test).
die_suite() {
	echo "setup_suite: $*" >&2
	exit 1
}
