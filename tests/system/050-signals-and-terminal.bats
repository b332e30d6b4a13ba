#!/usr/bin/env bats
#
# Signals sent to gemini-box reach gemini in the box; gemini gets a terminal
# exactly when it will be interactive (under tmux, a real terminal).

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

# podman 4.3's exec relays no signal: gemini-box must, or a killed run leaves
# gemini working in the box and reports success.
@test "signals_reach_gemini" {
	local sig num pid rc
	run_gb 0 -p hi
	expect_report
	box_of .
	for sig in TERM INT HUP; do
		num=$(kill -l "$sig")
		# A background job starts with SIGINT ignored, which gemini-box
		# respects as every program should: reset it for this test.
		timeout --foreground -k 5 "$GB_TIMEOUT" env --default-signal=INT,QUIT "$BIN" \
			-p pid sleep:30 say:finished >"$T/sig.out" 2>"$T/sig.err" 3>/dev/null &
		pid=$!
		for _ in $(seq 1 200); do
			grep -q '^pid=' "$T/sig.out" && break
			sleep 0.05
		done
		grep -q '^pid=' "$T/sig.out" || fail "gemini did not start under gemini-box"
		kill -"$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		echo "SIG$sig: exit $rc"
		sed 's/^/  err| /' "$T/sig.err"
		grep -q '^said=finished' "$T/sig.out" && fail "gemini ran on to its end after SIG$sig"
		podman top "$BOX" args | grep -q 'sleep:30' && fail "gemini still runs in the box after SIG$sig"
		expect_eq "$rc" "$((128 + num))" "exit status after SIG$sig"
	done
}

@test "tty_interactive_under_terminal" {
	local args
	tty_run 0 --
	expect_report
	expect_eq "$(rget stdin.tty)" yes "stdin is a TTY for an interactive run"
	expect_eq "$(rget stdout.tty)" yes "stdout is a TTY for an interactive run"
	tty_run 5 -- -i exit:5
	expect_report
	expect_eq "$(rget stdout.tty)" yes "stdout is a TTY with -i QUERY"
	# Options taking a value: the next word is that value, not a query.
	for args in '--model m' '-m hello' '--prompt-interactive=q' '-d' '-y' '--approval-mode yolo' \
		'-e ext' '--include-directories d' '--skip-trust'; do
		# shellcheck disable=SC2086 # word splitting intended
		tty_run 0 -- $args
		expect_report
		expect_eq "$(rget stdin.tty)/$(rget stdout.tty)" yes/yes "stdin/stdout TTY for: $args"
	done
}

@test "tty_not_for_headless_or_commands" {
	local args
	for args in 'mcp list' '-p hi' '--prompt=hi' '--prompt hi' 'hello' '-m m hello' \
		'--model=m hello' 'extensions list' 'extension list' 'skills list' 'skill list' \
		'hooks list' 'hook list' 'gemma' '--acp' '--experimental-acp' '-v' '--version' '-h' '--help'; do
		# shellcheck disable=SC2086 # word splitting intended
		tty_run 0 -- $args
		expect_report
		expect_eq "$(rget stdin.tty)/$(rget stdout.tty)" no/no "stdin/stdout TTY for: $args"
	done
	tty_run 0 CI=true --
	expect_report
	expect_eq "$(rget stdout.tty)" no "stdout TTY with CI=true"
	tty_run 0 GITHUB_ACTIONS=true --
	expect_report
	expect_eq "$(rget stdout.tty)" no "stdout TTY with GITHUB_ACTIONS=true"
	GB_TTY_STDOUT=$T/redirected tty_run 0 --
	expect_report
	expect_eq "$(rget stdout.tty)" no "stdout TTY when stdout is a file"
	GB_TTY_STDIN=/dev/null tty_run 0 --
	expect_report
	expect_eq "$(rget stdout.tty)" no "stdout TTY when stdin is /dev/null"
}

@test "tty_not_without_terminal" {
	shopt -s lastpipe
	echo | CI='' run_gb 0
	expect_report
	expect_eq "$(rget stdin.tty)/$(rget stdout.tty)" no/no "stdin/stdout TTY with pipes"
}
