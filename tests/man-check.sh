#!/bin/sh
# The man page must render without a single groff warning.
set -u
page=$1
out=$(LC_ALL=C.UTF-8 groff -t -man -ww -z -K utf8 "$page" 2>&1)
if [ -n "$out" ]; then
	echo "man page $page has warnings:"
	echo "$out"
	exit 1
fi
for section in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES; do
	if ! grep -q "^\.SH \"*$section\"*\$" "$page"; then
		echo "man page $page lacks the section $section"
		exit 1
	fi
done
echo "man page: renders cleanly"
