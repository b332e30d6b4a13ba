#!/bin/bash
# gemini-box integration tests: real rootless podman, a stand-in gemini image.
#
#   tests/integration/run.sh BINARY
#
# As root (CI, `make test`): installs the test packages (scripts/ensure-deps.sh
# test), prepares rootless podman for a dedicated test user (default gbtest,
# override with GB_TEST_USER): subordinate ids, /dev/net/tun, a shared /, runc
# (see /work/shared/notes/podman-on-these-machines.md), copies BINARY and these
# scripts to a directory that user can read, and runs itself again as that user.
# As any other user: runs the tests directly; podman must already work.
#
# Each test runs in a fresh project directory under $HOME/gb-it.XXXXXX, against
# the image localhost/gemini-box-test:latest (built by build-image.sh when absent
# or outdated; the stand-in gemini is image/gemini, see its header for what it
# reports and obeys). Boxes whose gemini-box.dir label lies in that directory are
# removed after each test, at the end and on interrupt.
#
# Environment knobs:
#   GB_IT_ONLY=REGEX   run only the tests whose name matches REGEX
#   GB_IT_KEEP=1       keep the test directory and boxes (for debugging)
#   GB_IT_TIMEOUT=N    seconds allowed to one gemini-box run (default 60)
#   GB_IT_VERBOSE=1    print every test's log, not only the failing ones'
# The last line of output is "N passed, N failed, N skipped"; the exit status is
# 0 only when nothing failed.

# shellcheck disable=SC2015 # "test && test || fail" is meant: fail if either fails
# shellcheck disable=SC2016 # single-quoted $ and backquotes are test data

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -ne 1 ]; then
	echo "usage: $0 BINARY" >&2
	echo "0 passed, 1 failed"
	exit 2
fi

say() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------------------
# Root: prepare the machine and a test user, then run as that user.
# ---------------------------------------------------------------------------
root_fail() {
	say "run.sh: $*"
	echo "0 passed, 1 failed"
	return 1
}

root_main() {
	local bin=$1 repo user home start stage rc
	repo=$(cd "$HERE/../.." && pwd)
	user=${GB_TEST_USER:-gbtest}

	if [ -f "$repo/scripts/ensure-deps.sh" ]; then
		sh "$repo/scripts/ensure-deps.sh" test || {
			root_fail "scripts/ensure-deps.sh test failed"
			return
		}
	else
		say "run.sh: $repo/scripts/ensure-deps.sh not found; assuming packages are installed"
	fi
	[ -f "$bin" ] && [ -x "$bin" ] || {
		root_fail "$bin is not an executable file (run make first)"
		return
	}

	if ! id -u "$user" >/dev/null 2>&1; then
		useradd -m -s /bin/bash "$user" || {
			root_fail "useradd $user failed"
			return
		}
	fi
	home=$(getent passwd "$user" | cut -d: -f6)
	[ -d "$home" ] || { mkdir -p "$home" && chown "$user:" "$home"; }
	for f in /etc/subuid /etc/subgid; do
		touch "$f"
		if ! grep -q "^$user:" "$f"; then
			# First free range above every existing one (and at least 100000).
			start=$(awk -F: '{e = $2 + $3; if (e > m) m = e} END {print (m > 100000 ? m : 100000)}' "$f")
			echo "$user:$start:65536" >>"$f"
		fi
	done

	# slirp4netns opens /dev/net/tun as the user.
	if [ ! -e /dev/net/tun ]; then
		modprobe tun 2>/dev/null || true
		[ -e /dev/net/tun ] || { mkdir -p /dev/net && mknod /dev/net/tun c 10 200; }
	fi
	chmod 666 /dev/net/tun || say "run.sh: warning: chmod 666 /dev/net/tun failed"
	# Otherwise every podman call warns that / is not a shared mount.
	mount --make-rshared / 2>/dev/null || say "run.sh: warning: mount --make-rshared / failed"

	# Test-machine setting (crun refuses hybrid cgroups here); not gemini-box's
	# job. The test user is meant to be a dedicated one: this file is replaced.
	runuser -u "$user" -- mkdir -p "$home/.config/containers"
	printf '[engine]\nruntime = "runc"\n' >"$home/.config/containers/containers.conf"
	chown "$user:" "$home/.config/containers/containers.conf"

	stage=$(mktemp -d /tmp/gemini-box-it.XXXXXX) || {
		root_fail "mktemp failed"
		return
	}
	chmod 755 "$stage"
	# The user part keeps its would-be summary here, should it be killed.
	: >"$stage/progress"
	chown "$user:" "$stage/progress"
	cp "$bin" "$stage/gemini-box"
	# The box's init comes with gemini-box, from next to it.
	if [ -f "$(dirname "$bin")/gemini-box-init" ]; then
		cp "$(dirname "$bin")/gemini-box-init" "$stage/gemini-box-init"
		chmod 755 "$stage/gemini-box-init"
	fi
	cp -R "$HERE" "$stage/integration"
	# What another real user plants (cases-containment.sh): a sticky shared
	# directory of theirs holding .git and a project file, like /tmp with a
	# /tmp/.git, and a TMPDIR where they made gemini/ide first.
	id -u gbother >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin gbother || {
		root_fail "useradd gbother failed"
		return
	}
	mkdir -m 1777 "$stage/planted" "$stage/planted-tmp" && chown gbother: "$stage/planted" "$stage/planted-tmp"
	runuser -u gbother -- sh -c 'umask 022 && mkdir -p "$1/.git" "$1/.gemini" "$2/gemini/ide" &&
		echo "{\"mounts\": [{\"source\": \"/\", \"target\": \"/host\"}]}" >"$1/.gemini/gemini-box.json"' \
		- "$stage/planted" "$stage/planted-tmp" || {
		root_fail "cannot plant the files of gbother"
		return
	}
	chmod -R a+rX "$stage"
	# The real gemini CLI for the tests that need it (about a minute, once;
	# cached in /var/cache/gemini-box-tests). GB_IT_REAL_GEMINI=0 skips them.
	real_image=
	if [ "${GB_IT_REAL_GEMINI:-1}" != 0 ]; then
		real_image=localhost/gemini-box-real:0.61.0
		bash "$HERE/build-gemini-image.sh" "$user" "$real_image" || {
			root_fail "could not build the real gemini image (tests/integration/build-gemini-image.sh)"
			return
		}
	fi
	chmod 755 "$stage/gemini-box" "$stage/integration/"*.sh "$stage/integration/image/gemini"

	# A clean environment: none of root's variables (secrets, XDG_RUNTIME_DIR,
	# PATH with root-only directories) may leak into the tests. No
	# XDG_RUNTIME_DIR: rootless podman then uses /tmp/podman-run-UID on its own.
	cd / || {
		root_fail "cd / failed"
		return
	}
	runuser -u "$user" -- env -i \
		HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 ${CI+CI="$CI"} ${GITHUB_ACTIONS+GITHUB_ACTIONS="$GITHUB_ACTIONS"} \
		${GB_IT_ONLY+GB_IT_ONLY="$GB_IT_ONLY"} ${GB_IT_KEEP+GB_IT_KEEP="$GB_IT_KEEP"} \
		${GB_IT_TIMEOUT+GB_IT_TIMEOUT="$GB_IT_TIMEOUT"} \
		${GB_IT_VERBOSE+GB_IT_VERBOSE="$GB_IT_VERBOSE"} \
		GB_IT_DEDICATED_USER=1 GB_IT_PROGRESS="$stage/progress" \
		GB_IT_PLANTED="$stage/planted" GB_IT_PLANTED_TMP="$stage/planted-tmp" \
		${real_image:+GB_IT_REAL_IMAGE="$real_image"} \
		bash "$stage/integration/run.sh" "$stage/gemini-box"
	rc=$?
	if [ $rc -gt 128 ]; then
		# Killed (runuser SIGKILLs it 2 s after passing on a signal): end with
		# the summary it could not print.
		say "run.sh: interrupted"
		if [ -s "$stage/progress" ]; then cat "$stage/progress"; else echo "0 passed, 1 failed"; fi
	fi
	rm -rf "$stage"
	return $rc
}

if [ "$(id -u)" = 0 ]; then
	# A trap (not an ignore, which the child would inherit): the child, in the
	# same process group, gets the signal too and cleans up its boxes; then this
	# shell removes the staging directory.
	trap : INT TERM
	root_main "$1"
	exit
fi

# ---------------------------------------------------------------------------
# User part.
# ---------------------------------------------------------------------------
BIN=$(realpath -e -- "$1" 2>/dev/null) || BIN=
IMAGE=localhost/gemini-box-test:latest
IMAGE_ALT=localhost/gemini-box-test:alt
GB_TIMEOUT=${GB_IT_TIMEOUT:-60}
LOGGER=$HERE/podman-logger.sh
TMUX_SOCKET=gb-it-$$
PASSED=0 FAILED=0 SKIPPED=0
FAILED_NAMES=()
TESTROOT=

summary() { echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"; }
# save_progress: the summary should the run be cut short now (counted as one
# more failure), for the root part to print if this shell gets killed.
save_progress() {
	[ -n "${GB_IT_PROGRESS:-}" ] || return 0
	echo "$PASSED passed, $((FAILED + 1)) failed, $SKIPPED skipped" >"$GB_IT_PROGRESS"
}
setup_fail() {
	say "run.sh: $*"
	echo "0 passed, 1 failed"
	exit 1
}

[ -n "$BIN" ] && [ -x "$BIN" ] || setup_fail "$1: no such executable (run make first)"
command -v podman >/dev/null 2>&1 || setup_fail "podman not found on PATH"
if ! podman info >/dev/null 2>"/tmp/gb-it-podman-info.$$"; then
	say "run.sh: 'podman info' fails for $(id -un); rootless podman must work to run these tests:"
	sed 's/^/    /' "/tmp/gb-it-podman-info.$$" >&2
	rm -f "/tmp/gb-it-podman-info.$$"
	setup_fail "podman does not work"
fi
rm -f "/tmp/gb-it-podman-info.$$"
for tool in tmux timeout realpath sha256sum awk stat; do
	command -v "$tool" >/dev/null 2>&1 || setup_fail "$tool not found (scripts/ensure-deps.sh test)"
done
bash "$HERE/build-image.sh" "$IMAGE" || setup_fail "could not build the test image"
podman tag "$IMAGE" "$IMAGE_ALT" || setup_fail "podman tag failed"

# Not inside any git work tree, so "no .git above" tests mean what they say.
TESTROOT=$(mktemp -d "$HOME/gb-it.XXXXXX") && TESTROOT=$(realpath -e "$TESTROOT") ||
	setup_fail "cannot make a test directory in $HOME"
chmod 755 "$TESTROOT"
VERSION=$("$BIN" --box-version 2>/dev/null | sed -n 's/^gemini-box \([0-9][0-9.]*\)$/\1/p')

# Forwarded or otherwise meaningful variables must come from the tests only.
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GENAI_USE_VERTEXAI GOOGLE_GENAI_USE_GCA \
	GOOGLE_CLOUD_PROJECT GOOGLE_CLOUD_LOCATION GOOGLE_GEMINI_BASE_URL \
	GOOGLE_VERTEX_BASE_URL GEMINI_MODEL GEMINI_CLI_TRUST_WORKSPACE GEMINI_SANDBOX \
	SANDBOX GEMINI_BOX_PODMAN GB_PODMAN_LOG TERM_PROGRAM COLORTERM TMUX
while IFS='=' read -r name _; do
	case $name in GEMINI_CLI_IDE_* | GEMINI_BOX_*) unset "$name" ;; esac
done < <(env)
export GEMINI_IMAGE=$IMAGE
# gemini-box reads the user's settings from $XDG_CONFIG_HOME/gemini-box: give
# it an empty one, and podman (which reads $XDG_CONFIG_HOME/containers) its own.
real_config=${XDG_CONFIG_HOME:-$HOME/.config}
mkdir -p "$TESTROOT/config"
[ -e "$real_config/containers" ] && ln -s "$real_config/containers" "$TESTROOT/config/containers"
export XDG_CONFIG_HOME=$TESTROOT/config

# --- cleanup ----------------------------------------------------------------

# remove_boxes_under DIR: podman rm -f every box whose gemini-box.dir is DIR or
# lies below it.
remove_boxes_under() {
	local prefix=$1 id dir
	[ -n "$prefix" ] || return 0
	for id in $(podman ps -a -q --no-trunc --filter label=gemini-box.dir 2>/dev/null); do
		dir=$(podman container inspect --format '{{index .Config.Labels "gemini-box.dir"}}|' "$id" 2>/dev/null) || continue
		dir=${dir%|}
		case $dir in
		"$prefix" | "$prefix"/*) podman rm -f -t 0 "$id" >/dev/null 2>&1 ;;
		esac
	done
}

# home_git_is_not_a_project makes an empty ~/.git, gemini_dir_is_created moves
# ~/.gemini away; this undoes both.
undo_home_changes() {
	[ -n "$TESTROOT" ] || return 0
	if [ -e "$TESTROOT/home-git-made" ]; then
		rmdir "$HOME/.git" 2>/dev/null
		rm -f "$TESTROOT/home-git-made"
	fi
	if [ -e "$TESTROOT/gemini-dir-moved" ]; then
		if [ -e "$HOME/.gemini.gb-it-saved" ]; then
			rm -rf "$HOME/.gemini"
			mv "$HOME/.gemini.gb-it-saved" "$HOME/.gemini"
		fi
		rm -f "$TESTROOT/gemini-dir-moved"
	fi
}

final_cleanup() {
	tmux -L "$TMUX_SOCKET" kill-server >/dev/null 2>&1
	undo_home_changes
	if [ -n "$TESTROOT" ] && [ -z "${GB_IT_KEEP:-}" ]; then
		remove_boxes_under "$TESTROOT"
		podman untag "$IMAGE_ALT" "$IMAGE_ALT" >/dev/null 2>&1 # only that name
		chmod -R u+rwX "$TESTROOT" 2>/dev/null
		rm -rf "$TESTROOT"
	elif [ -n "$TESTROOT" ]; then
		say "run.sh: kept $TESTROOT and its boxes (GB_IT_KEEP)"
	fi
}

on_signal() {
	trap - INT TERM
	say "run.sh: interrupted; cleaning up"
	# runuser SIGKILLs this shell 2 s after passing the signal on: clean up in a
	# process of its own, which that does not reach.
	(
		trap '' INT TERM HUP
		# A podman create cut short may land just after a first look.
		[ -n "$TESTROOT" ] && [ -z "${GB_IT_KEEP:-}" ] && remove_boxes_under "$TESTROOT" && sleep 1
		final_cleanup
	) &
	wait $!
	FAILED=$((FAILED + 1))
	summary
	exit 130
}
trap on_signal INT TERM

# ---------------------------------------------------------------------------
# Helpers used inside tests. A test runs in a subshell with its own directory
# $T (logs, scratch) and starts in the project directory $T/p.
# ---------------------------------------------------------------------------

qargs() {
	local a out=
	for a in "$@"; do out+=" $(printf '%q' "$a")"; done
	printf '%s' "${out# }"
}

# esc VALUE: the stand-in's escaping of a report value.
esc() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	printf '%s' "$s"
}

LAST_CMD=
# gb ARGS...: run gemini-box (stdin inherited, /dev/null unless redirected);
# stdout goes to $T/out, stderr to $T/err, the status to $RC. (timeout runs in
# the foreground so that an interrupt of the suite reaches gemini-box too.)
gb() {
	LAST_CMD="gemini-box $(qargs "$@")"
	echo "\$ $LAST_CMD    # in $(qargs "$PWD")"
	timeout --foreground -k 5 "$GB_TIMEOUT" "$BIN" "$@" >"$T/out" 2>"$T/err"
	RC=$?
	echo "  exit $RC"
	return 0
}

show_last() {
	[ -n "$LAST_CMD" ] || return 0
	echo "  last run: $LAST_CMD  -> exit ${RC:-?}"
	echo "  --- its stdout:"
	head -n 60 "$T/out" 2>/dev/null | sed 's/^/  | /'
	echo "  --- its stderr:"
	head -n 30 "$T/err" 2>/dev/null | sed 's/^/  | /'
}

fail() {
	echo "FAIL: $*"
	show_last
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# rget KEY [FILE]: the value of report line KEY=... (status 1 when absent).
rget() {
	awk -v k="$1" 'BEGIN { k = k "=" }
		index($0, k) == 1 { print substr($0, length(k) + 1); found = 1; exit }
		END { exit !found }' "${2:-$T/out}"
}

expect_rc() {
	[ "$RC" = "$1" ] || fail "expected exit status $1, got $RC"
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected [$2], got [$1]"
}

# expect_report: the last run printed a complete report of the stand-in.
expect_report() {
	grep -qx 'gemini-stub=begin' "$T/out" && grep -qx 'gemini-stub=end' "$T/out" ||
		fail "no complete report from the stand-in gemini"
}

# expect_ok: exit 0 with a complete report.
expect_ok() {
	expect_rc 0
	expect_report
}

# expect_args ARGS...: the stand-in received exactly ARGS, in order.
expect_args() {
	local i=0 a got
	got=$(rget argc) || fail "no argc in the report"
	expect_eq "$got" "$#" "argument count"
	for a in "$@"; do
		i=$((i + 1))
		got=$(rget "arg.$i") || fail "argument $i missing"
		expect_eq "$got" "$(esc "$a")" "argument $i (escaped)"
	done
}

# expect_env NAME VALUE / expect_no_env NAME: gemini's environment.
expect_env() {
	local got
	got=$(rget "env.$1") || fail "$1 is not set in the box (expected [$2])"
	expect_eq "$got" "$(esc "$2")" "$1 in the box"
}
expect_no_env() {
	local got
	if got=$(rget "env.$1"); then fail "$1 is set in the box to [$got]; expected unset"; fi
}

# expect_error STATUS: exit STATUS and exactly one stderr line "gemini-box: ...".
expect_error() {
	expect_rc "$1"
	local n
	n=$(wc -l <"$T/err")
	[ "$n" -eq 1 ] || fail "expected exactly one stderr line, got $n"
	grep -q '^gemini-box: ' "$T/err" || fail "the stderr line does not start with 'gemini-box: '"
}

# boxes_of DIR: the full ids of the boxes whose gemini-box.dir label is DIR's
# real path (labels are compared exactly, byte for byte).
boxes_of() {
	local real id dir
	real=$(realpath -e -- "$1") || return 1
	for id in $(podman ps -a -q --no-trunc --filter label=gemini-box.dir); do
		dir=$(podman container inspect --format '{{index .Config.Labels "gemini-box.dir"}}|' "$id" 2>/dev/null) || continue
		[ "${dir%|}" = "$real" ] && echo "$id"
	done
}

# box_of DIR: sets BOX to the id of DIR's one box (fails unless exactly one).
box_of() {
	local ids n
	ids=$(boxes_of "$1")
	n=$(printf '%s' "$ids" | grep -c .)
	[ "$n" -eq 1 ] || fail "expected exactly one box labelled gemini-box.dir=$(realpath -- "$1"), found $n"
	BOX=$ids
}

expect_no_box() {
	local ids
	ids=$(boxes_of "$1")
	[ -z "$ids" ] || fail "expected no box for $1, found: $ids"
}

# inspect FORMAT [BOX]
inspect() {
	podman container inspect --format "$1" "${2:-$BOX}"
}

box_running() {
	[ "$(inspect '{{.State.Running}}')" = true ]
}

# expect_box_name DIR: the box's name follows the contract.
expect_box_name() {
	local name real hash
	real=$(realpath -e -- "$1")
	name=$(inspect '{{.Name}}')
	hash=$(printf '%s' "$real" | sha256sum | cut -c1-12)
	[ "${#name}" -le 63 ] || fail "box name longer than 63 characters (${#name}): $name"
	[[ $name =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ ]] || fail "box name has invalid characters: $name"
	[[ $name == gemini-box-*-"$hash" ]] || fail "box name [$name] is not gemini-box-<slug>-$hash (sha256 of [$real])"
}

now_ms() { date +%s%3N; }

# read_log FILE: sets LOG_RECORDS (one podman invocation per element, words
# separated by \x1f) from podman-logger.sh's NUL-separated log.
read_log() {
	local w cur='' first=1
	LOG_RECORDS=()
	while IFS= read -r -d '' w; do
		if [ "$w" = --end-- ]; then
			LOG_RECORDS+=("$cur")
			cur='' first=1
		elif [ -n "$first" ]; then
			cur=$w first=
		else
			cur+=$'\x1f'$w
		fi
	done <"$1"
}

# record_sub RECORD: the podman subcommand of one logged invocation (skipping
# global options), e.g. "exec", "create", "container inspect", "image exists".
record_sub() {
	local -a w
	IFS=$'\x1f' read -r -d '' -a w < <(printf '%s\x1f' "$1")
	local i=0
	while [ $i -lt ${#w[@]} ] && [[ ${w[$i]} == -* ]]; do i=$((i + 1)); done
	case ${w[$i]:-} in
	container | image | volume | network) echo "${w[$i]} ${w[$((i + 1))]:-}" ;;
	*) echo "${w[$i]:-}" ;;
	esac
}

# has_opt OPT VALUE WORDS...: WORDS hold "OPT VALUE" or "OPT=VALUE".
has_opt() {
	local opt=$1 val=$2 prev=
	shift 2
	for w in "$@"; do
		[ "$prev" = "$opt" ] && [ "$w" = "$val" ] && return 0
		[ "$w" = "$opt=$val" ] && return 0
		prev=$w
	done
	return 1
}

# tty_run [NAME=VALUE...] -- ARGS...: run gemini-box with ARGS in the current
# directory under a real terminal (a detached tmux session), with CI and
# GITHUB_ACTIONS unset unless given. The stand-in's report (copied to
# ./.gemini-stub-report) lands in $T/out, stderr in $T/err, the status in $RC.
# With GB_TTY_STDOUT=FILE / GB_TTY_STDIN=FILE, gemini-box's stdout / stdin is
# that file instead of the terminal.
tty_run() {
	local envs=() i
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	: >.gemini-stub-report
	rm -f "$T/tty.rc" "$T/tty.rc.tmp"
	{
		echo 'unset CI GITHUB_ACTIONS'
		echo 'export TERM=xterm-256color'
		printf 'cd %q || exit\n' "$PWD"
		for i in "${envs[@]}"; do printf 'export %q\n' "$i"; done
		printf '%q' "$BIN"
		for i in "$@"; do printf ' %q' "$i"; done
		printf ' 2>%q' "$T/tty.err"
		[ -n "${GB_TTY_STDOUT:-}" ] && printf ' >%q' "$GB_TTY_STDOUT"
		[ -n "${GB_TTY_STDIN:-}" ] && printf ' <%q' "$GB_TTY_STDIN"
		printf '\necho $? >%q && mv %q %q\n' "$T/tty.rc.tmp" "$T/tty.rc.tmp" "$T/tty.rc"
	} >"$T/tty.sh"
	LAST_CMD="(under a terminal) ${envs[*]} gemini-box $(qargs "$@")"
	echo "\$ $LAST_CMD    # in $(qargs "$PWD")"
	TERM=xterm-256color tmux -L "$TMUX_SOCKET" -f /dev/null \
		new-session -d -x 200 -y 50 "bash $(printf %q "$T/tty.sh")" ||
		fail "tmux new-session failed"
	for ((i = 0; i < GB_TIMEOUT * 10; i++)); do
		[ -f "$T/tty.rc" ] && break
		sleep 0.1
	done
	[ -f "$T/tty.rc" ] || fail "the run under tmux did not finish within ${GB_TIMEOUT}s"
	RC=$(cat "$T/tty.rc")
	cp .gemini-stub-report "$T/out"
	cp "$T/tty.err" "$T/err" 2>/dev/null || : >"$T/err"
	rm -f .gemini-stub-report
	echo "  exit $RC"
}

# ---------------------------------------------------------------------------
# Tests. Each is a function t_NAME; TESTS lists them in running order.
# ---------------------------------------------------------------------------
TESTS=()
tcase() { TESTS+=("$1"); }

tcase version_and_help
t_version_and_help() {
	gb --box-version
	expect_rc 0
	[[ $(cat "$T/out") =~ ^gemini-box\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
		fail "--box-version should print 'gemini-box X.Y.Z'"
	gb --box-help
	expect_rc 0
	grep -q -- '--box-dir' "$T/out" || fail "--box-help does not mention --box-dir"
	expect_no_box .
}

tcase first_run_creates_box_later_runs_reuse_it
t_first_run_creates_box_later_runs_reuse_it() {
	local id started
	expect_no_box .
	gb -p hello
	expect_ok
	expect_args -p hello
	[ -z "$(ls -A)" ] || fail "gemini-box wrote into the project directory: $(ls -A)"
	box_of .
	id=$BOX
	expect_box_name .
	box_running || fail "box not running after the first run"
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.version"}}')" "$VERSION" "label gemini-box.version"
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.image"}}')" "$IMAGE" "label gemini-box.image"
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE" "the box's image"
	started=$(inspect '{{.State.StartedAt}}')
	gb -p again
	expect_ok
	expect_args -p again
	box_of .
	expect_eq "$BOX" "$id" "container id on the second run"
	gb
	expect_ok
	expect_args
	box_of .
	expect_eq "$BOX" "$id" "container id on the third run"
	expect_eq "$(inspect '{{.State.StartedAt}}')" "$started" "StartedAt (the running box must not be restarted)"
}

tcase prompt_first_run_leaves_usable_box
t_prompt_first_run_leaves_usable_box() {
	local id
	gb -p exit:0
	expect_ok
	box_of .
	id=$BOX
	sleep 1
	box_running || fail "box stopped after a -p first run (is gemini its main process?)"
	gb -p second
	expect_ok
	expect_args -p second
	gb mcp list
	expect_ok
	box_of .
	expect_eq "$BOX" "$id" "container id after later runs"
	box_running || fail "box not running after later runs"
}

tcase main_process_is_not_gemini_and_stop_is_fast
t_main_process_is_not_gemini_and_stop_is_fast() {
	local cmd t0 t1 id
	gb -p hi
	expect_ok
	box_of .
	id=$BOX
	cmd="$(inspect '{{.Path}} {{join .Args " "}}')"
	echo "main process: $cmd"
	[[ $cmd == "/run/gemini-box/init --lock "* ]] || fail "the box's main process is not gemini-box-init: $cmd"
	podman top "$BOX" pid args | awk '$1 == 1' | grep -q '/run/gemini-box/init' ||
		fail "PID 1 in the box is not gemini-box-init: $(podman top "$BOX" pid args)"
	# Orphans of a run are reparented to PID 1, which must reap them.
	gb --box-shell < <(printf '(sleep 0.3 &) ; (sleep 0.3 &) ; exit 0\n')
	expect_rc 0
	sleep 1.5
	podman exec "$BOX" sh -c 'cat /proc/[0-9]*/stat 2>/dev/null' | awk '$3 == "Z"' >"$T/zombies"
	[ -s "$T/zombies" ] && fail "zombies in the box: $(cat "$T/zombies")"
	# SIGTERM ends the init at once; an init that ignored it would have podman
	# wait out the whole timeout.
	t0=$(now_ms)
	podman stop -t 10 "$BOX" >/dev/null || fail "podman stop failed"
	t1=$(now_ms)
	echo "podman stop took $((t1 - t0)) ms"
	[ $((t1 - t0)) -lt 3000 ] || fail "podman stop -t 10 took $((t1 - t0)) ms (signals not forwarded/reaped?)"
	box_running && fail "box still running after podman stop"
	gb -p after-stop
	expect_ok
	box_of .
	expect_eq "$BOX" "$id" "container id after stop"
}

tcase stopped_box_restarts
t_stopped_box_restarts() {
	local id
	gb -p one
	expect_ok
	box_of .
	id=$BOX
	podman stop -t 2 "$BOX" >/dev/null || fail "podman stop failed"
	box_running && fail "box still running after podman stop"
	gb -p two
	expect_ok
	expect_args -p two
	box_of .
	expect_eq "$BOX" "$id" "container id after restart"
	box_running || fail "box not running after the run restarted it"
	podman kill "$BOX" >/dev/null || fail "podman kill failed"
	podman wait "$BOX" >/dev/null 2>&1
	box_running && fail "box still running after podman kill"
	gb -p three
	expect_ok
	box_of .
	expect_eq "$BOX" "$id" "container id after a killed box restarted"
}

tcase removed_box_is_recreated
t_removed_box_is_recreated() {
	local id
	gb -p one
	expect_ok
	box_of .
	id=$BOX
	podman rm -f -t 0 "$BOX" >/dev/null || fail "podman rm -f failed"
	expect_no_box .
	gb -p two
	expect_ok
	expect_args -p two
	box_of .
	[ "$BOX" != "$id" ] || fail "same container id after podman rm -f ($id)"
	box_running || fail "recreated box not running"
}

tcase piped_stdin_reaches_gemini
t_piped_stdin_reaches_gemini() {
	shopt -s lastpipe
	echo x | gb -p stdin
	expect_ok
	expect_eq "$(rget stdin)" 'x\n' "stdin seen by gemini"
	printf 'two\nlines "q" \\ end' | gb -p stdin
	expect_ok
	expect_eq "$(rget stdin)" "$(esc $'two\nlines "q" \\ end')" "stdin seen by gemini"
	head -c 300000 /dev/urandom >"$T/big"
	gb -p stdin <"$T/big"
	expect_ok
	expect_eq "$(rget stdin.bytes)" 300000 "stdin byte count (300000 bytes from a file)"
	expect_eq "$(rget stdin.sha256)" "$(sha256sum <"$T/big" | cut -d' ' -f1)" "stdin sha256"
	expect_eq "$(rget stdin.tty)" no "stdin is a TTY"
	gb -p stdin </dev/null
	expect_ok
	expect_eq "$(rget stdin.bytes)" 0 "stdin from /dev/null"
}

tcase exit_status_passes_through
t_exit_status_passes_through() {
	local n
	for n in 3 0 1 42 100; do
		gb -p "exit:$n"
		expect_report
		expect_rc "$n"
	done
}

# podman 4.3's exec relays no signal: gemini-box must, or a killed run leaves
# gemini working in the box and reports success.
tcase signals_reach_gemini
t_signals_reach_gemini() {
	local sig num pid rc i
	gb -p hi
	expect_ok
	box_of .
	for sig in TERM INT HUP; do
		num=$(kill -l "$sig")
		# A background job starts with SIGINT ignored, which gemini-box
		# respects as every program should: reset it for this test.
		timeout --foreground -k 5 "$GB_TIMEOUT" env --default-signal=INT,QUIT "$BIN" \
			-p pid sleep:30 say:finished >"$T/sig.out" 2>"$T/sig.err" &
		pid=$!
		for i in $(seq 1 200); do
			grep -q '^pid=' "$T/sig.out" && break
			sleep 0.05
		done
		grep -q '^pid=' "$T/sig.out" || fail "gemini did not start under gemini-box"
		kill -"$sig" "$pid"
		wait "$pid"
		rc=$?
		echo "SIG$sig: exit $rc"
		sed 's/^/  err| /' "$T/sig.err"
		grep -q '^said=finished' "$T/sig.out" && fail "gemini ran on to its end after SIG$sig"
		podman top "$BOX" args | grep -q 'sleep:30' && fail "gemini still runs in the box after SIG$sig"
		expect_eq "$rc" "$((128 + num))" "exit status after SIG$sig"
	done
}

tcase stdout_and_stderr_stay_apart
t_stdout_and_stderr_stay_apart() {
	gb -p say:to-stdout stderr:to-stderr
	expect_ok
	grep -qx 'to-stderr' "$T/out" && fail "gemini's stderr ended up on stdout"
	grep -qx 'said=to-stdout' "$T/out" || fail "gemini's stdout missing"
	grep -qx 'to-stderr' "$T/err" || fail "gemini's stderr missing"
}

tcase files_made_in_box_belong_to_user
t_files_made_in_box_belong_to_user() {
	gb -p "touch:$PWD/made-in-box" "mkdir:$PWD/dir-in-box/sub"
	expect_ok
	expect_eq "$(rget uid):$(rget gid)" 1000:1000 "uid:gid of gemini in the box"
	[ -f made-in-box ] || fail "made-in-box does not exist on the host"
	expect_eq "$(stat -c %u:%g made-in-box)" "$(id -u):$(id -g)" "owner of a file made in the box"
	expect_eq "$(stat -c %u:%g dir-in-box/sub)" "$(id -u):$(id -g)" "owner of a directory made in the box"
	rm -rf made-in-box dir-in-box || fail "cannot remove files made in the box"
}

tcase arguments_arrive_unchanged
t_arguments_arrive_unchanged() {
	local args=('' 'a b' "it's" 'say "hi"' $'line1\nline2' '*' '$HOME' '`id`' '$(id)'
		'-x' '--foo=bar' 'ü € 日本' $'tab\there' 'back\slash' '\n' '  lead and trail  '
		';' '|' '&&' '' '--' '--box-frob' '--box-dir' $'\r' '-p' '-t' 'last')
	gb -- "${args[@]}"
	expect_ok
	expect_args "${args[@]}"
	gb -p 'a b' '' "x'y" $'n\nl'
	expect_ok
	expect_args -p 'a b' '' "x'y" $'n\nl'
	gb --model "m o" --prompt="p'q"
	expect_ok
	expect_args --model "m o" --prompt="p'q"
}

tcase ide_variables_are_current_in_each_run
t_ide_variables_are_current_in_each_run() {
	local id
	# The agent: in an isolated box, which cannot reach the companion, its
	# token would only be a key to the IDE's tools; it stays out.
	mkdir iso
	GEMINI_CLI_IDE_SERVER_PORT=1111 GEMINI_CLI_IDE_AUTH_TOKEN=tok-zero gb --box-dir iso -p hi
	expect_ok
	expect_no_env GEMINI_CLI_IDE_SERVER_PORT
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
	grep -q 'cannot reach, so its variables stay out' "$T/err" || fail "no line says why the IDE variables stay out"
	own_config '{"network": "host"}'
	GEMINI_CLI_IDE_SERVER_PORT=1111 GEMINI_CLI_IDE_WORKSPACE_PATH="$PWD" GEMINI_CLI_IDE_PID=4242 \
		GEMINI_CLI_IDE_AUTH_TOKEN=tok-one GEMINI_CLI_IDE_SERVER_STDIO_ARGS='["a b","c"]' \
		GEMINI_CLI_IDE_SERVER_STDIO_COMMAND=/bin/true gb -p hi
	expect_ok
	expect_env GEMINI_CLI_IDE_SERVER_PORT 1111
	expect_env GEMINI_CLI_IDE_WORKSPACE_PATH "$PWD"
	expect_env GEMINI_CLI_IDE_PID 4242
	expect_env GEMINI_CLI_IDE_AUTH_TOKEN tok-one
	expect_env GEMINI_CLI_IDE_SERVER_STDIO_ARGS '["a b","c"]'
	expect_env GEMINI_CLI_IDE_SERVER_STDIO_COMMAND /bin/true
	box_of .
	id=$BOX
	GEMINI_CLI_IDE_SERVER_PORT=2222 GEMINI_CLI_IDE_PID=4343 GEMINI_CLI_IDE_AUTH_TOKEN=tok-two \
		GEMINI_CLI_IDE_SOMETHING_NEW='new value' gb -p hi
	expect_ok
	expect_env GEMINI_CLI_IDE_SERVER_PORT 2222
	expect_env GEMINI_CLI_IDE_PID 4343
	expect_env GEMINI_CLI_IDE_AUTH_TOKEN tok-two
	expect_env GEMINI_CLI_IDE_SOMETHING_NEW 'new value'
	expect_no_env GEMINI_CLI_IDE_WORKSPACE_PATH
	expect_no_env GEMINI_CLI_IDE_SERVER_STDIO_ARGS
	box_of .
	expect_eq "$BOX" "$id" "container id"
	gb -p hi
	expect_ok
	expect_no_env GEMINI_CLI_IDE_SERVER_PORT
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
}

tcase listed_variables_are_forwarded_others_not
t_listed_variables_are_forwarded_others_not() {
	local v
	local -A vals=(
		[TERM]=xterm-gbtest [COLORTERM]=truecolor [LANG]=C.UTF-8 [LC_TIME]=C [LC_ALL]=C.UTF-8
		[TERM_PROGRAM]=vscode [GEMINI_SANDBOX]=podman [GEMINI_API_KEY]=key-1
		[GOOGLE_API_KEY]=key-2 [GOOGLE_GENAI_USE_VERTEXAI]=true [GOOGLE_GENAI_USE_GCA]=false
		[GOOGLE_CLOUD_PROJECT]='proj x' [GOOGLE_CLOUD_LOCATION]=us-central1
		[GOOGLE_GEMINI_BASE_URL]='http://h:1/a?b=c&d' [GOOGLE_VERTEX_BASE_URL]=http://v
		[GEMINI_MODEL]=gemini-x [GEMINI_CLI_TRUST_WORKSPACE]=true
	)
	local -a assign=()
	for v in "${!vals[@]}"; do assign+=("$v=${vals[$v]}"); done
	assign+=(GB_NOT_FORWARDED=1 GOOGLE_APPLICATION_CREDENTIALS_X=1 MY_SECRET=s3)
	LAST_CMD="env ... gemini-box -p hi"
	env "${assign[@]}" timeout --foreground -k 5 "$GB_TIMEOUT" "$BIN" -p hi >"$T/out" 2>"$T/err"
	RC=$?
	expect_ok
	for v in "${!vals[@]}"; do expect_env "$v" "${vals[$v]}"; done
	expect_no_env GB_NOT_FORWARDED
	expect_no_env MY_SECRET
	expect_no_env GOOGLE_APPLICATION_CREDENTIALS_X
	expect_eq "$(rget env.HOME)" /home/node "HOME in the box"
}

tcase no_secret_in_box_or_podman_argv
t_no_secret_in_box_or_podman_argv() {
	local s1 s2 s3 r sub words w prev n_exec=0 n_create=0
	s1=sekret-XYZ-$RANDOM$RANDOM s2=ide-tok-$RANDOM$RANDOM s3=gkey-$RANDOM$RANDOM
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	export GEMINI_API_KEY=$s1 GEMINI_CLI_IDE_AUTH_TOKEN=$s2 GOOGLE_API_KEY=$s3
	: >"$GB_PODMAN_LOG"
	gb --box-dry-run -p hi
	expect_rc 0
	grep -qE "$s1|$s2|$s3" "$T/out" && fail "a secret value appears in --box-dry-run output"
	grep -q GEMINI_API_KEY "$T/out" || fail "--box-dry-run output does not forward GEMINI_API_KEY by name"
	gb -p hi # creates the box
	expect_ok
	expect_env GEMINI_API_KEY "$s1"
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN # an isolated box cannot use it
	expect_env GOOGLE_API_KEY "$s3"
	# The run's env file (values gemini-box supplies) is gone after the run.
	ls "${XDG_RUNTIME_DIR:-/tmp/gemini-box-$(id -u)}"/*/ 2>/dev/null | grep -q '^env-' &&
		fail "a run's env file outlived the run"
	gb -p again # reuses it
	expect_ok
	expect_env GEMINI_API_KEY "$s1"
	box_of .
	podman container inspect "$BOX" >"$T/inspect.json" || fail "podman inspect failed"
	grep -qE "$s1|$s2|$s3" "$T/inspect.json" && fail "a secret value is stored in the box (podman inspect)"
	[ -s "$GB_PODMAN_LOG" ] || fail "GEMINI_BOX_PODMAN was not used (empty log)"
	grep -qaE "$s1|$s2|$s3" "$GB_PODMAN_LOG" && fail "a secret value is on podman's command line"
	read_log "$GB_PODMAN_LOG"
	for r in "${LOG_RECORDS[@]}"; do
		sub=$(record_sub "$r")
		IFS=$'\x1f' read -r -d '' -a words < <(printf '%s\x1f' "$r")
		echo "podman call: $sub ($(qargs "${words[@]}"))"
		case $sub in
		exec | "container exec")
			n_exec=$((n_exec + 1))
			has_opt --env "SANDBOX=$(inspect '{{.Name}}')" "${words[@]}" ||
				fail "podman exec without --env SANDBOX=<box name>"
			has_opt --detach-keys "" "${words[@]}" || fail "podman exec without --detach-keys \"\""
			prev=
			for w in "${words[@]}"; do
				if [ "$prev" = --env ] || [ "$prev" = -e ]; then
					[[ $w == *=* && $w != SANDBOX=* ]] && fail "podman exec carries a value on its command line: $prev $w"
				fi
				[[ $w == --env=*=* && $w != --env=SANDBOX=* ]] && fail "podman exec carries a value: $w"
				prev=$w
			done
			;;
		create | "container create" | run)
			n_create=$((n_create + 1))
			for w in "${words[@]}"; do
				[[ $w == *GEMINI_API_KEY* || $w == *GEMINI_CLI_IDE* || $w == *GOOGLE_API_KEY* ]] &&
					fail "podman create mentions a per-run variable: $w"
			done
			;;
		esac
	done
	expect_eq "$n_create" 1 "number of podman create calls"
	expect_eq "$n_exec" 2 "number of podman exec calls"
}

tcase dry_run_runs_nothing
t_dry_run_runs_nothing() {
	local r sub line real name
	local -a words
	real=$(realpath .)
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	: >"$GB_PODMAN_LOG"
	gb --box-dry-run -p hi
	expect_rc 0
	expect_no_box .
	read_log "$GB_PODMAN_LOG"
	for r in "${LOG_RECORDS[@]}"; do
		sub=$(record_sub "$r")
		echo "podman call during --box-dry-run: $sub"
		case $sub in
		inspect | "container inspect" | "image inspect" | "image exists" | "container exists" | ps | version | info) ;;
		*) fail "--box-dry-run ran podman $sub" ;;
		esac
	done
	grep -q ' create ' "$T/out" || fail "--box-dry-run prints no create command for a new box"
	grep -q ' exec ' "$T/out" || fail "--box-dry-run prints no exec command"
	# Each line must be one shell-quoted command.
	local saw_create='' saw_exec=
	while IFS= read -r line; do
		eval "words=($line)" || fail "not shell-parseable: $line"
		case " ${words[*]} " in
		*" create "*)
			saw_create=1
			has_opt --userns keep-id:uid=1000,gid=1000 "${words[@]}" || fail "create line lacks --userns=keep-id:uid=1000,gid=1000"
			has_opt --user 1000:1000 "${words[@]}" || fail "create line lacks --user 1000:1000"
			has_opt --entrypoint /run/gemini-box/init "${words[@]}" || fail "create line lacks --entrypoint /run/gemini-box/init"
			has_opt --label "gemini-box.dir=$real" "${words[@]}" || fail "create line lacks the gemini-box.dir label"
			[ "${words[-5]}" = "$IMAGE" ] && [ "${words[-4]}" = --lock ] && [ "${words[-2]}" = --idle-seconds ] ||
				fail "create line does not end with IMAGE --lock FILE --idle-seconds N"
			;;
		*" exec "*)
			saw_exec=1
			has_opt --workdir "$real" "${words[@]}" || fail "exec line lacks --workdir $real"
			[ "${words[-3]}" = gemini ] && [ "${words[-2]}" = -p ] && [ "${words[-1]}" = hi ] ||
				fail "exec line does not end with: gemini -p hi"
			;;
		esac
	done <"$T/out"
	[ -n "$saw_create" ] && [ -n "$saw_exec" ] || fail "create/exec lines not recognised"

	# Running box: only exec is left to do.
	unset GEMINI_BOX_PODMAN
	gb -p hi
	expect_ok
	box_of .
	gb --box-dry-run -p hi
	expect_rc 0
	grep -q ' create ' "$T/out" && fail "dry run for a running box prints create"
	grep -q ' start ' "$T/out" && fail "dry run for a running box prints start"
	grep -q ' exec ' "$T/out" || fail "dry run for a running box prints no exec"
	# Stopped box: start then exec, and the box stays stopped.
	podman stop -t 2 "$BOX" >/dev/null
	gb --box-dry-run -p hi
	expect_rc 0
	grep -q ' start ' "$T/out" || fail "dry run for a stopped box prints no start"
	box_running && fail "--box-dry-run started the box"
	return 0
}

tcase dry_run_output_is_runnable
t_dry_run_output_is_runnable() {
	local d=$'dry run \'q\' "dq" $(touch PWNED) `x`\nnl'
	mkdir "$d" && cd "$d" || fail "mkdir"
	gb --box-dry-run -p say:ran-it
	expect_rc 0
	expect_no_box .
	cp "$T/out" "$T/dry.sh"
	LAST_CMD="bash $T/dry.sh (the dry-run output)"
	bash "$T/dry.sh" >"$T/out" 2>"$T/err"
	RC=$?
	[ -e PWNED ] || [ -e ../PWNED ] && fail "the dry-run output ran an embedded \$(...) command: bad quoting"
	expect_ok
	expect_eq "$(rget said)" ran-it "output of the dry-run commands"
	expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory"
	box_of .
	gb -p again
	expect_ok
	box_of .
}

tcase sandbox_is_box_name
t_sandbox_is_box_name() {
	SANDBOX=from-host gb -p hi
	expect_ok
	box_of .
	expect_env SANDBOX "$(inspect '{{.Name}}')"
}

tcase two_directories_two_boxes
t_two_directories_two_boxes() {
	local a b
	mkdir one two
	(cd one && gb -p hi && expect_ok) || exit 1
	(cd two && gb -p hi && expect_ok) || exit 1
	box_of one
	a=$BOX
	box_of two
	b=$BOX
	[ "$a" != "$b" ] || fail "one and two share a box"
	[ "$(inspect '{{.Name}}' "$a")" != "$(inspect '{{.Name}}' "$b")" ] || fail "same name"
	(cd one && gb -p "touch:$PWD/x" && expect_ok) || exit 1
	[ -e one/x ] || fail "one's box does not see one/"
	box_of one
	expect_eq "$BOX" "$a" "one's box after a second run"
}

# hostile NAME: a project directory called NAME works end to end.
hostile() {
	local real id
	mkdir -p -- "$1" || fail "cannot make the directory"
	cd -- "$1" || fail "cd"
	real=$(realpath .)
	gb -p "touch:$real/made"
	expect_ok
	expect_eq "$(rget pwd)" "$(esc "$real")" "working directory in the box"
	[ -e made ] || fail "file made in the box is missing on the host"
	expect_eq "$(stat -c %u made)" "$(id -u)" "owner of the file made in the box"
	box_of .
	id=$BOX
	expect_box_name .
	gb -p again
	expect_ok
	box_of .
	expect_eq "$BOX" "$id" "container id on the second run"
}

tcase hostile_dir_spaces
t_hostile_dir_spaces() { hostile '  my  project dir '; }
tcase hostile_dir_quotes
t_hostile_dir_quotes() { hostile "it's \"quoted\""; }
tcase hostile_dir_commas
t_hostile_dir_commas() { hostile 'a,b,c=d,'; }
tcase hostile_dir_colons
t_hostile_dir_colons() { hostile 'a:b:c:'; }
tcase hostile_dir_newline
t_hostile_dir_newline() { hostile $'new\nline'; }
tcase hostile_dir_non_ascii
t_hostile_dir_non_ascii() { hostile 'ünïcødé-日本語-€'; }
tcase hostile_dir_shell_metachars
t_hostile_dir_shell_metachars() { hostile '$(touch x) `y` $HOME \ * ? [a] ; | & < > #'; }
tcase hostile_dir_leading_dash
t_hostile_dir_leading_dash() { hostile '--box-frob'; }
tcase hostile_dir_everything
t_hostile_dir_everything() { hostile $'All, of: it\'s "x"\n$(y) ü\t*'; }
tcase hostile_dir_very_long
t_hostile_dir_very_long() {
	local long c i
	c=$(printf 'x%.0s' {1..200})
	long=$c
	for i in $(seq 1 12); do long+="/dir-$i-$(printf 'y%.0s' {1..200})"; done
	echo "path length: $((${#PWD} + ${#long} + 1))"
	hostile "$long"
}

tcase git_subdirectory_uses_project_box
t_git_subdirectory_uses_project_box() {
	local id
	mkdir -p p/.git p/a/b
	(cd p/a/b && gb -p hi && expect_ok && expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory") || exit 1
	box_of p
	id=$BOX
	expect_no_box p/a/b
	(cd p && gb -p hi && expect_ok) || exit 1
	box_of p
	expect_eq "$BOX" "$id" "box of the work tree top"
	(cd p/a && gb -p "touch:$(realpath ../made)" && expect_ok) || exit 1
	[ -e p/made ] || fail "the box does not see the whole work tree"
	box_of p
	expect_eq "$BOX" "$id" "box from p/a"
}

tcase git_file_and_nested_work_trees
t_git_file_and_nested_work_trees() {
	mkdir -p w/x outer/.git outer/inner/.git outer/inner/deep
	echo 'gitdir: /nonexistent/.git/worktrees/w' >w/.git
	(cd w/x && gb -p hi && expect_ok) || exit 1
	box_of w
	expect_no_box w/x
	(cd outer/inner/deep && gb -p hi && expect_ok) || exit 1
	box_of outer/inner
	expect_no_box outer
}

tcase no_git_uses_current_directory
t_no_git_uses_current_directory() {
	mkdir -p d/e
	(cd d/e && gb -p hi && expect_ok) || exit 1
	box_of d/e
	expect_no_box d
}

tcase home_git_is_not_a_project
t_home_git_is_not_a_project() {
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || skip "needs the dedicated test user (run as root) to touch \$HOME/.git"
	[ -e "$HOME/.git" ] && skip "\$HOME/.git already exists"
	mkdir "$HOME/.git" || fail "mkdir ~/.git"
	touch "$TESTROOT/home-git-made" # the runner removes ~/.git should this test die
	mkdir -p d/e
	cd d/e || fail cd
	gb -p hi
	rmdir "$HOME/.git"
	expect_ok
	box_of .
	expect_no_box "$HOME"
}

tcase box_dir_option
t_box_dir_option() {
	local id
	mkdir -p P/sub other
	(cd P/sub && gb --box-dir .. -p hi && expect_ok &&
		expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory") || exit 1
	box_of P
	id=$BOX
	expect_no_box P/sub
	(cd P/sub && gb --box-dir "$(realpath ..)" -p hi && expect_ok) || exit 1
	box_of P
	expect_eq "$BOX" "$id" "box for --box-dir ABSOLUTE"
	(cd P && gb -p hi && expect_ok) || exit 1
	box_of P
	expect_eq "$BOX" "$id" "box for P without --box-dir"
	mkdir -p G/.git G/inner
	(cd G/inner && gb --box-dir . -p hi && expect_ok) || exit 1
	box_of G/inner
	expect_no_box G
}

tcase symlink_to_project_same_box
t_symlink_to_project_same_box() {
	local id
	mkdir -p real/sub real/.git
	ln -s real link
	(cd real && gb -p hi && expect_ok) || exit 1
	box_of real
	id=$BOX
	(cd link && gb -p hi && expect_ok &&
		expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory through the symlink") || exit 1
	(cd link/sub && gb -p hi && expect_ok) || exit 1
	mkdir elsewhere
	(cd elsewhere && gb --box-dir ../link -p hi && expect_ok) || exit 1
	box_of real
	expect_eq "$BOX" "$id" "box through the symlink"
}

tcase gemini_dir_is_mounted
t_gemini_dir_is_mounted() {
	local marker=gb-it-marker-$$-$RANDOM real
	real=$(realpath .)
	mkdir -p "$HOME/.gemini"
	printf 'host-content' >"$HOME/.gemini/$marker.host"
	gb -p "touch:/home/node/.gemini/$marker" "touch:/home/node/.gemini/tmp/$marker" "cat:/home/node/.gemini/$marker.host"
	expect_ok
	expect_eq "$(rget "cat./home/node/.gemini/$marker.host")" host-content "a file of ~/.gemini read in the box"
	[ -e "$HOME/.gemini/$marker" ] && fail "a file made in /home/node/.gemini reached the host's ~/.gemini"
	[ -e "$HOME/.gemini/tmp/$marker" ] || fail "a file made in /home/node/.gemini/tmp is not in ~/.gemini/tmp"
	rm -f "$HOME/.gemini/$marker" "$HOME/.gemini/$marker.host" "$HOME/.gemini/tmp/$marker"
	box_of .
	inspect '{{range .Mounts}}{{.Source}}|{{.Destination}}{{"\n"}}{{end}}' >"$T/mounts"
	cat "$T/mounts"
	grep -qxF "$(realpath "$HOME/.gemini")/tmp|/home/node/.gemini/tmp" "$T/mounts" || fail "no mount ~/.gemini/tmp -> /home/node/.gemini/tmp"
	grep -qxF "$real|$real" "$T/mounts" || fail "the project is not mounted at its own path"
}

tcase gemini_dir_is_created
t_gemini_dir_is_created() {
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || skip "needs the dedicated test user (run as root) to move ~/.gemini"
	[ -e "$HOME/.gemini.gb-it-saved" ] && skip "\$HOME/.gemini.gb-it-saved exists"
	if [ -e "$HOME/.gemini" ]; then
		mv "$HOME/.gemini" "$HOME/.gemini.gb-it-saved" || fail "cannot move ~/.gemini away"
	fi
	touch "$TESTROOT/gemini-dir-moved" # the runner puts it back should this test die
	gb -p hi
	expect_ok
	[ -d "$HOME/.gemini" ] || fail "\$HOME/.gemini was not created"
	expect_eq "$(stat -c %u "$HOME/.gemini")" "$(id -u)" "owner of the created ~/.gemini"
	box_of .
	grep -qxF "$HOME/.gemini/tmp|/home/node/.gemini/tmp" < <(inspect '{{range .Mounts}}{{.Source}}|{{.Destination}}{{"\n"}}{{end}}') ||
		fail "no mount ~/.gemini/tmp -> /home/node/.gemini/tmp"
}

tcase box_image_option_and_env
t_box_image_option_and_env() {
	mkdir a b c
	(cd a && gb --box-image "$IMAGE_ALT" -p hi && expect_ok) || exit 1
	box_of a
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.image"}}')" "$IMAGE_ALT" "image label with --box-image"
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE_ALT" "image with --box-image"
	(cd b && GEMINI_IMAGE=$IMAGE_ALT gb -p hi && expect_ok) || exit 1
	box_of b
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE_ALT" "image with GEMINI_IMAGE"
	(cd c && GEMINI_IMAGE=localhost/does-not-exist:9 gb --box-image "$IMAGE_ALT" -p hi && expect_ok) || exit 1
	box_of c
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE_ALT" "image with --box-image over GEMINI_IMAGE"
}

tcase tty_interactive_under_terminal
t_tty_interactive_under_terminal() {
	tty_run --
	expect_ok
	expect_eq "$(rget stdin.tty)" yes "stdin is a TTY for an interactive run"
	expect_eq "$(rget stdout.tty)" yes "stdout is a TTY for an interactive run"
	tty_run -- -i exit:5
	expect_report
	expect_rc 5
	expect_eq "$(rget stdout.tty)" yes "stdout is a TTY with -i QUERY"
	local args
	# Options taking a value: the next word is that value, not a query.
	for args in '--model m' '-m hello' '--prompt-interactive=q' '-d' '-y' '--approval-mode yolo' \
		'-e ext' '--include-directories d' '--skip-trust'; do
		# shellcheck disable=SC2086 # word splitting intended
		tty_run -- $args
		expect_ok
		expect_eq "$(rget stdin.tty)/$(rget stdout.tty)" yes/yes "stdin/stdout TTY for: $args"
	done
}

tcase tty_not_for_headless_or_commands
t_tty_not_for_headless_or_commands() {
	local args
	for args in 'mcp list' '-p hi' '--prompt=hi' '--prompt hi' 'hello' '-m m hello' \
		'--model=m hello' 'extensions list' 'extension list' 'skills list' 'skill list' \
		'hooks list' 'hook list' 'gemma' '--acp' '--experimental-acp' '-v' '--version' '-h' '--help'; do
		# shellcheck disable=SC2086 # word splitting intended
		tty_run -- $args
		expect_ok
		expect_eq "$(rget stdin.tty)/$(rget stdout.tty)" no/no "stdin/stdout TTY for: $args"
	done
	tty_run CI=true --
	expect_ok
	expect_eq "$(rget stdout.tty)" no "stdout TTY with CI=true"
	tty_run GITHUB_ACTIONS=true --
	expect_ok
	expect_eq "$(rget stdout.tty)" no "stdout TTY with GITHUB_ACTIONS=true"
	GB_TTY_STDOUT=$T/redirected tty_run --
	expect_ok
	expect_eq "$(rget stdout.tty)" no "stdout TTY when stdout is a file"
	GB_TTY_STDIN=/dev/null tty_run --
	expect_ok
	expect_eq "$(rget stdout.tty)" no "stdout TTY when stdin is /dev/null"
}

tcase tty_not_without_terminal
t_tty_not_without_terminal() {
	shopt -s lastpipe
	echo | CI='' gb
	expect_ok
	expect_eq "$(rget stdin.tty)/$(rget stdout.tty)" no/no "stdin/stdout TTY with pipes"
}

tcase concurrent_first_runs_one_box
t_concurrent_first_runs_one_box() {
	local round i rc ok
	for round in 1 2; do
		mkdir "r$round"
		cd "r$round" || fail cd
		local pids=()
		for i in 1 2 3; do
			timeout --foreground -k 5 "$GB_TIMEOUT" "$BIN" -p "say:run-$i" >"$T/c$round-$i.out" 2>"$T/c$round-$i.err" &
			pids+=($!)
		done
		ok=1
		for i in 1 2 3; do
			wait "${pids[$((i - 1))]}"
			rc=$?
			echo "round $round run $i: exit $rc"
			sed 's/^/  err| /' "$T/c$round-$i.err"
			[ $rc -eq 0 ] || ok=
			grep -qx "said=run-$i" "$T/c$round-$i.out" || ok=
		done
		[ -n "$ok" ] || fail "round $round: not every concurrent first run succeeded"
		box_of .
		cd .. || fail cd
	done
}

tcase concurrent_sessions_in_one_box
t_concurrent_sessions_in_one_box() {
	local pid t0 t1 rc
	gb -p hi
	expect_ok
	timeout --foreground -k 5 "$GB_TIMEOUT" "$BIN" -p sleep:4 say:long >"$T/bg.out" 2>"$T/bg.err" &
	pid=$!
	sleep 1
	t0=$(now_ms)
	gb -p say:short
	t1=$(now_ms)
	expect_ok
	[ $((t1 - t0)) -lt 3000 ] || fail "a second session waited for the first ($((t1 - t0)) ms)"
	wait $pid
	rc=$?
	[ $rc -eq 0 ] && grep -qx said=long "$T/bg.out" || fail "the long session failed (exit $rc)"
	box_of .
}

tcase podman_missing_is_69
t_podman_missing_is_69() {
	GEMINI_BOX_PODMAN=/nonexistent/podman gb -p hi
	expect_error 69
	LAST_CMD="PATH=/nonexistent gemini-box -p hi"
	timeout --foreground -k 5 "$GB_TIMEOUT" env -u GEMINI_BOX_PODMAN PATH=/nonexistent "$BIN" -p hi >"$T/out" 2>"$T/err"
	RC=$?
	expect_error 69
	LAST_CMD="PATH= gemini-box -p hi"
	timeout --foreground -k 5 "$GB_TIMEOUT" env -u GEMINI_BOX_PODMAN PATH= "$BIN" -p hi >"$T/out" 2>"$T/err"
	RC=$?
	expect_error 69
	expect_no_box .
}

tcase absent_image_is_72
t_absent_image_is_72() {
	gb --box-image localhost/does-not-exist:1 -p hi
	expect_rc 72
	tail -n 1 "$T/err" | grep -q '^gemini-box: ' || fail "stderr does not end with a 'gemini-box: ' line"
	expect_no_box .
	GEMINI_IMAGE=localhost/does-not-exist:2 gb -p hi
	expect_rc 72
	expect_no_box .
}

tcase absent_image_is_pulled
t_absent_image_is_pulled() {
	local target=localhost/gemini-box-test:pulled-$$-$RANDOM r pulled=
	podman image exists "$target" && fail "$target exists already"
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log GB_FAKE_PULL_FROM=$IMAGE
	gb --box-image "$target" -p hi
	expect_ok
	read_log "$GB_PODMAN_LOG"
	for r in "${LOG_RECORDS[@]}"; do
		case $(record_sub "$r") in
		pull | "image pull") [[ $r == *"$target" ]] && pulled=1 ;;
		esac
	done
	[ -n "$pulled" ] || fail "no podman pull $target for an absent image"
	box_of .
	expect_eq "$(inspect '{{.ImageName}}')" "$target" "the box's image"
	: >"$GB_PODMAN_LOG"
	gb --box-image "$target" -p again
	expect_ok
	grep -qa '^pull$' < <(tr '\0' '\n' <"$GB_PODMAN_LOG") && fail "pulled again although the box exists"
	podman rm -f -t 0 "$BOX" >/dev/null
	podman rmi "$target" >/dev/null || fail "podman rmi $target"
}

tcase podman_step_failure_is_71
t_podman_step_failure_is_71() {
	export GEMINI_BOX_PODMAN=$LOGGER
	GB_PODMAN_FAIL="create,container create" gb -p hi
	expect_rc 71
	grep -q '^gemini-box: ' "$T/err" || fail "no 'gemini-box: ' line on stderr"
	expect_no_box .
	gb -p hi
	expect_ok
	box_of .
	podman stop -t 2 "$BOX" >/dev/null
	GB_PODMAN_FAIL="start,container start" gb -p hi
	expect_rc 71
	grep -q '^gemini-box: ' "$T/err" || fail "no 'gemini-box: ' line on stderr"
	box_running && fail "box running although start failed"
	# A box whose record says it is stopped is started by id without asking
	# podman first; once that fails (it was removed), podman is asked.
	podman rm -f -t 0 "$BOX" >/dev/null
	GB_PODMAN_FAIL="inspect,container inspect" gb -p hi
	expect_rc 71
	grep -q '^gemini-box: ' "$T/err" || fail "no 'gemini-box: ' line on stderr"
	expect_no_box .
}

tcase bad_box_dir_is_66
t_bad_box_dir_is_66() {
	gb --box-dir "$PWD/no-such-dir" -p hi
	expect_error 66
	mkdir locked && chmod 000 locked
	gb --box-dir "$PWD/locked" -p hi
	chmod 755 locked
	expect_error 66
	expect_no_box locked
	touch afile
	gb --box-dir "$PWD/afile" -p hi
	expect_error 66
}

tcase usage_errors_are_64
t_usage_errors_are_64() {
	gb --box-frob
	expect_error 64
	gb --box-frob -p hi
	expect_error 64
	gb --box-dir
	expect_error 64
	gb --box-image
	expect_error 64
	expect_no_box .
}

tcase mcp_list_subcommand
t_mcp_list_subcommand() {
	local id
	gb -p hi
	expect_ok
	box_of .
	id=$BOX
	gb mcp list
	expect_ok
	expect_args mcp list
	expect_eq "$(rget stdout.tty)" no "stdout TTY for mcp list"
	box_of .
	expect_eq "$BOX" "$id" "box for mcp list"
}

tcase option_values_belong_to_gemini
t_option_values_belong_to_gemini() {
	gb -p --box-help
	expect_ok
	expect_args -p --box-help
	gb -m --box-dir -p x
	expect_ok
	expect_args -m --box-dir -p x
}

tcase foreign_container_of_same_name_is_71
t_foreign_container_of_same_name_is_71() {
	local name
	gb --box-dry-run -p hi
	expect_rc 0
	name=$(grep -o -- '--name[= ][^ ]*' "$T/out" | head -n 1 | sed 's/^--name[= ]//')
	[ -n "$name" ] || fail "no --name in the dry-run create command"
	podman create --name "$name" --label gemini-box.dir=/elsewhere "$IMAGE" >/dev/null ||
		fail "podman create $name failed"
	gb -p hi
	podman_state=$(podman container inspect --format '{{.State.Status}}' "$name")
	podman rm -f -t 0 "$name" >/dev/null
	expect_error 71
	expect_eq "$podman_state" created "state of the foreign container (must be left alone)"
}

# own_config JSON: use a settings file of this test's own with JSON in it.
own_config() {
	export XDG_CONFIG_HOME=$T/config
	mkdir -p "$XDG_CONFIG_HOME/gemini-box"
	[ -e "$real_config/containers" ] && ln -sfn "$real_config/containers" "$XDG_CONFIG_HOME/containers"
	printf '%s\n' "$1" >"$XDG_CONFIG_HOME/gemini-box/config.json"
	echo "config.json: $1"
}

tcase box_status_stop_rm
t_box_status_stop_rm() {
	local id
	gb -p "touch:$PWD/keep-me"
	expect_ok
	box_of .
	id=$BOX
	gb --box-status
	expect_rc 0
	grep -q "$(inspect '{{.Name}}')" "$T/out" || fail "--box-status does not name the box"
	grep -qF "$(realpath .)" "$T/out" || fail "--box-status does not name the directory"
	grep -q running "$T/out" || fail "--box-status does not say running"
	gb --box-list
	expect_rc 0
	grep -q "$(inspect '{{.Name}}')" "$T/out" || fail "--box-list does not list the box"
	gb --box-stop
	expect_rc 0
	box_running && fail "box running after --box-stop"
	box_of .
	expect_eq "$BOX" "$id" "box after --box-stop"
	gb --box-rm
	[ "$RC" -ne 0 ] || fail "--box-rm without --box-yes and without a terminal succeeded"
	box_of .
	gb --box-rm --box-yes
	expect_rc 0
	expect_no_box .
	[ -e keep-me ] || fail "--box-rm touched the project's files"
	gb --box-rm --box-yes
	expect_rc 0
	gb -p hi
	expect_ok
	box_of .
	[ "$BOX" != "$id" ] || fail "same box id after --box-rm"
}

tcase box_shell
t_box_shell() {
	gb --box-shell < <(printf 'id -u\npwd\nexit 3\n')
	expect_rc 3
	expect_eq "$(head -n 1 "$T/out")" 1000 "id -u in --box-shell"
	expect_eq "$(sed -n 2p "$T/out")" "$(realpath .)" "pwd in --box-shell"
	gb --box-shell --box-root < <(printf 'id -u\n')
	expect_rc 0
	expect_eq "$(head -n 1 "$T/out")" 0 "id -u in --box-shell --box-root"
	box_of .
}

tcase box_prune
t_box_prune() {
	local gone_id
	mkdir gone kept
	(cd gone && gb -p hi && expect_ok) || exit 1
	(cd kept && gb -p hi && expect_ok) || exit 1
	box_of gone
	gone_id=$BOX
	rm -rf gone
	gb --box-prune --box-dry-run
	expect_rc 0
	grep -q "rm.*$(inspect '{{.Name}}' "$gone_id")" "$T/out" || fail "--box-prune --box-dry-run does not remove the box of a gone directory"
	grep -q "rm.*$(inspect '{{.Name}}' "$(boxes_of kept)")" "$T/out" && fail "--box-prune --box-dry-run removes a box whose directory exists"
	podman container exists "$gone_id" || fail "--box-dry-run pruned"
	# The real prune removes every such box of this user: only as the test user.
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || return 0
	gb --box-prune --box-yes
	expect_rc 0
	podman container exists "$gone_id" && fail "--box-prune left the box of a gone directory"
	box_of kept
}

tcase settings_env_and_forward_env
t_settings_env_and_forward_env() {
	own_config '{"env": {"FIXED_VAR": "fixed-sekret-1"}, "forward_env": ["MY_FWD"]}'
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	MY_FWD=fwd-sekret-2 NOT_LISTED=x gb -p hi
	expect_ok
	expect_env FIXED_VAR fixed-sekret-1
	expect_env MY_FWD fwd-sekret-2
	expect_no_env NOT_LISTED
	FIXED_VAR=from-caller gb -p hi
	expect_ok
	expect_env FIXED_VAR fixed-sekret-1
	box_of .
	podman container inspect "$BOX" | grep -qE 'fixed-sekret-1|fwd-sekret-2' && fail "a settings value is stored in the box"
	grep -qaE 'fixed-sekret-1|fwd-sekret-2' "$GB_PODMAN_LOG" && fail "a settings value is on podman's command line"
	return 0
}

tcase settings_mounts_drift_and_recreate
t_settings_mounts_drift_and_recreate() {
	local id extra
	extra=$T/extra
	mkdir -p "$extra"
	echo hello >"$extra/file"
	own_config '{}'
	gb -p hi
	expect_ok
	box_of .
	id=$BOX
	own_config "{\"mounts\": [{\"source\": \"$extra\", \"target\": \"/mnt/extra\", \"readonly\": true}]}"
	gb -p hi
	expect_ok
	box_of .
	expect_eq "$BOX" "$id" "box after a settings change (kept until --box-recreate)"
	grep -q '^gemini-box: .*mounts' "$T/err" || fail "no 'gemini-box: ' line naming the changed mounts"
	gb --box-recreate --box-yes
	expect_rc 0
	box_of .
	[ "$BOX" != "$id" ] || fail "--box-recreate kept the same container"
	gb -p touch:/mnt/extra/new
	expect_report
	[ -e "$extra/new" ] && fail "a readonly mount was writable"
	inspect '{{range .Mounts}}{{.Source}}|{{.Destination}}|{{.RW}}{{"\n"}}{{end}}' >"$T/mounts"
	grep -qxF "$extra|/mnt/extra|false" "$T/mounts" || fail "no readonly mount $extra -> /mnt/extra: $(cat "$T/mounts")"
	gb -p hi
	expect_ok
	[ -s "$T/err" ] && fail "still reports drift after --box-recreate: $(cat "$T/err")"
	return 0
}

tcase project_file_limits_are_78
t_project_file_limits_are_78() {
	local bad
	mkdir -p .gemini
	for bad in '{"podman_args": ["--privileged"]}' \
		"{\"mounts\": [{\"source\": \"$HOME\", \"target\": \"/x\"}]}" \
		'{"network": "host"}' '{"forward_env": ["SSH_AUTH_SOCK"]}' \
		'{"env": {"GEMINI_API_KEY": "stolen"}}' '{"image": ' '{"bogus": 1}'; do
		printf '%s\n' "$bad" >.gemini/gemini-box.json
		echo "project file: $bad"
		gb -p hi
		expect_error 78
		expect_no_box .
	done
	printf '%s\n' '{"env": {"PROJECT_VAR": "p v"}}' >.gemini/gemini-box.json
	gb -p hi
	expect_ok
	expect_env PROJECT_VAR "p v"
}

tcase project_containerfile_is_built
t_project_containerfile_is_built() {
	local marker=built-$$-$RANDOM built
	mkdir -p .gemini
	printf '%s\n' 'ARG BASE_IMAGE' 'FROM $BASE_IMAGE' 'USER root' "RUN touch /$marker" 'USER node' \
		>.gemini/sandbox.Dockerfile
	gb --box-trust --box-yes # it builds the program that gets the keys
	expect_rc 0
	gb -p hi
	expect_ok
	grep -q 'STEP' "$T/err" || fail "no build output (STEP ...) on stderr for the first run"
	box_of .
	built=$(inspect '{{.ImageName}}')
	[[ $built == localhost/gemini-box-build:* ]] || fail "the box's image is $built, not a localhost/gemini-box-build image"
	podman image exists "$built" || fail "$built does not exist"
	podman run --rm --entrypoint /bin/ls "$built" "/$marker" >/dev/null 2>&1 ||
		fail "$built was not built from the containerfile (no /$marker)"
	podman rm -f -t 0 "$BOX" >/dev/null
	gb -p hi
	expect_ok
	grep -q 'STEP' "$T/err" && fail "rebuilt although nothing changed: $(head -n 3 "$T/err")"
	box_of .
	expect_eq "$(inspect '{{.ImageName}}')" "$built" "image of the recreated box"
	podman rm -f -t 0 "$BOX" >/dev/null
	podman rmi "$built" >/dev/null 2>&1
	return 0
}

tcase box_list_json_and_gone
t_box_list_json_and_gone() {
	local name_a name_b
	mkdir a b
	(cd a && gb -p hi && expect_ok) || exit 1
	(cd b && gb -p hi && expect_ok) || exit 1
	name_a=$(inspect '{{.Name}}' "$(boxes_of a)")
	name_b=$(inspect '{{.Name}}' "$(boxes_of b)")
	rm -rf b
	gb --box-list
	expect_rc 0
	grep -q "^$name_a .*$(realpath a)\$" "$T/out" || fail "--box-list lacks $name_a with its directory"
	grep -q "^$name_b .*(gone)\$" "$T/out" || fail "--box-list does not mark $name_b's directory gone"
	grep -q "^$name_a .*(gone)" "$T/out" && fail "--box-list marks an existing directory gone"
	gb --box-list --box-json
	expect_rc 0
	python3 - "$T/out" "$name_a" "$name_b" "$(realpath a)" <<'PY' || fail "--box-list --box-json is wrong"
import json, sys
boxes = {b["name"]: b for b in json.load(open(sys.argv[1]))}
a, b = boxes[sys.argv[2]], boxes[sys.argv[3]]
assert a["directory"] == sys.argv[4] and a["directory_exists"] is True, a
assert b["directory_exists"] is False, b
assert a["state"] == "running" and a["image"], a
PY
	# A container that merely looks like a box is not one: boxes are found by label.
	podman create --name gemini-box-impostor-000000000000 --entrypoint sleep "$IMAGE" 1 >/dev/null
	gb --box-list
	podman rm -f gemini-box-impostor-000000000000 >/dev/null
	grep -q impostor "$T/out" && fail "--box-list lists a container without the gemini-box.dir label"
	return 0
}

tcase box_config_shows_origins
t_box_config_shows_origins() {
	own_config '{"image": "from-user:1", "network": "none", "ports": ["9001:80"]}'
	mkdir -p .gemini
	printf '%s\n' '{"image": "from-project:1", "env": {"P": "1"}}' >.gemini/gemini-box.json
	unset GEMINI_IMAGE
	gb --box-config
	expect_error 78 # a project's image needs approval
	gb --box-trust --box-yes
	expect_rc 0
	gb --box-config
	expect_rc 0
	grep -q "^image *= from-project:1  (project file .*gemini-box.json)" "$T/out" || fail "project image not shown with its origin"
	grep -q "^network *= none  (user file .*config.json)" "$T/out" || fail "user network not shown with its origin"
	grep -q "^user *= 1000:1000  (default)" "$T/out" || fail "default user not shown"
	grep -q "^ports\[0\] *= 9001:80  (user file" "$T/out" || fail "user port not shown"
	GEMINI_IMAGE=from-env:1 gb --box-config
	grep -q "^image *= from-env:1  (environment GEMINI_IMAGE)" "$T/out" || fail "environment image does not win over the project's"
	GEMINI_IMAGE=from-env:1 gb --box-config --box-image from-option:1
	grep -q "^image *= from-option:1  (option --box-image)" "$T/out" || fail "--box-image does not win over the environment"
	gb --box-config --box-json
	expect_rc 0
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["image"]["value"]=="from-project:1" and d["image"]["from"]["kind"]=="project file", d' "$T/out" ||
		fail "--box-config --box-json is wrong"
	expect_no_box .
}

# confirm_run ANSWER ARGS...: run gemini-box under a terminal and type ANSWER
# and Enter (typed ahead: the terminal keeps it until gemini-box reads).
confirm_run() {
	local answer=$1 i
	shift
	rm -f "$T/c.rc" "$T/c.rc.tmp"
	{
		printf 'cd %q || exit\n' "$PWD"
		printf '%q' "$BIN"
		for i in "$@"; do printf ' %q' "$i"; done
		printf ' >%q 2>%q\n' "$T/out" "$T/err"
		printf 'echo $? >%q && mv %q %q\n' "$T/c.rc.tmp" "$T/c.rc.tmp" "$T/c.rc"
	} >"$T/c.sh"
	LAST_CMD="(under a terminal, typing $answer) gemini-box $(qargs "$@")"
	echo "\$ $LAST_CMD"
	TERM=xterm tmux -L "$TMUX_SOCKET" -f /dev/null new-session -d -x 200 -y 50 "bash $(printf %q "$T/c.sh")" ||
		fail "tmux new-session failed"
	tmux -L "$TMUX_SOCKET" send-keys "$answer" Enter
	for ((i = 0; i < GB_TIMEOUT * 10; i++)); do
		[ -f "$T/c.rc" ] && break
		sleep 0.1
	done
	[ -f "$T/c.rc" ] || fail "the run under tmux did not finish"
	RC=$(cat "$T/c.rc")
	echo "  exit $RC"
}

tcase removal_asks_on_a_terminal
t_removal_asks_on_a_terminal() {
	local id
	gb -p hi
	expect_ok
	box_of .
	id=$BOX
	confirm_run n --box-rm
	expect_rc 1
	grep -q 'Remove box .*\[y/N\]' "$T/err" || fail "no question on stderr"
	box_of .
	expect_eq "$BOX" "$id" "box after answering n"
	confirm_run n --box-recreate
	expect_rc 1
	box_of .
	expect_eq "$BOX" "$id" "box after answering n to --box-recreate"
	gb --box-recreate
	expect_error 64
	confirm_run y --box-recreate
	expect_rc 0
	box_of .
	[ "$BOX" != "$id" ] || fail "--box-recreate answered y kept the box"
	confirm_run y --box-rm
	expect_rc 0
	expect_no_box .
}

tcase management_dry_runs_change_nothing
t_management_dry_runs_change_nothing() {
	local id name started
	gb -p hi
	expect_ok
	box_of .
	id=$BOX
	name=$(inspect '{{.Name}}')
	started=$(inspect '{{.State.StartedAt}}')
	gb --box-stop --box-dry-run
	expect_rc 0
	grep -qx "$(command -v podman) stop $name" "$T/out" || fail "--box-stop --box-dry-run printed: $(cat "$T/out")"
	gb --box-rm --box-dry-run
	expect_rc 0
	grep -qx "$(command -v podman) rm --force $name" "$T/out" || fail "--box-rm --box-dry-run printed: $(cat "$T/out")"
	gb --box-recreate --box-dry-run
	expect_rc 0
	grep -q "rm --force $name" "$T/out" && grep -q " create .*--name=$name" "$T/out" ||
		fail "--box-recreate --box-dry-run does not show removal and creation"
	gb --box-status --box-dry-run
	expect_rc 0
	grep -q "container inspect $name" "$T/out" || fail "--box-status --box-dry-run printed: $(cat "$T/out")"
	box_of .
	expect_eq "$BOX" "$id" "box after the dry runs"
	box_running || fail "a dry run stopped the box"
	expect_eq "$(inspect '{{.State.StartedAt}}')" "$started" "start time after the dry runs"
}

tcase box_build_forces_and_drifts
t_box_build_forces_and_drifts() {
	local first second
	mkdir -p .gemini
	printf '%s\n' 'ARG BASE_IMAGE' 'FROM $BASE_IMAGE' 'RUN true' >.gemini/sandbox.Dockerfile
	gb --box-trust --box-yes
	gb -p hi
	expect_ok
	box_of .
	first=$(inspect '{{.ImageName}}')
	gb --box-build
	expect_rc 0
	grep -q 'STEP' "$T/err" || fail "--box-build did not build although the image was up to date"
	printf '%s\n' 'ARG BASE_IMAGE' 'FROM $BASE_IMAGE' 'RUN echo changed' >.gemini/sandbox.Dockerfile
	gb --box-trust --box-yes
	gb -p hi
	expect_ok
	grep -q '^gemini-box: .*image' "$T/err" || fail "a changed containerfile does not show as drift of the image"
	gb --box-status
	grep -q '^settings *drifted: image' "$T/out" || fail "--box-status does not show the drifted image"
	gb --box-recreate --box-yes
	expect_rc 0
	box_of .
	second=$(inspect '{{.ImageName}}')
	[ "$first" != "$second" ] || fail "the recreated box has the old image $first"
	gb --box-build --box-dir "$T"
	expect_error 78
	podman rm -f -t 0 "$BOX" >/dev/null
	podman rmi "$first" "$second" >/dev/null 2>&1
	return 0
}

# start_companion: the stand-in IDE companion on the host's loopback; sets
# IDE_PORT, IDE_TOKEN and IDE_LOG.
start_companion() {
	local i
	IDE_TOKEN=tok-$RANDOM$RANDOM IDE_LOG=$T/companion.log
	: >"$IDE_LOG"
	python3 "$HERE/ide-companion.py" "$IDE_TOKEN" "$IDE_LOG" "$T/companion.port" &
	COMPANION_PID=$!
	for i in $(seq 1 100); do
		[ -s "$T/companion.port" ] && break
		sleep 0.05
	done
	IDE_PORT=$(cat "$T/companion.port") || fail "the stand-in companion did not start"
	trap 'kill $COMPANION_PID 2>/dev/null' EXIT
}

tcase ide_companion_from_a_host_network_box
t_ide_companion_from_a_host_network_box() {
	start_companion
	own_config '{"network": "host"}'
	export GEMINI_CLI_IDE_SERVER_PORT=$IDE_PORT GEMINI_CLI_IDE_AUTH_TOKEN=$IDE_TOKEN \
		GEMINI_CLI_IDE_WORKSPACE_PATH=$PWD
	gb -p ide
	expect_ok
	expect_eq "$(rget ide.host)" 127.0.0.1 "the host gemini dials from a host-network box"
	expect_eq "$(rget ide)" ok "the request to the companion"
	grep -qx "200 127.0.0.1:$IDE_PORT /mcp" "$IDE_LOG" || fail "the companion did not accept it: $(cat "$IDE_LOG")"
	[ -s "$T/err" ] && fail "unexpected stderr: $(cat "$T/err")"
	# A wrong token is refused by the companion, as it should be.
	GEMINI_CLI_IDE_AUTH_TOKEN=wrong gb -p ide
	expect_eq "$(rget ide)" failed "a request with the wrong token"
	grep -qx "401 127.0.0.1:$IDE_PORT /mcp" "$IDE_LOG" || fail "no 401 for a wrong token"
	# The port files are shared read-only at the same path.
	local dir=${TMPDIR:-/tmp}/gemini/ide file
	file=$dir/gemini-ide-server-4242-$IDE_PORT.json
	printf '{"port": %s}' "$IDE_PORT" >"$file"
	gb -p "cat:$file" "touch:$dir/planted"
	expect_report
	expect_eq "$(rget "cat.$file")" "{\"port\": $IDE_PORT}" "the port file seen in the box"
	[ -e "$dir/planted" ] && { rm -f "$dir/planted"; fail "the port-file directory is writable from the box"; }
	rm -f "$file"
	# The stdio fallback: a host program the box lacks gets one line.
	GEMINI_CLI_IDE_SERVER_STDIO_COMMAND=/opt/no-such-ide/bin/bridge GEMINI_CLI_IDE_SERVER_STDIO_ARGS='["--stdio"]' gb -p hi
	expect_ok
	expect_env GEMINI_CLI_IDE_SERVER_STDIO_ARGS '["--stdio"]'
	grep -q "^gemini-box: the IDE's stdio command /opt/no-such-ide/bin/bridge is not in the box" "$T/err" ||
		fail "no warning for a stdio command missing in the box"
	GEMINI_CLI_IDE_SERVER_STDIO_COMMAND=/bin/sh gb -p hi
	expect_ok
	[ -s "$T/err" ] && fail "a warning for a stdio command the box has: $(cat "$T/err")"
	# "ide": false withholds every IDE variable.
	own_config '{"network": "host", "ide": false}'
	gb --box-recreate --box-yes
	gb -p ide
	expect_report
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
	expect_no_env GEMINI_CLI_IDE_SERVER_PORT
	return 0
}

tcase ide_companion_unreachable_from_an_isolated_box_says_so
t_ide_companion_unreachable_from_an_isolated_box_says_so() {
	start_companion
	export GEMINI_CLI_IDE_SERVER_PORT=$IDE_PORT GEMINI_CLI_IDE_AUTH_TOKEN=$IDE_TOKEN
	gb -p ide
	expect_report
	expect_eq "$(rget ide)" failed "a request from an isolated box"
	grep -q '^200' "$IDE_LOG" && fail "an isolated box reached the companion"
	grep -q '^gemini-box: the IDE companion .*"network": "host"' "$T/err" ||
		fail "no line saying why the IDE cannot be reached"
	expect_eq "$(wc -l <"$T/err")" 1 "stderr lines"
	own_config '{"ide": false}'
	gb -p hi
	expect_ok
	[ -s "$T/err" ] && fail "the IDE line despite \"ide\": false: $(cat "$T/err")"
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
	return 0
}

tcase runsc_box_runs_gemini
t_runsc_box_runs_gemini() {
	command -v runsc >/dev/null 2>&1 || skip "runsc (gVisor) is not installed"
	own_config "{\"runtime\": \"$(command -v runsc)\"}"
	gb -p "touch:$PWD/made-in-gvisor"
	if [ "$RC" -ne 0 ] && ! grep -q gemini-stub=begin "$T/out"; then
		grep -q 'runsc' "$T/err" && skip "runsc cannot run here: $(tail -n 1 "$T/err")"
	fi
	expect_ok
	box_of .
	expect_eq "$(inspect '{{.OCIRuntime}}')" "$(command -v runsc)" "the box's runtime"
	expect_eq "$(rget uid)" 0 "uid in a runsc box (root there is the caller here)"
	expect_env GEMINI_SANDBOX runsc
	expect_eq "$(stat -c %u made-in-gvisor)" "$(id -u)" "owner of a file made in the runsc box"
	podman stop -t 2 "$BOX" >/dev/null
	gb -p again
	expect_ok
	# A runsc that cannot run the box: the line says so and what to do.
	mkdir -p "$T/bin" other && printf '#!/bin/sh\necho "runsc: cannot do that" >&2\nexit 1\n' >"$T/bin/runsc" &&
		chmod 755 "$T/bin/runsc"
	cd other || fail cd
	own_config "{\"runtime\": \"$T/bin/runsc\"}"
	gb -p hi
	expect_rc 71
	tail -n 1 "$T/err" | grep -q '^gemini-box: .*gVisor (runsc) could not run the box: check runsc --version' ||
		fail "no line about runsc failing"
}

tcase box_doctor_reports
t_box_doctor_reports() {
	gb --box-doctor
	expect_rc 0
	grep -q '^OK    podman version' "$T/out" || fail "no podman line"
	grep -q '^OK    rootless$' "$T/out" || fail "no rootless line"
	grep -q '^OK    /etc/subuid: a range for ' "$T/out" || fail "no subuid line"
	grep -q '^OK    /dev/net/tun is usable' "$T/out" || fail "no tun line"
	grep -q '^OK    cgroups .*, OCI runtime runc$' "$T/out" || fail "no cgroup/runtime line"
	grep -q '^\(OK  \|WARN\)  storage driver ' "$T/out" || fail "no storage line"
	grep -q "^OK    box .*: absent" "$T/out" || fail "no box line"
	grep -q '^FAIL' "$T/out" && fail "a FAIL on a working machine"
	# Every line is one finding.
	grep -vq '^\(OK  \|WARN\|FAIL\)  ' "$T/out" && fail "a line that is no finding: $(grep -v '^\(OK  \|WARN\|FAIL\)  ' "$T/out")"
	# A broken setup: podman missing.
	GEMINI_BOX_PODMAN=/nonexistent/podman gb --box-doctor
	expect_rc 1
	grep -q '^FAIL  podman not found' "$T/out" || fail "no FAIL for a missing podman"
	# The IDE probe, from inside a host-network box, for real.
	start_companion
	own_config '{"network": "host"}'
	export GEMINI_CLI_IDE_SERVER_PORT=$IDE_PORT GEMINI_CLI_IDE_AUTH_TOKEN=$IDE_TOKEN
	gb -p hi
	expect_ok
	gb --box-doctor
	expect_rc 0
	grep -q "^OK    IDE companion at 127.0.0.1:$IDE_PORT, probed from inside the box" "$T/out" ||
		fail "no successful IDE probe"
	kill "$COMPANION_PID"
	wait "$COMPANION_PID" 2>/dev/null
	gb --box-doctor
	expect_rc 1
	grep -q "^FAIL  IDE companion at 127.0.0.1:$IDE_PORT" "$T/out" || fail "a dead companion is not a FAIL"
	return 0
}

tcase network_none_has_no_network_and_says_so
t_network_none_has_no_network_and_says_so() {
	own_config '{"network": "none"}'
	gb -p hi
	expect_ok
	grep -q '^gemini-box: network "none": gemini in this box cannot reach its API' "$T/err" ||
		fail "no line saying gemini cannot reach its API"
	box_of .
	expect_eq "$(inspect '{{.HostConfig.NetworkMode}}')" none "the box's network mode"
	podman exec "$BOX" sh -c 'ls /sys/class/net' | grep -vx lo | grep -q . &&
		fail "a box with network none has interfaces: $(podman exec "$BOX" ls /sys/class/net)"
	return 0
}

tcase published_port_serves_the_host
t_published_port_serves_the_host() {
	local port=$((20000 + RANDOM % 20000))
	own_config "{\"ports\": [\"$port:8000\"]}"
	gb -p hi
	expect_ok
	box_of .
	# A dev server the agent starts in the box, on the box's port 8000.
	podman exec -d "$BOX" sh -c 'mkdir -p /tmp/www && echo served-from-box >/tmp/www/index.html && httpd -f -p 8000 -h /tmp/www' ||
		fail "cannot start httpd in the box"
	local i got=
	for i in $(seq 1 50); do
		got=$(python3 -c "import urllib.request,sys; print(urllib.request.urlopen('http://127.0.0.1:$port/').read().decode().strip())" 2>/dev/null) && break
		sleep 0.1
	done
	expect_eq "$got" served-from-box "the page the host gets from the box's port"
	podman port "$BOX" | grep -q "^8000/tcp -> 127.0.0.1:$port\$" || fail "not published on loopback only: $(podman port "$BOX")"
}

source "$HERE/cases-hardening.sh"   # races with podman and hostile input
source "$HERE/cases-containment.sh" # a hostile repository or agent

# podman_calls: the podman subcommands of the logged invocations, one a line.
podman_calls() {
	local r
	read_log "$GB_PODMAN_LOG"
	for r in "${LOG_RECORDS[@]}"; do record_sub "$r"; done
}

tcase warm_run_asks_podman_nothing_but_exec
t_warm_run_asks_podman_nothing_but_exec() {
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	gb -p hi
	expect_ok
	box_of .
	: >"$GB_PODMAN_LOG"
	gb -p warm
	expect_ok
	expect_eq "$(podman_calls | tr '\n' ' ')" "exec " "podman calls of a warm run"
	# Other settings: the record no longer matches, so podman is asked again.
	own_config '{"ports": ["18123:80"]}'
	: >"$GB_PODMAN_LOG"
	gb -p changed
	expect_ok
	podman_calls | grep -qx 'container inspect' || fail "a run with other settings did not inspect the box"
	grep -q '^gemini-box: .*ports' "$T/err" || fail "no drift line for the changed ports"
	own_config '{}'
	# A stopped box: its init is gone, so the lock is free; the record names
	# the box's id, which is started without asking podman first.
	podman stop -t 2 "$BOX" >/dev/null
	: >"$GB_PODMAN_LOG"
	gb -p stopped
	expect_ok
	expect_eq "$(podman_calls | tr '\n' ' ')" "start exec " "podman calls into a stopped box"
	read_log "$GB_PODMAN_LOG"
	[[ ${LOG_RECORDS[0]} == *$'\x1f'"$BOX" ]] || fail "the stopped box was not started by its id"
	# Another directory never takes this box's fast path.
	mkdir other
	(cd other && gb -p elsewhere && expect_ok) || exit 1
	[ "$(boxes_of other)" != "$BOX" ] || fail "another directory ran in this box"
}

tcase idle_box_stops_itself_and_comes_back
t_idle_box_stops_itself_and_comes_back() {
	local id i
	own_config '{"idle_stop_minutes": 0.05}'
	gb -p hi
	expect_ok
	box_of .
	id=$BOX
	expect_eq "$(inspect '{{index .Args 3}}')" 3 "--idle-seconds of the box's init"
	# Busy while a run lasts: no stop in the middle of it.
	gb -p sleep:6 say:done
	expect_ok
	expect_eq "$(rget said)" done "a run longer than the idle time"
	for i in $(seq 1 100); do
		box_running || break
		sleep 0.1
	done
	box_running && fail "the box did not stop itself after 3 idle seconds"
	expect_eq "$(inspect '{{.State.ExitCode}}')" 0 "exit status of an idle stop"
	gb -p again
	expect_ok
	box_of .
	expect_eq "$BOX" "$id" "box after an idle stop"
	box_running || fail "the box did not start again"
}

tcase box_state_and_init_survive_cleanups
t_box_state_and_init_survive_cleanups() {
	local state copy
	gb -p hi
	expect_ok
	box_of .
	state=$(inspect '{{index .Config.Labels "gemini-box.state"}}')
	copy=$(inspect '{{index .Config.Labels "gemini-box.init"}}')
	[ -d "$state" ] && [ -x "$copy" ] || fail "no state directory $state or init $copy"
	# A reboot empties /tmp; someone cleans ~/.local/share: the next start puts both back.
	podman stop -t 2 "$BOX" >/dev/null
	rm -rf "$state" "$(dirname "$copy")"
	gb -p back
	expect_ok
	[ -d "$state" ] && [ -x "$copy" ] || fail "state directory or init not restored"
	# A box made by another gemini-box whose init is gone (upgraded, moved):
	# a clear message, not podman's. Such a box is made here by hand.
	mkdir old && cd old || fail cd
	gb --box-status
	local name
	name=$(awk '$1 == "name" {print $2}' "$T/out")
	podman create --name "$name" --label "gemini-box.dir=$(realpath .)" \
		--label gemini-box.init=/nonexistent/old/gemini-box-init \
		--label "gemini-box.state=$state" --entrypoint /run/gemini-box/init "$IMAGE" >/dev/null ||
		fail "podman create of an old box failed"
	gb -p moved
	expect_rc 71
	# (a line about its other settings may come first: it is another's box)
	tail -n 1 "$T/err" | grep -q "^gemini-box: .*init .* is gone.*--box-recreate" ||
		fail "no clear last line for a vanished init"
	gb --box-recreate --box-yes
	expect_rc 0
	gb -p recreated
	expect_ok
	# Removing a box removes its state directory too.
	box_of .
	state=$(inspect '{{index .Config.Labels "gemini-box.state"}}')
	[ -f "$state/box" ] || fail "no record in $state"
	gb --box-rm --box-yes
	expect_rc 0
	[ -e "$state" ] && fail "--box-rm left the state directory $state"
	return 0
}

# ---------------------------------------------------------------------------
# Runner.
# ---------------------------------------------------------------------------
save_progress
n=0
for name in "${TESTS[@]}"; do
	if [ -n "${GB_IT_ONLY:-}" ] && ! [[ $name =~ $GB_IT_ONLY ]]; then continue; fi
	n=$((n + 1))
	T=$TESTROOT/$(printf '%02d' $n)-$name
	mkdir -p "$T/p"
	t0=$(now_ms)
	(
		cd "$T/p" || exit 1
		"t_$name"
	) </dev/null >"$T/log" 2>&1
	rc=$?
	t1=$(now_ms)
	[ -z "${GB_IT_KEEP:-}" ] && remove_boxes_under "$T"
	undo_home_changes
	tmux -L "$TMUX_SOCKET" kill-server >/dev/null 2>&1
	secs=$(printf '%d.%01d' $(((t1 - t0) / 1000)) $((((t1 - t0) % 1000) / 100)))
	case $rc in
	0)
		PASSED=$((PASSED + 1))
		echo "ok   $n $name (${secs}s)"
		[ -n "${GB_IT_VERBOSE:-}" ] && sed 's/^/    /' "$T/log"
		;;
	77)
		SKIPPED=$((SKIPPED + 1))
		echo "skip $n $name: $(grep '^SKIP: ' "$T/log" | tail -n 1 | cut -c7-)"
		;;
	*)
		FAILED=$((FAILED + 1))
		FAILED_NAMES+=("$name")
		echo "FAIL $n $name (${secs}s)"
		sed 's/^/    /' "$T/log"
		;;
	esac
	save_progress
done

final_cleanup
trap - INT TERM
[ $FAILED -gt 0 ] && echo "failed: ${FAILED_NAMES[*]}"
summary
[ $FAILED -eq 0 ]
