#!/bin/bash
# gemini-box's system tests: tests/system/NNN-area.bats, run by bats against
# real rootless podman and a stand-in gemini image.
#
#   tests/system/run.sh BINARY
#
# As root (CI, `make test`): prepares the machine and a dedicated test user
# (default gbtest, override with GB_TEST_USER) with setup-machine.sh, which
# also stages BINARY and these tests where that user can read them, then runs
# bats as that user, in a clean environment (env -i).
# As any other user: builds the test image if needed and runs bats directly;
# podman must already work. The tests that need the dedicated user or what
# setup-machine.sh plants are skipped then.
#
# Environment knobs:
#   GB_IT_ONLY=REGEX   run only the tests whose name matches REGEX (bats --filter)
#   GB_IT_KEEP=1       keep the test directories and boxes (for debugging)
#   GB_IT_TIMEOUT=N    seconds allowed to one gemini-box run (default 60)
#   GB_IT_VERBOSE=1    print every test's output, not only the failing ones'
#   GB_IT_REAL_GEMINI=0  do not build the real gemini image (its test is skipped)
#   GB_TEST_USER=NAME  the test user (as root)
# Prints bats' TAP output; the last line is "N passed, N failed, N skipped"
# (a bats run cut short counts as one more failure); the exit status is 0
# only when nothing failed.

# shellcheck disable=SC2015 # "test && test || fail" is meant: fail if either fails

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

say() { printf '%s\n' "$*" >&2; }

if [ $# -ne 1 ]; then
	say "usage: $0 BINARY"
	echo "0 passed, 1 failed, 0 skipped"
	exit 2
fi

# summarize TAP_LOG BATS_STATUS: the summary line of a bats run; its status
# is 0 only when nothing failed.
summarize() {
	local log=$1 rc=$2 plan passed failed skipped suite seen
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)
	passed=$(grep -E '^ok [0-9]+ ' "$log" | grep -cvE ' # skip( |$)')
	skipped=$(grep -E '^ok [0-9]+ ' "$log" | grep -cE ' # skip( |$)')
	failed=$(grep -cE '^not ok [0-9]+ ' "$log")
	suite=$(grep -cE '^not ok [0-9]+ (setup|teardown)_suite$' "$log")
	seen=$((passed + skipped + failed - suite))
	if [ -z "$plan" ] || [ "$seen" -lt "$plan" ]; then
		say "run.sh: bats ended after $seen of ${plan:-?} tests"
		[ "$suite" -gt 0 ] || failed=$((failed + 1))
	elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		say "run.sh: bats exited with status $rc"
		failed=1
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

# bats_args: the arguments of bats for the knobs.
bats_args() {
	BATS_ARGS=(--tap --timing)
	[ -z "${GB_IT_ONLY:-}" ] || BATS_ARGS+=(--filter "$GB_IT_ONLY")
	[ -z "${GB_IT_VERBOSE:-}" ] || BATS_ARGS+=(--show-output-of-passing-tests)
}

# ---------------------------------------------------------------------------
# Root: prepare the machine and the test user, then run bats as that user.
# ---------------------------------------------------------------------------
root_main() {
	local bin=$1 user stage home rc real_image='' tmpdir=''
	user=${GB_TEST_USER:-gbtest}
	stage=$(mktemp -d /tmp/gemini-box-system.XXXXXX) || {
		say "run.sh: mktemp failed"
		echo "0 passed, 1 failed, 0 skipped"
		return 1
	}
	chmod 755 "$stage"
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$stage'" EXIT
	[ "${GB_IT_REAL_GEMINI:-1}" = 0 ] || real_image=localhost/gemini-box-real:0.61.0
	GB_IT_REAL_IMAGE=$real_image bash "$HERE/setup-machine.sh" "$user" "$stage" "$bin" || {
		say "run.sh: tests/system/setup-machine.sh failed"
		echo "0 passed, 1 failed, 0 skipped"
		return 1
	}
	home=$(getent passwd "$user" | cut -d: -f6)
	# /tmp/gemini (the IDE companion's port files) is whoever made it first's:
	# where another user did (a second test user on this machine), this one
	# gets a TMPDIR of its own, as gemini-box itself advises.
	if [ -e /tmp/gemini ] && [ "$(stat -c %U /tmp/gemini)" != "$user" ]; then
		tmpdir=$stage/tmp
		install -d -m 700 -o "$user" -g "$(id -gn "$user")" "$tmpdir"
		say "run.sh: /tmp/gemini belongs to $(stat -c %U /tmp/gemini): TMPDIR=$tmpdir for $user"
	fi
	: >"$stage/tap.log"
	bats_args
	# A clean environment: none of root's variables (secrets, XDG_RUNTIME_DIR,
	# PATH with root-only directories) may leak into the tests. No
	# XDG_RUNTIME_DIR: rootless podman then uses /tmp/podman-run-UID on its own.
	# tee ignores an interrupt, so that bats' own report of it gets through.
	cd / || return 1
	runuser -u "$user" -- env -i \
		HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 ${CI+CI="$CI"} ${GITHUB_ACTIONS+GITHUB_ACTIONS="$GITHUB_ACTIONS"} \
		${GB_IT_KEEP+GB_IT_KEEP="$GB_IT_KEEP"} ${GB_IT_TIMEOUT+GB_IT_TIMEOUT="$GB_IT_TIMEOUT"} \
		${tmpdir:+TMPDIR="$tmpdir"} \
		GB_IT_DEDICATED_USER=1 GB_BIN="$stage/gemini-box" \
		GB_IT_PLANTED="$stage/planted" GB_IT_PLANTED_TMP="$stage/planted-tmp" \
		${real_image:+GB_IT_REAL_IMAGE="$real_image"} \
		bats "${BATS_ARGS[@]}" "$stage/tests/system" </dev/null 2>&1 | tee -i "$stage/tap.log"
	rc=${PIPESTATUS[0]}
	summarize "$stage/tap.log" "$rc"
}

if [ "$(id -u)" = 0 ]; then
	# A trap (not an ignore, which the children would inherit): bats, in the
	# same process group, gets the signal too, runs its teardowns and reports;
	# then this shell sums up and removes the staging directory.
	trap : INT TERM
	root_main "$1"
	exit
fi

# ---------------------------------------------------------------------------
# Any other user: bats directly, against this tree's tests.
# ---------------------------------------------------------------------------
bin=$(realpath -e -- "$1" 2>/dev/null) && [ -x "$bin" ] || {
	say "run.sh: $1: no such executable (run make first)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
type -P bats >/dev/null || {
	say "run.sh: bats not found (scripts/ensure-deps.sh test)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
bash "$HERE/../integration/build-image.sh" localhost/gemini-box-test:latest || {
	say "run.sh: could not build the test image (tests/integration/build-image.sh)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
trap : INT TERM
bats_args
GB_BIN=$bin bats "${BATS_ARGS[@]}" "$HERE" </dev/null 2>&1 | tee -i "$log"
rc=${PIPESTATUS[0]}
summarize "$log" "$rc"
