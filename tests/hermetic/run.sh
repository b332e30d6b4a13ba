#!/bin/bash
# Hermetic tests: gemini-box against tests/hermetic/fake-podman, a stateful
# stand-in for podman, for what real podman makes hard to provoke (a lost
# create race, a box that stops between the lock probe and the exec, a failed
# removal during a prune). No podman, no test user, any uid; each case gets a
# fresh HOME, XDG directories and project.
#   tests/hermetic/run.sh BINARY
# The last line is "N passed, N failed".
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$(realpath -e -- "${1:?usage: run.sh BINARY}") || {
	echo "0 passed, 1 failed"
	exit 2
}
FAKE=$HERE/fake-podman
PASSED=0 FAILED=0

fail() {
	echo "FAIL: $*"
	echo "  last: gemini-box $LAST -> $RC"
	sed 's/^/  out| /' "$T/out" | head -20
	sed 's/^/  err| /' "$T/err" | head -20
	echo "  podman calls:"
	sed 's/^/  log| /' "$FAKE_PODMAN_STATE/log" | tail -20
	exit 1
}

# gb ARGS...: run gemini-box in the project; RC, $T/out, $T/err.
gb() {
	LAST="$*"
	: >"$FAKE_PODMAN_STATE/log.mark"
	cp "$FAKE_PODMAN_STATE/log" "$FAKE_PODMAN_STATE/log.before"
	# GB_PATH: the PATH gemini-box alone runs with
	timeout -k 5 60 env ${GB_PATH:+PATH="$GB_PATH"} "$BIN" "$@" >"$T/out" 2>"$T/err" </dev/null
	RC=$?
}

# calls: the podman verbs of the last gb run, one per line ("container inspect", "exec"...).
calls() {
	diff "$FAKE_PODMAN_STATE/log.before" "$FAKE_PODMAN_STATE/log" | sed -n 's/^> //p' |
		python3 -c 'import json,sys
for l in sys.stdin:
    a = [w for w in json.loads(l) if not w.startswith("--runtime-flag")]
    print(" ".join(a[:2]) if a[0] in ("container", "image") else a[0])'
}

expect_rc() { [ "$RC" = "$1" ] || fail "expected exit status $1, got $RC"; }
inject() { : >"$FAKE_PODMAN_STATE/inject/$1"; }
box_status() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(c["status"] for c in d.values()))' \
		"$FAKE_PODMAN_STATE/containers.json"
}

# A lost create race costs one more look, and the run goes on into the box
# the other run made (under ASan, the retry once read freed memory).
t_lost_create_race_is_retried() {
	inject create-race
	gb -p hi
	expect_rc 0
	grep -qx 'fake-gemini -p hi' "$T/out" || fail "gemini did not run"
	[ "$(calls | grep -c '^run$')" = 1 ] || fail "expected one podman run"
	[ "$(calls | grep -c '^container inspect$')" = 2 ] || fail "expected a second inspect after the lost race"
}

# The box another run made vanished before the second look: it is created
# again, from what this run prepared (the retry once built its create
# command from a freed path: caught under ASan, make sanitize).
t_lost_create_race_to_a_vanishing_box() {
	inject create-race-gone
	gb -p hi
	expect_rc 0
	[ "$(calls | grep -c '^run$')" = 2 ] || fail "expected a second podman run"
	python3 -c 'import json,sys; c=list(json.load(open(sys.argv[1])).values())[0]
assert any(s and s.endswith("/lock") for s in c["sources"]), c["sources"]' "$FAKE_PODMAN_STATE/containers.json" ||
		fail "the second create does not mount the lock"
}

# The fast path: a box that stopped between the lock probe and the exec is
# brought up the long way; podman's 125 is not passed on as gemini's status.
t_fast_path_falls_back_when_the_box_stopped() {
	gb -p one
	expect_rc 0
	gb -p two
	expect_rc 0
	[ "$(calls | tr '\n' ' ')" = "exec " ] || fail "the warm run was not one exec: $(calls | tr '\n' ' ')"
	inject exec-stops-box
	gb -p three
	expect_rc 0
	grep -qx 'fake-gemini -p three' "$T/out" || fail "gemini did not run after the fallback"
	[ "$(calls | tr '\n' ' ')" = "exec container inspect container inspect start exec " ] ||
		fail "unexpected calls: $(calls | tr '\n' ' ')"
}

# A status of 125 from a box that still runs is passed on as it is.
t_status_125_of_a_running_box_passes_through() {
	gb -p one
	expect_rc 0
	inject exec-status-125
	gb -p two
	expect_rc 125
	[ "$(calls | tr '\n' ' ')" = "exec container inspect " ] || fail "unexpected calls: $(calls | tr '\n' ' ')"
	[ "$(box_status)" = running ] || fail "the box is not running"
}

# One failed removal does not stop a prune: the others go, with their state.
t_prune_goes_on_after_a_failed_removal() {
	local d names n
	for d in a b c; do
		mkdir "$T/$d"
		(cd "$T/$d" && "$BIN" -p hi >/dev/null 2>&1) || fail "first run in $d failed"
	done
	names=$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])))))' "$FAKE_PODMAN_STATE/containers.json")
	set -- $names
	[ $# = 3 ] || fail "expected 3 boxes, got: $names"
	rm -rf "$T/a" "$T/b" "$T/c"
	inject "rm-fail-$2"
	gb --box-prune --box-yes
	expect_rc 71
	grep -q '^gemini-box: 1 of 3 boxes could not be removed (podman rm.*device or resource busy' "$T/err" ||
		fail "no line naming the failed removal"
	n=$(box_status | wc -w)
	[ "$n" = 1 ] || fail "expected the one box that failed to remain, $n remain"
	for d in "$XDG_RUNTIME_DIR"/gemini-box/*/; do
		d=${d%/}
		[ "$(basename "$d")" = "$2" ] || fail "the state of a removed box remains: $d"
	done
}

# A failed step names podman's verb, not a global flag before it (runsc's).
t_failed_step_names_the_verb() {
	mkdir -p "$XDG_CONFIG_HOME/gemini-box"
	echo '{"runtime": "runsc"}' >"$XDG_CONFIG_HOME/gemini-box/config.json"
	inject start-fail
	gb -p hi
	expect_rc 71
	grep -q '^gemini-box: podman run failed: unable to start container' "$T/err" ||
		fail "the message does not name podman run"
	inject start-fail
	gb -p again # the box is there now, made but not started
	expect_rc 71
	grep -q '^gemini-box: podman start gemini-box-.* failed: unable to start container' "$T/err" ||
		fail "the message does not name podman start"
	grep -q 'runtime-flag' "$T/err" && fail "the message names a runtime flag as the verb"
	return 0
}

# The box's init takes its lock even when a run's shared probe holds it at
# that moment: it tries again rather than running without it for good.
t_init_takes_the_lock_after_a_probe() {
	local init lock pid
	init=$(dirname "$BIN")/gemini-box-init
	[ -x "$init" ] || fail "no gemini-box-init next to $BIN"
	lock=$T/lock
	: >"$lock"
	flock -s "$lock" sleep 0.5 &
	sleep 0.1
	"$init" --lock "$lock" --idle-seconds 0 2>"$T/err" &
	pid=$!
	sleep 1.5
	flock -s -n "$lock" true && fail "the init does not hold the lock after the probe let go"
	kill "$pid"
	wait "$pid" 2>/dev/null
	grep -q 'cannot hold' "$T/err" && fail "the init gave up on its lock"
	return 0
}

# "gemini_version" picks that release's official image unless "image" is set;
# a project file may not choose it without approval (the program that gets
# the keys).
t_gemini_version_picks_the_image() {
	unset GEMINI_IMAGE
	mkdir -p "$XDG_CONFIG_HOME/gemini-box" .gemini
	echo '{"gemini_version": "0.60.1"}' >"$XDG_CONFIG_HOME/gemini-box/config.json"
	gb --box-dry-run -p hi
	expect_rc 0
	grep -q ' us-docker.pkg.dev/gemini-code-dev/gemini-cli/sandbox:0.60.1 --lock ' "$T/out" ||
		fail "the box is not made from the 0.60.1 image"
	echo '{"gemini_version": "0.60.1", "image": "mine:1"}' >"$XDG_CONFIG_HOME/gemini-box/config.json"
	gb --box-dry-run -p hi
	grep -q ' mine:1 --lock ' "$T/out" || fail "image does not win over gemini_version"
	echo '{}' >"$XDG_CONFIG_HOME/gemini-box/config.json"
	echo '{"gemini_version": "0.1.0"}' >.gemini/gemini-box.json
	gb -p hi
	expect_rc 78
	grep -q 'gemini_version: a project file may not choose the gemini release' "$T/err" ||
		fail "a project's gemini_version is not refused"
}

# The doctor says when the box's gemini is another release than the host's.
t_doctor_compares_gemini_versions() {
	unset GEMINI_IMAGE
	mkdir -p "$T/bin"
	printf '#!/bin/sh\necho 0.59.0\n' >"$T/bin/gemini"
	chmod 755 "$T/bin/gemini"
	PATH=$T/bin:$PATH gb --box-doctor
	grep -q '^WARN  gemini 0.61.0 in the box, 0.59.0 on the host; set "gemini_version": "0.59.0"' "$T/out" ||
		fail "the doctor does not compare the releases"
	printf '#!/bin/sh\necho 0.61.0\n' >"$T/bin/gemini"
	PATH=$T/bin:$PATH gb --box-doctor
	grep -q '^OK    gemini 0.61.0 in the box and on the host' "$T/out" || fail "no OK for equal releases"
}

# "image": "local" makes gemini-box's own image once (mmdebstrap, podman
# import), removes the tarball, and never pulls.
t_local_image_is_made_once() {
	mkdir -p "$T/bin"
	ln -s "$HERE/fake-mmdebstrap" "$T/bin/mmdebstrap"
	export PATH=$T/bin:$PATH GEMINI_IMAGE=local
	gb -p hi
	expect_rc 0
	[ "$(calls | tr '\n' ' ')" = "container inspect image exists import run exec " ] ||
		fail "unexpected calls: $(calls | tr '\n' ' ')"
	grep -q -- '--mode=unshare .* trixie .*/gemini-box/images/0.61.0-.*\.tar$' "$FAKE_PODMAN_STATE/mmdebstrap.log" ||
		fail "mmdebstrap was not run as planned"
	ls "$XDG_DATA_HOME"/gemini-box/images/*.tar 2>/dev/null && fail "the tarball was left behind"
	grep -q '^localhost/gemini-box-default:0.61.0-' "$FAKE_PODMAN_STATE/images" || fail "no image was imported"
	mkdir ../q && cd ../q || fail "cd"
	gb -p again
	expect_rc 0
	[ "$(grep -c . "$FAKE_PODMAN_STATE/mmdebstrap.log")" = 1 ] || fail "the image was made twice"
	# Without mmdebstrap (a PATH with only what the fake podman needs): one
	# line saying what to install.
	local tool
	mkdir "$T/bare"
	for tool in env python3 flock sleep; do ln -s "$(command -v "$tool")" "$T/bare/$tool"; done
	GB_PATH=$T/bare GEMINI_BOX_GEMINI_VERSION=0.60.0 gb --box-build
	expect_rc 69
	grep -q '^gemini-box: mmdebstrap not found' "$T/err" || fail "no line naming mmdebstrap"
}

# The first launch in a new project, with an image a box was made from
# before, is one podman run: nothing is asked first. When the image went
# away since, the long way asks, pulls and runs.
t_first_launch_is_one_podman_run() {
	gb -p one
	expect_rc 0
	mkdir ../q && cd ../q || fail "cd"
	gb -p two
	expect_rc 0
	[ "$(calls | tr '\n' ' ')" = "run exec " ] || fail "unexpected calls: $(calls | tr '\n' ' ')"
	: >"$FAKE_PODMAN_STATE/images"
	mkdir ../r && cd ../r || fail "cd"
	gb -p three
	expect_rc 0
	grep -qx 'fake-gemini -p three' "$T/out" || fail "gemini did not run"
	[ "$(calls | tr '\n' ' ')" = "run container inspect image exists pull run exec " ] ||
		fail "unexpected calls: $(calls | tr '\n' ' ')"
}

# A project's settings that other users can write are refused (they could
# choose what runs with the keys), with one line saying what to do.
t_project_settings_others_can_write_are_refused() {
	mkdir -p .gemini
	echo '{}' >.gemini/gemini-box.json
	chmod o+w .gemini/gemini-box.json
	gb -p hi
	expect_rc 78
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q '^gemini-box: refusing .*gemini-box.json.*other users can write it; chmod go-w it' "$T/err" ||
		fail "no one line refusing the file"
	[ "$(calls | grep -c .)" = 0 ] || fail "podman was asked: $(calls | tr '\n' ' ')"
}

# A ~/.gemini whose path holds ':' cannot be overlaid by podman: refused in
# one line (exit 66), before podman is asked anything.
t_gemini_home_with_a_colon_is_refused() {
	mkdir -p "$T/ho:me"
	HOME=$T/ho:me gb -p hi
	expect_rc 66
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "^gemini-box: cannot share .*podman cannot overlay a path holding ':' or ','" "$T/err" ||
		fail "no one line refusing ~/.gemini"
	[ "$(calls | grep -c .)" = 0 ] || fail "podman was asked: $(calls | tr '\n' ' ')"
}

# --box-doctor --box-dry-run asks podman only read-only questions.
t_doctor_dry_run_runs_nothing() {
	gb --box-doctor --box-dry-run
	calls | grep -vxE 'container inspect|image exists|ps' && fail "a dry run of the doctor ran podman: $(calls | tr '\n' ' ')"
	grep -q -- '--version' "$T/out" || fail "the dry run does not show podman --version"
	return 0
}

TESTS=$(declare -F | sed -n 's/^declare -f t_//p')
ROOT=$(mktemp -d /tmp/gb-hermetic.XXXXXX)
trap 'pkill -f "flock -x $ROOT" 2>/dev/null; rm -rf "$ROOT"' EXIT
for name in $TESTS; do
	T=$ROOT/$name
	mkdir -p "$T/home" "$T/run" "$T/state/inject" "$T/p"
	chmod 700 "$T/run"
	echo localhost/gemini-box-test:latest >"$T/state/images"
	: >"$T/state/log"
	(
		cd "$T/p" || exit 1
		export HOME=$T/home XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/home/.config \
			XDG_DATA_HOME=$T/home/.local/share FAKE_PODMAN_STATE=$T/state \
			GEMINI_BOX_PODMAN=$FAKE GEMINI_IMAGE=localhost/gemini-box-test:latest
		unset CI TMPDIR
		"t_$name"
	) >"$T/log" 2>&1
	if [ $? = 0 ]; then
		PASSED=$((PASSED + 1))
		echo "ok   $name"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL $name"
		sed 's/^/    /' "$T/log"
	fi
	pkill -f "flock -x $T" 2>/dev/null
done
echo "$PASSED passed, $FAILED failed"
[ $FAILED = 0 ]
