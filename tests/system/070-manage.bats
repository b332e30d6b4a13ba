#!/usr/bin/env bats
#
# Managing boxes: --box-status, --box-list (text and JSON), --box-stop,
# --box-rm and --box-recreate (and the question they ask on a terminal),
# --box-shell, --box-prune and --box-doctor.

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "box_status_stop_rm" {
	local id
	run_gb 0 -p "touch:$PWD/keep-me"
	expect_report
	box_of .
	id=$BOX
	run_gb 0 --box-status
	grep -q "$(inspect '{{.Name}}')" "$T/out" || fail "--box-status does not name the box"
	grep -qF "$(realpath .)" "$T/out" || fail "--box-status does not name the directory"
	grep -q running "$T/out" || fail "--box-status does not say running"
	run_gb 0 --box-list
	grep -q "$(inspect '{{.Name}}')" "$T/out" || fail "--box-list does not list the box"
	run_gb 0 --box-stop
	box_running && fail "box running after --box-stop"
	box_of .
	expect_eq "$BOX" "$id" "box after --box-stop"
	run_gb '?' --box-rm
	[ "$RC" -ne 0 ] || fail "--box-rm without --box-yes and without a terminal succeeded"
	box_of .
	run_gb 0 --box-rm --box-yes
	expect_no_box .
	[ -e keep-me ] || fail "--box-rm touched the project's files"
	run_gb 0 --box-rm --box-yes
	run_gb 0 -p hi
	expect_report
	box_of .
	[ "$BOX" != "$id" ] || fail "same box id after --box-rm"
}

@test "box_shell" {
	run_gb 3 --box-shell < <(printf 'id -u\npwd\nexit 3\n')
	expect_eq "$(head -n 1 "$T/out")" 1000 "id -u in --box-shell"
	expect_eq "$(sed -n 2p "$T/out")" "$(realpath .)" "pwd in --box-shell"
	run_gb 0 --box-shell --box-root < <(printf 'id -u\n')
	expect_eq "$(head -n 1 "$T/out")" 0 "id -u in --box-shell --box-root"
	box_of .
}

@test "box_prune" {
	local gone_id
	mkdir gone kept
	(cd gone && run_gb 0 -p hi && expect_report) || exit 1
	(cd kept && run_gb 0 -p hi && expect_report) || exit 1
	box_of gone
	gone_id=$BOX
	rm -rf gone
	run_gb 0 --box-prune --box-dry-run
	grep -q "rm.*$(inspect '{{.Name}}' "$gone_id")" "$T/out" || fail "--box-prune --box-dry-run does not remove the box of a gone directory"
	grep -q "rm.*$(inspect '{{.Name}}' "$(boxes_of kept)")" "$T/out" && fail "--box-prune --box-dry-run removes a box whose directory exists"
	podman container exists "$gone_id" || fail "--box-dry-run pruned"
	# The real prune removes every such box of this user: only as the test user.
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || return 0
	run_gb 0 --box-prune --box-yes
	podman container exists "$gone_id" && fail "--box-prune left the box of a gone directory"
	box_of kept
}

@test "box_list_json_and_gone" {
	local name_a name_b
	mkdir a b
	(cd a && run_gb 0 -p hi && expect_report) || exit 1
	(cd b && run_gb 0 -p hi && expect_report) || exit 1
	name_a=$(inspect '{{.Name}}' "$(boxes_of a)")
	name_b=$(inspect '{{.Name}}' "$(boxes_of b)")
	rm -rf b
	run_gb 0 --box-list
	grep -q "^$name_a .*$(realpath a)\$" "$T/out" || fail "--box-list lacks $name_a with its directory"
	grep -q "^$name_b .*(gone)\$" "$T/out" || fail "--box-list does not mark $name_b's directory gone"
	grep -q "^$name_a .*(gone)" "$T/out" && fail "--box-list marks an existing directory gone"
	run_gb 0 --box-list --box-json
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
	defer "podman rm -f gemini-box-impostor-000000000000 >/dev/null 2>&1"
	run_gb 0 --box-list
	podman rm -f gemini-box-impostor-000000000000 >/dev/null
	grep -q impostor "$T/out" && fail "--box-list lists a container without the gemini-box.dir label"
	return 0
}

@test "removal_asks_on_a_terminal" {
	local id
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	confirm_run 1 n --box-rm
	grep -q 'Remove box .*\[y/N\]' "$T/err" || fail "no question on stderr"
	box_of .
	expect_eq "$BOX" "$id" "box after answering n"
	confirm_run 1 n --box-recreate
	box_of .
	expect_eq "$BOX" "$id" "box after answering n to --box-recreate"
	run_gb 64 --box-recreate
	expect_error_line
	confirm_run 0 y --box-recreate
	box_of .
	[ "$BOX" != "$id" ] || fail "--box-recreate answered y kept the box"
	confirm_run 0 y --box-rm
	expect_no_box .
}

@test "box_doctor_reports" {
	run_gb 0 --box-doctor
	grep -q '^OK    podman version' "$T/out" || fail "no podman line"
	grep -q '^OK    rootless$' "$T/out" || fail "no rootless line"
	grep -q '^OK    /etc/subuid: a range for ' "$T/out" || fail "no subuid line"
	grep -q '^OK    /dev/net/tun is usable' "$T/out" || fail "no tun line"
	grep -q '^OK    cgroups .*, OCI runtime runc$' "$T/out" || fail "no cgroup/runtime line"
	grep -q '^OK    a cgroup filesystem is mounted$' "$T/out" || fail "no cgroup mount line"
	grep -q '^\(OK  \|WARN\)  storage driver ' "$T/out" || fail "no storage line"
	grep -q "^OK    box .*: absent" "$T/out" || fail "no box line"
	grep -q '^FAIL' "$T/out" && fail "a FAIL on a working machine"
	# Every line is one finding.
	grep -vq '^\(OK  \|WARN\|FAIL\)  ' "$T/out" && fail "a line that is no finding: $(grep -v '^\(OK  \|WARN\|FAIL\)  ' "$T/out")"
	# A broken setup: podman missing.
	GEMINI_BOX_PODMAN=/nonexistent/podman run_gb 1 --box-doctor
	grep -q '^FAIL  podman not found' "$T/out" || fail "no FAIL for a missing podman"
	# The IDE probe, from inside a host-network box, for real.
	start_companion
	own_config '{"network": "host"}'
	export GEMINI_CLI_IDE_SERVER_PORT=$IDE_PORT GEMINI_CLI_IDE_AUTH_TOKEN=$IDE_TOKEN
	run_gb 0 -p hi
	expect_report
	run_gb 0 --box-doctor
	grep -q "^OK    IDE companion at 127.0.0.1:$IDE_PORT, probed from inside the box" "$T/out" ||
		fail "no successful IDE probe"
	kill "$COMPANION_PID"
	wait "$COMPANION_PID" 2>/dev/null || true
	run_gb 1 --box-doctor
	grep -q "^FAIL  IDE companion at 127.0.0.1:$IDE_PORT" "$T/out" || fail "a dead companion is not a FAIL"
	return 0
}
