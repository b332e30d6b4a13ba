#!/usr/bin/env bats
#
# Which directory is the project (its box): one box per directory, the git
# work tree's top, --box-dir, symlinks, $HOME's own .git; and project
# directories with hostile names, which work end to end.

# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

@test "two_directories_two_boxes" {
	local a b
	mkdir one two
	(cd one && run_gb 0 -p hi && expect_report) || exit 1
	(cd two && run_gb 0 -p hi && expect_report) || exit 1
	box_of one
	a=$BOX
	box_of two
	b=$BOX
	[ "$a" != "$b" ] || fail "one and two share a box"
	[ "$(inspect '{{.Name}}' "$a")" != "$(inspect '{{.Name}}' "$b")" ] || fail "same name"
	(cd one && run_gb 0 -p "touch:$PWD/x" && expect_report) || exit 1
	[ -e one/x ] || fail "one's box does not see one/"
	box_of one
	expect_eq "$BOX" "$a" "one's box after a second run"
}

# hostile NAME: a project directory called NAME works end to end.
hostile() {
	local real id
	mkdir -p -- "$1" || fail "cannot make the directory"
	cd -- "$1" || fail "cd"
	real=$(realpath .)
	run_gb 0 -p "touch:$real/made"
	expect_report
	expect_eq "$(rget pwd)" "$(esc "$real")" "working directory in the box"
	[ -e made ] || fail "file made in the box is missing on the host"
	expect_eq "$(stat -c %u made)" "$(id -u)" "owner of the file made in the box"
	box_of .
	id=$BOX
	expect_box_name .
	run_gb 0 -p again
	expect_report
	box_of .
	expect_eq "$BOX" "$id" "container id on the second run"
}

@test "hostile_dir_spaces" {
	hostile '  my  project dir '
}

@test "hostile_dir_quotes" {
	hostile "it's \"quoted\""
}

@test "hostile_dir_commas" {
	hostile 'a,b,c=d,'
}

@test "hostile_dir_colons" {
	hostile 'a:b:c:'
}

@test "hostile_dir_newline" {
	hostile $'new\nline'
}

@test "hostile_dir_non_ascii" {
	hostile 'ünïcødé-日本語-€'
}

@test "hostile_dir_shell_metachars" {
	# shellcheck disable=SC2016 # the name is meant literally
	hostile '$(touch x) `y` $HOME \ * ? [a] ; | & < > #'
}

@test "hostile_dir_leading_dash" {
	hostile '--box-frob'
}

@test "hostile_dir_everything" {
	hostile $'All, of: it\'s "x"\n$(y) ü\t*'
}

@test "hostile_dir_very_long" {
	local long c i
	c=$(printf 'x%.0s' {1..200})
	long=$c
	for i in $(seq 1 12); do long+="/dir-$i-$(printf 'y%.0s' {1..200})"; done
	echo "path length: $((${#PWD} + ${#long} + 1))"
	hostile "$long"
}

@test "git_subdirectory_uses_project_box" {
	local id
	mkdir -p p/.git p/a/b
	(cd p/a/b && run_gb 0 -p hi && expect_report && expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory") || exit 1
	box_of p
	id=$BOX
	expect_no_box p/a/b
	(cd p && run_gb 0 -p hi && expect_report) || exit 1
	box_of p
	expect_eq "$BOX" "$id" "box of the work tree top"
	(cd p/a && run_gb 0 -p "touch:$(realpath ../made)" && expect_report) || exit 1
	[ -e p/made ] || fail "the box does not see the whole work tree"
	box_of p
	expect_eq "$BOX" "$id" "box from p/a"
}

@test "git_file_and_nested_work_trees" {
	mkdir -p w/x outer/.git outer/inner/.git outer/inner/deep
	echo 'gitdir: /nonexistent/.git/worktrees/w' >w/.git
	(cd w/x && run_gb 0 -p hi && expect_report) || exit 1
	box_of w
	expect_no_box w/x
	(cd outer/inner/deep && run_gb 0 -p hi && expect_report) || exit 1
	box_of outer/inner
	expect_no_box outer
}

@test "no_git_uses_current_directory" {
	mkdir -p d/e
	(cd d/e && run_gb 0 -p hi && expect_report) || exit 1
	box_of d/e
	expect_no_box d
}

@test "home_git_is_not_a_project" {
	[ -n "${GB_IT_DEDICATED_USER:-}" ] || skip "needs the dedicated test user (run as root) to touch \$HOME/.git"
	[ -e "$HOME/.git" ] && skip "\$HOME/.git already exists"
	mkdir "$HOME/.git" || fail "mkdir ~/.git"
	touch "$TESTROOT/home-git-made" # teardown removes ~/.git should this test end first
	mkdir -p d/e
	cd d/e || fail cd
	run_gb 0 -p hi
	rmdir "$HOME/.git"
	expect_report
	box_of .
	expect_no_box "$HOME"
}

@test "box_dir_option" {
	local id
	mkdir -p P/sub other
	(cd P/sub && run_gb 0 --box-dir .. -p hi && expect_report &&
		expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory") || exit 1
	box_of P
	id=$BOX
	expect_no_box P/sub
	(cd P/sub && run_gb 0 --box-dir "$(realpath ..)" -p hi && expect_report) || exit 1
	box_of P
	expect_eq "$BOX" "$id" "box for --box-dir ABSOLUTE"
	(cd P && run_gb 0 -p hi && expect_report) || exit 1
	box_of P
	expect_eq "$BOX" "$id" "box for P without --box-dir"
	mkdir -p G/.git G/inner
	(cd G/inner && run_gb 0 --box-dir . -p hi && expect_report) || exit 1
	box_of G/inner
	expect_no_box G
}

@test "symlink_to_project_same_box" {
	local id
	mkdir -p real/sub real/.git
	ln -s real link
	(cd real && run_gb 0 -p hi && expect_report) || exit 1
	box_of real
	id=$BOX
	(cd link && run_gb 0 -p hi && expect_report &&
		expect_eq "$(rget pwd)" "$(esc "$(realpath .)")" "working directory through the symlink") || exit 1
	(cd link/sub && run_gb 0 -p hi && expect_report) || exit 1
	mkdir elsewhere
	(cd elsewhere && run_gb 0 --box-dir ../link -p hi && expect_report) || exit 1
	box_of real
	expect_eq "$BOX" "$id" "box through the symlink"
}
