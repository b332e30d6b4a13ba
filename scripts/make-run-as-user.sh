#!/bin/sh
# The README's first command, end to end, as a user of rootless podman (CI
# runs as root, and rootful podman is not what gemini-box is for): copies the
# repository to USER's home, runs `make run ARGS='--version'` there with
# gemini-box's own image (made from Debian's and npm's packages on first use)
# and checks that the real gemini CLI in the box printed its version.
# Usage (as root): scripts/make-run-as-user.sh USER EXPECTED_VERSION
set -eu
user=$1
want=$2
home=$(getent passwd "$user" | cut -d: -f6)
copy=$home/gemini-box-make-run
rm -rf "$copy"
mkdir -p "$copy"
tar -C "$(dirname "$0")/.." --exclude=./build --exclude='./build-*' -cf - . | tar -C "$copy" -xf -
chown -R "$user:" "$copy"
out=$(mktemp)
cd /
status=0
runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
	make -C "$copy" run ARGS='--version' >"$out" 2>&1 </dev/null || status=$?
tail -n 20 "$out"
# The box of that directory goes; the image stays (the next run reuses it).
runuser -u "$user" -- sh -c 'cd / && podman rm -f -t 0 $(podman ps -aq --filter "label=gemini-box.dir=$1") >/dev/null 2>&1' - "$copy" || true
rm -rf "$copy"
if [ "$status" -ne 0 ] || ! grep -qx "$want" "$out"; then
	rm -f "$out"
	echo "make-run-as-user: make run ARGS=--version did not print $want (status $status)"
	exit 1
fi
rm -f "$out"
echo "make-run-as-user: make run ARGS=--version printed gemini $want from the local image"
