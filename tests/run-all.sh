#!/bin/sh
# Runs the unit tests (cmocka), the hermetic tests (a fake podman), the
# documentation checks and then the system tests (tests/system/run.sh), and
# ends with one line "N passed, N failed" summing them all. Exit status 1 on
# any failure.
# Usage: tests/run-all.sh [--unit-only] BUILD_DIR UNIT_TEST_NAME...
set -u
unit_only=0
if [ "${1:-}" = "--unit-only" ]; then
	unit_only=1
	shift
fi
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() { # count FILE -> "passed failed" from cmocka's or our own summary lines
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	echo "$p $f"
}

for t in "$@"; do
	"$build/tests/test_$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	set -- $(count "$log")
	passed=$((passed + $1))
	failed=$((failed + $2))
	# A crash prints no summary: count it as a failure of its own.
	if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then failed=$((failed + 1)); fi
done

# The hermetic tier: gemini-box against a stateful fake podman (no podman needed).
bash "$here/hermetic/run.sh" "$build/gemini-box" >"$log" 2>&1
cat "$log"
set -- $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)
if [ $# -eq 2 ]; then
	passed=$((passed + $1))
	failed=$((failed + $2))
else
	echo "hermetic tests printed no summary"
	failed=$((failed + 1))
fi

for check in "sh $here/man-check.sh $here/../man/gemini-box.1" "sh $here/docs-check.sh $build/gemini-box"; do
	if $check; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done

if [ "$unit_only" -eq 0 ]; then
	bash "$here/system/run.sh" "$build/gemini-box" 2>&1 | tee "$log"
	line=$(tail -n 1 "$log")
	ip=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
	if_=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
	if [ -z "$ip" ]; then
		echo "system tests printed no summary"
		failed=$((failed + 1))
	else
		passed=$((passed + ip))
		failed=$((failed + if_))
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
