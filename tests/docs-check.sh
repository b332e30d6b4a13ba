#!/bin/sh
# Every --box-* option the parser knows must be in --box-help, the man page and
# both shell completions; and the bash completion must offer them.
# Usage: tests/docs-check.sh BINARY
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here/..
bin=$1
opts=$(sed -n 's/^[[:space:]]*{ "\(--box-[a-z-]*\)", OPT_.*/\1/p' "$top/src/args.c")
if [ -z "$opts" ]; then
	echo "docs-check: found no options in src/args.c"
	exit 1
fi
help=$("$bin" --box-help)
status=0
for o in $opts; do
	printf '%s\n' "$help" | grep -q -- "$o" || { echo "docs-check: $o missing from --box-help"; status=1; }
	grep -q -- "^\.B.* $(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$top/man/gemini-box.1" ||
		{ echo "docs-check: $o missing from the man page's options"; status=1; }
	grep -q -- "$o" "$top/completions/gemini-box.bash" || { echo "docs-check: $o missing from bash completion"; status=1; }
	grep -q -- "'$o\[" "$top/completions/_gemini-box" || { echo "docs-check: $o missing from zsh completion"; status=1; }
done
if command -v bash >/dev/null 2>&1; then
	got=$(bash -c '. "$1"; COMP_WORDS=(gemini-box --box-s); COMP_CWORD=1; _gemini_box; printf "%s\n" "${COMPREPLY[@]}"' _ "$top/completions/gemini-box.bash" | sort | tr '\n' ' ')
	[ "$got" = "--box-shell --box-status --box-stop " ] || { echo "docs-check: bash completion of --box-s gave: $got"; status=1; }
fi
[ $status -eq 0 ] && echo "docs-check: $(echo $opts | wc -w) options documented everywhere"
exit $status
