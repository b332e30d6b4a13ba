#!/usr/bin/env bats
#
# The IDE companion (a stand-in on the host's loopback) from a host-network box
# and from an isolated one, network "none", published ports, and boxes run by
# gVisor (runsc).

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "ide_companion_from_a_host_network_box" {
	local dir file
	start_companion
	own_config '{"network": "host"}'
	export GEMINI_CLI_IDE_SERVER_PORT=$IDE_PORT GEMINI_CLI_IDE_AUTH_TOKEN=$IDE_TOKEN \
		GEMINI_CLI_IDE_WORKSPACE_PATH=$PWD
	run_gb 0 -p ide
	expect_report
	expect_eq "$(rget ide.host)" 127.0.0.1 "the host gemini dials from a host-network box"
	expect_eq "$(rget ide)" ok "the request to the companion"
	grep -qx "200 127.0.0.1:$IDE_PORT /mcp" "$IDE_LOG" || fail "the companion did not accept it: $(cat "$IDE_LOG")"
	[ -s "$T/err" ] && fail "unexpected stderr: $(cat "$T/err")"
	# A wrong token is refused by the companion, as it should be.
	GEMINI_CLI_IDE_AUTH_TOKEN=wrong run_gb 0 -p ide
	expect_eq "$(rget ide)" failed "a request with the wrong token"
	grep -qx "401 127.0.0.1:$IDE_PORT /mcp" "$IDE_LOG" || fail "no 401 for a wrong token"
	# The port files are shared read-only at the same path.
	dir=${TMPDIR:-/tmp}/gemini/ide
	file=$dir/gemini-ide-server-4242-$IDE_PORT.json
	printf '{"port": %s}' "$IDE_PORT" >"$file"
	defer "rm -f $(printf %q "$file")"
	run_gb '?' -p "cat:$file" "touch:$dir/planted"
	expect_report
	expect_eq "$(rget "cat.$file")" "{\"port\": $IDE_PORT}" "the port file seen in the box"
	[ -e "$dir/planted" ] && { rm -f "$dir/planted"; fail "the port-file directory is writable from the box"; }
	rm -f "$file"
	# The stdio fallback: a host program the box lacks gets one line.
	GEMINI_CLI_IDE_SERVER_STDIO_COMMAND=/opt/no-such-ide/bin/bridge GEMINI_CLI_IDE_SERVER_STDIO_ARGS='["--stdio"]' run_gb 0 -p hi
	expect_report
	expect_env GEMINI_CLI_IDE_SERVER_STDIO_ARGS '["--stdio"]'
	grep -q "^gemini-box: the IDE's stdio command /opt/no-such-ide/bin/bridge is not in the box" "$T/err" ||
		fail "no warning for a stdio command missing in the box"
	GEMINI_CLI_IDE_SERVER_STDIO_COMMAND=/bin/sh run_gb 0 -p hi
	expect_report
	[ -s "$T/err" ] && fail "a warning for a stdio command the box has: $(cat "$T/err")"
	# "ide": false withholds every IDE variable.
	own_config '{"network": "host", "ide": false}'
	run_gb 0 --box-recreate --box-yes
	run_gb '?' -p ide
	expect_report
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
	expect_no_env GEMINI_CLI_IDE_SERVER_PORT
	return 0
}

@test "ide_companion_unreachable_from_an_isolated_box_says_so" {
	start_companion
	export GEMINI_CLI_IDE_SERVER_PORT=$IDE_PORT GEMINI_CLI_IDE_AUTH_TOKEN=$IDE_TOKEN
	run_gb '?' -p ide
	expect_report
	expect_eq "$(rget ide)" failed "a request from an isolated box"
	grep -q '^200' "$IDE_LOG" && fail "an isolated box reached the companion"
	grep -q '^gemini-box: the IDE companion .*"network": "host"' "$T/err" ||
		fail "no line saying why the IDE cannot be reached"
	expect_eq "$(wc -l <"$T/err")" 1 "stderr lines"
	own_config '{"ide": false}'
	run_gb 0 -p hi
	expect_report
	[ -s "$T/err" ] && fail "the IDE line despite \"ide\": false: $(cat "$T/err")"
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
	return 0
}

@test "network_none_has_no_network_and_says_so" {
	own_config '{"network": "none"}'
	run_gb 0 -p hi
	expect_report
	grep -q '^gemini-box: network "none": gemini in this box cannot reach its API' "$T/err" ||
		fail "no line saying gemini cannot reach its API"
	box_of .
	expect_eq "$(inspect '{{.HostConfig.NetworkMode}}')" none "the box's network mode"
	podman exec "$BOX" sh -c 'ls /sys/class/net' | grep -vx lo | grep -q . &&
		fail "a box with network none has interfaces: $(podman exec "$BOX" ls /sys/class/net)"
	return 0
}

@test "published_port_serves_the_host" {
	local port=$((20000 + RANDOM % 20000)) got=
	own_config "{\"ports\": [\"$port:8000\"]}"
	run_gb 0 -p hi
	expect_report
	box_of .
	# A dev server the agent starts in the box, on the box's port 8000.
	podman exec -d "$BOX" sh -c 'mkdir -p /tmp/www && echo served-from-box >/tmp/www/index.html && httpd -f -p 8000 -h /tmp/www' ||
		fail "cannot start httpd in the box"
	for _ in $(seq 1 50); do
		got=$(python3 -c "import urllib.request,sys; print(urllib.request.urlopen('http://127.0.0.1:$port/').read().decode().strip())" 2>/dev/null) && break
		sleep 0.1
	done
	expect_eq "$got" served-from-box "the page the host gets from the box's port"
	podman port "$BOX" | grep -q "^8000/tcp -> 127.0.0.1:$port\$" || fail "not published on loopback only: $(podman port "$BOX")"
}

@test "runsc_box_runs_gemini" {
	command -v runsc >/dev/null 2>&1 || skip "runsc (gVisor) is not installed"
	own_config "{\"runtime\": \"$(command -v runsc)\"}"
	run_gb '?' -p "touch:$PWD/made-in-gvisor"
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
	run_gb 0 -p again
	expect_report
	# A runsc that cannot run the box: the line says so and what to do.
	mkdir -p "$T/bin" other && printf '#!/bin/sh\necho "runsc: cannot do that" >&2\nexit 1\n' >"$T/bin/runsc" &&
		chmod 755 "$T/bin/runsc"
	cd other || fail cd
	own_config "{\"runtime\": \"$T/bin/runsc\"}"
	run_gb 71 -p hi
	tail -n 1 "$T/err" | grep -q '^gemini-box: .*gVisor (runsc) could not run the box: check runsc --version' ||
		fail "no line about runsc failing"
}
