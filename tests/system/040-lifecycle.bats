#!/usr/bin/env bats
#
# A box's life: its main process (gemini-box-init), stopped, killed, removed
# and idle boxes, concurrent first runs and sessions, the warm path that asks
# podman nothing but exec, and the state directory and init copy it relies on.

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "main_process_is_not_gemini_and_stop_is_fast" {
	local cmd t0 t1 id
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	cmd="$(inspect '{{.Path}} {{join .Args " "}}')"
	echo "main process: $cmd"
	[[ $cmd == "/run/gemini-box/init --lock "* ]] || fail "the box's main process is not gemini-box-init: $cmd"
	podman top "$BOX" pid args | awk '$1 == 1' | grep -q '/run/gemini-box/init' ||
		fail "PID 1 in the box is not gemini-box-init: $(podman top "$BOX" pid args)"
	# Orphans of a run are reparented to PID 1, which must reap them.
	run_gb 0 --box-shell < <(printf '(sleep 0.3 &) ; (sleep 0.3 &) ; exit 0\n')
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
	run_gb 0 -p after-stop
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "container id after stop"
}

@test "stopped_box_restarts" {
	local id
	run_gb 0 -p one
	expect_report
	box_of .
	id=$BOX
	podman stop -t 2 "$BOX" >/dev/null || fail "podman stop failed"
	box_running && fail "box still running after podman stop"
	run_gb 0 -p two
	expect_report
	expect_args -p two
	box_of .
	expect_eq "$BOX" "$id" "container id after restart"
	box_running || fail "box not running after the run restarted it"
	podman kill "$BOX" >/dev/null || fail "podman kill failed"
	podman wait "$BOX" >/dev/null 2>&1 || true
	box_running && fail "box still running after podman kill"
	run_gb 0 -p three
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "container id after a killed box restarted"
}

@test "removed_box_is_recreated" {
	local id
	run_gb 0 -p one
	expect_report
	box_of .
	id=$BOX
	podman rm -f -t 0 "$BOX" >/dev/null || fail "podman rm -f failed"
	expect_no_box .
	run_gb 0 -p two
	expect_report
	expect_args -p two
	box_of .
	[ "$BOX" != "$id" ] || fail "same container id after podman rm -f ($id)"
	box_running || fail "recreated box not running"
}

@test "concurrent_first_runs_one_box" {
	local round i rc ok
	for round in 1 2; do
		mkdir "r$round"
		cd "r$round" || fail cd
		local pids=()
		for i in 1 2 3; do
			timeout --foreground -k 5 "$GB_TIMEOUT" "$BIN" -p "say:run-$i" \
				>"$T/c$round-$i.out" 2>"$T/c$round-$i.err" 3>/dev/null &
			pids+=($!)
		done
		ok=1
		for i in 1 2 3; do
			rc=0
			wait "${pids[$((i - 1))]}" || rc=$?
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

@test "concurrent_sessions_in_one_box" {
	local pid t0 t1 rc
	run_gb 0 -p hi
	expect_report
	timeout --foreground -k 5 "$GB_TIMEOUT" "$BIN" -p sleep:4 say:long >"$T/bg.out" 2>"$T/bg.err" 3>/dev/null &
	pid=$!
	sleep 1
	t0=$(now_ms)
	run_gb 0 -p say:short
	t1=$(now_ms)
	expect_report
	[ $((t1 - t0)) -lt 3000 ] || fail "a second session waited for the first ($((t1 - t0)) ms)"
	rc=0
	wait $pid || rc=$?
	[ $rc -eq 0 ] && grep -qx said=long "$T/bg.out" || fail "the long session failed (exit $rc)"
	box_of .
}

@test "warm_run_asks_podman_nothing_but_exec" {
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	run_gb 0 -p hi
	expect_report
	box_of .
	: >"$GB_PODMAN_LOG"
	run_gb 0 -p warm
	expect_report
	expect_eq "$(podman_calls | tr '\n' ' ')" "exec " "podman calls of a warm run"
	# Other settings: the record no longer matches, so podman is asked again.
	own_config '{"ports": ["18123:80"]}'
	: >"$GB_PODMAN_LOG"
	run_gb 0 -p changed
	expect_report
	podman_calls | grep -qx 'container inspect' || fail "a run with other settings did not inspect the box"
	grep -q '^gemini-box: .*ports' "$T/err" || fail "no drift line for the changed ports"
	own_config '{}'
	# A stopped box: its init is gone, so the lock is free; the record names
	# the box's id, which is started without asking podman first.
	podman stop -t 2 "$BOX" >/dev/null
	: >"$GB_PODMAN_LOG"
	run_gb 0 -p stopped
	expect_report
	expect_eq "$(podman_calls | tr '\n' ' ')" "start exec " "podman calls into a stopped box"
	read_log "$GB_PODMAN_LOG"
	[[ ${LOG_RECORDS[0]} == *$'\x1f'"$BOX" ]] || fail "the stopped box was not started by its id"
	# Another directory never takes this box's fast path.
	mkdir other
	(cd other && run_gb 0 -p elsewhere && expect_report) || exit 1
	[ "$(boxes_of other)" != "$BOX" ] || fail "another directory ran in this box"
}

@test "idle_box_stops_itself_and_comes_back" {
	local id i
	own_config '{"idle_stop_minutes": 0.05}'
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	expect_eq "$(inspect '{{index .Args 3}}')" 3 "--idle-seconds of the box's init"
	# Busy while a run lasts: no stop in the middle of it.
	run_gb 0 -p sleep:6 say:done
	expect_report
	expect_eq "$(rget said)" 'done' "a run longer than the idle time"
	for i in $(seq 1 100); do
		box_running || break
		sleep 0.1
	done
	box_running && fail "the box did not stop itself after 3 idle seconds"
	expect_eq "$(inspect '{{.State.ExitCode}}')" 0 "exit status of an idle stop"
	run_gb 0 -p again
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "box after an idle stop"
	box_running || fail "the box did not start again"
}

@test "box_state_and_init_survive_cleanups" {
	local state copy name
	run_gb 0 -p hi
	expect_report
	box_of .
	state=$(inspect '{{index .Config.Labels "gemini-box.state"}}')
	copy=$(inspect '{{index .Config.Labels "gemini-box.init"}}')
	[ -d "$state" ] && [ -x "$copy" ] || fail "no state directory $state or init $copy"
	# A reboot empties /tmp; someone cleans ~/.local/share: the next start puts both back.
	podman stop -t 2 "$BOX" >/dev/null
	rm -rf "$state" "$(dirname "$copy")"
	run_gb 0 -p back
	expect_report
	[ -d "$state" ] && [ -x "$copy" ] || fail "state directory or init not restored"
	# A box made by another gemini-box whose init is gone (upgraded, moved):
	# a clear message, not podman's. Such a box is made here by hand.
	mkdir old && cd old || fail cd
	run_gb 0 --box-status
	name=$(awk '$1 == "name" {print $2}' "$T/out")
	podman create --name "$name" --label "gemini-box.dir=$(realpath .)" \
		--label gemini-box.init=/nonexistent/old/gemini-box-init \
		--label "gemini-box.state=$state" --entrypoint /run/gemini-box/init "$IMAGE" >/dev/null ||
		fail "podman create of an old box failed"
	run_gb 71 -p moved
	# (a line about its other settings may come first: it is another's box)
	tail -n 1 "$T/err" | grep -q "^gemini-box: .*init .* is gone.*--box-recreate" ||
		fail "no clear last line for a vanished init"
	run_gb 0 --box-recreate --box-yes
	run_gb 0 -p recreated
	expect_report
	# Removing a box removes its state directory too.
	box_of .
	state=$(inspect '{{index .Config.Labels "gemini-box.state"}}')
	[ -f "$state/box" ] || fail "no record in $state"
	run_gb 0 --box-rm --box-yes
	[ -e "$state" ] && fail "--box-rm left the state directory $state"
	return 0
}
