#!/usr/bin/env bats
#
# Settings: the user's file and the project's (.gemini/gemini-box.json), what
# a project file may not ask for, drift and --box-recreate, a project's own
# containerfile, --box-build and --box-config.

# shellcheck disable=SC2016 # single-quoted $ is test data

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "settings_env_and_forward_env" {
	own_config '{"env": {"FIXED_VAR": "fixed-sekret-1"}, "forward_env": ["MY_FWD"]}'
	export GEMINI_BOX_PODMAN=$LOGGER GB_PODMAN_LOG=$T/podman.log
	MY_FWD=fwd-sekret-2 NOT_LISTED=x run_gb 0 -p hi
	expect_report
	expect_env FIXED_VAR fixed-sekret-1
	expect_env MY_FWD fwd-sekret-2
	expect_no_env NOT_LISTED
	FIXED_VAR=from-caller run_gb 0 -p hi
	expect_report
	expect_env FIXED_VAR fixed-sekret-1
	box_of .
	podman container inspect "$BOX" | grep -qE 'fixed-sekret-1|fwd-sekret-2' && fail "a settings value is stored in the box"
	grep -qaE 'fixed-sekret-1|fwd-sekret-2' "$GB_PODMAN_LOG" && fail "a settings value is on podman's command line"
	return 0
}

@test "settings_mounts_drift_and_recreate" {
	local id extra
	extra=$T/extra
	mkdir -p "$extra"
	echo hello >"$extra/file"
	own_config '{}'
	run_gb 0 -p hi
	expect_report
	box_of .
	id=$BOX
	own_config "{\"mounts\": [{\"source\": \"$extra\", \"target\": \"/mnt/extra\", \"readonly\": true}]}"
	run_gb 0 -p hi
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "box after a settings change (kept until --box-recreate)"
	grep -q '^gemini-box: .*mounts' "$T/err" || fail "no 'gemini-box: ' line naming the changed mounts"
	run_gb 0 --box-recreate --box-yes
	box_of .
	[ "$BOX" != "$id" ] || fail "--box-recreate kept the same container"
	run_gb '?' -p touch:/mnt/extra/new
	expect_report
	[ -e "$extra/new" ] && fail "a readonly mount was writable"
	inspect '{{range .Mounts}}{{.Source}}|{{.Destination}}|{{.RW}}{{"\n"}}{{end}}' >"$T/mounts"
	grep -qxF "$extra|/mnt/extra|false" "$T/mounts" || fail "no readonly mount $extra -> /mnt/extra: $(cat "$T/mounts")"
	run_gb 0 -p hi
	expect_report
	[ -s "$T/err" ] && fail "still reports drift after --box-recreate: $(cat "$T/err")"
	return 0
}

@test "project_file_limits_are_78" {
	local bad
	mkdir -p .gemini
	for bad in '{"podman_args": ["--privileged"]}' \
		"{\"mounts\": [{\"source\": \"$HOME\", \"target\": \"/x\"}]}" \
		'{"network": "host"}' '{"forward_env": ["SSH_AUTH_SOCK"]}' \
		'{"env": {"GEMINI_API_KEY": "stolen"}}' '{"image": ' '{"bogus": 1}'; do
		printf '%s\n' "$bad" >.gemini/gemini-box.json
		echo "project file: $bad"
		run_gb 78 -p hi
		expect_error_line
		expect_no_box .
	done
	printf '%s\n' '{"env": {"PROJECT_VAR": "p v"}}' >.gemini/gemini-box.json
	run_gb 0 -p hi
	expect_report
	expect_env PROJECT_VAR "p v"
}

@test "project_containerfile_is_built" {
	local marker=built-$$-$RANDOM built
	mkdir -p .gemini
	printf '%s\n' 'ARG BASE_IMAGE' 'FROM $BASE_IMAGE' 'USER root' "RUN touch /$marker" 'USER node' \
		>.gemini/sandbox.Dockerfile
	run_gb 0 --box-trust --box-yes # it builds the program that gets the keys
	run_gb 0 -p hi
	expect_report
	grep -q 'STEP' "$T/err" || fail "no build output (STEP ...) on stderr for the first run"
	box_of .
	built=$(inspect '{{.ImageName}}')
	[[ $built == localhost/gemini-box-build:* ]] || fail "the box's image is $built, not a localhost/gemini-box-build image"
	defer "podman rmi $(printf %q "$built") >/dev/null 2>&1"
	podman image exists "$built" || fail "$built does not exist"
	podman run --rm --entrypoint /bin/ls "$built" "/$marker" >/dev/null 2>&1 ||
		fail "$built was not built from the containerfile (no /$marker)"
	podman rm -f -t 0 "$BOX" >/dev/null
	run_gb 0 -p hi
	expect_report
	grep -q 'STEP' "$T/err" && fail "rebuilt although nothing changed: $(head -n 3 "$T/err")"
	box_of .
	expect_eq "$(inspect '{{.ImageName}}')" "$built" "image of the recreated box"
	podman rm -f -t 0 "$BOX" >/dev/null
	podman rmi "$built" >/dev/null 2>&1 || true
	return 0
}

@test "box_config_shows_origins" {
	own_config '{"image": "from-user:1", "network": "none", "ports": ["9001:80"]}'
	mkdir -p .gemini
	printf '%s\n' '{"image": "from-project:1", "env": {"P": "1"}}' >.gemini/gemini-box.json
	unset GEMINI_IMAGE
	run_gb 78 --box-config # a project's image needs approval
	expect_error_line
	run_gb 0 --box-trust --box-yes
	run_gb 0 --box-config
	grep -q "^image *= from-project:1  (project file .*gemini-box.json)" "$T/out" || fail "project image not shown with its origin"
	grep -q "^network *= none  (user file .*config.json)" "$T/out" || fail "user network not shown with its origin"
	grep -q "^user *= 1000:1000  (default)" "$T/out" || fail "default user not shown"
	grep -q "^ports\[0\] *= 9001:80  (user file" "$T/out" || fail "user port not shown"
	GEMINI_IMAGE=from-env:1 run_gb 0 --box-config
	grep -q "^image *= from-env:1  (environment GEMINI_IMAGE)" "$T/out" || fail "environment image does not win over the project's"
	GEMINI_IMAGE=from-env:1 run_gb 0 --box-config --box-image from-option:1
	grep -q "^image *= from-option:1  (option --box-image)" "$T/out" || fail "--box-image does not win over the environment"
	run_gb 0 --box-config --box-json
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["image"]["value"]=="from-project:1" and d["image"]["from"]["kind"]=="project file", d' "$T/out" ||
		fail "--box-config --box-json is wrong"
	expect_no_box .
}

@test "box_build_forces_and_drifts" {
	local first second
	mkdir -p .gemini
	printf '%s\n' 'ARG BASE_IMAGE' 'FROM $BASE_IMAGE' 'RUN true' >.gemini/sandbox.Dockerfile
	run_gb 0 --box-trust --box-yes
	run_gb 0 -p hi
	expect_report
	box_of .
	first=$(inspect '{{.ImageName}}')
	defer "podman rmi $(printf %q "$first") >/dev/null 2>&1"
	run_gb 0 --box-build
	grep -q 'STEP' "$T/err" || fail "--box-build did not build although the image was up to date"
	printf '%s\n' 'ARG BASE_IMAGE' 'FROM $BASE_IMAGE' 'RUN echo changed' >.gemini/sandbox.Dockerfile
	run_gb 0 --box-trust --box-yes
	run_gb 0 -p hi
	expect_report
	grep -q '^gemini-box: .*image' "$T/err" || fail "a changed containerfile does not show as drift of the image"
	run_gb 0 --box-status
	grep -q '^settings *drifted: image' "$T/out" || fail "--box-status does not show the drifted image"
	run_gb 0 --box-recreate --box-yes
	box_of .
	second=$(inspect '{{.ImageName}}')
	defer "podman rmi $(printf %q "$second") >/dev/null 2>&1"
	[ "$first" != "$second" ] || fail "the recreated box has the old image $first"
	# without a containerfile: gemini-box's own image, made from Debian's
	# and npm's packages (a dry run: it takes minutes)
	run_gb 0 --box-build --box-dry-run --box-dir "$T"
	grep -q -- '--mode=unshare' "$T/out" && grep -q ' import ' "$T/out" ||
		fail "--box-build without a containerfile does not plan gemini-box's own image"
	podman rm -f -t 0 "$BOX" >/dev/null
	podman rmi "$first" "$second" >/dev/null 2>&1 || true
	return 0
}
