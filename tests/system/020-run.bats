#!/usr/bin/env bats
#
# A run: the box it makes and reuses, what gemini gets (arguments, stdin, exit
# status, uid, environment, ~/.gemini) and what never reaches the box or
# podman's command line (secrets).

# shellcheck disable=SC2016 # single-quoted $ and backquotes are test data

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "first_run_creates_box_later_runs_reuse_it" {
	local id started
	expect_no_box .
	run_gb 0 -p hello
	expect_report
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
	run_gb 0 -p again
	expect_report
	expect_args -p again
	box_of .
	expect_eq "$BOX" "$id" "container id on the second run"
	run_gb 0
	expect_report
	expect_args
	box_of .
	expect_eq "$BOX" "$id" "container id on the third run"
	expect_eq "$(inspect '{{.State.StartedAt}}')" "$started" "StartedAt (the running box must not be restarted)"
}

@test "prompt_first_run_leaves_usable_box" {
	local id
	run_gb 0 -p exit:0
	expect_report
	box_of .
	id=$BOX
	sleep 1
	box_running || fail "box stopped after a -p first run (is gemini its main process?)"
	run_gb 0 -p second
	expect_report
	expect_args -p second
	run_gb 0 mcp list
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "container id after later runs"
	box_running || fail "box not running after later runs"
}

@test "piped_stdin_reaches_gemini" {
	shopt -s lastpipe
	echo x | run_gb 0 -p stdin
	expect_report
	expect_eq "$(rget stdin)" 'x\n' "stdin seen by gemini"
	printf 'two\nlines "q" \\ end' | run_gb 0 -p stdin
	expect_report
	expect_eq "$(rget stdin)" "$(esc $'two\nlines "q" \\ end')" "stdin seen by gemini"
	head -c 300000 /dev/urandom >"$T/big"
	run_gb 0 -p stdin <"$T/big"
	expect_report
	expect_eq "$(rget stdin.bytes)" 300000 "stdin byte count (300000 bytes from a file)"
	expect_eq "$(rget stdin.sha256)" "$(sha256sum <"$T/big" | cut -d' ' -f1)" "stdin sha256"
	expect_eq "$(rget stdin.tty)" no "stdin is a TTY"
	run_gb 0 -p stdin </dev/null
	expect_report
	expect_eq "$(rget stdin.bytes)" 0 "stdin from /dev/null"
}

@test "exit_status_passes_through" {
	local n
	for n in 3 0 1 42 100; do
		run_gb "$n" -p "exit:$n"
		expect_report
	done
}

@test "stdout_and_stderr_stay_apart" {
	run_gb 0 -p say:to-stdout stderr:to-stderr
	expect_report
	grep -qx 'to-stderr' "$T/out" && fail "gemini's stderr ended up on stdout"
	grep -qx 'said=to-stdout' "$T/out" || fail "gemini's stdout missing"
	grep -qx 'to-stderr' "$T/err" || fail "gemini's stderr missing"
}

@test "files_made_in_box_belong_to_user" {
	run_gb 0 -p "touch:$PWD/made-in-box" "mkdir:$PWD/dir-in-box/sub"
	expect_report
	expect_eq "$(rget uid):$(rget gid)" 1000:1000 "uid:gid of gemini in the box"
	[ -f made-in-box ] || fail "made-in-box does not exist on the host"
	expect_eq "$(stat -c %u:%g made-in-box)" "$(id -u):$(id -g)" "owner of a file made in the box"
	expect_eq "$(stat -c %u:%g dir-in-box/sub)" "$(id -u):$(id -g)" "owner of a directory made in the box"
	rm -rf made-in-box dir-in-box || fail "cannot remove files made in the box"
}

@test "arguments_arrive_unchanged" {
	local args=('' 'a b' "it's" 'say "hi"' $'line1\nline2' '*' '$HOME' '`id`' '$(id)'
		'-x' '--foo=bar' 'ü € 日本' $'tab\there' 'back\slash' '\n' '  lead and trail  '
		';' '|' '&&' '' '--' '--box-frob' '--box-dir' $'\r' '-p' '-t' 'last')
	run_gb 0 -- "${args[@]}"
	expect_report
	expect_args "${args[@]}"
	run_gb 0 -p 'a b' '' "x'y" $'n\nl'
	expect_report
	expect_args -p 'a b' '' "x'y" $'n\nl'
	run_gb 0 --model "m o" --prompt="p'q"
	expect_report
	expect_args --model "m o" --prompt="p'q"
}

@test "sandbox_is_box_name" {
	SANDBOX=from-host run_gb 0 -p hi
	expect_report
	box_of .
	expect_env SANDBOX "$(inspect '{{.Name}}')"
}

@test "ide_variables_are_current_in_each_run" {
	local id
	# The agent: in an isolated box, which cannot reach the companion, its
	# token would only be a key to the IDE's tools; it stays out.
	mkdir iso
	GEMINI_CLI_IDE_SERVER_PORT=1111 GEMINI_CLI_IDE_AUTH_TOKEN=tok-zero run_gb 0 --box-dir iso -p hi
	expect_report
	expect_no_env GEMINI_CLI_IDE_SERVER_PORT
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
	grep -q 'cannot reach, so its variables stay out' "$T/err" || fail "no line says why the IDE variables stay out"
	own_config '{"network": "host"}'
	GEMINI_CLI_IDE_SERVER_PORT=1111 GEMINI_CLI_IDE_WORKSPACE_PATH="$PWD" GEMINI_CLI_IDE_PID=4242 \
		GEMINI_CLI_IDE_AUTH_TOKEN=tok-one GEMINI_CLI_IDE_SERVER_STDIO_ARGS='["a b","c"]' \
		GEMINI_CLI_IDE_SERVER_STDIO_COMMAND=/bin/true run_gb 0 -p hi
	expect_report
	expect_env GEMINI_CLI_IDE_SERVER_PORT 1111
	expect_env GEMINI_CLI_IDE_WORKSPACE_PATH "$PWD"
	expect_env GEMINI_CLI_IDE_PID 4242
	expect_env GEMINI_CLI_IDE_AUTH_TOKEN tok-one
	expect_env GEMINI_CLI_IDE_SERVER_STDIO_ARGS '["a b","c"]'
	expect_env GEMINI_CLI_IDE_SERVER_STDIO_COMMAND /bin/true
	box_of .
	id=$BOX
	GEMINI_CLI_IDE_SERVER_PORT=2222 GEMINI_CLI_IDE_PID=4343 GEMINI_CLI_IDE_AUTH_TOKEN=tok-two \
		GEMINI_CLI_IDE_SOMETHING_NEW='new value' run_gb 0 -p hi
	expect_report
	expect_env GEMINI_CLI_IDE_SERVER_PORT 2222
	expect_env GEMINI_CLI_IDE_PID 4343
	expect_env GEMINI_CLI_IDE_AUTH_TOKEN tok-two
	expect_env GEMINI_CLI_IDE_SOMETHING_NEW 'new value'
	expect_no_env GEMINI_CLI_IDE_WORKSPACE_PATH
	expect_no_env GEMINI_CLI_IDE_SERVER_STDIO_ARGS
	box_of .
	expect_eq "$BOX" "$id" "container id"
	run_gb 0 -p hi
	expect_report
	expect_no_env GEMINI_CLI_IDE_SERVER_PORT
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN
}

@test "listed_variables_are_forwarded_others_not" {
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
	run_gb_env 0 "${assign[@]}" -- -p hi
	expect_report
	for v in "${!vals[@]}"; do expect_env "$v" "${vals[$v]}"; done
	expect_no_env GB_NOT_FORWARDED
	expect_no_env MY_SECRET
	expect_no_env GOOGLE_APPLICATION_CREDENTIALS_X
	expect_eq "$(rget env.HOME)" /home/node "HOME in the box"
}

@test "no_secret_in_box_or_podman_argv" {
	local s1 s2 s3 r sub w prev n_exec=0 n_create=0
	s1=sekret-XYZ-$RANDOM$RANDOM s2=ide-tok-$RANDOM$RANDOM s3=gkey-$RANDOM$RANDOM
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	export GEMINI_API_KEY=$s1 GEMINI_CLI_IDE_AUTH_TOKEN=$s2 GOOGLE_API_KEY=$s3
	: >"$GB_PODMAN_LOG"
	run_gb 0 --box-dry-run -p hi
	grep -qE "$s1|$s2|$s3" "$T/out" && fail "a secret value appears in --box-dry-run output"
	grep -q GEMINI_API_KEY "$T/out" || fail "--box-dry-run output does not forward GEMINI_API_KEY by name"
	run_gb 0 -p hi # creates the box
	expect_report
	expect_env GEMINI_API_KEY "$s1"
	expect_no_env GEMINI_CLI_IDE_AUTH_TOKEN # an isolated box cannot use it
	expect_env GOOGLE_API_KEY "$s3"
	# The run's env file (values gemini-box supplies) is gone after the run.
	# shellcheck disable=SC2010 # the names are gemini-box's own
	ls "${XDG_RUNTIME_DIR:-/tmp/gemini-box-$(id -u)}"/*/ 2>/dev/null | grep -q '^env-' &&
		fail "a run's env file outlived the run"
	run_gb 0 -p again # reuses it
	expect_report
	expect_env GEMINI_API_KEY "$s1"
	box_of .
	podman container inspect "$BOX" >"$T/inspect.json" || fail "podman inspect failed"
	grep -qE "$s1|$s2|$s3" "$T/inspect.json" && fail "a secret value is stored in the box (podman inspect)"
	[ -s "$GB_PODMAN_LOG" ] || fail "GEMINI_BOX_PODMAN was not used (empty log)"
	grep -qaE "$s1|$s2|$s3" "$GB_PODMAN_LOG" && fail "a secret value is on podman's command line"
	read_log "$GB_PODMAN_LOG"
	for r in "${LOG_RECORDS[@]}"; do
		sub=$(record_sub "$r")
		record_words "$r"
		echo "podman call: $sub ($(qargs "${WORDS[@]}"))"
		case $sub in
		exec | "container exec")
			n_exec=$((n_exec + 1))
			has_opt --env "SANDBOX=$(inspect '{{.Name}}')" "${WORDS[@]}" ||
				fail "podman exec without --env SANDBOX=<box name>"
			has_opt --detach-keys "" "${WORDS[@]}" || fail "podman exec without --detach-keys \"\""
			prev=
			for w in "${WORDS[@]}"; do
				if [ "$prev" = --env ] || [ "$prev" = -e ]; then
					[[ $w == *=* && $w != SANDBOX=* ]] && fail "podman exec carries a value on its command line: $prev $w"
				fi
				[[ $w == --env=*=* && $w != --env=SANDBOX=* ]] && fail "podman exec carries a value: $w"
				prev=$w
			done
			;;
		create | "container create" | run)
			n_create=$((n_create + 1))
			for w in "${WORDS[@]}"; do
				[[ $w == *GEMINI_API_KEY* || $w == *GEMINI_CLI_IDE* || $w == *GOOGLE_API_KEY* ]] &&
					fail "podman create mentions a per-run variable: $w"
			done
			;;
		esac
	done
	expect_eq "$n_create" 1 "number of podman create calls"
	expect_eq "$n_exec" 2 "number of podman exec calls"
}

@test "gemini_dir_is_mounted" {
	local marker=gb-it-marker-$$-$RANDOM real
	real=$(realpath .)
	mkdir -p "$HOME/.gemini"
	printf 'host-content' >"$HOME/.gemini/$marker.host"
	run_gb 0 -p "touch:/home/node/.gemini/$marker" "touch:/home/node/.gemini/tmp/$marker" "cat:/home/node/.gemini/$marker.host"
	expect_report
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

@test "gemini_dir_is_created" {
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || skip "needs the dedicated test user (run as root) to move ~/.gemini"
	[ -e "$HOME/.gemini.gb-it-saved" ] && skip "\$HOME/.gemini.gb-it-saved exists"
	if [ -e "$HOME/.gemini" ]; then
		mv "$HOME/.gemini" "$HOME/.gemini.gb-it-saved" || fail "cannot move ~/.gemini away"
	fi
	touch "$TESTROOT/gemini-dir-moved" # teardown puts it back
	run_gb 0 -p hi
	expect_report
	[ -d "$HOME/.gemini" ] || fail "\$HOME/.gemini was not created"
	expect_eq "$(stat -c %u "$HOME/.gemini")" "$(id -u)" "owner of the created ~/.gemini"
	box_of .
	grep -qxF "$HOME/.gemini/tmp|/home/node/.gemini/tmp" < <(inspect '{{range .Mounts}}{{.Source}}|{{.Destination}}{{"\n"}}{{end}}') ||
		fail "no mount ~/.gemini/tmp -> /home/node/.gemini/tmp"
}

@test "box_image_option_and_env" {
	mkdir a b c
	(cd a && run_gb 0 --box-image "$IMAGE_ALT" -p hi && expect_report) || exit 1
	box_of a
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.image"}}')" "$IMAGE_ALT" "image label with --box-image"
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE_ALT" "image with --box-image"
	(cd b && GEMINI_IMAGE=$IMAGE_ALT run_gb 0 -p hi && expect_report) || exit 1
	box_of b
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE_ALT" "image with GEMINI_IMAGE"
	(cd c && GEMINI_IMAGE=localhost/does-not-exist:9 run_gb 0 --box-image "$IMAGE_ALT" -p hi && expect_report) || exit 1
	box_of c
	expect_eq "$(inspect '{{.ImageName}}')" "$IMAGE_ALT" "image with --box-image over GEMINI_IMAGE"
}
