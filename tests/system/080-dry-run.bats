#!/usr/bin/env bats
#
# --box-dry-run: it asks podman only questions, prints one shell-quoted command
# a line (which run as printed do the run), and the dry runs of the management
# commands change nothing.

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "dry_run_runs_nothing" {
	local r sub line real saw_create='' saw_exec=
	local -a words
	real=$(realpath .)
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	: >"$GB_PODMAN_LOG"
	run_gb 0 --box-dry-run -p hi
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
	grep -q ' run --detach ' "$T/out" || fail "--box-dry-run prints no podman run --detach for a new box"
	grep -q ' exec ' "$T/out" || fail "--box-dry-run prints no exec command"
	# Each line must be one shell-quoted command.
	while IFS= read -r line; do
		eval "words=($line)" || fail "not shell-parseable: $line"
		case " ${words[*]} " in
		*" run --detach "*)
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
	run_gb 0 -p hi
	expect_report
	box_of .
	run_gb 0 --box-dry-run -p hi
	grep -q ' run --detach ' "$T/out" && fail "dry run for a running box prints podman run"
	grep -q ' start ' "$T/out" && fail "dry run for a running box prints start"
	grep -q ' exec ' "$T/out" || fail "dry run for a running box prints no exec"
	# Stopped box: start then exec, and the box stays stopped.
	podman stop -t 2 "$BOX" >/dev/null
	run_gb 0 --box-dry-run -p hi
	grep -q ' start ' "$T/out" || fail "dry run for a stopped box prints no start"
	box_running && fail "--box-dry-run started the box"
	return 0
}

@test "dry_run_output_is_runnable" {
	# shellcheck disable=SC2016 # the name is meant literally
	local d=$'dry run \'q\' "dq" $(touch PWNED) `x`\nnl'
	mkdir "$d" && cd "$d" || fail "mkdir"
	run_gb 0 --box-dry-run -p say:ran-it
	expect_no_box .
	cp "$T/out" "$T/dry.sh"
	run_checked '?' "bash $T/dry.sh (the dry-run output)" bash "$T/dry.sh"
	[ -e PWNED ] || [ -e ../PWNED ] && fail "the dry-run output ran an embedded \$(...) command: bad quoting"
	expect_ok
	expect_eq "$(rget said)" ran-it "output of the dry-run commands"
	expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory"
	box_of .
	run_gb 0 -p again
	expect_report
	box_of .
}

@test "management_dry_runs_change_nothing" {
	local id name started
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	name=$(inspect '{{.Name}}')
	started=$(inspect '{{.State.StartedAt}}')
	# (type -P: podman is also a function of helpers.bash)
	run_gb 0 --box-stop --box-dry-run
	grep -qx "$(type -P podman) stop $name" "$T/out" || fail "--box-stop --box-dry-run printed: $(cat "$T/out")"
	run_gb 0 --box-rm --box-dry-run
	grep -qx "$(type -P podman) rm --force $name" "$T/out" || fail "--box-rm --box-dry-run printed: $(cat "$T/out")"
	run_gb 0 --box-recreate --box-dry-run
	grep -q "rm --force $name" "$T/out" && grep -q " run --detach .*--name=$name" "$T/out" ||
		fail "--box-recreate --box-dry-run does not show removal and creation"
	run_gb 0 --box-status --box-dry-run
	grep -q "container inspect $name" "$T/out" || fail "--box-status --box-dry-run printed: $(cat "$T/out")"
	box_of .
	expect_eq "$BOX" "$id" "box after the dry runs"
	box_running || fail "a dry run stopped the box"
	expect_eq "$(inspect '{{.State.StartedAt}}')" "$started" "start time after the dry runs"
}
