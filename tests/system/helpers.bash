# shellcheck shell=bash
# Helpers of gemini-box's system tests (tests/system/NNN-area.bats; each file
# does `load helpers`), in the manner of podman's test/system/helpers.bash.
#
# Every test runs in a fresh directory $T under $TESTROOT (setup_suite.bash
# makes it under $HOME, which is in no git work tree) and starts in its
# project directory $T/p, against the image localhost/gemini-box-test:latest
# (tests/integration/build-image.sh; the stand-in gemini is
# tests/integration/image/gemini, see its header for what it reports and
# obeys). After each test, the boxes whose gemini-box.dir label lies in $T are
# removed and changes to $HOME undone.
#
# run_gb EXPECTED_STATUS ARGS... runs gemini-box and checks its exit status
# ('?': any); on another status it prints the command, its stdout and stderr,
# and the test fails. Its stdout is in $T/out, its stderr in $T/err, its status
# in $RC.
#
# Environment (tests/system/run.sh sets it; for a bare `bats tests/system`,
# only podman must work and the test image exist):
#   GB_BIN                the gemini-box under test (default build/gemini-box)
#   GB_IT_TIMEOUT=N       seconds allowed to one gemini-box run (default 60)
#   GB_IT_KEEP=1          keep the test directories and boxes (for debugging)
#   GB_IT_DEDICATED_USER=1  a user of its own: tests may change $HOME
#   GB_IT_PLANTED, GB_IT_PLANTED_TMP  what the user gbother planted (setup-machine.sh)
#   GB_IT_REAL_IMAGE      the image with the real gemini CLI (setup-machine.sh)
#
# Output of a test (shown when it fails, or with GB_IT_VERBOSE=1): every
# gemini-box command as "$ gemini-box ..." and its "  exit N".

# shellcheck disable=SC2015 # "test && test || fail" is meant: fail if either fails
# shellcheck disable=SC2034 # variables used by the .bats files that load this

SYSTEM_DIR=$(cd "$BATS_TEST_DIRNAME" && pwd)
# The test image's inputs, the podman shim and the stand-in IDE companion.
IT_DIR=$(cd "$SYSTEM_DIR/../integration" && pwd)
BIN=${GB_BIN:-$SYSTEM_DIR/../../build/gemini-box}
IMAGE=localhost/gemini-box-test:latest
IMAGE_ALT=localhost/gemini-box-test:alt
GB_TIMEOUT=${GB_IT_TIMEOUT:-60}
LOGGER=$IT_DIR/podman-logger.sh
TMUX_SOCKET=gb-bats-$$
# gemini-box's own documented statuses (gemini-box.1, EXIT STATUS).
GB_DOCUMENTED_ERRORS=' 1 64 66 69 70 71 72 78 '

# bats reports on file descriptor 3: a process that outlived its test holding
# it (a conmon, podman's pause process, a tmux server) would keep bats from
# ever finishing. So every program that may start one gets /dev/null there.
podman() { command podman "$@" 3>/dev/null; }
tmux() { command tmux "$@" 3>/dev/null; }

# ---------------------------------------------------------------------------
# Per-test setup and teardown.
# ---------------------------------------------------------------------------

# clean_env: forwarded or otherwise meaningful variables come from the tests
# only; gemini-box reads the user's settings from $XDG_CONFIG_HOME/gemini-box,
# which is an empty one (podman's, $XDG_CONFIG_HOME/containers, is the user's).
clean_env() {
	local name
	unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GENAI_USE_VERTEXAI GOOGLE_GENAI_USE_GCA \
		GOOGLE_CLOUD_PROJECT GOOGLE_CLOUD_LOCATION GOOGLE_GEMINI_BASE_URL \
		GOOGLE_VERTEX_BASE_URL GEMINI_MODEL GEMINI_CLI_TRUST_WORKSPACE GEMINI_SANDBOX \
		SANDBOX GEMINI_BOX_PODMAN GB_PODMAN_LOG TERM_PROGRAM COLORTERM TMUX
	while IFS='=' read -r name _; do
		case $name in GEMINI_CLI_IDE_* | GEMINI_BOX_*) unset "$name" ;; esac
	done < <(env)
	export GEMINI_IMAGE=$IMAGE
	real_config=${XDG_CONFIG_HOME:-$HOME/.config}
	export XDG_CONFIG_HOME=$TESTROOT/config
}

setup() {
	exec </dev/null
	[ -n "${TESTROOT:-}" ] && [ -d "$TESTROOT" ] || fail "no \$TESTROOT: setup_suite.bash did not run"
	T=$TESTROOT/$(printf '%02d' "$BATS_SUITE_TEST_NUMBER")-$BATS_TEST_DESCRIPTION
	mkdir -p "$T/p"
	cd "$T/p" || fail "cd $T/p"
	clean_env
	VERSION=$("$BIN" --box-version 2>/dev/null | sed -n 's/^gemini-box \([0-9][0-9.]*\)$/\1/p')
	LAST_CMD=
	RC=
	BOX=
	DEFERRED=()
}

teardown() {
	local i
	cd "$TESTROOT" || cd /
	tmux -L "$TMUX_SOCKET" kill-server >/dev/null 2>&1 || true
	undo_home_changes
	[ -n "${GB_IT_KEEP:-}" ] || remove_boxes_under "$T"
	# After the boxes (which may use an image to remove); last deferred first.
	for ((i = ${#DEFERRED[@]} - 1; i >= 0; i--)); do
		eval "${DEFERRED[$i]}" || true
	done
	return 0
}

# defer COMMAND: run COMMAND (eval'd) in teardown, however the test ends.
defer() {
	DEFERRED+=("$1")
}

# remove_boxes_under DIR: podman rm -f every box whose gemini-box.dir is DIR or
# lies below it.
remove_boxes_under() {
	local prefix=$1 id dir
	[ -n "$prefix" ] || return 0
	for id in $(podman ps -a -q --no-trunc --filter label=gemini-box.dir 2>/dev/null); do
		dir=$(podman container inspect --format '{{index .Config.Labels "gemini-box.dir"}}|' "$id" 2>/dev/null) || continue
		dir=${dir%|}
		case $dir in
		"$prefix" | "$prefix"/*) podman rm -f -t 0 "$id" >/dev/null 2>&1 || true ;;
		esac
	done
	return 0
}

# undo_home_changes: home_git_is_not_a_project makes an empty ~/.git,
# gemini_dir_is_created and move_gemini_dir_away move ~/.gemini away,
# read_only_home takes away the write permission of $HOME; each leaves a mark
# in $TESTROOT, and this undoes what is marked.
undo_home_changes() {
	[ -n "${TESTROOT:-}" ] || return 0
	# First, so that the others can write in $HOME again.
	if [ -e "$TESTROOT/home-mode-saved" ]; then
		chmod "$(cat "$TESTROOT/home-mode-saved")" "$HOME" || true
		rm -f "$TESTROOT/home-mode-saved"
	fi
	if [ -e "$TESTROOT/home-git-made" ]; then
		rmdir "$HOME/.git" 2>/dev/null || true
		rm -f "$TESTROOT/home-git-made"
	fi
	if [ -e "$TESTROOT/gemini-dir-moved" ]; then
		if [ -e "$HOME/.gemini.gb-it-saved" ]; then
			chmod -R u+rwX "$HOME/.gemini" 2>/dev/null || true
			rm -rf "$HOME/.gemini"
			mv "$HOME/.gemini.gb-it-saved" "$HOME/.gemini"
		fi
		rm -f "$TESTROOT/gemini-dir-moved"
	fi
	return 0
}

# ---------------------------------------------------------------------------
# Running gemini-box.
# ---------------------------------------------------------------------------

# qargs ARGS...: ARGS shell-quoted on one line (the first 40 of more).
qargs() {
	local out=
	if [ $# -gt 40 ]; then
		printf -v out ' %q' "${@:1:20}"
		printf '%s ... (%d arguments)' "${out# }" $#
		return 0
	fi
	[ $# -eq 0 ] || printf -v out ' %q' "$@"
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

show_last() {
	[ -n "$LAST_CMD" ] || return 0
	echo "  last run: $LAST_CMD  -> exit ${RC:-?}"
	echo "  --- its stdout:"
	head -n 60 "$T/out" 2>/dev/null | sed 's/^/  | /'
	echo "  --- its stderr:"
	head -n 30 "$T/err" 2>/dev/null | sed 's/^/  | /'
}

# fail MESSAGE: the test fails, with MESSAGE and the last command's output.
# (exit, not return: it also fails from a subshell or an && list.)
fail() {
	echo "FAIL: $*"
	show_last
	exit 1
}

# check_status EXPECTED: $RC is EXPECTED ('?': any status).
check_status() {
	[ "$1" = '?' ] || [ "$RC" = "$1" ] && return 0
	if [ "$RC" = 124 ]; then
		fail "exit status $RC (timeout: more than ${GB_TIMEOUT}s?), expected $1"
	fi
	fail "exit status $RC, expected $1"
}

# run_checked EXPECTED SHOWN COMMAND...: run COMMAND (stdin inherited, at most
# GB_TIMEOUT seconds; timeout runs in the foreground so that an interrupt of
# the suite reaches it too), logged as SHOWN; stdout to $T/out, stderr to
# $T/err, the status to $RC, checked against EXPECTED.
run_checked() {
	local expected=$1
	LAST_CMD=$2
	shift 2
	echo "\$ $LAST_CMD    # in $(qargs "$PWD")"
	RC=0
	timeout --foreground -k 5 "$GB_TIMEOUT" "$@" >"$T/out" 2>"$T/err" 3>/dev/null || RC=$?
	echo "  exit $RC"
	check_status "$expected"
}

# run_gb EXPECTED ARGS...: gemini-box ARGS, in the manner of podman's run_podman.
run_gb() {
	local expected=$1
	shift
	run_checked "$expected" "gemini-box $(qargs "$@")" "$BIN" "$@"
}

# run_gb_env EXPECTED ENV_ARGS... -- ARGS...: gemini-box ARGS under
# env ENV_ARGS (to change PATH, or to unset a variable).
run_gb_env() {
	local expected=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	run_checked "$expected" "env $(qargs "${envs[@]}") gemini-box $(qargs "$@")" env "${envs[@]}" "$BIN" "$@"
}

# tty_run EXPECTED [NAME=VALUE...] -- ARGS...: run gemini-box with ARGS in the
# current directory under a real terminal (a detached tmux session), with CI
# and GITHUB_ACTIONS unset unless given. The stand-in's report (copied to
# ./.gemini-stub-report) lands in $T/out, stderr in $T/err, the status in $RC.
# With GB_TTY_STDOUT=FILE / GB_TTY_STDIN=FILE, gemini-box's stdout / stdin is
# that file instead of the terminal.
tty_run() {
	local expected=$1 envs=() i
	shift
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
		[ -z "${GB_TTY_STDOUT:-}" ] || printf ' >%q' "$GB_TTY_STDOUT"
		[ -z "${GB_TTY_STDIN:-}" ] || printf ' <%q' "$GB_TTY_STDIN"
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
	check_status "$expected"
}

# confirm_run EXPECTED ANSWER ARGS...: run gemini-box under a terminal and
# type ANSWER and Enter (typed ahead: the terminal keeps it until gemini-box
# reads).
confirm_run() {
	local expected=$1 answer=$2 i
	shift 2
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
	check_status "$expected"
}

# own_config JSON: use a settings file of this test's own with JSON in it.
own_config() {
	export XDG_CONFIG_HOME=$T/config
	mkdir -p "$XDG_CONFIG_HOME/gemini-box"
	[ ! -e "$real_config/containers" ] || ln -sfn "$real_config/containers" "$XDG_CONFIG_HOME/containers"
	printf '%s\n' "$1" >"$XDG_CONFIG_HOME/gemini-box/config.json"
	echo "config.json: $1"
}

# ---------------------------------------------------------------------------
# Assertions on the last run.
# ---------------------------------------------------------------------------

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

# expect_ok: exit 0 with a complete report (for runs whose status is not
# checked by run_gb).
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

# expect_error_line: the last run wrote exactly one stderr line, "gemini-box: ...".
expect_error_line() {
	local n
	n=$(wc -l <"$T/err")
	[ "$n" -eq 1 ] || fail "expected exactly one stderr line, got $n"
	grep -q '^gemini-box: ' "$T/err" || fail "the stderr line does not start with 'gemini-box: '"
}

# expect_error STATUS: exit STATUS and exactly one stderr line "gemini-box: ...".
expect_error() {
	expect_rc "$1"
	expect_error_line
}

# ---------------------------------------------------------------------------
# Boxes.
# ---------------------------------------------------------------------------

# boxes_of DIR: the full ids of the boxes whose gemini-box.dir label is DIR's
# real path (labels are compared exactly, byte for byte).
boxes_of() {
	local real id dir
	real=$(realpath -e -- "$1") || return 1
	for id in $(podman ps -a -q --no-trunc --filter label=gemini-box.dir); do
		dir=$(podman container inspect --format '{{index .Config.Labels "gemini-box.dir"}}|' "$id" 2>/dev/null) || continue
		if [ "${dir%|}" = "$real" ]; then echo "$id"; fi
	done
	return 0
}

# box_of DIR: sets BOX to the id of DIR's one box (fails unless exactly one).
box_of() {
	local ids n
	ids=$(boxes_of "$1") || true
	n=$(printf '%s' "$ids" | grep -c .) || true
	[ "$n" -eq 1 ] || fail "expected exactly one box labelled gemini-box.dir=$(realpath -- "$1"), found $n"
	BOX=$ids
}

expect_no_box() {
	local ids
	ids=$(boxes_of "$1") || true
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

# agent_sh SCRIPT: run SCRIPT in this directory's box as the box's user (the
# agent); its status is the script's.
agent_sh() {
	podman exec -w "$(realpath .)" "$BOX" /bin/sh -c "$1"
}

now_ms() { date +%s%3N; }

# ---------------------------------------------------------------------------
# What gemini-box asked of podman (GEMINI_BOX_PODMAN=$LOGGER, GB_PODMAN_LOG).
# ---------------------------------------------------------------------------

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

# record_words RECORD: sets WORDS to the words of one logged invocation.
record_words() {
	WORDS=()
	IFS=$'\x1f' read -r -d '' -a WORDS < <(printf '%s\x1f' "$1") || true
}

# record_sub RECORD: the podman subcommand of one logged invocation (skipping
# global options), e.g. "exec", "create", "container inspect", "image exists".
record_sub() {
	local i=0
	record_words "$1"
	while [ $i -lt ${#WORDS[@]} ] && [[ ${WORDS[$i]} == -* ]]; do i=$((i + 1)); done
	case ${WORDS[$i]:-} in
	container | image | volume | network) echo "${WORDS[$i]} ${WORDS[$((i + 1))]:-}" ;;
	*) echo "${WORDS[$i]:-}" ;;
	esac
}

# podman_calls: the podman subcommands of the logged invocations, one a line.
podman_calls() {
	local r
	read_log "$GB_PODMAN_LOG"
	for r in "${LOG_RECORDS[@]}"; do record_sub "$r"; done
}

# has_opt OPT VALUE WORDS...: WORDS hold "OPT VALUE" or "OPT=VALUE".
has_opt() {
	local opt=$1 val=$2 prev='' w
	shift 2
	for w in "$@"; do
		[ "$prev" = "$opt" ] && [ "$w" = "$val" ] && return 0
		[ "$w" = "$opt=$val" ] && return 0
		prev=$w
	done
	return 1
}

# ---------------------------------------------------------------------------
# The stand-in IDE companion.
# ---------------------------------------------------------------------------

# start_companion: the stand-in IDE companion on the host's loopback; sets
# IDE_PORT, IDE_TOKEN, IDE_LOG and COMPANION_PID; it is stopped in teardown.
start_companion() {
	local i
	IDE_TOKEN=tok-$RANDOM$RANDOM IDE_LOG=$T/companion.log
	: >"$IDE_LOG"
	python3 "$IT_DIR/ide-companion.py" "$IDE_TOKEN" "$IDE_LOG" "$T/companion.port" 3>/dev/null &
	COMPANION_PID=$!
	defer "kill $COMPANION_PID 2>/dev/null"
	for i in $(seq 1 100); do
		[ -s "$T/companion.port" ] && break
		sleep 0.05
	done
	IDE_PORT=$(cat "$T/companion.port") || fail "the stand-in companion did not start"
}
