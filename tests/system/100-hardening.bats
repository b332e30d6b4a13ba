#!/usr/bin/env bats
#
# Hardening: races with podman (many launches at once, a box removed or
# stopped while a launch is under way, podman killed in the middle of a
# create) and hostile input (invalid UTF-8, 100,000 arguments, a 1 MB value, an
# unreadable or dangling ~/.gemini, a read-only home). In each, gemini-box must
# either work or fail with one clear "gemini-box: " line and a documented
# status; it must never crash (killed by a signal; under
# `make sanitize-integration`, a sanitizer report).

# shellcheck disable=SC2015 # "test && test || fail" is meant: fail if either fails

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

# run_wrapped PREFIX ARGS...: run gemini-box (stdin inherited) with stdout to
# PREFIX.out, stderr to PREFIX.err, and to PREFIX.rc "exit N", or "signal N"
# when gemini-box itself was killed by a signal (which bash's $? cannot tell
# from an exit status 128+N), or "timeout". Safe to run in the background.
run_wrapped() {
	local prefix=$1
	shift
	: >"$prefix.err"
	python3 -c '
import subprocess, sys
out = open(sys.argv[1] + ".out", "wb")
err = open(sys.argv[1] + ".err", "wb")
try:
    r = subprocess.run(sys.argv[3:], stdout=out, stderr=err, timeout=int(sys.argv[2]))
    rc = r.returncode
    print("exit %d" % rc if rc >= 0 else "signal %d" % -rc)
except subprocess.TimeoutExpired:
    print("timeout")
' "$prefix" "$GB_TIMEOUT" "$BIN" "$@" >"$prefix.rc.tmp" 3>/dev/null && mv "$prefix.rc.tmp" "$prefix.rc"
}

# expect_not_crashed PREFIX WHAT: the run_wrapped run PREFIX ended by itself
# (not killed by a signal, not hung) and, when it failed with one of
# gemini-box's own statuses, said why on one "gemini-box: " line. Any other
# status is passed through from podman exec or gemini. Sets WRC.
expect_not_crashed() {
	local prefix=$1 what=$2 st
	st=$(cat "$prefix.rc" 2>/dev/null) || fail "$what: no status recorded"
	echo "$what: $st"
	sed 's/^/  err| /' "$prefix.err" | head -n 10
	case $st in
	"exit "*) WRC=${st#exit } ;;
	*) fail "$what: gemini-box $st (a crash or a hang)" ;;
	esac
	if [[ $GB_DOCUMENTED_ERRORS == *" $WRC "* ]]; then
		grep -q '^gemini-box: ' "$prefix.err" || fail "$what: exit $WRC without a 'gemini-box: ' line"
	fi
	return 0
}

# expect_clear_error_or_ok WHAT: the last run_gb run (status '?') either
# succeeded (RC 0, a report) or failed with one documented status and exactly
# one stderr line "gemini-box: ...". Sets OUTCOME to ok or error.
expect_clear_error_or_ok() {
	if [ "$RC" = 0 ]; then
		expect_report
		OUTCOME=ok
		return 0
	fi
	[[ $GB_DOCUMENTED_ERRORS == *" $RC "* ]] ||
		fail "$1: expected success or a documented gemini-box status, got $RC"
	expect_error "$RC"
	OUTCOME=error
	echo "$1: a clear error ($RC): $(cat "$T/err")"
}

# expect_one_usable_box: exactly one box for ., running, and a run in it works.
expect_one_usable_box() {
	run_gb 0 -p say:usable
	expect_report
	grep -qx said=usable "$T/out" || fail "no said=usable from the box"
	box_of .
	box_running || fail "the box is not running after a successful run"
}

# move_gemini_dir_away: as gemini_dir_is_created does: ~/.gemini goes to
# ~/.gemini.gb-it-saved and teardown puts it back after the test.
move_gemini_dir_away() {
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || skip "needs the dedicated test user (run as root) to change ~/.gemini"
	[ -e "$HOME/.gemini.gb-it-saved" ] && skip "\$HOME/.gemini.gb-it-saved exists"
	if [ -e "$HOME/.gemini" ] || [ -L "$HOME/.gemini" ]; then
		mv "$HOME/.gemini" "$HOME/.gemini.gb-it-saved" || fail "cannot move ~/.gemini away"
	fi
	touch "$TESTROOT/gemini-dir-moved"
}

# --- races --------------------------------------------------------------------

@test "ten_concurrent_first_runs_one_box" {
	local i ok=1 pids=() n
	mkdir fresh && cd fresh || fail "cd fresh"
	for i in $(seq 1 10); do
		run_wrapped "$T/c$i" -p "say:run-$i" &
		pids+=($!)
	done
	for i in $(seq 1 10); do
		wait "${pids[$((i - 1))]}" || true
		expect_not_crashed "$T/c$i" "run $i"
		[ "$WRC" = 0 ] && grep -qx "said=run-$i" "$T/c$i.out" || ok=
	done
	[ -n "$ok" ] || fail "not every one of ten concurrent first runs succeeded"
	n=$(boxes_of . | grep -c .) || true
	[ "$n" -eq 1 ] || fail "ten concurrent first runs made $n boxes, expected exactly one"
	expect_one_usable_box
}

@test "box_removed_while_a_run_is_inside" {
	local id pid
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	run_wrapped "$T/long" -p sleep:3 say:long &
	pid=$!
	sleep 1
	podman rm -f -t 0 "$BOX" >/dev/null || fail "podman rm -f failed"
	wait $pid || true
	expect_not_crashed "$T/long" "the run whose box was removed under it"
	expect_no_box .
	expect_one_usable_box
	[ "$BOX" != "$id" ] || fail "same container id after podman rm -f"
	# Removed between runs, twice more.
	podman rm -f -t 0 "$BOX" >/dev/null || fail "podman rm -f failed"
	expect_one_usable_box
	podman rm -f -t 0 "$BOX" >/dev/null || fail "podman rm -f failed"
	expect_one_usable_box
}

@test "box_removed_at_any_moment_of_a_launch" {
	local d pid
	run_gb 0 -p hi
	expect_report
	# Removed at different moments of a launch: during inspect, start, exec.
	for d in 0 0.05 0.1 0.2 0.3 0.5; do
		box_of .
		podman stop -t 0 "$BOX" >/dev/null 2>&1 || true # so that the launch has a start to do
		run_wrapped "$T/r$d" -p say:raced &
		pid=$!
		sleep "$d"
		podman rm -f -t 0 "$BOX" >/dev/null 2>&1 || true
		wait $pid || true
		expect_not_crashed "$T/r$d" "a launch with the box removed after ${d}s"
		# Whatever that run did, the next one works and leaves one box.
		expect_one_usable_box
	done
}

@test "box_stopped_while_a_run_is_inside" {
	local id pid d
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	run_wrapped "$T/long" -p sleep:3 say:long &
	pid=$!
	sleep 1
	podman stop -t 1 "$BOX" >/dev/null || fail "podman stop failed"
	wait $pid || true
	expect_not_crashed "$T/long" "the run whose box was stopped under it"
	expect_one_usable_box
	expect_eq "$BOX" "$id" "container id after a stop (the box must be restarted, not replaced)"
	# Stopped at different moments of a launch.
	for d in 0 0.05 0.1 0.2 0.3; do
		run_wrapped "$T/s$d" -p say:raced &
		pid=$!
		sleep "$d"
		podman stop -t 0 "$BOX" >/dev/null 2>&1 || true
		wait $pid || true
		expect_not_crashed "$T/s$d" "a launch with the box stopped after ${d}s"
		expect_one_usable_box
		expect_eq "$BOX" "$id" "container id after a stop during a launch"
	done
}

@test "podman_killed_during_create" {
	local killer=$T/podman-killer.sh d n
	# A podman that SIGKILLs itself GB_KILL_AFTER seconds into a create.
	cat >"$killer" <<'EOF'
#!/bin/sh
sub=
for a in "$@"; do
	case $a in -*) continue ;; esac
	if [ -z "$sub" ]; then
		sub=$a
		[ "$a" = container ] && continue
	else
		sub="$sub $a"
	fi
	break
done
case $sub in
create | "container create" | run)
	me=$$
	(
		sleep "$GB_KILL_AFTER"
		kill -9 "$me" 2>/dev/null && echo "podman-killer.sh: killed podman create" >>"$GB_KILL_LOG"
	) </dev/null >/dev/null 2>&1 &
	;;
esac
exec podman "$@"
EOF
	chmod 755 "$killer"
	for d in 0.05 0.15 0.3 0.6; do
		mkdir "k$d" && cd "k$d" || fail "cd k$d"
		: >"$T/killed"
		GEMINI_BOX_PODMAN=$killer GB_KILL_AFTER=$d GB_KILL_LOG=$T/killed run_wrapped "$T/k$d" -p say:first
		expect_not_crashed "$T/k$d" "a first run with podman create killed after ${d}s ($(grep -c . "$T/killed") kill)"
		if [ "$WRC" != 0 ]; then
			[[ $GB_DOCUMENTED_ERRORS == *" $WRC "* ]] ||
				fail "podman create killed after ${d}s: exit $WRC, not a documented status"
		fi
		n=$(boxes_of . | grep -c .) || true
		echo "boxes after the killed create: $n"
		# The next run repairs whatever was left: one box, usable.
		expect_one_usable_box
		n=$(boxes_of . | grep -c .) || true
		[ "$n" -eq 1 ] || fail "$n boxes after the run that followed a killed create"
		cd .. || fail cd
	done
}

# --- hostile input --------------------------------------------------------------

@test "invalid_utf8_project_path" {
	local dir=$'bad-\xff\xfe-utf8-\xc3(' real id
	mkdir -- "$dir" && cd -- "$dir" || fail "cannot make the directory"
	real=$(realpath .)
	run_gb '?' -p "touch:$real/made"
	expect_clear_error_or_ok "a project path with invalid UTF-8"
	if [ "$OUTCOME" = error ]; then
		expect_no_box .
		run_gb '?' -p hi
		expect_error "$RC"
		return 0
	fi
	expect_eq "$(rget pwd)" "$(esc "$real")" "working directory in the box"
	[ -e made ] || fail "file made in the box is missing on the host"
	box_of .
	id=$BOX
	run_gb 0 -p again
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "container id on the second run"
}

@test "invalid_utf8_forwarded_variable" {
	# podman 4.3 turns invalid bytes into U+FFFD: rather than pass a changed
	# value, gemini-box refuses it with one line (78), and starts nothing.
	GEMINI_MODEL=$'\xff\xfe' run_gb 78 -p hi
	expect_error_line
	grep -q '^gemini-box: GEMINI_MODEL is not valid UTF-8' "$T/err" || fail "the line does not name GEMINI_MODEL"
	expect_no_box .
	GEMINI_MODEL=$'ok-\xc3\xa9-end' run_gb 0 -p hi
	expect_report
	expect_env GEMINI_MODEL $'ok-\xc3\xa9-end'
}

@test "hundred_thousand_arguments" {
	local -a args=(a{1..100000})
	local want
	run_gb 0 -p hi
	expect_report
	box_of .
	# The stand-in exports every argument, which no exec survives with 100,000
	# of them: in this box only, gemini becomes a counter that reports argc,
	# some arguments and a digest of all of them.
	podman exec -i -u 0 "$BOX" sh -c 'cat >/usr/local/bin/gemini' <<'EOF' || fail "cannot replace the stand-in in the box"
#!/bin/sh
echo gemini-stub=begin
echo "argc=$#"
i=0
for a in "$@"; do
	i=$((i + 1))
	case $i in 1 | 2 | 3 | 50002 | 100002) echo "arg.$i=$a" ;; esac
done
echo "args.sha256=$(printf '%s\n' "$@" | sha256sum | cut -d' ' -f1)"
echo exit=0
echo gemini-stub=end
EOF
	want=$(printf '%s\n' -p x "${args[@]}" | sha256sum | cut -d' ' -f1)
	run_gb '?' -p x "${args[@]}"
	expect_clear_error_or_ok "100,000 arguments"
	[ "$OUTCOME" = ok ] || return 0
	expect_eq "$(rget argc)" 100002 "argc with 100,000 arguments after -p x"
	expect_eq "$(rget arg.1)" -p "argument 1"
	expect_eq "$(rget arg.3)" a1 "argument 3"
	expect_eq "$(rget arg.50002)" a50000 "argument 50002"
	expect_eq "$(rget arg.100002)" a100000 "argument 100002"
	expect_eq "$(rget args.sha256)" "$want" "SHA-256 of all the arguments, one a line"
}

@test "one_megabyte_value_in_settings_env" {
	local big got
	# 1,000,000 bytes: the file stays under gemini-box's 1 MiB limit for
	# settings files, the value is far over the kernel's 128 KiB for one
	# string of an exec's environment.
	big=$(head -c 1000000 /dev/zero | tr '\0' v)
	own_config "{\"env\": {\"BIG_VALUE\": \"$big\"}}" >/dev/null
	echo "config.json: {\"env\": {\"BIG_VALUE\": \"vvv... (1,000,000 bytes)\"}}"
	run_gb '?' -p hi
	expect_clear_error_or_ok "a 1 MB value in the settings' env"
	if [ "$OUTCOME" = ok ]; then
		got=$(rget env.BIG_VALUE) || fail "BIG_VALUE did not arrive"
		expect_eq "${#got}" 1000000 "length of BIG_VALUE in the box"
	fi
	# Either way, a normal value still works afterwards.
	own_config '{"env": {"SMALL_VALUE": "s"}}'
	run_gb 0 -p hi
	expect_report
	expect_env SMALL_VALUE s
}

@test "unreadable_gemini_dir" {
	move_gemini_dir_away
	mkdir -m 000 "$HOME/.gemini" || fail "cannot make an unreadable ~/.gemini"
	run_gb '?' -p hi
	expect_clear_error_or_ok "an unreadable ~/.gemini (mode 000)"
	[ "$OUTCOME" = error ] && { expect_rc 66; expect_no_box .; }
	expect_eq "$(stat -c %a "$HOME/.gemini")" 0 "mode of ~/.gemini (gemini-box must not change it)"
	chmod 700 "$HOME/.gemini"
	expect_one_usable_box
}

@test "dangling_gemini_symlink" {
	move_gemini_dir_away
	ln -s "$T/no-such-target" "$HOME/.gemini" || fail "cannot make a dangling ~/.gemini"
	run_gb '?' -p hi
	expect_clear_error_or_ok "a dangling ~/.gemini symlink"
	[ "$OUTCOME" = error ] && { expect_rc 66; expect_no_box .; }
	[ -L "$HOME/.gemini" ] || fail "gemini-box replaced the ~/.gemini symlink"
	if [ "$OUTCOME" = ok ]; then
		[ -d "$T/no-such-target" ] || fail "ran although ~/.gemini leads nowhere"
	fi
	mkdir -p "$T/no-such-target"
	expect_one_usable_box
}

@test "read_only_home" {
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || skip "needs the dedicated test user (run as root) to change \$HOME"
	[ -e "$TESTROOT/home-mode-saved" ] && fail "home-mode-saved exists already"
	mkdir -p "$HOME/.gemini"
	stat -c %a "$HOME" >"$TESTROOT/home-mode-saved" || fail "stat \$HOME"
	chmod a-w "$HOME" || fail "chmod a-w \$HOME"
	# ~/.gemini exists: nothing needs writing in home.
	run_gb '?' -p hi
	expect_clear_error_or_ok "a read-only home with ~/.gemini"
	[ "$OUTCOME" = ok ] || fail "a read-only home in which ~/.gemini exists should work"
	box_of .
	# No ~/.gemini, and it cannot be made: status 66.
	chmod u+w "$HOME"
	move_gemini_dir_away
	chmod a-w "$HOME"
	podman rm -f -t 0 "$BOX" >/dev/null
	run_gb 66 -p hi
	expect_error_line
	expect_no_box .
	[ -e "$HOME/.gemini" ] && fail "\$HOME/.gemini appeared in a read-only home"
	return 0
}
