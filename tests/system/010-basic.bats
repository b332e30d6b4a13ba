#!/usr/bin/env bats
#
# The command line: --box-version and --box-help, usage errors, which
# arguments are gemini's, and gemini-box's own exit statuses when podman, the
# image or a podman step fails.

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "version_and_help" {
	run_gb 0 --box-version
	[[ $(cat "$T/out") =~ ^gemini-box\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
		fail "--box-version should print 'gemini-box X.Y.Z'"
	run_gb 0 --box-help
	grep -q -- '--box-dir' "$T/out" || fail "--box-help does not mention --box-dir"
	expect_no_box .
}

@test "usage_errors_are_64" {
	run_gb 64 --box-frob
	expect_error_line
	run_gb 64 --box-frob -p hi
	expect_error_line
	run_gb 64 --box-dir
	expect_error_line
	run_gb 64 --box-image
	expect_error_line
	expect_no_box .
}

@test "option_values_belong_to_gemini" {
	run_gb 0 -p --box-help
	expect_report
	expect_args -p --box-help
	run_gb 0 -m --box-dir -p x
	expect_report
	expect_args -m --box-dir -p x
}

@test "mcp_list_subcommand" {
	local id
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	run_gb 0 mcp list
	expect_report
	expect_args mcp list
	expect_eq "$(rget stdout.tty)" no "stdout TTY for mcp list"
	box_of .
	expect_eq "$BOX" "$id" "box for mcp list"
}

@test "podman_missing_is_69" {
	GEMINI_BOX_PODMAN=/nonexistent/podman run_gb 69 -p hi
	expect_error_line
	run_gb_env 69 -u GEMINI_BOX_PODMAN PATH=/nonexistent -- -p hi
	expect_error_line
	run_gb_env 69 -u GEMINI_BOX_PODMAN PATH= -- -p hi
	expect_error_line
	expect_no_box .
}

@test "bad_box_dir_is_66" {
	run_gb 66 --box-dir "$PWD/no-such-dir" -p hi
	expect_error_line
	mkdir locked && chmod 000 locked
	defer "chmod 755 $(printf %q "$PWD/locked")"
	run_gb 66 --box-dir "$PWD/locked" -p hi
	chmod 755 locked
	expect_error_line
	expect_no_box locked
	touch afile
	run_gb 66 --box-dir "$PWD/afile" -p hi
	expect_error_line
}

@test "absent_image_is_72" {
	run_gb 72 --box-image localhost/does-not-exist:1 -p hi
	tail -n 1 "$T/err" | grep -q '^gemini-box: ' || fail "stderr does not end with a 'gemini-box: ' line"
	expect_no_box .
	GEMINI_IMAGE=localhost/does-not-exist:2 run_gb 72 -p hi
	expect_no_box .
}

@test "absent_image_is_pulled" {
	local target=localhost/gemini-box-test:pulled-$$-$RANDOM r pulled=
	podman image exists "$target" && fail "$target exists already"
	defer "podman rmi $target >/dev/null 2>&1"
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log GB_FAKE_PULL_FROM=$IMAGE
	run_gb 0 --box-image "$target" -p hi
	expect_report
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
	run_gb 0 --box-image "$target" -p again
	expect_report
	grep -qa '^pull$' < <(tr '\0' '\n' <"$GB_PODMAN_LOG") && fail "pulled again although the box exists"
	podman rm -f -t 0 "$BOX" >/dev/null
	podman rmi "$target" >/dev/null || fail "podman rmi $target"
}

@test "podman_step_failure_is_71" {
	export GEMINI_BOX_PODMAN=$LOGGER
	# a new box is made and started by one podman run --detach
	GB_PODMAN_FAIL="run,create,container create" run_gb 71 -p hi
	grep -q '^gemini-box: ' "$T/err" || fail "no 'gemini-box: ' line on stderr"
	expect_no_box .
	run_gb 0 -p hi
	expect_report
	box_of .
	podman stop -t 2 "$BOX" >/dev/null
	GB_PODMAN_FAIL="start,container start" run_gb 71 -p hi
	grep -q '^gemini-box: ' "$T/err" || fail "no 'gemini-box: ' line on stderr"
	box_running && fail "box running although start failed"
	# A box whose record says it is stopped is started by id without asking
	# podman first; once that fails (it was removed), podman is asked.
	podman rm -f -t 0 "$BOX" >/dev/null
	GB_PODMAN_FAIL="inspect,container inspect" run_gb 71 -p hi
	grep -q '^gemini-box: ' "$T/err" || fail "no 'gemini-box: ' line on stderr"
	expect_no_box .
}

@test "foreign_container_of_same_name_is_71" {
	local name podman_state
	run_gb 0 --box-dry-run -p hi
	name=$(grep -o -- '--name[= ][^ ]*' "$T/out" | head -n 1 | sed 's/^--name[= ]//')
	[ -n "$name" ] || fail "no --name in the dry-run create command"
	podman create --name "$name" --label gemini-box.dir=/elsewhere "$IMAGE" >/dev/null ||
		fail "podman create $name failed"
	# Not a box of this test's directories: removed here, and in teardown
	# should the test end first.
	defer "podman rm -f -t 0 $(printf %q "$name") >/dev/null 2>&1"
	run_gb 71 -p hi
	podman_state=$(podman container inspect --format '{{.State.Status}}' "$name")
	podman rm -f -t 0 "$name" >/dev/null
	expect_error_line
	expect_eq "$podman_state" created "state of the foreign container (must be left alone)"
}

# One file to install: gemini-box copied alone into an empty directory, with
# an empty data directory, runs gemini in a box; the init it carries is
# written there by content and is the box's main process.
@test "single_binary_runs_alone" {
	local lone=$T/lone data=$T/data init
	mkdir "$lone" "$data"
	# podman keeps its images under XDG_DATA_HOME too: it keeps its own
	ln -s "${XDG_DATA_HOME:-$HOME/.local/share}/containers" "$data/containers"
	cp "$BIN" "$lone/gemini-box"
	[ "$(ls -A "$lone")" = gemini-box ] || fail "the copy is not alone"
	local BIN=$lone/gemini-box
	run_gb_env 0 XDG_DATA_HOME="$data" -- -p say:alone
	expect_eq "$(rget said)" alone "what gemini said"
	[ "$(ls -A "$data" | tr '\n' ' ')" = "containers gemini-box " ] || fail "unexpected in the data directory: $(ls -A "$data")"
	init=$(ls "$data"/gemini-box/init/*/gemini-box-init) || fail "no init written to the data directory"
	[ -x "$init" ] || fail "$init is not executable"
	box_of .
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.init"}}')" "$init" "the box's init"
	[[ "$(inspect '{{.Path}} {{join .Args " "}}')" == "/run/gemini-box/init --lock "* ]] ||
		fail "the box's main process is not the init"
	box_running || fail "the box does not run"
}
