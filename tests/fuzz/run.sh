#!/bin/sh
# Runs libFuzzer targets for a while each, on scratch copies of their seed
# corpora, so that the repository is never written. Called by `make fuzz`.
#   tests/fuzz/run.sh BUILD_DIR SECONDS NAME...
# runs BUILD_DIR/fuzz_NAME on a copy of tests/fuzz/corpus/NAME (with
# tests/fuzz/NAME.dict when present) for SECONDS seconds. A crash, leak,
# sanitizer report, timeout (10 s for one input) or out-of-memory fails: the
# log's end is printed and the input is kept as BUILD_DIR/artifacts/NAME-*.
# Exit status 0 only when every target ran clean.
set -u
build=$1
secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
failed=0
mkdir -p "$build/artifacts"
for t in "$@"; do
	work=$(mktemp -d "${TMPDIR:-/tmp}/gemini-box-fuzz-$t.XXXXXX") || exit 1
	cp -R "$here/corpus/$t/." "$work/"
	dict=
	[ -f "$here/$t.dict" ] && dict=-dict=$here/$t.dict
	log=$build/fuzz_$t.log
	# shellcheck disable=SC2086 # $dict is one word or none
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
		"$build/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 $dict "$work" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	if [ $rc -eq 0 ] && ! grep -qE 'ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error:' "$log"; then
		echo "fuzz: $t clean: ${runs:-?} inputs in ${secs}s, $cov, corpus $(ls "$work" | wc -l) files"
	else
		failed=1
		echo "fuzz: $t FAILED (exit $rc); the end of $log:"
		tail -n 60 "$log" | sed 's/^/    /'
		ls "$build/artifacts/$t-"* 2>/dev/null | sed 's/^/    kept input: /'
	fi
	rm -rf "$work"
done
exit $failed
